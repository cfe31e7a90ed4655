// printable_text and utf8_length_at: expected spellings written by hand, and well-formedness
// judged against nlohmann's parser (an independent UTF-8 reader).
#include "core/base/text.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace flatcheck {
namespace {

TEST(TextTest, ControlsAndIllFormedBytesAreSpelledOut) {
  struct Row {
    std::string in, one_line, with_layout;
  };
  const std::vector<Row> rows = {
      {"plain", "plain", "plain"},
      {"a\x1b[2Jb", "a\\x1b[2Jb", "a\\x1b[2Jb"},
      {std::string("nul\0end", 7), "nul\\x00end", "nul\\x00end"},
      {"del\x7f", "del\\x7f", "del\\x7f"},
      {"l1\nl2\tt\r", "l1\\x0al2\\x09t\\x0d", "l1\nl2\tt\r"},
      {"csi\xc2\x9b", "csi\\u009b", "csi\\u009b"},
      {"nel\xc2\x85.", "nel\\u0085.", "nel\\u0085."},
      {"nbsp\xc2\xa0", "nbsp\xc2\xa0", "nbsp\xc2\xa0"},  // U+00A0 is no control
      {"\xc3\xa9\xe2\x82\xac", "\xc3\xa9\xe2\x82\xac", "\xc3\xa9\xe2\x82\xac"},  // é €
      {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},              // U+1F600
      {"\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"},              // U+10FFFF
      {"\xff", "\\xff", "\\xff"},
      {"a\x80", "a\\x80", "a\\x80"},                                         // a stray continuation
      {"\xc0\x80", "\\xc0\\x80", "\\xc0\\x80"},                              // overlong NUL
      {"\xe0\x80\x80", "\\xe0\\x80\\x80", "\\xe0\\x80\\x80"},                // overlong
      {"\xed\xa0\x80", "\\xed\\xa0\\x80", "\\xed\\xa0\\x80"},                // a surrogate
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "\\xf4\\x90\\x80\\x80"},  // past U+10FFFF
      {"\xf5\x80\x80\x80", "\\xf5\\x80\\x80\\x80", "\\xf5\\x80\\x80\\x80"},
      {"cut\xe2\x82", "cut\\xe2\\x82", "cut\\xe2\\x82"},  // cut short
      {"\xe2\x82\x1b", "\\xe2\\x82\\x1b", "\\xe2\\x82\\x1b"},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(printable_text(r.in, false), r.one_line) << nlohmann::json(r.one_line).dump();
    EXPECT_EQ(printable_text(r.in, true), r.with_layout) << nlohmann::json(r.with_layout).dump();
  }
}

// What nlohmann accepts as the text of a JSON string (`s` holds no quote or backslash).
bool nlohmann_accepts(const std::string& s) {
  return nlohmann::json::accept("\"" + s + "\"");
}

bool well_formed(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = utf8_length_at(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// Every one- and two-byte string and a sweep of three- and four-byte ones (lead bytes in full,
// the rest at the range edges): ill-formed exactly where nlohmann refuses (control characters
// aside: JSON refuses them raw, UTF-8 does not).
TEST(TextTest, Utf8WellFormednessAgreesWithNlohmann) {
  const std::vector<int> edges = {0x20, 0x41, 0x7e, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0,
                                  0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff};
  size_t checked = 0;
  auto check = [&](const std::string& s) {
    for (char c : s)
      if (c == '"' || c == '\\' || (static_cast<unsigned char>(c) < 0x20)) return;
    EXPECT_EQ(well_formed(s), nlohmann_accepts(s)) << printable_text(s, false);
    ++checked;
  };
  for (int a = 0; a < 256; ++a) {
    check(std::string(1, static_cast<char>(a)));
    for (int b = 0; b < 256; ++b) check({static_cast<char>(a), static_cast<char>(b)});
  }
  for (int a = 0xc0; a < 256; ++a)
    for (int b : edges)
      for (int c : edges) {
        check({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c)});
        for (int d : edges)
          check({static_cast<char>(a), static_cast<char>(b), static_cast<char>(c),
                 static_cast<char>(d)});
      }
  EXPECT_GT(checked, 500000u);
}

}  // namespace
}  // namespace flatcheck
