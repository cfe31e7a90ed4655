#include "core/serialize/writer.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "core/serialize/serialize.h"

namespace flatcheck {
namespace {

// dump_canonical's width: a container stays on one line when its one-line form fits.
constexpr size_t kInlineWidth = 100;

// A DigestOnly writer digests its text once this much has accumulated.
constexpr size_t kSpillBytes = 4096;

constexpr uint64_t kSeedLo = 0x243f6a8885a308d3u, kSeedHi = 0x13198a2e03707344u;
constexpr uint64_t kMulLo = 0x9e3779b97f4a7c15u, kMulHi = 0xc2b2ae3d27d4eb4fu;

// Little-endian 8-byte words, whatever the host's byte order.
uint64_t load_word(const char* p) {
  uint64_t w = 0;
  for (int i = 7; i >= 0; --i) w = (w << 8) | static_cast<unsigned char>(p[i]);
  return w;
}

// Absorbs `n` bytes, a multiple of 8. Each step is invertible in the lane, so two streams
// that differ in one word leave different states.
void absorb(uint64_t& lo, uint64_t& hi, const char* p, size_t n) {
  for (size_t i = 0; i < n; i += 8) {
    uint64_t w = load_word(p + i);
    lo = std::rotl(lo ^ w, 29) * kMulLo;
    hi = std::rotl(hi + w, 31) * kMulHi;
  }
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

// The remaining (< 8) bytes, zero-padded, then the total length, then both lanes mixed.
Digest finish(uint64_t lo, uint64_t hi, std::string_view tail, uint64_t total) {
  char last[8] = {};
  for (size_t i = 0; i < tail.size(); ++i) last[i] = tail[i];
  absorb(lo, hi, last, 8);
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

// Bytes nlohmann writes as they are (printable ASCII other than the quote and the backslash).
bool plain(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
  return true;
}

}  // namespace

Digest digest_bytes(std::string_view bytes) {
  uint64_t lo = kSeedLo, hi = kSeedHi;
  size_t whole = bytes.size() & ~size_t{7};
  absorb(lo, hi, bytes.data(), whole);
  return finish(lo, hi, bytes.substr(whole), bytes.size());
}

void JsonWriter::open(char bracket) {
  begin_value();
  if (depth_ == frames_.size()) frames_.emplace_back();
  Frame& f = frames_[depth_++];
  f.start = out_.size();
  f.first_item = items_.size();
  f.object = bracket == '{';
  f.multi_line = false;
  f.has_key = false;
  if (digest_) return token(bracket);
  out_ += bracket;
}

void JsonWriter::end() {
  if (depth_ == 0) throw std::logic_error("JsonWriter: end() without an open container");
  if (after_key_) throw std::logic_error("JsonWriter: a key without a value");
  Frame& f = frames_[depth_ - 1];
  if (digest_) {
    token(f.object ? '}' : ']');
    --depth_;
    return fit();
  }
  if (f.multi_line) {
    out_ += '\n';
    pad(depth_ - 1);
  }
  out_ += f.object ? '}' : ']';
  items_.resize(f.first_item);
  --depth_;
  if (first_one_line_ > depth_) first_one_line_ = depth_;
  fit();
}

void JsonWriter::key(std::string_view k) {
  if (depth_ == 0 || !frames_[depth_ - 1].object || after_key_)
    throw std::logic_error("JsonWriter: a key outside an object");
  if (digest_) {
    token('k', k);
    after_key_ = true;
    return fit();
  }
  Frame& f = frames_[depth_ - 1];
  if (f.has_key && !(std::string_view(f.last_key) < k))
    throw std::logic_error("JsonWriter: key \"" + std::string(k) + "\" after \"" + f.last_key +
                           "\": keys must be written in increasing order");
  f.last_key.assign(k);
  f.has_key = true;
  begin_item();
  write_string(k);
  out_ += compact_ ? ":" : ": ";
  after_key_ = true;
  fit();
}

void JsonWriter::value(std::string_view s) {
  begin_value();
  if (digest_)
    token('s', s);
  else
    write_string(s);
  fit();
}

void JsonWriter::value_bytes(std::string_view raw) {
  begin_value();
  if (digest_) {
    token('b', raw);
  } else {
    out_ += '"';
    base64_append(out_, raw);
    out_ += '"';
  }
  fit();
}

template <class Int>
void JsonWriter::write_integer(Int i) {
  begin_value();
  if (digest_) {
    // One token per number, whichever overload wrote it (as in the text): 'i' for a negative.
    bool negative = false;
    if constexpr (std::is_signed_v<Int>) negative = i < 0;
    token(negative ? 'i' : 'u', static_cast<uint64_t>(i));
    return fit();
  }
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, i);
  out_.append(buf, r.ptr);
  fit();
}

void JsonWriter::value(int64_t i) {
  write_integer(i);
}

void JsonWriter::value(uint64_t u) {
  write_integer(u);
}

void JsonWriter::value(bool b) {
  begin_value();
  if (digest_)
    token(b ? 't' : 'f');
  else
    out_ += b ? "true" : "false";
  fit();
}

void JsonWriter::value(std::nullptr_t) {
  begin_value();
  if (digest_)
    token('n');
  else
    out_ += "null";
  fit();
}

void JsonWriter::value_double(double d) {
  begin_value();
  if (digest_) {
    token('d', std::bit_cast<uint64_t>(d));
  } else if (!std::isfinite(d)) {
    out_ += "null";  // what nlohmann writes for a non-finite number
  } else {
    char buf[64];
    char* e = nlohmann::detail::to_chars(buf, buf + sizeof buf, d);
    out_.append(buf, e);
  }
  fit();
}

std::string JsonWriter::take() {
  if (digest_) throw std::logic_error("JsonWriter: take() on a DigestOnly writer");
  if (depth_ != 0 || out_.empty())
    throw std::logic_error("JsonWriter: take() before the document is complete");
  out_ += '\n';
  std::string s = std::move(out_);
  out_.clear();
  first_one_line_ = 0;
  return s;
}

JsonWriter::JsonWriter(DigestOnly) : compact_(true), digest_(true) {
  reset_digest();
}

void JsonWriter::reset_digest() {
  lane_lo_ = kSeedLo;
  lane_hi_ = kSeedHi;
  digested_ = 0;
}

Digest JsonWriter::take_digest() {
  if (!digest_) throw std::logic_error("JsonWriter: take_digest() on a writer that keeps its text");
  if (depth_ != 0 || (out_.empty() && digested_ == 0))
    throw std::logic_error("JsonWriter: take_digest() before the document is complete");
  spill();  // leaves fewer than 8 bytes in out_
  Digest d = finish(lane_lo_, lane_hi_, out_, digested_ + out_.size());
  out_.clear();
  reset_digest();
  return d;
}

void JsonWriter::token(char tag) {
  out_ += tag;
}

void JsonWriter::token(char tag, uint64_t word) {
  out_ += tag;
  append_word(word);
}

// Lengths below 255 take one byte; longer ones are 0xff and then eight.
void JsonWriter::token(char tag, std::string_view bytes) {
  out_ += tag;
  if (bytes.size() < 0xff) {
    out_ += static_cast<char>(bytes.size());
  } else {
    out_ += static_cast<char>(0xff);
    append_word(bytes.size());
  }
  out_ += bytes;
}

void JsonWriter::append_word(uint64_t word) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(word >> (8 * i));
  out_.append(b, sizeof b);
}

void JsonWriter::spill() {
  size_t whole = out_.size() & ~size_t{7};
  absorb(lane_lo_, lane_hi_, out_.data(), whole);
  digested_ += whole;
  out_.erase(0, whole);
}

void JsonWriter::begin_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ == 0) {
    if (!out_.empty() || digested_ != 0)
      throw std::logic_error("JsonWriter: a second document value");
    return;
  }
  if (frames_[depth_ - 1].object)
    throw std::logic_error("JsonWriter: an object member needs a key");
  begin_item();
}

void JsonWriter::begin_item() {
  if (digest_) return;  // tokens need no separators
  const Frame& f = frames_[depth_ - 1];
  bool first = items_.size() == f.first_item;
  if (compact_) {
    if (!first) out_ += ',';
  } else if (f.multi_line) {
    out_ += first ? "\n" : ",\n";
    pad(depth_);
  } else if (!first) {
    out_ += ", ";
  }
  items_.push_back(out_.size());
}

void JsonWriter::write_string(std::string_view s) {
  if (plain(s)) {
    out_ += '"';
    out_ += s;
    out_ += '"';
  } else {
    out_ += nlohmann::json(std::string(s)).dump();  // nlohmann's escapes and UTF-8 checks
  }
}

void JsonWriter::fit() {
  if (compact_) {
    if (digest_ && out_.size() >= kSpillBytes) spill();
    return;
  }
  while (first_one_line_ < depth_ &&
         out_.size() - frames_[first_one_line_].start + 1 > kInlineWidth)
    break_lines(first_one_line_++);
}

// Rewrites frame `fi` (on one line so far, every deeper frame too) in the indented form: each
// item on its own line. Deeper frames lie inside its last item and move with it.
void JsonWriter::break_lines(size_t fi) {
  Frame& f = frames_[fi];
  size_t begin = f.first_item;
  size_t end = fi + 1 < depth_ ? frames_[fi + 1].first_item : items_.size();
  std::string& s = scratch_;  // kept between calls, so it rarely allocates
  s.assign(1, out_[f.start]);
  size_t shift = 0;
  for (size_t i = begin; i < end; ++i) {
    size_t from = items_[i];
    size_t to = i + 1 < end ? items_[i + 1] - 2 : out_.size();  // less the ", " separator
    s += i == begin ? "\n" : ",\n";
    s.append(fi + 1, ' ');
    size_t at = f.start + s.size();
    shift = at - from;
    items_[i] = at;
    s.append(out_, from, to - from);
  }
  out_.replace(f.start, std::string::npos, s);
  for (size_t i = end; i < items_.size(); ++i) items_[i] += shift;
  for (size_t d = fi + 1; d < depth_; ++d) frames_[d].start += shift;
  f.multi_line = true;
}

void JsonWriter::pad(size_t depth) {
  out_.append(depth, ' ');
}

}  // namespace flatcheck
