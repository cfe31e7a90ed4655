// Engines: an acc partition compiled to an ordered op list over a static memory plan.
//
// An Engine holds slots (one per value: inputs, folded constants, op outputs), each with a
// shape and an offset into one arena laid out from liveness, with slot reuse. It computes
// exactly what its subgraph computes, op by op, through the backend interface.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/ir/ir.h"
#include "core/runtime/backend.h"
#include "core/runtime/interpreter.h"

namespace flatcheck {

struct EngineSlot {
  Shape shape;
  int64_t offset = 0;  // in floats, into the arena
};

struct EngineOp {
  OpCode op = OpCode::kAdd;
  std::vector<int> in;   // slots read
  std::vector<int> out;  // slots written (several for split)
  std::vector<Scalar> scalars;
  std::string origin;  // provenance of the node it came from
};

struct EngineBinding {
  std::string name;  // binding name: the subgraph placeholder or output node's name
  int slot = 0;
  int position = 0;  // inputs: the placeholder's position in the subgraph
};

// An identity no other engine of this process has or had: a copy gets a new one, so a cache
// keyed by it (CUDA graphs) cannot confuse an engine with one freed at the same address.
struct EngineId {
  uint64_t value = next();
  EngineId() = default;
  EngineId(const EngineId&) : value(next()) {}
  EngineId& operator=(const EngineId&) {
    value = next();
    return *this;
  }
  static uint64_t next();
};

struct Engine {
  static constexpr int kVersion = 1;
  EngineId id;                                    // not serialized, not compared
  std::string name;                               // "_run_on_acc_1"
  std::vector<EngineBinding> inputs;              // runtime inputs, in binding order
  std::vector<EngineBinding> outputs;             // in subgraph output order
  std::vector<std::pair<int, Tensor>> constants;  // slot -> folded value
  std::vector<EngineSlot> slots;
  std::vector<EngineOp> ops;
  int64_t arena_floats = 0;
};

// Compiles a subgraph module (placeholders, call_function nodes, output) to an engine.
// `folded[i]`, when non-null, is the constant value of the i-th placeholder: it is folded into
// the engine and is not an input binding. Throws InputError for unsupported nodes.
Engine compile_engine(const Module& sub, const std::string& name,
                      const std::vector<TensorPtr>& folded);

// Runs an engine on its input bindings (in order). Reports each op's first output to
// `observer` when given.
std::vector<Tensor> run_engine(Backend& b, const Engine& e, const std::vector<const Tensor*>& in,
                               const NodeObserver& observer = nullptr);

// Checks an engine read from a file: slots in range, ops well-typed (shape rules), every slot
// written before it is read, the plan inside the arena, and no two live slots overlapping.
// Throws InputError naming the place ("ops/3/in/0: ...").
void validate_engine(const Engine& e);

// Prints the engine's bindings, slots and op list.
std::ostream& operator<<(std::ostream& os, const Engine& e);

}  // namespace flatcheck
