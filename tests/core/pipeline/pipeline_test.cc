// The pipeline object: stages built once from their inputs, configuration read, file stages
// recording their round trip.
#include "core/pipeline/pipeline.h"

#include <gtest/gtest.h>

#include "core/base/check.h"
#include "core/runtime/interpreter.h"
#include "generators/examples.h"

namespace flatcheck {
namespace {

int children_with_prefix(const Program& p, const std::string& prefix) {
  int n = 0;
  for (const auto& [k, _] : p.root->children) n += k.rfind(prefix, 0) == 0;
  return n;
}

TEST(PipelineTest, EachStageIsBuiltOnceFromItsInput) {
  Pipeline p(graph_break_example(), PipelineConfig{});
  const Artifact& flat = p.build(Stage::kFlattened);
  EXPECT_EQ(&flat, &p.build(Stage::kFlattened));
  EXPECT_EQ(flat.stage, Stage::kFlattened);
  // Building the flattened stage built its inputs: asking again returns the same objects.
  const Artifact& part = p.build(Stage::kPartitioned);
  EXPECT_EQ(&part, &p.build(Stage::kPartitioned));
  for (Stage s : all_stages()) EXPECT_EQ(p.build(s).stage, s) << stage_name(s);
}

TEST(PipelineTest, ProgramStagesHoldProgramsAndUnflattenedHoldsAModuleTree) {
  Pipeline p(unflatten_example(), PipelineConfig{});
  for (Stage s : path_stages()) {
    const Artifact& a = p.build(s);
    if (s == Stage::kUnflattened) {
      EXPECT_FALSE(a.program);
      ASSERT_TRUE(a.module);
      EXPECT_TRUE(a.module->children.count("n@1")) << "the second call is a variant";
    } else {
      EXPECT_TRUE(a.program) << stage_name(s);
    }
  }
}

TEST(PipelineTest, ThePartitionOptionsComeFromTheConfig) {
  PipelineConfig none;
  none.fallback_ops = {};
  none.min_block_size = 1;
  PipelineConfig relu;
  relu.fallback_ops = {"relu"};
  relu.min_block_size = 1;
  PipelineConfig huge_blocks = relu;
  huge_blocks.min_block_size = 1000;
  EXPECT_EQ(partition_options(relu).fallback_ops, std::set<std::string>{"relu"});
  EXPECT_EQ(partition_options(huge_blocks).min_block_size, 1000);
  Pipeline a(graph_break_example(), none), b(graph_break_example(), relu),
      c(graph_break_example(), huge_blocks);
  const Program& pa = *a.build(Stage::kPartitioned).program;
  const Program& pb = *b.build(Stage::kPartitioned).program;
  const Program& pc = *c.build(Stage::kPartitioned).program;
  EXPECT_EQ(children_with_prefix(pa, "_run_on_gpu_"), 0);
  EXPECT_GE(children_with_prefix(pb, "_run_on_gpu_"), 1);
  EXPECT_GE(children_with_prefix(pb, "_run_on_acc_"), 1);
  EXPECT_EQ(children_with_prefix(pc, "_run_on_acc_"), 0) << "every acc run is below the block size";
}

// Engines report every op they compute to the node observer, under the origin of the node it
// came from, with the value the eager module computed for that node (the oracle localizes a
// divergence inside an engine this way).
TEST(PipelineTest, EnginesReportEachOpToTheObserverWithTheEagerValue) {
  PipelineConfig all_acc;
  all_acc.fallback_ops = {};
  all_acc.min_block_size = 1;
  for (auto make : {graph_break_example, quickstart_example}) {
    auto eager = make();
    Pipeline p(eager, all_acc);
    Program prog = clone_program(*p.build(Stage::kPartitioned).program);
    std::set<std::string> engine_origins;
    for (const auto& [name, child] : prog.root->children)
      for (const auto& [en, e] : child->engines)
        for (const auto& op : e->ops)
          if (!op.origin.empty()) engine_origins.insert(op.origin);
    for (const auto& [en, e] : prog.root->engines)
      for (const auto& op : e->ops)
        if (!op.origin.empty()) engine_origins.insert(op.origin);
    ASSERT_FALSE(engine_origins.empty()) << "the example compiled no engine op";
    std::vector<Tensor> in;
    for (Node* ph : eager->graph.placeholders()) {
      Tensor t = Tensor::zeros(ph->meta.val->shape);
      for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = 0.25f * float(i) - 1.0f;
      in.push_back(t);
    }
    std::map<std::string, std::vector<float>> eager_values, program_values;
    RunContext ec;
    ec.observer = [&](const std::string& origin, std::string_view, const Value& v) {
      // an engine reports an op's first output: a split's first chunk
      if (v.tensor) eager_values.emplace(origin, v.tensor->data);
      if (!v.tuple.empty()) eager_values.emplace(origin, v.tuple[0]->data);
    };
    std::vector<Value> vin;
    for (const auto& t : in) vin.push_back(Value::of(t));
    run_module(*clone_module(*eager, /*share_state=*/false), vin, ec);  // runs update buffers
    RunContext pc;
    pc.observer = [&](const std::string& origin, std::string_view, const Value& v) {
      if (v.tensor) program_values.emplace(origin, v.tensor->data);
    };
    run_program(prog, in, pc);
    for (const std::string& o : engine_origins) {
      ASSERT_TRUE(program_values.count(o)) << o << ": an engine op the observer never saw";
      ASSERT_TRUE(eager_values.count(o)) << o << ": no eager node of that origin";
      EXPECT_EQ(program_values[o], eager_values[o]) << o;
    }
  }
}

TEST(PipelineTest, StagesThroughTheFileRecordTheirRoundTrip) {
  Pipeline p(graph_break_example(), PipelineConfig{});
  for (Stage s : {Stage::kReloaded, Stage::kUnflattened}) {
    const Artifact& a = p.build(s);
    EXPECT_FALSE(a.saved.empty()) << stage_name(s);
    EXPECT_EQ(a.saved, a.resaved) << stage_name(s);
  }
  EXPECT_TRUE(p.build(Stage::kFlattened).saved.empty());
}

TEST(PipelineTest, AnOverrideReplacesItsStageAndFeedsTheStagesAfterIt) {
  int calls = 0;
  const Program* seen = nullptr;
  StageOverrides o;
  o[Stage::kFlattened] = program_pass(Stage::kFlattened, [&](const Program& in) {
    ++calls;
    seen = &in;
    return clone_program(in);  // an identity "flatten": its children stay
  });
  Pipeline p(graph_break_example(), PipelineConfig{}, o);
  const Artifact& part = p.build(Stage::kPartitioned);
  EXPECT_EQ(calls, 0) << "the override runs only when its stage is built";
  p.build(Stage::kReloaded);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen, &*part.program) << "the override gets its input stage's program";
  Pipeline plain(graph_break_example(), PipelineConfig{});
  EXPECT_NE(p.build(Stage::kReloaded).saved.find("\"call_module\""), std::string::npos)
      << "the reloaded stage is built from the override's program";
  EXPECT_EQ(plain.build(Stage::kReloaded).saved.find("\"call_module\""), std::string::npos)
      << "the table's flatten leaves no call_module";
}

TEST(PipelineTest, AnOverrideMustBuildItsOwnStage) {
  StageOverrides wrong;
  wrong[Stage::kFlattened] =
      program_pass(Stage::kPartitioned, [](const Program& in) { return clone_program(in); });
  Pipeline p(graph_break_example(), PipelineConfig{}, wrong);
  EXPECT_THROW(p.build(Stage::kFlattened), InputError);
  StageOverrides eager;
  eager[Stage::kEager] = [](const Artifact& a, const PipelineConfig&) { return a; };
  EXPECT_THROW(Pipeline(graph_break_example(), PipelineConfig{}, eager), InputError);
  StageOverrides from_tree;
  from_tree[Stage::kExported] =
      program_pass(Stage::kExported, [](const Program& in) { return clone_program(in); });
  Pipeline q(graph_break_example(), PipelineConfig{}, from_tree);
  EXPECT_THROW(q.build(Stage::kExported), InputError) << "the eager stage is a module tree";
}

}  // namespace
}  // namespace flatcheck
