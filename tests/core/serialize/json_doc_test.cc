// The strict reader's tape (core/serialize/json_doc.h): every value, key order and number read
// back as nlohmann's DOM reads the same text; duplicate keys found in small objects (a scan)
// and large ones (a hash set); errors with the JSON path; JsonRef refusing questions of the
// wrong kind.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <stdexcept>
#include <string>

#include "core/base/check.h"
#include "core/serialize/json_doc.h"
#include "core/serialize/serialize.h"
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
  } else if (j.is_number_unsigned()) {
    RC_ASSERT(r.uint64() == j.get<uint64_t>());
  } else if (j.is_number_integer()) {
    RC_ASSERT(r.int64() == j.get<int64_t>());
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
