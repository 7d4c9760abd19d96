// singa check MODEL.onnx: the model run by singa and by onnxruntime on the
// same inputs, the largest differences per output. onnxruntime is a Python
// package (and no dependency of singa): it runs in a Python child process
// that reads the inputs from an .npz and writes its outputs to another.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli.h"
#include "singa/core/parallel.h"

extern char** environ;

namespace singa::cli {
namespace {

namespace fs = std::filesystem;

// Exit 3: onnxruntime missing; 4: onnxruntime failed (its message on stderr).
constexpr const char* kOrtScript = R"(
import sys
try:
    import numpy as np
    import onnxruntime as ort
except ImportError as e:
    print(e, file=sys.stderr)
    sys.exit(3)
model, inputs, outputs, threads = sys.argv[1:5]
try:
    so = ort.SessionOptions()
    so.intra_op_num_threads = int(threads)
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    with np.load(inputs) as f:
        feeds = {k: f[k] for k in f.files}
    res = sess.run(None, feeds)
    np.savez(outputs, **{o.name: r for o, r in zip(sess.get_outputs(), res)})
except Exception as e:
    print(type(e).__name__ + ": " + str(e).strip().splitlines()[0] if str(e).strip() else
          type(e).__name__, file=sys.stderr)
    sys.exit(4)
)";

// The Python to run onnxruntime with: $SINGA_PYTHON, else the python next to
// this executable (it is installed into the venv's bin/), else python3.
std::string FindPython() {
  if (const char* p = std::getenv("SINGA_PYTHON"); p && *p) return p;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (const char* name : {"python", "python3"})
      if (fs::exists(self.parent_path() / name)) return (self.parent_path() / name).string();
  return "python3";
}

// Runs argv; returns the exit status and the child's stderr.
int Spawn(const std::vector<std::string>& argv, const fs::path& err_file, std::string& err) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    err = std::strerror(rc);
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::ifstream in(err_file);
  err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
  // The last line: the error, after any traceback or warnings.
  if (size_t nl = err.rfind('\n'); nl != std::string::npos) err = err.substr(nl + 1);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct Diff {
  double max_abs = 0, max_rel = 0;
  int64_t mismatched = 0;  // elements outside atol + rtol * |expected|
};

Diff Compare(const Tensor& got, const Tensor& want, double atol, double rtol) {
  const std::vector<double> a = got.ToVector<double>(), b = want.ToVector<double>();
  Diff d;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) {
      if (std::isnan(a[i]) != std::isnan(b[i])) {
        ++d.mismatched;
        d.max_abs = d.max_rel = INFINITY;
      }
      continue;
    }
    if (a[i] == b[i]) continue;  // equal infinities too
    const double abs = std::fabs(a[i] - b[i]);
    d.max_abs = std::max(d.max_abs, abs);
    // Relative differences of elements that are (near) zero say nothing.
    if (std::fabs(b[i]) > atol) d.max_rel = std::max(d.max_rel, abs / std::fabs(b[i]));
    if (!(abs <= atol + rtol * std::fabs(b[i]))) ++d.mismatched;
  }
  return d;
}

}  // namespace

int RunCheck(const Args& args) {
  ApplyThreads(args);
  const double atol = args.get_double("--atol", 1e-4), rtol = args.get_double("--rtol", 1e-3);
  Device::Cpu().SetRandSeed(static_cast<uint64_t>(args.get_int("--seed", 0, 0)));
  auto rep = sonnx::Prepare(args.model);
  const DimValues dims = ParseDims(args, rep->inputs());
  const TensorList inputs = ModelInputs(*rep, args, dims, true);
  const TensorList outputs = rep->Run(inputs);

  char dir_template[] = "/tmp/singa-check-XXXXXX";
  SINGA_CHECK(mkdtemp(dir_template), IOError,
              "cannot make a temporary folder: " << std::strerror(errno));
  const fs::path dir = dir_template;
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{dir};
  NamedTensors feeds;
  for (size_t i = 0; i < inputs.size(); ++i) feeds.emplace_back(rep->inputs()[i].name, inputs[i]);
  WriteNpz((dir / "inputs.npz").string(), feeds);

  const std::string python = FindPython();
  std::string err;
  const int rc = Spawn({python, "-c", kOrtScript, args.model, (dir / "inputs.npz").string(),
                        (dir / "outputs.npz").string(), std::to_string(GetNumThreads())},
                       dir / "stderr.txt", err);
  for (size_t i = 0; i < outputs.size(); ++i)
    std::cout << rep->outputs()[i].name << ": " << outputs[i].ToString() << "\n";
  if (rc == -1 || rc == 127) {
    std::cout << "no comparison: cannot run " << python << " (" << err
              << "); set SINGA_PYTHON to a Python with onnxruntime\n";
    return 0;
  }
  if (rc == 3) {
    std::cout << "no comparison: onnxruntime is not installed for " << python << " (" << err
              << ")\n";
    return 0;
  }
  if (rc != 0) {
    std::cerr << "singa check: onnxruntime failed on the model: " << err << "\n";
    return 1;
  }

  const NamedTensors expected = ReadNpz((dir / "outputs.npz").string());
  std::printf("%-24s %-22s %12s %12s %10s  %s\n", "output", "shape", "max abs", "max rel",
              "mismatch", "");
  bool ok = true;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = rep->outputs()[i].name;
    const Tensor* want = nullptr;
    for (const auto& [n, t] : expected)
      if (n == name) want = &t;
    const Tensor& got = outputs[i];
    if (!want || want->shape() != got.shape()) {
      std::printf("%-24s %-22s FAIL: onnxruntime gives %s\n", name.c_str(), got.ToString().c_str(),
                  want ? want->ToString().c_str() : "no such output");
      ok = false;
      continue;
    }
    if (got.dtype() == DType::kString || want->dtype() == DType::kString) {
      const bool same = got.ToVector<std::string>() == want->ToVector<std::string>();
      std::printf("%-24s %-22s %s\n", name.c_str(), got.ToString().c_str(),
                  same ? "ok (strings equal)" : "FAIL (strings differ)");
      ok &= same;
      continue;
    }
    const Diff d = Compare(got, *want, atol, rtol);
    std::printf("%-24s %-22s %12.3g %12.3g %10lld  %s\n", name.c_str(), got.ToString().c_str(),
                d.max_abs, d.max_rel, static_cast<long long>(d.mismatched),
                d.mismatched ? "FAIL" : "ok");
    ok &= d.mismatched == 0;
  }
  std::printf("%s: |singa - onnxruntime| <= %g + %g * |onnxruntime| %s\n", ok ? "ok" : "FAIL", atol,
              rtol, ok ? "for every element" : "fails for some elements");
  return ok ? 0 : 1;
}

}  // namespace singa::cli
