// Writing JSON: a string as a JSON string literal (quotes, backslashes and
// control characters escaped). The readers that need JSON parse their own
// small subset (src/nn/states.cc).
#pragma once

#include <string>
#include <string_view>

namespace singa {

std::string JsonString(std::string_view s);

}  // namespace singa
