// The minimizer. Each reduction is a named function over a copy of the case; a table of them
// (STYLE.md: libFuzzer's mutator table) lets the log say which steps led to the result.
#include "harness/minimize.h"
#include "core/base/names.h"

#include <functional>
#include <unordered_map>

#include "core/base/faults.h"
#include "core/base/check.h"
#include "core/passes/passes.h"

namespace flatcheck {
namespace {

// Modules of the tree with their paths, each module once.
std::vector<std::pair<std::string, Module*>> modules_of(Module& root) {
  std::vector<std::pair<std::string, Module*>> out;
  std::vector<const Module*> seen;
  std::function<void(Module&, const std::string&)> walk = [&](Module& m, const std::string& p) {
    if (std::find(seen.begin(), seen.end(), &m) != seen.end()) return;
    seen.push_back(&m);
    out.emplace_back(p, &m);
    for (auto& [k, c] : m.children) walk(*c, join_fqn(p, k));
  };
  walk(root, "");
  return out;
}

Node* nth_node(Module& m, size_t i) {
  size_t k = 0;
  for (Node* n = m.graph.first(); n; n = n->next, ++k)
    if (k == i) return n;
  return nullptr;
}

// A tensor argument of `n` with the given type, to stand in for n's value.
Node* same_typed_input(Node* n, const ValueType& t) {
  for (Node* in : n->input_nodes())
    if (in->meta.val && *in->meta.val == t) return in;
  return nullptr;
}

// Removes module children that no graph calls, and state no graph reads (children first
// decided at each level, so nothing is visited after it was freed).
void prune(Module& m) {
  std::set<std::string> called, attrs;
  for (Node* n = m.graph.first(); n; n = n->next) {
    if (n->op == NodeOp::kCallModule) called.insert(n->target.substr(0, n->target.find('.')));
    if (n->op == NodeOp::kGetAttr) attrs.insert(n->target);
  }
  for (auto it = m.children.begin(); it != m.children.end();) {
    bool used = called.count(it->first);
    for (const auto& a : attrs) used |= a.rfind(it->first + ".", 0) == 0;
    it = used ? std::next(it) : m.children.erase(it);
  }
  for (auto* state : {&m.params, &m.buffers})
    for (auto it = state->begin(); it != state->end();)
      it = attrs.count(it->first) ? std::next(it) : state->erase(it);
  for (auto& [_, c] : m.children) prune(*c);
}

// Removes pure nodes without users in every graph (placeholders of children stay).
void clean(Module& root) {
  for (auto& [path, m] : modules_of(root)) eliminate_dead_code(m->graph);
  prune(root);
}

// --- the reductions: each returns false when it does not apply to (module, node) ------------

// Replaces a call_module by one of its tensor arguments per output.
bool drop_call(Module& m, Node* n) {
  if (n->op != NodeOp::kCallModule || !n->meta.val) return false;
  if (n->meta.val->kind == ValueType::kTensor) {
    Node* in = same_typed_input(n, *n->meta.val);
    if (!in) return false;
    m.graph.replace_all_uses(n, in);
  } else {
    for (Node* u : m.graph.users(n)) {
      if (u->op != NodeOp::kCallFunction || u->fn != OpCode::kGetitem || !u->meta.val) return false;
      Node* in = same_typed_input(n, *u->meta.val);
      if (!in) return false;
      m.graph.replace_all_uses(u, in);
      m.graph.erase(u);
    }
  }
  m.graph.erase(n);
  return true;
}

// Copies the callee's body in place of the call, with static arguments substituted.
bool inline_call(Module& m, Node* call) {
  if (call->op != NodeOp::kCallModule) return false;
  Module* child = m.submodule(call->target);
  if (!child) return false;
  std::unordered_map<const Node*, Arg> env;
  auto phs = child->graph.placeholders();
  if (phs.size() != call->args.size()) return false;
  for (size_t i = 0; i < phs.size(); ++i) env[phs[i]] = call->args[i];
  std::vector<Arg> results = copy_body(m.graph, call, child->graph, env, call->target + ".",
                                       [](const Node& n, Node* c) { c->meta.val = n.meta.val; });
  if (results.size() == 1) {
    auto q = std::get_if<Node*>(&results[0]);
    if (!q) return false;
    m.graph.replace_all_uses(call, *q);
  } else {
    for (Node* u : m.graph.users(call)) {
      if (u->op != NodeOp::kCallFunction || u->fn != OpCode::kGetitem) return false;
      int64_t idx = std::get<int64_t>(u->args[1]);
      m.graph.replace_all_uses(u, std::get<Node*>(results.at(static_cast<size_t>(idx))));
      m.graph.erase(u);
    }
  }
  m.graph.erase(call);
  return true;
}

// Replaces a call_function by one of its inputs of the same type, or drops a buffer update.
bool drop_node(Module& m, Node* n) {
  if (n->op != NodeOp::kCallFunction) return false;
  if (n->fn == OpCode::kCopy && m.graph.users(n).empty()) {
    m.graph.erase(n);
    return true;
  }
  if (!n->meta.val || n->meta.val->kind != ValueType::kTensor) return false;
  Node* in = same_typed_input(n, *n->meta.val);
  if (!in) return false;
  m.graph.replace_all_uses(n, in);
  m.graph.erase(n);
  return true;
}

// Turns a binary op into add, a unary op into neg, a scalar op into add_scalar.
bool simplify_op(Module&, Node* n) {
  if (n->op != NodeOp::kCallFunction) return false;
  std::string_view sig = op_info(n->fn).sig;
  OpCode to;
  if (sig == "TT" && n->fn != OpCode::kMatmul && n->fn != OpCode::kCopy)
    to = OpCode::kAdd;
  else if (sig == "T")
    to = OpCode::kNeg;
  else if (sig == "Tf")
    to = OpCode::kAddScalar;
  else
    return false;
  if (to == n->fn) return false;
  n->fn = to;
  n->target = std::string(op_info(to).name);
  return true;
}

bool drop_root_output(Module& m, size_t which) {
  Node* out = m.graph.output_node();
  if (!out || out->args.size() < 2 || which >= out->args.size()) return false;
  out->args.erase(out->args.begin() + static_cast<long>(which));
  return true;
}

struct Step {
  const char* name;
  std::function<bool(Case&)> apply;
};

}  // namespace

MinimizeResult minimize(const Case& start, const Failure& failure, const MinimizeOptions& opts) {
  MinimizeResult r;
  r.reduced = clone_case(start);
  r.failure = failure;
  const std::string target = failure.signature();

  auto try_step = [&](const Step& s) -> bool {
    if (r.checks >= opts.max_checks) return false;
    Case c = clone_case(r.reduced);
    try {
      ScopedFaultSuppression harness_edits;  // faults apply to the checked pipeline only
      if (!s.apply(c)) return false;
      clean(*c.module);
      infer_types(*c.module);
      lint(*c.module);
    } catch (const InputError&) {
      return false;
    }
    ++r.checks;
    OracleResult res = opts.check ? opts.check(c) : check_case(c, opts.oracle);
    if (!res.failure || res.failure->signature() != target) return false;
    r.reduced = std::move(c);
    r.failure = *res.failure;
    ++r.steps;
    r.log.push_back(s.name);
    if (opts.progress) opts.progress(case_size(r.reduced), r.checks);
    return true;
  };

  // Node-level steps over every (module, node index), last nodes first.
  auto node_steps = [&](const char* name, bool (*fn)(Module&, Node*), bool calls_only) {
    bool any = false;
    auto mods = modules_of(*r.reduced.module);
    for (size_t mi = 0; mi < mods.size(); ++mi) {
      std::string path = mods[mi].first;
      size_t count = mods[mi].second->graph.size();
      for (size_t i = count; i-- > 0;) {
        Node* probe = nth_node(*mods[mi].second, i);
        if (!probe || (calls_only && probe->op != NodeOp::kCallModule)) continue;
        bool ok = try_step({name, [&, path, i](Case& c) {
                              Module* m = path.empty() ? c.module.get() : c.module->submodule(path);
                              Node* n = m ? nth_node(*m, i) : nullptr;
                              return n && fn(*m, n);
                            }});
        if (ok) {
          any = true;
          mods = modules_of(*r.reduced.module);  // the tree changed: refresh
          if (mi >= mods.size() || mods[mi].first != path) return true;
        }
      }
    }
    return any;
  };

  bool progress = true;
  while (progress && r.checks < opts.max_checks) {
    progress = false;
    progress |= node_steps("drop-call", drop_call, true);
    progress |= node_steps("inline-call", inline_call, true);
    progress |= node_steps("drop-node", drop_node, false);
    for (size_t k = 0; k < 4; ++k)
      progress |=
          try_step({"drop-output", [k](Case& c) { return drop_root_output(*c.module, k); }});
    progress |= node_steps("simplify-op", simplify_op, false);
    progress |= try_step({"one-call", [](Case& c) {
                            if (c.config.calls <= 1) return false;
                            c.config.calls = 1;
                            return true;
                          }});
    progress |= try_step({"simple-inputs", [](Case& c) {
                            bool changed = false;
                            for (auto& t : c.inputs)
                              for (auto& x : t.data)
                                if (float_bits(x) != float_bits(1.0f)) x = 1.0f, changed = true;
                            return changed;
                          }});
    progress |= try_step({"simple-state", [](Case& c) {
                            bool changed = false;
                            for (auto& [p, m] : modules_of(*c.module))
                              for (auto* st : {&m->params, &m->buffers})
                                for (auto& [k, t] : *st)
                                  for (auto& x : t->data)
                                    if (float_bits(x) != float_bits(0.5f)) x = 0.5f, changed = true;
                            return changed;
                          }});
    for (const auto& op : std::set<std::string>(r.reduced.config.fallback_ops))
      progress |= try_step(
          {"fewer-fallbacks", [op](Case& c) { return c.config.fallback_ops.erase(op) > 0; }});
  }
  return r;
}

}  // namespace flatcheck
