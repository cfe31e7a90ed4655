// The DOM-free writer: the canonical layout written out by hand at the width boundary, random
// documents against nlohmann's DOM and dump_canonical, every save against the same reference,
// and the corpus files (written by earlier versions) saved again byte for byte.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <dirent.h>

#include <functional>
#include <set>
#include <stdexcept>

#include "core/ir/engine.h"
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

Digest token_digest(const Json& j) {
  JsonWriter w(JsonWriter::DigestOnly{});
  write_dom(w, j);
  return w.take_digest();
}

// `j` with one value somewhere inside it replaced by a random scalar or small container.
Json with_one_value_replaced(Json j) {
  Json* at = &j;
  while ((at->is_array() || at->is_object()) && !at->empty() && *rc::gen::inRange(0, 3) != 0) {
    auto i = *rc::gen::inRange<size_t>(0, at->size());
    auto it = at->begin();
    std::advance(it, static_cast<std::ptrdiff_t>(i));
    at = &*it;
  }
  *at = random_json(1);
  return j;
}

// A DigestOnly writer formats nothing, yet its digest follows the text: two documents get the
// same digest exactly when nlohmann writes them the same (an int64 and a uint64 of one value
// are one number; 1 and 1.0 are two). Documents reach past the 4 KiB spill.
RC_GTEST_PROP(JsonWriterProperty, DigestOnlyWritersTellDocumentsApartAsTheirTextsDo, ()) {
  Json j = random_json(4);
  if (*rc::gen::inRange(0, 3) == 0)
    j = Json::array({j, std::string(*rc::gen::inRange(0, 9000), 'y')});
  Digest d = token_digest(j);
  RC_ASSERT(token_digest(Json::parse(j.dump())) == d);  // the same text read back
  Json other = with_one_value_replaced(j);
  RC_ASSERT((token_digest(other) == d) == (other.dump() == j.dump()));
  JsonWriter w(JsonWriter::DigestOnly{});  // a writer is empty again after take_digest
  write_dom(w, Json::array({1}));
  (void)w.take_digest();
  write_dom(w, j);
  RC_ASSERT(w.take_digest() == d);
}

// Tokens are delimited: a key and a string of the same bytes, one string or two, a string just
// short of and past the long length form all digest differently.
TEST(JsonWriterTest, DigestOnlyTokensAreDelimited) {
  // Strings hold the tag bytes themselves ('s' for a string): without lengths, the first two
  // and the next two would be the same bytes.
  std::vector<Json> docs{Json::parse(R"({"as":"c"})"),
                         Json::parse(R"({"a":"sc"})"),
                         Json::parse(R"(["as","c"])"),
                         Json::parse(R"(["a","sc"])"),
                         Json::parse(R"(["abc"])"),
                         Json::parse(R"([["abc"]])"),
                         Json::parse(R"([[],"abc"])"),
                         Json::parse(R"([-1])"),
                         Json::parse(R"([18446744073709551615])"),
                         Json::parse(R"([1.0])"),
                         Json::parse(R"([1])"),
                         Json::parse(R"([true])"),
                         Json::parse(R"([null])"),
                         Json::array({std::string(254, 'x')}),
                         Json::array({std::string(255, 'x')}),
                         Json::array({std::string(256, 'x')})};
  std::set<std::pair<uint64_t, uint64_t>> seen;
  for (const Json& j : docs) {
    Digest d = token_digest(j);
    EXPECT_TRUE(seen.emplace(d.lo, d.hi).second) << j.dump();
  }
  // Raw bytes are a token kind of their own (text writers write their base64).
  JsonWriter text;
  text.begin_array();
  text.value_bytes("raw");
  text.end();
  EXPECT_EQ(text.take(), "[\"cmF3\"]\n");
  for (std::string_view raw : std::vector<std::string_view>{"", "raw", {"raw\0", 4}, "cmF3"}) {
    JsonWriter bytes(JsonWriter::DigestOnly{});
    bytes.begin_array();
    bytes.value_bytes(raw);
    bytes.end();
    Digest d = bytes.take_digest();
    EXPECT_TRUE(seen.emplace(d.lo, d.hi).second) << "bytes of length " << raw.size();
  }
}

TEST(JsonWriterTest, DigestsTellApartEveryOneBitChangeAndEveryLength) {
  std::string base(100, '\0');
  for (size_t i = 0; i < base.size(); ++i) base[i] = static_cast<char>(i * 37 + 11);
  std::set<std::pair<uint64_t, uint64_t>> seen;
  auto add = [&](std::string_view s) {
    Digest d = digest_bytes(s);
    return seen.emplace(d.lo, d.hi).second;
  };
  EXPECT_TRUE(add(base));
  for (size_t bit = 0; bit < base.size() * 8; ++bit) {
    std::string flipped = base;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    EXPECT_TRUE(add(flipped)) << "bit " << bit;
  }
  // Zero bytes pad the last word, so the length must count: "", "\0", "\0\0", ... differ.
  for (size_t n = 0; n <= 17; ++n) EXPECT_TRUE(add(std::string(n, '\0'))) << n << " zero bytes";
  JsonWriter w(JsonWriter::DigestOnly{});
  w.begin_array();
  w.end();
  EXPECT_THROW(w.take(), std::logic_error);
  EXPECT_EQ(w.take_digest(), token_digest(Json::array()));
  EXPECT_THROW(w.take_digest(), std::logic_error);  // empty again
  w.begin_object();
  EXPECT_THROW(w.value(1), std::logic_error);  // misuse is caught as in text writers
  EXPECT_THROW(w.take_digest(), std::logic_error);
  JsonWriter text;
  text.value(1);
  EXPECT_THROW(text.take_digest(), std::logic_error);
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

// Fingerprints follow the saved file. A clone, and a save read back, have the fingerprint of
// the original. Changing any one thing a save writes changes both the save and the fingerprint:
// state data, a node name, a module type, the signature, and fields of an engine (a save
// writes those inside the engine's base64 blob; a fingerprint digests the engine's document).
RC_GTEST_PROP(FingerprintProperty, FingerprintsChangeWhenTheSaveDoes, (const Recipe& r)) {
  Case c = build_recipe(r);
  Digest module_print = fingerprint_module(*c.module);
  RC_ASSERT(fingerprint_module(*load_module(save_module(*c.module))) == module_print);
  RC_ASSERT(fingerprint_module(*clone_module(*c.module, /*share_state=*/false)) == module_print);
  auto renamed_module = clone_module(*c.module, /*share_state=*/false);
  renamed_module->type += "X";
  RC_ASSERT(fingerprint_module(*renamed_module) != module_print);

  auto pick = [](size_t n) { return *rc::gen::inRange<size_t>(0, n); };
  // Changes a copy of one engine of the root module; false when there is none to change.
  auto in_engine = [&](const std::function<bool(Engine&)>& change) {
    return [&pick, change](Program& p) {
      auto& engines = p.root->engines;
      if (engines.empty()) return false;
      auto it = std::next(engines.begin(), static_cast<std::ptrdiff_t>(pick(engines.size())));
      auto e = std::make_shared<Engine>(*it->second);  // engines are shared with the original
      if (!change(*e)) return false;
      it->second = e;
      return true;
    };
  };
  auto flip_a_bit = [&](Tensor& t) {
    if (t.data.empty()) return false;
    float& f = t.data[pick(t.data.size())];
    f = bits_float(float_bits(f) ^ (1u << pick(32)));
    return true;
  };
  std::vector<std::pair<std::string, std::function<bool(Program&)>>> changes{
      {"state data",
       [&](Program& p) {
         if (p.state.empty()) return false;
         return flip_a_bit(*std::next(p.state.begin(), pick(p.state.size()))->second);
       }},
      {"node name",
       [&](Program& p) {
         auto nodes = p.root->graph.nodes();
         nodes[pick(nodes.size())]->name += "_x";
         return true;
       }},
      {"module type", [](Program& p) { return (p.root->type += "X", true); }},
      {"signature",
       [](Program& p) {
         return !p.sig.outputs.empty() && (p.sig.outputs.back().name += "x", true);
       }},
      {"engine arena", in_engine([](Engine& e) { return (e.arena_floats += 1, true); })},
      {"engine slot offset", in_engine([&](Engine& e) {
         return !e.slots.empty() && (e.slots[pick(e.slots.size())].offset += 1, true);
       })},
      {"engine op origin", in_engine([&](Engine& e) {
         return !e.ops.empty() && (e.ops[pick(e.ops.size())].origin += "x", true);
       })},
      {"engine binding", in_engine([&](Engine& e) {
         return !e.inputs.empty() && (e.inputs[pick(e.inputs.size())].position += 1, true);
       })},
      {"engine constant", in_engine([&](Engine& e) {
         return !e.constants.empty() && flip_a_bit(e.constants[pick(e.constants.size())].second);
       })},
  };
  Program ep = export_program(*c.module);
  for (const Program& p : {ep, flatten(partition(ep, partition_options(c.config)))}) {
    Digest print = fingerprint_program(p);
    std::string saved = save_program(p);
    RC_ASSERT(fingerprint_program(clone_program(p)) == print);
    RC_ASSERT(fingerprint_program(load_program(saved)) == print);
    for (const auto& [what, change] : changes) {
      Program changed = clone_program(p);
      bool applied = change(changed);
      if (what.rfind("engine", 0) == 0 && what != "engine binding" && what != "engine constant")
        RC_ASSERT(applied == !p.root->engines.empty());
      if (!applied) continue;
      RC_ASSERT(save_program(changed) != saved);
      RC_ASSERT(fingerprint_program(changed) != print);
    }
    RC_ASSERT(fingerprint_program(p) == print);  // the changes were made to copies
  }
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
