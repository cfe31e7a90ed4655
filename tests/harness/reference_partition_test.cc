// The reference partitioner (harness/reference_partition.h): its runs worked out by hand from
// DESIGN §3's rule, the real partitioner agrees with it on generated cases, and partitioners
// whose runs differ but stay internally consistent (another threshold, one more fallback op, run
// names counted per kind) are caught by the oracle as property `partition-spec`.
#include "harness/reference_partition.h"

#include <gtest/gtest.h>

#include "core/passes/passes.h"
#include "core/pipeline/pipeline.h"
#include "generators/generate.h"
#include "harness/oracle.h"
#include "tests/support/programs.h"

namespace flatcheck {
namespace {

using testing_support::chain_module;

// s = split(x, 0, 2); r = relu(x); getitems of s after the relu; add; mul(.., r).
std::shared_ptr<Module> split_module() {
  auto m = std::make_shared<Module>();
  Graph& g = m->graph;
  Node* x = g.placeholder("x", ValueType::tensor({4}));
  Node* s = g.call_function(OpCode::kSplit, {x, int64_t{0}, int64_t{2}});
  Node* r = g.call_function(OpCode::kRelu, {x});
  Node* g0 = g.call_function(OpCode::kGetitem, {s, int64_t{0}});
  Node* g1 = g.call_function(OpCode::kGetitem, {s, int64_t{1}});
  Node* a = g.call_function(OpCode::kAdd, {g0, g1});
  Node* r2 = g.call_function(OpCode::kSplit, {r, int64_t{0}, int64_t{2}});
  Node* r0 = g.call_function(OpCode::kGetitem, {r2, int64_t{0}});
  Node* b = g.call_function(OpCode::kMul, {a, r0});
  g.output({b});
  infer_types(*m);
  return m;
}

// "name: op op op" per run, origins left out.
std::vector<std::string> runs_text(const std::vector<ReferenceRun>& runs) {
  std::vector<std::string> out;
  for (const ReferenceRun& r : runs) {
    std::string s = r.name + ":";
    for (const std::string& op : r.ops) s += " " + op.substr(0, op.find('@'));
    out.push_back(s);
  }
  return out;
}

std::vector<std::string> runs_of(const Module& m, std::set<std::string> fallback, int min_block) {
  return runs_text(reference_partition(export_program(m), fallback, min_block));
}

using Runs = std::vector<std::string>;

TEST(ReferencePartitionTest, RunsWorkedOutByHand) {
  auto chain = chain_module();
  // relu | add mul sub | neg | sigmoid: the one-node acc run is demoted and merges with neg.
  EXPECT_EQ(
      runs_of(*chain, {"relu", "neg"}, 3),
      (Runs{"_run_on_gpu_0: relu", "_run_on_acc_1: add mul sub", "_run_on_gpu_2: neg sigmoid"}));
  // Both acc runs demoted: one fallback run holds everything.
  EXPECT_EQ(runs_of(*chain, {"relu", "neg"}, 4),
            (Runs{"_run_on_gpu_0: relu add mul sub neg sigmoid"}));
  // No fallback op: one acc run, or one demoted run.
  EXPECT_EQ(runs_of(*chain, {}, 6), (Runs{"_run_on_acc_0: relu add mul sub neg sigmoid"}));
  EXPECT_EQ(runs_of(*chain, {}, 7), (Runs{"_run_on_gpu_0: relu add mul sub neg sigmoid"}));
  // The counter is shared by both kinds.
  EXPECT_EQ(runs_of(*chain, {"mul"}, 2), (Runs{"_run_on_acc_0: relu add", "_run_on_gpu_1: mul",
                                               "_run_on_acc_2: sub neg sigmoid"}));
}

TEST(ReferencePartitionTest, GetitemsFollowTheirTupleAndCountTowardItsRun) {
  auto m = split_module();
  // The first split's getitems come after relu but join the split's run: split + 2 getitems
  // is 3 nodes, an engine at min_block_size 3 (1 node without them). The second run is add,
  // split, its getitem and mul: 4 nodes.
  EXPECT_EQ(runs_of(*m, {"relu"}, 3),
            (Runs{"_run_on_acc_0: split", "_run_on_gpu_1: relu", "_run_on_acc_2: add split mul"}));
  // At 4 the first run is demoted and merges with relu's; at 5 both are, into one run.
  EXPECT_EQ(runs_of(*m, {"relu"}, 4),
            (Runs{"_run_on_gpu_0: split relu", "_run_on_acc_1: add split mul"}));
  EXPECT_EQ(runs_of(*m, {"relu"}, 5), (Runs{"_run_on_gpu_0: split relu add split mul"}));
}

TEST(ReferencePartitionTest, TheRealPartitionerAgreesOnGeneratedCases) {
  for (uint64_t seed = 1; seed <= 150; ++seed) {
    Case c = generate_case_for_seed(seed);
    Program e = export_program(*c.module);
    Program p = partition(e, partition_options(c.config));
    auto b = partition_spec_breach(e, p, c.config.fallback_ops, c.config.min_block_size);
    EXPECT_FALSE(b) << "seed " << seed << ": " << b->message;
  }
}

// The real partition's output with its runs renamed by a counter per kind
// (_run_on_gpu_0, _run_on_acc_0, _run_on_gpu_1, ...): the same numbers, other names.
Program renamed_per_kind(Program p) {
  int acc = 0, gpu = 0;
  std::map<std::string, std::shared_ptr<Module>> children;
  for (Node* n = p.root->graph.first(); n; n = n->next) {
    if (n->op != NodeOp::kCallModule) continue;
    bool is_acc = n->target.rfind("_run_on_acc_", 0) == 0;
    std::string name =
        (is_acc ? "_run_on_acc_" : "_run_on_gpu_") + std::to_string(is_acc ? acc++ : gpu++);
    children[name] = p.root->children.at(n->target);
    n->target = name;
  }
  p.root->children = std::move(children);
  return p;
}

// A partitioned stage built by `pass` from the exported program and the case's options.
StageOverrides partitioned_by(std::function<Program(const Program&, PartitionOptions)> pass) {
  StageOverrides o;
  o[Stage::kPartitioned] = [pass](const Artifact& in, const PipelineConfig& config) {
    Artifact a;
    a.stage = Stage::kPartitioned;
    a.program = pass(*in.program, partition_options(config));
    return a;
  };
  return o;
}

// How many of the first `cases` generated cases fail, by property.
std::map<std::string, int> failures_by_property(const StageOverrides& stages, int cases) {
  std::map<std::string, int> out;
  for (uint64_t seed = 1; seed <= static_cast<uint64_t>(cases); ++seed) {
    OracleOptions o;
    o.stages = stages;
    OracleResult r = check_case(generate_case_for_seed(seed), o);
    if (r.failure) ++out[r.failure->property];
  }
  return out;
}

TEST(ReferencePartitionTest, ConsistentButWrongPartitionersAreCaught) {
  using Pass = std::function<Program(const Program&, PartitionOptions)>;
  // The real partitioner through the same override: nothing fails.
  Pass real = [](const Program& e, PartitionOptions o) { return partition(e, o); };
  EXPECT_EQ(failures_by_property(partitioned_by(real), 60), (std::map<std::string, int>{}));
  const std::vector<std::pair<std::string, Pass>> wrong = {
      {"run names counted per kind",
       [](const Program& e, PartitionOptions o) { return renamed_per_kind(partition(e, o)); }},
      {"min_block_size one higher",
       [](const Program& e, PartitionOptions o) {
         ++o.min_block_size;
         return partition(e, o);
       }},
      {"mul run as a fallback too",
       [](const Program& e, PartitionOptions o) {
         o.fallback_ops.insert("mul");
         return partition(e, o);
       }},
  };
  for (const auto& [what, pass] : wrong) {
    std::map<std::string, int> got = failures_by_property(partitioned_by(pass), 60);
    EXPECT_GT(got["partition-spec"], 0) << what;
    got.erase("partition-spec");
    got.erase("rule");  // the pass rules may see some of them first
    EXPECT_EQ(got, (std::map<std::string, int>{})) << what << ": no other property, no error";
  }
}

}  // namespace
}  // namespace flatcheck
