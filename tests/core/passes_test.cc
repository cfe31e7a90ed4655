// The passes: export, partition, engines, flatten, unflatten; the two seed bugs as regression
// tests (and proof that the old strategies fail on the same programs); a property per pass.
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

namespace flatcheck {
namespace {

std::vector<Tensor> run_program_twice(const Program& p, const std::vector<Tensor>& in) {
  Program c = clone_program(p);
  run_program(c, in);
  return run_program(c, in);
}

std::vector<Tensor> run_eager_twice(const Module& m, const std::vector<Tensor>& in) {
  auto c = clone_module(m, false);
  run_module(*c, in);
  return run_module(*c, in);
}

bool all_bit_equal(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].bit_equal(b[i])) return false;
  return true;
}

Tensor graph_break_input() {
  return Tensor({4, 4}, {1, 2, 3, 4, -1, -2, -3, -4, 0.5f, 0.25f, -0.5f, 3, 2, 1, 0, -1});
}

// ------------------------------------------------------------------------------- export

TEST(ExportTest, LiftsStateToPlaceholdersAndMutationsToOutputs) {
  Program p = export_program(*quickstart_example());
  auto phs = p.root->graph.placeholders();
  ASSERT_EQ(phs.size(), 3u);
  EXPECT_EQ(phs[0]->name, "p_block_w");
  EXPECT_EQ(phs[1]->name, "b_block_steps");
  EXPECT_EQ(phs[2]->name, "x");
  EXPECT_EQ(p.sig.inputs[0].kind, InputSpec::kParameter);
  EXPECT_EQ(p.sig.inputs[0].target, "block.w");
  EXPECT_EQ(p.sig.inputs[1].kind, InputSpec::kBuffer);
  ASSERT_EQ(p.sig.outputs.size(), 2u);
  EXPECT_EQ(p.sig.outputs[1].kind, OutputSpec::kBufferMutation);
  EXPECT_EQ(p.sig.outputs[1].target, "block.steps");
  for (Node* n = p.root->graph.first(); n; n = n->next) EXPECT_NE(n->target, "copy_");
}

TEST(ExportTest, NnModuleStackKeysCarryTheCallIndex) {
  Program p = export_program(*unflatten_example(false));
  std::vector<std::string> keys;
  for (Node* n = p.root->graph.first(); n; n = n->next)
    for (const auto& e : n->meta.nn_module_stack) {
      EXPECT_EQ(e.fqn, "n");
      EXPECT_EQ(e.type, "N");
      if (std::find(keys.begin(), keys.end(), e.key) == keys.end()) keys.push_back(e.key);
    }
  EXPECT_EQ(keys, (std::vector<std::string>{"n", "n@1"}));
}

TEST(ExportTest, StaticArgumentsSpecializeEachCall) {
  Program p = export_program(*unflatten_example(false));
  std::vector<float> constants;
  for (Node* n = p.root->graph.first(); n; n = n->next) {
    EXPECT_NE(n->target, "branch");
    if (n->op == NodeOp::kCallFunction) constants.push_back(std::get<float>(n->args[1]));
  }
  // x+3, then the first call's x+1 (flag True), +4, the second call's x+2, +5.
  EXPECT_EQ(constants, (std::vector<float>{3, 1, 4, 2, 5}));
  EXPECT_EQ(run_program_twice(p, {Tensor::full({1}, 1)})[0].data, std::vector<float>{16});
}

// ------------------------------------------------------------------------------- partition

TEST(PartitionTest, RunsShareOneCounterAndMultiOutputChildrenAreReadThroughGetitem) {
  Program ep = export_program(*graph_break_example());
  Program p = partition(ep, {{"relu"}, 5});
  std::vector<std::string> calls;
  std::vector<Node*> getitems;
  for (Node* n = p.root->graph.first(); n; n = n->next) {
    if (n->op == NodeOp::kCallModule) calls.push_back(n->target);
    if (n->op == NodeOp::kCallFunction && n->fn == OpCode::kGetitem) getitems.push_back(n);
  }
  EXPECT_EQ(calls, (std::vector<std::string>{"_run_on_acc_0", "_run_on_gpu_1", "_run_on_acc_2",
                                             "_run_on_gpu_3"}));
  ASSERT_EQ(getitems.size(), 2u);
  EXPECT_EQ(getitems[0]->name, "getitem");  // a fresh namespace mints getitem again
  EXPECT_EQ(std::get<Node*>(getitems[0]->args[0])->target, "_run_on_acc_2");
  // The fallback's placeholder is named after its producer in the pre-split graph.
  auto phs = p.root->children.at("_run_on_gpu_1")->graph.placeholders();
  ASSERT_EQ(phs.size(), 1u);
  EXPECT_EQ(phs[0]->name, "getitem");
}

TEST(PartitionTest, SmallAccRunsAreDemotedAndMerged) {
  Program ep = export_program(*graph_break_example());
  Program p = partition(ep, {{"relu"}, 100});
  ASSERT_EQ(p.root->children.size(), 1u);
  EXPECT_EQ(p.root->children.begin()->first, "_run_on_gpu_0");
}

TEST(PartitionTest, EnginesFoldParametersAndMatchTheSubgraph) {
  Program ep = export_program(*quickstart_example());
  Program p = partition(ep, {{"relu"}, 2});
  bool folded = false;
  for (const auto& [name, child] : p.root->children)
    if (auto e = child->engine("engine")) folded |= !e->constants.empty();
  EXPECT_TRUE(folded);
  Tensor x({2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(
      all_bit_equal(run_program_twice(p, {x}), run_eager_twice(*quickstart_example(), {x})));
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

TEST(FlattenTest, RemovesChildrenAndKeepsEnginesAsAttributes) {
  Program fl = flatten(partition(export_program(*graph_break_example()), {{"relu"}, 5}));
  EXPECT_TRUE(fl.root->children.empty());
  EXPECT_EQ(fl.root->engines.size(), 2u);
  EXPECT_TRUE(fl.root->engines.count("_run_on_acc_0_engine"));
}

// ------------------------------------------------------------------------------- unflatten

TEST(UnflattenTest, SpecializedCallsBecomeSiblingsAndReturn16) {
  Program ep = export_program(*unflatten_example(false));
  auto u = unflatten(load_program(save_program(ep)));
  std::vector<std::string> names;
  for (const auto& [k, _] : u->children) names.push_back(k);
  EXPECT_EQ(names, (std::vector<std::string>{"n", "n@1"}));
  EXPECT_EQ(run_module(*u, std::vector<Tensor>{Tensor::full({1}, 1)})[0].data,
            std::vector<float>{16});
}

TEST(UnflattenTest, EqualCallsShareOneModule) {
  auto u = unflatten(export_program(*unflatten_example(true)));
  ASSERT_EQ(u->children.size(), 1u);
  EXPECT_TRUE(u->children.count("n"));
  int calls = 0;
  for (Node* n = u->graph.first(); n; n = n->next)
    calls += n->op == NodeOp::kCallModule && n->target == "n";
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(run_module(*u, std::vector<Tensor>{Tensor::full({1}, 1)})[0].data,
            std::vector<float>{15});
}

TEST(UnflattenTest, TheFirstCallGraphStrategyReturns15) {
  Program ep = export_program(*unflatten_example(false));
  ScopedFault first_call(Fault::kUnflattenFirstCallGraph);
  auto u = unflatten(ep);
  EXPECT_EQ(run_module(*u, std::vector<Tensor>{Tensor::full({1}, 1)})[0].data,
            std::vector<float>{15});
}

TEST(UnflattenTest, VariantsShareStateAndAnUpdateThroughOneIsSeenByTheOther) {
  Program ep = export_program(*quickstart_example());
  auto u = unflatten(ep);
  auto variants = fqn_variants(*u, "block");
  EXPECT_EQ(variants, (std::vector<std::string>{"block", "block@1"}));
  Module* a = u->submodule("block");
  Module* b = u->submodule("block@1");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->buffers.at("steps"), b->buffers.at("steps"));
  EXPECT_EQ(a->params.at("w"), b->params.at("w"));
  // block@1 writes the buffer (the last update); block reads it on the next call.
  bool b_writes = false;
  for (Node* n = b->graph.first(); n; n = n->next) b_writes |= n->target == "copy_";
  EXPECT_TRUE(b_writes);
  Tensor x({2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(all_bit_equal(run_eager_twice(*u, {x}), run_eager_twice(*quickstart_example(), {x})));
  run_module(*u, std::vector<Tensor>{x});
  run_module(*u, std::vector<Tensor>{x});
  EXPECT_EQ(a->buffers.at("steps")->data, (std::vector<float>{4, 4, 4, 4}));
}

// FX lets a graph call a grandchild directly (call_module target "a.b"); unflatten must attach
// the call's module inside "a", not as root's "a". Found by flatcheck's own minimizer, whose
// inline step makes such targets.
TEST(UnflattenTest, CallsThatSkipALevelAreAttachedInsideTheIntermediateModule) {
  auto b = std::make_shared<Module>();
  b->type = "B";
  b->buffers["buf"] = std::make_shared<Tensor>(Tensor({2}, {0.5f, 0.5f}));
  {
    Graph& g = b->graph;
    Node* x = g.placeholder("x", ValueType::tensor({2}));
    Node* r = g.call_function(OpCode::kAdd, {g.get_attr("buf"), x});
    g.call_function(OpCode::kCopy, {g.get_attr("buf"), r});
    g.output({r});
  }
  auto a = std::make_shared<Module>();
  a->type = "A";
  a->children["b"] = b;
  {
    Node* x = a->graph.placeholder("x", ValueType::tensor({2}));
    a->graph.output({a->graph.call_module("b", {x})});
  }
  auto root = std::make_shared<Module>();
  root->children["a"] = a;
  Node* x = root->graph.placeholder("x", ValueType::tensor({2}));
  Node* y = root->graph.call_module("a.b", {x});
  Node* z = root->graph.call_function(OpCode::kAdd, {root->graph.get_attr("a.b.buf"), y});
  root->graph.output({z});
  infer_types(*root);
  Program ep = export_program(*root);
  auto u = unflatten(ep);
  ASSERT_NE(u->submodule("a"), nullptr);
  EXPECT_EQ(u->submodule("a")->type, "A");
  ASSERT_NE(u->submodule("a.b"), nullptr);
  EXPECT_EQ(u->submodule("a.b")->type, "B");
  Tensor in({2}, {1, 2});
  EXPECT_TRUE(all_bit_equal(run_eager_twice(*u, {in}), run_eager_twice(*root, {in})));
}

TEST(UnflattenTest, SwapAndSetAttrReachEveryVariant) {
  auto u = unflatten(export_program(*quickstart_example()));
  auto w = std::make_shared<Tensor>(Tensor({2, 2}, {1, 0, 0, 1}));
  set_attr_all(*u, "block", "w", w);
  EXPECT_EQ(u->submodule("block")->params.at("w"), w);
  EXPECT_EQ(u->submodule("block@1")->params.at("w"), w);
  auto replacement = std::make_shared<Module>(*u->submodule("block"));
  swap_module(*u, "block", replacement);
  EXPECT_EQ(u->children.at("block"), replacement);
  EXPECT_EQ(u->children.at("block@1"), replacement);
  EXPECT_THROW(set_attr_all(*u, "nothing", "w", w), InputError);
}

// ------------------------------------------------------------------------------- properties

// Each pass preserves outputs and final state over two calls, on random programs.
RC_GTEST_PROP(PassesProperty, ExportPreservesOutputs, (const Recipe& r)) {
  Case c = build_recipe(r);
  Program p = export_program(*c.module);
  RC_ASSERT(all_bit_equal(run_program_twice(p, c.inputs), run_eager_twice(*c.module, c.inputs)));
}

RC_GTEST_PROP(PassesProperty, PartitionPreservesOutputs, (const Recipe& r)) {
  Case c = build_recipe(r);
  Program ep = export_program(*c.module);
  Program p = partition(ep, {c.config.fallback_ops, c.config.min_block_size});
  RC_ASSERT(all_bit_equal(run_program_twice(p, c.inputs), run_program_twice(ep, c.inputs)));
}

RC_GTEST_PROP(PassesProperty, FlattenPreservesOutputsAndLints, (const Recipe& r)) {
  Case c = build_recipe(r);
  Program pm =
      partition(export_program(*c.module), {c.config.fallback_ops, c.config.min_block_size});
  Program fl = flatten(pm);
  lint_program(fl);
  RC_ASSERT(all_bit_equal(run_program_twice(fl, c.inputs), run_program_twice(pm, c.inputs)));
}

RC_GTEST_PROP(PassesProperty, UnflattenPreservesOutputs, (const Recipe& r)) {
  Case c = build_recipe(r);
  Program ep = export_program(*c.module);
  auto u = unflatten(ep);
  RC_ASSERT(all_bit_equal(run_eager_twice(*u, c.inputs), run_program_twice(ep, c.inputs)));
}

}  // namespace
}  // namespace flatcheck
