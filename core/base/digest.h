// A 128-bit digest, over bytes (digest_bytes) or over a stream of words and strings fed one at a
// time (DigestStream). Not cryptographic: it tells apart inputs that differ, it does not resist
// an adversary.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
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
  DigestStream() = default;
  // One word. Each step is invertible in the lane, so two streams that differ in one word leave
  // different states.
  void word(uint64_t w) {
    lo_ = std::rotl(lo_ ^ w, 29) * 0x9e3779b97f4a7c15u;
    hi_ = std::rotl(hi_ + w, 31) * 0xc2b2ae3d27d4eb4fu;
    ++words_;
  }
  // A tag: which kind of piece comes next (a node, an argument kind, a missing value).
  void tag(char t) { word(static_cast<unsigned char>(t) | 0x5a5a5a5a00000000u); }
  void str(std::string_view s) { bytes(s.data(), s.size()); }
  void bytes(const void* p, size_t n) {
    word(n);
    const char* c = static_cast<const char*>(p);
    size_t whole = n & ~size_t{7};
    uint64_t w;
    for (size_t i = 0; i < whole; i += 8) std::memcpy(&w, c + i, 8), word(w);
    if (whole == n) return;
    w = 0;
    std::memcpy(&w, c + whole, n - whole);
    word(w);
  }
  Digest take() const;

 private:
  friend Digest digest_bytes(std::string_view bytes);
  // The lanes mixed with `total` (the words fed, or digest_bytes' byte count).
  Digest finish(uint64_t total) const;

  // The lanes' seeds (digest_bytes starts a stream too).
  uint64_t lo_ = 0x243f6a8885a308d3u, hi_ = 0x13198a2e03707344u, words_ = 0;
};

}  // namespace flatcheck
