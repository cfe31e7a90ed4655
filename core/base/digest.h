// A 128-bit digest, over bytes (digest_bytes) or over a stream of words and strings fed one at a
// time (DigestStream). Not cryptographic: it tells apart inputs that differ, it does not resist
// an adversary.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace flatcheck {

struct Digest {
  uint64_t lo = 0, hi = 0;
  bool operator==(const Digest&) const = default;
};

// Two 64-bit lanes over little-endian 8-byte words (whatever the host's byte order), the tail
// zero-padded, the length, then an avalanche.
Digest digest_bytes(std::string_view bytes);

// A digest fed piece by piece, without a buffer. A string or a byte run is its length and then
// its bytes, so a sequence of strings splits one way only; a word is absorbed as it is (an empty
// string and the word 0 are the same piece), so what the pieces mean is the caller's to fix, as a
// schema. Words are absorbed in host byte order: a stream's digest is for comparisons within one
// process, never stored.
class DigestStream {
 public:
  DigestStream();
  void word(uint64_t w);
  // A tag: which kind of piece comes next (a node, an argument kind, a missing value).
  void tag(char t) { word(static_cast<unsigned char>(t) | 0x5a5a5a5a00000000u); }
  void str(std::string_view s) { bytes(s.data(), s.size()); }
  void bytes(const void* p, size_t n);
  Digest take() const;

 private:
  uint64_t lo_, hi_, words_ = 0;
};

}  // namespace flatcheck
