// What the fuzz targets share: the limits they run under and the rule that
// decides a finding. Every singa::Error is a correct refusal; anything else
// (a crash, a sanitizer report, another exception type, a run that outlives
// the watchdog) escapes the target and libFuzzer reports it.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "singa/core/error.h"
#include "singa/core/tensor.h"

namespace singa::fuzz {

// No tensor above 16 MiB: a file that asks for more is refused with
// MemoryError before anything is allocated (libFuzzer's -rss_limit_mb then
// catches what slips past the check).
inline void SetLimits() { SetMaxTensorBytes(size_t{16} << 20); }

inline std::string_view Bytes(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A file of this process's own (the readers under test take paths),
// rewritten for each input.
class ScratchFile {
 public:
  ScratchFile() {
    char name[] = "/tmp/singa-fuzz-XXXXXX";
    fd_ = mkstemp(name);
    if (fd_ < 0) std::abort();
    path_ = name;
  }
  ~ScratchFile() {
    close(fd_);
    unlink(path_.c_str());
  }
  const std::string& Write(std::string_view bytes) {
    if (ftruncate(fd_, 0) != 0 ||
        pwrite(fd_, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
      std::abort();
    return path_;
  }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace singa::fuzz
