// Reach: which of the shapes real bugs need (harness/reach.def) a case has. Measured on the
// eager case, except those that need what reaches a pass: the Torch-TensorRT collision (the
// partitioned program) and nested-only variants as unflatten's dedup sees them (the
// unflattened program).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/ir/program.h"
#include "generators/case.h"

namespace flatcheck {

enum class Reach : uint8_t {
#define X(e, name, doc) e,
#include "harness/reach.def"
#undef X
  kCount
};
constexpr int kNumReach = static_cast<int>(Reach::kCount);

std::string_view reach_name(Reach r);
std::string_view reach_doc(Reach r);

using ReachBits = uint32_t;
static_assert(kNumReach <= 32);
constexpr ReachBits reach_bit(Reach r) {
  return ReachBits{1} << static_cast<int>(r);
}

// The shapes the eager case has.
ReachBits case_reach(const Case& c);
// kTrtCollision when the partitioned program has it.
ReachBits partition_reach(const Program& partitioned);
// kNestedOnlyUnflattened when two variants (`n`, `n@1`) of one module in the unflattened tree
// have graphs that are equal with call_module targets blanked (PyTorch's
// _check_graph_equivalence) and differ with them.
ReachBits unflatten_reach(const Module& unflattened);

}  // namespace flatcheck
