// The cross-backend differential check, proven without a GPU: a backend that perturbs one op's
// results by a known number of ulps must be reported at that op's node (and only when the
// perturbation exceeds the op's bound); an op a backend lacks is skipped, loudly.
#include "harness/backend_diff.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/runtime/cuda/cuda_backend.h"
#include "core/runtime/interpreter.h"
#include "generators/examples.h"
#include "generators/generate.h"
#include "harness/campaign.h"
#include "tests/support/recording_backend.h"

namespace flatcheck {
namespace {

// The CPU backend with every result of one op moved `ulps` steps up the float line.
class PerturbingBackend final : public CpuForwardingBackend {
 public:
  PerturbingBackend(OpCode op, int ulps) : op_(op), ulps_(ulps) {}
  std::string_view name() const override { return "perturbed"; }
  void run_kernel(OpCode op, const std::vector<TensorView>& in, const std::vector<Scalar>& sc,
                  const std::vector<TensorView>& out) override {
    cpu_backend().run_kernel(op, in, sc, out);
    if (op != op_) return;
    for (const auto& v : out)
      for (int64_t i = 0; i < numel(v.shape); ++i)
        for (int k = 0; k < ulps_ && std::isfinite(v.data[i]); ++k)
          v.data[i] = std::nextafter(v.data[i], INFINITY);
  }

 private:
  OpCode op_;
  int ulps_;
};

TEST(UlpPolicyTest, NanPayloadsAreRelaxedAndTheSignOfZeroIsKept) {
  float qnan = bits_float(0x7fc00000u), other_nan = bits_float(0x7fffffffu);
  EXPECT_TRUE(within_bound(qnan, other_nan, 0));
  EXPECT_FALSE(within_bound(qnan, 1.0f, 100));
  EXPECT_FALSE(within_bound(1.0f, qnan, 100));
  EXPECT_FALSE(within_bound(0.0f, -0.0f, 4));
  EXPECT_TRUE(within_bound(-0.0f, -0.0f, 0));
  float one_up = std::nextafter(1.0f, 2.0f);
  EXPECT_FALSE(within_bound(1.0f, one_up, 0));
  EXPECT_TRUE(within_bound(1.0f, one_up, 1));
  EXPECT_EQ(ulp_distance(-1e-45f, 1e-45f), 2);  // across zero on the ordered line
  EXPECT_EQ(ulp_distance(3.0f, std::nextafter(std::nextafter(3.0f, 9.0f), 9.0f)), 2);
}

Case generated(int64_t i) {
  return generate_case_for_seed(case_seed(11, i));
}

auto zero_bound = [](OpCode) { return 0; };

TEST(BackendDiffTest, IdenticalBackendsAgreeOnEveryKernel) {
  int64_t kernels = 0;
  for (int64_t i = 0; i < 30; ++i) {
    BackendDiffResult r = diff_backends(generated(i), cpu_backend(), cpu_backend(), zero_bound);
    EXPECT_FALSE(r.mismatch) << "case " << i << ": " << r.mismatch->op;
    EXPECT_EQ(r.error, "");
    kernels += r.kernels;
  }
  EXPECT_GT(kernels, 100);
}

// The first generated case (seed 11) that uses `op`.
Case first_case_with(OpCode op) {
  for (int64_t i = 0; i < 2000; ++i) {
    Case c = generated(i);
    BackendDiffResult r = diff_backends(c, cpu_backend(), cpu_backend(), zero_bound);
    if (r.per_op.count(std::string(op_info(op).name))) return c;
  }
  ADD_FAILURE() << "no generated case uses " << op_info(op).name;
  return generated(0);
}

TEST(BackendDiffTest, APerturbedKernelIsReportedAtItsNodeNamingBothBackends) {
  Case c = first_case_with(OpCode::kAdd);
  PerturbingBackend one_ulp(OpCode::kAdd, 1);
  BackendDiffResult r = diff_backends(c, cpu_backend(), one_ulp, cuda_ulp_bound);
  ASSERT_TRUE(r.mismatch);
  EXPECT_EQ(r.reference, "cpu");
  EXPECT_EQ(r.other, "perturbed");
  EXPECT_EQ(r.mismatch->op, "add");
  EXPECT_EQ(r.mismatch->bound, 0);
  EXPECT_NE(r.mismatch->origin, "");
  EXPECT_EQ(r.mismatch->program, "eager");
}

TEST(BackendDiffTest, ADifferenceWithinTheOpsBoundIsNotAMismatch) {
  Case c = first_case_with(OpCode::kTanh);
  int bound = cuda_ulp_bound(OpCode::kTanh);
  ASSERT_GT(bound, 0);
  PerturbingBackend within(OpCode::kTanh, bound), beyond(OpCode::kTanh, bound + 1);
  BackendDiffResult ok = diff_backends(c, cpu_backend(), within, cuda_ulp_bound);
  EXPECT_FALSE(ok.mismatch) << ok.mismatch->origin;
  EXPECT_GE(ok.max_ulps["tanh"], 1);
  BackendDiffResult bad = diff_backends(c, cpu_backend(), beyond, cuda_ulp_bound);
  ASSERT_TRUE(bad.mismatch);
  EXPECT_EQ(bad.mismatch->op, "tanh");
}

TEST(BackendDiffTest, EngineKernelsOfTheFlattenedProgramAreComparedToo) {
  Case c;
  c.module = graph_break_example();
  c.inputs = {Tensor({4, 4}, {1, 2, 3, 4, -1, -2, -3, -4, 0.5f, 0.25f, -0.5f, 3, 2, 1, 0, -1})};
  c.config.fallback_ops = {"relu"};
  c.config.min_block_size = 5;
  BackendDiffResult r = diff_backends(c, cpu_backend(), cpu_backend(), zero_bound);
  // The eager module alone, run as often, launches this many kernels: the rest are the
  // flattened program's (its engines and inlined fallbacks).
  RecordingBackend eager;
  auto m = clone_module(*c.module, false);
  for (int k = 0; k < c.config.calls; ++k) run_module(*m, c.inputs, eager);
  EXPECT_FALSE(r.mismatch);
  EXPECT_GT(r.kernels, eager.total()) << "the flattened program's kernels were not compared";
}

TEST(BackendDiffTest, OpsTheOtherBackendLacksAreSkippedLoudly) {
  Case c = first_case_with(OpCode::kSplit);
  RecordingBackend lacking;
  lacking.lack(OpCode::kSplit);
  BackendDiffResult r = diff_backends(c, cpu_backend(), lacking, zero_bound);
  EXPECT_FALSE(r.mismatch);
  EXPECT_EQ(r.skipped_ops.count("split"), 1u);
  EXPECT_EQ(r.per_op.count("split"), 0u);
}

}  // namespace
}  // namespace flatcheck
