// Every JSON spelling (harness/spelling.h): documents re-spelled another valid way load to the
// same thing; the canonical layout checker, written from docs/format.md alone, accepts every
// document the writer saves and names each kind of breach; and the oracle catches, as property
// `spelling`, a reader that misreads a spelling the writer never produces and a writer that
// breaks the layout consistently (so that save(load(s)) == s still holds).
#include "harness/spelling.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/base/faults.h"
#include "core/passes/passes.h"
#include "core/serialize/serialize.h"
#include "generators/case.h"
#include "generators/generate.h"
#include "harness/campaign.h"
#include "harness/oracle.h"
#include "tests/harness/cli_run.h"

namespace flatcheck {
namespace {

// The programs of every program stage of a case, saved.
std::vector<std::string> saved_programs(const Case& c) {
  Program e = export_program(*c.module);
  PartitionOptions o;
  o.fallback_ops = c.config.fallback_ops;
  o.min_block_size = c.config.min_block_size;
  Program p = partition(e, o);
  Program f = flatten(p);
  return {save_program(e), save_program(p), save_program(f)};
}

TEST(SpellingTest, RespelledDocumentsLoadToTheSameThing) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Case c = generate_case_for_seed(seed);
    for (const std::string& doc : saved_programs(c))
      for (uint64_t k = 0; k < 3; ++k) {
        Respelled r = respell(doc, seed * 7 + k);
        EXPECT_EQ(save_program(load_program(r.text)), doc) << "case " << seed << ": " << r.how;
      }
    std::string module = save_module(*c.module);
    Respelled m = respell(module, seed);
    EXPECT_EQ(save_module(*load_module(m.text)), module) << "case " << seed << ": " << m.how;
    std::string text = save_case(c);
    Respelled cs = respell(text, seed + 1000);
    EXPECT_EQ(save_case(load_case(cs.text)), text) << "case " << seed << ": " << cs.how;
  }
}

// Each of the respeller's switches is used (and each changes the text): a switch it ignored
// would leave its spelling untested.
TEST(SpellingTest, EverySpellingIsProduced) {
  std::string doc =
      "{\"a\": [0, 0.5, -0.0, 1e-07, 123456789.0, -3], \"b/c\": \"x\\u0001y\", \"z\": 1}\n";
  std::map<std::string, int> seen;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Respelled r = respell(doc, seed);
    EXPECT_EQ(nlohmann::json::parse(r.text), nlohmann::json::parse(doc)) << r.how;
    const std::string& t = r.text;
    seen["compact"] += t.find('\n') == t.size() - 1 && t.find(' ') == std::string::npos;
    seen["indented"] += t.find("\n  \"") != std::string::npos;
    seen["tab or CR"] += t.find_first_of("\t\r") != std::string::npos;
    seen["keys shuffled"] += t.find("\"z\"") < t.find("\"a\"");
    seen["E"] += t.find('E') != std::string::npos;
    seen["e+"] += t.find("e+") != std::string::npos || t.find("E+") != std::string::npos;
    seen["trailing zeros"] +=
        t.find("00e") != std::string::npos || t.find("500") != std::string::npos;
    seen["-0 integer"] += t.find("-0,") != std::string::npos || t.find("-0]") != std::string::npos;
    size_t escapes = 0;
    for (size_t at = t.find("\\u"); at != std::string::npos; at = t.find("\\u", at + 1)) ++escapes;
    seen["\\u escape"] += escapes > 1;  // more than the one \u0001 needs
    seen["\\/"] += t.find("\\/") != std::string::npos;
    EXPECT_NE(t.find("-0."), std::string::npos) << "-0.0 must stay negative: " << t;
  }
  for (const char* what : {"compact", "indented", "tab or CR", "keys shuffled", "E", "e+",
                           "trailing zeros", "-0 integer", "\\u escape", "\\/"})
    EXPECT_GT(seen[what], 0) << what;
}

TEST(SpellingTest, EngineBlobsAreReEncodedWithTheirChecksum) {
  Case c = generate_case_for_seed(3);
  std::string doc;
  for (uint64_t seed = 1; doc.find("\"blob\"") == std::string::npos; ++seed) {
    ASSERT_LT(seed, 200u) << "no generated case with an engine";
    doc = saved_programs(generate_case_for_seed(seed))[1];
  }
  int changed = 0;
  for (uint64_t k = 0; k < 10; ++k) {
    Respelled r = respell(doc, k);
    nlohmann::json a = nlohmann::json::parse(doc), b = nlohmann::json::parse(r.text);
    // The blobs differ (re-spelled inside) while the program loads the same.
    changed += a.dump() != b.dump();
    EXPECT_EQ(save_program(load_program(r.text)), doc) << r.how;
  }
  EXPECT_GT(changed, 0);
}

std::vector<std::string> corpus_documents() {
  std::vector<std::string> docs;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(std::string(FLATCHECK_SOURCE_DIR) + "/corpus"))
    if (e.path().extension() == ".json" &&
        e.path().string().find("/fuzz-seeds/") == std::string::npos) {
      std::ifstream in(e.path());
      std::stringstream ss;
      ss << in.rdbuf();
      docs.push_back(ss.str());
    }
  return docs;
}

TEST(SpellingTest, TheWritersDocumentsKeepTheCanonicalLayout) {
  std::vector<std::string> docs = corpus_documents();
  ASSERT_GT(docs.size(), 20u);
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Case c = generate_case_for_seed(seed);
    for (std::string& d : saved_programs(c)) docs.push_back(std::move(d));
    docs.push_back(save_module(*c.module));
    docs.push_back(save_case(c));
  }
  size_t engines = 0;
  for (size_t i = 0; i < docs.size(); ++i) {
    auto b = canonical_layout_breach(docs[i]);
    EXPECT_FALSE(b) << "document " << i << ": " << *b << "\n" << docs[i].substr(0, 400);
    // The engine documents inside the blobs too.
    nlohmann::json j = nlohmann::json::parse(docs[i]);
    std::vector<const nlohmann::json*> stack{&j};
    while (!stack.empty()) {
      const nlohmann::json* v = stack.back();
      stack.pop_back();
      if (v->is_object() && v->contains("blob") && (*v)["blob"].is_string()) {
        std::string inner = base64_decode((*v)["blob"].get<std::string>(), JsonPath("/blob"));
        auto eb = canonical_layout_breach(inner);
        EXPECT_FALSE(eb) << "an engine of document " << i << ": " << *eb;
        ++engines;
      }
      if (v->is_structured())
        for (const auto& x : *v) stack.push_back(&x);
    }
  }
  EXPECT_GT(engines, 10u);
}

// The width rule at its edge (a one-line form of 99, 100, 101 and 102 characters), for a
// container on its own and inside another, of one long item or of many short ones: the one
// layout the rule gives is accepted and the other refused.
TEST(SpellingTest, TheLayoutRuleSplitsAContainerJustPastOneHundredCharacters) {
  for (size_t width = 99; width <= 102; ++width) {
    SCOPED_TRACE(width);
    std::string s = "\"" + std::string(width - 4, 'x') + "\"";  // ["xx..x"] is `width` long
    bool fits = width <= 100;
    std::string one = "[" + s + "]", split = "[\n " + s + "\n]";
    EXPECT_FALSE(canonical_layout_breach((fits ? one : split) + "\n"));
    EXPECT_TRUE(canonical_layout_breach((fits ? split : one) + "\n"));
    // Inside an object, whose own one-line form is longer still: it is split in any case.
    std::string inner_split = "[\n  " + s + "\n ]";
    EXPECT_FALSE(canonical_layout_breach("{\n \"k\": " + (fits ? one : inner_split) + "\n}\n"));
    EXPECT_TRUE(canonical_layout_breach("{\n \"k\": " + (fits ? inner_split : one) + "\n}\n"));
  }
  for (size_t items : {33, 34}) {  // [1, 1, ...]: 3 * items characters (99, 102)
    std::string one = "[", split = "[";
    for (size_t i = 0; i < items; ++i) {
      one += i ? ", 1" : "1";
      split += i ? ",\n 1" : "\n 1";
    }
    one += "]";
    split += "\n]";
    EXPECT_FALSE(canonical_layout_breach((items == 33 ? one : split) + "\n")) << items;
    EXPECT_TRUE(canonical_layout_breach((items == 33 ? split : one) + "\n")) << items;
  }
}

TEST(SpellingTest, LayoutBreachesAreNamed) {
  EXPECT_FALSE(canonical_layout_breach("{\"a\": 1.5, \"b\": [1, 2], \"c\": {}}\n"));
  EXPECT_FALSE(canonical_layout_breach("{\"x\": [1e-07, 100000.0, 0.0001, -0.0, 1e+16]}\n"));
  std::string long_array = "[" + std::string(60, '1') + ", " + std::string(60, '2') + "]";
  EXPECT_FALSE(canonical_layout_breach("{\n \"k\": [\n  " + std::string(60, '1') + ",\n  " +
                                       std::string(60, '2') + "\n ]\n}\n"));
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"{\"b\": 1, \"a\": 2}\n", "byte order"},
      {"{\"a\": 1}", "layout rule"},                     // no trailing newline
      {"{\"a\":1}\n", "layout rule"},                    // separator
      {"{\n \"a\": 1\n}\n", "layout rule"},              // short container split
      {"{\"k\": " + long_array + "}\n", "layout rule"},  // long container on one line
      {"{\n  \"k\": [\n   " + std::string(60, '1') + ",\n   " + std::string(60, '2') + "\n  ]\n}\n",
       "layout rule"},  // two spaces a level
      {"{\"a\": 1.50}\n", "float"},
      {"{\"a\": 1e5}\n", "float"},
      {"{\"a\": 100000}\n", ""},  // an integer: fine
      {"{\"a\": 0.000001}\n", "float"},
      {"{\"a\": 1E-07}\n", "float"},
      {"{\"a\": -0}\n", "integer"},
      {"{\"a\": \"\\u0041\"}\n", "\\u0041"},
      {"{\"a\": \"\\/\"}\n", "escape"},
      {"{\"a\": \"\\u001F\"}\n", "\\u001F"},
  };
  for (const auto& [text, what] : bad) {
    auto b = canonical_layout_breach(text);
    if (what.empty()) {
      EXPECT_FALSE(b) << text << ": " << *b;
      continue;
    }
    ASSERT_TRUE(b) << text;
    EXPECT_NE(b->find(what), std::string::npos) << text << ": " << *b;
  }
}

// The reader perturbed (the fault json-exponent-case: `5E-1` reads as 5) is invisible to
// every path, whose documents the writer spells with a lower-case `e` or none; the re-spelling
// check sees it, and only when it runs (spelling_every 0 switches it off).
TEST(SpellingTest, AReaderThatMisreadsASpellingIsCaught) {
  ScopedFault f(Fault::kJsonExponentCase);
  std::map<std::string, int> by_property, off;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    Case c = generate_case_for_seed(case_seed(1, static_cast<int64_t>(seed)));
    OracleResult r = check_case(c);
    if (r.failure) ++by_property[r.failure->property];
    OracleOptions never;
    never.spelling_every = 0;
    OracleResult n = check_case(c, never);
    if (n.failure) ++off[n.failure->property];
  }
  EXPECT_GT(by_property["spelling"], 0);
  EXPECT_EQ(by_property.size(), 1u) << "only the spelling check sees it";
  EXPECT_TRUE(off.empty()) << off.begin()->first;
}

// A spelling finding shrinks to a small case: its failure needs only the state and inputs a
// document spells, and the chains of concat and split before it (no argument of a node's own
// type to stand in for it) are dropped for an earlier value of that type. The findings of
// seeds 2 and 3 stopped at 28, 14, 3 and 95 (of 108) nodes before that (now 18, 8, 3 and 39).
TEST(SpellingTest, ASpellingFindingShrinks) {
  ScopedFault f(Fault::kJsonExponentCase);
  for (uint64_t seed : {2, 3}) {
    CampaignOptions o;
    o.seed = seed;
    o.cases = 300;
    o.out_dir = "";
    CampaignResult r = run_campaign(o);
    ASSERT_FALSE(r.findings.empty()) << "seed " << seed;
    for (const Finding& found : r.findings) {
      EXPECT_EQ(found.failure.property, "spelling") << found.failure.message;
      EXPECT_LE(found.minimized_nodes, 48u)
          << "seed " << seed << ": " << found.original_nodes << " nodes at first";
    }
  }
}

// A writer that breaks the layout the same way every time (two spaces a level) keeps
// save(load(s)) == s; the layout checker sees it.
TEST(SpellingTest, AWriterThatBreaksTheLayoutConsistentlyIsCaught) {
  OracleOptions o;
  o.stages[Stage::kReloaded] = [](const Artifact& in, const PipelineConfig&) {
    Artifact a;
    a.stage = Stage::kReloaded;
    a.saved = nlohmann::json::parse(save_program(*in.program)).dump(2) + "\n";
    a.program = load_program(a.saved);
    a.resaved = nlohmann::json::parse(save_program(*a.program)).dump(2) + "\n";
    return a;
  };
  OracleResult r = check_case(generate_case_for_seed(5), o);
  ASSERT_TRUE(r.failure);
  EXPECT_EQ(r.failure->signature(), "spelling:reloaded:-") << r.failure->message;
  EXPECT_NE(r.failure->message.find("canonical layout"), std::string::npos) << r.failure->message;
  o.spelling_every = 0;
  EXPECT_FALSE(check_case(generate_case_for_seed(5), o).failure);
}

// fuzz --spelling-every: 0 never re-spells (the reader fault goes unseen), 1 every case.
TEST(SpellingTest, FuzzSpellingEveryIsRead) {
  CliRun never =
      run_cli("fuzz --cases 60 --out '' --quiet --inject json-exponent-case --spelling-every 0");
  EXPECT_EQ(never.code, 0) << never.out;
  CliRun every = run_cli(
      "fuzz --cases 60 --out '' --quiet --inject json-exponent-case --spelling-every 1 "
      "--no-minimize");  // minimizing is ASpellingFindingShrinks' check
  EXPECT_EQ(every.code, 1) << every.out;
  EXPECT_NE(every.out.find("spelling:"), std::string::npos) << every.out;
  CliRun bad = run_cli("fuzz --cases 1 --out '' --spelling-every -1");
  EXPECT_EQ(bad.code, 2) << bad.out;
}

}  // namespace
}  // namespace flatcheck
