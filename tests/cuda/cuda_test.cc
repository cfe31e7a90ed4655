// The CUDA runtime (label `cuda`). Without a device every test reports SKIPPED with the reason;
// it never passes silently.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "core/base/faults.h"
#include "core/ir/engine.h"
#include "core/passes/passes.h"
#include "core/runtime/cuda/cuda_backend.h"
#include "core/runtime/interpreter.h"
#include "generators/examples.h"
#include "generators/source.h"
#include "harness/backend_diff.h"
#include "harness/campaign.h"

namespace flatcheck {
namespace {

#define REQUIRE_CUDA()                              \
  do {                                              \
    std::string why;                                \
    if (!cuda_available(&why)) GTEST_SKIP() << why; \
  } while (0)

Tensor random_tensor(Rng& rng, Shape s) {
  Tensor t = Tensor::zeros(std::move(s));
  for (auto& x : t.data) x = static_cast<float>(rng.range(-4000, 4000)) / 997.0f;
  return t;
}

// ggml's test-backend-ops, for flatcheck's op table: every op with a kernel, CPU vs CUDA.
TEST(CudaKernelTest, EveryOpMatchesTheCpuWithinItsDocumentedBound) {
  REQUIRE_CUDA();
  Rng rng(1);
  for (int i = 0; i < kNumOps; ++i) {
    OpCode op = static_cast<OpCode>(i);
    if (!op_info(op).has_kernel) continue;
    std::vector<Tensor> in;
    std::vector<Scalar> sc;
    std::string_view sig = op_info(op).sig;
    if (op == OpCode::kMatmul) {
      in = {random_tensor(rng, {5, 7}), random_tensor(rng, {7, 3})};
    } else if (sig == "TT") {
      in = {random_tensor(rng, {4, 6}), random_tensor(rng, {6})};
      if (op == OpCode::kCopy) in[1] = random_tensor(rng, {4, 6});
    } else if (sig == "T") {
      in = {random_tensor(rng, {4, 6})};
    } else if (sig == "Tf") {
      in = {random_tensor(rng, {4, 6})};
      sc = {0.37f};
    } else if (op == OpCode::kSum) {
      in = {random_tensor(rng, {4, 6, 3})};
      sc = {int64_t{1}};
    } else if (op == OpCode::kReshape) {
      in = {random_tensor(rng, {4, 6})};
      sc = {std::vector<int64_t>{3, 8}};
    } else if (op == OpCode::kTranspose) {
      in = {random_tensor(rng, {4, 6, 2})};
      sc = {int64_t{0}, int64_t{2}};
    } else if (op == OpCode::kConcat) {
      in = {random_tensor(rng, {4, 6}), random_tensor(rng, {4, 2})};
      sc = {int64_t{1}};
    } else if (op == OpCode::kSplit) {
      in = {random_tensor(rng, {4, 6})};
      sc = {int64_t{1}, int64_t{3}};
    }
    std::vector<const Tensor*> ptrs;
    for (auto& t : in) ptrs.push_back(&t);
    auto want = run_op(cpu_backend(), op, ptrs, sc);
    auto got = run_op(cuda_backend(), op, ptrs, sc);
    ASSERT_EQ(want.size(), got.size()) << op_info(op).name;
    int bound = cuda_ulp_bound(op);
    for (size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ(want[k].shape, got[k].shape) << op_info(op).name;
      // The cross-device NaN policy: NaN-ness and the sign of zero kept, payloads relaxed
      // (sqrt of a negative is 0xffc00000 on the CPU, 0x7fffffff on NVIDIA GPUs).
      for (size_t e = 0; e < want[k].data.size(); ++e)
        ASSERT_TRUE(within_bound(want[k].data[e], got[k].data[e], bound))
            << op_info(op).name << " element " << e << ": cpu " << want[k].data[e] << " cuda "
            << got[k].data[e];
    }
  }
}

TEST(CudaEngineTest, EnginesRunInOneArenaAndGraphReplayMatchesPlainLaunches) {
  REQUIRE_CUDA();
  Program pm = partition(export_program(*graph_break_example()), {{"relu"}, 5});
  auto engine = pm.root->children.at("_run_on_acc_2")->engine("engine");
  ASSERT_TRUE(engine);
  Tensor x({2, 4}, {0.5f, -1, 2, 0.25f, 3, -0.5f, 1, 0});
  auto cpu = run_engine(cpu_backend(), *engine, {&x});
  cuda_use_graphs(false);
  int64_t replays = cuda_graph_replays();
  auto plain = run_engine(cuda_backend(), *engine, {&x});
  auto plain2 = run_engine(cuda_backend(), *engine, {&x});
  EXPECT_EQ(cuda_graph_replays(), replays) << "graphs were replayed while switched off";
  cuda_use_graphs(true);
  auto first = run_engine(cuda_backend(), *engine, {&x});   // captured
  auto second = run_engine(cuda_backend(), *engine, {&x});  // replayed when the arena repeats
  auto third = run_engine(cuda_backend(), *engine, {&x});
  cuda_use_graphs(false);
  EXPECT_GT(cuda_graph_replays(), replays) << "cuda_use_graphs(true) never replayed a graph";
  ASSERT_EQ(plain.size(), cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_TRUE(plain[i].bit_equal(plain2[i]));
    EXPECT_TRUE(plain[i].bit_equal(first[i]));
    EXPECT_TRUE(plain[i].bit_equal(second[i]));
    EXPECT_TRUE(plain[i].bit_equal(third[i]));
  }
}

TEST(CudaCampaignTest, EveryPathIsBitIdenticalOnTheGpu) {
  REQUIRE_CUDA();
  CampaignOptions o;
  o.seed = 1;
  o.cases = 300;
  o.out_dir = "";
  o.oracle.device = Device::kCuda;
  CampaignResult r = run_campaign(o);
  EXPECT_EQ(r.cases, 300);
  EXPECT_EQ(r.backend, "cuda");
  EXPECT_TRUE(r.findings.empty()) << r.findings.front().failure.message;
}

TEST(CudaCampaignTest, AMissingStreamSynchronizationIsFound) {
  REQUIRE_CUDA();
  ScopedFault f(Fault::kCudaMissingSync);
  CampaignOptions o;
  o.seed = 1;
  o.cases = 2000;
  o.out_dir = "";
  o.stop_at_first = true;
  o.oracle.device = Device::kCuda;
  CampaignResult r = run_campaign(o);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings.front().failure.stage, "partitioned");
}

}  // namespace
}  // namespace flatcheck
