// A JSON writer without a DOM: values go straight into one string, in the canonical layout
// of dump_canonical (sorted keys, one space of indentation a level, a container on one line
// when its one-line form is at most 100 characters) or in nlohmann's compact form.
//
// The caller writes each object's keys in increasing byte order (the order of nlohmann's
// std::map); a key out of order throws std::logic_error, so a writer can never produce a
// document that is not canonical. Layout is decided as the text grows: a container switches
// to the indented form as soon as its one-line form passes the width, so every byte is copied
// at most once more per open container.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace flatcheck {

class JsonWriter {
 public:
  explicit JsonWriter(bool compact = false) : compact_(compact) {}
  void begin_object() { open('{'); }
  void begin_array() { open('['); }
  // Closes the innermost container.
  void end();
  // The next member's key; must be greater than the previous key of the same object.
  void key(std::string_view k);

  void value(std::string_view s);
  void value(const char* s) { value(std::string_view(s)); }
  void value(const std::string& s) { value(std::string_view(s)); }
  void value(int64_t i);
  void value(int i) { value(static_cast<int64_t>(i)); }
  void value(uint64_t u);
  void value(bool b);
  void value(std::nullptr_t);
  // A finite double as nlohmann writes it (shortest round trip, "1.0" for integral values).
  void value_double(double d);
  // Raw bytes as a base64 string.
  void value_bytes(std::string_view raw);

  // The document, with a trailing newline. The writer is empty afterwards.
  std::string take();

 private:
  struct Frame {
    size_t start;       // offset of the opening bracket
    size_t first_item;  // index into items_ of this frame's first item
    bool object;
    bool multi_line = false;
    std::string last_key;  // kept between uses of the frame, so it rarely allocates
    bool has_key = false;
  };

  void open(char bracket);
  // Writes the separator before an array element or an object member.
  void begin_item();
  // Starts writing a scalar: a value of the current object member or a new array element.
  void begin_value();
  // Switches open containers whose one-line form has grown past the width to the indented form.
  void fit();
  void break_lines(size_t frame);
  void pad(size_t depth);
  void write_string(std::string_view s);
  template <class Int>
  void write_integer(Int i);

  bool compact_;
  bool after_key_ = false;
  std::string out_;
  std::vector<Frame> frames_;  // frames_[0, depth_) are open; the rest are kept for reuse
  size_t depth_ = 0;
  std::vector<size_t> items_;  // item start offsets of the open containers, innermost last
  size_t first_one_line_ = 0;  // frames below this index are indented
  std::string scratch_;        // break_lines' rewrite of a container
};

}  // namespace flatcheck
