#include "kernels/cpu/tuning_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <dnnl.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace singa::cpu {
namespace {

bool Clean(const std::string& s) { return !s.empty() && s.find_first_of("\t\r\n") == s.npos; }

// Bumped when the timing changes what it measures or which candidates it
// builds: picks an earlier method made are not reused (2: a candidate's
// weights reorder, done once per version in the steady state, is no longer
// timed; 3: no plain GEMM candidate with a Swish or HardSwish activation;
// 4: DirectConv is a candidate of held-layout convolutions).
constexpr int kTimingMethod = 4;

// What a timed choice depends on besides its key: the CPU model, the
// instruction set oneDNN uses on it, oneDNN's version and the timing method.
std::string MachineSignature() {
  std::string model;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) {
      model = line;
      break;
    }
  const dnnl_version_t* v = dnnl_version();
  std::ostringstream s;
  s << model << "|isa" << static_cast<int>(dnnl::get_effective_cpu_isa()) << "|onednn" << v->major
    << "." << v->minor << "." << v->patch << "." << v->hash << "|timing" << kTimingMethod;
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : s.str()) h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

std::string LayoutsPath() {
  std::filesystem::path dir;
  if (const char* d = std::getenv("SINGA_CACHE_DIR")) {
    if (!*d) return "";
    dir = d;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = std::filesystem::path(x) / "singa";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    dir = std::filesystem::path(home) / ".cache" / "singa";
  } else {
    return "";
  }
  return (dir / ("conv-layouts-" + MachineSignature() + ".tsv")).string();
}

}  // namespace

TuningFile& TuningFile::Layouts() {
  static auto* f = new TuningFile(LayoutsPath());
  return *f;
}

void TuningFile::Load() {
  if (loaded_) return;
  loaded_ = true;
  if (path_.empty()) return;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path_, ec);
  if (ec || size > kMaxBytes) return;
  std::ifstream in(path_);
  for (std::string line; std::getline(in, line);) {
    const size_t tab = line.find('\t');
    if (tab == line.npos) continue;
    std::string key = line.substr(0, tab), choice = line.substr(tab + 1);
    if (Clean(key) && Clean(choice)) choices_.emplace(std::move(key), std::move(choice));
  }
}

std::optional<std::string> TuningFile::Lookup(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  Load();
  auto it = choices_.find(key);
  if (it == choices_.end()) return std::nullopt;
  return it->second;
}

void TuningFile::Remember(const std::string& key, const std::string& choice) {
  if (!Clean(key) || !Clean(choice)) return;
  std::lock_guard<std::mutex> lock(mu_);
  Load();
  if (!choices_.emplace(key, choice).second || path_.empty()) return;
  const std::filesystem::path path(path_);
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxBytes) return;
  const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  // One write per line: processes appending at once do not interleave.
  const std::string line = key + "\t" + choice + "\n";
  [[maybe_unused]] const ssize_t n = ::write(fd, line.data(), line.size());
  ::close(fd);
}

}  // namespace singa::cpu
