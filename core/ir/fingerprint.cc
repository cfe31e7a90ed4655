#include "core/ir/fingerprint.h"

#include <type_traits>

#include "core/base/ptr_table.h"
#include "core/ir/engine.h"

namespace flatcheck {
namespace {

struct Fingerprinter {
  DigestStream d;
  bool types = true;  // digest each node's meta.val
  // First visits, numbered: a later visit of the same module or tensor digests the number.
  PtrTable<Module, uint64_t> modules;
  PtrTable<Tensor, uint64_t> tensors;

  void shape(const Shape& s) {
    d.word(s.size());
    for (int64_t v : s) d.word(static_cast<uint64_t>(v));
  }
  void tensor(const Tensor& t) {
    shape(t.shape);
    d.bytes(t.data.data(), t.data.size() * sizeof(float));
  }
  void shared_tensor(const Tensor* t) {
    auto [seen, fresh] = tensors.emplace(t);
    if (!fresh) return d.tag('A'), d.word(*seen);
    *seen = tensors.size();
    d.tag('T');
    tensor(*t);
  }
  // A map of names to pointers: its size, then each name and what `each` digests of the
  // pointee (a null one is a tag of its own).
  template <class Map, class F>
  void named(const Map& m, F&& each) {
    d.word(m.size());
    for (const auto& [k, v] : m) {
      d.str(k);
      if (v)
        each(*v);
      else
        d.tag('-');
    }
  }
  void value_type(const std::optional<ValueType>& t) {
    if (!t) return d.tag('-');
    d.tag('v');
    d.word(t->kind);
    shape(t->shape);
    d.word(t->elems.size());
    for (const Shape& s : t->elems) shape(s);
  }
  // Constants, of arguments and of engine ops, each kind with its tag.
  void constant(bool v) { d.tag('b'), d.word(v); }
  void constant(int64_t v) { d.tag('i'), d.word(static_cast<uint64_t>(v)); }
  void constant(float v) { d.tag('f'), d.word(float_bits(v)); }
  void constant(const std::vector<int64_t>& v) {
    d.tag('L'), d.bytes(v.data(), v.size() * sizeof(int64_t));
  }
  void arg(const Arg& a, const PtrTable<Node, uint64_t>& position) {
    std::visit(
        [&](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, Node*>) {
            const uint64_t* pos = position.find(v);  // another graph's node, or erased: its name
            if (pos)
              d.tag('n'), d.word(*pos);
            else
              d.tag('N'), d.str(v->name);
          } else {
            constant(v);
          }
        },
        a);
  }
  void graph(const Graph& g) {
    PtrTable<Node, uint64_t> position(g.size());
    d.word(g.size());
    for (const Node* n = g.first(); n; n = n->next) {
      position[n] = position.size();
      d.tag('n');
      d.word(static_cast<uint64_t>(n->op));
      d.word(static_cast<uint64_t>(n->fn));
      d.word(n->erased);
      d.str(n->target);
      d.str(n->name);
      d.word(n->args.size());
      for (const Arg& a : n->args) arg(a, position);
      if (types) value_type(n->meta.val);
      d.word(n->meta.nn_module_stack.size());
      for (const StackEntry& e : n->meta.nn_module_stack) d.str(e.key), d.str(e.fqn), d.str(e.type);
      d.str(n->meta.origin);
    }
  }
  void bindings(const std::vector<EngineBinding>& bs) {
    d.word(bs.size());
    for (const EngineBinding& b : bs) d.str(b.name), d.word(b.slot), d.word(b.position);
  }
  void ints(const std::vector<int>& v) { d.bytes(v.data(), v.size() * sizeof(int)); }
  void engine(const Engine& e) {
    d.str(e.name);
    bindings(e.inputs);
    bindings(e.outputs);
    d.word(e.constants.size());
    for (const auto& [slot, t] : e.constants) d.word(slot), tensor(t);
    d.word(e.slots.size());
    for (const EngineSlot& s : e.slots) shape(s.shape), d.word(s.offset);
    d.word(e.ops.size());
    for (const EngineOp& op : e.ops) {
      d.word(static_cast<uint64_t>(op.op));
      ints(op.in);
      ints(op.out);
      d.word(op.scalars.size());
      for (const Scalar& s : op.scalars) std::visit([&](const auto& v) { constant(v); }, s);
      d.str(op.origin);
    }
    d.word(static_cast<uint64_t>(e.arena_floats));
  }
  void module(const Module& m) {
    auto [seen, fresh] = modules.emplace(&m);
    if (!fresh) return d.tag('A'), d.word(*seen);
    *seen = modules.size();
    d.tag('M');
    d.str(m.type);
    auto state = [&](const Tensor& t) { shared_tensor(&t); };
    named(m.params, state);
    named(m.buffers, state);
    named(m.engines, [&](const Engine& e) { engine(e); });
    graph(m.graph);
    named(m.children, [&](const Module& c) { module(c); });
  }
};

}  // namespace

Digest fingerprint_module(const Module& m, bool types) {
  Fingerprinter f;
  f.types = types;
  f.module(m);
  return f.d.take();
}

Digest fingerprint_program(const Program& p) {
  Fingerprinter f;
  f.d.tag('P');
  if (p.root)
    f.module(*p.root);
  else
    f.d.tag('-');
  f.d.word(p.module_types.size());
  for (const auto& [k, v] : p.module_types) f.d.str(k), f.d.str(v);
  f.d.word(p.sig.inputs.size());
  for (const InputSpec& s : p.sig.inputs) f.d.word(s.kind), f.d.str(s.name), f.d.str(s.target);
  f.d.word(p.sig.outputs.size());
  for (const OutputSpec& s : p.sig.outputs) f.d.word(s.kind), f.d.str(s.name), f.d.str(s.target);
  // Each state entry is its own tensor (as a program file writes it), sharing not digested.
  f.named(p.state, [&](const Tensor& t) { f.tensor(t); });
  return f.d.take();
}

}  // namespace flatcheck
