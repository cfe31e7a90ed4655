#include "core/serialize/writer.h"

#include <array>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/serialize/serialize.h"

namespace flatcheck {
namespace {

// dump_canonical's width: a container stays on one line when its one-line form fits.
constexpr size_t kInlineWidth = 100;

// Bytes nlohmann writes as they are (printable ASCII other than the quote and the backslash).
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c <= 0x7e; ++c) t[static_cast<size_t>(c)] = c != '"' && c != '\\';
  return t;
}();

bool plain(std::string_view s) {
  for (unsigned char c : s)
    if (!kPlain[c]) return false;
  return true;
}

}  // namespace

void JsonWriter::open(char bracket) {
  begin_value();
  if (depth_ == frames_.size()) frames_.emplace_back();
  Frame& f = frames_[depth_++];
  f.start = out_.size();
  f.first_item = items_.size();
  f.object = bracket == '{';
  f.multi_line = false;
  f.has_key = false;
  out_ += bracket;
}

void JsonWriter::end() {
  if (depth_ == 0) throw std::logic_error("JsonWriter: end() without an open container");
  if (after_key_) throw std::logic_error("JsonWriter: a key without a value");
  Frame& f = frames_[depth_ - 1];
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
  write_string(s);
  fit();
}

void JsonWriter::value_bytes(std::string_view raw) {
  begin_value();
  out_ += '"';
  base64_append(out_, raw);
  out_ += '"';
  fit();
}

template <class Int>
void JsonWriter::write_integer(Int i) {
  begin_value();
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
  out_ += b ? "true" : "false";
  fit();
}

void JsonWriter::value(std::nullptr_t) {
  begin_value();
  out_ += "null";
  fit();
}

void JsonWriter::value_double(double d) {
  begin_value();
  if (!std::isfinite(d)) {
    out_ += "null";  // what nlohmann writes for a non-finite number
  } else {
    char buf[64];
    char* e = nlohmann::detail::to_chars(buf, buf + sizeof buf, d);
    out_.append(buf, e);
  }
  fit();
}

std::string JsonWriter::take() {
  if (depth_ != 0 || out_.empty())
    throw std::logic_error("JsonWriter: take() before the document is complete");
  out_ += '\n';
  std::string s = std::move(out_);
  out_.clear();
  first_one_line_ = 0;
  return s;
}

void JsonWriter::begin_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (depth_ == 0) {
    if (!out_.empty()) throw std::logic_error("JsonWriter: a second document value");
    return;
  }
  if (frames_[depth_ - 1].object)
    throw std::logic_error("JsonWriter: an object member needs a key");
  begin_item();
}

void JsonWriter::begin_item() {
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
  if (compact_) return;
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
