// Every JSON spelling of a document, and the canonical layout checked from its rule.
//
// A reader sees, in a campaign, only what the writer writes; a reader that mishandles any other
// valid spelling, and a writer that breaks the layout rule consistently (so that
// `save(load(s)) == s` still holds), are both invisible there. Two independent tools:
//
// - respell(): the same document spelled another valid way, chosen by a seed: compact,
//   indented or randomly spaced (space, tab, CR, LF), object keys shuffled, floats in other
//   decimal forms of the same value (exponents, `E`, `+`, trailing and leading zeros, `-0.0`
//   kept negative), the integer 0 as `-0`, string characters as `\u` escapes (surrogate pairs
//   beyond the BMP, `\/`), and engine blobs decoded, re-spelled, re-encoded and re-checksummed.
//   Built on nlohmann's DOM and this file's own base64 and FNV-1a: no code of the core's writer.
// - canonical_layout_breach(): docs/format.md's rule ("Canonical layout") checked by a tokenizer
//   of its own: the text the rule gives for the document's tokens is rebuilt and compared.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace flatcheck {

struct Respelled {
  std::string text;
  std::string how;  // e.g. "indented, keys shuffled, floats re-spelled, \\u escapes, seed 7"
};

// `doc` (a JSON document) spelled another valid way; the value is the same, key for key and
// bit for bit. Throws std::invalid_argument when `doc` is not JSON.
Respelled respell(std::string_view doc, uint64_t seed);

// Where `text` breaks the canonical layout of docs/format.md: "line L: what", or nullopt.
std::optional<std::string> canonical_layout_breach(std::string_view text);

}  // namespace flatcheck
