// run_program: binds a program's state, runs its root module, applies buffer mutations.
#include "core/base/check.h"
#include "core/runtime/interpreter.h"

namespace flatcheck {

std::vector<Tensor> run_program(Program& p, const std::vector<Tensor>& inputs, RunContext& ctx) {
  std::vector<Value> in;
  size_t next_user = 0;
  for (const auto& spec : p.sig.inputs) {
    if (spec.kind == InputSpec::kUserInput) {
      FLATCHECK_INPUT(next_user < inputs.size(),
                      "program expects more user inputs than " << inputs.size());
      in.push_back(Value::of(inputs[next_user++]));
    } else {
      auto it = p.state.find(spec.target);
      FLATCHECK_INPUT(it != p.state.end(), "state '" << spec.target << "' is missing");
      in.push_back(Value::of(*it->second));
    }
  }
  FLATCHECK_INPUT(next_user == inputs.size(),
                  "program expects " << next_user << " user inputs, got " << inputs.size());
  std::vector<Value> out = run_module(*p.root, in, ctx);
  FLATCHECK_INPUT(out.size() == p.sig.outputs.size(),
                  "program produced " << out.size() << " outputs for " << p.sig.outputs.size());
  std::vector<Tensor> user;
  for (size_t i = 0; i < out.size(); ++i) {
    const auto& spec = p.sig.outputs[i];
    if (spec.kind == OutputSpec::kUserOutput) {
      user.push_back(*out[i].tensor);
    } else {
      auto it = p.state.find(spec.target);
      FLATCHECK_INPUT(it != p.state.end() && it->second->shape == out[i].tensor->shape,
                      "buffer mutation of '" << spec.target << "' does not fit the buffer");
      *it->second = *out[i].tensor;
    }
  }
  return user;
}

std::vector<Tensor> run_program(Program& p, const std::vector<Tensor>& inputs) {
  RunContext ctx;
  return run_program(p, inputs, ctx);
}

}  // namespace flatcheck
