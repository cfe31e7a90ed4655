// The swap property (harness/swap_check.h).
#include "harness/swap_check.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "core/base/check.h"
#include "core/base/names.h"
#include "core/passes/passes.h"
#include "core/runtime/interpreter.h"
#include "harness/oracle.h"
#include "harness/pass_rules.h"

namespace flatcheck {

namespace {

// The module objects reachable by two or more paths (an aliased module and everything below
// it), found without enumerating paths (aliasing at every level would make them exponential).
void mark_below(const Module& m, std::set<const Module*>& multi) {
  if (!multi.insert(&m).second) return;
  for (const auto& [_, c] : m.children) mark_below(*c, multi);
}
void find_multi(const Module& m, std::set<const Module*>& seen, std::set<const Module*>& multi) {
  if (!seen.insert(&m).second) {
    mark_below(m, multi);
    return;
  }
  for (const auto& [_, c] : m.children) find_multi(*c, seen, multi);
}

// The tensors held under two or more FQNs: by two attributes, or by a module with two paths.
std::set<const Tensor*> shared_tensors(const Module& root, const std::set<const Module*>& multi) {
  std::map<const Tensor*, int> holders;
  for_each_module(const_cast<Module&>(root), [&](const std::string&, Module& m) {
    for (const auto* state : {&m.params, &m.buffers})
      for (const auto& [_, t] : *state) holders[t.get()] += multi.count(&m) ? 2 : 1;
  });
  std::set<const Tensor*> out;
  for (const auto& [t, n] : holders)
    if (n > 1) out.insert(t);
  return out;
}

// True when no tensor of `m`'s subtree is shared. Editing a shared tensor's FQN in the eager
// tree ends the sharing there, while export keeps one FQN for it, which the unflattened tree
// reads from wherever the sharers read it: the two edits would mean different things.
bool owns_state(const Module& m, const std::set<const Tensor*>& shared) {
  bool owns = true;
  for_each_module(const_cast<Module&>(m), [&](const std::string&, Module& sub) {
    for (const auto* state : {&sub.params, &sub.buffers})
      for (const auto& [_, t] : *state) owns &= !shared.count(t.get());
  });
  return owns;
}

// What a swap's eligibility needs from the eager tree, worked out once per case.
struct EagerTree {
  std::set<const Module*> multi;    // modules reachable by two or more paths, and all below them
  std::set<const Tensor*> shared;   // tensors held under two or more FQNs
  std::vector<std::string> called;  // FQNs with a live call, under one path only (root aside)
};

EagerTree eager_tree(const Module& eager) {
  EagerTree t;
  std::set<const Module*> seen;
  find_multi(eager, seen, t.multi);
  t.shared = shared_tensors(eager, t.multi);
  // Editing a module under one path edits that FQN and no other: below an aliased module every
  // module is marked too, so the module itself says it.
  for (const auto& [fqn, calls] : expected_live_calls(eager))
    if (calls > 0 && !fqn.empty() && !t.multi.count(eager.submodule(fqn))) t.called.push_back(fqn);
  return t;
}

// A module's placeholder types, then its output types (empty when a value has no type).
std::vector<ValueType> signature(const Module& m) {
  std::vector<ValueType> sig;
  for (const Node* ph : m.graph.placeholders()) {
    if (!ph->meta.val) return {};
    sig.push_back(*ph->meta.val);
  }
  const Node* out = m.graph.output_node();
  if (!out) return {};
  for (const Arg& a : out->args) {
    const Node* const* n = std::get_if<Node*>(&a);
    if (!n || !(*n)->meta.val) return {};
    sig.push_back(*(*n)->meta.val);
  }
  return sig;
}

// True when every output of `m` is computed in it (export turns an input passed through into
// the caller's own value, and unflatten's variant returns something else in its place).
bool computes_outputs(const Module& m) {
  const Node* out = m.graph.output_node();
  if (!out) return false;
  for (const Arg& a : out->args) {
    const Node* const* n = std::get_if<Node*>(&a);
    if (!n || (*n)->op == NodeOp::kPlaceholder) return false;
  }
  return true;
}

// True when `m`'s subtree holds a buffer. Export functionalizes in-place updates, so unflatten
// may move a buffer's update from the child into its caller: the variant then no longer has
// the eager module's effects, only its results.
bool has_buffers(const Module& m) {
  bool any = false;
  for_each_module(const_cast<Module&>(m),
                  [&](const std::string&, Module& sub) { any |= !sub.buffers.empty(); });
  return any;
}

// True when a signature's order can be told from its types alone: tensors only, and no two
// inputs (or two outputs) of one type. unflatten orders a variant's inputs and outputs by where
// the values arise in the flat graph, not as the eager module lists them; a swap needs the
// signature preserved, as torch's does, and only such a signature shows that it was.
bool recognizable(const std::vector<ValueType>& sig, size_t inputs) {
  for (const ValueType& t : sig)
    if (t.kind != ValueType::kTensor) return false;
  auto distinct = [](const std::vector<ValueType>& v) {
    for (size_t i = 0; i < v.size(); ++i)
      for (size_t j = i + 1; j < v.size(); ++j)
        if (v[i] == v[j]) return false;
    return true;
  };
  return distinct({sig.begin(), sig.begin() + static_cast<long>(inputs)}) &&
         distinct({sig.begin() + static_cast<long>(inputs), sig.end()});
}

// The parent of `fqn` in an eager tree and the child's attribute name.
std::pair<Module*, std::string> parent_of(Module& root, const std::string& fqn) {
  size_t dot = fqn.rfind('.');
  if (dot == std::string::npos) return {&root, fqn};
  return {root.submodule(fqn.substr(0, dot)), fqn.substr(dot + 1)};
}

// The same tensor, moved: every element plus a quarter (special values stay special).
TensorPtr moved(const Tensor& t) {
  auto out = std::make_shared<Tensor>(t);
  for (auto& x : out->data) x += 0.25f;
  return out;
}

struct Runs {
  std::vector<std::vector<Tensor>> outputs;  // per call
  std::string error;                         // what stopped the runs, if anything
};

Runs run_calls(const Module& m, const Case& c, Backend& backend) {
  Runs r;
  try {
    for (int k = 0; k < c.config.calls; ++k) {
      RunContext ctx;
      ctx.backend = &backend;
      std::vector<Value> in;
      for (const auto& t : c.inputs) in.push_back(Value::of(t));
      std::vector<Tensor> outs;
      for (auto& v : run_module(m, in, ctx)) outs.push_back(*v.tensor);
      r.outputs.push_back(std::move(outs));
    }
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return r;
}

std::optional<std::string> differ(const Module& eager, const Module& unflat, const Case& c,
                                  Backend& backend) {
  Runs want = run_calls(eager, c, backend);
  if (!want.error.empty()) return std::nullopt;  // the edit made the eager module unrunnable
  Runs got = run_calls(unflat, c, backend);
  if (!got.error.empty()) return "the unflattened module does not run: " + got.error;
  std::ostringstream os;
  for (size_t k = 0; k < want.outputs.size(); ++k) {
    if (want.outputs[k].size() != got.outputs[k].size())
      return "call " + std::to_string(k + 1) + ": " + std::to_string(got.outputs[k].size()) +
             " outputs, the eager module gives " + std::to_string(want.outputs[k].size());
    for (size_t i = 0; i < want.outputs[k].size(); ++i)
      if (!same_tensor(want.outputs[k][i], got.outputs[k][i], c.config.nan_exact)) {
        os << "call " << k + 1 << ", output " << i << ": the eager module gives "
           << want.outputs[k][i] << ", the unflattened one " << got.outputs[k][i];
        return os.str();
      }
  }
  std::vector<std::pair<std::string, TensorPtr>> state;  // by the first path to each module
  for_each_module(const_cast<Module&>(eager), [&](const std::string& path, Module& m) {
    for (const auto* held : {&m.params, &m.buffers})
      for (const auto& [k, t] : *held) state.emplace_back(join_fqn(path, k), t);
  });
  for (const auto& [fqn, t] : state) {
    TensorPtr u = unflat.attribute(fqn);
    if (u && !same_tensor(*t, *u, c.config.nan_exact)) {
      os << "final state '" << fqn << "' after " << c.config.calls
         << " calls: the eager module gives " << *t << ", the unflattened one " << *u;
      return os.str();
    }
  }
  return std::nullopt;
}

}  // namespace

namespace {

std::vector<std::string> module_candidates(const Module& eager, const Module& unflattened,
                                           const EagerTree& tree) {
  // Calls into a module from above its parent ("a.b" called by the root): (caller, callee).
  std::vector<std::pair<std::string, std::string>> reaching;
  for_each_module(const_cast<Module&>(eager), [&](const std::string& path, Module& m) {
    for (const Node* n = m.graph.first(); n; n = n->next)
      if (n->op == NodeOp::kCallModule && n->target.find('.') != std::string::npos)
        reaching.emplace_back(path, join_fqn(path, n->target));
  });
  auto inside = [](const std::string& path, const std::string& fqn) {
    return path == fqn || path.rfind(fqn + ".", 0) == 0;
  };
  std::vector<std::string> out;
  for (const std::string& fqn : tree.called) {
    const Module* m = eager.submodule(fqn);
    if (!owns_state(*m, tree.shared)) continue;
    // A swap replaces the whole subtree: nothing outside it may call into it directly.
    if (std::any_of(reaching.begin(), reaching.end(), [&](const auto& r) {
          return !inside(r.first, fqn) && r.second.rfind(fqn + ".", 0) == 0;
        }))
      continue;
    std::vector<ValueType> sig = signature(*m);
    bool fits = !sig.empty() && recognizable(sig, m->graph.placeholders().size()) &&
                computes_outputs(*m) && !has_buffers(*m);
    for (const std::string& path : fqn_variants(unflattened, fqn)) {
      const Module* v = unflattened.submodule(path);
      if (!v) fits = false;
      if (!v || (v->graph.size() <= 1 && v->graph.placeholders().empty())) continue;  // a stub
      fits &= signature(*v) == sig;
    }
    if (fits) out.push_back(fqn);
  }
  return out;
}

// At most this many module swaps and this many attribute sets when every candidate is tried.
constexpr size_t kMaxSwaps = 8;

// The candidates to try: all of them (capped), or the one `pick` selects.
template <class T>
std::vector<T> chosen(const std::vector<T>& all, std::optional<uint64_t> pick) {
  if (all.empty()) return {};
  size_t n = std::min<size_t>(all.size(), kMaxSwaps);  // a pick is one of what `all` tries
  if (pick) return {all[*pick % n]};
  return {all.begin(), all.begin() + static_cast<long>(n)};
}

}  // namespace

std::vector<std::string> swappable_fqns(const Module& eager, const Module& unflattened) {
  return module_candidates(eager, unflattened, eager_tree(eager));
}

SwapResult check_swaps(const Case& c, const Module& unflattened, Backend& backend,
                       std::optional<uint64_t> pick) {
  SwapResult r;
  EagerTree tree = eager_tree(*c.module);
  // A child swapped for a copy with moved weights.
  for (const std::string& fqn : chosen(module_candidates(*c.module, unflattened, tree), pick)) {
    auto eager = clone_module(*c.module, /*share_state=*/false);
    auto replacement = clone_module(*eager->submodule(fqn), /*share_state=*/false);
    for_each_module(*replacement, [](const std::string&, Module& m) {
      for (auto& [_, t] : m.params) t = moved(*t);
    });
    auto unflat = clone_module(unflattened, /*share_state=*/false);
    swap_module(*unflat, fqn, clone_module(*replacement, /*share_state=*/false));
    auto [parent, name] = parent_of(*eager, fqn);
    parent->children[name] = replacement;
    r.module_variants =
        std::max(r.module_variants, static_cast<int>(fqn_variants(*unflat, fqn).size()));
    if (auto d = differ(*eager, *unflat, c, backend)) {
      r.breach = SwapBreach{"swap_module '" + fqn + "'", *d};
      return r;
    }
  }
  // A parameter or buffer set to a moved copy of its value.
  std::vector<std::pair<std::string, std::string>> attrs;  // module FQN, attribute
  for (const std::string& fqn : tree.called) {
    const Module* m = c.module->submodule(fqn);
    std::set<std::string> held;  // what some variant holds (one no graph reads is dropped)
    for (const std::string& path : fqn_variants(unflattened, fqn))
      if (const Module* v = unflattened.submodule(path))
        for (const auto* state : {&v->params, &v->buffers})
          for (const auto& [k, _] : *state) held.insert(k);
    for (const auto* state : {&m->params, &m->buffers})
      for (const auto& [k, t] : *state)
        if (held.count(k) && !tree.shared.count(t.get())) attrs.emplace_back(fqn, k);
  }
  std::optional<uint64_t> attr_pick;  // other bits of the digest than the module's pick
  if (pick) attr_pick = *pick / 7;
  for (const auto& [fqn, attr] : chosen(attrs, attr_pick)) {
    auto eager = clone_module(*c.module, /*share_state=*/false);
    Module* m = eager->submodule(fqn);
    auto& slot = m->params.count(attr) ? m->params[attr] : m->buffers[attr];
    slot = moved(*slot);
    auto unflat = clone_module(unflattened, /*share_state=*/false);
    set_attr_all(*unflat, fqn, attr, std::make_shared<Tensor>(*slot));
    r.attr_variants =
        std::max(r.attr_variants, static_cast<int>(fqn_variants(*unflat, fqn).size()));
    if (auto d = differ(*eager, *unflat, c, backend)) {
      r.breach = SwapBreach{"set_attr_all '" + fqn + "' '" + attr + "'", *d};
      return r;
    }
  }
  return r;
}

}  // namespace flatcheck
