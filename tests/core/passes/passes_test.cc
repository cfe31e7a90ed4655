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

}  // namespace
}  // namespace flatcheck
