// Programs: a root module whose graph takes lifted state as placeholders, plus a signature.
//
// One type serves the exported program (a flat graph), the partitioned module (the root graph
// calls `_run_on_acc_*` and `_run_on_gpu_*` children) and the flattened program (engines
// inlined as execute_engine). Running one (run_program, core/runtime/interpreter.h) binds
// parameters and buffers from `state`, runs the root module and writes buffer-mutation outputs
// back into `state`.
#pragma once

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/ir/ir.h"

namespace flatcheck {

struct InputSpec {
  enum Kind { kUserInput, kParameter, kBuffer };
  Kind kind = kUserInput;
  std::string name;    // the placeholder's name
  std::string target;  // the state FQN for parameters and buffers ("n.w")
  bool operator==(const InputSpec&) const = default;
};

struct OutputSpec {
  enum Kind { kUserOutput, kBufferMutation };
  Kind kind = kUserOutput;
  std::string name;    // the output value's node name
  std::string target;  // the mutated buffer's FQN
  bool operator==(const OutputSpec&) const = default;
};

// Aligned by position with the root graph's placeholders and output arguments.
struct Signature {
  std::vector<InputSpec> inputs;
  std::vector<OutputSpec> outputs;
  bool operator==(const Signature&) const = default;
};

std::string_view input_kind_name(InputSpec::Kind k);
std::string_view output_kind_name(OutputSpec::Kind k);

struct Program {
  std::shared_ptr<Module> root = std::make_shared<Module>();
  Signature sig;
  std::map<std::string, TensorPtr> state;           // FQN -> parameter or buffer
  std::map<std::string, std::string> module_types;  // FQN -> module type, for unflatten
};

// Deep copy with its own state tensors (modules and engines are copied or shared read-only).
Program clone_program(const Program& p);
// A copy to run: its own state tensors (a run writes buffer mutations there), the same module
// tree (a run reads it only).
Program copy_for_run(const Program& p);

// Every parameter and buffer value of a module tree, saved, and put back when the snapshot is
// destroyed (also when an exception unwinds): a run of the tree itself (run_module takes it
// const and writes only tensor values) leaves it exactly as it was.
class StateSnapshot {
 public:
  explicit StateSnapshot(Module& root);
  ~StateSnapshot();
  StateSnapshot(const StateSnapshot&) = delete;
  StateSnapshot& operator=(const StateSnapshot&) = delete;

 private:
  std::vector<std::pair<Tensor*, Tensor>> saved_;
};

// Checks that the signature matches the graph and the state: lint plus signature alignment.
void lint_program(const Program& p);

std::ostream& operator<<(std::ostream& os, const Program& p);

}  // namespace flatcheck
