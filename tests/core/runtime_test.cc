// Kernels against hand-computed values, the interpreter (static arguments, buffers, shared
// storage) and engines (bit-identical to the interpreter, memory plan, validation).
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

// ----------------------------------------------------------------------------- interpreter

TEST(InterpreterTest, UnflattenExampleReturns16WithDifferentFlags) {
  auto m = unflatten_example(false);
  auto out = run_module(*m, std::vector<Tensor>{Tensor::full({1}, 1.0f)});
  // (1 + 3) + 1 = 5; + 4 = 9; + 2 = 11; + 5 = 16
  EXPECT_EQ(out.at(0).data, std::vector<float>{16});
}

TEST(InterpreterTest, UnflattenExampleReturns15WithTheSameFlag) {
  auto m = unflatten_example(true);
  auto out = run_module(*m, std::vector<Tensor>{Tensor::full({1}, 1.0f)});
  EXPECT_EQ(out.at(0).data, std::vector<float>{15});
}

TEST(InterpreterTest, BufferUpdatesPersistAcrossCalls) {
  auto m = quickstart_example();
  Tensor x({2, 2}, {1, 2, 3, 4});
  TensorPtr steps = m->children.at("block")->buffers.at("steps");
  run_module(*m, std::vector<Tensor>{x});
  EXPECT_EQ(steps->data, (std::vector<float>{2, 2, 2, 2}));  // block runs twice a call
  run_module(*m, std::vector<Tensor>{x});
  EXPECT_EQ(steps->data, (std::vector<float>{4, 4, 4, 4}));
}

TEST(InterpreterTest, SharedStorageIsSeenByEveryModule) {
  auto m = quickstart_example();
  auto twin = clone_module(*m->children.at("block"), /*share_state=*/true);
  EXPECT_EQ(twin->buffers.at("steps"), m->children.at("block")->buffers.at("steps"));
  run_module(*m, std::vector<Tensor>{Tensor::zeros({2, 2})});
  EXPECT_EQ(twin->buffers.at("steps")->data[0], 2.0f);
}

TEST(InterpreterTest, RejectsInputsOfTheWrongShape) {
  auto m = unflatten_example(false);
  EXPECT_THROW(run_module(*m, std::vector<Tensor>{Tensor::zeros({3})}), InputError);
  EXPECT_THROW(run_module(*m, std::vector<Tensor>{}), InputError);
}

// ----------------------------------------------------------------------------------- engines

// A chain of unary ops: every intermediate dies at the next step, so the plan reuses memory.
Module chain(int n) {
  Module m;
  Graph& g = m.graph;
  Node* v = g.placeholder("x", ValueType::tensor({4}));
  for (int i = 0; i < n; ++i) v = g.call_function(i % 2 ? OpCode::kNeg : OpCode::kTanh, {v});
  g.output({v});
  infer_types(m);
  return m;
}

TEST(EngineTest, ComputesExactlyWhatTheSubgraphComputes) {
  Module m = chain(9);
  Engine e = compile_engine(m, "e", {});
  Tensor x({4}, {0.1f, -2.0f, 3.5f, bits_float(0x80000000u)});
  auto want = run_module(m, std::vector<Tensor>{x});
  auto got = run_engine(cpu_backend(), e, {&x});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].bit_equal(want[0]));
}

TEST(EngineTest, ALaunchThatThrowsEndsTheCaptureItBegan) {
  Module m = chain(4);
  Engine e = compile_engine(m, "e", {});
  Tensor x = Tensor::full({4}, 0.5f);
  RecordingBackend rec;
  run_engine(rec, e, {&x});
  EXPECT_EQ(rec.begins_, 1);
  EXPECT_EQ(rec.ends_, 1);
  EXPECT_EQ(rec.aborts_, 0);
  rec.throw_on(OpCode::kNeg);
  EXPECT_THROW(run_engine(rec, e, {&x}), std::runtime_error);
  EXPECT_EQ(rec.begins_, 2);
  EXPECT_EQ(rec.ends_, 1);
  EXPECT_EQ(rec.aborts_, 1);
}

TEST(EngineTest, EveryEngineAndEveryCopyHasAnIdentityNeverSeenBefore) {
  std::set<uint64_t> seen;
  for (int i = 0; i < 50; ++i) {
    auto e = std::make_unique<Engine>(compile_engine(chain(2), "e", {}));
    Engine copy = *e;
    EXPECT_TRUE(seen.insert(e->id.value).second);
    EXPECT_TRUE(seen.insert(copy.id.value).second);
    copy = *e;
    EXPECT_TRUE(seen.insert(copy.id.value).second);
  }  // each engine is freed here, and a later one may take its address, never its id
}

TEST(EngineTest, MemoryPlanReusesSlotsOfDeadValues) {
  Module m = chain(10);
  Engine e = compile_engine(m, "e", {});
  int64_t total = 0;
  for (const auto& s : e.slots) total += numel(s.shape);
  EXPECT_LT(e.arena_floats, total);
  EXPECT_NO_THROW(validate_engine(e));
}

TEST(EngineTest, FoldsConstantInputs) {
  Module m;
  Node* x = m.graph.placeholder("x", ValueType::tensor({2}));
  Node* w = m.graph.placeholder("w", ValueType::tensor({2}));
  m.graph.output({m.graph.call_function(OpCode::kMul, {x, w})});
  infer_types(m);
  auto w_value = std::make_shared<Tensor>(Tensor({2}, {3, 4}));
  Engine e = compile_engine(m, "e", {nullptr, w_value});
  ASSERT_EQ(e.inputs.size(), 1u);
  EXPECT_EQ(e.constants.size(), 1u);
  Tensor in({2}, {2, 5});
  EXPECT_EQ(run_engine(cpu_backend(), e, {&in}).at(0).data, (std::vector<float>{6, 20}));
}

TEST(EngineTest, ValidationRejectsOverlappingLiveSlots) {
  Module m = chain(3);
  Engine e = compile_engine(m, "e", {});
  // Put the last op's output on top of its input.
  e.slots[static_cast<size_t>(e.ops.back().out[0])].offset =
      e.slots[static_cast<size_t>(e.ops.back().in[0])].offset;
  try {
    validate_engine(e);
    FAIL() << "overlap accepted";
  } catch (const InputError& err) {
    EXPECT_NE(std::string(err.what()).find("overlap in memory"), std::string::npos) << err.what();
  }
}

TEST(EngineTest, ValidationRejectsOutOfRangeSlotsAndReadsBeforeWrites) {
  Module m = chain(3);
  Engine e = compile_engine(m, "e", {});
  Engine bad = e;
  bad.ops[0].in[0] = 99;
  EXPECT_THROW(validate_engine(bad), InputError);
  Engine early = e;
  early.ops[0].in[0] = e.ops[1].out[0];
  EXPECT_THROW(validate_engine(early), InputError);
}

}  // namespace
}  // namespace flatcheck
