// The strict reader's tape (core/serialize/json_doc.h): every value, key order and number read
// back as nlohmann's DOM reads the same text; duplicate keys found in small objects (a scan)
// and large ones (a hash set); errors with the JSON path; JsonRef refusing questions of the
// wrong kind.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <stdexcept>
#include <string>

#include "core/base/check.h"
#include "core/passes/passes.h"
#include "core/pipeline/pipeline.h"
#include "core/serialize/json_doc.h"
#include "core/serialize/serialize.h"
#include "generators/case.h"
#include "generators/generate.h"
#include "tests/support/random_json.h"

namespace flatcheck {
namespace {

// The error parse_doc throws for `text`, or "" when it parses.
std::string parse_error(const std::string& text, const LoadLimits& limits = LoadLimits{}) {
  try {
    parse_doc(text, limits);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// Checks the tape value `r` against nlohmann's DOM value `j`, recursively.
void expect_same(JsonRef r, const Json& j) {
  RC_ASSERT(r.is_null() == j.is_null());
  RC_ASSERT(r.is_boolean() == j.is_boolean());
  RC_ASSERT(r.is_number_integer() == j.is_number_integer());
  RC_ASSERT(r.is_number_unsigned() == j.is_number_unsigned());
  RC_ASSERT(r.is_number_float() == j.is_number_float());
  RC_ASSERT(r.is_string() == j.is_string());
  RC_ASSERT(r.is_array() == j.is_array());
  RC_ASSERT(r.is_object() == j.is_object());
  RC_ASSERT(r.size() == j.size());
  if (j.is_object()) {
    auto it = j.begin();
    for (const auto& [k, v] : r.items()) {
      RC_ASSERT(it != j.end());
      RC_ASSERT(std::string(k) == it.key());
      expect_same(v, *it);
      auto found = r.find(k);
      RC_ASSERT(found.has_value());
      RC_ASSERT(found->dump() == it->dump());
      ++it;
    }
    RC_ASSERT(it == j.end());
    RC_ASSERT(!r.find("no such key \x01").has_value());
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) expect_same(r[i], j[i]);
  } else if (j.is_string()) {
    RC_ASSERT(std::string(r.str()) == j.get<std::string>());
  } else if (j.is_boolean()) {
    RC_ASSERT(r.boolean() == j.get<bool>());
  } else if (j.is_number_integer()) {  // signed or unsigned: every integer question, as nlohmann
    RC_ASSERT(r.uint64() == j.get<uint64_t>());
    RC_ASSERT(r.int64() == j.get<int64_t>());
    RC_ASSERT(r.number() == j.get<double>());
  } else if (j.is_number_float()) {
    RC_ASSERT(r.number() == j.get<double>());
  }
  RC_ASSERT(r.dump() == j.dump());
}

RC_GTEST_PROP(JsonDocProperty, ReadsWhatNlohmannsDomReads, ()) {
  Json j = random_json(4);
  for (const std::string& text : {j.dump(), dump_canonical(j)}) {
    JsonDoc doc = parse_doc(text, LoadLimits{});
    expect_same(doc.root(), Json::parse(text));
  }
}

// A document with every value's kind: "5" read as unsigned and as signed are told apart, as
// are 1.0 and 1, and a double by its bits.
std::string tape_text(JsonRef r) {
  std::string out;
  if (r.is_object()) {
    out += "{";
    for (const auto& [k, v] : r.items())
      out += std::to_string(k.size()) + ":" + std::string(k) + "=" + tape_text(v) + ",";
    return out + "}";
  }
  if (r.is_array()) {
    out += "[";
    for (size_t i = 0; i < r.size(); ++i) out += tape_text(r[i]) + ",";
    return out + "]";
  }
  if (r.is_string()) return "s" + std::to_string(r.str().size()) + ":" + std::string(r.str());
  if (r.is_boolean()) return r.boolean() ? "t" : "f";
  if (r.is_number_unsigned()) return "u" + std::to_string(r.uint64());
  if (r.is_number_integer()) return "i" + std::to_string(r.int64());
  if (r.is_number_float()) return "d" + std::to_string(std::bit_cast<uint64_t>(r.number()));
  return "n";
}

template <class Parse>
std::string outcome(Parse parse) {
  try {
    return "document " + tape_text(parse().root());
  } catch (const InputError& e) {
    return std::string("error ") + e.what();
  }
}

// parse_doc (the fast reader, nlohmann for what it declines) against nlohmann's parser alone:
// the same document with the same kinds, or the same error. The fast reader on its own either
// declines or agrees.
void expect_parsers_agree(const std::string& text, const LoadLimits& limits = LoadLimits{}) {
  std::string reference = outcome([&] { return parse_doc_with_nlohmann(text, limits); });
  RC_ASSERT(outcome([&] { return parse_doc(text, limits); }) == reference);
  std::string fast = outcome([&] {
    auto doc = parse_doc_fast(text, limits);
    if (!doc) throw InputError("declined");
    return std::move(*doc);
  });
  RC_ASSERT(fast == "error declined" || fast == reference);
}

// Texts near valid JSON: random documents with a few bytes inserted, deleted or replaced by
// the bytes the readers treat specially, and tight limits now and then.
RC_GTEST_PROP(JsonDocProperty, TheFastReaderAgreesWithNlohmannOrDeclines, ()) {
  Json j = random_json(3);
  std::string text = *rc::gen::inRange(0, 2) ? j.dump() : dump_canonical(j);
  const std::string specials = "\"\\,:{}[]0123456789-+.eE \t\r\ntrufalsn\x01\x7f\xc3\xa9\xef";
  for (int k = *rc::gen::inRange(0, 4); k > 0; --k) {
    size_t at = *rc::gen::inRange<size_t>(0, text.size() + 1);
    char c = specials[*rc::gen::inRange<size_t>(0, specials.size())];
    switch (*rc::gen::inRange(0, 3)) {
      case 0:
        text.insert(at, 1, c);
        break;
      case 1:
        if (at < text.size()) text.erase(at, 1);
        break;
      default:
        if (at < text.size()) text[at] = c;
    }
  }
  LoadLimits limits;
  if (*rc::gen::inRange(0, 4) == 0) {
    limits.max_json_depth = *rc::gen::inRange(1, 4);
    limits.max_json_values = *rc::gen::inRange<size_t>(1, 30);
  }
  expect_parsers_agree(text, limits);
}

// The forms at the edges of the fast reader: numbers it declines (19 digits and more, floats
// out of range) or reads (zero of either sign, exponents), whitespace, a byte-order mark,
// escapes and UTF-8, and syntax errors of every kind.
TEST(JsonDocTest, TheFastReaderAgreesWithNlohmannAtItsEdges) {
  for (const char* text : {"0",
                           "-0",
                           "-0.0",
                           "7",
                           "-7",
                           "999999999999999999",
                           "-999999999999999999",
                           "1000000000000000000",
                           "9223372036854775807",
                           "-9223372036854775808",
                           "18446744073709551615",
                           "18446744073709551616",
                           "-9223372036854775809",
                           "1.5",
                           "-2.25e-3",
                           "1E5",
                           "1e+5",
                           "1e400",
                           "-1e400",
                           "1e-400",
                           "4.9e-324",
                           "01",
                           "1.",
                           "[1.]",
                           "{\"a\":1.}",
                           "[1.e5]",
                           "[-0.]",
                           ".5",
                           "-",
                           "+1",
                           "1e",
                           "[1,]",
                           "{\"a\":1,}",
                           "{\"a\" 1}",
                           "{\"a\" 11}",
                           "{\"a\" -5}",
                           "{\"a\"x1}",
                           "{\"a\":1, \"b\" 22}",
                           "[{\"a\" 11}]",
                           "{1:2}",
                           "[1 2]",
                           "\xef\xbb\xbf[]",
                           " \t\r\n[ ] \n",
                           "[] x",
                           "",
                           " ",
                           "[",
                           "{",
                           "\"abc",
                           "\"a\\u00e9\"",
                           "\"\xc3\xa9\"",
                           "\"\x7f\"",
                           "\"tab\there\"",
                           "tru",
                           "nul",
                           "true false",
                           "[true,false,null]",
                           "{\"a\":{\"a\":[]}}",
                           "{\"b\":1,\"a\":2}",
                           "{\"a\":1,\"a\":2}"}) {
    SCOPED_TRACE(text);
    expect_parsers_agree(text);
  }
}

// The fast reader takes what flatcheck writes: a case file, and each stage's program,
// flattened ones with engines, whose blobs are documents too.
TEST(JsonDocTest, TheFastReaderTakesFlatchecksOwnFiles) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Case c = generate_case_for_seed(seed);
    Program ep = export_program(*c.module);
    Program fp = flatten(partition(ep, partition_options(c.config)));
    std::vector<std::string> texts{save_case(c), save_program(ep), save_program(fp)};
    JsonDoc doc = parse_doc(texts.back(), LoadLimits{});
    if (auto engines = doc.root().at("module").find("engines"))
      for (const auto& [name, e] : engines->items())
        texts.push_back(base64_decode(e.at("blob").str(), "/"));
    for (const std::string& text : texts) {
      EXPECT_TRUE(parse_doc_fast(text, LoadLimits{}).has_value()) << "seed " << seed;
      EXPECT_EQ(outcome([&] { return parse_doc(text, LoadLimits{}); }),
                outcome([&] { return parse_doc_with_nlohmann(text, LoadLimits{}); }));
    }
  }
}

TEST(JsonDocTest, NullsEscapesAndEmbeddedNulsReadBack) {
  std::string text = R"({"k\u00e9y": "a\nb\u0000c", "n": [null, {"z": null, "a": -0.5}], "": 7})";
  JsonDoc doc = parse_doc(text, LoadLimits{});
  JsonRef r = doc.root();
  EXPECT_EQ(r.size(), 3u);
  EXPECT_EQ(r.at("k\xc3\xa9y").str(), std::string_view("a\nb\0c", 5));
  EXPECT_TRUE(r.at("n")[0].is_null());
  EXPECT_EQ(r.at("n")[0].size(), 0u);
  EXPECT_EQ(r.at("").int64(), 7);
  EXPECT_TRUE(r.at("").is_number_unsigned());
  // Keys in increasing byte order, as nlohmann's std::map: "", "k\xc3\xa9y", "n".
  std::string keys;
  for (const auto& [k, v] : r.items()) keys += "[" + std::string(k) + "]";
  EXPECT_EQ(keys, "[][k\xc3\xa9y][n]");
  EXPECT_EQ(r.at("n").dump(), R"([null,{"a":-0.5,"z":null}])");
  EXPECT_EQ(r.dump(), Json::parse(text).dump());
}

TEST(JsonDocTest, DuplicateKeysAreFoundInSmallAndLargeObjects) {
  // Up to 16 keys the reader scans the object's keys; from then on it keeps a hash set.
  for (int n : {1, 2, 15, 16, 17, 40}) {
    for (int dup : {0, n / 2, n - 1}) {
      std::string text = "{\"pad\": {\"x\": [";
      for (int i = 0; i < n; ++i) text += (i ? ", " : "") + std::to_string(i);
      text += "]}, \"o\": {";
      for (int i = 0; i < n; ++i)
        text += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
      text += "\"k" + std::to_string(dup) + "\": 0}}";
      EXPECT_EQ(parse_error(text),
                "/o/k" + std::to_string(dup) + ": duplicate key \"k" + std::to_string(dup) + "\"")
          << "n = " << n << ", duplicate of key " << dup;
      // Without the duplicate, every key is found.
      std::string fine = text.substr(0, text.rfind(", \"k")) + "}}";
      JsonDoc doc = parse_doc(fine, LoadLimits{});
      JsonRef o = doc.root().at("o");
      ASSERT_EQ(o.size(), static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) EXPECT_EQ(o.at("k" + std::to_string(i)).int64(), i);
    }
  }
  // A key repeated in a sibling object is not a duplicate.
  EXPECT_EQ(parse_error(R"([{"a": 1}, {"a": 2}])"), "");
}

TEST(JsonDocTest, ErrorsNameTheJsonPath) {
  EXPECT_EQ(parse_error(R"({"a": [1, {"b": tru}]})").rfind("/a/1/b: invalid JSON: ", 0), 0u)
      << parse_error(R"({"a": [1, {"b": tru}]})");
  EXPECT_EQ(parse_error("[1, 2] 3").rfind("/: invalid JSON: ", 0), 0u);
  LoadLimits shallow;
  shallow.max_json_depth = 2;
  EXPECT_EQ(parse_error("[[1]]", shallow), "");
  EXPECT_EQ(parse_error("[[[1]]]", shallow), "/0/0: JSON nested deeper than 2");
  LoadLimits few;
  few.max_json_values = 4;
  EXPECT_EQ(parse_error("[1, 2, 3]", few), "");
  EXPECT_EQ(parse_error(R"({"a": [1, 2, 3]})", few), "/a/1: more than 4 JSON values");
  LoadLimits tiny;
  tiny.max_bytes = 5;
  EXPECT_EQ(parse_error("[1, 2]", tiny), "/: document of 6 bytes is over the limit of 5");
  std::string big = parse_error(R"({"v": 123456789012345678901234567890})");
  EXPECT_EQ(big, "/v: integer 123456789012345678901234567890 is outside the 64-bit range");
}

// A container opened where an earlier one of the same depth had a key names no stale key before
// its own first key: each error path here is worked out from the text.
TEST(JsonDocTest, ErrorsInAContainerBeforeItsFirstKeyNameOnlyTheContainer) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"a": {"b": 1}, "c": {)", "/c: "},
      {R"({"a": {"b": 1}, "c": {1)", "/c: "},
      {R"({"a": {"b": 1}, "c": {,}})", "/c: "},
      {R"({"a": {"b": 1}, "c": {}, "d": [{"e": 1}, {)", "/d/1: "},
      {R"([{"k": [{"z": 0}]}, {"k": [{)", "/1/k/0: "},
  };
  for (const auto& [text, path] : cases) {
    std::string err = parse_error(text);
    EXPECT_EQ(err.rfind(path, 0), 0u) << text << ": " << err;
  }
}

// Every scalar question asked of every kind of value: it answers the kinds it fits (a number
// question any number, as nlohmann's get does) and throws std::logic_error for the rest.
TEST(JsonDocTest, EveryScalarQuestionOfTheWrongKindThrows) {
  JsonDoc doc = parse_doc(R"([null, true, -3, 7, 18446744073709551615, 2.5, "s", [1], {"k": 1}])",
                          LoadLimits{});
  // which questions each element answers: boolean, int64, uint64, number, str
  const char* fits[] = {"", "b", "iun", "iun", "iun", "n", "s", "", ""};
  int threw = 0;
  for (size_t i = 0; i < 9; ++i) {
    JsonRef v = doc.root()[i];
    auto asks = [&](char q, auto ask) {
      bool fit = std::string(fits[i]).find(q) != std::string::npos;
      if (fit) {
        EXPECT_NO_THROW(ask()) << "element " << i << ", question " << q;
      } else {
        EXPECT_THROW(ask(), std::logic_error) << "element " << i << ", question " << q;
        ++threw;
      }
    };
    asks('b', [&] { return v.boolean(); });
    asks('i', [&] { return v.int64(); });
    asks('u', [&] { return v.uint64(); });
    asks('n', [&] { return v.number(); });
    asks('s', [&] { return std::string(v.str()); });
  }
  EXPECT_EQ(threw, 45 - 1 - 9 - 1 - 1);
}

TEST(JsonDocTest, QuestionsOfTheWrongKindThrow) {
  JsonDoc doc = parse_doc(R"({"a": [1, "s"], "b": true})", LoadLimits{});
  JsonRef r = doc.root();
  EXPECT_THROW(r.at("a")[2], std::out_of_range);
  EXPECT_THROW(r.at("b")[0], std::out_of_range);
  EXPECT_THROW(r.at("c"), std::out_of_range);
  EXPECT_THROW(r.at("a")[0].str(), std::logic_error);
  EXPECT_THROW(r.at("a")[1].int64(), std::logic_error);
  EXPECT_THROW(r.at("a")[1].boolean(), std::logic_error);
  EXPECT_FALSE(r.at("a").find("x").has_value());
  EXPECT_EQ(r.at("a").items().count, 0u);
  EXPECT_EQ(r.at("b").size(), 1u);
  EXPECT_EQ(document_format(r), "");
  JsonDoc typed = parse_doc(R"({"format": "flatcheck-case"})", LoadLimits{});
  EXPECT_EQ(document_format(typed.root()), "flatcheck-case");
  EXPECT_TRUE(JsonDoc().root().is_null());
}

}  // namespace
}  // namespace flatcheck
