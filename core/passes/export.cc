// export: eager module tree -> flat program (torch.export's model).
//
// Tracing walks the eager graphs in execution order, depth first, with the call's static
// arguments known, so every call is specialized: `branch` folds, static scalars become
// constants. Buffer updates are traced as copy_ nodes, dead code is removed, then copy_ nodes
// are functionalized into buffer-mutation outputs.
#include <functional>
#include <map>
#include <unordered_map>
#include <utility>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/base/names.h"
#include "core/passes/passes.h"

namespace flatcheck {
namespace {

// A traced value: a node of the flat graph, a constant, or the outputs of a module call.
struct Traced {
  enum Kind { kNode, kConst, kTuple } kind = kNode;
  Node* node = nullptr;
  Arg constant;
  std::vector<Traced> elems;
};

Traced of_node(Node* n) {
  return {Traced::kNode, n, {}, {}};
}

class Exporter {
 public:
  explicit Exporter(Program& p) : p_(p), g_(p.root->graph) {}

  void run(const Module& root) {
    p_.root->type = root.type;
    collect_types(root, "");
    // torch.export names user inputs before state (a state placeholder takes the suffix when
    // a user input holds its name) and places them after it.
    std::vector<Traced> args;
    std::vector<InputSpec> user_specs;
    for (Node* ph : root.graph.placeholders()) {
      FLATCHECK_INPUT(ph->meta.val && ph->meta.val->kind == ValueType::kTensor,
                      "export: root input %" << ph->name << " must be a tensor");
      Node* n = placeholder(ph->name, *ph->meta.val);
      n->meta.origin = ph->name;
      user_specs.push_back({InputSpec::kUserInput, n->name, ""});
      args.push_back(of_node(n));
    }
    {
      Graph::InsertingBefore before(g_, args.empty() ? nullptr : args.front().node);
      lift(root, "", /*buffers=*/false);
      lift(root, "", /*buffers=*/true);
    }
    p_.sig.inputs.insert(p_.sig.inputs.end(), user_specs.begin(), user_specs.end());
    std::vector<Traced> outs = trace(root, "", "", args);
    std::vector<Arg> out_args;
    for (const auto& t : outs) {
      FLATCHECK_INPUT(t.kind == Traced::kNode, "export: root outputs must be tensors");
      out_args.push_back(t.node);
      p_.sig.outputs.push_back({OutputSpec::kUserOutput, t.node->name, ""});
    }
    Node* out = g_.output(out_args);
    eliminate_dead_code(g_);
    functionalize(out);
    eliminate_dead_code(g_);
    // Output names may have changed owners when copy_ nodes were replaced: refresh them.
    for (size_t i = 0; i < out->args.size(); ++i) {
      Node* v = std::get<Node*>(out->args[i]);
      p_.sig.outputs[i].name = v->name;
      // Fault: the signature records the name export asked the namespace for.
      if (fault_on(Fault::kOutputSpecByRequestedName))
        if (auto it = requested_.find(v); it != requested_.end())
          p_.sig.outputs[i].name = it->second;
    }
    infer_types(*p_.root);
    lint_program(p_);
  }

 private:
  void collect_types(const Module& m, const std::string& fqn) {
    if (!fqn.empty()) p_.module_types[fqn] = m.type;
    for (const auto& [name, c] : m.children) collect_types(*c, join_fqn(fqn, name));
  }

  // A placeholder named as torch.export names it (ExportPlaceholderNames).
  Node* placeholder(const std::string& candidate, ValueType type) {
    std::string name = placeholder_names_.name(g_.ns(), candidate);
    Node* n = g_.create_exact(NodeOp::kPlaceholder, name, {}, name);
    n->meta.val = std::move(type);
    return n;
  }

  void lift(const Module& m, const std::string& fqn, bool buffers) {
    const auto& state = buffers ? m.buffers : m.params;
    for (const auto& [name, t] : state) {
      std::string full = join_fqn(fqn, name);
      if (lifted_.count(t.get())) continue;  // shared tensor: lifted under its first FQN
      std::string mangled = export_mangle((buffers ? "b_" : "p_") + full);
      if (fault_on(Fault::kMangledFqnCollision)) {
        // Fault (PyTorch #121145): state is keyed by its mangled name, so a second FQN that
        // mangles alike is taken for the first one's tensor.
        if (auto it = by_mangled_.find(mangled); it != by_mangled_.end()) {
          lifted_[t.get()] = latest_[t.get()] = it->second;
          buffer_fqn_[t.get()] = it->second->meta.origin;
          continue;
        }
      }
      Node* ph = placeholder(mangled, ValueType::tensor(t->shape));
      by_mangled_[mangled] = ph;
      ph->meta.origin = full;
      lifted_[t.get()] = ph;
      latest_[t.get()] = ph;
      buffer_fqn_[t.get()] = full;
      p_.state[full] = t;
      p_.sig.inputs.push_back(
          {buffers ? InputSpec::kBuffer : InputSpec::kParameter, ph->name, full});
    }
    for (const auto& [name, c] : m.children) lift(*c, join_fqn(fqn, name), buffers);
  }

  Traced resolve(const Arg& a, const std::unordered_map<const Node*, Traced>& env) {
    if (auto p = std::get_if<Node*>(&a)) {
      auto it = env.find(*p);
      FLATCHECK_INPUT(it != env.end(), "export: %" << (*p)->name << " used before definition");
      return it->second;
    }
    return {Traced::kConst, nullptr, a, {}};
  }

  Node* tensor_node(const Traced& t, const Node& at) {
    FLATCHECK_INPUT(t.kind == Traced::kNode,
                    "export: node %" << at.name << " needs a tensor argument");
    return t.node;
  }

  Node* emit(OpCode op, std::vector<Arg> args, const Node& src, const std::string& key) {
    Node* n = g_.call_function(op, std::move(args), src.name);
    if (fault_on(Fault::kOutputSpecByRequestedName)) requested_[n] = src.name;  // fault only
    n->meta.nn_module_stack = stack_;  // one list per call, shared by its nodes
    n->meta.origin = origin_key(key, src.name);
    return n;
  }

  std::vector<Traced> trace(const Module& m, const std::string& fqn, const std::string& key,
                            const std::vector<Traced>& args) {
    FLATCHECK_INPUT(stack_.size() <= kMaxModuleDepth,
                    "export: module calls nested deeper than " << kMaxModuleDepth);
    std::unordered_map<const Node*, Traced> env;
    size_t next_arg = 0;
    for (Node* n = m.graph.first(); n; n = n->next) {
      switch (n->op) {
        case NodeOp::kPlaceholder: {
          FLATCHECK_INPUT(next_arg < args.size(),
                          "export: call of '" << fqn << "' lacks %" << n->name);
          const Traced& t = args[next_arg++];
          bool is_static = n->meta.val && n->meta.val->is_static();
          FLATCHECK_INPUT(
              is_static == (t.kind == Traced::kConst),
              "export: '" << fqn << "' placeholder %" << n->name
                          << (is_static ? " needs a static argument" : " needs a tensor argument"));
          env[n] = t;
          break;
        }
        case NodeOp::kGetAttr: {
          bool is_buffer = false;
          TensorPtr t = m.attribute(n->target, &is_buffer);
          FLATCHECK_INPUT(
              t, "export: get_attr '" << n->target << "' in '" << fqn << "' does not exist");
          env[n] = of_node(is_buffer ? latest_.at(t.get()) : lifted_.at(t.get()));
          break;
        }
        case NodeOp::kCallFunction:
          env[n] = trace_call_function(m, *n, key, env);
          break;
        case NodeOp::kCallModule: {
          const Module* child = m.submodule(n->target);
          FLATCHECK_INPUT(child, "export: call_module '" << n->target << "' does not exist");
          std::vector<Traced> cargs;
          for (const auto& a : n->args) cargs.push_back(resolve(a, env));
          std::string cfqn = join_fqn(fqn, n->target);
          std::string ckey = call_key(cfqn, calls_[cfqn]++);
          std::vector<StackEntry> inner = stack_.entries();
          inner.push_back({ckey, cfqn, child->type});
          ModuleStack caller = std::exchange(stack_, ModuleStack(std::move(inner)));
          std::vector<Traced> outs = trace(*child, cfqn, ckey, cargs);
          stack_ = std::move(caller);
          if (outs.size() == 1)
            env[n] = outs[0];
          else
            env[n] = {Traced::kTuple, nullptr, {}, outs};
          break;
        }
        case NodeOp::kOutput: {
          std::vector<Traced> outs;
          for (const auto& a : n->args) outs.push_back(resolve(a, env));
          return outs;
        }
      }
    }
    throw InputError("export: graph of '" + fqn + "' has no output node");
  }

  Traced trace_call_function(const Module& m, const Node& n, const std::string& key,
                             const std::unordered_map<const Node*, Traced>& env) {
    switch (n.fn) {
      case OpCode::kBranch: {
        Traced flag = resolve(n.args.at(0), env);
        FLATCHECK_INPUT(flag.kind == Traced::kConst && std::holds_alternative<bool>(flag.constant),
                        "export: branch %" << n.name << " needs a static bool");
        return resolve(n.args.at(std::get<bool>(flag.constant) ? 1 : 2), env);
      }
      case OpCode::kGetitem: {
        Traced src = resolve(n.args.at(0), env);
        int64_t idx = std::get<int64_t>(n.args.at(1));
        if (src.kind == Traced::kTuple) {
          FLATCHECK_INPUT(idx >= 0 && idx < static_cast<int64_t>(src.elems.size()),
                          "export: getitem %" << n.name << " index out of range");
          return src.elems[static_cast<size_t>(idx)];
        }
        return of_node(emit(OpCode::kGetitem, {tensor_node(src, n), idx}, n, key));
      }
      case OpCode::kCopy: {
        Node* dst = std::get<Node*>(n.args.at(0));
        bool is_buffer = false;
        TensorPtr t = dst->op == NodeOp::kGetAttr ? m.attribute(dst->target, &is_buffer) : nullptr;
        FLATCHECK_INPUT(t && is_buffer, "export: copy_ %" << n.name << " must write a buffer");
        Node* v = tensor_node(resolve(n.args.at(1), env), n);
        Node* c = emit(OpCode::kCopy, {latest_.at(t.get()), v}, n, key);
        latest_[t.get()] = c;
        copy_target_[c] = t.get();
        return of_node(c);
      }
      default:
        break;
    }
    std::vector<Arg> args;
    for (const auto& a : n.args) {
      Traced t = resolve(a, env);
      FLATCHECK_INPUT(t.kind != Traced::kTuple,
                      "export: node %" << n.name << " uses a tuple as a value");
      if (t.kind == Traced::kNode)
        args.emplace_back(t.node);
      else
        args.push_back(t.constant);
    }
    return of_node(emit(n.fn, std::move(args), n, key));
  }

  // copy_(dst, v) nodes become buffer-mutation outputs: uses of the copy read v instead.
  void functionalize(Node* out) {
    std::vector<const Tensor*> order;
    std::unordered_map<const Tensor*, Node*> last_value;
    for (Node* n : g_.nodes()) {
      if (n->op != NodeOp::kCallFunction || n->fn != OpCode::kCopy) continue;
      const Tensor* t = copy_target_.at(n);
      Node* v = std::get<Node*>(n->args[1]);
      if (!last_value.count(t)) order.push_back(t);
      last_value[t] = v;
      g_.replace_all_uses(n, v);
      g_.erase(n);
    }
    if (fault_on(Fault::kContainerOrderOutputs)) {
      // Fault: the values come from a map keyed by FQN (name order), the specs below follow the
      // order of the first mutations.
      std::map<std::string, Node*> by_fqn;
      for (const Tensor* t : order) by_fqn[buffer_fqn_.at(t)] = last_value[t];
      size_t k = 0;
      for (const auto& [fqn, v] : by_fqn) {
        out->args.emplace_back(v);
        p_.sig.outputs.push_back(
            {OutputSpec::kBufferMutation, v->name, buffer_fqn_.at(order[k++])});
      }
      return;
    }
    for (const Tensor* t : order) {
      out->args.emplace_back(last_value[t]);
      p_.sig.outputs.push_back(
          {OutputSpec::kBufferMutation, last_value[t]->name, buffer_fqn_.at(t)});
    }
  }

  Program& p_;
  Graph& g_;
  ExportPlaceholderNames placeholder_names_;
  std::unordered_map<const Tensor*, Node*> lifted_;
  std::unordered_map<const Tensor*, Node*> latest_;
  std::unordered_map<const Tensor*, std::string> buffer_fqn_;
  std::unordered_map<std::string, Node*> by_mangled_;       // placeholder name -> node
  std::unordered_map<const Node*, std::string> requested_;  // node -> the name asked for
  std::unordered_map<const Node*, const Tensor*> copy_target_;
  std::map<std::string, int> calls_;
  ModuleStack stack_;  // the calls being traced, as the nodes emitted now carry them
};

}  // namespace

Program export_program(const Module& root) {
  lint(root);
  Program p;
  Exporter(p).run(root);
  return p;
}

}  // namespace flatcheck
