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
