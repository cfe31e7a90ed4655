// The case document's round trip (harness/case_roundtrip.h): generated cases pass it, and a
// writer that is wrong the same way every time (so that save(load(s)) is s) is still caught,
// because the loaded case is compared with the generated one in memory.
#include "harness/case_roundtrip.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/serialize/serialize.h"
#include "generators/generate.h"
#include "harness/oracle.h"

namespace flatcheck {
namespace {

using nlohmann::json;

// Base64 of as many zero bytes: every character but the padding becomes 'A'.
void zero_data(json& tensor) {
  std::string d = tensor.at("data");
  for (char& ch : d)
    if (ch != '=') ch = 'A';
  tensor["data"] = d;
}

// Calls fn on every parameter and buffer entry of a module document, children included.
template <class F>
void each_state(json& m, F&& fn) {
  for (const char* kind : {"params", "buffers"})
    if (m.contains(kind))
      for (auto& [k, v] : m[kind].items()) fn(v);
  if (m.contains("children"))
    for (auto& [k, c] : m["children"].items()) each_state(c, fn);
}

bool has_alias(const json& m) {
  bool found = false;
  json copy = m;
  each_state(copy, [&](json& v) { found |= v.contains("alias"); });
  return found;
}

// Wrong writers, each consistent with itself.
std::string zeroed_state(const Case& c) {
  json j = json::parse(save_case(c));
  each_state(j["module"], [](json& v) {
    if (!v.contains("alias")) zero_data(v);
  });
  return j.dump(1);
}
std::string zeroed_inputs(const Case& c) {
  json j = json::parse(save_case(c));
  for (auto& t : j["inputs"]) zero_data(t);
  return j.dump(1);
}
// Tied tensors written apart: each alias replaced by a copy of the tensor it names.
std::string unshared_state(const Case& c) {
  json j = json::parse(save_case(c));
  std::map<std::string, json> by_fqn;
  std::function<void(json&, const std::string&)> walk = [&](json& m, const std::string& path) {
    for (const char* kind : {"params", "buffers"})
      if (m.contains(kind))
        for (auto& [k, v] : m[kind].items()) {
          std::string fqn = path.empty() ? k : path + "." + k;
          if (v.contains("alias"))
            v = by_fqn.at(v["alias"].get<std::string>());
          else
            by_fqn[fqn] = v;
        }
    if (m.contains("children"))
      for (auto& [k, c] : m["children"].items()) walk(c, path.empty() ? k : path + "." + k);
  };
  walk(j["module"], "");
  return j.dump(1);
}
std::string fewer_calls(const Case& c) {
  json j = json::parse(save_case(c));
  j["config"]["calls"] = 1;
  return j.dump(1);
}
// Not idempotent: every save adds to the note.
std::string growing_note(const Case& c) {
  Case copy = clone_case(c);
  copy.note += "+";
  return save_case(copy);
}

// A campaign writes a finding's case before anything else, its note quoting the failure
// message, which a user's pass can fill with any bytes: the written case must load again.
TEST(CaseRoundtripTest, ANoteQuotingAnyTextIsWrittenSoTheCaseLoadsAgain) {
  Case c = generate_case_for_seed(3);
  const std::vector<std::pair<std::string, std::string>> notes = {
      {"unminimized: \x1b[2Jcleared", "unminimized: \\x1b[2Jcleared"},
      {std::string("a\0b", 3), "a\\x00b"},
      {"csi\xc2\x9b", "csi\\u009b"},
      {"bytes \xff\xfe", "bytes \\xff\\xfe"},
      {"line\nbreak\ttab\r\n", "line\nbreak\ttab\r\n"},
      {"\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9"},
  };
  for (const auto& [note, written] : notes) {
    c.note = note;
    Case d = load_case(save_case(c));
    EXPECT_EQ(d.note, written) << json(written).dump();
  }
  // Too long to load again: cut at a character boundary (2-byte characters, an odd cut), and
  // a long note of controls, whose spelling is four times its length.
  for (const std::string& note : {std::string(), std::string(20000, '\x1b')}) {
    std::string n = note;
    for (int i = 0; n.size() < 100001; ++i) n += "\xc3\xa9";
    c.note = n;
    Case d = load_case(save_case(c));
    EXPECT_LE(d.note.size(), size_t{1} << 16);
    EXPECT_GT(d.note.size(), 60000u);
    EXPECT_EQ(d.note.substr(d.note.size() - 11), " [note cut]");
  }
}

TEST(CaseRoundtripTest, GeneratedCasesComeBackAsTheyWere) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Case c = generate_case_for_seed(seed);
    auto b = case_roundtrip_breach(c);
    EXPECT_FALSE(b) << "seed " << seed << ": " << *b;
  }
}

TEST(CaseRoundtripTest, AWriterWrongTheSameWayEveryTimeIsCaught) {
  int unshared = 0, fewer = 0, zeroed = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Case c = generate_case_for_seed(seed);
    const std::string where = "seed " + std::to_string(seed);
    bool nonzero_input = false;
    for (const Tensor& t : c.inputs)
      for (float f : t.data) nonzero_input |= float_bits(f) != 0;
    if (nonzero_input) {
      auto inputs = case_roundtrip_breach(c, zeroed_inputs);
      ASSERT_TRUE(inputs) << where;
      EXPECT_NE(inputs->find("with other values"), std::string::npos) << where << ": " << *inputs;
      ++zeroed;
    }
    auto note = case_roundtrip_breach(c, growing_note);
    ASSERT_TRUE(note) << where;
    EXPECT_NE(note->find("save(load(s)) differs"), std::string::npos) << where << ": " << *note;
    if (c.config.calls > 1) {
      auto b = case_roundtrip_breach(c, fewer_calls);
      ASSERT_TRUE(b) << where;
      EXPECT_NE(b->find("another config"), std::string::npos) << where << ": " << *b;
      ++fewer;
    }
    if (has_alias(json::parse(save_case(c))["module"])) {
      auto b = case_roundtrip_breach(c, unshared_state);
      ASSERT_TRUE(b) << where;
      EXPECT_NE(b->find("another module tree"), std::string::npos) << where << ": " << *b;
      ++unshared;
    }
  }
  EXPECT_GE(unshared, 3);
  EXPECT_GE(fewer, 3);
  EXPECT_GE(zeroed, 30);
}

TEST(CaseRoundtripTest, ZeroedStateIsCaughtWhereTheStateWasNotZero) {
  int caught = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Case c = generate_case_for_seed(seed);
    json j = json::parse(save_case(c));
    bool nonzero = false;
    each_state(j["module"], [&](json& v) {
      if (v.contains("data"))
        nonzero |= v["data"].get<std::string>().find_first_not_of("A=") != std::string::npos;
    });
    if (!nonzero) continue;
    auto b = case_roundtrip_breach(c, zeroed_state);
    ASSERT_TRUE(b) << "seed " << seed;
    EXPECT_NE(b->find("another module tree"), std::string::npos) << *b;
    ++caught;
  }
  EXPECT_GE(caught, 20);
}

// The oracle round-trips the case document of one case in spelling_every: every case at 1,
// none at 0, a few at 16 (picked by the eager fingerprint, so the same ones every time).
TEST(CaseRoundtripTest, TheOracleChecksTheCasesSpellingEveryPicks) {
  const int n = 64;
  for (int every : {1, 0, 16}) {
    OracleOptions o;
    o.spelling_every = every;
    int checked = 0, again = 0;
    for (uint64_t seed = 1; seed <= n; ++seed) {
      Case c = generate_case_for_seed(seed);
      OracleResult r = check_case(c, o);
      ASSERT_FALSE(r.failure) << "seed " << seed << ": " << r.failure->message;
      checked += r.coverage.case_roundtrips;
      again += check_case(c, o).coverage.case_roundtrips;
    }
    EXPECT_EQ(again, checked) << "every " << every;
    if (every == 1) EXPECT_EQ(checked, n);
    if (every == 0) EXPECT_EQ(checked, 0);
    if (every == 16) {
      EXPECT_GT(checked, 0);
      EXPECT_LT(checked, n / 4);
    }
  }
}

TEST(CaseRoundtripTest, TheFirstDifferingLineIsCounted) {
  EXPECT_EQ(first_differing_line("a\nb\nc", "a\nb\nd"), 3u);
  EXPECT_EQ(first_differing_line("a\nb", "x\nb"), 1u);
  EXPECT_EQ(first_differing_line("a\nb\n", "a\nb\nmore"), 3u);
}

}  // namespace
}  // namespace flatcheck
