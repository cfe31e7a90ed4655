#include "core/base/digest.h"

#include <bit>

namespace flatcheck {
namespace {

constexpr uint64_t kSeedLo = 0x243f6a8885a308d3u, kSeedHi = 0x13198a2e03707344u;
constexpr uint64_t kMulLo = 0x9e3779b97f4a7c15u, kMulHi = 0xc2b2ae3d27d4eb4fu;

// Little-endian 8-byte words, whatever the host's byte order.
uint64_t load_word(const char* p) {
  uint64_t w = 0;
  for (int i = 7; i >= 0; --i) w = (w << 8) | static_cast<unsigned char>(p[i]);
  return w;
}

// One word, as DigestStream::word.
void absorb(uint64_t& lo, uint64_t& hi, uint64_t w) {
  lo = std::rotl(lo ^ w, 29) * kMulLo;
  hi = std::rotl(hi + w, 31) * kMulHi;
}

// murmur3's finalizer.
uint64_t fmix(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdu;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53u;
  k ^= k >> 33;
  return k;
}

// The total length, then both lanes mixed.
Digest finish(uint64_t lo, uint64_t hi, uint64_t total) {
  lo ^= total;
  hi ^= std::rotl(total, 32);
  lo += hi;
  hi += lo;
  lo = fmix(lo);
  hi = fmix(hi);
  lo += hi;
  hi += lo;
  return {lo, hi};
}

}  // namespace

Digest digest_bytes(std::string_view bytes) {
  uint64_t lo = kSeedLo, hi = kSeedHi;
  size_t whole = bytes.size() & ~size_t{7};
  for (size_t i = 0; i < whole; i += 8) absorb(lo, hi, load_word(bytes.data() + i));
  char last[8] = {};
  for (size_t i = whole; i < bytes.size(); ++i) last[i - whole] = bytes[i];
  absorb(lo, hi, load_word(last));
  return finish(lo, hi, bytes.size());
}

Digest DigestStream::take() const {
  return finish(lo_, hi_, words_);
}

}  // namespace flatcheck
