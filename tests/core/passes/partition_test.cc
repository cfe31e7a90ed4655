// partition: demoted and merged runs, engines with folded parameters.
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
#include "harness/oracle.h"
#include "tests/support/programs.h"

namespace flatcheck {
namespace {

using namespace testing_support;

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

// Partition names the signature's entries after its own graph (a reserved name like `input`
// becomes `input_1` there); a program whose signature has more or fewer entries than the graph
// has placeholders or outputs is refused, never indexed past its end.
TEST(PartitionTest, ASignatureOfAnotherLengthIsRefusedNotOverrun) {
  for (int edit = 0; edit < 4; ++edit) {
    Program ep = export_program(*graph_break_example());
    if (edit == 0) ep.sig.inputs.pop_back();
    if (edit == 1) ep.sig.inputs.push_back(ep.sig.inputs.back());
    if (edit == 2) ep.sig.outputs.pop_back();
    if (edit == 3) ep.sig.outputs.push_back(ep.sig.outputs.back());
    try {
      partition(ep, {{"relu"}, 5});
      ADD_FAILURE() << "edit " << edit << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("signature"), std::string::npos) << e.what();
    }
  }
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

}  // namespace
}  // namespace flatcheck

namespace flatcheck {
namespace {

// A getitem of a tuple can come after other runs (a split read, a fallback op, then the split's
// other half read): it goes with the node that made the tuple, so no tuple crosses a run and
// every engine's inputs are tensors. Several arrangements of the class, through every path.
TEST(PartitionTest, AGetitemAfterAnotherRunGoesWithItsTuple) {
  struct Shape_ {
    const char* what;
    std::vector<std::string> fallback;
    int min_block;
    bool split_in_fallback, two_late, late_used_by_acc;
  };
  const Shape_ kShapes[] = {
      {"acc split, relu fallback, late getitem returned", {"relu"}, 1, false, false, false},
      {"acc split, two late getitems", {"relu"}, 2, false, true, false},
      {"late getitem feeding an acc op", {"relu"}, 1, false, false, true},
      {"fallback split, acc ops between", {"split"}, 1, true, false, true},
      {"fallback split, two late getitems", {"split", "relu"}, 3, true, true, false},
  };
  for (const auto& s : kShapes) {
    auto root = std::make_shared<Module>();
    root->type = "M";
    Graph& g = root->graph;
    Node* x = g.placeholder("x", ValueType::tensor({4}));
    Node* sp = g.call_function(OpCode::kSplit, {x, int64_t{0}, int64_t{2}});
    Node* first = g.call_function(OpCode::kGetitem, {sp, int64_t{0}});
    Node* a = g.call_function(OpCode::kAdd, {first, first});
    Node* r = g.call_function(OpCode::kRelu, {a});
    Node* b = g.call_function(OpCode::kNeg, {r});
    Node* late = g.call_function(OpCode::kGetitem, {sp, int64_t{1}});
    std::vector<Arg> outs{b, late};
    if (s.two_late) outs.emplace_back(g.call_function(OpCode::kGetitem, {sp, int64_t{0}}));
    if (s.late_used_by_acc) outs[1] = g.call_function(OpCode::kMul, {late, b});
    g.output(std::move(outs));
    infer_types(*root);
    Case c;
    c.module = root;
    c.inputs = {Tensor({4}, {1, -2, 3, -4})};
    c.config.fallback_ops = std::set<std::string>(s.fallback.begin(), s.fallback.end());
    c.config.min_block_size = s.min_block;
    c.config.calls = 2;
    OracleResult res = check_case(c);
    EXPECT_FALSE(res.failure) << s.what << ": " << res.failure->signature() << ": "
                              << res.failure->message;
  }
}

}  // namespace
}  // namespace flatcheck
