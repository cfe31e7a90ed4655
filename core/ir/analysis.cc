// Analyses over graphs: type (shape) propagation and dead-code elimination.
#include "core/ir/analysis.h"

#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/base/names.h"
#include "core/base/ptr_table.h"
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
    for (Node* in : n->node_args()) --uses[in];
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
ValueType engine_call_type(const Module& m, const Node* n,
                           const std::function<ValueType(const Arg&)>& type_of) {
  Node* e = std::get<Node*>(n->args.back());
  auto engine = m.engine(e->target);
  FLATCHECK_INPUT(engine, "node %" << n->name << ": engine '" << e->target << "' missing");
  size_t given = n->args.size() - 1;
  FLATCHECK_INPUT(given == engine->inputs.size(), "node %" << n->name << ": engine '" << e->target
                                                           << "' takes " << engine->inputs.size()
                                                           << " inputs, given " << given);
  for (size_t i = 0; i < given; ++i) {
    const EngineBinding& in = engine->inputs[i];
    ValueType t = type_of(n->args[i]);
    const Shape& want = engine->slots.at(in.slot).shape;
    FLATCHECK_INPUT(t.kind == ValueType::kTensor && t.shape == want,
                    "node %" << n->name << ": engine input " << i << " (" << in.name << ") expects "
                             << shape_str(want));
  }
  std::vector<Shape> outs;
  for (const auto& o : engine->outputs) outs.push_back(engine->slots.at(o.slot).shape);
  return ValueType::tuple(outs);
}

// The values of one module's static placeholders in one call (absent: not known, a default).
using Statics = std::unordered_map<const Node*, Scalar>;

std::string statics_key(const Graph& g, const Statics& env) {
  std::string key;
  for (Node* ph : g.placeholders()) {
    auto it = env.find(ph);
    if (it == env.end()) {
      key += "-;";
      continue;
    }
    std::visit(
        [&](const auto& v) {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, float>) {
            key += "f" + std::to_string(float_bits(v));
          } else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
            key += "l";
            for (int64_t x : v) key += std::to_string(x) + ",";
          } else {
            key += (std::is_same_v<V, bool> ? "b" : "i") + std::to_string(v);
          }
        },
        it->second);
    key += ";";
  }
  return key;
}

// Types a module tree call by call (analysis.h, infer_types).
class Typer {
 public:
  void run(Module& root) {
    type(root, {}, "");
    // Modules no call reaches: their static placeholders at default values.
    std::vector<std::pair<std::string, Module*>> rest;
    for_each_module(root, [&](const std::string& path, Module& m) {
      if (!typed_.count(&m)) rest.emplace_back(path, &m);
    });
    for (auto& [path, m] : rest) type(*m, {}, path);
  }

 private:
  // The types of one module's nodes in one call, in graph order (so a mismatch between two
  // calls is reported at the first node that differs, whatever the nodes' addresses).
  class Types {
   public:
    const ValueType* find(const Node* n) const {
      const size_t* i = index_.find(n);
      return i ? &list_[*i].second : nullptr;
    }
    void set(const Node* n, ValueType t) {  // once per node: the graph is walked once
      auto [i, fresh] = index_.emplace(n);
      FLATCHECK_CHECK(fresh) << "infer_types: node %" << n->name << " typed twice";
      *i = list_.size();
      list_.emplace_back(n, std::move(t));
    }
    const std::vector<std::pair<const Node*, ValueType>>& list() const { return list_; }

   private:
    PtrTable<Node, size_t> index_;
    std::vector<std::pair<const Node*, ValueType>> list_;
  };

  // The types of `m`'s nodes under `env`; the first typing of a module is written to meta.val,
  // a later one (another call) must equal it.
  const Types& type(Module& m, const Statics& env, const std::string& path) {
    std::string key = statics_key(m.graph, env);
    auto& by_env = memo_[&m];
    if (auto it = by_env.find(key); it != by_env.end()) return it->second;
    Types t;
    auto type_of = [&](const Arg& a) -> ValueType {
      if (auto p = std::get_if<Node*>(&a)) {
        const ValueType* known = t.find(*p);
        return known ? *known : (*p)->meta.val.value_or(ValueType{});
      }
      return type_of_arg(a);
    };
    for (Node* n = m.graph.first(); n; n = n->next) {
      switch (n->op) {
        case NodeOp::kPlaceholder:
          t.set(n, n->meta.val.value_or(ValueType{}));
          break;
        case NodeOp::kGetAttr:
          if (auto a = m.attribute(n->target))
            t.set(n, ValueType::tensor(a->shape));
          else
            t.set(n, ValueType::scalar(ValueType::kEngine));
          break;
        case NodeOp::kCallFunction:
          t.set(n, call_function_type(m, n, env, type_of));
          break;
        case NodeOp::kCallModule:
          t.set(n, call_module_type(m, n, env, path, type_of));
          break;
        case NodeOp::kOutput:
          for (size_t i = 0; i < n->args.size(); ++i)
            FLATCHECK_INPUT(type_of(n->args[i]).kind == ValueType::kTensor,
                            "module '" << path << "': output " << i << " is not a tensor");
          break;
      }
    }
    auto [first, fresh] = typed_.try_emplace(&m, key);
    if (fresh) {
      for (auto& [node, type] : t.list()) const_cast<Node*>(node)->meta.val = type;
    } else {
      const Types& was = by_env.at(first->second);
      for (const auto& [n, type] : t.list()) {
        const ValueType* w = was.find(n);
        FLATCHECK_INPUT(w && type == *w,
                        "module '" << path << "': node %" << n->name << " is " << type
                                   << " in one call and " << (w ? *w : ValueType{})
                                   << " in another: static arguments may change values, not "
                                      "types");
      }
    }
    return by_env.emplace(std::move(key), std::move(t)).first->second;
  }

  // A static argument's value in this call, when known.
  static std::optional<Scalar> static_value(const Arg& a, const Statics& env) {
    if (auto p = std::get_if<Node*>(&a)) {
      auto it = env.find(*p);
      if (it != env.end()) return it->second;
      return std::nullopt;
    }
    return std::visit(
        [](const auto& v) -> std::optional<Scalar> {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, Node*>)
            return std::nullopt;
          else
            return Scalar(v);
        },
        a);
  }

  // An op with a shape rule: tensor arguments give shapes; scalars, constant or static (its
  // value in this call, or a default of its type when no call gives one), the rule's others.
  static ValueType op_type(const Node* n, const Statics& env,
                           const std::function<ValueType(const Arg&)>& type_of) {
    std::vector<Shape> shapes;
    std::vector<Scalar> scalars;
    for (const auto& a : n->args) {
      ValueType t = type_of(a);
      if (t.kind == ValueType::kTensor) {
        shapes.push_back(t.shape);
      } else if (auto v = static_value(a, env)) {
        scalars.push_back(*v);
      } else if (t.kind == ValueType::kBool) {
        scalars.emplace_back(false);
      } else if (t.kind == ValueType::kInt) {
        scalars.emplace_back(n->fn == OpCode::kSplit ? int64_t{2} : int64_t{0});
      } else {
        scalars.emplace_back(0.0f);
      }
    }
    std::vector<Shape> outs;
    try {
      outs = infer_shapes(n->fn, shapes, scalars);
    } catch (const InputError& e) {
      throw InputError("node %" + n->name + ": " + e.what());
    }
    return op_info(n->fn).outputs == 1 ? ValueType::tensor(outs[0]) : ValueType::tuple(outs);
  }

  static ValueType call_function_type(const Module& m, const Node* n, const Statics& env,
                                      const std::function<ValueType(const Arg&)>& type_of) {
    if (n->fn == OpCode::kGetitem) {
      ValueType src = type_of(n->args.at(0));
      const int64_t* idx = std::get_if<int64_t>(&n->args.at(1));
      FLATCHECK_INPUT(idx, "node %" << n->name << ": getitem's index must be an int constant");
      FLATCHECK_INPUT(src.kind == ValueType::kTuple && *idx >= 0 &&
                          *idx < static_cast<int64_t>(src.elems.size()),
                      "node %" << n->name << ": getitem of a non-tuple or out of range");
      return ValueType::tensor(src.elems[static_cast<size_t>(*idx)]);
    }
    if (n->fn == OpCode::kBranch) {
      ValueType a = type_of(n->args.at(1)), b = type_of(n->args.at(2));
      FLATCHECK_INPUT(a == b, "node %" << n->name << ": branch between " << a << " and " << b);
      return a;
    }
    if (n->fn == OpCode::kExecuteEngine) return engine_call_type(m, n, type_of);
    if (n->fn == OpCode::kTranspose && fault_on(Fault::kInferTransposeKeepsShape))
      return type_of(n->args.at(0));  // Fault: the transposed shape is not derived.
    return op_type(n, env, type_of);
  }

  ValueType call_module_type(Module& m, const Node* n, const Statics& env, const std::string& path,
                             const std::function<ValueType(const Arg&)>& type_of) {
    Module* c = m.submodule(n->target);
    FLATCHECK_INPUT(c, "node %" << n->name << ": module '" << n->target << "' missing");
    std::vector<Node*> phs = c->graph.placeholders();
    FLATCHECK_INPUT(phs.size() == n->args.size(),
                    "node %" << n->name << ": module '" << n->target << "' takes " << phs.size()
                             << " arguments, given " << n->args.size());
    Statics child_env;
    for (size_t i = 0; i < phs.size(); ++i) {
      const ValueType want = phs[i]->meta.val.value_or(ValueType{});
      const ValueType got = type_of(n->args[i]);
      FLATCHECK_INPUT(want == got, "node %" << n->name << ": argument " << i << " of module '"
                                            << n->target << "' is " << got << ", its placeholder %"
                                            << phs[i]->name << " is " << want);
      if (want.is_static())
        if (auto v = static_value(n->args[i], env)) child_env[phs[i]] = *v;
    }
    const Types& ct = type(*c, child_env, join_fqn(path, n->target));
    Node* out = c->graph.output_node();
    FLATCHECK_INPUT(out, "module '" << n->target << "' has no output");
    auto out_type = [&](const Arg& a) {
      auto p = std::get_if<Node*>(&a);
      if (!p) return type_of_arg(a);
      const ValueType* known = ct.find(*p);
      FLATCHECK_INPUT(known, "module '" << n->target << "': output reads %" << (*p)->name
                                        << ", which is not in its graph");
      return *known;
    };
    if (out->args.size() == 1) return out_type(out->args[0]);
    std::vector<Shape> outs;
    for (const auto& a : out->args) outs.push_back(out_type(a).shape);
    return ValueType::tuple(outs);
  }

  std::unordered_map<const Module*, std::unordered_map<std::string, Types>> memo_;
  std::unordered_map<const Module*, std::string> typed_;  // module -> the key of its first typing
};

}  // namespace

void infer_types(Module& m) {
  Typer().run(m);
}

}  // namespace flatcheck
