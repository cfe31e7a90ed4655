// The generator body (generators/generate.h), internal: this class, with the op steps, graph
// breaks, int dims and parameters in op_steps.cc. It only ever builds valid programs: operands
// are picked among values whose shapes fit, so any choice sequence (a seed, fuzzer bytes, a
// shrunk recipe) is a case.
//
// A module is built step by step over a pool of values (an op, a child call, a branch on the
// static flag, a buffer update, ...). Children are defined at their first call.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/base/check.h"
#include "core/base/names.h"
#include "generators/generate.h"
#include "generators/types.h"
#include "generators/values.h"

namespace flatcheck {
namespace gen {

struct Val {
  Node* node;
  Shape shape;
};

class Builder {
 public:
  Builder(Source& src, const SwarmConfig& sw) : src_(src), sw_(sw) {}

  Case build() {
    Case c;
    auto root = std::make_shared<Module>();
    root->type = "Model";
    int n_inputs = static_cast<int>(src_.range(1, 2));
    std::vector<Shape> shapes(static_cast<size_t>(n_inputs), sw_.base_shape);
    define(*root, shapes, Statics{}, 0, nullptr, sw_.max_inlined);
    annotate_types(*root);  // the generator's own derivation, not the core's
    c.module = root;
    for (const auto& s : shapes) c.inputs.push_back(draw_tensor(src_, s, sw_.special_values));
    c.config = sw_.pipeline;
    return c;
  }

 private:
  // A module's static placeholders: a bool flag, a float scale, an int dim.
  struct Statics {
    bool flag = false, scale = false, dim = false;
  };

  // A child module definition and the shapes its calls must pass.
  struct Child {
    std::string name;
    std::shared_ptr<Module> module;
    std::vector<Shape> inputs, outputs;
    Statics statics;          // its static placeholders
    int64_t last_dim = 0;     // the int constant of the latest call
    std::vector<Child> kids;  // its own children, for calls that skip a level
    bool last_flag = false;   // the flag constant of the latest call
    int calls = 0;            // calls emitted so far
    int64_t inlined = 0;      // the nodes a call of it stands for, its own calls expanded
    bool alternate = false;   // each call passes the other flag constant than the last
  };

  // What the steps of one module definition share.
  struct Scope {
    Module& m;
    std::vector<Val>& pool;
    std::vector<Child> children;
    int depth;
    Node* flag;
    Node* scale;
    Node* dim;
    TensorPtr buffer;
    std::string buffer_name = "buf";
    int64_t budget = 0;      // nodes this module may stand for, inlined
    int64_t call_extra = 0;  // what its calls add to its own nodes when inlined
    bool wrapped = false;    // a wrapper_step ran here
    bool wide = false;       // SwarmConfig::wide: many children, named 0, 1, ... 12

    int64_t inlined() const { return static_cast<int64_t>(m.graph.size()) + call_extra; }
  };

  std::string hint(std::string_view natural) {
    if (sw_.reserved_names && src_.chance(1, 6)) return reserved_name_hint(src_);
    return name_hint(src_, sw_.naming, natural, sibling_names_);
  }

  // Operands come from the most recent kWindow values: generation stays linear in the graph
  // size, and chains stay local, as in real models.
  static constexpr size_t kWindow = 32;
  static size_t window_start(const std::vector<Val>& pool) {
    return pool.size() > kWindow ? pool.size() - kWindow : 0;
  }

  const Val& pick(const std::vector<Val>& pool) {
    size_t start = window_start(pool);
    return pool[start + src_.below(pool.size() - start)];
  }

  // A pool value whose shape broadcasts with `s` (exact matches first), or nullptr.
  const Val* pick_compatible(const std::vector<Val>& pool, const Shape& s) {
    std::vector<const Val*> exact, bcast;
    for (size_t i = window_start(pool); i < pool.size(); ++i) {
      const Val& v = pool[i];
      if (v.shape == s)
        exact.push_back(&v);
      else {
        if (gen_broadcast(s, v.shape) == s) bcast.push_back(&v);
      }
    }
    if (!bcast.empty() && (exact.empty() || src_.chance(1, 4)))
      return bcast[src_.below(bcast.size())];
    if (!exact.empty()) return exact[src_.below(exact.size())];
    return nullptr;
  }

  Node* scalar_arg(Node* scale_ph) {
    if (scale_ph && src_.chance(1, 2)) return scale_ph;
    return nullptr;
  }

  float scalar_const() {
    static const std::array<float, 8> kScalars = {1.0f, 2.0f,  0.5f,    -1.0f,
                                                  3.0f, 0.25f, -0.125f, 10.0f};
    if (sw_.special_values && src_.chance(1, 4)) return special_value(src_);
    return kScalars[src_.below(kScalars.size())];
  }

  void add(std::vector<Val>& pool, Node* n, Shape s) {
    pool.push_back({n, std::move(s)});
    sibling_names_.push_back(n->name);
  }

  bool matmul_step(Module& m, std::vector<Val>& pool, const Val& a, OpCode op);

  bool concat_step(Graph& g, std::vector<Val>& pool, const Val& a, OpCode op);

  bool split_step(Graph& g, std::vector<Val>& pool, const Val& a, OpCode op,
                  bool both_halves = false);

  // The Torch-TensorRT shape: a split read once (its getitem hidden inside an engine), then a
  // split whose two halves leave the engine into a fallback, so the parent's new getitems take
  // names the fallback's placeholders had.
  void graph_break_step(Graph& g, std::vector<Val>& pool);

  // Puts a value with an even dimension last in the pool: `a` itself, or `a` concatenated with
  // itself along a dimension. False when `a` is too large to double.
  bool splittable(Graph& g, std::vector<Val>& pool, Val a);

  // An elementwise op of the fallback set (one tensor, two of one shape, or a tensor and a
  // scalar), if any.
  std::optional<OpCode> elementwise_fallback() const;

  // One op step over the pool; returns false when the op found no fitting operands.
  bool op_step(Module& m, std::vector<Val>& pool, Node* scale_ph);

  // A parameter of this module with the given shape (or a shared one from another module).
  Node* weight(Module& m, const Shape& s);

  // Builds module `m`'s graph, standing for at most `budget` nodes inlined; returns its output
  // shapes. Its children go to `kids` and its inlined size to `inlined` when given.
  std::vector<Shape> define(Module& m, const std::vector<Shape>& inputs, Statics st, int depth,
                            std::vector<Child>* kids, int64_t budget, int64_t* inlined = nullptr) {
    Graph& g = m.graph;
    std::vector<Val> pool;
    for (size_t i = 0; i < inputs.size(); ++i) {
      Node* x = g.placeholder(sw_.naming == NamingPolicy::kNatural ? "x" : hint("x"),
                              ValueType::tensor(inputs[i]));
      pool.push_back({x, inputs[i]});
    }
    Scope sc{m, pool, {}, depth, nullptr, nullptr, nullptr, nullptr};
    sc.budget = budget;
    sc.wide = depth == 0 && sw_.wide && depth < sw_.depth;
    sc.flag = st.flag ? g.placeholder("flag", ValueType::scalar(ValueType::kBool)) : nullptr;
    sc.scale = st.scale ? g.placeholder("scale", ValueType::scalar(ValueType::kFloat)) : nullptr;
    sc.dim = st.dim ? g.placeholder("dim", ValueType::scalar(ValueType::kInt)) : nullptr;
    if (sw_.buffers && src_.chance(1, 2)) sc.buffer = buffer_for(inputs[0]);
    if (sc.buffer) {
      sc.buffer_name = buffer_name_hint(src_, sw_.child_naming);
      m.buffers[sc.buffer_name] = sc.buffer;
    }
    int steps = static_cast<int>(src_.range(1, sw_.nodes));
    bool deeper = depth < sw_.depth;
    // A graph break first in the root: its getitems are the first of the flat graph, so the
    // names a fallback's placeholders keep are those the partitioned parent mints anew.
    if (depth == 0 && sw_.graph_breaks && src_.chance(3, 4)) {
      size_t before = pool.size();
      graph_break_step(g, pool);
      if (pool.size() > before) root_break_ = pool.back();  // a root output: not dead code
    }
    for (int s = 0; s < steps; ++s) {
      uint64_t kind = src_.weighted(
          {10, deeper ? 8 : 0, sc.flag && !sw_.forward_flags ? 2 : 0, sc.buffer ? 1 : 0,
           sc.flag && deeper && sw_.child_choice ? 2 : 0,
           sw_.read_after_write && !sc.children.empty() ? 2 : 0, sw_.graph_breaks ? 1 : 0,
           sc.dim ? 3 : 0, sw_.nested_variants && depth + 2 <= sw_.depth ? 2 : 0});
      if (kind == 1) {
        call_step(sc);
      } else if (kind == 2) {
        branch_step(sc);
      } else if (kind == 3) {
        buffer_step(sc);
      } else if (kind == 4) {
        choice_step(sc);
      } else if (kind == 5) {
        child_buffer_read(sc);
      } else if (kind == 6) {
        graph_break_step(g, pool);
      } else if (kind == 7) {
        dim_step(sc);
      } else if (kind == 8) {
        wrapper_step(sc);
      } else {
        for (int tries = 0; tries < 4 && !op_step(m, pool, sc.scale); ++tries) {
        }
      }
    }
    finish_steps(sc, deeper);
    std::vector<Shape> shapes = outputs(g, pool, depth);
    if (kids) *kids = std::move(sc.children);
    if (inlined) *inlined = sc.inlined();
    return shapes;
  }

 private:
  // What every module gets after its drawn steps.
  void finish_steps(Scope& sc, bool deeper) {
    Graph& g = sc.m.graph;
    if (sc.depth == 0 && sw_.nested_variants && !sc.wrapped) wrapper_step(sc);
    if (sc.wide) wide_step(sc);
    // Short step lists leave many modules without the calls every specialization bug needs: a
    // module that may have children calls one, and with repeated calls on, some child twice.
    if (deeper && sc.children.empty()) call_step(sc);
    if (sw_.repeated_calls && !sc.children.empty() &&
        std::none_of(sc.children.begin(), sc.children.end(),
                     [](const Child& c) { return c.calls >= 2; }))
      emit_call(sc, sc.children[src_.below(sc.children.size())]);
    // A static argument no step read is read once now (its result is the last value, an
    // output), so calls that pass different values compute different things.
    if (sc.flag && g.users(sc.flag).empty()) branch_step(sc);
    if (sc.scale && g.users(sc.scale).empty()) {
      const Val& a = pick(sc.pool);
      OpCode op = src_.chance(1, 2) ? OpCode::kMulScalar : OpCode::kAddScalar;
      Node* n = g.call_function(op, {a.node, sc.scale}, hint("mul_scalar"));
      sc.pool.push_back({n, a.shape});
    }
    if (sc.dim && g.users(sc.dim).empty()) dim_step(sc);
  }

  // The module's int argument as a dim, on a square matrix (any matrix a made square as a @ a^T)
  // so every value gives the same shape: calls of one module specialize by an int.
  void dim_step(Scope& sc);

  TensorPtr buffer_for(const Shape& s) {
    if (sw_.shared_buffers)
      for (const auto& b : shared_buffers_)
        if (b->shape == s && src_.chance(3, 4)) return b;
    auto t = std::make_shared<Tensor>(draw_tensor(src_, s, sw_.special_values));
    shared_buffers_.push_back(t);
    return t;
  }

  // Outputs: the last value, and sometimes others (up to max_outputs at the root).
  std::vector<Shape> outputs(Graph& g, std::vector<Val>& pool, int depth) {
    std::vector<Arg> outs{pool.back().node};
    std::vector<Shape> shapes{pool.back().shape};
    int most = depth == 0 ? sw_.max_outputs : 2;
    for (int tries = 0; tries < most && static_cast<int>(outs.size()) < most && pool.size() > 1 &&
                        src_.chance(1, 2);
         ++tries) {
      const Val& o = pool[src_.below(pool.size() - 1)];
      if (o.node->op != NodeOp::kPlaceholder || depth > 0) {
        outs.emplace_back(o.node);
        shapes.push_back(o.shape);
      }
    }
    if (depth == 0 && pool.back().node->op == NodeOp::kPlaceholder)
      outs[0] = g.call_function(OpCode::kClone, {pool.back().node}, hint("clone"));
    if (depth == 0 && root_break_.node &&
        std::find(outs.begin(), outs.end(), Arg(root_break_.node)) == outs.end()) {
      outs.emplace_back(root_break_.node);
      shapes.push_back(root_break_.shape);
    }
    if (!sw_.dead_code) keep_live(g, pool, outs, shapes, depth == 0 ? 6 : 4);
    g.output(std::move(outs));
    return shapes;
  }

  // Values nothing reads become outputs, call results first (up to `most` outputs; the others are
  // added into an output of their shape), so the calls and ops that made them are not dead code
  // that export removes before any pass sees them.
  void keep_live(Graph& g, const std::vector<Val>& pool, std::vector<Arg>& outs,
                 std::vector<Shape>& shapes, size_t most) {
    auto from_call = [](const Node* n) {
      if (n->op == NodeOp::kCallFunction && n->fn == OpCode::kGetitem) n = n->input_nodes()[0];
      return n->op == NodeOp::kCallModule;
    };
    std::unordered_set<const Node*> read;  // one walk, not a users() scan per pool value
    for (Node* n = g.first(); n; n = n->next)
      for (const Node* in : n->input_nodes()) read.insert(in);
    for (const Arg& o : outs) read.insert(std::get<Node*>(o));
    std::vector<const Val*> unread, rest;  // call results first, then the others
    for (const Val& v : pool) {
      const Node* n = v.node;
      if (n->op == NodeOp::kPlaceholder || n->op == NodeOp::kGetAttr || read.count(n) ||
          (n->op == NodeOp::kCallFunction && !op_info(n->fn).pure))
        continue;
      (from_call(n) ? unread : rest).push_back(&v);
    }
    unread.insert(unread.end(), rest.begin(), rest.end());
    for (const Val* v : unread) {
      if (outs.size() < most) {
        outs.emplace_back(v->node);
        shapes.push_back(v->shape);
        continue;
      }
      for (size_t i = 0; i < outs.size(); ++i) {
        Node* o = std::get<Node*>(outs[i]);
        if (shapes[i] == v->shape && o != root_break_.node && o->op != NodeOp::kPlaceholder) {
          outs[i] = g.call_function(OpCode::kAdd, {o, v->node}, hint("add"));
          break;
        }
      }
    }
  }

  void branch_step(Scope& sc) {
    Graph& g = sc.m.graph;
    const Val& a = pick(sc.pool);
    const Val* b = nullptr;
    for (size_t i = window_start(sc.pool); i < sc.pool.size(); ++i)
      if (sc.pool[i].shape == a.shape && sc.pool[i].node != a.node && src_.chance(1, 2))
        b = &sc.pool[i];
    Node* other = b ? b->node : g.call_function(OpCode::kNeg, {a.node}, hint("neg"));
    bool swap = src_.chance(1, 2);
    Node* br = g.call_function(
        OpCode::kBranch, {sc.flag, swap ? other : a.node, swap ? a.node : other}, hint("branch"));
    sc.pool.push_back({br, a.shape});
  }

  // An in-place update of the module's buffer. With read_after_write, the value read before the
  // update stays in the pool: later steps use it after the buffer changed.
  void buffer_step(Scope& sc) {
    Graph& g = sc.m.graph;
    Node* rd = g.get_attr(sc.buffer_name, hint("buf"));
    const Val* v = pick_compatible(sc.pool, sc.buffer->shape);
    Node* upd = nullptr;
    if (v) {
      upd = g.call_function(OpCode::kAdd, {rd, v->node}, hint("add"));
    } else {
      float k = scalar_const();  // one draw per statement: argument order is unspecified
      upd = g.call_function(OpCode::kAddScalar, {rd, k}, hint("add_scalar"));
    }
    // One draw per statement: argument evaluation order is unspecified in C++, and a seed
    // must mean the same case whatever the compiler.
    Node* dst = g.get_attr(sc.buffer_name, hint("buf"));
    std::string copy_name = hint("copy_");
    g.call_function(OpCode::kCopy, {dst, upd}, copy_name);
    sc.pool.push_back({upd, sc.buffer->shape});
    if (sw_.read_after_write) sc.pool.push_back({rd, sc.buffer->shape});
  }

  // The parent reads a child's buffer after calling it (the child updated it in place).
  void child_buffer_read(Scope& sc) {
    const Child& c = sc.children[src_.below(sc.children.size())];
    if (c.module->buffers.empty()) return;
    auto it = c.module->buffers.begin();
    Node* rd = sc.m.graph.get_attr(join_fqn(c.name, it->first), hint("buf"));
    sc.pool.push_back({rd, it->second->shape});
  }

  // Two child calls on one value, and the module's static flag choosing between their results:
  // the specializations differ only in which child's result is used.
  void choice_step(Scope& sc) {
    size_t before = sc.pool.size();
    call_step(sc);
    size_t mid = sc.pool.size();
    call_step(sc);
    if (mid == before || sc.pool.size() == mid) return;
    const Val& a = sc.pool[before];
    const Val& b = sc.pool[mid];
    if (a.shape != b.shape) return;
    Node* br = sc.m.graph.call_function(OpCode::kBranch, {sc.flag, a.node, b.node}, hint("branch"));
    sc.pool.push_back({br, a.shape});
  }

  // More than ten children, each small and called once (SwarmConfig::wide), so names 0 ... 12
  // share prefixes (1, 10, 11, 12) and sort differently as text and as numbers.
  void wide_step(Scope& sc);
  static constexpr int64_t kWideChildBudget = 24;

  // A child's name: numeric in a wide module, else by the naming switches, made unique.
  std::string child_name(const Module& m, size_t index, bool numeric = false);

  // A new child: a fresh definition, or a clone of an earlier one's body with fresh weights (a
  // repeated block).
  Child new_child(Scope& sc, int64_t cap = INT64_MAX) {
    Child c;
    c.name = child_name(sc.m, sc.children.size(), sc.wide);
    c.module = std::make_shared<Module>();
    if (sw_.repeated_blocks && !sc.children.empty() && src_.chance(3, 4)) {
      const Child& like = sc.children[src_.below(sc.children.size())];
      c = like;
      c.name = child_name(sc.m, sc.children.size(), sc.wide);
      c.module = clone_module(*like.module, /*share_state=*/false);
      c.kids.clear();
      for_each_module(*c.module, [&](const std::string&, Module& mod) {
        for (auto& [_, t] : mod.params) *t = draw_tensor(src_, t->shape, sw_.special_values);
      });
      sc.m.children[c.name] = c.module;
      return c;
    }
    sc.m.children[c.name] = c.module;
    c.module->type =
        "Layer" + std::to_string(sc.depth + 1) + "_" + std::to_string(sc.children.size());
    size_t nin = src_.chance(1, 3) ? 2 : 1;
    for (size_t i = 0; i < nin; ++i) c.inputs.push_back(pick(sc.pool).shape);
    c.statics.flag = sw_.specialize && src_.chance(3, 4);
    c.statics.scale = sw_.specialize && src_.chance(1, 2);
    c.statics.dim = sw_.specialize && sw_.int_args && src_.chance(2, 3);
    // Half of what the caller has left, so it can call the child at least twice.
    int64_t budget = std::min(cap, std::max<int64_t>(16, (sc.budget - sc.inlined()) / 2));
    c.outputs = define(*c.module, c.inputs, c.statics, sc.depth + 1, &c.kids, budget, &c.inlined);
    return c;
  }

  // Unflatten's dedup shape (SwarmConfig::nested_variants): a wrapper child whose flag is only
  // passed on to a specialized child of its own, called twice with (mostly) different flags, so
  // the two calls' graphs differ only in which variant of the inner child they call. One input
  // and one output: neither call prunes what the other keeps.
  void wrapper_step(Scope& sc) {
    if (sc.depth + 2 > sw_.depth) return;
    sc.wrapped = true;
    Shape in = pick(sc.pool).shape;
    Child w;
    w.name = child_name(sc.m, sc.children.size(), sc.wide);
    w.module = std::make_shared<Module>();
    w.module->type =
        "Wrap" + std::to_string(sc.depth + 1) + "_" + std::to_string(sc.children.size());
    w.inputs = {in};
    w.statics.flag = true;
    int64_t budget = std::max<int64_t>(16, (sc.budget - sc.inlined()) / 4);
    Graph& g = w.module->graph;
    Node* x = g.placeholder(sw_.naming == NamingPolicy::kNatural ? "x" : hint("x"),
                            ValueType::tensor(in));
    Node* flag = g.placeholder("flag", ValueType::scalar(ValueType::kBool));
    Child inner;
    inner.name = child_name(*w.module, 0);
    inner.module = std::make_shared<Module>();
    inner.module->type = "Layer" + std::to_string(sc.depth + 2) + "_w";
    w.module->children[inner.name] = inner.module;
    inner.inputs = {in};
    inner.statics.flag = true;
    inner.outputs = define(*inner.module, inner.inputs, inner.statics, sc.depth + 2, &inner.kids,
                           budget, &inner.inlined);
    Node* out = g.call_module(inner.name, {x, flag}, hint(target_to_str(inner.name)));
    Shape shape = inner.outputs[0];
    if (inner.outputs.size() > 1) {
      size_t idx = src_.below(inner.outputs.size());
      out = g.call_function(OpCode::kGetitem, {out, static_cast<int64_t>(idx)}, hint("getitem"));
      shape = inner.outputs[idx];
    }
    g.output({out});
    w.outputs = {shape};
    w.inlined = static_cast<int64_t>(g.size()) + inner.inlined;
    w.kids = {inner};
    w.last_flag = src_.chance(1, 2);
    w.alternate = true;
    sc.m.children[w.name] = w.module;
    sc.children.push_back(std::move(w));
    emit_call(sc, sc.children.back());
    emit_call(sc, sc.children.back());
  }

  void call_step(Scope& sc) {
    Child* child = nullptr;
    if (!sc.children.empty() && sw_.repeated_calls && src_.chance(3, 4))
      child = &sc.children[src_.below(sc.children.size())];
    if (!child && static_cast<int>(sc.children.size()) < sw_.fanout) {
      sc.children.push_back(new_child(sc));
      child = &sc.children.back();
      if (sw_.alias_modules && src_.chance(1, 2)) {
        // The same module object under a second name, called through either.
        Child alias = *child;
        alias.name = child_name(sc.m, sc.children.size(), sc.wide);
        sc.m.children[alias.name] = alias.module;
        sc.children.push_back(std::move(alias));
        child = &sc.children[sc.children.size() - 2];
      }
    }
    if (!child) return;
    if (sw_.skip_levels && !child->kids.empty() && src_.chance(2, 3)) {
      // A grandchild called directly: call_module target "child.grandchild".
      Child via = child->kids[src_.below(child->kids.size())];
      via.name = child->name + "." + via.name;
      emit_call(sc, via);
      return;
    }
    emit_call(sc, *child);
  }

  void emit_call(Scope& sc, Child& child) {
    if (sc.inlined() + child.inlined > sc.budget) return;  // checked before any draw
    Graph& g = sc.m.graph;
    std::vector<Arg> args;
    const std::vector<Shape>& outs = child.outputs;
    for (const auto& s : child.inputs) {
      std::vector<const Val*> fit;
      for (size_t i = window_start(sc.pool); i < sc.pool.size(); ++i)
        if (sc.pool[i].shape == s) fit.push_back(&sc.pool[i]);
      if (fit.empty()) return;  // no value of that shape here: no call
      args.emplace_back(fit[src_.below(fit.size())]->node);
    }
    if (child.statics.flag && child.alternate) {
      args.emplace_back(child.last_flag = !child.last_flag);
    } else if (child.statics.flag) {
      if (sc.flag && (sw_.forward_flags || (sw_.nested_specialize && src_.chance(1, 2))))
        args.emplace_back(sc.flag);
      else  // mostly the other value than last time: calls of one child specialize apart
        args.emplace_back(child.last_flag = src_.chance(1, 4) ? child.last_flag : !child.last_flag);
    }
    if (child.statics.scale) {
      if (sc.scale && (sw_.forward_flags || src_.chance(1, 3)))
        args.emplace_back(sc.scale);  // the caller's own scale passed on
      else
        args.emplace_back(scalar_const());
    }
    if (child.statics.dim) {
      if (sc.dim && (sw_.forward_flags || src_.chance(1, 3))) {
        args.emplace_back(sc.dim);
      } else {  // mostly another dim than last time: 0, 1 and -1 (the same axis as 1)
        static const std::array<int64_t, 3> kDims = {0, 1, -1};
        int64_t d = kDims[src_.below(kDims.size())];
        if (d == child.last_dim && src_.chance(3, 4)) d = child.last_dim == 0 ? 1 : 0;
        args.emplace_back(child.last_dim = d);
      }
    }
    Node* call = g.call_module(child.name, args, hint(target_to_str(child.name)));
    ++child.calls;
    sc.call_extra += child.inlined;
    // Back to back: the same child again at once, on its own output when the shapes allow
    // (nothing between the two calls in the flat graph).
    if (sw_.repeated_calls && outs.size() == 1 && src_.chance(1, 3) &&
        sc.inlined() + child.inlined <= sc.budget) {
      std::vector<Arg> again = args;
      for (size_t i = 0; i < child.inputs.size(); ++i)
        if (child.inputs[i] == outs[0] && src_.chance(1, 2)) again[i] = call;
      if (child.statics.flag && src_.chance(1, 2)) again[child.inputs.size()] = src_.chance(1, 2);
      // A first call the second does not read stays in the pool: something may still use it.
      if (std::find(again.begin(), again.end(), Arg(call)) == again.end())
        sc.pool.push_back({call, outs[0]});
      call = g.call_module(child.name, std::move(again), hint(target_to_str(child.name)));
      ++child.calls;
      sc.call_extra += child.inlined;
    }
    if (outs.size() == 1) {
      sc.pool.push_back({call, outs[0]});
    } else {
      int64_t first = src_.range(0, static_cast<int64_t>(outs.size()) - 1);
      for (int64_t k = 0; k < static_cast<int64_t>(outs.size()); ++k) {
        int64_t idx = (first + k) % static_cast<int64_t>(outs.size());
        if (k > 0 && src_.chance(1, 3)) continue;
        sc.pool.push_back({g.call_function(OpCode::kGetitem, {call, idx}, hint("getitem")),
                           outs[static_cast<size_t>(idx)]});
      }
    }
  }

 public:
  void set_weights() {
    for (OpCode op : sw_.ops) weights_.push_back(std::max(1, op_info(op).gen_weight));
  }

 private:
  Source& src_;
  const SwarmConfig& sw_;
  std::vector<int> weights_;
  std::vector<std::string> sibling_names_;
  std::vector<TensorPtr> shared_;
  std::vector<TensorPtr> shared_buffers_;
  Val root_break_{};  // the last value of the root's first graph break
};

}  // namespace gen
}  // namespace flatcheck
