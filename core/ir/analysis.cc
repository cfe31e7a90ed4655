// Analyses over graphs: type (shape) propagation and dead-code elimination.
#include "core/ir/analysis.h"

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/ir/engine.h"

namespace flatcheck {

int eliminate_dead_code(Graph& g) {
  auto uses = g.use_counts();
  int removed = 0;
  std::vector<Node*> nodes = g.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Node* n = *it;
    bool removable =
        n->op == NodeOp::kGetAttr ||
        (n->op == NodeOp::kCallFunction &&
         (op_info(n->fn).pure || (n->fn == OpCode::kCopy && fault_on(Fault::kDceDropsMutation))));
    if (!removable || uses[n] > 0) continue;
    for (Node* in : n->input_nodes()) --uses[in];
    g.erase(n);
    ++removed;
  }
  return removed;
}

namespace {

ValueType type_of_arg(const Arg& a) {
  if (auto p = std::get_if<Node*>(&a)) return (*p)->meta.val.value_or(ValueType{});
  if (std::holds_alternative<bool>(a)) return ValueType::scalar(ValueType::kBool);
  if (std::holds_alternative<int64_t>(a)) return ValueType::scalar(ValueType::kInt);
  return ValueType::scalar(ValueType::kFloat);
}

// execute_engine: the call must match the engine's input bindings in number and shape
// (checked here, at load, rather than when the engine runs); the type is its output tuple.
ValueType engine_call_type(const Module& m, const Node* n) {
  Node* e = std::get<Node*>(n->args.back());
  auto engine = m.engine(e->target);
  FLATCHECK_INPUT(engine, "node %" << n->name << ": engine '" << e->target << "' missing");
  size_t given = n->args.size() - 1;
  FLATCHECK_INPUT(given == engine->inputs.size(), "node %" << n->name << ": engine '" << e->target
                                                           << "' takes " << engine->inputs.size()
                                                           << " inputs, given " << given);
  for (size_t i = 0; i < given; ++i) {
    ValueType t = type_of_arg(n->args[i]);
    const Shape& want = engine->slots.at(engine->inputs[i].slot).shape;
    FLATCHECK_INPUT(t.kind == ValueType::kTensor && t.shape == want,
                    "node %" << n->name << ": engine input " << i << " (" << engine->inputs[i].name
                             << ") expects " << shape_str(want));
  }
  std::vector<Shape> outs;
  for (const auto& o : engine->outputs) outs.push_back(engine->slots.at(o.slot).shape);
  return ValueType::tuple(outs);
}

// An op with a shape rule: tensor arguments give shapes; scalars, constant or static (a
// placeholder of a scalar type stands for a value of that type), the rule's other inputs.
ValueType op_type(const Node* n) {
  std::vector<Shape> shapes;
  std::vector<Scalar> scalars;
  for (const auto& a : n->args) {
    ValueType t = type_of_arg(a);
    if (t.kind == ValueType::kTensor)
      shapes.push_back(t.shape);
    else if (auto b = std::get_if<bool>(&a))
      scalars.emplace_back(*b);
    else if (auto i = std::get_if<int64_t>(&a))
      scalars.emplace_back(*i);
    else if (auto f = std::get_if<float>(&a))
      scalars.emplace_back(*f);
    else if (auto l = std::get_if<std::vector<int64_t>>(&a))
      scalars.emplace_back(*l);
    else if (t.kind == ValueType::kBool)
      scalars.emplace_back(false);
    else if (t.kind == ValueType::kInt)
      scalars.emplace_back(int64_t{0});
    else
      scalars.emplace_back(0.0f);
  }
  std::vector<Shape> outs;
  try {
    outs = infer_shapes(n->fn, shapes, scalars);
  } catch (const InputError& e) {
    throw InputError("node %" + n->name + ": " + e.what());
  }
  return op_info(n->fn).outputs == 1 ? ValueType::tensor(outs[0]) : ValueType::tuple(outs);
}

ValueType call_function_type(const Module& m, const Node* n) {
  if (n->fn == OpCode::kGetitem) {
    ValueType src = type_of_arg(n->args.at(0));
    int64_t idx = std::get<int64_t>(n->args.at(1));
    FLATCHECK_INPUT(
        src.kind == ValueType::kTuple && idx >= 0 && idx < static_cast<int64_t>(src.elems.size()),
        "node %" << n->name << ": getitem of a non-tuple or out of range");
    return ValueType::tensor(src.elems[static_cast<size_t>(idx)]);
  }
  if (n->fn == OpCode::kBranch) return type_of_arg(n->args.at(1));
  if (n->fn == OpCode::kExecuteEngine) return engine_call_type(m, n);
  return op_type(n);
}

ValueType call_module_type(const Module& m, const Node* n) {
  Module* c = m.submodule(n->target);
  FLATCHECK_INPUT(c, "node %" << n->name << ": module '" << n->target << "' missing");
  Node* out = c->graph.output_node();
  FLATCHECK_INPUT(out, "module '" << n->target << "' has no output");
  if (out->args.size() == 1) return type_of_arg(out->args[0]);
  std::vector<Shape> outs;
  for (const auto& a : out->args) outs.push_back(type_of_arg(a).shape);
  return ValueType::tuple(outs);
}

}  // namespace

void infer_types(Module& m) {
  for (auto& [_, c] : m.children) infer_types(*c);
  for (Node* n = m.graph.first(); n; n = n->next) {
    switch (n->op) {
      case NodeOp::kGetAttr:
        if (auto t = m.attribute(n->target))
          n->meta.val = ValueType::tensor(t->shape);
        else
          n->meta.val = ValueType::scalar(ValueType::kEngine);
        break;
      case NodeOp::kCallFunction:
        n->meta.val = call_function_type(m, n);
        break;
      case NodeOp::kCallModule:
        n->meta.val = call_module_type(m, n);
        break;
      case NodeOp::kPlaceholder:
      case NodeOp::kOutput:
        break;
    }
  }
}

}  // namespace flatcheck
