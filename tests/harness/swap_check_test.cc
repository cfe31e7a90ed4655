// The swap and types properties (harness/swap_check.h, harness/type_check.h): the variant API
// driven by generated cases against the same edit of the eager module, and the core's type
// inference against the generator's own derivation. Each is shown to catch a planted fault and
// to pass the real code; each option that selects them is shown to be read.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/base/faults.h"
#include "core/passes/passes.h"
#include "generators/generate.h"
#include "harness/minimize.h"
#include "harness/oracle.h"
#include "harness/swap_check.h"

namespace flatcheck {
namespace {

// Failing cases by property over the first `n` seeds, with `f` injected (kNone: none).
std::map<std::string, int> properties(Fault f, int n, const OracleOptions& o = {}) {
  std::map<std::string, int> out;
  ScopedFault scoped(f);
  for (int seed = 0; seed < n; ++seed) {
    Case c;
    {
      ScopedFaultSuppression clean;  // the case is built by the real code
      c = generate_case_for_seed(static_cast<uint64_t>(seed));
    }
    OracleResult r = check_case(c, o);
    if (r.failure) ++out[r.failure->kind()];
  }
  return out;
}

TEST(SwapTest, PlantedFaultsInTheVariantApiAreCaughtAndTheRealOnePasses) {
  EXPECT_EQ(properties(Fault::kNone, 300), (std::map<std::string, int>{}));
  for (Fault f : {Fault::kVariantPrefixMatch, Fault::kSwapFirstVariantOnly}) {
    auto found = properties(f, 300);
    EXPECT_GT(found["swap:unflattened:-"], 0) << fault_info(f).name;
  }
}

TEST(SwapTest, TheSwapOptionsAreRead) {
  OracleOptions off;
  off.swap = false;
  EXPECT_EQ(properties(Fault::kSwapFirstVariantOnly, 150, off)["swap:unflattened:-"], 0);
  // Every candidate finds at least what one picked candidate finds, and more somewhere.
  OracleOptions one;
  one.swap_all = false;
  int all = properties(Fault::kVariantPrefixMatch, 300)["swap:unflattened:-"];
  int picked = properties(Fault::kVariantPrefixMatch, 300, one)["swap:unflattened:-"];
  EXPECT_GT(all, picked);
}

// Shrinking a finding of another property leaves the swap check out; a swap finding keeps it.
TEST(SwapTest, ShrinkingKeepsTheSwapCheckOnlyForSwapFindings) {
  Failure swap{"swap", "unflattened", "-", "", "", ""};
  Failure other{"mismatch", "flattened", "add", "", "", ""};
  EXPECT_TRUE(shrink_oracle(OracleOptions{}, swap).swap);
  EXPECT_FALSE(shrink_oracle(OracleOptions{}, other).swap);
  OracleOptions off;
  off.swap = false;
  EXPECT_FALSE(shrink_oracle(off, swap).swap);
  // A swap finding still shrinks: the planted fault's repro is small.
  ScopedFault f(Fault::kSwapFirstVariantOnly);
  for (int seed = 0; seed < 300; ++seed) {
    Case c;
    {
      ScopedFaultSuppression clean;
      c = generate_case_for_seed(static_cast<uint64_t>(seed));
    }
    OracleResult r = check_case(c);
    if (!r.failure) continue;
    ASSERT_EQ(r.failure->property, "swap");
    MinimizeResult m = minimize(c, *r.failure);
    EXPECT_EQ(m.failure.kind(), r.failure->kind());
    EXPECT_LT(case_size(m.reduced), case_size(c));
    return;
  }
  FAIL() << "no swap finding in 300 cases";
}

TEST(SwapTest, ASwapNeedsAPreservedSignatureAndUnsharedState) {
  // root: x -> a(x) (relu) -> b(y) (neg, reading b's buffer); b shares its weight with root.
  auto a = std::make_shared<Module>();
  a->type = "A";
  {
    Graph& g = a->graph;
    Node* x = g.placeholder("x", ValueType::tensor({2}));
    g.output({g.call_function(OpCode::kRelu, {x})});
  }
  auto b = std::make_shared<Module>();
  b->type = "B";
  auto w = std::make_shared<Tensor>(Tensor({2}, {1, 2}));
  b->params["w"] = w;
  {
    Graph& g = b->graph;
    Node* x = g.placeholder("x", ValueType::tensor({2}));
    g.output({g.call_function(OpCode::kAdd, {x, g.get_attr("w")})});
  }
  auto root = std::make_shared<Module>();
  root->children["a"] = a;
  root->children["b"] = b;
  Graph& g = root->graph;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* y = g.call_module("a", {x});
  g.output({g.call_module("b", {y})});
  infer_types(*root);
  auto unflat = unflatten(export_program(*root));
  EXPECT_EQ(swappable_fqns(*root, *unflat), (std::vector<std::string>{"a", "b"}));
  root->params["w"] = w;  // now b's weight is shared: swapping b would unshare it
  EXPECT_EQ(swappable_fqns(*root, *unflat), (std::vector<std::string>{"a"}));
}

TEST(TypesTest, AWrongCoreInferenceIsATypesFindingAndTheRealOnePasses) {
  auto found = properties(Fault::kInferTransposeKeepsShape, 200);
  EXPECT_GT(found["types:exported:transpose"] + found["types:exported:-"], 0);
  for (const auto& [kind, n] : found)
    EXPECT_EQ(kind.rfind("types:", 0), 0u) << kind << " before the types check";
}

}  // namespace
}  // namespace flatcheck
