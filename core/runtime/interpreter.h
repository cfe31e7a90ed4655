// The interpreter: runs any module tree on a backend, including call_module recursion,
// static call arguments, in-place buffer updates and execute_engine.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/base/names.h"
#include "core/ir/engine.h"
#include "core/ir/ir.h"
#include "core/ir/program.h"
#include "core/runtime/backend.h"

namespace flatcheck {

// A runtime value.
struct Value {
  ValueType::Kind kind = ValueType::kNone;
  std::shared_ptr<const Tensor> tensor;              // kTensor
  std::vector<std::shared_ptr<const Tensor>> tuple;  // kTuple
  bool b = false;                                    // kBool
  int64_t i = 0;                                     // kInt
  float f = 0.0f;                                    // kFloat
  std::shared_ptr<const Engine> engine;              // kEngine

  static Value of(Tensor t) { return of(std::make_shared<const Tensor>(std::move(t))); }
  static Value of(std::shared_ptr<const Tensor> t) {
    Value v;
    v.kind = ValueType::kTensor;
    v.tensor = std::move(t);
    return v;
  }
  static Value of_bool(bool x) {
    Value v;
    v.kind = ValueType::kBool;
    v.b = x;
    return v;
  }
  static Value of_int(int64_t x) {
    Value v;
    v.kind = ValueType::kInt;
    v.i = x;
    return v;
  }
  static Value of_float(float x) {
    Value v;
    v.kind = ValueType::kFloat;
    v.f = x;
    return v;
  }
};

// Called for every computed value (interpreted nodes and engine ops) with its provenance key
// (see origin_key(), core/base/names.h).
using NodeObserver =
    std::function<void(const std::string& origin, std::string_view op, const Value& value)>;

// Called for every op a kernel computes (call_function nodes but getitem, branch, copy_ and
// execute_engine) with its tensor inputs, scalar arguments and outputs: the oracle checks them
// against reference kernels (harness/reference_ops.h).
using OpObserver = std::function<void(
    const Node& n, const std::string& origin, const std::vector<const Tensor*>& in,
    const std::vector<Scalar>& scalars, const std::vector<Tensor>& out)>;

struct RunContext {
  Backend* backend = &cpu_backend();
  NodeObserver observer;   // optional
  OpObserver op_observer;  // optional
  // Provenance bookkeeping for graphs without meta.origin (eager modules): the number of
  // calls seen per FQN in this run, and the current call's key.
  std::map<std::string, int> calls_per_fqn;
  std::string scope_key;
  std::string scope_fqn;
  int depth = 0;
  // Reused by every op of the run for its tensor inputs and scalar arguments (no allocation per
  // node once they have grown); a nested run has its own context.
  std::vector<const Tensor*> op_inputs;
  std::vector<Scalar> op_scalars;
};

// Runs `m` on `inputs` (one per placeholder) and returns its outputs. Buffer updates are
// written to the module's buffer storage. Throws InputError on invalid programs or inputs.
std::vector<Value> run_module(const Module& m, const std::vector<Value>& inputs, RunContext& ctx);

// Convenience: tensors in, tensors out, a fresh context.
std::vector<Tensor> run_module(const Module& m, const std::vector<Tensor>& inputs,
                               Backend& backend = cpu_backend());

// Runs a program on user inputs and returns the user outputs; applies buffer mutations.
std::vector<Tensor> run_program(Program& p, const std::vector<Tensor>& inputs, RunContext& ctx);
std::vector<Tensor> run_program(Program& p, const std::vector<Tensor>& inputs);

// Runs an engine on its input bindings (in order). Reports each op's first output to
// `observer` when given.
std::vector<Tensor> run_engine(Backend& b, const Engine& e, const std::vector<const Tensor*>& in,
                               const NodeObserver& observer = nullptr);

}  // namespace flatcheck
