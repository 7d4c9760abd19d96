// Files singa writes (states, exported models) are replaced atomically:
//
//   WriteFileAtomically("net.states", [&](std::FILE* f) { std::fwrite(...); }, "save_states");
//
// The data goes to a temporary file created exclusively (a random name,
// O_EXCL, so a link planted in the folder is never followed) beside the
// target, flushed to disk and renamed over it. A failure (an exception from
// `write`, a full disk) removes the temporary and leaves the target as it
// was. Errors are IOError prefixed with `what`.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

namespace singa {

void WriteFileAtomically(const std::string& path, const std::function<void(std::FILE*)>& write,
                         std::string_view what);

}  // namespace singa
