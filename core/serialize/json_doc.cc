#include "core/serialize/json_doc.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/serialize/serialize.h"
#include "core/serialize/writer.h"

namespace flatcheck {

using Kind = JsonDoc::Kind;

// ----------------------------------------------------------------------------------- JsonRef

bool JsonRef::is_null() const {
  return d_->entry(i_).kind == Kind::kNull;
}
bool JsonRef::is_boolean() const {
  return d_->entry(i_).kind == Kind::kBool;
}
bool JsonRef::is_number_integer() const {
  Kind k = d_->entry(i_).kind;
  return k == Kind::kInt || k == Kind::kUint;
}
bool JsonRef::is_number_unsigned() const {
  return d_->entry(i_).kind == Kind::kUint;
}
bool JsonRef::is_number_float() const {
  return d_->entry(i_).kind == Kind::kFloat;
}
bool JsonRef::is_string() const {
  return d_->entry(i_).kind == Kind::kString;
}
bool JsonRef::is_array() const {
  return d_->entry(i_).kind == Kind::kArray;
}
bool JsonRef::is_object() const {
  return d_->entry(i_).kind == Kind::kObject;
}

size_t JsonRef::size() const {
  const auto& e = d_->entry(i_);
  if (e.kind == Kind::kArray || e.kind == Kind::kObject) return e.c.n;
  return e.kind == Kind::kNull ? 0 : 1;
}

JsonRef JsonRef::operator[](size_t i) const {
  const auto& e = d_->entry(i_);
  if (e.kind != Kind::kArray || i >= e.c.n)
    throw std::out_of_range("JsonRef: array index " + std::to_string(i) + " out of range");
  return JsonRef(d_, d_->kids_[e.c.first + i]);
}

std::optional<JsonRef> JsonRef::find(std::string_view key) const {
  const auto& e = d_->entry(i_);
  if (e.kind != Kind::kObject) return std::nullopt;
  const uint32_t* first = d_->kids_.data() + e.c.first;
  const uint32_t* last = first + e.c.n;
  const uint32_t* it = std::lower_bound(first, last, key, [this](uint32_t k, std::string_view v) {
    return JsonDoc::key_of(d_->entry(k)) < v;
  });
  if (it == last || JsonDoc::key_of(d_->entry(*it)) != key) return std::nullopt;
  return JsonRef(d_, *it);
}

JsonRef JsonRef::at(std::string_view key) const {
  if (auto v = find(key)) return *v;
  throw std::out_of_range("JsonRef: no member \"" + std::string(key) + "\"");
}

JsonRef::Members JsonRef::items() const {
  const auto& e = d_->entry(i_);
  if (e.kind != Kind::kObject) return Members{d_, nullptr, 0};
  return Members{d_, d_->kids_.data() + e.c.first, e.c.n};
}

JsonRef::MemberIterator JsonRef::Members::begin() const {
  return MemberIterator(doc, first);
}
JsonRef::MemberIterator JsonRef::Members::end() const {
  return MemberIterator(doc, first + count);
}
JsonRef::Member JsonRef::MemberIterator::operator*() const {
  return Member{JsonDoc::key_of(d_->entry(*p_)), JsonRef(d_, *p_)};
}

namespace {
[[noreturn]] void wrong_kind(const char* want) {
  throw std::logic_error(std::string("JsonRef: the value is not ") + want);
}
}  // namespace

std::string_view JsonRef::str() const {
  const auto& e = d_->entry(i_);
  if (e.kind != Kind::kString) wrong_kind("a string");
  return {e.s.p, e.s.n};
}
bool JsonRef::boolean() const {
  const auto& e = d_->entry(i_);
  if (e.kind != Kind::kBool) wrong_kind("a boolean");
  return e.b;
}
int64_t JsonRef::int64() const {
  const auto& e = d_->entry(i_);
  if (e.kind == Kind::kInt) return e.i;
  if (e.kind == Kind::kUint) return static_cast<int64_t>(e.u);
  wrong_kind("an integer");
}
uint64_t JsonRef::uint64() const {
  const auto& e = d_->entry(i_);
  if (e.kind == Kind::kUint) return e.u;
  if (e.kind == Kind::kInt) return static_cast<uint64_t>(e.i);
  wrong_kind("an integer");
}
double JsonRef::number() const {
  const auto& e = d_->entry(i_);
  if (e.kind == Kind::kFloat) return e.f;
  if (e.kind == Kind::kInt) return static_cast<double>(e.i);
  if (e.kind == Kind::kUint) return static_cast<double>(e.u);
  wrong_kind("a number");
}

namespace {

void write_value(JsonWriter& w, JsonRef v) {
  if (v.is_object()) {
    w.begin_object();
    for (const auto& [k, x] : v.items()) {
      w.key(k);
      write_value(w, x);
    }
    w.end();
  } else if (v.is_array()) {
    w.begin_array();
    for (size_t i = 0; i < v.size(); ++i) write_value(w, v[i]);
    w.end();
  } else if (v.is_string()) {
    w.value(v.str());
  } else if (v.is_boolean()) {
    w.value(v.boolean());
  } else if (v.is_number_unsigned()) {
    w.value(v.uint64());
  } else if (v.is_number_integer()) {
    w.value(v.int64());
  } else if (v.is_number_float()) {
    w.value_double(v.number());
  } else {
    w.value(nullptr);
  }
}

}  // namespace

std::string JsonRef::dump() const {
  JsonWriter w(/*compact=*/true);
  write_value(w, *this);
  std::string s = w.take();
  s.pop_back();  // take()'s newline
  return s;
}

JsonRef JsonDoc::root() const {
  static const JsonDoc kEmpty = [] {
    JsonDoc d;
    d.entries_.emplace_back();
    return d;
  }();
  return entries_.empty() ? JsonRef(&kEmpty, 0) : JsonRef(this, 0);
}

// -------------------------------------------------------------------------------- DocBuilder

// nlohmann's SAX handler: every event is checked first, in O(1) amortized: nesting depth,
// the number of values, duplicate keys in an object (nlohmann would keep the last), and
// integers outside the 64-bit range (nlohmann would turn them into floats). Errors name the
// JSON path. Then the value goes on the tape.
class DocBuilder {
 public:
  using J = nlohmann::json;

  DocBuilder(JsonDoc& doc, std::string_view text, const LoadLimits& limits)
      : doc_(doc), limits_(limits) {
    doc_.chars_size_ = text.size();
    doc_.chars_ = std::make_unique_for_overwrite<char[]>(text.size() + 1);
  }

  // nlohmann's SAX events (and the fast reader's): each value becomes a tape entry.
  bool null() { return add(Kind::kNull) != nullptr; }
  bool boolean(bool v) { return (add(Kind::kBool)->b = v, true); }
  bool number_integer(J::number_integer_t v) { return (add(Kind::kInt)->i = v, true); }
  bool number_unsigned(J::number_unsigned_t v) { return (add(Kind::kUint)->u = v, true); }
  bool number_float(J::number_float_t v, const J::string_t& text) {
    return number_float_text(v, text);
  }
  bool number_float_text(double v, std::string_view text) {
    if (text.find_first_of(".eE") == std::string::npos)
      fail("integer " + std::string(text.substr(0, 40)) + " is outside the 64-bit range");
    add(Kind::kFloat)->f = v;
    return true;
  }
  bool string(J::string_t& v) { return string_view_value(v); }
  bool string_view_value(std::string_view v) {
    auto* e = add(Kind::kString);
    e->s.p = copy(v);
    e->s.n = v.size();
    return true;
  }
  bool binary(J::binary_t&) { fail("binary values are not JSON"); }
  bool start_object(std::size_t) {
    open(Kind::kObject);
    return true;
  }
  bool key(J::string_t& k) { return key_view(k); }
  bool key_view(std::string_view k) {
    Frame& f = frames_[depth_ - 1];
    if (!new_key(f, k)) {
      f.key = k;
      fail("duplicate key \"" + std::string(k.substr(0, 64)) + "\"");
    }
    if (k.size() > std::numeric_limits<uint32_t>::max()) fail("key too long");
    f.key = std::string_view(copy(k), k.size());
    if (f.keys_set) f.keys.insert(f.key);
    return true;
  }
  bool end_object() {
    close(true);
    return true;
  }
  bool start_array(std::size_t) {
    open(Kind::kArray);
    return true;
  }
  bool end_array() {
    close(false);
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    // In an array, the value that failed to parse was never added: it is the next element.
    throw InputError(path(/*next_element=*/true) + ": invalid JSON: " + e.what());
  }

 private:
  // Objects with up to this many keys are checked for duplicates by a scan of their keys;
  // a larger object builds a hash set once and keeps it.
  static constexpr size_t kScanKeys = 16;

  struct Frame {
    bool object = false;
    int64_t index = -1;    // arrays: the element being read
    std::string_view key;  // objects: the member being read
    uint32_t entry = 0;    // the container's entry
    size_t first_pending = 0;
    bool keys_set = false;  // `keys` holds every key so far
    std::unordered_set<std::string_view> keys;
  };

  const char* copy(std::string_view s) {
    if (doc_.chars_used_ + s.size() > doc_.chars_size_)
      throw std::logic_error("JsonDoc: unescaped strings longer than the text");
    char* p = doc_.chars_.get() + doc_.chars_used_;
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    doc_.chars_used_ += s.size();
    return p;
  }

  // Counts a value, names it within its parent, and appends its entry.
  JsonDoc::Entry* add(Kind kind) {
    if (++values_ > limits_.max_json_values)
      fail("more than " + std::to_string(limits_.max_json_values) + " JSON values");
    if (doc_.entries_.size() >= std::numeric_limits<uint32_t>::max()) fail("too many JSON values");
    auto index = static_cast<uint32_t>(doc_.entries_.size());
    JsonDoc::Entry& e = doc_.entries_.emplace_back();
    e.kind = kind;
    if (depth_ > 0) {
      Frame& f = frames_[depth_ - 1];
      if (f.object) {
        e.key = f.key.data();
        e.key_len = static_cast<uint32_t>(f.key.size());
      } else {
        ++f.index;
      }
      pending_.push_back(index);
    }
    return &e;
  }

  void open(Kind kind) {
    add(kind);
    if (static_cast<int>(depth_) >= limits_.max_json_depth)
      fail("JSON nested deeper than " + std::to_string(limits_.max_json_depth));
    if (depth_ == frames_.size()) frames_.emplace_back();
    Frame& f = frames_[depth_++];
    f.object = kind == Kind::kObject;
    f.index = -1;
    f.key = {};
    f.entry = static_cast<uint32_t>(doc_.entries_.size() - 1);
    f.first_pending = pending_.size();
    if (f.keys_set) {
      f.keys.clear();
      f.keys_set = false;
    }
  }

  // Whether `k` is not yet a key of the object of frame `f`.
  bool new_key(Frame& f, std::string_view k) {
    size_t n = pending_.size() - f.first_pending;
    if (f.keys_set) return !f.keys.count(k);
    for (size_t i = f.first_pending; i < pending_.size(); ++i)
      if (JsonDoc::key_of(doc_.entries_[pending_[i]]) == k) return false;
    if (n + 1 >= kScanKeys) {
      for (size_t i = f.first_pending; i < pending_.size(); ++i)
        f.keys.insert(JsonDoc::key_of(doc_.entries_[pending_[i]]));
      f.keys_set = true;
    }
    return true;
  }

  void close(bool object) {
    Frame& f = frames_[depth_ - 1];
    auto first = static_cast<uint32_t>(doc_.kids_.size());
    auto n = static_cast<uint32_t>(pending_.size() - f.first_pending);
    doc_.kids_.insert(doc_.kids_.end(), pending_.begin() + static_cast<long>(f.first_pending),
                      pending_.end());
    pending_.resize(f.first_pending);
    if (object) {
      const auto& entries = doc_.entries_;
      std::sort(doc_.kids_.begin() + first, doc_.kids_.end(), [&](uint32_t a, uint32_t b) {
        return JsonDoc::key_of(entries[a]) < JsonDoc::key_of(entries[b]);
      });
    }
    JsonDoc::Entry& e = doc_.entries_[f.entry];
    e.c.first = first;
    e.c.n = n;
    --depth_;
  }

  // The JSON pointer of the value being read (RFC 6901; an empty key is an empty step);
  // `next_element`: the innermost array's next element.
  std::string path(bool next_element = false) const {
    std::string p;
    for (size_t d = 0; d < depth_; ++d) {
      const Frame& f = frames_[d];
      if (f.object && f.key.data() != nullptr) {
        p += '/';
        for (char c : f.key.substr(0, 64))
          p += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
      }
      if (!f.object) {
        int64_t i = f.index + (next_element && d + 1 == depth_ ? 1 : 0);
        if (i >= 0) p += "/" + std::to_string(i);
      }
    }
    return p.empty() ? "/" : p;
  }
  [[noreturn]] void fail(const std::string& what) const { throw InputError(path() + ": " + what); }

  JsonDoc& doc_;
  const LoadLimits& limits_;
  std::vector<Frame> frames_;  // frames_[0, depth_) are open; the rest are kept for reuse
  size_t depth_ = 0;
  std::vector<uint32_t> pending_;  // children of the open containers, innermost last
  size_t values_ = 0;
};

// ------------------------------------------------------------------------------ FastReader

// A reader for the JSON that writers like flatcheck's produce: strings of printable ASCII
// without escapes, numbers in their usual forms. It sends the builder the events nlohmann's
// parser would send, in the same order, each one only after the token behind it is complete,
// and returns false at the first byte it leaves to nlohmann: an escape or a byte outside
// printable ASCII in a string, an integer of 19 or more digits, a float that does not convert
// to a finite double, a byte-order mark, or anything that is not JSON. The caller then parses
// the whole text again with nlohmann, so errors, and every text this reader declines, are
// nlohmann's. An error the builder raises (a limit, a duplicate key) comes at the same event
// either way, since nlohmann would have sent the same events up to it.
class FastReader {
 public:
  FastReader(std::string_view text, DocBuilder& b)
      : p_(text.data()), end_(text.data() + text.size()), b_(b) {}

  bool run() {
    if (p_ != end_ && static_cast<unsigned char>(*p_) == 0xef) return false;  // a BOM
    std::vector<bool> in_object;  // the open containers, innermost last
  value:
    if (!skip_space()) return false;
    switch (*p_) {
      case '{':
      case '[': {
        bool object = *p_++ == '{';
        if (object)
          b_.start_object(std::size_t(-1));
        else
          b_.start_array(std::size_t(-1));
        if (!skip_space()) return false;
        if (*p_ == (object ? '}' : ']')) {
          ++p_;
          close(object);
          goto after_value;
        }
        in_object.push_back(object);
        if (object) goto member;
        goto value;
      }
      case '"': {
        std::string_view str;
        if (!string(str)) return false;
        b_.string_view_value(str);
        goto after_value;
      }
      case 't':
        if (!literal("true")) return false;
        b_.boolean(true);
        goto after_value;
      case 'f':
        if (!literal("false")) return false;
        b_.boolean(false);
        goto after_value;
      case 'n':
        if (!literal("null")) return false;
        b_.null();
        goto after_value;
      default:
        if (!number()) return false;
        goto after_value;
    }
  member : {
    std::string_view key;
    if (!skip_space() || *p_ != '"' || !string(key)) return false;
    b_.key_view(key);
    if (!skip_space() || *p_ != ':') return false;
    ++p_;
    goto value;
  }
  after_value:
    if (in_object.empty()) return !skip_space();  // nothing may follow the document's value
    if (!skip_space()) return false;
    if (*p_ == ',') {
      ++p_;
      if (in_object.back()) goto member;
      goto value;
    }
    if (*p_ != (in_object.back() ? '}' : ']')) return false;
    ++p_;
    close(in_object.back());
    in_object.pop_back();
    goto after_value;
  }

 private:
  void close(bool object) {
    if (object)
      b_.end_object();
    else
      b_.end_array();
  }

  // Skips JSON whitespace; false at the end of the text.
  bool skip_space() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\t' || *p_ == '\r')) ++p_;
    return p_ != end_;
  }

  bool literal(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word)
      return false;
    p_ += word.size();
    return true;
  }

  // At the opening quote: the string's bytes, when they need no unescaping or UTF-8 checks.
  bool string(std::string_view& out) {
    const char* start = ++p_;
    for (; p_ != end_; ++p_) {
      auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        out = std::string_view(start, static_cast<size_t>(p_ - start));
        ++p_;
        return true;
      }
      if (c == '\\' || c < 0x20 || c > 0x7e) return false;
    }
    return false;
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  bool number() {
    const char* start = p_;
    bool negative = *p_ == '-';
    if (negative) ++p_;
    if (p_ == end_) return false;
    if (*p_ == '0') {
      ++p_;
    } else if (digit(*p_)) {
      while (p_ != end_ && digit(*p_)) ++p_;
    } else {
      return false;
    }
    bool is_float = false;
    if (p_ != end_ && *p_ == '.') {
      ++p_;
      if (p_ == end_ || !digit(*p_)) return false;
      while (p_ != end_ && digit(*p_)) ++p_;
      is_float = true;
    }
    if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (p_ == end_ || !digit(*p_)) return false;
      while (p_ != end_ && digit(*p_)) ++p_;
      is_float = true;
    }
    std::string_view text(start, static_cast<size_t>(p_ - start));
    if (is_float) {
      double d = 0;
      auto r = std::from_chars(text.data(), text.data() + text.size(), d);
      if (fault_on(Fault::kJsonExponentCase) && text.find('E') != std::string_view::npos)
        r = std::from_chars(text.data(), text.data() + text.find('E'), d), r.ptr = p_;
      if (r.ec != std::errc() || r.ptr != p_ || !std::isfinite(d)) return false;
      b_.number_float_text(d, text);
      return true;
    }
    std::string_view digits = text.substr(negative ? 1 : 0);
    if (digits.size() > 18) return false;  // 64-bit edges and overflow: nlohmann's
    uint64_t v = 0;
    for (char c : digits) v = v * 10 + static_cast<uint64_t>(c - '0');
    if (negative)  // nlohmann reads "-0" as a signed zero-valued integer too
      b_.number_integer(-static_cast<int64_t>(v));
    else
      b_.number_unsigned(v);
    return true;
  }

  const char* p_;
  const char* end_;
  DocBuilder& b_;
};

namespace {

// Both readers start here. No JSON text holds a NUL byte (neither whitespace nor allowed in a
// string), and nlohmann's lexer takes one for the end of the input.
void check_size(std::string_view text, const LoadLimits& limits) {
  if (text.size() > limits.max_bytes)
    throw InputError("/: document of " + std::to_string(text.size()) +
                     " bytes is over the limit of " + std::to_string(limits.max_bytes));
  if (size_t nul = text.find('\0'); nul != std::string_view::npos)
    throw InputError("/: invalid JSON: a NUL byte at offset " + std::to_string(nul));
}

}  // namespace

JsonDoc parse_doc_with_nlohmann(std::string_view text, const LoadLimits& limits) {
  check_size(text, limits);
  JsonDoc doc;
  try {
    DocBuilder sax(doc, text, limits);
    nlohmann::json::sax_parse(text.begin(), text.end(), &sax);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(std::string("/: invalid JSON: ") + e.what());
  } catch (const std::bad_alloc&) {
    throw InputError("/: the document does not fit in memory");
  }
  return doc;
}

std::optional<JsonDoc> parse_doc_fast(std::string_view text, const LoadLimits& limits) {
  check_size(text, limits);
  JsonDoc doc;
  try {
    DocBuilder sax(doc, text, limits);
    if (!FastReader(text, sax).run()) return std::nullopt;
  } catch (const std::bad_alloc&) {
    throw InputError("/: the document does not fit in memory");
  }
  return doc;
}

JsonDoc parse_doc(std::string_view text, const LoadLimits& limits) {
  if (auto doc = parse_doc_fast(text, limits)) return std::move(*doc);
  return parse_doc_with_nlohmann(text, limits);
}

std::string document_format(JsonRef j) {
  if (!j.is_object()) return "";
  auto f = j.find("format");
  return f && f->is_string() ? std::string(f->str()) : "";
}

}  // namespace flatcheck
