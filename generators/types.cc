// The generator's own type derivation (generators/types.h). Deliberately plain: one walk per
// module object, torch's shape rules spelled out per op, no code shared with the core's typer.
#include "generators/types.h"

#include <stdexcept>
#include <unordered_set>

namespace flatcheck {

std::optional<Shape> gen_broadcast(const Shape& a, const Shape& b) {
  const Shape& longer = a.size() >= b.size() ? a : b;
  const Shape& shorter = a.size() >= b.size() ? b : a;
  Shape out = longer;
  size_t offset = longer.size() - shorter.size();
  for (size_t i = 0; i < shorter.size(); ++i) {
    int64_t x = longer[offset + i], y = shorter[i];
    if (x == y || y == 1) continue;
    if (x != 1) return std::nullopt;
    out[offset + i] = y;
  }
  return out;
}

namespace {

class Deriver {
 public:
  explicit Deriver(const Module& root) : root_(root) {}

  std::unordered_map<const Node*, ValueType> run(std::string* why) {
    module(root_);
    if (why) *why = why_;
    return std::move(types_);
  }

 private:
  void fail(const Node* n, const std::string& what) {
    if (why_.empty()) why_ = "node %" + n->name + ": " + what;
  }

  // The int at `a`: a constant, or (a static placeholder) 0. Generated modules only pass a
  // static int where every value gives one shape (a dim of a square matrix).
  static int64_t int_of(const Arg& a) {
    if (auto i = std::get_if<int64_t>(&a)) return *i;
    return 0;
  }

  // A dim, negative ones counted from the end; nullopt when out of range.
  static std::optional<size_t> dim_of(const Arg& a, size_t rank) {
    int64_t d = int_of(a);
    if (d < 0) d += static_cast<int64_t>(rank);
    if (d < 0 || d >= static_cast<int64_t>(rank)) return std::nullopt;
    return static_cast<size_t>(d);
  }

  const ValueType* type_of(const Arg& a) const {
    auto n = std::get_if<Node*>(&a);
    if (!n) return nullptr;
    auto it = types_.find(*n);
    return it == types_.end() ? nullptr : &it->second;
  }

  const Shape* tensor(const Arg& a) const {
    const ValueType* t = type_of(a);
    return t && t->kind == ValueType::kTensor ? &t->shape : nullptr;
  }

  void module(const Module& m) {
    if (!done_.insert(&m).second) return;
    for (const Node* n = m.graph.first(); n; n = n->next) {
      std::optional<ValueType> t = node(m, n);
      if (t) types_[n] = *t;
    }
  }

  std::optional<ValueType> node(const Module& m, const Node* n) {
    switch (n->op) {
      case NodeOp::kPlaceholder:
        if (!n->meta.val) fail(n, "a placeholder without a type");
        return n->meta.val;
      case NodeOp::kGetAttr: {
        const TensorPtr t = m.attribute(n->target);
        if (!t) fail(n, "no attribute '" + n->target + "'");
        return t ? std::optional<ValueType>(ValueType::tensor(t->shape)) : std::nullopt;
      }
      case NodeOp::kCallModule:
        return call(m, n);
      case NodeOp::kCallFunction:
        return function(n);
      case NodeOp::kOutput:
        return std::nullopt;
    }
    return std::nullopt;
  }

  std::optional<ValueType> call(const Module& m, const Node* n) {
    const Module* c = m.submodule(n->target);
    if (!c) {
      fail(n, "no module '" + n->target + "'");
      return std::nullopt;
    }
    module(*c);
    const Node* out = c->graph.output_node();
    if (!out) return std::nullopt;
    std::vector<Shape> shapes;
    for (const Arg& a : out->args) {
      const Shape* s = tensor(a);
      if (!s) {
        fail(n, "module '" + n->target + "' returns a value without a tensor type");
        return std::nullopt;
      }
      shapes.push_back(*s);
    }
    if (shapes.size() == 1) return ValueType::tensor(shapes[0]);
    return ValueType::tuple(shapes);
  }

  // The shape of `n`'s i-th argument when it is a typed tensor, else nullptr.
  const Shape* arg_shape(const Node* n, size_t i) const {
    return i < n->args.size() ? tensor(n->args[i]) : nullptr;
  }

  std::optional<ValueType> reject(const Node* n, const std::string& what) {
    fail(n, std::string(op_info(n->fn).name) + ": " + what);
    return std::nullopt;
  }

  std::optional<ValueType> function(const Node* n) {
    auto in = [&](size_t i) { return arg_shape(n, i); };
    auto bad = [&](const std::string& what) { return reject(n, what); };
    switch (n->fn) {
      case OpCode::kAdd:
      case OpCode::kSub:
      case OpCode::kMul:
      case OpCode::kDiv:
      case OpCode::kMaximum:
      case OpCode::kMinimum: {
        if (!in(0) || !in(1)) return bad("two tensors expected");
        auto s = gen_broadcast(*in(0), *in(1));
        if (!s) return bad("shapes do not broadcast");
        return ValueType::tensor(*s);
      }
      case OpCode::kNeg:
      case OpCode::kRelu:
      case OpCode::kAbs:
      case OpCode::kExp:
      case OpCode::kTanh:
      case OpCode::kSigmoid:
      case OpCode::kSqrt:
      case OpCode::kClone:
      case OpCode::kAddScalar:
      case OpCode::kSubScalar:
      case OpCode::kMulScalar:
      case OpCode::kDivScalar:
        if (!in(0)) return bad("a tensor expected");
        return ValueType::tensor(*in(0));
      case OpCode::kCopy:  // x.copy_(y) returns x
        if (!in(0) || !in(1)) return bad("two tensors expected");
        return ValueType::tensor(*in(0));
      case OpCode::kMatmul: {  // [m, k] @ [k, n] -> [m, n]
        const Shape *x = in(0), *y = in(1);
        if (!x || !y || x->size() != 2 || y->size() != 2 || (*x)[1] != (*y)[0])
          return bad("[m, k] @ [k, n] expected");
        return ValueType::tensor(Shape{(*x)[0], (*y)[1]});
      }
      default:
        return reshaping(n);
    }
  }

  // The ops that move dims: sum, reshape, transpose, cat, chunk; and getitem, branch.
  std::optional<ValueType> reshaping(const Node* n) {
    const auto& a = n->args;
    auto in = [&](size_t i) { return arg_shape(n, i); };
    auto bad = [&](const std::string& what) { return reject(n, what); };
    switch (n->fn) {
      case OpCode::kSum: {  // sum over one dim, which goes away
        if (!in(0) || a.size() < 2) return bad("a tensor and a dim expected");
        auto d = dim_of(a[1], in(0)->size());
        if (!d) return bad("dim out of range");
        Shape s = *in(0);
        s.erase(s.begin() + static_cast<long>(*d));
        return ValueType::tensor(s);
      }
      case OpCode::kReshape: {
        auto l = a.size() > 1 ? std::get_if<std::vector<int64_t>>(&a[1]) : nullptr;
        if (!in(0) || !l) return bad("a tensor and a shape list expected");
        int64_t from = 1, to = 1;
        for (int64_t d : *in(0)) from *= d;
        for (int64_t d : *l) to *= d;
        if (from != to) return bad("the element count changes");
        return ValueType::tensor(Shape(l->begin(), l->end()));
      }
      case OpCode::kTranspose: {
        if (!in(0) || a.size() < 3) return bad("a tensor and two dims expected");
        auto d0 = dim_of(a[1], in(0)->size()), d1 = dim_of(a[2], in(0)->size());
        if (!d0 || !d1) return bad("dim out of range");
        Shape s = *in(0);
        std::swap(s[*d0], s[*d1]);
        return ValueType::tensor(s);
      }
      case OpCode::kConcat: {  // cat(tensors..., dim): sizes add along dim, equal elsewhere
        if (a.size() < 2 || !in(0)) return bad("tensors and a dim expected");
        auto d = dim_of(a.back(), in(0)->size());
        if (!d) return bad("dim out of range");
        Shape s = *in(0);
        for (size_t i = 1; i + 1 < a.size(); ++i) {
          const Shape* t = in(i);
          if (!t || t->size() != s.size()) return bad("ranks differ");
          for (size_t j = 0; j < s.size(); ++j)
            if (j != *d && (*t)[j] != s[j]) return bad("sizes differ outside the dim");
          s[*d] += (*t)[*d];
        }
        return ValueType::tensor(s);
      }
      case OpCode::kSplit: {  // chunk(x, chunks) along dim: equal pieces
        if (!in(0) || a.size() < 3) return bad("a tensor, a dim and a count expected");
        auto d = dim_of(a[1], in(0)->size());
        int64_t k = int_of(a[2]);
        if (!d || k < 1 || (*in(0))[*d] % k != 0) return bad("the dim does not divide");
        Shape s = *in(0);
        s[*d] /= k;
        return ValueType::tuple(std::vector<Shape>(static_cast<size_t>(k), s));
      }
      case OpCode::kGetitem: {
        const ValueType* t = a.empty() ? nullptr : type_of(a[0]);
        int64_t i = a.size() > 1 ? int_of(a[1]) : -1;
        if (!t || t->kind != ValueType::kTuple || i < 0 ||
            i >= static_cast<int64_t>(t->elems.size()))
          return bad("an index into a tuple expected");
        return ValueType::tensor(t->elems[static_cast<size_t>(i)]);
      }
      case OpCode::kBranch: {  // flag ? a : b, of one type
        const ValueType *x = a.size() > 2 ? type_of(a[1]) : nullptr,
                        *y = a.size() > 2 ? type_of(a[2]) : nullptr;
        if (!x || !y || !(*x == *y)) return bad("two values of one type expected");
        return *x;
      }
      default:
        return bad("no rule (not an op of eager programs)");
    }
  }

  const Module& root_;
  std::unordered_set<const Module*> done_;
  std::unordered_map<const Node*, ValueType> types_;
  std::string why_;
};

}  // namespace

std::unordered_map<const Node*, ValueType> derive_types(const Module& root, std::string* why) {
  return Deriver(root).run(why);
}

void annotate_types(Module& root) {
  std::string why;
  auto types = derive_types(root, &why);
  if (!why.empty()) throw std::logic_error("the generator built an untyped node: " + why);
  for_each_module(root, [&](const std::string&, Module& m) {
    for (Node* n = m.graph.first(); n; n = n->next)
      if (auto it = types.find(n); it != types.end()) n->meta.val = it->second;
  });
}

}  // namespace flatcheck
