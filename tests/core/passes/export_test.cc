// export: call keys in nn_module_stack, specialized calls, lifted state.
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

}  // namespace
}  // namespace flatcheck
