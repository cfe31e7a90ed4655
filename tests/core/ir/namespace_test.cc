// Namespace: torch.fx naming (create_name), against a scanning reference and fixed tables.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "core/base/check.h"
#include "core/ir/ir.h"
#include "core/ir/namespace.h"
#include "core/serialize/serialize.h"

namespace flatcheck {
namespace {

// The rules with the upward scan written out, one lookup per number: the reference the indexed
// Namespace must equal on every sequence.
class ScanningNamespace {
 public:
  std::string create_name(const std::string& raw) {
    std::string candidate = sanitize_name(raw);
    std::string base = candidate;
    int64_t num = 0;
    bool has_num = false;
    size_t us = candidate.rfind('_');
    if (us != std::string::npos && us > 0 && us + 1 < candidate.size() &&
        candidate.size() - us - 1 <= 18 &&
        candidate.find_first_not_of("0123456789", us + 1) == std::string::npos) {
      has_num = true;
      base = candidate.substr(0, us);
      num = std::stoll(candidate.substr(us + 1));
    }
    if (!has_num || used_.count(candidate)) {
      num = count_.count(base) ? count_[base] : 0;  // the base's count (PyTorch #177217)
      if (is_reserved_name(candidate)) {
        ++num;
        candidate = base + "_" + std::to_string(num);
      }
    }
    while (used_.count(candidate)) {
      ++num;
      candidate = base + "_" + std::to_string(num);
    }
    used_.insert(candidate);
    count_[base] = num;
    return candidate;
  }

 private:
  std::set<std::string> used_;
  std::map<std::string, int64_t> count_;
};

TEST(NamespaceTest, FirstUseKeepsTheCandidate) {
  Namespace ns;
  EXPECT_EQ(ns.create_name("getitem"), "getitem");
  EXPECT_EQ(ns.create_name("relu"), "relu");
}

TEST(NamespaceTest, CollisionTakesTheNextFreeNumber) {
  Namespace ns;
  EXPECT_EQ(ns.create_name("getitem"), "getitem");
  EXPECT_EQ(ns.create_name("getitem"), "getitem_1");
  EXPECT_EQ(ns.create_name("getitem"), "getitem_2");
}

// A used candidate with a suffix counts up from its base's count, as torch 2.14.1's Graph names
// placeholders "max_2", "max_2", "if", "max_2": max_2, max_3, if_1, max_4 (PyTorch #177217;
// before it, the candidate's own count gave max_2, max_1, if_1, max_3).
TEST(NamespaceTest, AUsedSuffixedCandidateCountsFromItsBase) {
  Namespace ns;
  EXPECT_EQ(ns.create_name("max_2"), "max_2");
  EXPECT_EQ(ns.create_name("max_2"), "max_3");
  EXPECT_EQ(ns.create_name("if"), "if_1");
  EXPECT_EQ(ns.create_name("max_2"), "max_4");
}

// A suffix `_0` is a suffix like any other: `a_0` takes 0 of `a`'s numbers. The expected names
// come from tests/core/naming_table.py's ReferenceNamespace (torch 2.14.1's create_name).
TEST(NamespaceTest, ASuffixZeroIsTakenLikeAnyOther) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> table = {
      {{"a_0", "a_0"}, {"a_0", "a_1"}},
      {{"a_0", "a", "a"}, {"a_0", "a", "a_1"}},
      {{"a", "a_0", "a_0", "a"}, {"a", "a_0", "a_1", "a_2"}},
      {{"a_0", "a_0", "a_0"}, {"a_0", "a_1", "a_2"}},
      {{"x_0", "x_1", "x_0", "x"}, {"x_0", "x_1", "x_2", "x"}},
      {{"a_0", "a_1", "a_0"}, {"a_0", "a_1", "a_2"}},
  };
  for (const auto& [in, want] : table) {
    Namespace ns;
    std::vector<std::string> got;
    for (const auto& c : in) got.push_back(ns.create_name(c));
    EXPECT_EQ(got, want) << in.size() << " candidates from " << in[0];
  }
}

TEST(NamespaceTest, TrailingDigitsAreASuffixThatIsReplacedNotAppended) {
  Namespace ns;
  EXPECT_EQ(ns.create_name("getitem_1"), "getitem_1");
  // A second "getitem_1" becomes getitem_2, never getitem_1_1.
  EXPECT_EQ(ns.create_name("getitem_1"), "getitem_2");
  EXPECT_EQ(ns.create_name("getitem"), "getitem");
  EXPECT_EQ(ns.create_name("getitem"), "getitem_3");
}

TEST(NamespaceTest, FreePreSuffixedNameIsKept) {
  Namespace ns;
  EXPECT_EQ(ns.create_name("add_7"), "add_7");
  EXPECT_EQ(ns.create_name("add"), "add");
  EXPECT_EQ(ns.create_name("add"), "add_8");
}

TEST(NamespaceTest, IllegalCharactersBecomeUnderscores) {
  Namespace ns;
  EXPECT_EQ(ns.create_name("layer.0.weight"), "layer_0_weight");
  EXPECT_EQ(ns.create_name("a-b c"), "a_b_c");
}

TEST(NamespaceTest, LeadingDigitGetsAnUnderscorePrefix) {
  Namespace ns;
  EXPECT_EQ(ns.create_name("0x"), "_0x");
  EXPECT_EQ(ns.create_name(""), "_unnamed");
}

TEST(NamespaceTest, ReservedWordsAreNotHandedOut) {
  Namespace ns;
  EXPECT_EQ(ns.create_name("if"), "if_1");
  EXPECT_EQ(ns.create_name("sum"), "sum_1");  // torch.sum's node
  EXPECT_EQ(ns.create_name("abs"), "abs_1");
  EXPECT_EQ(ns.create_name("input"), "input_1");
  EXPECT_EQ(ns.create_name("torch"), "torch_1");  // torch.fx's custom builtins
  EXPECT_EQ(ns.create_name("sum"), "sum_2");
  // Current torch.fx cannot tell builtins.None from "no object": "None" is handed out.
  EXPECT_EQ(ns.create_name("None"), "None");
}

TEST(NamespaceTest, ARunOfIllegalCharactersBecomesOneUnderscore) {
  Namespace ns;
  EXPECT_EQ(ns.create_name("a..b"), "a_b");
  EXPECT_EQ(ns.create_name("a - b"), "a_b_1");
  EXPECT_EQ(sanitize_name("x__y"), "x__y");  // legal underscores stay
}

TEST(NamespaceTest, NamesFromTargetsAreSnakeCasedAndLoseMagicUnderscores) {
  EXPECT_EQ(target_to_str("__add__"), "add");
  EXPECT_EQ(target_to_str("getItem"), "get_item");
  EXPECT_EQ(target_to_str("ALL_CAPS"), "all_caps");
  Graph g;
  Node* x = g.placeholder("inputX", ValueType::tensor({1}));
  EXPECT_EQ(x->name, "input_x");
  Node* y = g.placeholder("input", ValueType::tensor({1}));
  EXPECT_EQ(y->name, "input_1");
  EXPECT_EQ(g.call_function(OpCode::kSum, {x, int64_t{0}})->name, "sum_1");
  EXPECT_EQ(g.get_attr("layer.Weight")->name, "layer_weight");
}

// tests/core/naming_table.jsonl: 400 sequences whose names come from a transcription of
// torch.fx's _Namespace.create_name (tests/core/naming_table.py), independent of this code.
TEST(NamespaceTest, FollowsTorchFxOnTheNamingTable) {
  std::ifstream in(std::string(FLATCHECK_SOURCE_DIR) + "/tests/core/naming_table.jsonl");
  ASSERT_TRUE(in) << "tests/core/naming_table.jsonl is missing";
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    Json row = Json::parse(line);
    Namespace ns;
    std::vector<std::string> ins = row["in"], outs = row["out"];
    ASSERT_EQ(ins.size(), outs.size());
    for (size_t i = 0; i < ins.size(); ++i)
      ASSERT_EQ(ns.create_name(ins[i]), outs[i])
          << "row " << rows << ", step " << i << ": " << line;
    ++rows;
  }
  EXPECT_GE(rows, 200);
}

TEST(NamespaceTest, IndexedNamesEqualTheScanningReferenceOnRandomSequences) {
  const std::vector<std::string> bases = {"getitem", "add", "sum", "x",    "a_b", "_",
                                          "None",    "if",  "nan", "a..b", "0x",  ""};
  const std::vector<std::string> suffixes = {"", "", "_1", "_2", "_3", "_0", "_01", "_12"};
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&](uint64_t n) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state % n;
  };
  int64_t names = 0;
  for (int seq = 0; seq < 100000; ++seq) {
    Namespace fast;
    ScanningNamespace slow;
    int len = 1 + static_cast<int>(next(12));
    for (int i = 0; i < len; ++i, ++names) {
      std::string c = bases[next(bases.size())] + suffixes[next(suffixes.size())];
      ASSERT_EQ(fast.create_name(c), slow.create_name(c)) << "sequence " << seq << ", step " << i;
    }
  }
  EXPECT_GT(names, 500000);
}

// Copies share their table until one of them writes: after a copy (or an assignment), each
// namespace goes on exactly as the reference copied with it, whichever writes first.
TEST(NamespaceTest, CopiesNameIndependentlyOfEachOther) {
  const std::vector<std::string> candidates = {"getitem", "getitem_1", "add", "add_2", "sum", "x"};
  uint64_t state = 0x2545f4914f6cdd1dull;
  auto next = [&](uint64_t n) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state % n;
  };
  for (int seq = 0; seq < 20000; ++seq) {
    Namespace a, b;
    ScanningNamespace ra, rb;
    for (int i = static_cast<int>(next(6)); i > 0; --i) {
      const std::string& c = candidates[next(candidates.size())];
      ASSERT_EQ(a.create_name(c), ra.create_name(c));
    }
    if (next(2)) {
      b = a;  // an assignment over a namespace with its own table
    } else {
      Namespace copy(a);
      b = std::move(copy);
    }
    rb = ra;
    for (int i = static_cast<int>(next(10)); i > 0; --i) {
      const std::string& c = candidates[next(candidates.size())];
      if (next(2)) {
        std::string name = a.create_name(c);
        ASSERT_EQ(name, ra.create_name(c)) << "sequence " << seq;
        ASSERT_TRUE(a.contains(name));
      } else {
        std::string name = b.create_name(c);
        ASSERT_EQ(name, rb.create_name(c)) << "sequence " << seq;
        ASSERT_TRUE(b.contains(name));
      }
    }
  }
  Namespace one;
  one.create_name("x");
  Namespace two = one;
  two.create_name("y");
  EXPECT_FALSE(one.contains("y"));
  EXPECT_EQ(one.size(), 1u);
  EXPECT_EQ(two.size(), 2u);
  EXPECT_TRUE(one.reserve("y"));  // free in `one`, though `two` holds it
  EXPECT_FALSE(two.reserve("y"));
}

TEST(NamespaceTest, SnakeCaseOfModuleTargets) {
  EXPECT_EQ(snake_case("MyModule"), "my_module");
  EXPECT_EQ(snake_case("relu"), "relu");
  Graph g;
  Node* x = g.placeholder("x", ValueType::tensor({1}));
  EXPECT_EQ(g.call_module("SubNet", {x})->name, "sub_net");
}

TEST(NamespaceTest, ErasedNamesStayReserved) {
  Graph g;
  Node* x = g.placeholder("x", ValueType::tensor({1}));
  Node* r = g.call_function(OpCode::kRelu, {x});
  ASSERT_EQ(r->name, "relu");
  g.erase(r);
  EXPECT_EQ(g.call_function(OpCode::kRelu, {x})->name, "relu_1");
}

// release (used by injected faults only) frees a used name and nothing else: a name never
// handed out is a no-op, and the count of used names follows.
TEST(NamespaceTest, ReleaseFreesAUsedNameOnly) {
  Namespace ns;
  EXPECT_EQ(ns.create_name("a"), "a");
  EXPECT_EQ(ns.create_name("b"), "b");
  ASSERT_EQ(ns.size(), 2u);
  ns.release("a");
  EXPECT_FALSE(ns.contains("a"));
  EXPECT_TRUE(ns.contains("b"));
  EXPECT_EQ(ns.size(), 1u);
  ns.release("never_handed_out");
  ns.release("a");
  EXPECT_EQ(ns.size(), 1u);
  EXPECT_TRUE(ns.reserve("a"));
  EXPECT_EQ(ns.size(), 2u);
}

// Releasing a suffixed name hands it out again at the next collision on its base, and nothing
// else changes: names still used stay taken, a counter below the released number stays where
// it is, and a name with a leading zero ("c_03") is not the number it spells.
TEST(NamespaceTest, AReleasedSuffixIsHandedOutAgainAndOnlyIt) {
  Namespace ns;
  for (const char* want : {"add", "add_1", "add_2", "add_3"})
    EXPECT_EQ(ns.create_name("add"), want);
  ns.release("add_3");
  EXPECT_EQ(ns.create_name("add"), "add_3");
  ns.release("add_1");
  EXPECT_EQ(ns.create_name("add"), "add_1");
  EXPECT_EQ(ns.create_name("add"), "add_4");  // add_2 and add_3 are still used

  EXPECT_EQ(ns.create_name("b"), "b");
  ASSERT_TRUE(ns.reserve("b_5"));
  ns.release("b_5");  // above the counter: the counter stays
  for (const char* want : {"b_1", "b_2", "b_3", "b_4", "b_5", "b_6"})
    EXPECT_EQ(ns.create_name("b"), want);

  for (int i = 0; i <= 10; ++i) ns.create_name("c");  // c, c_1 .. c_10
  ASSERT_TRUE(ns.contains("c_10"));
  ns.release("c_10");
  EXPECT_EQ(ns.create_name("c"), "c_10");
  ASSERT_TRUE(ns.reserve("c_03"));
  ns.release("c_03");  // not c_3, which stays used
  EXPECT_TRUE(ns.contains("c_3"));
  EXPECT_FALSE(ns.contains("c_03"));
  EXPECT_EQ(ns.create_name("c"), "c_11");
  EXPECT_EQ(ns.create_name("c_3"), "c_12");

  // A release on one base keeps every other base's taken suffixes: d_5, taken ahead of d's
  // counter, is still passed over after a release on add.
  ASSERT_TRUE(ns.reserve("d_5"));
  for (const char* want : {"d", "d_1", "d_2", "d_3", "d_4"}) EXPECT_EQ(ns.create_name("d"), want);
  ns.release("add_4");
  EXPECT_EQ(ns.create_name("d"), "d_6");
  EXPECT_EQ(ns.create_name("add"), "add_4");
}

TEST(NamespaceTest, AReservedNameIsUsedAndCountsForLaterNames) {
  Namespace ns;
  for (const char* name : {"x", "p_w", "x_1"}) {
    EXPECT_TRUE(ns.reserve(name)) << name;
    EXPECT_TRUE(ns.contains(name)) << name;
    EXPECT_FALSE(ns.reserve(name)) << name << " twice";
  }
  EXPECT_EQ(ns.create_name("x"), "x_2");
  EXPECT_EQ(ns.create_name("p_w"), "p_w_1");
}

// torch.export's placeholder names (expectations from torch 2.14.1's placeholder_naming_pass,
// by hand from its code: lower(), re.sub("[^a-zA-Z0-9]", "_"), then for a taken name
// "_<count + 1>", each name handed out raising its count as re.match(r"(.*)_(\d+)") splits it;
// the rows marked 2.6 are where torch 2.6, which takes the first free "_<n>", differs).
TEST(NamespaceTest, ExportPlaceholderNamesLowerCaseAndAppendSuffixes) {
  Namespace ns;
  ExportPlaceholderNames names;
  const std::pair<const char*, const char*> kTable[] = {
      {"X", "x"},
      {"x", "x_1"},
      {"x_1", "x_1_1"},
      {"x_1", "x_1_2"},
      {"p_Layer.W", "p_layer_w"},
      {"p_layer.w", "p_layer_w_1"},
      {"b_convBlock.runMean", "b_convblock_runmean"},
      {"p_0.w", "p_0_w"},
      {"p_a-b", "p_a_b"},
      {"ABC9", "abc9"},
      {"p_0.W_2", "p_0_w_2"},  // raises p_0_w to 2
      {"p_0.W", "p_0_w_3"},    // 2.6: p_0_w_1
      {"p_a.1.x", "p_a_1_x"},  // raises p_a to 1 (the last _digit)
      {"p_a", "p_a"},
      {"p_A", "p_a_2"},    // 2.6: p_a_1
      {"q_007", "q_007"},  // raises q to 7 (int("007"))
      {"q", "q"},
      {"Q", "q_8"},                                          // 2.6: q_1
      {"r_99999999999999999999", "r_99999999999999999999"},  // past int64: counted exactly
      {"r", "r"},
      {"R", "r_100000000000000000000"},  // 2.6: r_1
  };
  for (auto [candidate, want] : kTable) {
    std::string got = names.name(ns, candidate);
    EXPECT_EQ(got, want) << candidate;
    ns.reserve(got);
  }
}

TEST(NamespaceTest, HundredThousandGetitemsGetDistinctFxNames) {
  Namespace ns;
  constexpr int kN = 100000;
  for (int i = 0; i < kN; ++i) {
    std::string want = i == 0 ? "getitem" : "getitem_" + std::to_string(i);
    ASSERT_EQ(ns.create_name("getitem"), want) << "at " << i;
  }
  EXPECT_EQ(ns.size(), static_cast<size_t>(kN));
}

}  // namespace
}  // namespace flatcheck
