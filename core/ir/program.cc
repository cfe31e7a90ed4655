#include "core/ir/program.h"

#include <functional>
#include <unordered_set>

#include "core/base/check.h"
#include "core/ir/engine.h"

namespace flatcheck {

std::string_view input_kind_name(InputSpec::Kind k) {
  static constexpr std::string_view n[] = {"user_input", "parameter", "buffer"};
  return n[k];
}

std::string_view output_kind_name(OutputSpec::Kind k) {
  static constexpr std::string_view n[] = {"user_output", "buffer_mutation"};
  return n[k];
}

Program copy_for_run(const Program& p) {
  Program c;
  c.sig = p.sig;
  c.module_types = p.module_types;
  c.root = p.root;
  for (const auto& [k, v] : p.state) c.state[k] = std::make_shared<Tensor>(*v);
  return c;
}

Program clone_program(const Program& p) {
  Program c = copy_for_run(p);
  c.root = clone_module(*p.root, /*share_state=*/false);
  return c;
}

StateSnapshot::StateSnapshot(Module& root) {
  std::unordered_set<const Tensor*> seen;
  for_each_module(root, [&](const std::string&, Module& m) {
    for (auto* state : {&m.params, &m.buffers})
      for (auto& [k, t] : *state)
        if (seen.insert(t.get()).second) saved_.emplace_back(t.get(), *t);
  });
}

StateSnapshot::~StateSnapshot() {
  for (auto& [t, value] : saved_) *t = std::move(value);
}

void lint_program(const Program& p) {
  lint(*p.root);
  auto phs = p.root->graph.placeholders();
  FLATCHECK_INPUT(phs.size() == p.sig.inputs.size(), "signature: " << p.sig.inputs.size()
                                                                   << " inputs for " << phs.size()
                                                                   << " placeholders");
  for (size_t i = 0; i < phs.size(); ++i) {
    const auto& spec = p.sig.inputs[i];
    FLATCHECK_INPUT(spec.name == phs[i]->name, "signature/inputs/" << i << ": names '" << spec.name
                                                                   << "' but the placeholder is '"
                                                                   << phs[i]->name << "'");
    if (spec.kind != InputSpec::kUserInput) {
      auto it = p.state.find(spec.target);
      FLATCHECK_INPUT(it != p.state.end(),
                      "signature/inputs/" << i << ": state '" << spec.target << "' does not exist");
      FLATCHECK_INPUT(phs[i]->meta.val && phs[i]->meta.val->kind == ValueType::kTensor &&
                          phs[i]->meta.val->shape == it->second->shape,
                      "signature/inputs/" << i << ": state '" << spec.target
                                          << "' has another shape than its placeholder");
    }
  }
  Node* out = p.root->graph.output_node();
  FLATCHECK_INPUT(out && out->args.size() == p.sig.outputs.size(),
                  "signature: " << p.sig.outputs.size() << " outputs for "
                                << (out ? out->args.size() : 0) << " graph outputs");
  for (size_t i = 0; i < p.sig.outputs.size(); ++i) {
    const auto& spec = p.sig.outputs[i];
    const Node* const* value = std::get_if<Node*>(&out->args[i]);
    FLATCHECK_INPUT(value && (*value)->name == spec.name,
                    "signature/outputs/" << i << ": names '" << spec.name << "' but the output is "
                                         << (value ? "'" + (*value)->name + "'" : "a constant"));
    if (spec.kind == OutputSpec::kBufferMutation) {
      bool buffer = false;
      for (const auto& in : p.sig.inputs)
        buffer |= in.kind == InputSpec::kBuffer && in.target == spec.target;
      FLATCHECK_INPUT(buffer, "signature/outputs/" << i << ": mutated buffer '" << spec.target
                                                   << "' is not a buffer input");
    }
  }
}

std::ostream& operator<<(std::ostream& os, const Program& p) {
  os << "signature:\n";
  for (const auto& s : p.sig.inputs) {
    os << "  input " << input_kind_name(s.kind) << " %" << s.name;
    if (!s.target.empty()) os << " <- " << s.target;
    os << "\n";
  }
  for (const auto& s : p.sig.outputs) {
    os << "  output " << output_kind_name(s.kind) << " %" << s.name;
    if (!s.target.empty()) os << " -> " << s.target;
    os << "\n";
  }
  for (const auto& [k, v] : p.state) os << "state " << k << " = " << *v << "\n";
  os << *p.root;
  for (const auto& [k, e] : p.root->engines) os << *e;
  std::function<void(const Module&)> engines_of_children = [&](const Module& m) {
    for (const auto& [k, c] : m.children) {
      for (const auto& [n, e] : c->engines) os << *e;
      engines_of_children(*c);
    }
  };
  engines_of_children(*p.root);
  return os;
}

}  // namespace flatcheck
