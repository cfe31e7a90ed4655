// unflatten: rebuild the module tree of an exported program from nn_module_stack
// (PyTorch's torch.export.unflatten after #137013).
//
// 1. Calls: nodes are grouped into a tree of calls by their stack keys ("n", "n@1").
// 2. Each call's graph is built bottom-up: inputs are values it reads from outside, outputs are
//    values read outside it; parameters and buffers it owns are read by get_attr, first thing
//    in the call; a buffer mutation becomes a copy_ at the end of the innermost call that
//    computes the value and owns the buffer. A buffer's old value that a call needs after an
//    earlier call's copy_ is read by the first caller holding both, and passed down (stale()).
// 3. Calls of one FQN whose graphs are equal share one module; a different graph becomes a
//    sibling named after the call key ("n@1"). All variants share parameter and buffer storage.
#include <algorithm>
#include <functional>
#include <unordered_map>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/base/names.h"
#include "core/passes/passes.h"

namespace flatcheck {
namespace {

struct Call {
  std::string key, fqn, type;
  Call* parent = nullptr;
  size_t order = 0;  // when the call begins: calls are numbered in the flat graph's order
  // Items in order: a flat node (node != nullptr) or a child call.
  struct Item {
    const Node* node = nullptr;
    Call* child = nullptr;
  };
  std::vector<Item> items;
  // Filled while building.
  std::vector<const Node*> inputs, outputs;
  std::vector<std::pair<const Node*, std::string>> mutations;  // value, buffer FQN
  std::string variant;  // the attribute name the parent calls ("n", "n@1")
  std::shared_ptr<Module> module;
};

bool owns(const std::string& module_fqn, const std::string& state_fqn) {
  return module_fqn.empty() || state_fqn.rfind(module_fqn + ".", 0) == 0;
}

std::string relative(const std::string& module_fqn, const std::string& state_fqn) {
  return module_fqn.empty() ? state_fqn : state_fqn.substr(module_fqn.size() + 1);
}

std::string last_component(const std::string& s) {
  size_t dot = s.rfind('.');
  return dot == std::string::npos ? s : s.substr(dot + 1);
}

class Unflattener {
 public:
  explicit Unflattener(const Program& p) : p_(p) {
    for (const auto& s : p.sig.inputs)
      if (s.kind != InputSpec::kUserInput) state_of_[p.root->graph.find(s.name)] = s.target;
  }

  std::shared_ptr<Module> run() {
    build_tree();
    place_mutations();
    compute_interfaces();
    build(root_);
    return root_.module;
  }

 private:
  bool within(const Call* c, const Call* ancestor) const {
    for (; c; c = c->parent)
      if (c == ancestor) return true;
    return false;
  }

  Call* call_of(const Node* n) const {
    auto it = call_of_.find(n);
    return it == call_of_.end() ? const_cast<Call*>(&root_) : it->second;
  }

  void build_tree() {
    root_.type = p_.root->type;
    std::vector<Call*> open;  // open[i] is the call at stack depth i
    for (Node* n = p_.root->graph.first(); n; n = n->next) {
      if (n->op == NodeOp::kPlaceholder || n->op == NodeOp::kOutput) continue;
      const auto& stack = n->meta.nn_module_stack;
      size_t keep = 0;
      while (keep < open.size() && keep < stack.size() && same_call(*open[keep], stack[keep]))
        ++keep;
      open.resize(keep);
      for (size_t d = keep; d < stack.size(); ++d) {
        Call* parent = d == 0 ? &root_ : open[d - 1];
        calls_.push_back(std::make_unique<Call>());
        Call* c = calls_.back().get();
        c->key = stack[d].key;
        c->fqn = stack[d].fqn;
        c->type = stack[d].type;
        c->parent = parent;
        c->order = calls_.size();  // the root is 0
        parent->items.push_back({nullptr, c});
        open.push_back(c);
      }
      Call* owner = stack.empty() ? &root_ : open.back();
      owner->items.push_back({n, nullptr});
      call_of_[n] = owner;
    }
  }

  bool same_call(const Call& c, const StackEntry& e) const {
    // Fault (PyTorch #132993): consecutive calls of one module are merged into one.
    if (fault_on(Fault::kMergeBackToBackCalls)) return c.fqn == e.fqn;
    return c.key == e.key;
  }

  // Each buffer mutation goes to the innermost call that computes its value and owns the buffer.
  void place_mutations() {
    const Node* out = p_.root->graph.output_node();
    for (size_t i = 0; i < p_.sig.outputs.size(); ++i) {
      const auto& spec = p_.sig.outputs[i];
      if (spec.kind != OutputSpec::kBufferMutation) continue;
      const Node* v = std::get<Node*>(out->args[i]);
      Call* c = call_of(v);
      while (c->parent && !owns(c->fqn, spec.target)) c = c->parent;
      c->mutations.emplace_back(v, spec.target);
      mutated_in_[spec.target] = c;
    }
  }

  // Inputs: values read inside a call but defined outside (state it owns excepted), in order
  // of first use. Outputs: values defined inside and read outside, in definition order.
  void compute_interfaces() {
    std::unordered_map<const Node*, std::vector<Call*>> use_sites;
    const Node* out = p_.root->graph.output_node();
    for (Node* n = p_.root->graph.first(); n; n = n->next) {
      if (n->op == NodeOp::kPlaceholder) continue;
      for (size_t i = 0; i < n->args.size(); ++i) {
        auto q = std::get_if<Node*>(&n->args[i]);
        if (!q) continue;
        if (n == out && p_.sig.outputs[i].kind == OutputSpec::kBufferMutation) continue;
        use_sites[*q].push_back(n == out ? &root_ : call_of(n));
      }
    }
    for (const auto& c : calls_)
      for (const auto& [v, target] : c->mutations) use_sites[v].push_back(c.get());
    for (const auto& [v, target] : root_.mutations) use_sites[v].push_back(&root_);

    // Walk nodes in order so inputs come in first-use order and outputs in definition order.
    for (Node* n = p_.root->graph.first(); n; n = n->next) {
      if (n->op == NodeOp::kOutput) continue;
      Call* def = n->op == NodeOp::kPlaceholder ? &root_ : call_of(n);
      for (Call* c = def; c && c != &root_; c = c->parent) {
        bool outside = false;
        for (Call* u : use_sites[n]) outside |= !within(u, c);
        if (outside) c->outputs.push_back(n);
      }
    }
    for (Node* n = p_.root->graph.first(); n; n = n->next) {
      if (n->op == NodeOp::kPlaceholder) continue;
      std::vector<const Node*> reads;
      for (Node* v : n->node_args()) reads.push_back(v);
      Call* site = n->op == NodeOp::kOutput ? &root_ : call_of(n);
      add_inputs(site, reads);
    }
    for (const auto& c : calls_)
      for (const auto& [v, target] : c->mutations) add_inputs(c.get(), {v});
  }

  void add_inputs(Call* site, const std::vector<const Node*>& reads) {
    for (const Node* v : reads) {
      Call* def = v->op == NodeOp::kPlaceholder ? &root_ : call_of(v);
      for (Call* c = site; c && c != &root_ && !within(def, c); c = c->parent) {
        auto st = state_of_.find(v);
        if (st != state_of_.end() && owns(c->fqn, st->second) && !stale(st->second, *c))
          break;  // read by get_attr
        if (std::find(c->inputs.begin(), c->inputs.end(), v) == c->inputs.end())
          c->inputs.push_back(v);
      }
    }
  }

  // Whether a get_attr of buffer `fqn` at the start of call `c` would read the buffer after
  // its update: the copy_ sits at the end of another call that ran before `c` began (a call
  // that holds `c`, or runs inside it or after it, leaves the read the original value). Such a
  // read moves up to the first caller that holds the update's call, which reads the buffer
  // before it runs and passes the value down.
  bool stale(const std::string& fqn, const Call& c) const {
    auto m = mutated_in_.find(fqn);
    if (m == mutated_in_.end()) return false;
    const Call* at = m->second;
    return at != &root_ && !within(&c, at) && !within(at, &c) && at->order < c.order;
  }

  TensorPtr state_tensor(const std::string& fqn, bool copy) {
    TensorPtr t = p_.state.at(fqn);
    if (!copy) return t;
    return std::make_shared<Tensor>(*t);
  }

  // The module object for a call of `fqn`, holding that module's own parameters and buffers.
  std::shared_ptr<Module> new_module(const std::string& fqn, const std::string& type, bool copy) {
    auto m = std::make_shared<Module>();
    m->type = type;
    for (const auto& s : p_.sig.inputs) {
      if (s.kind == InputSpec::kUserInput || !owns(fqn, s.target)) continue;
      std::string rel = relative(fqn, s.target);
      if (rel.find('.') != std::string::npos) continue;
      (s.kind == InputSpec::kParameter ? m->params : m->buffers)[rel] =
          state_tensor(s.target, copy);
    }
    return m;
  }

  // A stand-in module for a child FQN that no call of this variant reached: it holds the state.
  std::shared_ptr<Module> stub(const std::string& fqn) {
    auto& s = stubs_[fqn];
    if (s) return s;
    auto it = p_.module_types.find(fqn);
    s = new_module(fqn, it == p_.module_types.end() ? "Module" : it->second, false);
    s->graph.output({});
    attach_stub_children(*s, fqn);
    share_children(fqn, s);
    return s;
  }

  void attach_stub_children(Module& m, const std::string& fqn) {
    for (const auto& [child_fqn, type] : p_.module_types) {
      if (!owns(fqn, child_fqn) || child_fqn == fqn) continue;
      std::string rel = relative(fqn, child_fqn);
      if (rel.find('.') != std::string::npos || m.children.count(rel)) continue;
      auto first = first_variant_.find(child_fqn);
      m.children[rel] = first != first_variant_.end() ? first->second : stub(child_fqn);
    }
  }

  // Every module object of one FQN (its variants and its stub) has every child variant attached
  // under that FQN, as PyTorch's variants share one `_modules`: a call that skips levels
  // attaches its variant inside an intermediate module, and whichever object of that FQN ends
  // up on the path must have it.
  void share_children(const std::string& fqn, const std::shared_ptr<Module>& m) {
    modules_of_[fqn].push_back(m);
    for (const auto& [name, child] : attached_[fqn]) m->children[name] = child;
  }

  void attach(const std::string& fqn, Module& at, const std::string& name,
              const std::shared_ptr<Module>& child) {
    at.children[name] = child;
    attached_[fqn][name] = child;
    for (const auto& m : modules_of_[fqn]) m->children[name] = child;
  }

  // Makes the variant module of call `k` reachable from `m` (the module of fqn `fqn`) and
  // returns the call_module target. A call may skip levels (FX allows a call_module target
  // "a.b"): then the variant is attached inside the intermediate module (every object of its
  // FQN), which is created from the module tree when missing.
  std::string attach_call(Module& m, const std::string& fqn, const Call& k) {
    std::string rel = relative(fqn, k.fqn);
    size_t dot = rel.rfind('.');
    if (dot == std::string::npos) {
      m.children[k.variant] = k.module;
      return k.variant;
    }
    Module* at = &m;
    std::string at_fqn = fqn;
    size_t start = 0;
    while (start < dot) {
      size_t next = rel.find('.', start);
      std::string part = rel.substr(start, next - start);
      at_fqn = join_fqn(at_fqn, part);
      if (!at->children.count(part)) {
        auto first = first_variant_.find(at_fqn);
        at->children[part] = first != first_variant_.end() ? first->second : stub(at_fqn);
      }
      at = at->children[part].get();
      start = next + 1;
    }
    attach(at_fqn, *at, k.variant, k.module);
    return rel.substr(0, dot + 1) + k.variant;
  }

  // The values of one call's graph under construction: flat-graph node -> node in `g`; state
  // is read through get_attr on first use.
  struct Scope {
    Unflattener& u;
    const Call& c;
    Graph& g;
    std::unordered_map<const Node*, Node*> env;
    Node* value(const Node* v) {
      if (auto it = env.find(v); it != env.end()) return it->second;
      auto st = u.state_of_.find(v);
      FLATCHECK_CHECK(st != u.state_of_.end()) << "unflatten: no value for %" << v->name;
      Node* a = g.get_attr(relative(c.fqn, st->second), v->name);
      a->meta.val = v->meta.val;
      env[v] = a;
      return a;
    }
  };

  void add_placeholders(Scope& s, bool is_root) {
    if (is_root) {
      for (Node* ph : p_.root->graph.placeholders()) {
        if (state_of_.count(ph)) continue;
        Node* n = s.g.placeholder(ph->name, *ph->meta.val);
        n->meta = ph->meta;
        s.env[ph] = n;
      }
      return;
    }
    for (const Node* v : s.c.inputs) {
      Node* n = s.g.placeholder(v->name, v->meta.val.value_or(ValueType{}));
      n->meta.val = v->meta.val;
      n->meta.origin = v->meta.origin;
      s.env[v] = n;
    }
  }

  // Every state value the call uses is read by get_attr before anything else runs: a buffer is
  // read by value, and a placeholder of the exported program means the value before any
  // mutation, so a read placed at first use (after this call's copy_ or a child's) would see
  // the update.
  void read_state_first(Scope& s, bool is_root) {
    auto read = [&](const Node* v) {
      if (state_of_.count(v)) s.value(v);
    };
    for (auto& item : s.c.items) {
      if (item.node)
        for (const Node* v : item.node->node_args()) read(v);
      else
        for (const Node* v : item.child->inputs) read(v);
    }
    for (const auto& [v, _] : s.c.mutations) read(v);
    if (is_root) {
      for (const Node* v : p_.root->graph.output_node()->node_args()) read(v);
    } else {
      for (const Node* v : s.c.outputs) read(v);
    }
  }

  void add_child_call(Scope& s, Module& m, Call& k) {
    std::vector<Arg> args;
    for (const Node* v : k.inputs) {
      Node* value = s.value(v);
      // Fault: the child's placeholder (named like v) is matched to the parent node of its name.
      if (fault_on(Fault::kSwapByName))
        if (Node* same = s.g.find(v->name)) value = same;
      args.emplace_back(value);
    }
    std::string target = attach_call(m, s.c.fqn, k);
    Node* call = s.g.call_module(target, std::move(args), last_component(k.fqn));
    call->meta.nn_module_stack =
        k.outputs.empty() ? ModuleStack{} : k.outputs[0]->meta.nn_module_stack;
    if (k.outputs.size() == 1) {
      s.env[k.outputs[0]] = call;
      call->meta.val = k.outputs[0]->meta.val;
      return;
    }
    for (size_t i = 0; i < k.outputs.size(); ++i) {
      Node* gi = s.g.call_function(OpCode::kGetitem, {call, static_cast<int64_t>(i)});
      gi->meta.val = k.outputs[i]->meta.val;
      s.env[k.outputs[i]] = gi;
    }
  }

  void add_outputs(Scope& s, bool is_root) {
    for (const auto& [v, target] : s.c.mutations) {
      Node* dst = s.g.get_attr(relative(s.c.fqn, target));
      Node* cp = s.g.call_function(OpCode::kCopy, {dst, s.value(v)});
      cp->meta.val = v->meta.val;
    }
    std::vector<Arg> outs;
    if (is_root) {
      const Node* out = p_.root->graph.output_node();
      for (size_t i = 0; i < p_.sig.outputs.size(); ++i)
        if (p_.sig.outputs[i].kind == OutputSpec::kUserOutput)
          outs.emplace_back(s.value(std::get<Node*>(out->args[i])));
    } else {
      for (const Node* v : s.c.outputs) outs.emplace_back(s.value(v));
    }
    s.g.output(std::move(outs));
  }

  // Builds the graph of call `c` (its children first), then shares the module of an earlier
  // call of the same FQN with an equal graph, or makes it a new variant.
  void build(Call& c) {
    for (auto& item : c.items)
      if (item.child) build(*item.child);
    bool is_root = &c == &root_;
    auto& variants = variants_[c.fqn];
    bool copy_state = fault_on(Fault::kUnflattenCopiesState) && !variants.empty();
    auto m = is_root ? new_module("", c.type, false) : new_module(c.fqn, c.type, copy_state);
    Scope s{*this, c, m->graph, {}};
    add_placeholders(s, is_root);
    read_state_first(s, is_root);
    for (auto& item : c.items) {
      if (!item.node) {
        add_child_call(s, *m, *item.child);
        continue;
      }
      const Node* n = item.node;
      std::vector<Arg> args = n->args;
      for (auto& a : args)
        if (auto q = std::get_if<Node*>(&a)) *q = s.value(*q);
      Node* copy = s.g.call_function(n->fn, std::move(args), n->name);
      copy->meta = n->meta;
      s.env[n] = copy;
    }
    add_outputs(s, is_root);
    attach_stub_children(*m, c.fqn);
    if (is_root) {
      c.module = m;
      return;
    }
    deduplicate(c, m, variants);
  }

  void deduplicate(Call& c, const std::shared_ptr<Module>& m,
                   std::vector<std::pair<std::string, std::shared_ptr<Module>>>& variants) {
    const Graph& g = m->graph;
    GraphEq eq;
    eq.constants = !fault_on(Fault::kDedupIgnoresConstants);
    // Fault (PyTorch's _check_graph_equivalence): call_module targets blanked before comparing.
    eq.call_targets = !fault_on(Fault::kDedupIgnoresCallTargets);
    if (fault_on(Fault::kUnflattenDedupHang) && !variants.empty() &&
        !graph_equal(variants.front().second->graph, g)) {
      // Fault: a fixpoint that never converges (volatile: the loop has an observable effect).
      for (volatile uint64_t spin = 0;; spin = spin + 1) {
      }
    }
    for (const auto& [name, existing] : variants) {
      // Fault (PyTorch #137013): every call runs the first call's graph.
      if (fault_on(Fault::kUnflattenFirstCallGraph) ||
          (graph_equal(existing->graph, g, eq) &&
           (!eq.call_targets || same_callees(*existing, *m)))) {
        c.variant = name;
        c.module = existing;
        return;
      }
    }
    c.variant = last_component(c.key);
    c.module = m;
    variants.emplace_back(c.variant, m);
    first_variant_.emplace(c.fqn, m);
    share_children(c.fqn, m);
  }

  // Equal graphs run the same only if their call targets name the same module objects: a call
  // that skips levels attaches its variant inside an intermediate module, and an earlier
  // variant's intermediate may be another object, without that attachment.
  static bool same_callees(const Module& a, const Module& b) {
    for (Node* n = a.graph.first(); n; n = n->next)
      if (n->op == NodeOp::kCallModule && a.submodule(n->target) != b.submodule(n->target))
        return false;
    return true;
  }

  const Program& p_;
  Call root_;
  std::vector<std::unique_ptr<Call>> calls_;
  std::unordered_map<const Node*, Call*> call_of_;
  std::unordered_map<const Node*, std::string> state_of_;
  std::unordered_map<std::string, const Call*>
      mutated_in_;  // buffer FQN -> the call with its copy_
  std::map<std::string, std::vector<std::pair<std::string, std::shared_ptr<Module>>>> variants_;
  std::map<std::string, std::shared_ptr<Module>> first_variant_;
  std::map<std::string, std::shared_ptr<Module>> stubs_;
  // FQN -> every module object made for it, and the children attached to all of them.
  std::map<std::string, std::vector<std::shared_ptr<Module>>> modules_of_;
  std::map<std::string, std::map<std::string, std::shared_ptr<Module>>> attached_;
};

// The parents of every variant of `fqn`'s last component, with the attribute names.
void collect_variants(Module& m, const std::string& path, const std::vector<std::string>& parts,
                      size_t depth, std::vector<std::pair<Module*, std::string>>& out,
                      std::vector<std::string>* paths) {
  for (auto& [name, child] : m.children) {
    std::string base = name.substr(0, name.find('@'));
    // Fault: a child whose name starts with the part counts as one of its variants.
    bool prefix = fault_on(Fault::kVariantPrefixMatch) && base.rfind(parts[depth], 0) == 0;
    if (base != parts[depth] && !prefix) continue;
    std::string p = join_fqn(path, name);
    if (depth + 1 == parts.size()) {
      out.emplace_back(&m, name);
      if (paths) paths->push_back(p);
    } else {
      collect_variants(*child, p, parts, depth + 1, out, paths);
    }
  }
}

std::vector<std::string> split_fqn(const std::string& fqn) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t dot = fqn.find('.', start);
    parts.push_back(fqn.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

}  // namespace

std::shared_ptr<Module> unflatten(const Program& exported) {
  lint_program(exported);
  for (Node* n = exported.root->graph.first(); n; n = n->next)
    FLATCHECK_INPUT(n->op != NodeOp::kCallModule && n->op != NodeOp::kGetAttr,
                    "unflatten: expects an exported (flat) program; found %" << n->name);
  auto root = Unflattener(exported).run();
  infer_types(*root);
  lint(*root);
  return root;
}

std::vector<std::string> fqn_variants(const Module& root, const std::string& fqn) {
  std::vector<std::pair<Module*, std::string>> found;
  std::vector<std::string> paths;
  collect_variants(const_cast<Module&>(root), "", split_fqn(fqn), 0, found, &paths);
  return paths;
}

void swap_module(Module& root, const std::string& fqn, std::shared_ptr<Module> replacement) {
  std::vector<std::pair<Module*, std::string>> found;
  collect_variants(root, "", split_fqn(fqn), 0, found, nullptr);
  FLATCHECK_INPUT(!found.empty(), "swap_module: no module '" << fqn << "'");
  for (auto& [parent, name] : found)
    if (!fault_on(Fault::kSwapFirstVariantOnly) || name.find('@') == std::string::npos)
      parent->children[name] = replacement;
}

void set_attr_all(Module& root, const std::string& fqn, const std::string& attr,
                  const TensorPtr& value) {
  std::vector<std::pair<Module*, std::string>> found;
  collect_variants(root, "", split_fqn(fqn), 0, found, nullptr);
  FLATCHECK_INPUT(!found.empty(), "set_attr_all: no module '" << fqn << "'");
  bool held = false;
  for (auto& [parent, name] : found) {
    Module& m = *parent->children[name];
    bool has = m.params.count(attr) || m.buffers.count(attr);
    held |= has;
    if (!has || (fault_on(Fault::kSwapFirstVariantOnly) && name.find('@') != std::string::npos))
      continue;
    (m.params.count(attr) ? m.params[attr] : m.buffers[attr]) = value;
  }
  FLATCHECK_INPUT(held,
                  "set_attr_all: no variant of '" << fqn << "' has an attribute '" << attr << "'");
}

}  // namespace flatcheck
