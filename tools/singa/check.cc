// singa check MODEL.onnx: the model run by singa and by onnxruntime on the
// same inputs, the largest differences per output. onnxruntime is a Python
// package (and no dependency of singa), so the check is the Python module
// singa.check (python/singa/check.py), which runs both in one process: this
// command checks its arguments as the other commands do and then replaces
// itself with that module, whose output and exit status are the command's.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli.h"

namespace singa::cli {
namespace {

namespace fs = std::filesystem;

// The Python to run the check with: $SINGA_PYTHON, else the python next to
// this executable (it is installed into the venv's bin/), else the active virtual
// environment's ($VIRTUAL_ENV), else python3.
std::string FindPython() {
  if (const char* p = std::getenv("SINGA_PYTHON"); p && *p) return p;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    for (const char* name : {"python", "python3"})
      if (fs::exists(self.parent_path() / name)) return (self.parent_path() / name).string();
  if (const char* venv = std::getenv("VIRTUAL_ENV"); venv && *venv)
    if (fs::exists(fs::path(venv) / "bin" / "python")) return (fs::path(venv) / "bin" / "python");
  return "python3";
}

}  // namespace

int RunCheck(const Args& args) {
  // Bad numbers are refused here, with the same words as the other commands.
  args.get_double("--atol", 0);
  args.get_double("--rtol", 0);
  args.get_int("--threads", 0, 1);
  args.get_int("--seed", 0, 0);

  const std::string python = FindPython();
  std::vector<std::string> argv = {python, "-m", "singa.check"};
  for (const auto& [name, values] : args.values)
    for (const std::string& v : values) argv.push_back(name + "=" + v);
  argv.push_back("--");
  argv.push_back(args.model);
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  std::cout.flush();
  execvp(cargv[0], cargv.data());

  // execvp returns only when Python cannot be started: singa runs the model
  // alone and says so, as the module does without onnxruntime.
  const std::string why = std::strerror(errno);
  ApplyThreads(args);
  Device::Cpu().SetRandSeed(static_cast<uint64_t>(args.get_int("--seed", 0, 0)));
  auto rep = sonnx::Prepare(args.model);
  const DimValues dims = ParseDims(args, rep->inputs());
  const TensorList outputs = rep->Run(ModelInputs(*rep, args, dims, true));
  for (size_t i = 0; i < outputs.size(); ++i)
    std::cout << rep->outputs()[i].name << ": " << outputs[i].ToString() << "\n";
  std::cout << "no comparison: cannot run " << python << " (" << why
            << "); set SINGA_PYTHON to a Python with singa and onnxruntime\n";
  return 0;
}

}  // namespace singa::cli
