#include "generators/source.h"

namespace flatcheck {
namespace {

uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

}  // namespace

size_t Source::weighted(const std::vector<int>& w) {
  uint64_t total = 0;
  for (int x : w) total += static_cast<uint64_t>(x > 0 ? x : 0);
  uint64_t r = below(total == 0 ? 1 : total);
  for (size_t i = 0; i < w.size(); ++i) {
    uint64_t x = static_cast<uint64_t>(w[i] > 0 ? w[i] : 0);
    if (r < x) return i;
    r -= x;
  }
  return 0;
}

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (auto& s : s_) s = splitmix(x);
}

uint64_t Rng::next() {
  uint64_t result = rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

uint64_t Rng::draw(uint64_t n) {
  // Rejection sampling: unbiased and the same on every platform.
  uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t v;
  do v = next();
  while (v >= limit);
  return v % n;
}

uint64_t ByteSource::draw(uint64_t n) {
  uint64_t v = 0;
  for (uint64_t span = 1; span < n && pos_ < n_; span <<= 8) v = (v << 8) | d_[pos_++];
  return v % n;
}

uint64_t mix_seed(uint64_t seed, uint64_t index) {
  uint64_t x = seed ^ (index * 0xd1b54a32d192ed03ull);
  return splitmix(x);
}

}  // namespace flatcheck
