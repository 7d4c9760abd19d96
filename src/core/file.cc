#include "singa/core/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "singa/core/error.h"

namespace singa {

void WriteFileAtomically(const std::string& path, const std::function<void(std::FILE*)>& write,
                         std::string_view what) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  SINGA_CHECK(!target.filename().empty(), IOError, what << ": '" << path << "' names no file");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string name = ".";
  name += target.filename().string();
  name += ".XXXXXX";
  std::string tmp = (dir / name).string();
  const int fd = ::mkstemp(tmp.data());
  SINGA_CHECK(
      fd >= 0, IOError,
      what << ": cannot create a file in '" << dir.string() << "': " << std::strerror(errno));
  ::fchmod(fd, 0644);  // mkstemp's 0600 would hide the file from the user's group
  std::FILE* f = ::fdopen(fd, "wb");
  auto fail = [&](const std::string& why) {
    if (f) std::fclose(f);
    ::unlink(tmp.c_str());
    throw IOError(std::string(what) + ": " + why);
  };
  if (!f) fail("cannot write '" + tmp + "': " + std::strerror(errno));
  try {
    write(f);
  } catch (...) {
    std::fclose(f);
    ::unlink(tmp.c_str());
    throw;
  }
  if (std::fflush(f) != 0 || std::ferror(f) || ::fsync(fd) != 0)
    fail("writing '" + tmp + "' failed: " + std::strerror(errno));
  const int closed = std::fclose(f);
  f = nullptr;
  if (closed != 0) fail("writing '" + tmp + "' failed: " + std::strerror(errno));
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    fail("cannot rename '" + tmp + "' to '" + path + "': " + std::strerror(errno));
}

}  // namespace singa
