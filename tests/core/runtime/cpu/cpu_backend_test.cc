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

// Every CPU kernel writes its outputs' elements and nothing else: inputs and outputs are laid
// out in one arena with guard floats before and after each, and after the kernel every guard
// and every input holds its old bits. The table has an entry for every op with a kernel.
TEST(KernelTest, EveryKernelWritesOnlyItsOutputs) {
  struct Call {
    OpCode op;
    std::vector<Shape> in;
    std::vector<Scalar> scalars;
  };
  const Shape m{2, 3};
  std::vector<Call> calls;
  for (OpCode op : {OpCode::kAbs, OpCode::kNeg, OpCode::kRelu, OpCode::kTanh, OpCode::kSigmoid,
                    OpCode::kSqrt, OpCode::kExp, OpCode::kClone})
    calls.push_back({op, {m}, {}});
  for (OpCode op : {OpCode::kAdd, OpCode::kSub, OpCode::kMul, OpCode::kDiv, OpCode::kMaximum,
                    OpCode::kMinimum, OpCode::kCopy})
    calls.push_back({op, {m, m}, {}});
  for (OpCode op : {OpCode::kAddScalar, OpCode::kSubScalar, OpCode::kMulScalar, OpCode::kDivScalar})
    calls.push_back({op, {m}, {1.5f}});
  calls.push_back({OpCode::kMatmul, {m, {3, 2}}, {}});
  calls.push_back({OpCode::kSum, {m}, {int64_t{1}}});
  calls.push_back({OpCode::kTranspose, {m}, {int64_t{0}, int64_t{1}}});
  calls.push_back({OpCode::kReshape, {m}, {std::vector<int64_t>{3, 2}}});
  calls.push_back({OpCode::kConcat, {m, {1, 3}}, {int64_t{0}}});
  calls.push_back({OpCode::kSplit, {{4, 3}}, {int64_t{0}, int64_t{2}}});
  std::set<OpCode> listed;
  for (const Call& c : calls) listed.insert(c.op);
  for (int i = 0; i < kNumOps; ++i) {  // the interpreter runs these three itself
    auto op = static_cast<OpCode>(i);
    if (op != OpCode::kGetitem && op != OpCode::kBranch && op != OpCode::kExecuteEngine)
      EXPECT_TRUE(listed.count(op)) << op_info(op).name << " has no entry";
  }

  constexpr int kGuard = 5;
  // Guards and unwritten outputs: a NaN of its own per place, which no kernel makes and a
  // copy from another place cannot match.
  auto guard = [](size_t j) { return bits_float(0x7fc10000u + static_cast<uint32_t>(j)); };
  for (const Call& c : calls) {
    std::vector<Shape> out_shapes = infer_shapes(c.op, c.in, c.scalars);
    std::vector<std::pair<size_t, Shape>> at;  // offset and shape of each input, then output
    size_t size = kGuard;
    for (const auto& list : {c.in, out_shapes})
      for (const Shape& sh : list) {
        at.emplace_back(size, sh);
        size += static_cast<size_t>(numel(sh)) + kGuard;
      }
    std::vector<float> arena(size);
    for (size_t j = 0; j < size; ++j) arena[j] = guard(j);
    for (size_t k = 0; k < c.in.size(); ++k)
      for (int64_t j = 0; j < numel(c.in[k]); ++j)
        arena[at[k].first + static_cast<size_t>(j)] = 0.25f * static_cast<float>(j + 1 + 7 * k);
    const std::vector<float> before = arena;
    std::vector<TensorView> in, out;
    for (size_t k = 0; k < at.size(); ++k)
      (k < c.in.size() ? in : out).push_back({arena.data() + at[k].first, at[k].second});
    cpu_backend().run_kernel(c.op, in, c.scalars, out);
    for (size_t j = 0; j < arena.size(); ++j) {
      bool in_output = false;
      for (size_t k = c.in.size(); k < at.size(); ++k)
        in_output |= j >= at[k].first && j < at[k].first + static_cast<size_t>(numel(at[k].second));
      if (in_output) {
        EXPECT_NE(float_bits(arena[j]), float_bits(guard(j)))
            << op_info(c.op).name << " left " << j;
      } else {
        EXPECT_EQ(float_bits(arena[j]), float_bits(before[j]))
            << op_info(c.op).name << " wrote " << j;
      }
    }
  }
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
