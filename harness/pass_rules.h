// What each pass must have done, checked by its rules rather than by its results, and the call
// structure unflatten must rebuild, derived from the eager module alone. None of this calls the
// passes or their helpers (graph_equal, the exporter's dead-code elimination): an expectation
// taken from the code under test cannot catch that code's mistakes.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/ir/ir.h"
#include "core/ir/program.h"

namespace flatcheck {

// A broken rule: what it says, and the op it concerns ("-" when none).
struct RuleBreach {
  std::string message;
  std::string op = "-";
};

// After partition: the parent graph holds only placeholders, child calls, getitems of child
// results and the output; every child is `_run_on_acc_<k>` (an engine of at least
// `min_block_size` nodes, no fallback op) or `_run_on_gpu_<k>` (holding a fallback op, or a
// demoted run shorter than `min_block_size`); the exported program's ops (getitems aside) are
// all there, each once, fallback ops in fallbacks.
std::optional<RuleBreach> partition_breach(const Program& exported, const Program& partitioned,
                                           const std::set<std::string>& fallback_ops,
                                           int min_block_size);

// After flatten: no child call and no child module left; one execute_engine per engine call of
// the partitioned program; the fallbacks' ops (getitems aside) all inlined; no dead code (a
// get_attr or pure op nobody uses).
std::optional<RuleBreach> flatten_breach(const Program& partitioned, const Program& flattened);

// Calls of each FQN (variants merged) that leave a live node after specialization and dead-code
// elimination, counted by an independent walk of the eager tree: static arguments fold
// branches, buffer writes are tracked to the value last written, and a value is live when an
// output or a buffer's final value depends on it. A call is live when a node inside it (at any
// depth) is.
std::map<std::string, int> expected_live_calls(const Module& eager);

// Structural equality by position: ops, targets (child names included), constants bit for
// bit, wiring, and the types of placeholders (a graph checks its inputs against them, so two
// graphs that differ only there are different programs). Names are not compared.
bool same_structure(const Graph& a, const Graph& b);

}  // namespace flatcheck
