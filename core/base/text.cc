#include "core/base/text.h"

#include <cstdio>

namespace flatcheck {

size_t utf8_length_at(std::string_view s, size_t i) {
  auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = at(i);
  if (c < 0x80) return 1;
  size_t n = c >= 0xC2 && c <= 0xDF   ? 2
             : c >= 0xE0 && c <= 0xEF ? 3
             : c >= 0xF0 && c <= 0xF4 ? 4
                                      : 0;
  if (n == 0 || i + n > s.size()) return 0;
  // The second byte's range is narrower after E0 (no overlong), ED (no surrogate), F0
  // (no overlong) and F4 (nothing past U+10FFFF).
  unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
  unsigned char hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
  if (at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  return n;
}

int control_at(std::string_view s, size_t i, bool keep_layout) {
  auto c = static_cast<unsigned char>(s[i]);
  if (keep_layout && (c == '\t' || c == '\n' || c == '\r')) return -1;
  if (c < 0x20 || c == 0x7f) return c;
  if (c == 0xC2 && i + 1 < s.size()) {
    auto next = static_cast<unsigned char>(s[i + 1]);
    if (next >= 0x80 && next <= 0x9F) return next;
  }
  return -1;
}

std::string printable_text(std::string_view s, bool keep_layout) {
  std::string out;
  out.reserve(s.size());
  char hex[8];
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = utf8_length_at(s, i);
    int control = control_at(s, i, keep_layout);
    if (n == 0 || (control >= 0 && n == 1)) {  // a C0 control, DEL, or an ill-formed byte
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
      n = 1;
    } else if (control >= 0) {  // a C1 control (two bytes)
      std::snprintf(hex, sizeof hex, "\\u%04x", static_cast<unsigned>(control));
      out += hex;
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

}  // namespace flatcheck
