// The minimizer against a checker of our own: what it keeps, what it refuses, its budget.
#include "harness/minimize.h"

#include <gtest/gtest.h>

#include <set>

#include "core/base/faults.h"
#include "core/ir/analysis.h"
#include "generators/generate.h"
#include "generators/source.h"
#include "harness/oracle.h"

namespace flatcheck {
namespace {

int count_op(const Module& m, const std::string& op) {
  int n = 0;
  for (Node* x = m.graph.first(); x; x = x->next)
    n += x->op == NodeOp::kCallFunction && x->target == op;
  for (const auto& [_, c] : m.children) n += count_op(*c, op);
  return n;
}

// Tanh nodes in the graphs a run executes: the root's and those of modules it calls.
int called_tanh(const Module& m, int depth = 0) {
  int n = 0;
  for (Node* x = m.graph.first(); x && depth < 16; x = x->next) {
    n += x->op == NodeOp::kCallFunction && x->target == "tanh";
    if (x->op != NodeOp::kCallModule) continue;
    if (const Module* child = m.submodule(x->target)) n += called_tanh(*child, depth + 1);
  }
  return n;
}

// Tanh nodes whose values are used (the minimizer drops dead code with every step).
int live_tanh(const Case& c) {
  Case live = clone_case(c);
  for_each_module(*live.module,
                  [](const std::string&, Module& m) { eliminate_dead_code(m.graph); });
  return count_op(*live.module, "tanh");
}

// A case generated until it has at least `k` live tanh nodes (fixed seeds). `flat`: no child
// modules (a tanh inside a call whose result nobody reads is executed but dead, which this
// file's checker counts and the minimizer's dead-code cleanup removes). `no_split`: no split
// node (a tanh fed through a split keeps the split and its getitem).
Case case_with_tanh(int k, bool flat = false, bool no_split = false) {
  for (uint64_t seed = 1;; ++seed) {
    GenOptions o;
    o.max_nodes = 30;
    if (flat) o.max_depth = 0;
    Case c = generate_case_for_seed(seed, o);
    if (no_split && count_op(*c.module, "split") > 0) continue;
    if (live_tanh(c) >= k && called_tanh(*c.module) >= k && case_size(c) >= 10) return c;
  }
}

// "Fails" while a run executes a tanh node: the signature the minimizer must keep.
OracleResult fails_with_tanh(const Case& c) {
  OracleResult r;
  if (called_tanh(*c.module) > 0)
    r.failure = Failure{"mismatch", "flattened", "tanh", "has a tanh", "", ""};
  return r;
}

const std::set<std::string> kReductionNames = {"drop-call",     "inline-call",  "drop-node",
                                               "drop-output",   "simplify-op",  "one-call",
                                               "simple-inputs", "simple-state", "fewer-fallbacks"};

TEST(MinimizeTest, ReducesToTheNodesTheFailureNeedsAndLogsItsSteps) {
  Case c = case_with_tanh(2, /*flat=*/true, /*no_split=*/true);
  MinimizeOptions o;
  o.check = fails_with_tanh;
  MinimizeResult r = minimize(c, *fails_with_tanh(c).failure, o);
  EXPECT_EQ(called_tanh(*r.reduced.module), 1);
  EXPECT_LE(case_size(r.reduced), 2u) << "a tanh and at most the node feeding it stay";
  EXPECT_LT(case_size(r.reduced), case_size(c));
  EXPECT_EQ(r.failure.signature(), "mismatch:flattened:tanh");
  EXPECT_EQ(r.steps, static_cast<int>(r.log.size()));
  EXPECT_GT(r.steps, 0);
  for (const auto& step : r.log) EXPECT_TRUE(kReductionNames.count(step)) << step;
}

// A chain that changes shapes (split, getitem, concat: no node has an argument of its own
// type) is dropped: a node's value is replaced by the nearest earlier one of its type. The
// failure needs only the tanh, so x -> tanh is what is left.
TEST(MinimizeTest, AShapeChangingChainIsDroppedForAnEarlierValue) {
  Case c;
  c.module = std::make_shared<Module>();
  Graph& g = c.module->graph;
  Node* x = g.placeholder("x", ValueType::tensor({4}));
  Node* y = x;
  for (int k = 0; k < 3; ++k) {  // [4] -> two [2] -> [2] -> [4], three times
    Node* s = g.call_function(OpCode::kSplit, {y, int64_t{0}, int64_t{2}});
    Node* half = g.call_function(OpCode::kGetitem, {s, int64_t{k % 2}});
    y = g.call_function(OpCode::kConcat, {half, half, int64_t{0}});
  }
  g.output({g.call_function(OpCode::kTanh, {y})});
  infer_types(*c.module);
  c.inputs = {Tensor({4}, {1, 2, 3, 4})};
  c.config.calls = 1;
  MinimizeOptions o;
  o.check = [](const Case& k) {
    OracleResult r;
    if (count_op(*k.module, "tanh") > 0)
      r.failure = Failure{"predicate", "external", "-", "", "", ""};
    return r;
  };
  MinimizeResult r = minimize(c, Failure{"predicate", "external", "-", "", "", ""}, o);
  EXPECT_EQ(count_op(*r.reduced.module, "tanh"), 1);
  EXPECT_EQ(count_op(*r.reduced.module, "concat") + count_op(*r.reduced.module, "split") +
                count_op(*r.reduced.module, "getitem"),
            0)
      << *r.reduced.module;
}

TEST(MinimizeTest, AStepThatChangesTheSignatureIsNotKept) {
  Case c = case_with_tanh(3, /*flat=*/true);
  // Below 2 tanh nodes the failure has another signature: the minimizer must stop at 2.
  auto check = [](const Case& x) {
    OracleResult r = fails_with_tanh(x);
    if (r.failure && called_tanh(*x.module) < 2) r.failure->op = "other";
    return r;
  };
  MinimizeOptions o;
  o.check = check;
  MinimizeResult r = minimize(c, *check(c).failure, o);
  EXPECT_EQ(called_tanh(*r.reduced.module), 2);
  EXPECT_GT(r.steps, 0);
  EXPECT_EQ(r.failure.op, "tanh");
}

TEST(MinimizeTest, MaxChecksBoundsTheOracleRuns) {
  Case c = case_with_tanh(1);
  int calls = 0;
  MinimizeOptions o;
  o.max_checks = 3;
  o.check = [&calls](const Case& x) {
    ++calls;
    return fails_with_tanh(x);
  };
  MinimizeResult r = minimize(c, *fails_with_tanh(c).failure, o);
  EXPECT_LE(calls, 3);
  EXPECT_EQ(r.checks, calls);
}

// Candidates stay valid when an ancestor alone reaches into a child: a grandchild called only
// through a dotted target ("a.b" from the root) and a buffer read only by the parent ("a.buf").
// Pruning used to drop both, every candidate then failed lint, and nothing was ever checked.
// With a check that never holds, each applicable step is still checked.
//
// checks_with_a_check_that_never_holds: the checks such a minimization makes, up to `limit`. A
// test that asks for at least T checks gets the same verdict from any limit >= T, and stopping
// there keeps it quick (a whole run of a four-deep case is minutes under the sanitizers).
int checks_with_a_check_that_never_holds(const Case& c, int limit = 100000) {
  MinimizeOptions opts;
  opts.max_checks = limit;
  opts.check = [](const Case&) { return OracleResult{}; };
  Failure f{"predicate", "external", "-", "", "", ""};
  return minimize(c, f, opts).checks;
}

// A case whose nodes carry no types (as one straight from the generator or a file may), with a
// failure that needs state no graph reads (so the pruned case, which would be typed, is not
// kept): the steps that need a node's type (drop-node) still apply before any other step is
// kept, so a check that shows the target while no op was simplified has the chain dropped.
TEST(MinimizeTest, StepsThatNeedTypesApplyToACaseWithoutThem) {
  for (bool typed : {false, true}) {
    Case c;
    c.module = std::make_shared<Module>();
    Graph& g = c.module->graph;
    Node* y = g.placeholder("x", ValueType::tensor({2, 2}));
    for (OpCode op : {OpCode::kTanh, OpCode::kSigmoid, OpCode::kTanh}) y = g.call_function(op, {y});
    g.output({y});
    c.module->params["unread"] = std::make_shared<Tensor>(Tensor::full({1}, 0.5f));
    if (typed) infer_types(*c.module);
    c.inputs = {Tensor::full({2, 2}, 1.0f)};
    c.config.calls = 1;  // nothing for the whole-case steps to simplify
    c.config.fallback_ops.clear();
    MinimizeOptions opts;
    opts.check = [](const Case& k) {
      OracleResult r;
      if (count_op(*k.module, "neg") == 0 && k.module->params.count("unread"))
        r.failure = Failure{"predicate", "external", "-", "", "", ""};
      return r;
    };
    MinimizeResult r = minimize(c, Failure{"predicate", "external", "-", "", "", ""}, opts);
    EXPECT_EQ(count_op(*r.reduced.module, "tanh") + count_op(*r.reduced.module, "sigmoid"), 0)
        << (typed ? "typed" : "untyped") << ": " << *r.reduced.module;
  }
}

TEST(MinimizeTest, WhatOnlyAnAncestorReachesIsKeptSoStepsAreChecked) {
  auto b = std::make_shared<Module>();
  b->type = "B";
  Node* bx = b->graph.placeholder("x", ValueType::tensor({2}));
  b->graph.output({b->graph.call_function(OpCode::kRelu, {bx})});
  auto a = std::make_shared<Module>();
  a->type = "A";
  a->children["b"] = b;
  a->buffers["buf"] = std::make_shared<Tensor>(Tensor::full({2}, 0.25f));
  Node* ax = a->graph.placeholder("x", ValueType::tensor({2}));
  a->graph.output({a->graph.call_function(OpCode::kNeg, {ax})});
  Case c;
  c.module = std::make_shared<Module>();
  c.module->children["a"] = a;
  Graph& g = c.module->graph;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* y = g.call_module("a.b", {x});
  Node* z = g.call_function(OpCode::kAdd, {y, g.get_attr("a.buf")});
  Node* w = g.call_function(OpCode::kTanh, {g.call_module("a", {z})});
  g.output({w});
  infer_types(*c.module);
  c.inputs = {Tensor::full({2}, 1.0f)};
  EXPECT_GE(checks_with_a_check_that_never_holds(c), 4);  // drop/inline/simplify steps
  // The class in generated four-deep cases with level-skipping calls and buffer reads.
  int cases = 0, starved = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    Rng src(mix_seed(31, seed));
    SwarmConfig config = draw_swarm(src, GenOptions{});
    config.depth = 4;
    config.skip_levels = config.read_after_write = config.buffers = true;
    Case gen = build_case(src, config, GenOptions{});
    int nodes = 0;
    for_each_module(*gen.module, [&](const std::string&, Module& m) {
      for (Node* n = m.graph.first(); n; n = n->next) nodes += n->op == NodeOp::kCallFunction;
    });
    // Each check copies the whole case, so a run is quadratic in its size: the one case of
    // several thousand nodes (seed 50) would be most of the test's time.
    if (nodes > 1000) continue;
    ++cases;
    starved += checks_with_a_check_that_never_holds(gen, nodes / 2 + 1) < nodes / 2;
  }
  EXPECT_EQ(cases, 59);
  EXPECT_EQ(starved, 0) << "cases whose steps were mostly rejected before any check";
}

// A failure that needs state no graph reads (mangled-fqn-collision: `a_b.w`, unused, mangles
// like `a.b_w`, and goes missing from the exported program) still shrinks: the minimizer keeps
// unused children and state when pruning them loses the failure, instead of losing every step.
TEST(MinimizeTest, AFailureThatNeedsUnusedStateStillShrinks) {
  auto a = std::make_shared<Module>();
  a->params["b_w"] = std::make_shared<Tensor>(Tensor({2}, {1, 2}));
  {
    Graph& g = a->graph;
    Node* x = g.placeholder("x", ValueType::tensor({2}));
    g.output({g.call_function(OpCode::kAdd, {x, g.get_attr("b_w")})});
  }
  auto a_b = std::make_shared<Module>();
  a_b->params["w"] = std::make_shared<Tensor>(Tensor({2}, {3, 4}));
  {
    Graph& g = a_b->graph;
    Node* x = g.placeholder("x", ValueType::tensor({2}));
    g.output({g.call_function(OpCode::kRelu, {x})});
  }
  Case c;
  c.module = std::make_shared<Module>();
  c.module->children["a"] = a;
  c.module->children["a_b"] = a_b;  // never called: its parameter is unused
  Graph& g = c.module->graph;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* v = g.call_module("a", {x});
  for (int i = 0; i < 6; ++i) v = g.call_function(i % 2 ? OpCode::kNeg : OpCode::kTanh, {v});
  g.output({v});
  infer_types(*c.module);
  c.inputs = {Tensor({2}, {0.5f, -1})};
  c.config.calls = 1;
  ScopedFault f(Fault::kMangledFqnCollision);
  OracleResult r = check_case(c);
  ASSERT_TRUE(r.failure);
  MinimizeResult m = minimize(c, *r.failure);
  EXPECT_EQ(m.failure.kind(), r.failure->kind());
  EXPECT_LT(case_size(m.reduced), case_size(c));
  EXPECT_TRUE(m.reduced.module->children.count("a_b"));
}

}  // namespace
}  // namespace flatcheck
