// Text from outside (documents, exception messages of a user's pass) on its way to a terminal
// or into a document flatcheck writes: control characters and bytes that are not UTF-8 spelled
// out, so a printed line stays one line and a written document loads again.
#pragma once

#include <string>
#include <string_view>

namespace flatcheck {

// `s` with C0 controls and DEL as "\x1b", C1 controls (UTF-8 encoded) as "\u009b" and each byte
// of an ill-formed UTF-8 sequence as "\xff"; with `keep_layout`, tab, newline and carriage
// return stay as they are.
std::string printable_text(std::string_view s, bool keep_layout);

// The control character starting at s[i]: a C0 control or DEL (its byte) or a C1 control in
// UTF-8 (0xC2 then 0x80..0x9F: its code point); -1 when s[i] starts none. With `keep_layout`,
// tab, newline and carriage return are not controls.
int control_at(std::string_view s, size_t i, bool keep_layout);

// The length of the well-formed UTF-8 sequence at s[i] (1 to 4), or 0 when it is ill-formed
// (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short).
size_t utf8_length_at(std::string_view s, size_t i);

}  // namespace flatcheck
