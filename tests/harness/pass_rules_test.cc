// The oracle's own expectations (harness/pass_rules.h): each rule fails on a pass that did not
// do its job, and the eager-derived call counts match counts worked out by hand.
#include "harness/pass_rules.h"

#include <gtest/gtest.h>

#include "core/passes/passes.h"
#include "generators/generate.h"
#include "tests/support/programs.h"

namespace flatcheck {
namespace {

using testing_support::chain_module;

PartitionOptions relu_fallback(int min_block) {
  PartitionOptions o;
  o.fallback_ops = {"relu"};
  o.min_block_size = min_block;
  return o;
}

TEST(PassRulesTest, APartitionThatDidItsJobKeepsEveryRule) {
  Program e = export_program(*chain_module());
  Program p = partition(e, relu_fallback(3));
  EXPECT_FALSE(partition_breach(e, p, {"relu"}, 3)) << partition_breach(e, p, {"relu"}, 3)->message;
  Program f = flatten(p);
  EXPECT_FALSE(flatten_breach(p, f)) << flatten_breach(p, f)->message;
}

TEST(PassRulesTest, AnIdentityPartitionBreaksTheRules) {
  Program e = export_program(*chain_module());
  auto b = partition_breach(e, e, {"relu"}, 3);
  ASSERT_TRUE(b);
  EXPECT_NE(b->message.find("the parent graph still computes"), std::string::npos) << b->message;
}

TEST(PassRulesTest, AnEngineBelowMinBlockSizeOrHoldingAFallbackOpBreaksTheRules) {
  Program e = export_program(*chain_module());
  // Partitioned with min_block_size 3, checked as if it had to be 6: the engine is too small.
  Program p = partition(e, relu_fallback(3));
  auto small = partition_breach(e, p, {"relu"}, 6);
  ASSERT_TRUE(small);
  EXPECT_NE(small->message.find("min_block_size is 6"), std::string::npos) << small->message;
  // Checked as if `mul` were a fallback op: the engine runs it.
  auto wrong = partition_breach(e, p, {"relu", "mul"}, 3);
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->op, "mul");
  // A fallback without fallback ops that is long enough to be an engine.
  PartitionOptions none;
  none.min_block_size = 100;  // no fallback ops: the one run is demoted
  Program all_fallback = partition(e, none);
  EXPECT_FALSE(partition_breach(e, all_fallback, {}, 100));
  auto demoted = partition_breach(e, all_fallback, {}, 2);
  ASSERT_TRUE(demoted);
  EXPECT_NE(demoted->message.find("it should be an engine"), std::string::npos) << demoted->message;
}

TEST(PassRulesTest, ADroppedOpBreaksThePartitionRules) {
  Program e = export_program(*chain_module());
  auto m = chain_module();
  Graph& g = m->graph;
  Node* neg = nullptr;
  for (Node* n : g.nodes())
    if (n->target == "neg") neg = n;
  g.replace_all_uses(neg, neg->input_nodes()[0]);
  g.erase(neg);
  Program p = partition(export_program(*m), relu_fallback(3));
  auto b = partition_breach(e, p, {"relu"}, 3);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->op, "neg");
}

// An engine child must run its engine: one whose graph still computes (its ops, an op beside
// the engine, a second run) or never runs the engine gives the right numbers without the engine,
// and breaks the rule. Every acc child of 40 generated cases, four ways.
TEST(PassRulesTest, AnEngineChildThatDoesNotRunItsEngineOnceBreaksTheRules) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Case c = generate_case_for_seed(seed);
    Program e = export_program(*c.module);
    Program p = partition(e, partition_options(c.config));
    for (const auto& [name, child] : p.root->children) {
      if (name.rfind("_run_on_acc_", 0) != 0) continue;
      const std::string where = "seed " + std::to_string(seed) + ", " + name;
      for (int way = 0; way < 4; ++way) {
        Program q = clone_program(p);
        Module& acc = *q.root->children.at(name);
        Graph& g = acc.graph;
        Node* exe = nullptr;
        for (Node* n : g.nodes())
          if (n->op == NodeOp::kCallFunction && n->fn == OpCode::kExecuteEngine) exe = n;
        ASSERT_TRUE(exe) << where;
        Node* out = g.output_node();
        std::string want;
        if (way == 0) {  // the child's own ops: the exported root's graph, engine still attached
          g = e.root->graph;
          want = "itself instead of running its engine";
        } else if (way == 1) {  // an op beside the engine, on its first output
          Graph::InsertingBefore at(g, out);
          Node* first = std::get<Node*>(out->args[0]);
          Node* neg = g.call_function(OpCode::kNeg, {first});
          neg->meta.val = first->meta.val;
          out->args[0] = neg;
          want = "computes %neg";
        } else if (way == 2) {  // the engine run twice
          Graph::InsertingBefore at(g, out);
          g.call_function(OpCode::kExecuteEngine, exe->args);
          want = "itself instead of running its engine once";
        } else {  // its inputs passed straight out: the engine never runs
          std::vector<Node*> ph = g.placeholders();
          if (ph.empty()) continue;
          for (Arg& a : out->args) a = ph[0];
          for (Node* n : g.nodes())
            if (n->op == NodeOp::kCallFunction && n->fn == OpCode::kGetitem) g.erase(n);
          g.erase(exe);
          want = "never runs its engine";
        }
        auto b = partition_breach(e, q, c.config.fallback_ops, c.config.min_block_size);
        ASSERT_TRUE(b) << where << ", way " << way;
        EXPECT_NE(b->message.find(want), std::string::npos) << where << ": " << b->message;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
}

// Flatten removes dead code: a value nobody uses left in the flattened graph (an op on an
// input, a second read of an engine, an engine result's getitem) breaks the rule, in the
// flattened programs of 30 generated cases.
TEST(PassRulesTest, DeadCodeLeftAfterFlattenBreaksTheRules) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Case c = generate_case_for_seed(seed);
    Program p = partition(export_program(*c.module), partition_options(c.config));
    Program f = flatten(p);
    ASSERT_FALSE(flatten_breach(p, f)) << "seed " << seed;
    for (int way = 0; way < 3; ++way) {
      Program q = clone_program(f);
      Graph& g = q.root->graph;
      Graph::InsertingBefore at(g, g.output_node());
      Node* exe = nullptr;
      for (Node* n : g.nodes())
        if (n->op == NodeOp::kCallFunction && n->fn == OpCode::kExecuteEngine) exe = n;
      Node* dead = nullptr;
      if (way == 0 && !g.placeholders().empty())
        dead = g.call_function(OpCode::kNeg, {g.placeholders()[0]});
      else if (way == 1 && exe)
        dead = g.get_attr(std::get<Node*>(exe->args.back())->target);
      else if (way == 2 && exe)
        dead = g.call_function(OpCode::kGetitem, {exe, int64_t{0}});
      if (!dead) continue;
      auto b = flatten_breach(p, q);
      ASSERT_TRUE(b) << "seed " << seed << ", way " << way;
      EXPECT_NE(b->message.find("dead code left after flatten: %" + dead->name), std::string::npos)
          << b->message;
      ++checked;
    }
  }
  EXPECT_GT(checked, 50);
}

TEST(PassRulesTest, AnIdentityFlattenBreaksTheRules) {
  Program p = partition(export_program(*chain_module()), relu_fallback(3));
  auto b = flatten_breach(p, p);
  ASSERT_TRUE(b);
  EXPECT_NE(b->message.find("is left after flatten"), std::string::npos) << b->message;
  Program half = clone_program(p);
  inline_engines(half);  // engines inlined, fallbacks still called
  half.root->children.clear();
  auto c = flatten_breach(p, half);
  ASSERT_TRUE(c);
  EXPECT_NE(c->message.find("still calls"), std::string::npos) << c->message;
}

// A child `c` (y -> buf = buf + y; return y * 2) called three times with its result unused, and
// a child `d` (y -> relu y) called twice with only the second result used.
TEST(PassRulesTest, LiveCallsAreCountedFromTheEagerTree) {
  auto root = std::make_shared<Module>();
  auto c = std::make_shared<Module>();
  {
    Graph& g = c->graph;
    Node* y = g.placeholder("y", ValueType::tensor({2}));
    Node* rd = g.get_attr("buf");
    Node* upd = g.call_function(OpCode::kAdd, {rd, y});
    Node* dst = g.get_attr("buf");
    g.call_function(OpCode::kCopy, {dst, upd});
    Node* m = g.call_function(OpCode::kMulScalar, {y, 2.0f});
    g.output({m});
    c->buffers["buf"] = std::make_shared<Tensor>(Tensor::zeros({2}));
  }
  auto d = std::make_shared<Module>();
  {
    Graph& g = d->graph;
    Node* y = g.placeholder("y", ValueType::tensor({2}));
    g.output({g.call_function(OpCode::kRelu, {y})});
  }
  root->children["c"] = c;
  root->children["d"] = d;
  Graph& g = root->graph;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  g.call_module("c", {x});
  g.call_module("c", {x});
  g.call_module("c", {x});
  g.call_module("d", {x});
  Node* used = g.call_module("d", {x});
  g.output({used});
  auto calls = expected_live_calls(*root);
  // Every write of `buf` but the last is read by the next call's update, so all three calls of
  // `c` leave live nodes; one of the two calls of `d` does.
  EXPECT_EQ(calls["c"], 3);
  EXPECT_EQ(calls["d"], 1);
}

TEST(PassRulesTest, AnOverwrittenBufferWriteNobodyReadsIsDead) {
  auto root = std::make_shared<Module>();
  auto c = std::make_shared<Module>();
  Graph& cg = c->graph;
  Node* y = cg.placeholder("y", ValueType::tensor({2}));
  Node* v = cg.call_function(OpCode::kNeg, {y});
  cg.call_function(OpCode::kCopy, {cg.get_attr("buf"), v});  // writes, never reads
  cg.output({y});
  c->buffers["buf"] = std::make_shared<Tensor>(Tensor::zeros({2}));
  root->children["c"] = c;
  Graph& g = root->graph;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  g.call_module("c", {x});
  g.call_module("c", {x});
  g.output({g.call_function(OpCode::kClone, {x})});
  // The first write is overwritten before anyone reads it; the second is the final value.
  EXPECT_EQ(expected_live_calls(*root)["c"], 1);
}

TEST(PassRulesTest, StructureComparesCallTargetsConstantsAndInputTypesNotNames) {
  auto make = [](const char* target, float k, const char* name, Shape in = {2}) {
    Graph g;
    Node* x = g.placeholder(name, ValueType::tensor(in));
    Node* c = g.call_module(target, {x}, name);
    g.output({g.call_function(OpCode::kMulScalar, {c, k}, name)});
    return g;
  };
  EXPECT_TRUE(same_structure(make("c", 2.0f, "a"), make("c", 2.0f, "b")));
  EXPECT_FALSE(same_structure(make("c", 2.0f, "a"), make("c@1", 2.0f, "a")));
  EXPECT_FALSE(same_structure(make("c", 2.0f, "a"), make("c", -2.0f, "a")));
  EXPECT_FALSE(same_structure(make("c", 0.0f, "a"), make("c", -0.0f, "a")));
  // A graph checks its inputs' shapes: one over f32[2] and one over f32[1] are two variants
  // (a unflatten that kept both was once reported as "two variants have equal graphs").
  EXPECT_FALSE(same_structure(make("c", 2.0f, "a"), make("c", 2.0f, "a", {1})));
}

TEST(PassRulesTest, GeneratedCasesKeepEveryRuleWithoutFaults) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    Case c = generate_case_for_seed(seed);
    Program e = export_program(*c.module);
    Program p = partition(e, partition_options(c.config));
    auto b = partition_breach(e, p, c.config.fallback_ops, c.config.min_block_size);
    ASSERT_FALSE(b) << "seed " << seed << ": " << b->message;
    Program f = flatten(p);
    auto fb = flatten_breach(p, f);
    ASSERT_FALSE(fb) << "seed " << seed << ": " << fb->message;
  }
}

}  // namespace
}  // namespace flatcheck
