// flatten: fallback inputs wired by position, children removed, engines kept.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/ir/engine.h"
#include "core/passes/passes.h"
#include "core/runtime/interpreter.h"
#include "core/serialize/serialize.h"
#include "generators/examples.h"
#include "generators/rc_gen.h"
#include "tests/support/programs.h"

namespace flatcheck {
namespace {

using namespace testing_support;

Tensor graph_break_input() {
  return Tensor({4, 4}, {1, 2, 3, 4, -1, -2, -3, -4, 0.5f, 0.25f, -0.5f, 3, 2, 1, 0, -1});
}

// ------------------------------------------------------------------------------- flatten

TEST(FlattenTest, GraphBreakFallbackInputsAreWiredByPosition) {
  Program ep = export_program(*graph_break_example());
  Program pm = partition(ep, {{"relu"}, 5});
  Program fl = flatten(pm);
  EXPECT_NO_THROW(lint_program(fl));
  // inline_engines minted a new getitem for engine 0's single output: getitem_2.
  Node* relu = fl.root->graph.find("relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(std::get<Node*>(relu->args[0])->name, "getitem_2");
  Program reloaded = load_program(save_program(fl));
  EXPECT_NO_THROW(lint_program(reloaded));
  Tensor x = graph_break_input();
  auto want = run_program_twice(pm, {x});
  EXPECT_TRUE(all_bit_equal(run_program_twice(fl, {x}), want));
  EXPECT_TRUE(all_bit_equal(run_program_twice(reloaded, {x}), want));
}

TEST(FlattenTest, MatchingFallbackInputsByNameBreaksTheSameProgram) {
  Program pm = partition(export_program(*graph_break_example()), {{"relu"}, 5});
  ScopedFault by_name(Fault::kInlineByName);
  try {
    Program fl = flatten(pm);
    ADD_FAILURE() << "by-name wiring flattened cleanly:\n" << fl;
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("used before it has been defined"), std::string::npos)
        << e.what();
  }
}

// flatten inlines a fallback's call_function nodes only: a get_attr or a call_module in a
// `_run_on_gpu_*` child is refused by name, not inlined or dropped.
TEST(FlattenTest, AFallbackHoldingAnythingButCallsIsRefused) {
  for (NodeOp op : {NodeOp::kGetAttr, NodeOp::kCallModule}) {
    Program pm = partition(export_program(*graph_break_example()), {{"relu"}, 5});
    Module* gpu = nullptr;
    for (auto& [name, child] : pm.root->children)
      if (name.rfind("_run_on_gpu_", 0) == 0) gpu = child.get();
    ASSERT_NE(gpu, nullptr);
    Graph& g = gpu->graph;
    {
      Graph::InsertingBefore at(g, g.output_node());
      if (op == NodeOp::kGetAttr)
        g.get_attr("w", "stray");
      else
        g.call_module("inner", {}, "stray");
    }
    try {
      Program fl = flatten(pm);
      ADD_FAILURE() << node_op_name(op) << " in a fallback flattened:\n" << fl;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("fallback node %stray is not a call_function"),
                std::string::npos)
          << e.what();
    }
  }
}

// The graph-break program partitioned, and its one fallback call and child.
struct Fallback {
  Program pm;
  Node* call = nullptr;
  Module* child = nullptr;
};
Fallback graph_break_fallback() {
  Fallback f{partition(export_program(*graph_break_example()), {{"relu"}, 5})};
  for (Node* n = f.pm.root->graph.first(); n; n = n->next)
    if (n->op == NodeOp::kCallModule && n->target.rfind("_run_on_gpu_", 0) == 0) f.call = n;
  if (f.call) f.child = f.pm.root->submodule(f.call->target);
  return f;
}

// Makes the fallback's child return its result twice and the root read the call through a
// getitem of 0 (named %first); new nodes go after it.
Node* return_twice(Fallback& f) {
  Graph& g = f.pm.root->graph;
  Node* out = f.child->graph.output_node();
  Arg result = out->args.at(0);
  out->args = {result, result};
  Node* first;
  {
    Graph::InsertingBefore at(g, f.call->next);
    first = g.call_function(OpCode::kGetitem, {int64_t{0}, int64_t{0}}, "first");
  }
  g.replace_all_uses(f.call, first);
  first->args[0] = f.call;
  return first;
}

// Bad fallback calls are refused by name: a call with fewer arguments than its child has
// placeholders, and a call of a two-output child read by anything but a getitem of 0 or 1.
TEST(FlattenTest, AFallbackCallThatDoesNotFitItsChildIsRefused) {
  for (int bad = 0; bad < 5; ++bad) {
    Fallback f = graph_break_fallback();
    ASSERT_TRUE(f.call && f.child);
    Graph& g = f.pm.root->graph;
    std::string want;
    if (bad == 0) {
      ASSERT_FALSE(f.call->args.empty());
      f.call->args.pop_back();
      want = "flatten: call %" + f.call->name + " lacks an argument";
    } else {
      Node* first = return_twice(f);
      Graph::InsertingBefore at(g, first->next);
      if (bad == 1) {
        g.call_function(OpCode::kAdd, {f.call, f.call}, "stray");
        want = "flatten: multi-output call %" + f.call->name + " read by %stray";
      } else {
        int64_t index = bad == 2 ? 2 : bad == 3 ? -1 : 7;
        g.call_function(OpCode::kGetitem, {f.call, index}, "stray");
        want = "flatten: getitem %stray index out of range";
      }
    }
    try {
      Program fl = flatten(f.pm);
      ADD_FAILURE() << "bad call " << bad << " flattened:\n" << fl;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << bad << ": " << e.what();
    }
  }
  // The two-output child read through getitems 0 and 1 flattens.
  Fallback f = graph_break_fallback();
  Graph& g = f.pm.root->graph;
  Node* first = return_twice(f);
  {
    Graph::InsertingBefore at(g, first->next);
    g.call_function(OpCode::kGetitem, {f.call, int64_t{1}}, "second");
  }
  Program fl = flatten(f.pm);
  EXPECT_NO_THROW(lint_program(fl));
  EXPECT_EQ(fl.root->graph.find("first"), nullptr);
  EXPECT_EQ(fl.root->graph.find("second"), nullptr);
}

// A fallback's nodes are inlined with their metadata: each that survives dead-code elimination
// keeps its origin (the eager node it came from) and its nn_module_stack. Generated programs,
// from fixed seeds, until 200 inlined nodes have been checked.
TEST(FlattenTest, InlinedFallbackNodesKeepTheirOriginAndModuleStack) {
  int checked = 0, with_stack = 0;
  for (uint64_t seed = 1; seed <= 300 && checked < 200; ++seed) {
    Rng rng(seed);
    Case c = generate_case(rng, GenOptions{12, 3, 4});
    Program pm =
        partition(export_program(*c.module), {c.config.fallback_ops, c.config.min_block_size});
    std::vector<const Node*> inlined;
    for (const auto& [name, child] : pm.root->children)
      if (name.rfind("_run_on_gpu_", 0) == 0)
        for (Node* n = child->graph.first(); n; n = n->next)
          if (n->op == NodeOp::kCallFunction) inlined.push_back(n);
    if (inlined.empty()) continue;
    Program fl = flatten(pm);
    for (const Node* n : inlined) {
      ASSERT_FALSE(n->meta.origin.empty()) << "seed " << seed << ": %" << n->name;
      const Node* copy = nullptr;
      for (Node* f = fl.root->graph.first(); f; f = f->next)
        if (f->meta.origin == n->meta.origin) copy = f;
      if (!copy) continue;  // dead code, eliminated
      EXPECT_EQ(copy->meta.nn_module_stack, n->meta.nn_module_stack) << "seed " << seed;
      with_stack += !n->meta.nn_module_stack.empty();
      ++checked;
    }
  }
  EXPECT_GE(checked, 200);
  EXPECT_GE(with_stack, 20) << "inlined nodes traced inside a call";
}

// An engine's call becomes an execute_engine node that keeps the call's nn_module_stack (a
// partitioner that records where a run was traced sees it after flatten).
TEST(FlattenTest, AnEngineCallKeepsTheCallsModuleStack) {
  Program pm = partition(export_program(*graph_break_example()), {{"relu"}, 5});
  int calls = 0;
  for (Node* n = pm.root->graph.first(); n; n = n->next)
    if (n->op == NodeOp::kCallModule && n->target.rfind("_run_on_acc_", 0) == 0) {
      n->meta.nn_module_stack = ModuleStack({{"blk@" + std::to_string(calls), "blk", "Blk"}});
      ++calls;
    }
  ASSERT_EQ(calls, 2);
  Program fl = flatten(pm);
  std::vector<std::string> keys;
  for (Node* n = fl.root->graph.first(); n; n = n->next)
    if (n->op == NodeOp::kCallFunction && n->fn == OpCode::kExecuteEngine) {
      ASSERT_EQ(n->meta.nn_module_stack.size(), 1u) << n->name;
      keys.push_back(n->meta.nn_module_stack[0].key);
    }
  EXPECT_EQ(keys, (std::vector<std::string>{"blk@0", "blk@1"}));
}

TEST(FlattenTest, RemovesChildrenAndKeepsEnginesAsAttributes) {
  Program fl = flatten(partition(export_program(*graph_break_example()), {{"relu"}, 5}));
  EXPECT_TRUE(fl.root->children.empty());
  EXPECT_EQ(fl.root->engines.size(), 2u);
  EXPECT_TRUE(fl.root->engines.count("_run_on_acc_0_engine"));
}

}  // namespace
}  // namespace flatcheck
