// Sources of randomness for the one generator body (STYLE.md, habit 8).
//
// A Source answers "a number below n". Three kinds exist:
//   * Rng: a seeded xoshiro256** generator; the mapping to [0, n) is our own (no
//     std::uniform_*_distribution), so a seed means the same case on every machine.
//   * ChoiceSource: replays a recorded choice sequence (rapidcheck shrinks these); past its
//     end every choice is 0, the simplest answer, so any sequence builds a valid case.
//   * ByteSource: reads choices from libFuzzer bytes, little-endian, as many as needed.
// Every Source can record the choices it made, so any case can be replayed from its choices.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace flatcheck {

class Source {
 public:
  virtual ~Source() = default;
  // A number in [0, n); n >= 1.
  uint64_t below(uint64_t n) {
    if (n <= 1) return 0;  // no choice to make: nothing drawn, nothing recorded
    uint64_t v = draw(n);
    if (record_) choices_.push_back(static_cast<uint32_t>(v));
    return v;
  }
  // An int in [lo, hi].
  int64_t range(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo + 1)));
  }
  // True with probability num/den.
  bool chance(uint64_t num, uint64_t den) { return below(den) < num; }
  // An index drawn by weight (weights must not all be zero).
  size_t weighted(const std::vector<int>& weights);

  void start_recording() { record_ = true; }
  const std::vector<uint32_t>& choices() const { return choices_; }

 protected:
  virtual uint64_t draw(uint64_t n) = 0;

 private:
  bool record_ = false;
  std::vector<uint32_t> choices_;
};

class Rng final : public Source {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();  // raw 64 bits

 protected:
  uint64_t draw(uint64_t n) override;

 private:
  uint64_t s_[4];
};

class ChoiceSource final : public Source {
 public:
  explicit ChoiceSource(std::vector<uint32_t> choices) : c_(std::move(choices)) {}

 protected:
  uint64_t draw(uint64_t n) override { return pos_ < c_.size() ? c_[pos_++] % n : 0; }

 private:
  std::vector<uint32_t> c_;
  size_t pos_ = 0;
};

class ByteSource final : public Source {
 public:
  ByteSource(const uint8_t* data, size_t size) : d_(data), n_(size) {}

 protected:
  uint64_t draw(uint64_t n) override;

 private:
  const uint8_t* d_;
  size_t n_;
  size_t pos_ = 0;
};

// SplitMix64: derives independent seeds (case i of a campaign: mix(seed, i)).
uint64_t mix_seed(uint64_t seed, uint64_t index);

}  // namespace flatcheck
