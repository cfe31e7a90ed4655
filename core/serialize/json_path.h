// JSON pointers ("/module/graph/nodes/3/args/0") for the loaders' error messages, built only
// when an error needs one.
//
// Every value a loader reads has a path, and nearly none of them ever appears in a message:
// building each as a string cost one allocation and a copy of its parent's text per field.
// A JsonPath is one step (a key or an index) and a pointer to its parent; str() walks the
// chain. A step must not outlive its parent, so a path is passed down the reader's call tree
// or kept in a local whose parent is a longer-lived local or parameter, never returned or
// stored in a structure (keep str() there). A step below a temporary, or a whole path over a
// temporary string, does not compile.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace flatcheck {

class JsonPath {
 public:
  // A path given whole ("" is the document itself, "/module" a member of it). The text is not
  // copied: it must outlive this path and every step below it.
  JsonPath(const char* text) : text_(text) {}
  JsonPath(const std::string& text) : text_(text) {}
  JsonPath(std::string&&) = delete;  // the text would die at the end of the statement
  // The member `key` of the value at `parent`.
  JsonPath(const JsonPath& parent, std::string_view key)
      : parent_(&parent), text_(key), kind_(kKey) {}
  // The element `index` of the array at `parent`.
  JsonPath(const JsonPath& parent, size_t index) : parent_(&parent), index_(index), kind_(kIndex) {}
  // A step below a temporary would outlive it: name the parent first.
  JsonPath(JsonPath&& parent, std::string_view key) = delete;
  JsonPath(JsonPath&& parent, size_t index) = delete;

  // The JSON pointer, with '~' and '/' in keys escaped as "~0" and "~1" (RFC 6901).
  std::string str() const;
  // True for the document itself (a whole path "").
  bool empty() const { return kind_ == kWhole && text_.empty(); }

 private:
  enum Kind : unsigned char { kWhole, kKey, kIndex };
  void append_to(std::string& out) const;

  const JsonPath* parent_ = nullptr;
  std::string_view text_;  // kWhole: the path; kKey: the key, unescaped
  size_t index_ = 0;       // kIndex
  Kind kind_ = kWhole;
};

}  // namespace flatcheck
