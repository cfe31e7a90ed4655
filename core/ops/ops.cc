#include "core/ops/ops.h"

#include <array>
#include <string>

#include "core/base/check.h"

namespace flatcheck {
namespace {

constexpr std::array<OpInfo, kNumOps> kOps = {{
#define X(code, name, sig, outs, pure, kernel, weight) \
  {OpCode::code, name, sig, outs, pure, kernel, weight},
#include "core/ops/ops.def"
#undef X
}};

int64_t int_arg(const std::vector<Scalar>& s, size_t i) {
  FLATCHECK_INPUT(i < s.size() && std::holds_alternative<int64_t>(s[i]),
                  "argument " << i << " must be an int");
  return std::get<int64_t>(s[i]);
}

// Normalizes a possibly negative dim against a rank.
int64_t norm_dim(int64_t dim, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  FLATCHECK_INPUT(dim >= -r && dim < r, "dim " << dim << " out of range for rank " << r);
  return dim < 0 ? dim + r : dim;
}

bool letter_fits(char want, char got) {
  if (want == 'X') return got == 'T' || got == 'X';
  return want == got;
}

}  // namespace

const OpInfo& op_info(OpCode op) {
  return kOps[static_cast<size_t>(op)];
}

std::optional<OpCode> op_by_name(std::string_view name) {
  for (const auto& o : kOps)
    if (o.name == name) return o.code;
  return std::nullopt;
}

std::string check_signature(OpCode op, std::string_view kinds) {
  std::string_view sig = op_info(op).sig;
  size_t k = 0;
  for (size_t s = 0; s < sig.size(); ++s) {
    char want = sig[s];
    bool repeat = s + 1 < sig.size() && sig[s + 1] == '+';
    if (k >= kinds.size() || !letter_fits(want, kinds[k]))
      return "argument " + std::to_string(k) + " must be of kind '" + std::string(1, want) + "'";
    ++k;
    if (repeat) {
      while (k < kinds.size() && letter_fits(want, kinds[k])) ++k;
      ++s;
    }
  }
  if (k != kinds.size())
    return "expected " + std::to_string(k) + " arguments for signature '" + std::string(sig) +
           "', got " + std::to_string(kinds.size());
  return "";
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    FLATCHECK_INPUT(da == db || da == 1 || db == 1,
                    "shapes " << shape_str(a) << " and " << shape_str(b) << " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {

Shape reshape_shape(const Shape& in, const std::vector<Scalar>& sc) {
  FLATCHECK_INPUT(!sc.empty() && std::holds_alternative<std::vector<int64_t>>(sc[0]),
                  "reshape needs a shape list");
  Shape s = std::get<std::vector<int64_t>>(sc[0]);
  FLATCHECK_INPUT(s.size() <= 8, "reshape: rank " << s.size() << " over the limit of 8");
  for (int64_t d : s) FLATCHECK_INPUT(d >= 0 && d <= (1 << 24), "reshape: bad dim " << d);
  FLATCHECK_INPUT(numel(s) == numel(in),
                  "reshape: " << shape_str(in) << " to " << shape_str(s) << " changes size");
  return s;
}

Shape concat_shape(const std::vector<Shape>& in, const std::vector<Scalar>& sc) {
  int64_t d = norm_dim(int_arg(sc, 0), in[0].size());
  Shape s = in[0];
  for (size_t i = 1; i < in.size(); ++i) {
    FLATCHECK_INPUT(in[i].size() == s.size(), "concat: ranks differ");
    for (size_t j = 0; j < s.size(); ++j)
      FLATCHECK_INPUT(static_cast<int64_t>(j) == d || in[i][j] == s[j],
                      "concat: shapes " << shape_str(in[0]) << " and " << shape_str(in[i])
                                        << " differ outside dim " << d);
    s[d] += in[i][d];
  }
  return s;
}

std::vector<Shape> split_shapes(const Shape& in, const std::vector<Scalar>& sc) {
  int64_t d = norm_dim(int_arg(sc, 0), in.size());
  int64_t chunks = int_arg(sc, 1);
  FLATCHECK_INPUT(chunks >= 1 && chunks <= 64 && in[d] % chunks == 0,
                  "split: dim of size " << in[d] << " into " << chunks << " chunks");
  Shape s = in;
  s[d] /= chunks;
  return std::vector<Shape>(static_cast<size_t>(chunks), s);
}

}  // namespace

std::vector<Shape> infer_shapes(OpCode op, const std::vector<Shape>& in,
                                const std::vector<Scalar>& sc) {
  auto need = [&](size_t n) {
    FLATCHECK_INPUT(in.size() >= n, op_info(op).name << " needs " << n << " tensor inputs");
  };
  switch (op) {
    case OpCode::kAdd:
    case OpCode::kSub:
    case OpCode::kMul:
    case OpCode::kDiv:
    case OpCode::kMaximum:
    case OpCode::kMinimum:
      need(2);
      return {broadcast_shapes(in[0], in[1])};
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
      need(1);
      return {in[0]};
    case OpCode::kMatmul: {
      need(2);
      FLATCHECK_INPUT(
          in[0].size() == 2 && in[1].size() == 2 && in[0][1] == in[1][0],
          "matmul needs [m,k] x [k,n], got " << shape_str(in[0]) << " x " << shape_str(in[1]));
      return {Shape{in[0][0], in[1][1]}};
    }
    case OpCode::kSum: {
      need(1);
      int64_t d = norm_dim(int_arg(sc, 0), in[0].size());
      Shape s = in[0];
      s.erase(s.begin() + d);
      return {s};
    }
    case OpCode::kReshape:
      need(1);
      return {reshape_shape(in[0], sc)};
    case OpCode::kConcat:
      need(1);
      return {concat_shape(in, sc)};
    case OpCode::kSplit:
      need(1);
      return split_shapes(in[0], sc);
    case OpCode::kTranspose: {
      need(1);
      int64_t a = norm_dim(int_arg(sc, 0), in[0].size());
      int64_t b = norm_dim(int_arg(sc, 1), in[0].size());
      Shape s = in[0];
      std::swap(s[a], s[b]);
      return {s};
    }
    case OpCode::kCopy:
      need(2);
      FLATCHECK_INPUT(in[0] == in[1], "copy_: shapes " << shape_str(in[0]) << " and "
                                                       << shape_str(in[1]) << " differ");
      return {in[0]};
    case OpCode::kBranch:
      need(2);
      FLATCHECK_INPUT(in[0] == in[1], "branch: shapes " << shape_str(in[0]) << " and "
                                                        << shape_str(in[1]) << " differ");
      return {in[0]};
    case OpCode::kGetitem:
    case OpCode::kExecuteEngine:
      break;
  }
  throw InputError(std::string("no shape rule for ") + std::string(op_info(op).name));
}

}  // namespace flatcheck
