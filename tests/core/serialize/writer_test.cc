// The DOM-free writer: the canonical layout written out by hand at the width boundary, random
// documents against nlohmann's DOM and dump_canonical, every save against the same reference,
// and the corpus files (written by earlier versions) saved again byte for byte.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <dirent.h>

#include <limits>

#include <stdexcept>

#include "core/passes/passes.h"
#include "core/serialize/serialize.h"
#include "core/serialize/writer.h"
#include "generators/case.h"
#include "generators/rc_gen.h"
#include "tests/support/random_json.h"

namespace flatcheck {
namespace {

// Writes a DOM value through the writer (nlohmann iterates object keys in sorted order).
void write_dom(JsonWriter& w, const Json& j) {
  if (j.is_object()) {
    w.begin_object();
    for (auto it = j.begin(); it != j.end(); ++it) {
      w.key(it.key());
      write_dom(w, *it);
    }
    w.end();
  } else if (j.is_array()) {
    w.begin_array();
    for (const auto& e : j) write_dom(w, e);
    w.end();
  } else if (j.is_string()) {
    w.value(j.get<std::string>());
  } else if (j.is_boolean()) {
    w.value(j.get<bool>());
  } else if (j.is_null()) {
    w.value(nullptr);
  } else if (j.is_number_unsigned()) {
    w.value(j.get<uint64_t>());
  } else if (j.is_number_integer()) {
    w.value(j.get<int64_t>());
  } else {
    w.value_double(j.get<double>());
  }
}

std::string one_string_array(size_t n) {
  JsonWriter w;
  w.begin_array();
  w.value(std::string(n, 'a'));
  w.end();
  return w.take();
}

TEST(JsonWriterTest, AContainerStaysOnOneLineUpToOneHundredCharacters) {
  // ["aaa…"] is n + 4 characters long.
  EXPECT_EQ(one_string_array(96), "[\"" + std::string(96, 'a') + "\"]\n");
  EXPECT_EQ(one_string_array(97), "[\n \"" + std::string(97, 'a') + "\"\n]\n");
}

// Every one-line length from 90 to 110, with 1 to 4 items, alone and one and two levels deep.
TEST(JsonWriterTest, TheWidthBoundaryMatchesTheDomRenderer) {
  for (int n = 1; n <= 4; ++n)
    for (int target = 90; target <= 110; ++target) {
      Json a = Json::array();
      int left = target - 4 * n;  // one-line length: sum(len + 2) + 2 + 2(n - 1)
      for (int i = 0; i < n; ++i) {
        int len = i + 1 < n ? left / (n - i) : left;
        a.push_back(std::string(static_cast<size_t>(len), 'b'));
        left -= len;
      }
      for (const Json& doc : {a, Json{{"k", a}}, Json{{"k", Json{{"q", a}, {"r", 1}}}}}) {
        JsonWriter w;
        write_dom(w, doc);
        EXPECT_EQ(w.take(), dump_canonical(doc)) << "n " << n << " length " << target;
      }
    }
}

// JSON has no infinity or NaN: a non-finite double is written as null, as nlohmann writes it.
TEST(JsonWriterTest, ANonFiniteDoubleIsWrittenAsNull) {
  JsonWriter w;
  w.begin_array();
  w.value_double(std::numeric_limits<double>::infinity());
  w.value_double(-std::numeric_limits<double>::infinity());
  w.value_double(std::numeric_limits<double>::quiet_NaN());
  w.value_double(1.5);
  w.end();
  EXPECT_EQ(w.take(), "[null, null, null, 1.5]\n");
}

TEST(JsonWriterTest, IndentsOneSpaceALevelAndKeepsShortChildrenOnOneLine) {
  JsonWriter w;
  w.begin_object();
  w.key("a");
  w.begin_object();
  w.key("b");
  w.value(std::string(120, 'x'));
  w.end();
  w.key("k");
  w.begin_array();
  w.value(1);
  w.value(-2);
  w.value(true);
  w.value_double(0.5);
  w.value_double(3.0);
  w.end();
  w.key("z");
  w.begin_object();
  w.end();
  w.end();
  EXPECT_EQ(w.take(), "{\n \"a\": {\n  \"b\": \"" + std::string(120, 'x') +
                          "\"\n },\n \"k\": [1, -2, true, 0.5, 3.0],\n \"z\": {}\n}\n");
}

TEST(JsonWriterTest, CompactFormHasNoSpaces) {
  JsonWriter w(/*compact=*/true);
  w.begin_object();
  w.key("a");
  w.begin_array();
  w.value(std::string(120, 'x'));
  w.value("q\"\n");
  w.end();
  w.key("b");
  w.value(uint64_t{18446744073709551615u});
  w.end();
  EXPECT_EQ(w.take(), "{\"a\":[\"" + std::string(120, 'x') +
                          "\",\"q\\\"\\n\"],\"b\":18446744073709551615}\n");
}

TEST(JsonWriterTest, KeysOutOfOrderAndUnfinishedDocumentsAreRefused) {
  JsonWriter w;
  w.begin_object();
  w.key("b");
  w.value(1);
  EXPECT_THROW(w.key("a"), std::logic_error);
  EXPECT_THROW(w.key("b"), std::logic_error);
  EXPECT_THROW(w.value(2), std::logic_error);  // a member without a key
  EXPECT_THROW(w.take(), std::logic_error);
}

RC_GTEST_PROP(JsonWriterProperty, WritesWhatTheDomRendererWrites, ()) {
  Json j = random_json(4);
  JsonWriter canonical, compact(/*compact=*/true);
  write_dom(canonical, j);
  write_dom(compact, j);
  RC_ASSERT(canonical.take() == dump_canonical(j));
  RC_ASSERT(compact.take() == j.dump() + "\n");
}

// Every save of generated modules, programs (with engines) and cases reads back through
// nlohmann's DOM to the same text: the layout, the key order and the numbers are canonical.
RC_GTEST_PROP(JsonWriterProperty, SavesAreTheCanonicalRenderingOfTheirDocument, (const Recipe& r)) {
  Case c = build_recipe(r);
  std::vector<std::string> texts{save_module(*c.module), save_case(c)};
  Program ep = export_program(*c.module);
  PartitionOptions po = partition_options(c.config);
  std::vector<std::pair<std::string, std::string>> compact_pairs{
      {save_module(*c.module, /*compact=*/true), texts[0]}};
  for (const Program& p : {ep, partition(ep, po), flatten(partition(ep, po))}) {
    texts.push_back(save_program(p));
    compact_pairs.emplace_back(save_program(p, /*compact=*/true), texts.back());
  }
  for (const std::string& s : texts) RC_ASSERT(dump_canonical(Json::parse(s)) == s);
  // The compact saves are the same documents on one line.
  for (const auto& [small, full] : compact_pairs) {
    RC_ASSERT(small != full);
    RC_ASSERT(Json::parse(small).dump() + "\n" == small);
    RC_ASSERT(Json::parse(small) == Json::parse(full));
  }
  std::string compact = save_case(c, /*compact=*/true);
  RC_ASSERT(Json::parse(compact).dump() + "\n" == compact);
  RC_ASSERT(Json::parse(compact) == Json::parse(save_case(c)));
}

TEST(JsonWriterTest, CorpusCasesSaveByteForByte) {
  std::string dir = std::string(FLATCHECK_SOURCE_DIR) + "/corpus/regression";
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr) << dir;
  int checked = 0;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() < 5 || name.substr(name.size() - 5) != ".json") continue;
    std::string text = read_file(dir + "/" + name);
    EXPECT_EQ(save_case(load_case(text)), text) << name;
    ++checked;
  }
  closedir(d);
  EXPECT_GE(checked, 20);
}

}  // namespace
}  // namespace flatcheck
