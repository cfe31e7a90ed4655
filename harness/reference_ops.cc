// Reference kernels (harness/reference_ops.h). Organized as: index arithmetic (shapes as plain
// vectors, row-major offsets, every index of a shape); the value rules of one element (NaN
// propagation, signs of zero); one function per kind of op that builds the reference result
// and a "bound" per element; and the comparison.
#include "harness/reference_ops.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <unordered_map>

namespace flatcheck {
namespace {

using Dims = std::vector<int64_t>;

Dims dims_of(const Tensor& t) {
  return Dims(t.shape.begin(), t.shape.end());
}

int64_t count(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

// The row-major offset of index `i` in a tensor of dims `d`.
int64_t offset(const Dims& d, const Dims& i) {
  int64_t off = 0;
  for (size_t k = 0; k < d.size(); ++k) off = off * d[k] + i[k];
  return off;
}

// Calls fn for every index of `d`, in row-major order.
template <class Fn>
void each_index(const Dims& d, const Fn& fn) {
  if (count(d) == 0) return;
  Dims i(d.size(), 0);
  while (true) {
    fn(i);
    size_t k = d.size();
    while (k > 0) {
      --k;
      if (++i[k] < d[k]) break;
      i[k] = 0;
      if (k == 0) return;
    }
    if (d.empty()) return;
  }
}

int64_t norm(int64_t dim, size_t rank) {
  return dim < 0 ? dim + static_cast<int64_t>(rank) : dim;
}

float quiet(float f) {
  return bits_float(float_bits(f) | 0x00400000u);
}

const float kCanonicalNan = bits_float(0x7fc00000u);

// One element of add, sub, mul, div (and their scalar forms): NaNs as torch's scalar path
// propagates them, otherwise IEEE single-precision arithmetic.
float arith(char op, float a, float b) {
  bool na = std::isnan(a), nb = std::isnan(b);
  if (na && nb) return op == '/' ? quiet(a) : quiet(b);
  if (na) return quiet(a);
  if (nb) return quiet(b);
  volatile float x = a, y = b;  // one rounding, in float
  switch (op) {
    case '+':
      return x + y;
    case '-':
      return x - y;
    case '*':
      return x * y;
    default:
      return x / y;
  }
}

float pick(bool larger, float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return kCanonicalNan;
  if (a == b) return a;  // +0/-0 ties keep the first operand
  return (larger ? a > b : a < b) ? a : b;
}

// The reference result of an op, one tensor per output, with an error bound per element: 0 for
// exact ops; ulps for the transcendental ones (`ulps`); an absolute bound for sums (`abs`).
struct Ref {
  std::vector<Dims> dims;
  std::vector<std::vector<float>> data;
  std::vector<std::vector<long double>> exact;  // sums: the long-double value, per element
  std::vector<std::vector<long double>> abs;    // sums: the allowed |difference|, per element
  std::vector<std::vector<long double>> mag;    // sums: sum of |terms|, per element
  int ulps = 0;
};

// Broadcasting by numpy's rule, derived here: dims aligned from the right, equal or 1.
bool broadcast(const Dims& a, const Dims& b, Dims& out) {
  size_t n = std::max(a.size(), b.size());
  out.assign(n, 1);
  for (size_t k = 0; k < n; ++k) {
    int64_t x = k < n - a.size() ? 1 : a[k - (n - a.size())];
    int64_t y = k < n - b.size() ? 1 : b[k - (n - b.size())];
    if (x != y && x != 1 && y != 1) return false;
    out[k] = x == 1 ? y : x;
  }
  return true;
}

// The element of `t` (dims `d`) that index `i` of a broadcast result of rank n reads.
float read_broadcast(const Tensor& t, const Dims& d, const Dims& i) {
  size_t lead = i.size() - d.size();
  int64_t off = 0;  // offset(d, j) with j[k] = 0 where d[k] is 1, else i[lead + k]
  for (size_t k = 0; k < d.size(); ++k) off = off * d[k] + (d[k] == 1 ? 0 : i[lead + k]);
  return t.data[static_cast<size_t>(off)];
}

bool binary(OpCode op, const Tensor& a, const Tensor& b, Ref& r) {
  Dims da = dims_of(a), db = dims_of(b), out;
  if (!broadcast(da, db, out)) return false;
  std::vector<float> v;
  each_index(out, [&](const Dims& i) {
    float x = read_broadcast(a, da, i), y = read_broadcast(b, db, i);
    switch (op) {
      case OpCode::kAdd:
        v.push_back(arith('+', x, y));
        break;
      case OpCode::kSub:
        v.push_back(arith('-', x, y));
        break;
      case OpCode::kMul:
        v.push_back(arith('*', x, y));
        break;
      case OpCode::kDiv:
        v.push_back(arith('/', x, y));
        break;
      case OpCode::kMaximum:
        v.push_back(pick(true, x, y));
        break;
      default:
        v.push_back(pick(false, x, y));
        break;
    }
  });
  r.dims.push_back(std::move(out));
  r.data.push_back(std::move(v));
  return true;
}

float unary_value(OpCode op, float x) {
  switch (op) {
    case OpCode::kNeg:
      return bits_float(float_bits(x) ^ 0x80000000u);
    case OpCode::kAbs:
      return bits_float(float_bits(x) & 0x7fffffffu);
    case OpCode::kRelu:
      return x < 0 ? 0.0f : x;
    case OpCode::kClone:
      return x;
    case OpCode::kSqrt:
      return std::isnan(x) ? quiet(x) : std::sqrt(x);
    case OpCode::kExp:
      return static_cast<float>(std::exp(static_cast<long double>(x)));
    case OpCode::kTanh:
      return static_cast<float>(std::tanh(static_cast<long double>(x)));
    default: {  // sigmoid, as torch's CPU kernel has it: 1 / (1 + exp(-x)) with exp in float,
                // so below about -88.72, where exp(-x) overflows, it is 0, not e^x (subnormal)
      long double e = std::exp(-static_cast<long double>(x));
      if (std::isinf(static_cast<float>(e))) return 0.0f;
      return static_cast<float>(1.0L / (1.0L + e));
    }
  }
}

void unary(OpCode op, const Tensor& a, Ref& r) {
  std::vector<float> v;
  v.reserve(a.data.size());
  for (float x : a.data) v.push_back(unary_value(op, x));
  r.dims.push_back(dims_of(a));
  r.data.push_back(std::move(v));
  r.ulps = op == OpCode::kExp ? 2 : (op == OpCode::kTanh || op == OpCode::kSigmoid) ? 3 : 0;
}

bool scalar_op(OpCode op, const Tensor& a, const Scalar& s, Ref& r) {
  const float* f = std::get_if<float>(&s);
  if (!f) return false;
  char c = op == OpCode::kAddScalar   ? '+'
           : op == OpCode::kSubScalar ? '-'
           : op == OpCode::kMulScalar ? '*'
                                      : '/';
  std::vector<float> v;
  v.reserve(a.data.size());
  for (float x : a.data) v.push_back(arith(c, x, *f));
  r.dims.push_back(dims_of(a));
  r.data.push_back(std::move(v));
  return true;
}

// gamma(n) = n u / (1 - n u) with u = 2^-24: the bound on the relative error of a sum of n
// rounded terms in any order (Higham, Accuracy and Stability, 3.1), plus subnormal slack.
long double gamma_bound(int64_t n, long double magnitude) {
  long double u = std::ldexp(1.0L, -24), nu = static_cast<long double>(n) * u;
  return nu / (1.0L - nu) * magnitude + static_cast<long double>(n) * std::ldexp(1.0L, -149);
}

// A sum of `terms` (in long double) with its bound: `products` terms are a product rounded
// once each, one more rounding per term.
void add_sum(Ref& r, const std::vector<long double>& terms, bool products) {
  long double sum = 0, mag = 0;
  for (long double t : terms) sum += t, mag += std::fabs(t);
  int64_t n = static_cast<int64_t>(terms.size()) + (products ? 1 : 0);
  r.exact[0].push_back(sum);
  r.mag[0].push_back(mag);
  r.abs[0].push_back(gamma_bound(std::max<int64_t>(n, 1), mag));
  r.data[0].push_back(static_cast<float>(sum));
}

bool matmul(const Tensor& a, const Tensor& b, Ref& r) {
  Dims da = dims_of(a), db = dims_of(b);
  if (da.size() != 2 || db.size() != 2 || da[1] != db[0]) return false;
  r.dims = {{da[0], db[1]}};
  r.data = {{}};
  r.exact = {{}};
  r.abs = {{}};
  r.mag = {{}};
  for (int64_t i = 0; i < da[0]; ++i)
    for (int64_t j = 0; j < db[1]; ++j) {
      std::vector<long double> terms;
      for (int64_t p = 0; p < da[1]; ++p)
        terms.push_back(static_cast<long double>(a.data[static_cast<size_t>(i * da[1] + p)]) *
                        b.data[static_cast<size_t>(p * db[1] + j)]);
      add_sum(r, terms, true);
    }
  return true;
}

bool sum(const Tensor& a, const Scalar& s, Ref& r) {
  const int64_t* dp = std::get_if<int64_t>(&s);
  Dims d = dims_of(a);
  if (!dp) return false;
  int64_t dim = norm(*dp, d.size());
  if (dim < 0 || dim >= static_cast<int64_t>(d.size())) return false;
  Dims out = d;
  out.erase(out.begin() + dim);
  r.dims = {out};
  r.data = {{}};
  r.exact = {{}};
  r.abs = {{}};
  r.mag = {{}};
  each_index(out, [&](const Dims& o) {
    std::vector<long double> terms;
    Dims i = o;
    i.insert(i.begin() + dim, 0);
    for (int64_t k = 0; k < d[static_cast<size_t>(dim)]; ++k) {
      i[static_cast<size_t>(dim)] = k;
      terms.push_back(a.data[static_cast<size_t>(offset(d, i))]);
    }
    add_sum(r, terms, false);
  });
  return true;
}

bool transpose(const Tensor& a, const std::vector<Scalar>& sc, Ref& r) {
  if (sc.size() != 2 || !std::get_if<int64_t>(&sc[0]) || !std::get_if<int64_t>(&sc[1]))
    return false;
  Dims d = dims_of(a);
  int64_t x = norm(std::get<int64_t>(sc[0]), d.size()),
          y = norm(std::get<int64_t>(sc[1]), d.size());
  if (x < 0 || y < 0 || x >= static_cast<int64_t>(d.size()) || y >= static_cast<int64_t>(d.size()))
    return false;
  Dims out = d;
  std::swap(out[static_cast<size_t>(x)], out[static_cast<size_t>(y)]);
  std::vector<float> v;
  each_index(out, [&](const Dims& o) {
    Dims i = o;
    std::swap(i[static_cast<size_t>(x)], i[static_cast<size_t>(y)]);
    v.push_back(a.data[static_cast<size_t>(offset(d, i))]);
  });
  r.dims.push_back(std::move(out));
  r.data.push_back(std::move(v));
  return true;
}

bool concat(const std::vector<const Tensor*>& in, const Scalar& s, Ref& r) {
  const int64_t* dp = std::get_if<int64_t>(&s);
  if (!dp || in.empty()) return false;
  Dims first = dims_of(*in[0]);
  int64_t dim = norm(*dp, first.size());
  if (dim < 0 || dim >= static_cast<int64_t>(first.size())) return false;
  Dims out = first;
  out[static_cast<size_t>(dim)] = 0;
  for (const Tensor* t : in) out[static_cast<size_t>(dim)] += t->shape[static_cast<size_t>(dim)];
  std::vector<float> v;
  each_index(out, [&](const Dims& o) {
    int64_t at = o[static_cast<size_t>(dim)];
    for (const Tensor* t : in) {  // the input this index falls in, and its index there
      int64_t size = t->shape[static_cast<size_t>(dim)];
      if (at < size) {
        Dims i = o;
        i[static_cast<size_t>(dim)] = at;
        v.push_back(t->data[static_cast<size_t>(offset(dims_of(*t), i))]);
        return;
      }
      at -= size;
    }
  });
  r.dims.push_back(std::move(out));
  r.data.push_back(std::move(v));
  return true;
}

bool split(const Tensor& a, const std::vector<Scalar>& sc, Ref& r) {
  if (sc.size() != 2 || !std::get_if<int64_t>(&sc[0]) || !std::get_if<int64_t>(&sc[1]))
    return false;
  Dims d = dims_of(a);
  int64_t dim = norm(std::get<int64_t>(sc[0]), d.size()), n = std::get<int64_t>(sc[1]);
  if (dim < 0 || dim >= static_cast<int64_t>(d.size()) || n < 1 ||
      d[static_cast<size_t>(dim)] % n != 0)
    return false;
  int64_t size = d[static_cast<size_t>(dim)] / n;  // torch.chunk into n equal parts
  Dims piece = d;
  piece[static_cast<size_t>(dim)] = size;
  for (int64_t k = 0; k < n; ++k) {
    std::vector<float> v;
    each_index(piece, [&](const Dims& o) {
      Dims i = o;
      i[static_cast<size_t>(dim)] += k * size;
      v.push_back(a.data[static_cast<size_t>(offset(d, i))]);
    });
    r.dims.push_back(piece);
    r.data.push_back(std::move(v));
  }
  return true;
}

bool reshape(const Tensor& a, const Scalar& s, Ref& r) {
  const auto* l = std::get_if<std::vector<int64_t>>(&s);
  if (!l || count(*l) != count(dims_of(a))) return false;
  r.dims.push_back(*l);
  r.data.push_back(a.data);
  return true;
}

// The reference result; false when the op's arguments are not what its signature says.
bool reference(OpCode op, const std::vector<const Tensor*>& in, const std::vector<Scalar>& sc,
               Ref& r) {
  auto has = [&](size_t n, size_t s) { return in.size() == n && sc.size() == s; };
  switch (op) {
    case OpCode::kAdd:
    case OpCode::kSub:
    case OpCode::kMul:
    case OpCode::kDiv:
    case OpCode::kMaximum:
    case OpCode::kMinimum:
      return has(2, 0) && binary(op, *in[0], *in[1], r);
    case OpCode::kNeg:
    case OpCode::kRelu:
    case OpCode::kAbs:
    case OpCode::kExp:
    case OpCode::kTanh:
    case OpCode::kSigmoid:
    case OpCode::kSqrt:
    case OpCode::kClone:
      if (!has(1, 0)) return false;
      unary(op, *in[0], r);
      return true;
    case OpCode::kAddScalar:
    case OpCode::kSubScalar:
    case OpCode::kMulScalar:
    case OpCode::kDivScalar:
      return has(1, 1) && scalar_op(op, *in[0], sc[0], r);
    case OpCode::kMatmul:
      return has(2, 0) && matmul(*in[0], *in[1], r);
    case OpCode::kSum:
      return has(1, 1) && sum(*in[0], sc[0], r);
    case OpCode::kReshape:
      return has(1, 1) && reshape(*in[0], sc[0], r);
    case OpCode::kTranspose:
      return in.size() == 1 && transpose(*in[0], sc, r);
    case OpCode::kConcat:
      return sc.size() == 1 && concat(in, sc[0], r);
    case OpCode::kSplit:
      return in.size() == 1 && split(*in[0], sc, r);
    default:
      return false;
  }
}

std::string hex(float f) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", float_bits(f));
  return buf;
}

int64_t ordered(float f) {  // the float line as integers: adjacent floats differ by one
  int64_t u = float_bits(f);
  return u & 0x80000000 ? -(u & 0x7fffffff) : u;
}

// One element against the reference: "" or why it differs.
std::string compare(const Ref& r, size_t o, size_t e, float got, bool nan_exact) {
  float want = r.data[o][e];
  if (!r.exact.empty()) {  // a sum: within its bound, infinities and NaNs by class
    long double x = r.exact[o][e], bound = r.abs[o][e];
    if (std::isnan(x)) return std::isnan(got) ? "" : "not NaN where the sum is NaN";
    // Terms whose magnitudes pass the float range: a float sum can overflow on the way, to an
    // infinity, or to NaN when two infinities meet, depending on its order.
    bool may_overflow = std::isinf(x) || r.mag[o][e] > std::numeric_limits<float>::max() ||
                        std::fabs(x) > std::numeric_limits<float>::max();
    if (!std::isfinite(got)) return may_overflow ? "" : "not finite where the sum is";
    if (std::isinf(x)) return "finite where the sum is infinite";
    long double diff = std::fabs(static_cast<long double>(got) - x);
    return diff <= bound ? "" : "off by more than the summation bound";
  }
  if (std::isnan(want) || std::isnan(got)) {
    if (std::isnan(want) != std::isnan(got)) return "NaN in one and not the other";
    return !nan_exact || r.ulps > 0 || float_bits(got) == float_bits(want) ? ""
                                                                           : "another NaN payload";
  }
  if (r.ulps > 0) {
    int64_t d = ordered(got) - ordered(want);
    return (d < 0 ? -d : d) <= r.ulps ? "" : std::to_string(d) + " ulp";
  }
  return float_bits(got) == float_bits(want) ? "" : "another value";
}

}  // namespace

bool has_reference(OpCode op) {
  switch (op) {
    case OpCode::kGetitem:
    case OpCode::kBranch:
    case OpCode::kExecuteEngine:
    case OpCode::kCopy:
      return false;
    default:
      return op_info(op).has_kernel;
  }
}

namespace {
uint64_t reference_ops(const Module& m, std::unordered_map<const Module*, uint64_t>& memo) {
  if (auto it = memo.find(&m); it != memo.end()) return it->second;
  uint64_t n = 0;
  for (const Node* x = m.graph.first(); x; x = x->next) {
    if (x->op == NodeOp::kCallFunction && has_reference(x->fn)) {
      ++n;
    } else if (x->op == NodeOp::kCallModule) {
      if (const Module* c = m.submodule(x->target)) n += reference_ops(*c, memo);
    } else if (x->op == NodeOp::kOutput) {
      break;
    }
  }
  memo.emplace(&m, n);
  return n;
}
}  // namespace

uint64_t reference_ops_per_call(const Module& m) {
  std::unordered_map<const Module*, uint64_t> memo;
  return reference_ops(m, memo);
}

std::string check_against_reference(OpCode op, const std::vector<const Tensor*>& in,
                                    const std::vector<Scalar>& scalars,
                                    const std::vector<Tensor>& out, bool nan_exact) {
  Ref r;
  if (!reference(op, in, scalars, r)) return "";  // not an op the reference covers
  if (out.size() != r.data.size())
    return std::to_string(out.size()) + " outputs, the reference has " +
           std::to_string(r.data.size());
  for (size_t o = 0; o < out.size(); ++o) {
    if (!std::equal(out[o].shape.begin(), out[o].shape.end(), r.dims[o].begin(), r.dims[o].end()))
      return "output " + std::to_string(o) + " has another shape";
    for (size_t e = 0; e < r.data[o].size(); ++e) {
      std::string why = compare(r, o, e, out[o].data[e], nan_exact);
      if (!why.empty()) {
        std::ostringstream os;
        os << "output " << o << " element " << e << ": got " << hex(out[o].data[e])
           << ", reference " << hex(r.data[o][e]) << " (" << why << ")";
        return os.str();
      }
    }
  }
  return "";
}

}  // namespace flatcheck
