// Properties of every pass over generated programs: outputs preserved, lint clean.
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

// export puts user outputs first and buffer mutations after them; torch.export's functional
// IR puts the mutations first, and a loaded program may interleave them. The passes read the
// signature, not the order: with the mutation outputs moved to drawn places among the user
// outputs (each kind in its own order), unflatten still runs like the eager module, and
// partition and flatten still run like the reordered program. Generated cases with buffer
// updates, from fixed seeds, until 60 have had a mutation moved.
TEST(PassesTest, PassesTakeBufferMutationsAnywhereAmongTheOutputs) {
  int moved = 0;
  for (uint64_t seed = 1; seed <= 2000 && moved < 60; ++seed) {
    Rng rng(seed);
    Case c = generate_case(rng, GenOptions{10, 3, 4});
    Program ep = export_program(*c.module);
    Node* out = ep.root->graph.output_node();
    std::vector<size_t> users, mutations;
    for (size_t i = 0; i < ep.sig.outputs.size(); ++i)
      (ep.sig.outputs[i].kind == OutputSpec::kBufferMutation ? mutations : users).push_back(i);
    if (mutations.empty() || users.empty()) continue;
    std::vector<size_t> order;
    size_t u = 0, m = 0;
    while (u < users.size() || m < mutations.size()) {
      bool mutation_next = m < mutations.size() && (u == users.size() || rng.chance(2, 3));
      order.push_back(mutation_next ? mutations[m++] : users[u++]);
    }
    if (std::is_sorted(order.begin(), order.end())) continue;
    ++moved;
    std::vector<Arg> args;
    std::vector<OutputSpec> specs;
    for (size_t i : order) {
      args.push_back(out->args[i]);
      specs.push_back(ep.sig.outputs[i]);
    }
    out->args = args;
    ep.sig.outputs = specs;
    SCOPED_TRACE("seed " + std::to_string(seed));
    ASSERT_NO_THROW(lint_program(ep));
    auto uf = unflatten(ep);
    EXPECT_TRUE(
        all_bit_equal(run_eager_twice(*uf, c.inputs), run_eager_twice(*c.module, c.inputs)));
    Program fl = flatten(partition(ep, {c.config.fallback_ops, c.config.min_block_size}));
    ASSERT_NO_THROW(lint_program(fl));
    EXPECT_TRUE(all_bit_equal(run_program_twice(fl, c.inputs), run_program_twice(ep, c.inputs)));
  }
  EXPECT_EQ(moved, 60);
}

}  // namespace
}  // namespace flatcheck
