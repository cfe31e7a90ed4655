#include "core/base/digest.h"

#include <bit>

namespace flatcheck {
namespace {

// Little-endian 8-byte words, whatever the host's byte order.
uint64_t load_word(const char* p) {
  uint64_t w = 0;
  for (int i = 7; i >= 0; --i) w = (w << 8) | static_cast<unsigned char>(p[i]);
  return w;
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

}  // namespace

// The total length, then both lanes mixed.
Digest DigestStream::finish(uint64_t total) const {
  uint64_t lo = lo_ ^ total, hi = hi_ ^ std::rotl(total, 32);
  lo += hi;
  hi += lo;
  lo = fmix(lo);
  hi = fmix(hi);
  lo += hi;
  hi += lo;
  return {lo, hi};
}

// The stream's lanes over the bytes' words, the last zero-padded, finished with the byte count.
Digest digest_bytes(std::string_view bytes) {
  DigestStream d;
  size_t whole = bytes.size() & ~size_t{7};
  for (size_t i = 0; i < whole; i += 8) d.word(load_word(bytes.data() + i));
  char last[8] = {};
  for (size_t i = whole; i < bytes.size(); ++i) last[i - whole] = bytes[i];
  d.word(load_word(last));
  return d.finish(bytes.size());
}

Digest DigestStream::take() const {
  return finish(words_);
}

}  // namespace flatcheck
