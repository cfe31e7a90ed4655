// Engines: an acc partition compiled to an ordered op list over a static memory plan (the
// data; compile_engine is in core/passes/passes.h, run_engine in core/runtime/interpreter.h).
//
// An Engine holds slots (one per value: inputs, folded constants, op outputs), each with a
// shape and an offset into one arena laid out from liveness, with slot reuse. It computes
// exactly what its subgraph computes, op by op, through the backend interface.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "core/base/tensor.h"
#include "core/ops/ops.h"

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

// Bounds a valid engine stays within (validate_engine).
inline constexpr int64_t kMaxArenaFloats = int64_t{1} << 26;
inline constexpr size_t kMaxSlots = size_t{1} << 24;  // hard bound; LoadLimits::max_engine_slots
inline constexpr int kMaxPositions = 100000;          // an input binding's placeholder position

// Live interval of every slot: defined at step `def[s]` (-1 for inputs and constants), last
// read at step `last[s]` (ops.size() for engine outputs; the defining step when never read).
struct EngineLiveness {
  std::vector<int> def, last;
};
EngineLiveness engine_liveness(const Engine& e);

// Checks an engine read from a file: slots in range, ops well-typed (shape rules), every slot
// written before it is read, the plan inside the arena, and no two live slots overlapping.
// Throws InputError naming the place ("ops/3/in/0: ...").
void validate_engine(const Engine& e);

// Prints the engine's bindings, slots and op list.
std::ostream& operator<<(std::ostream& os, const Engine& e);

}  // namespace flatcheck
