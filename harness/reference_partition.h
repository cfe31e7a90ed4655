// A reference partitioner: Torch-TensorRT's fast-partitioner rules (DESIGN §3, "Partition") as
// the simplest code that states them, one pass over the exported graph with no indexes, written
// apart from core/passes/partition.cc. The oracle compares every case's partitioned program
// with it (property `partition-spec`): the same runs in the same order, of the same kinds, with
// the same names, each holding the same ops. A partitioner whose runs differ but are internally
// consistent (another demotion threshold, runs not merged, a counter per kind, a node moved to
// a neighbouring run) computes the right numbers and keeps the pass rules; this check sees it.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/ir/program.h"
#include "harness/pass_rules.h"

namespace flatcheck {

// One run as the rules make it.
struct ReferenceRun {
  std::string name;  // _run_on_acc_<k> or _run_on_gpu_<k>, k counting every run
  bool acc = false;
  // The run's nodes, getitems aside, as "op@origin" in graph order (an engine holds no
  // getitems: a multi-output op writes all its outputs).
  std::vector<std::string> ops;
};

// The runs of the exported program's graph under `fallback_ops` and `min_block_size`.
std::vector<ReferenceRun> reference_partition(const Program& exported,
                                              const std::set<std::string>& fallback_ops,
                                              int min_block_size);

// Where the partitioned program differs from reference_partition (names, order, kinds, or the
// ops of a run), or nullopt.
std::optional<RuleBreach> partition_spec_breach(const Program& exported, const Program& partitioned,
                                                const std::set<std::string>& fallback_ops,
                                                int min_block_size);

}  // namespace flatcheck
