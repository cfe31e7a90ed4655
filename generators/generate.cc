// The generator body. It only ever builds valid programs: operands are picked among values
// whose shapes fit, so any choice sequence (a seed, fuzzer bytes, a shrunk recipe) is a case.
//
// A module is built step by step over a pool of values (an op, a child call, a branch on the
// static flag, a buffer update, ...). Children are defined at their first call.
#include "generators/generate.h"

#include "core/base/names.h"
#include "generators/values.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/ir/analysis.h"

namespace flatcheck {
namespace {

struct Val {
  Node* node;
  Shape shape;
};

// Names that collide with what the passes mint: getitems, op names, export's p_*/b_* state
// placeholders, partition's children.
const std::array<const char*, 15> kConfusingNames = {
    "getitem",       "getitem_1",     "relu",           "x",        "add", "mul_1",
    "_run_on_acc_0", "_run_on_gpu_1", "execute_engine", "output_1", "p_w", "b_buf",
    "p_layer0_w",    "b_layer0_buf",  "layer0"};

// Pairs of paths that mangle alike: a.b_c / a_b.c, a.buf / a_buf, a.w / a_w.
const std::array<const char*, 8> kMangledNames = {"a", "a_b",   "b_c", "b",
                                                  "c", "a_buf", "a_w", "c_w"};

class Builder {
 public:
  Builder(Source& src, const SwarmConfig& sw) : src_(src), sw_(sw) {}

  Case build() {
    Case c;
    auto root = std::make_shared<Module>();
    root->type = "Model";
    int n_inputs = static_cast<int>(src_.range(1, 2));
    std::vector<Shape> shapes(static_cast<size_t>(n_inputs), sw_.base_shape);
    define(*root, shapes, /*flag=*/false, /*scale=*/false, 0, nullptr);
    infer_types(*root);
    c.module = root;
    for (const auto& s : shapes) c.inputs.push_back(draw_tensor(src_, s, sw_.special_values));
    c.config = sw_.pipeline;
    return c;
  }

 private:
  // A child module definition and the shapes its calls must pass.
  struct Child {
    std::string name;
    std::shared_ptr<Module> module;
    std::vector<Shape> inputs, outputs;
    bool flag = false, scale = false;
    std::vector<Child> kids;  // its own children, for calls that skip a level
    bool last_flag = false;   // the flag constant of the latest call
  };

  std::string hint(std::string_view natural) {
    switch (sw_.naming) {
      case NamingPolicy::kNatural:
        return std::string(natural);
      case NamingPolicy::kGetitem:
        if (src_.chance(1, 2))
          return src_.chance(1, 2) ? "getitem" : "getitem_" + std::to_string(src_.range(1, 4));
        return std::string(natural);
      case NamingPolicy::kConfusing:
        if (src_.chance(1, 2)) return kConfusingNames[src_.below(kConfusingNames.size())];
        if (!sibling_names_.empty() && src_.chance(1, 3))
          return sibling_names_[src_.below(sibling_names_.size())];
        return std::string(natural);
    }
    return std::string(natural);
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
        try {
          if (broadcast_shapes(s, v.shape) == s) bcast.push_back(&v);
        } catch (const InputError&) {
        }
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

  bool matmul_step(Module& m, std::vector<Val>& pool, const Val& a, OpCode op) {
    Graph& g = m.graph;
    if (a.shape.size() != 2) return false;
    int64_t k = a.shape[1];
    std::vector<const Val*> rhs;
    for (size_t i = window_start(pool); i < pool.size(); ++i)
      if (pool[i].shape.size() == 2 && pool[i].shape[0] == k) rhs.push_back(&pool[i]);
    Node* b;
    Shape out;
    if (!rhs.empty() && src_.chance(1, 2)) {
      const Val* r = rhs[src_.below(rhs.size())];
      b = r->node;
      out = {a.shape[0], r->shape[1]};
    } else {
      b = weight(m, {k, k});
      out = {a.shape[0], k};
    }
    add(pool, g.call_function(op, {a.node, b}, hint("matmul")), out);
    return true;
  }

  bool concat_step(Graph& g, std::vector<Val>& pool, const Val& a, OpCode op) {
    if (a.shape.empty()) return false;
    int64_t d = src_.range(0, static_cast<int64_t>(a.shape.size()) - 1);
    std::vector<Arg> args{a.node};
    Shape s = a.shape;
    for (size_t i = window_start(pool); i < pool.size(); ++i)
      if (const Val& v = pool[i]; v.shape == a.shape && args.size() < 3 && src_.chance(1, 2)) {
        args.emplace_back(v.node);
        s[d] += v.shape[d];
      }
    if (args.size() == 1) {
      args.emplace_back(a.node);
      s[d] += a.shape[d];
    }
    if (numel(s) > 4096) return false;
    args.emplace_back(d);
    add(pool, g.call_function(op, std::move(args), hint("concat")), s);
    return true;
  }

  bool split_step(Graph& g, std::vector<Val>& pool, const Val& a, OpCode op) {
    std::vector<int64_t> dims;
    for (size_t d = 0; d < a.shape.size(); ++d)
      if (a.shape[d] >= 2 && a.shape[d] % 2 == 0) dims.push_back(static_cast<int64_t>(d));
    if (dims.empty()) return false;
    int64_t d = dims[src_.below(dims.size())];
    Node* sp = g.call_function(op, {a.node, d, int64_t{2}}, hint("split"));
    Shape s = a.shape;
    s[d] /= 2;
    // Read one or both halves, in either order: getitems minted out of index order.
    bool both = src_.chance(2, 3);
    int64_t first = src_.range(0, 1);
    Node* g0 = g.call_function(OpCode::kGetitem, {sp, first}, hint("getitem"));
    add(pool, g0, s);
    if (both) add(pool, g.call_function(OpCode::kGetitem, {sp, 1 - first}, hint("getitem")), s);
    // A graph break: a fallback op right on a half, so an engine ends at the split's getitems
    // and a fallback's placeholder takes a getitem's name (the Torch-TensorRT shape).
    if (sw_.graph_breaks)
      if (std::optional<OpCode> fb = unary_fallback()) {
        Node* broken = g.call_function(*fb, {g0}, hint(op_info(*fb).name));
        add(pool, broken, s);
        // Both halves leave the engine: one through the fallback, one past it.
        if (both && src_.chance(1, 2))
          add(pool,
              g.call_function(OpCode::kAdd, {broken, pool[pool.size() - 2].node}, hint("add")), s);
      }
    return true;
  }

  // The Torch-TensorRT shape: a split read once (its getitem hidden inside an engine), then a
  // split whose two halves leave the engine into a fallback, so the parent's new getitems take
  // names the fallback's placeholders had.
  void graph_break_step(Graph& g, std::vector<Val>& pool) {
    const Val& a = pick(pool);
    size_t before = pool.size();
    if (!split_step(g, pool, a, OpCode::kSplit)) return;
    if (src_.chance(1, 2)) pool.resize(before + 1);  // one half only
    const Val& half = pool.back();
    add(pool, g.call_function(OpCode::kMulScalar, {half.node, scalar_const()}, hint("mul_scalar")),
        half.shape);
    split_step(g, pool, pool.back(), OpCode::kSplit);
  }

  // A one-tensor op of the fallback set, if any.
  std::optional<OpCode> unary_fallback() const {
    for (const auto& name : sw_.pipeline.fallback_ops)
      if (std::optional<OpCode> op = op_by_name(name); op && op_info(*op).sig == "T") return op;
    return std::nullopt;
  }

  // One op step over the pool; returns false when the op found no fitting operands.
  bool op_step(Module& m, std::vector<Val>& pool, Node* scale_ph) {
    Graph& g = m.graph;
    OpCode op = sw_.ops[src_.weighted(weights_)];
    const Val& a = pick(pool);
    auto add = [&](Node* n, Shape s) { this->add(pool, n, std::move(s)); };
    // Op classes come from the op table's signatures (STYLE.md, habit 2).
    std::string_view sig = op_info(op).sig;
    if (sig == "TT" && op != OpCode::kMatmul && op != OpCode::kCopy) {  // broadcasting binary
      const Val* b = pick_compatible(pool, a.shape);
      Node* bn = b ? b->node : a.node;
      if (src_.chance(1, 4)) {  // a parameter operand, as a bias or a scale
        bn = weight(m, a.shape);
        b = nullptr;
      }
      bool swap = b && b->shape == a.shape && src_.chance(1, 2);
      add(g.call_function(op, {swap ? bn : a.node, swap ? a.node : bn}, hint(op_info(op).name)),
          a.shape);
      return true;
    }
    if (sig == "T") {
      add(g.call_function(op, {a.node}, hint(op_info(op).name)), a.shape);
      return true;
    }
    if (sig == "Tf") {
      Node* s = scalar_arg(scale_ph);
      Arg sa = s ? Arg(s) : Arg(scalar_const());
      add(g.call_function(op, {a.node, sa}, hint(op_info(op).name)), a.shape);
      return true;
    }
    switch (op) {
      case OpCode::kMatmul:
        return matmul_step(m, pool, a, op);
      case OpCode::kSum: {
        if (a.shape.empty()) return false;
        int64_t d = src_.range(0, static_cast<int64_t>(a.shape.size()) - 1);
        Shape s = a.shape;
        s.erase(s.begin() + d);
        add(g.call_function(op, {a.node, d}, hint("sum")), s);
        return true;
      }
      case OpCode::kReshape: {
        int64_t n = numel(a.shape);
        Shape s = (a.shape.size() == 1 && n % 2 == 0 && n > 0) ? Shape{2, n / 2} : Shape{n};
        add(g.call_function(op, {a.node, std::vector<int64_t>(s)}, hint("reshape")), s);
        return true;
      }
      case OpCode::kTranspose: {
        if (a.shape.size() != 2) return false;
        add(g.call_function(op, {a.node, int64_t{0}, int64_t{1}}, hint("transpose")),
            Shape{a.shape[1], a.shape[0]});
        return true;
      }
      case OpCode::kConcat:
        return concat_step(g, pool, a, op);
      case OpCode::kSplit:
        return split_step(g, pool, a, op);
      default:
        return false;
    }
  }

  // A parameter of this module with the given shape (or a shared one from another module).
  Node* weight(Module& m, const Shape& s) {
    std::string name;
    TensorPtr t;
    if (sw_.shared_params) {
      for (const auto& sp : shared_)
        if (sp->shape == s && src_.chance(2, 3)) t = sp;
    }
    if (!t) {
      t = std::make_shared<Tensor>(draw_tensor(src_, s, sw_.special_values));
      shared_.push_back(t);
    }
    for (const auto& [k, v] : m.params)
      if (v == t) name = k;
    if (name.empty()) {
      name = "w" + (m.params.empty() ? std::string() : "_" + std::to_string(m.params.size()));
      m.params[name] = t;
    }
    return m.graph.get_attr(name, hint(name));
  }

  // Builds module `m`'s graph; returns its output shapes. Its children go to `kids` when given.
  std::vector<Shape> define(Module& m, const std::vector<Shape>& inputs, bool flag, bool scale,
                            int depth, std::vector<Child>* kids) {
    Graph& g = m.graph;
    std::vector<Val> pool;
    for (size_t i = 0; i < inputs.size(); ++i) {
      Node* x = g.placeholder(sw_.naming == NamingPolicy::kNatural ? "x" : hint("x"),
                              ValueType::tensor(inputs[i]));
      pool.push_back({x, inputs[i]});
    }
    Scope sc{m, pool, {}, depth, nullptr, nullptr, nullptr};
    sc.flag = flag ? g.placeholder("flag", ValueType::scalar(ValueType::kBool)) : nullptr;
    sc.scale = scale ? g.placeholder("scale", ValueType::scalar(ValueType::kFloat)) : nullptr;
    if (sw_.buffers && src_.chance(1, 2)) sc.buffer = buffer_for(inputs[0]);
    if (sc.buffer) m.buffers["buf"] = sc.buffer;
    int steps = static_cast<int>(src_.range(1, sw_.nodes));
    bool deeper = depth < sw_.depth;
    for (int s = 0; s < steps; ++s) {
      uint64_t kind = src_.weighted(
          {10, deeper ? 6 : 0, sc.flag && !sw_.forward_flags ? 2 : 0, sc.buffer ? 1 : 0,
           sc.flag && deeper && sw_.child_choice ? 2 : 0,
           sw_.read_after_write && !sc.children.empty() ? 2 : 0, sw_.graph_breaks ? 3 : 0});
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
      } else {
        for (int tries = 0; tries < 4 && !op_step(m, pool, sc.scale); ++tries) {
        }
      }
    }
    std::vector<Shape> shapes = outputs(g, pool, depth);
    if (kids) *kids = std::move(sc.children);
    return shapes;
  }

 private:
  // What the steps of one module definition share.
  struct Scope {
    Module& m;
    std::vector<Val>& pool;
    std::vector<Child> children;
    int depth;
    Node* flag;
    Node* scale;
    TensorPtr buffer;
  };

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
    g.output(std::move(outs));
    return shapes;
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
    Node* rd = g.get_attr("buf", hint("buf"));
    const Val* v = pick_compatible(sc.pool, sc.buffer->shape);
    Node* upd = v ? g.call_function(OpCode::kAdd, {rd, v->node}, hint("add"))
                  : g.call_function(OpCode::kAddScalar, {rd, scalar_const()}, hint("add_scalar"));
    // One draw per statement: argument evaluation order is unspecified in C++, and a seed
    // must mean the same case whatever the compiler.
    Node* dst = g.get_attr("buf", hint("buf"));
    std::string copy_name = hint("copy_");
    g.call_function(OpCode::kCopy, {dst, upd}, copy_name);
    sc.pool.push_back({upd, sc.buffer->shape});
    if (sw_.read_after_write) sc.pool.push_back({rd, sc.buffer->shape});
  }

  // The parent reads a child's buffer after calling it (the child updated it in place).
  void child_buffer_read(Scope& sc) {
    const Child& c = sc.children[src_.below(sc.children.size())];
    auto it = c.module->buffers.find("buf");
    if (it == c.module->buffers.end()) return;
    Node* rd = sc.m.graph.get_attr(join_fqn(c.name, "buf"), hint("buf"));
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

  std::string child_name(const Module& m, size_t index) {
    std::string name;
    switch (sw_.child_naming) {
      case ChildNaming::kLayers:
        name = src_.chance(1, 4) ? "n" : "layer" + std::to_string(index);
        break;
      case ChildNaming::kNumeric:
        name = std::to_string(index);
        break;
      case ChildNaming::kMangled:
        name = kMangledNames[src_.below(kMangledNames.size())];
        break;
    }
    while (m.children.count(name)) name += "_" + std::to_string(index);
    return name;
  }

  // A new child: a fresh definition, or a clone of an earlier one's body with fresh weights (a
  // repeated block).
  Child new_child(Scope& sc) {
    Child c;
    c.name = child_name(sc.m, sc.children.size());
    c.module = std::make_shared<Module>();
    if (sw_.repeated_blocks && !sc.children.empty() && src_.chance(3, 4)) {
      const Child& like = sc.children[src_.below(sc.children.size())];
      c = like;
      c.name = child_name(sc.m, sc.children.size());
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
    c.flag = sw_.specialize && src_.chance(3, 4);
    c.scale = sw_.specialize && src_.chance(1, 2);
    c.outputs = define(*c.module, c.inputs, c.flag, c.scale, sc.depth + 1, &c.kids);
    return c;
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
        alias.name = child_name(sc.m, sc.children.size());
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
    if (child.flag) {
      if (sc.flag && (sw_.forward_flags || (sw_.nested_specialize && src_.chance(1, 2))))
        args.emplace_back(sc.flag);
      else  // mostly the other value than last time: calls of one child specialize apart
        args.emplace_back(child.last_flag = src_.chance(1, 4) ? child.last_flag : !child.last_flag);
    }
    if (child.scale) args.emplace_back(scalar_const());
    Node* call = g.call_module(child.name, args, hint(child.name));
    // Back to back: the same child again at once, on its own output when the shapes allow
    // (nothing between the two calls in the flat graph).
    if (sw_.repeated_calls && outs.size() == 1 && src_.chance(1, 3)) {
      std::vector<Arg> again = args;
      for (size_t i = 0; i < child.inputs.size(); ++i)
        if (child.inputs[i] == outs[0] && src_.chance(1, 2)) again[i] = call;
      if (child.flag && src_.chance(1, 2)) again[child.inputs.size()] = src_.chance(1, 2);
      call = g.call_module(child.name, std::move(again), hint(child.name));
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
};

}  // namespace

Case build_case(Source& src, const SwarmConfig& swarm, const GenOptions& opts) {
  (void)opts;  // bounds were applied when the swarm was drawn
  Builder b(src, swarm);
  b.set_weights();
  return b.build();
}

Case generate_case(Source& src, const GenOptions& opts) {
  // The generator is the harness's side: an injected fault must not bend the cases it builds.
  ScopedFaultSuppression no_faults;
  SwarmConfig s = draw_swarm(src, opts);
  return build_case(src, s, opts);
}

Case generate_case_for_seed(uint64_t seed, const GenOptions& opts) {
  Rng rng(seed);
  Case c = generate_case(rng, opts);
  c.seed = seed;
  return c;
}

}  // namespace flatcheck
