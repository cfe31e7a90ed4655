// The builder's op steps (generators/builder.h): one op over the pool, graph breaks, int dims,
// parameters.
#include <algorithm>
#include <cmath>

#include "core/base/names.h"
#include "generators/builder.h"

namespace flatcheck {
namespace gen {

bool Builder::matmul_step(Module& m, std::vector<Val>& pool, const Val& a, OpCode op) {
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

bool Builder::concat_step(Graph& g, std::vector<Val>& pool, const Val& a, OpCode op) {
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

bool Builder::split_step(Graph& g, std::vector<Val>& pool, const Val& a, OpCode op,
                         bool both_halves) {
  std::vector<int64_t> dims;
  for (size_t d = 0; d < a.shape.size(); ++d)
    if (a.shape[d] >= 2 && a.shape[d] % 2 == 0) dims.push_back(static_cast<int64_t>(d));
  if (dims.empty()) return false;
  int64_t d = dims[src_.below(dims.size())];
  Node* sp = g.call_function(op, {a.node, d, int64_t{2}}, hint("split"));
  Shape s = a.shape;
  s[d] /= 2;
  // Read one or both halves, in either order: getitems minted out of index order.
  bool both = both_halves || src_.chance(2, 3);
  int64_t first = src_.range(0, 1);
  Node* g0 = g.call_function(OpCode::kGetitem, {sp, first}, hint("getitem"));
  add(pool, g0, s);
  if (both) add(pool, g.call_function(OpCode::kGetitem, {sp, 1 - first}, hint("getitem")), s);
  // A graph break: a fallback op right on a half, so an engine ends at the split's getitems
  // and a fallback's placeholder takes a getitem's name (the Torch-TensorRT shape).
  if (sw_.graph_breaks)
    if (std::optional<OpCode> fb = elementwise_fallback()) {
      std::string_view sig = op_info(*fb).sig;
      std::vector<Arg> args{g0};
      if (sig == "TT") args.emplace_back(g0);
      if (sig == "Tf") args.emplace_back(scalar_const());
      Node* broken = g.call_function(*fb, std::move(args), hint(op_info(*fb).name));
      add(pool, broken, s);
      // Both halves leave the engine: one through the fallback, one past it.
      if (both && (both_halves || src_.chance(3, 4)))
        add(pool, g.call_function(OpCode::kAdd, {broken, pool[pool.size() - 2].node}, hint("add")),
            s);
    }
  return true;
}

void Builder::graph_break_step(Graph& g, std::vector<Val>& pool) {
  if (!splittable(g, pool, pick(pool))) return;
  size_t before = pool.size();
  if (!split_step(g, pool, pool.back(), OpCode::kSplit)) return;
  if (src_.chance(2, 3)) pool.resize(before + 1);  // one half only
  const Val& half = pool.back();
  float k = scalar_const();  // one draw per statement: argument order is unspecified
  add(pool, g.call_function(OpCode::kMulScalar, {half.node, k}, hint("mul_scalar")), half.shape);
  if (splittable(g, pool, pool.back())) split_step(g, pool, pool.back(), OpCode::kSplit, true);
}

bool Builder::splittable(Graph& g, std::vector<Val>& pool, Val a) {
  for (int64_t d : a.shape)
    if (d >= 2 && d % 2 == 0) return add(pool, a.node, a.shape), true;
  if (a.shape.empty() || numel(a.shape) > 2048) return false;
  int64_t d = src_.range(0, static_cast<int64_t>(a.shape.size()) - 1);
  if (a.shape[static_cast<size_t>(d)] == 0) return false;
  Shape s = a.shape;
  s[static_cast<size_t>(d)] *= 2;
  add(pool, g.call_function(OpCode::kConcat, {a.node, a.node, d}, hint("concat")), s);
  return true;
}

std::optional<OpCode> Builder::elementwise_fallback() const {
  for (const auto& name : sw_.pipeline.fallback_ops) {
    std::optional<OpCode> op = op_by_name(name);
    if (!op || *op == OpCode::kMatmul || *op == OpCode::kCopy) continue;
    std::string_view sig = op_info(*op).sig;
    if (sig == "T" || sig == "TT" || sig == "Tf") return op;
  }
  return std::nullopt;
}

bool Builder::op_step(Module& m, std::vector<Val>& pool, Node* scale_ph) {
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
    // A zero constant gets its twin of the other sign on the same operand: the two compare
    // equal as Python floats (and hash alike) but differ in their results (x * 0.0 against
    // x * -0.0; x / 0.0 against x / -0.0, infinities of two signs), the shape a
    // common-subexpression pass that keys constants by value merges into one. Half of them
    // divide, where every nonzero x tells the two apart. Only a case that draws a zero
    // constant here draws more: the others are unchanged.
    const float* k = std::get_if<float>(&sa);
    bool twin = k && *k == 0.0f;
    if (twin && src_.chance(1, 2) &&
        std::find(sw_.ops.begin(), sw_.ops.end(), OpCode::kDivScalar) != sw_.ops.end())
      op = OpCode::kDivScalar;
    Node* x = a.node;
    Shape xs = a.shape;  // `a` lives in the pool, which add grows
    add(g.call_function(op, {x, sa}, hint(op_info(op).name)), xs);
    if (twin) add(g.call_function(op, {x, -*k}, hint(op_info(op).name)), xs);
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

Node* Builder::weight(Module& m, const Shape& s) {
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
    name = param_name_hint(src_, sw_.child_naming, m.params.size());
    while (m.params.count(name) || m.buffers.count(name) || m.children.count(name))
      name += "_" + std::to_string(m.params.size());
    m.params[name] = t;
  }
  return m.graph.get_attr(name, hint(target_to_str(name)));
}

void Builder::dim_step(Scope& sc) {
  Graph& g = sc.m.graph;
  std::vector<const Val*> mats;
  for (size_t i = window_start(sc.pool); i < sc.pool.size(); ++i)
    if (sc.pool[i].shape.size() == 2) mats.push_back(&sc.pool[i]);
  if (mats.empty()) return;
  Val sq = *mats[src_.below(mats.size())];
  if (sq.shape[0] != sq.shape[1]) {
    Node* t =
        g.call_function(OpCode::kTranspose, {sq.node, int64_t{0}, int64_t{1}}, hint("transpose"));
    sq = {g.call_function(OpCode::kMatmul, {sq.node, t}, hint("matmul")),
          Shape{sq.shape[0], sq.shape[0]}};
    add(sc.pool, sq.node, sq.shape);
  }
  if (src_.chance(1, 2))
    add(sc.pool, g.call_function(OpCode::kSum, {sq.node, sc.dim}, hint("sum")), Shape{sq.shape[0]});
  else
    add(sc.pool,
        g.call_function(OpCode::kTranspose, {sq.node, int64_t{0}, sc.dim}, hint("transpose")),
        sq.shape);
}

void Builder::wide_step(Scope& sc) {
  size_t want = static_cast<size_t>(src_.range(11, 13));
  while (sc.children.size() < want && sc.inlined() + kWideChildBudget <= sc.budget) {
    sc.children.push_back(new_child(sc, kWideChildBudget));
    emit_call(sc, sc.children.back());
  }
}

std::string Builder::child_name(const Module& m, size_t index, bool numeric) {
  std::string name = numeric ? std::to_string(index)
                     : sw_.reserved_names && src_.chance(1, 4)
                         ? reserved_name_hint(src_)
                         : child_name_hint(src_, sw_.child_naming, index);
  while (m.children.count(name) || m.params.count(name) || m.buffers.count(name))
    name += "_" + std::to_string(index);
  return name;
}

}  // namespace gen
}  // namespace flatcheck
