// The interpreter: static arguments, buffer updates, shared storage, call recursion.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <set>

#include "core/base/check.h"
#include "core/ir/engine.h"
#include "core/passes/passes.h"
#include "core/runtime/interpreter.h"
#include "generators/examples.h"
#include "tests/support/cpu_forwarding_backend.h"
#include "tests/support/programs.h"
#include "tests/support/recording_backend.h"

namespace flatcheck {
namespace {

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

// The backend argument is read: the kernels of the run launch on it.
TEST(InterpreterTest, RunsOnTheBackendItIsGiven) {
  auto m = unflatten_example(false);
  RecordingBackend b;
  auto out = run_module(*m, std::vector<Tensor>{Tensor::full({1}, 1.0f)}, b);
  EXPECT_EQ(out.at(0).data, std::vector<float>{16});
  EXPECT_GT(b.total(), 0);
}

// Calls nest up to kMaxModuleDepth below the root, not one more (the run's own guard; the
// loader and lint refuse deeper trees before a run).
TEST(InterpreterTest, CallsNestUpToTheDepthLimit) {
  auto ok = testing_support::call_chain(kMaxModuleDepth);
  EXPECT_EQ(run_module(*ok, std::vector<Tensor>{Tensor({2}, {2, -3})}).at(0).data,
            (std::vector<float>{2, 0}));
  auto deep = testing_support::call_chain(kMaxModuleDepth + 1);
  try {
    run_module(*deep, std::vector<Tensor>{Tensor({2}, {2, -3})});
    FAIL() << "a call chain deeper than the limit ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nested deeper than"), std::string::npos) << e.what();
  }
}

// The node observer names what each value came from: a call_function by its op, a call of a
// variant ("c@1", as unflatten names a second specialization) by the module's name without
// the variant suffix, so the two calls of "c" are reported alike.
TEST(InterpreterTest, TheObserverNamesVariantCallsByTheirModule) {
  auto leaf = [] {
    auto m = std::make_shared<Module>();
    Node* x = m->graph.placeholder("x", ValueType::tensor({2}));
    m->graph.output({m->graph.call_function(OpCode::kNeg, {x})});
    return m;
  };
  Module root;
  root.children["c"] = leaf();
  root.children["c@1"] = leaf();
  Node* x = root.graph.placeholder("x", ValueType::tensor({2}));
  Node* a = root.graph.call_module("c", {x});
  Node* b = root.graph.call_module("c@1", {a});
  root.graph.output({root.graph.call_function(OpCode::kRelu, {b})});
  infer_types(root);
  std::map<std::string, int> seen;
  RunContext ctx;
  ctx.observer = [&](const std::string&, std::string_view op, const Value&) {
    ++seen[std::string(op)];
  };
  auto out = run_module(root, {Value::of(Tensor({2}, {1, -2}))}, ctx);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_TRUE(out[0].tensor);
  EXPECT_EQ(out[0].tensor->data, (std::vector<float>{1, 0}));
  EXPECT_EQ(seen["c"], 2);
  EXPECT_EQ(seen.count("c@1"), 0u);
  EXPECT_EQ(seen["neg"], 2);
  EXPECT_EQ(seen["relu"], 1);
}

// A call of a child the module does not have is refused by the run itself (lint refuses it
// before a run; a library user may run an unlinted module).
TEST(InterpreterTest, ACallOfAMissingChildIsRefused) {
  Module root;
  Node* x = root.graph.placeholder("x", ValueType::tensor({2}));
  root.graph.output({root.graph.call_module("ghost", {x})});
  try {
    run_module(root, std::vector<Tensor>{Tensor({2}, {1, 2})});
    ADD_FAILURE() << "a call of a missing child ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("call_module target 'ghost' does not exist"),
              std::string::npos)
        << e.what();
  }
}

// A run checks each getitem itself (lint and infer_types do too, but a library user may run an
// unchecked module): an index past a tuple's end, a negative one, or a getitem of a tensor is
// refused by name, and an index inside the tuple reads that element.
TEST(InterpreterTest, AGetitemOutsideItsTupleIsRefusedWhenRun) {
  struct Bad {
    int64_t index;
    bool of_tuple;
  };
  const Tensor in({4}, {1, 2, 3, 4});
  for (Bad bad : {Bad{2, true}, Bad{7, true}, Bad{-1, true}, Bad{0, false}}) {
    Module m;
    Node* x = m.graph.placeholder("x", ValueType::tensor({4}));
    Node* parts = m.graph.call_function(OpCode::kSplit, {x, int64_t{0}, int64_t{2}});
    m.graph.output(
        {m.graph.call_function(OpCode::kGetitem, {bad.of_tuple ? parts : x, bad.index}, "pick")});
    try {
      run_module(m, std::vector<Tensor>{in});
      ADD_FAILURE() << "getitem " << bad.index << (bad.of_tuple ? " of the tuple" : " of a tensor")
                    << " ran";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("node %pick: getitem index " +
                                           std::to_string(bad.index) + " out of range"),
                std::string::npos)
          << e.what();
    }
  }
  Module m;
  Node* x = m.graph.placeholder("x", ValueType::tensor({4}));
  Node* parts = m.graph.call_function(OpCode::kSplit, {x, int64_t{0}, int64_t{2}});
  m.graph.output({m.graph.call_function(OpCode::kGetitem, {parts, int64_t{1}})});
  EXPECT_EQ(run_module(m, std::vector<Tensor>{in}).at(0).data, (std::vector<float>{3, 4}));
}

// A backend whose memory the host cannot read directly (as a GPU's): run_op copies every input
// in and every output out around the kernel. Here the "device" memory is host memory under the
// hood, so the results must be bit for bit the host path's.
class DeviceMemoryBackend : public CpuForwardingBackend {
 public:
  std::string_view name() const override { return "device-memory"; }
  bool host_visible() const override { return false; }
  void copy_in(DeviceBuffer dst, size_t off, const float* src, size_t n) override {
    ++copies_in;
    CpuForwardingBackend::copy_in(dst, off, src, n);
  }
  void copy_out(float* dst, DeviceBuffer src, size_t off, size_t n) override {
    ++copies_out;
    CpuForwardingBackend::copy_out(dst, src, off, n);
  }
  int copies_in = 0, copies_out = 0;
};

TEST(InterpreterTest, ABackendWithDeviceMemoryComputesWhatTheHostPathComputes) {
  Module m;
  Node* x = m.graph.placeholder("x", ValueType::tensor({2, 4}));
  Node* y = m.graph.placeholder("y", ValueType::tensor({4, 2}));
  Node* mm = m.graph.call_function(OpCode::kMatmul, {x, y});
  Node* parts = m.graph.call_function(OpCode::kSplit, {mm, int64_t{1}, int64_t{2}});
  Node* a = m.graph.call_function(OpCode::kGetitem, {parts, int64_t{0}});
  Node* b = m.graph.call_function(OpCode::kGetitem, {parts, int64_t{1}});
  Node* s = m.graph.call_function(OpCode::kSub, {a, b});
  m.graph.output({m.graph.call_function(OpCode::kTanh, {s}), mm});
  infer_types(m);
  std::vector<Tensor> in{Tensor({2, 4}, {1, -2, 3.5f, 0.25f, -1, 0.5f, 2, -3}),
                         Tensor({4, 2}, {0.5f, 1, -1, 2, 0.125f, -0.5f, 3, 1})};
  auto want = run_module(m, in);
  DeviceMemoryBackend device;
  auto got = run_module(m, in, device);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(got[i].bit_equal(want[i])) << i;
  EXPECT_GE(device.copies_in, 4);   // matmul's two inputs, split's one, sub's two, tanh's one
  EXPECT_GE(device.copies_out, 4);  // matmul's, split's two, sub's, tanh's
}

}  // namespace
}  // namespace flatcheck
