// emit-torch's forms of state and of its updates (harness/torch_emit_state.h).
#include "harness/torch_emit_state.h"

#include <algorithm>
#include <functional>

#include "core/base/names.h"
#include "harness/torch_emit_text.h"

namespace flatcheck {

bool emit_non_persistent(const EmitOptions& options, const std::string& cls,
                         const std::string& key) {
  return options.non_persistent_buffers && fnv1a64(cls + "." + key) % 3 != 0;
}

bool emit_tensor_constant(const EmitOptions& options, const std::string& cls,
                          const std::string& key) {
  return options.tensor_constants && fnv1a64("const " + cls + "." + key) % 3 != 0;
}

ArithSpelling arith_spelling(OpCode fn, bool op_kwargs) {
  if (fn == OpCode::kDiv || fn == OpCode::kDivScalar)
    return {"div", op_kwargs ? "rounding_mode" : "", "None"};
  if (fn == OpCode::kMul || fn == OpCode::kMulScalar) return {"mul", "", ""};
  const bool add = fn == OpCode::kAdd || fn == OpCode::kAddScalar;
  if (op_kwargs) return {add ? "sub" : "add", "alpha", "-1"};
  return {add ? "add" : "sub", "", ""};
}

std::string arith_call(OpCode fn, bool op_kwargs, const std::string& x, const std::string& y) {
  ArithSpelling a = arith_spelling(fn, op_kwargs);
  return "torch." + a.op + "(" + x + ", " + y +
         (a.key.empty() ? "" : ", " + a.key + "=" + a.value) + ")";
}

std::vector<std::string> updated_paths(const Module& m) {
  std::vector<std::string> out;
  for (Node* n = m.graph.first(); n; n = n->next)
    if (n->op == NodeOp::kCallFunction && n->fn == OpCode::kCopy) {
      const std::string& path = std::get<Node*>(n->args.at(0))->target;
      if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
    }
  return out;
}

namespace {

bool arithmetic(OpCode fn) {
  switch (fn) {
    case OpCode::kAdd:
    case OpCode::kSub:
    case OpCode::kDiv:
    case OpCode::kMul:
    case OpCode::kAddScalar:
    case OpCode::kSubScalar:
    case OpCode::kDivScalar:
    case OpCode::kMulScalar:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::unordered_map<const Node*, const Node*> inplace_updates(const Module& m) {
  std::unordered_map<const Node*, const Node*> out;
  for (Node* c = m.graph.first(); c; c = c->next) {
    if (c->op != NodeOp::kCallFunction || c->fn != OpCode::kCopy) continue;
    Node* const* v = std::get_if<Node*>(&c->args.at(1));
    if (!v || (*v)->op != NodeOp::kCallFunction || !arithmetic((*v)->fn)) continue;
    Node* const* r = std::get_if<Node*>(&(*v)->args.at(0));
    const std::string& path = std::get<Node*>(c->args.at(0))->target;
    if (!r || (*r)->op != NodeOp::kGetAttr || (*r)->target != path || !(*v)->meta.val ||
        (*v)->meta.val != (*r)->meta.val)
      continue;
    bool clear = true;
    for (Node* n = (*r)->next; n && n != c && clear; n = n->next)
      clear = n->op != NodeOp::kCallModule &&
              !(n->op == NodeOp::kCallFunction && n->fn == OpCode::kCopy);
    if (clear) out[c] = *v;
  }
  return out;
}

bool emit_step_counter(const EmitOptions& options, const std::string& cls) {
  return options.step_counters && fnv1a64("steps " + cls) % 3 != 0;
}

std::string step_counter_name(const Module& m) {
  std::string name = "num_steps";
  while (m.params.count(name) || m.buffers.count(name) || m.children.count(name)) name += "_";
  return name;
}

bool step_counter_first(const std::string& cls) {
  return fnv1a64("steps at " + cls) % 2 == 0;
}

std::unordered_map<const Module*, uint64_t> runs_per_call(const Module& root) {
  // Callers before callees: the reverse of a post-order over call edges (a call's target is a
  // module below the caller, and the loader's module tree has no cycle, so neither have calls).
  std::vector<const Module*> post;
  std::unordered_set<const Module*> seen;
  std::function<void(const Module&)> visit = [&](const Module& m) {
    if (!seen.insert(&m).second) return;
    for (Node* n = m.graph.first(); n; n = n->next)
      if (n->op == NodeOp::kCallModule)
        if (const Module* child = m.submodule(n->target)) visit(*child);
    post.push_back(&m);
  };
  visit(root);
  std::unordered_map<const Module*, uint64_t> runs{{&root, 1}};
  for (auto it = post.rbegin(); it != post.rend(); ++it) {
    const uint64_t r = runs[*it];
    for (Node* n = (*it)->graph.first(); n; n = n->next)
      if (n->op == NodeOp::kCallModule)
        if (const Module* child = (*it)->submodule(n->target)) runs[child] += r;
  }
  return runs;
}

std::string buffer_line(const EmitOptions& options, const std::string& cls, const std::string& key,
                        const std::string& expr, bool& constant) {
  if (emit_tensor_constant(options, cls, key)) {
    constant = true;
    return "        setattr(self, " + py_str(key) + ", " + expr +
           ")  # a plain tensor attribute, not a buffer\n";
  }
  return "        self.register_buffer(" + py_str(key) + ", " + expr +
         (emit_non_persistent(options, cls, key) ? ", persistent=False" : "") + ")\n";
}

size_t state_fqns(const Module& m, std::unordered_set<const Tensor*>& tensors, int depth) {
  size_t n = m.params.size() + m.buffers.size();
  for (const auto* state : {&m.params, &m.buffers})
    for (const auto& [_, t] : *state) tensors.insert(t.get());
  if (depth < kMaxModuleDepth)
    for (const auto& [_, child] : m.children) n += state_fqns(*child, tensors, depth + 1);
  return n;
}

}  // namespace flatcheck
