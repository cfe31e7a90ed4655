// CPU kernels against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <set>

#include "core/base/check.h"
#include "core/ir/engine.h"
#include "core/passes/passes.h"
#include "core/runtime/interpreter.h"
#include "generators/examples.h"
#include "tests/support/recording_backend.h"

namespace flatcheck {
namespace {

Tensor op1(OpCode op, std::vector<Tensor> in, std::vector<Scalar> sc = {}) {
  std::vector<const Tensor*> ptrs;
  for (auto& t : in) ptrs.push_back(&t);
  return run_op(cpu_backend(), op, ptrs, sc).at(0);
}

// The CPU backend's memory is the host's: run_op hands its kernels the tensors' own memory
// (no device buffer and no copies), which is what host_visible tells it.
TEST(KernelTest, TheCpuBackendSaysItsMemoryIsTheHosts) {
  EXPECT_TRUE(cpu_backend().host_visible());
  EXPECT_EQ(cpu_backend().name(), "cpu");
}

TEST(KernelTest, AddBroadcastsARowOverAMatrix) {
  Tensor a({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b({3}, {10, 20, 30});
  Tensor c = op1(OpCode::kAdd, {a, b});
  EXPECT_EQ(c.shape, (Shape{2, 3}));
  EXPECT_EQ(c.data, (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST(KernelTest, BroadcastsAColumn) {
  Tensor a({2, 2}, {1, 2, 3, 4});
  Tensor b({2, 1}, {10, 100});
  EXPECT_EQ(op1(OpCode::kMul, {a, b}).data, (std::vector<float>{10, 20, 300, 400}));
}

TEST(KernelTest, MatmulMatchesTheHandComputedProduct) {
  Tensor a({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b({3, 2}, {7, 8, 9, 10, 11, 12});
  // [1*7+2*9+3*11, 1*8+2*10+3*12; 4*7+5*9+6*11, 4*8+5*10+6*12]
  EXPECT_EQ(op1(OpCode::kMatmul, {a, b}).data, (std::vector<float>{58, 64, 139, 154}));
}

TEST(KernelTest, SumTransposeConcatSplit) {
  Tensor a({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(op1(OpCode::kSum, {a}, {int64_t{1}}).data, (std::vector<float>{6, 15}));
  EXPECT_EQ(op1(OpCode::kSum, {a}, {int64_t{0}}).data, (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(op1(OpCode::kTranspose, {a}, {int64_t{0}, int64_t{1}}).data,
            (std::vector<float>{1, 4, 2, 5, 3, 6}));
  Tensor cat = op1(OpCode::kConcat, {a, a}, {int64_t{1}});
  EXPECT_EQ(cat.shape, (Shape{2, 6}));
  EXPECT_EQ(cat.data, (std::vector<float>{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}));
  std::vector<const Tensor*> in{&cat};
  auto halves = run_op(cpu_backend(), OpCode::kSplit, in, {int64_t{1}, int64_t{2}});
  ASSERT_EQ(halves.size(), 2u);
  EXPECT_TRUE(halves[0].bit_equal(a));
  EXPECT_TRUE(halves[1].bit_equal(a));
}

// A wrong memory plan (the memory-plan-overlap fault) can hand a copy kernel overlapping slots;
// the result must be wrong numbers the oracle sees, never undefined behaviour (ASan checks this).
TEST(KernelTest, ConcatAndSplitCopyOverlappingSlotsAsMemmove) {
  std::vector<float> arena{1, 2, 3, 4, 5, 6};
  TensorView src{arena.data() + 1, Shape{4}}, dst{arena.data(), Shape{4}};
  cpu_backend().run_kernel(OpCode::kConcat, {src}, {int64_t{0}}, {dst});
  EXPECT_EQ(arena, (std::vector<float>{2, 3, 4, 5, 5, 6}));
  arena = {1, 2, 3, 4, 5, 6};
  TensorView whole{arena.data(), Shape{4}}, lo{arena.data() + 1, Shape{2}},
      hi{arena.data() + 3, Shape{2}};
  cpu_backend().run_kernel(OpCode::kSplit, {whole}, {int64_t{0}, int64_t{2}}, {lo, hi});
  EXPECT_EQ(arena, (std::vector<float>{1, 1, 2, 2, 4, 6}));
}

TEST(KernelTest, ScalarFormsAndUnaryOps) {
  Tensor a({3}, {-2, 0.5f, 4});
  EXPECT_EQ(op1(OpCode::kAddScalar, {a}, {1.5f}).data, (std::vector<float>{-0.5f, 2, 5.5f}));
  EXPECT_EQ(op1(OpCode::kRelu, {a}).data, (std::vector<float>{0, 0.5f, 4}));
  EXPECT_EQ(op1(OpCode::kNeg, {a}).data, (std::vector<float>{2, -0.5f, -4}));
  EXPECT_EQ(op1(OpCode::kAbs, {a}).data, (std::vector<float>{2, 0.5f, 4}));
}

// Expected bits observed from torch 1.13's CPU kernels (Debian python3-torch, x86-64):
// torch.relu, torch.maximum, torch.minimum, + - * / on the same inputs.
TEST(KernelTest, SignedZerosAndNanPayloadsAsTorchsCpuKernels) {
  auto bits = [](const Tensor& t) {
    std::vector<uint32_t> out;
    for (float f : t.data) out.push_back(float_bits(f));
    return out;
  };
  auto f = [](uint32_t u) { return bits_float(u); };
  Tensor x({5}, {-0.0f, 0.0f, -1.0f, f(0x7fc00001u), f(0x7f800001u)});
  EXPECT_EQ(bits(op1(OpCode::kRelu, {x})),
            (std::vector<uint32_t>{0x80000000u, 0, 0, 0x7fc00001u, 0x7fc00001u}));
  Tensor a({6}, {0.0f, -0.0f, f(0x7fc00001u), 1.0f, f(0x7fc00001u), f(0xffc00003u)});
  Tensor b({6}, {-0.0f, 0.0f, 1.0f, f(0x7fc00002u), f(0x7fc00002u), f(0x7fc00004u)});
  const std::vector<uint32_t> canonical = {0,           0x80000000u, 0x7fc00000u,
                                           0x7fc00000u, 0x7fc00000u, 0x7fc00000u};
  EXPECT_EQ(bits(op1(OpCode::kMaximum, {a, b})), canonical);
  EXPECT_EQ(bits(op1(OpCode::kMinimum, {a, b})), canonical);
  EXPECT_EQ(bits(op1(OpCode::kAdd, {a, b})),
            (std::vector<uint32_t>{0, 0, 0x7fc00001u, 0x7fc00002u, 0x7fc00002u, 0x7fc00004u}));
  EXPECT_EQ(
      bits(op1(OpCode::kSub, {a, b})),
      (std::vector<uint32_t>{0, 0x80000000u, 0x7fc00001u, 0x7fc00002u, 0x7fc00002u, 0x7fc00004u}));
  EXPECT_EQ(bits(op1(OpCode::kMul, {a, b})),
            (std::vector<uint32_t>{0x80000000u, 0x80000000u, 0x7fc00001u, 0x7fc00002u, 0x7fc00002u,
                                   0x7fc00004u}));
  EXPECT_EQ(bits(op1(OpCode::kDiv, {a, b})),
            (std::vector<uint32_t>{0xffc00000u, 0xffc00000u, 0x7fc00001u, 0x7fc00002u, 0x7fc00001u,
                                   0xffc00003u}));
}

TEST(KernelTest, ShapeRulesRejectMismatches) {
  EXPECT_THROW(op1(OpCode::kAdd, {Tensor::zeros({2}), Tensor::zeros({3})}), InputError);
  EXPECT_THROW(op1(OpCode::kMatmul, {Tensor::zeros({2, 3}), Tensor::zeros({2, 3})}), InputError);
  EXPECT_THROW(op1(OpCode::kReshape, {Tensor::zeros({2, 3})}, {std::vector<int64_t>{4}}),
               InputError);
}

}  // namespace
}  // namespace flatcheck
