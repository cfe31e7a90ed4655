// Engines: bit-identical to the interpreter, the memory plan, validation of loaded engines.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "core/base/check.h"
#include "core/ir/engine.h"
#include "core/passes/passes.h"
#include "core/runtime/interpreter.h"
#include "generators/examples.h"
#include "tests/support/recording_backend.h"

namespace flatcheck {
namespace {

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

// A backend whose copies out land only at synchronize(), as a device's asynchronous copies do.
class DeferredCopyBackend final : public CpuForwardingBackend {
 public:
  std::string_view name() const override { return "deferred-copy"; }
  void copy_out_async(float* dst, DeviceBuffer src, size_t off, size_t n) override {
    pending_.push_back({dst, src, off, n});
  }
  void synchronize() override {
    for (const auto& c : pending_) copy_out(c.dst, c.src, c.off, c.n);
    pending_.clear();
  }

 private:
  struct Copy {
    float* dst;
    DeviceBuffer src;
    size_t off, n;
  };
  std::vector<Copy> pending_;
};

// run_engine's outputs hold their values when it returns: it waits for its asynchronous copies.
TEST(EngineTest, AnEnginesOutputsAreCopiedOutBeforeItReturns) {
  Module m = chain(5);
  Engine e = compile_engine(m, "e", {});
  DeferredCopyBackend deferred;
  Tensor x({4}, {0.25f, -1.5f, 2.0f, 7.0f});
  auto want = run_module(m, std::vector<Tensor>{x});
  auto got = run_engine(deferred, e, {&x});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].bit_equal(want[0]));
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

// A node that reads a value from outside the subgraph (another graph's node) is refused by the
// engine's and the node's names, not looked up as if the engine held it.
TEST(EngineTest, ANodeReadingAValueTheEngineLacksIsRefused) {
  Module other;
  Node* stray = other.graph.placeholder("y", ValueType::tensor({4}));
  Module m;
  Node* x = m.graph.placeholder("x", ValueType::tensor({4}));
  Node* t = m.graph.call_function(OpCode::kTanh, {x});
  t->meta.val = ValueType::tensor({4});
  Node* bad = m.graph.call_function(OpCode::kAdd, {t, stray}, "total");
  bad->meta.val = ValueType::tensor({4});
  m.graph.output({bad});
  try {
    compile_engine(m, "e", {});
    ADD_FAILURE() << "an engine reading another graph's node compiled";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("engine e: node %total reads a value the engine lacks"),
              std::string::npos)
        << e.what();
  }
}

// Every engine input that is not a tensor (untyped, a scalar of each kind, a tuple) is refused
// by the engine's and the input's names, never compiled into a slot of no shape.
TEST(EngineTest, AnInputThatIsNotATensorIsRefused) {
  std::vector<std::optional<ValueType>> kinds = {
      std::nullopt, ValueType::scalar(ValueType::kInt), ValueType::scalar(ValueType::kBool),
      ValueType::scalar(ValueType::kFloat), ValueType::tuple({{4}, {4}})};
  for (const auto& kind : kinds) {
    Module m;
    Node* x = m.graph.placeholder("x", ValueType::tensor({4}));
    Node* k = m.graph.placeholder("k", ValueType::tensor({4}));
    k->meta.val = kind;
    Node* t = m.graph.call_function(OpCode::kTanh, {x});
    t->meta.val = ValueType::tensor({4});
    m.graph.output({t});
    try {
      compile_engine(m, "e", {});
      ADD_FAILURE() << "an engine with input %k of kind "
                    << (kind ? std::string(value_kind_name(kind->kind)) : "none") << " compiled";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("engine e: input %k is not a tensor"), std::string::npos)
          << e.what();
    }
  }
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

// Each slot is written once: an op writing an input's slot, or the slot an earlier op wrote,
// is refused with the op's place.
TEST(EngineTest, ValidationRefusesASlotWrittenTwice) {
  Module m = chain(3);
  Engine e = compile_engine(m, "e", {});
  ASSERT_GE(e.ops.size(), 3u);
  ASSERT_FALSE(e.inputs.empty());
  for (int again : {e.inputs[0].slot, e.ops[0].out[0], e.ops[1].out[0]}) {
    Engine bad = e;
    bad.ops[2].out[0] = again;
    try {
      validate_engine(bad);
      ADD_FAILURE() << "slot " << again << " written twice accepted";
    } catch (const InputError& err) {
      EXPECT_NE(std::string(err.what())
                    .find("ops/2/out/0: slot " + std::to_string(again) + " written twice"),
                std::string::npos)
          << err.what();
    }
  }
}

// Every binding names a slot of the engine: an input, a constant or an output bound to a slot
// past the last one, or to a negative one, is refused with the binding's place.
TEST(EngineTest, ValidationRefusesBindingsToSlotsOutsideTheEngine) {
  Module m;
  Node* x = m.graph.placeholder("x", ValueType::tensor({2}));
  Node* w = m.graph.placeholder("w", ValueType::tensor({2}));
  m.graph.output({m.graph.call_function(OpCode::kMul, {x, w})});
  infer_types(m);
  Engine e = compile_engine(m, "e", {nullptr, std::make_shared<Tensor>(Tensor({2}, {3, 4}))});
  ASSERT_EQ(e.inputs.size(), 1u);
  ASSERT_EQ(e.constants.size(), 1u);
  ASSERT_EQ(e.outputs.size(), 1u);
  ASSERT_NO_THROW(validate_engine(e));
  const int past = static_cast<int>(e.slots.size());
  for (int slot : {past, past + 7, -1}) {
    struct Edit {
      const char* where;
      std::function<void(Engine&)> apply;
    };
    const Edit edits[] = {
        {"inputs/0", [&](Engine& x) { x.inputs[0].slot = slot; }},
        {"constants/0", [&](Engine& x) { x.constants[0].first = slot; }},
        {"outputs/0", [&](Engine& x) { x.outputs[0].slot = slot; }},
    };
    for (const Edit& edit : edits) {
      Engine bad = e;
      edit.apply(bad);
      try {
        validate_engine(bad);
        ADD_FAILURE() << edit.where << " bound to slot " << slot << " accepted";
      } catch (const InputError& err) {
        EXPECT_EQ(std::string(err.what()).rfind(edit.where, 0), 0u)
            << edit.where << ", slot " << slot << ": " << err.what();
      }
    }
  }
}

// The text form of an engine: one line per op, every output slot listed once.
TEST(EngineTest, ThePrintedEngineListsEachOpsOutputs) {
  Module m;
  Node* x = m.graph.placeholder("x", ValueType::tensor({4}));
  Node* parts = m.graph.call_function(OpCode::kSplit, {x, int64_t{0}, int64_t{2}});
  Node* a = m.graph.call_function(OpCode::kGetitem, {parts, int64_t{0}});
  Node* b = m.graph.call_function(OpCode::kGetitem, {parts, int64_t{1}});
  m.graph.output({m.graph.call_function(OpCode::kAdd, {a, b})});
  infer_types(m);
  std::ostringstream os;
  os << compile_engine(m, "e", {});
  const std::string text = os.str();
  EXPECT_NE(text.find("  $1, $2 = split($0, 0, 2)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  $3 = add($1, $2)\n"), std::string::npos) << text;
}

// The bounds of an input binding's position: the last one under the limit is taken, the limit
// itself and a negative position are not.
TEST(EngineTest, ValidationTakesInputPositionsBelowTheLimitOnly) {
  Module m = chain(3);
  Engine e = compile_engine(m, "e", {});
  ASSERT_FALSE(e.inputs.empty());
  Engine last = e;
  last.inputs[0].position = kMaxPositions - 1;
  EXPECT_NO_THROW(validate_engine(last));
  for (int p : {kMaxPositions, -1}) {
    Engine bad = e;
    bad.inputs[0].position = p;
    try {
      validate_engine(bad);
      ADD_FAILURE() << "position " << p << " accepted";
    } catch (const InputError& err) {
      EXPECT_NE(std::string(err.what()).find("bad position"), std::string::npos) << err.what();
    }
  }
}

// The memory plan is best fit, and among free blocks of one size the one released first: two
// inputs die at step 0 (released x, then y), and the next output of their size lands on x's
// block. Offsets worked by hand: x 0, y 4, a 8 (nothing free yet), b 0.
TEST(EngineTest, MemoryPlanTakesTheFirstReleasedOfEqualFreeBlocks) {
  Module m;
  Node* x = m.graph.placeholder("x", ValueType::tensor({4}));
  Node* y = m.graph.placeholder("y", ValueType::tensor({4}));
  Node* a = m.graph.call_function(OpCode::kAdd, {x, y});
  m.graph.output({m.graph.call_function(OpCode::kNeg, {a})});
  infer_types(m);
  Engine e = compile_engine(m, "e", {});
  ASSERT_EQ(e.slots.size(), 4u);
  std::vector<int64_t> offsets;
  for (const auto& s : e.slots) offsets.push_back(s.offset);
  EXPECT_EQ(offsets, (std::vector<int64_t>{0, 4, 8, 0}));
  EXPECT_EQ(e.arena_floats, 12);
  EXPECT_NO_THROW(validate_engine(e));
}

// A getitem reads one slot of its tuple: an index at or past the tuple's size, a negative
// one, or a source that is not a tuple is refused when the engine is compiled.
TEST(EngineTest, CompileRefusesAGetitemOutsideItsTuple) {
  struct Bad {
    int64_t index;
    bool of_tuple;
  };
  for (Bad bad : {Bad{2, true}, Bad{3, true}, Bad{-1, true}, Bad{0, false}}) {
    Module m;
    Node* x = m.graph.placeholder("x", ValueType::tensor({4}));
    Node* parts = m.graph.call_function(OpCode::kSplit, {x, int64_t{0}, int64_t{2}});
    Node* first = m.graph.call_function(OpCode::kGetitem, {parts, int64_t{0}});
    Node* src = bad.of_tuple ? parts : first;
    m.graph.output({m.graph.call_function(OpCode::kGetitem, {src, bad.index})});
    try {
      compile_engine(m, "e", {});
      ADD_FAILURE() << "getitem " << bad.index << (bad.of_tuple ? " of the tuple" : " of a tensor")
                    << " compiled";
    } catch (const InputError& err) {
      EXPECT_NE(std::string(err.what()).find("bad getitem"), std::string::npos) << err.what();
    }
  }
  // The same graph with index 1, the tuple's last, compiles.
  Module m;
  Node* x = m.graph.placeholder("x", ValueType::tensor({4}));
  Node* parts = m.graph.call_function(OpCode::kSplit, {x, int64_t{0}, int64_t{2}});
  m.graph.output({m.graph.call_function(OpCode::kGetitem, {parts, int64_t{1}})});
  infer_types(m);
  Engine e = compile_engine(m, "e", {});
  Tensor in({4}, {1, 2, 3, 4});
  EXPECT_EQ(run_engine(cpu_backend(), e, {&in}).at(0).data, (std::vector<float>{3, 4}));
}

// The text form of a program lists every engine of the tree once: the root's, a child's and a
// grandchild's (unflatten leaves engines inside nested modules).
TEST(EngineTest, ThePrintedProgramListsEnginesAtEveryDepth) {
  Program p;
  auto child = std::make_shared<Module>();
  auto grandchild = std::make_shared<Module>();
  p.root->engines["e"] = std::make_shared<const Engine>(compile_engine(chain(1), "at_root", {}));
  child->engines["e"] = std::make_shared<const Engine>(compile_engine(chain(2), "in_child", {}));
  grandchild->engines["e"] =
      std::make_shared<const Engine>(compile_engine(chain(3), "in_grandchild", {}));
  child->children["g"] = grandchild;
  p.root->children["c"] = child;
  std::ostringstream os;
  os << p;
  const std::string text = os.str();
  for (const char* name : {"at_root", "in_child", "in_grandchild"}) {
    const std::string head = std::string("engine ") + name + " (arena ";
    size_t at = text.find(head);
    EXPECT_NE(at, std::string::npos) << name << " missing from\n" << text;
    if (at != std::string::npos) EXPECT_EQ(text.find(head, at + 1), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace flatcheck
