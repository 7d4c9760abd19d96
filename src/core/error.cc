#include "singa/core/error.h"

#include <cstdio>

namespace singa {
namespace {

// The length of the UTF-8 sequence at s[i], or 0 when it is not one.
size_t SequenceLength(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((b(i + k) >> 6) != 0x2) return 0;
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
  if (n == 2 && c < 0xC2) return 0;
  if (n == 3 && ((c == 0xE0 && b(i + 1) < 0xA0) || (c == 0xED && b(i + 1) >= 0xA0))) return 0;
  if (n == 4 && ((c == 0xF0 && b(i + 1) < 0x90) || c > 0xF4 || (c == 0xF4 && b(i + 1) >= 0x90)))
    return 0;
  return n;
}

}  // namespace

bool IsUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string Printable(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    if (const size_t n = SequenceLength(s, i)) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      char buf[5];
      std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(s[i++]));
      out += buf;
    }
  }
  return out;
}

}  // namespace singa
