// A parsed JSON document without nlohmann's DOM. The strict reader (parse_doc) takes
// nlohmann's SAX events, checks each one (limits, duplicate keys, integers outside 64 bits;
// errors name the JSON path) and appends the value to one flat tape: a vector of fixed-size
// entries, one vector of child indices, and one character buffer for every string and key.
// A document costs a handful of allocations, not one or more per value.
//
// The loaders read the tape through JsonRef, a view with the questions they ask of a value
// (its kind, an object's member by key, an array's element by index, an object's members in
// increasing key order). Object members are sorted once, when the object ends, so members
// come in the order nlohmann's std::map gave them and every error the loaders report is the
// one they reported over the DOM.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flatcheck {

struct LoadLimits;
class JsonDoc;

// A value of a JsonDoc; valid while the document lives. Cheap to copy.
class JsonRef {
 public:
  struct Member;
  class MemberIterator;
  struct Members {
    MemberIterator begin() const;
    MemberIterator end() const;
    const JsonDoc* doc;
    const uint32_t* first;
    uint32_t count;
  };

  bool is_null() const;
  bool is_boolean() const;
  // An integer (signed or unsigned), as nlohmann's is_number_integer.
  bool is_number_integer() const;
  // A non-negative integer (nlohmann reads every non-negative integer as unsigned).
  bool is_number_unsigned() const;
  bool is_number_float() const;
  bool is_string() const;
  bool is_array() const;
  bool is_object() const;

  // As nlohmann: elements or members of a container, 0 for null, 1 for any other scalar.
  size_t size() const;
  // Element `i` of an array; std::out_of_range past the end or on a non-array.
  JsonRef operator[](size_t i) const;
  // An object's member `key`, or nothing (also for a non-object).
  std::optional<JsonRef> find(std::string_view key) const;
  bool contains(std::string_view key) const { return find(key).has_value(); }
  // An object's member `key`; std::out_of_range when missing.
  JsonRef at(std::string_view key) const;
  // An object's members in increasing byte order of their keys; none for a non-object.
  Members items() const;

  // Scalars; std::logic_error when the value is of another kind. int64() of an unsigned
  // value past INT64_MAX wraps, as nlohmann's get<int64_t>.
  std::string_view str() const;
  bool boolean() const;
  int64_t int64() const;
  uint64_t uint64() const;
  double number() const;

  // nlohmann's compact text of the value (dump()).
  std::string dump() const;

 private:
  friend class JsonDoc;
  JsonRef(const JsonDoc* d, uint32_t i) : d_(d), i_(i) {}
  const JsonDoc* d_;
  uint32_t i_;
};

struct JsonRef::Member {
  std::string_view key;
  JsonRef value;
};

class JsonRef::MemberIterator {
 public:
  MemberIterator(const JsonDoc* d, const uint32_t* p) : d_(d), p_(p) {}
  Member operator*() const;
  MemberIterator& operator++() {
    ++p_;
    return *this;
  }
  bool operator!=(const MemberIterator& o) const { return p_ != o.p_; }

 private:
  const JsonDoc* d_;
  const uint32_t* p_;
};

class JsonDoc {
 public:
  enum class Kind : uint8_t { kNull, kBool, kInt, kUint, kFloat, kString, kArray, kObject };

  JsonDoc() = default;
  JsonDoc(JsonDoc&&) = default;
  JsonDoc& operator=(JsonDoc&&) = default;

  // The document's value (a null for a document never parsed).
  JsonRef root() const;

 private:
  friend class JsonRef;
  friend class DocBuilder;

  struct Entry {
    Kind kind = Kind::kNull;
    uint32_t key_len = 0;       // an object member's key
    const char* key = nullptr;  // into chars_
    union {
      bool b;
      int64_t i;
      uint64_t u;
      double f;
      struct {
        const char* p;  // into chars_
        size_t n;
      } s;
      struct {
        uint32_t first;  // into kids_
        uint32_t n;
      } c;
    };
    Entry() : u(0) {}
  };

  const Entry& entry(uint32_t i) const { return entries_[i]; }
  static std::string_view key_of(const Entry& e) { return {e.key, e.key_len}; }

  std::vector<Entry> entries_;
  std::vector<uint32_t> kids_;     // each container's children, contiguous; objects sorted
  std::unique_ptr<char[]> chars_;  // every string and key, unescaped (never longer than the
  size_t chars_used_ = 0;          // text), so one buffer of the text's size never moves
  size_t chars_size_ = 0;
};

// Parses JSON text with the size, depth and value-count limits; throws InputError
// ("<json path>: ...") on bad syntax, a duplicate key, an integer outside 64 bits or a limit.
// A fast reader takes the texts it can (printable ASCII strings without escapes, numbers in
// their usual forms; what flatcheck writes); nlohmann's parser takes the rest, and every text
// with a syntax error. Both give the same document, or the same error.
JsonDoc parse_doc(std::string_view text, const LoadLimits& limits);
// The two halves, for tests and benchmarks: the fast reader (nothing when it leaves the text to
// nlohmann; it may throw a limit or duplicate-key error) and nlohmann's parser alone.
std::optional<JsonDoc> parse_doc_fast(std::string_view text, const LoadLimits& limits);
JsonDoc parse_doc_with_nlohmann(std::string_view text, const LoadLimits& limits);

// A document's "format" member ("flatcheck-case", "flatcheck-module", "flatcheck-program"),
// or "" when it has none.
std::string document_format(JsonRef j);

}  // namespace flatcheck
