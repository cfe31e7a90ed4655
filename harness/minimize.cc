// The minimizer. Each reduction is a named function over a copy of the case; the table
// kReductions (STYLE.md: libFuzzer's mutator table) orders them, big cuts first, and lets the
// log say which steps led to the result. A step is kept only when the failure's signature is
// unchanged; rounds repeat until none makes progress or the check budget is spent.
#include "harness/minimize.h"
#include "core/base/names.h"

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/passes/passes.h"

namespace flatcheck {
namespace {

// Modules of the tree with their paths, each module once.
std::vector<std::pair<std::string, Module*>> modules_of(Module& root) {
  std::vector<std::pair<std::string, Module*>> out;
  for_each_module(root, [&](const std::string& p, Module& m) { out.emplace_back(p, &m); });
  return out;
}

Node* nth_node(Module& m, size_t i) {
  size_t k = 0;
  for (Node* n = m.graph.first(); n; n = n->next, ++k)
    if (k == i) return n;
  return nullptr;
}

// A value to stand in for n's (of type `t`): an argument of `n` of that type, else the nearest
// earlier node of the graph with that type (a shape-changing chain, concat after split, has no
// argument of its result's type; it defines everything after it, so the graph stays in order).
Node* same_typed_input(Node* n, const ValueType& t) {
  for (Node* in : n->input_nodes())
    if (in->meta.val && *in->meta.val == t) return in;
  for (Node* p = n->prev; p; p = p->prev)
    if (p->meta.val && *p->meta.val == t) return p;
  return nullptr;
}

// The call targets and attributes every module is reached by, relative to it: its own graph's,
// and those an ancestor names through a dotted path ("a.b" called from the root reaches b of a,
// "a.buf" read there reaches buf of a). A module under two names gets the union; it is walked
// again only when a path brings something new.
void collect_uses(Module& m, const std::set<std::string>& from_above,
                  std::map<const Module*, std::set<std::string>>& uses) {
  auto [it, fresh] = uses.try_emplace(&m);
  std::set<std::string>& mine = it->second;
  size_t before = mine.size();
  mine.insert(from_above.begin(), from_above.end());
  if (!fresh && mine.size() == before) return;
  if (fresh)
    for (Node* n = m.graph.first(); n; n = n->next)
      if (n->op == NodeOp::kCallModule || n->op == NodeOp::kGetAttr) mine.insert(n->target);
  std::set<std::string> snapshot = mine;  // the recursion may add to `uses`, not to `mine`
  for (auto& [name, child] : m.children) {
    std::set<std::string> below;
    for (const auto& u : snapshot)
      if (u.size() > name.size() && u.compare(0, name.size() + 1, name + ".") == 0)
        below.insert(u.substr(name.size() + 1));
    collect_uses(*child, below, uses);
  }
}

// Removes module children that nothing calls or reads through, and state nothing reads.
void prune(Module& root) {
  std::map<const Module*, std::set<std::string>> uses;
  collect_uses(root, {}, uses);
  // Every module stays alive until the end: an erased child may be listed after its parent.
  std::vector<std::shared_ptr<Module>> alive;
  for (auto& [path, m] : modules_of(root))
    for (auto& [_, child] : m->children) alive.push_back(child);
  for (auto& [path, m] : modules_of(root)) {
    const std::set<std::string>& used = uses[m];
    for (auto it = m->children.begin(); it != m->children.end();) {
      bool keep = used.count(it->first) > 0;
      for (const auto& u : used) keep |= u.rfind(it->first + ".", 0) == 0;
      it = keep ? std::next(it) : m->children.erase(it);
    }
    for (auto* state : {&m->params, &m->buffers})
      for (auto it = state->begin(); it != state->end();)
        it = used.count(it->first) ? std::next(it) : state->erase(it);
  }
}

// Removes pure nodes without users in every graph (placeholders of children stay), then, with
// `unused`, the children and state nothing uses.
void clean(Module& root, bool unused) {
  for (auto& [path, m] : modules_of(root)) eliminate_dead_code(m->graph);
  if (unused) prune(root);
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

}  // namespace

namespace {

bool one_call(Case& c) {
  if (c.config.calls <= 1) return false;
  c.config.calls = 1;
  return true;
}

bool simple_inputs(Case& c) {
  bool changed = false;
  for (auto& t : c.inputs)
    for (auto& x : t.data)
      if (float_bits(x) != float_bits(1.0f)) x = 1.0f, changed = true;
  return changed;
}

bool simple_state(Case& c) {
  bool changed = false;
  for (auto& [p, m] : modules_of(*c.module))
    for (auto* st : {&m->params, &m->buffers})
      for (auto& [k, t] : *st)
        for (auto& x : t->data)
          if (float_bits(x) != float_bits(0.5f)) x = 0.5f, changed = true;
  return changed;
}

// The reductions, in the order each round tries them: big cuts (whole calls) first.
struct Reduction {
  enum Kind { kCallNodes, kNodes, kRootOutputs, kWholeCase, kFallbackOps };
  const char* name;
  Kind kind;
  bool (*on_node)(Module&, Node*) = nullptr;  // kCallNodes, kNodes
  bool (*on_case)(Case&) = nullptr;           // kWholeCase
};
const Reduction kReductions[] = {
    {"drop-call", Reduction::kCallNodes, drop_call},
    {"inline-call", Reduction::kCallNodes, inline_call},
    {"drop-node", Reduction::kNodes, drop_node},
    {"drop-output", Reduction::kRootOutputs},
    {"simplify-op", Reduction::kNodes, simplify_op},
    {"one-call", Reduction::kWholeCase, nullptr, one_call},
    {"simple-inputs", Reduction::kWholeCase, nullptr, simple_inputs},
    {"simple-state", Reduction::kWholeCase, nullptr, simple_state},
    {"fewer-fallbacks", Reduction::kFallbackOps},
};

class Minimizer {
 public:
  Minimizer(const Case& start, const Failure& failure, const MinimizeOptions& opts)
      : opts_(opts), oracle_(shrink_oracle(opts.oracle, failure)), target_(failure.kind()) {
    r_.reduced = clone_case(start);
    r_.failure = failure;
    // Steps that need a node's type (drop-node) read meta.val: a case straight from the
    // generator or a file may not carry every node's, and until a step is kept none is typed.
    try {
      ScopedFaultSuppression harness_edits;
      infer_types(*r_.reduced.module);
    } catch (const InputError&) {
      // An untypable case: the type-free steps still apply.
    }
  }

  MinimizeResult run() {
    // Unused children and state go with every step, unless the failure needs them (state no
    // graph reads can still be missing from an exported program): then they all stay.
    prune_ = keeps_target_when_pruned();
    bool progress = true;
    while (progress && !spent()) {
      progress = false;
      for (const Reduction& red : kReductions) progress |= apply(red);
    }
    r_.stopped_early = spent();
    return std::move(r_);
  }

 private:
  // The check or time budget ran out.
  bool spent() const {
    if (r_.checks >= opts_.max_checks) return true;
    if (opts_.time_budget_s <= 0) return false;
    std::chrono::duration<double> t = std::chrono::steady_clock::now() - start_;
    return t.count() >= opts_.time_budget_s;
  }

  struct Step {
    const char* name;
    std::function<bool(Case&)> apply;
  };

  bool apply(const Reduction& red) {
    switch (red.kind) {
      case Reduction::kCallNodes:
      case Reduction::kNodes:
        return node_steps(red.name, red.on_node, red.kind == Reduction::kCallNodes);
      case Reduction::kRootOutputs: {
        bool any = false;
        for (size_t k = 0; k < 4; ++k)
          any |= try_step({red.name, [k](Case& c) { return drop_root_output(*c.module, k); }});
        return any;
      }
      case Reduction::kWholeCase:
        return try_step({red.name, red.on_case});
      case Reduction::kFallbackOps: {
        bool any = false;
        for (const auto& op : std::set<std::string>(r_.reduced.config.fallback_ops))
          any |=
              try_step({red.name, [op](Case& c) { return c.config.fallback_ops.erase(op) > 0; }});
        return any;
      }
    }
    return false;
  }

  // True when the case with its unused children and state pruned still shows the target.
  bool keeps_target_when_pruned() {
    Case c = clone_case(r_.reduced);
    if (!edited_shows_target(
            c, [](Case&) { return true; }, true))
      return false;
    r_.reduced = std::move(c);
    return true;
  }

  // Applies a step to a copy; keeps it when the failure signature is unchanged.
  bool try_step(const Step& s) {
    if (spent()) return false;
    Case c = clone_case(r_.reduced);
    if (!edited_shows_target(c, s.apply, prune_)) return false;
    r_.reduced = std::move(c);
    ++r_.steps;
    r_.log.push_back(s.name);
    return true;
  }

  // Edits `c`, cleans it and checks it; true when it shows the target (r_.failure becomes it).
  bool edited_shows_target(Case& c, const std::function<bool(Case&)>& edit, bool prune) {
    try {
      ScopedFaultSuppression harness_edits;  // faults apply to the checked pipeline only
      if (!edit(c)) return false;
      clean(*c.module, prune);
      infer_types(*c.module);
      lint(*c.module);
    } catch (const InputError&) {
      return false;
    }
    ++r_.checks;
    OracleResult res = opts_.check ? opts_.check(c) : check_case(c, oracle_);
    bool shows = res.failure && res.failure->kind() == target_;
    if (shows) r_.failure = *res.failure;
    if (opts_.progress) opts_.progress(case_size(shows ? c : r_.reduced), r_.checks);
    return shows;
  }

  // Node-level steps over every (module, node index), last nodes first.
  bool node_steps(const char* name, bool (*fn)(Module&, Node*), bool calls_only) {
    bool any = false;
    auto mods = modules_of(*r_.reduced.module);
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
          mods = modules_of(*r_.reduced.module);  // the tree changed: refresh
          if (mi >= mods.size() || mods[mi].first != path) return true;
        }
      }
    }
    return any;
  }

  const MinimizeOptions& opts_;
  OracleOptions oracle_;  // opts_.oracle for this failure (shrink_oracle)
  bool prune_ = true;     // steps drop unused children and state (see run())
  const std::string target_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  MinimizeResult r_;
};

}  // namespace

OracleOptions shrink_oracle(OracleOptions o, const Failure& failure) {
  o.swap = o.swap && failure.property == "swap";
  return o;
}

MinimizeResult minimize(const Case& start, const Failure& failure, const MinimizeOptions& opts) {
  return Minimizer(start, failure, opts).run();
}

}  // namespace flatcheck
