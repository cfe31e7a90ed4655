// The CPU backend: host memory and deterministic kernels (fixed summation order; the build
// passes -ffp-contract=off so no multiply-add is fused).
//
// One kernel function per op with a kernel; the dispatch table is generated from ops.def, so
// an op added to the table without a CPU kernel fails to build.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/base/check.h"
#include "core/runtime/backend.h"

namespace flatcheck {
namespace {

using Ins = std::vector<TensorView>;
using Scalars = std::vector<Scalar>;

// Row-major strides of a shape, right-aligned to `rank`, 0 for broadcast dims.
std::vector<int64_t> bcast_strides(const Shape& s, size_t rank, const Shape& out) {
  std::vector<int64_t> st(rank, 0);
  int64_t acc = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    size_t si = s.size() - 1 - i;
    size_t oi = rank - 1 - i;
    st[oi] = (s[si] == 1 && out[oi] != 1) ? 0 : acc;
    acc *= s[si];
  }
  return st;
}

template <class F>
void binary(const Ins& in, const Ins& out, F f) {
  const Shape& os = out[0].shape;
  size_t rank = os.size();
  int64_t n = numel(os);
  if (in[0].shape == os && in[1].shape == os) {
    for (int64_t i = 0; i < n; ++i) out[0].data[i] = f(in[0].data[i], in[1].data[i]);
    return;
  }
  auto sa = bcast_strides(in[0].shape, rank, os);
  auto sb = bcast_strides(in[1].shape, rank, os);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t oa = 0, ob = 0;
    for (size_t d = 0; d < rank; ++d) oa += idx[d] * sa[d], ob += idx[d] * sb[d];
    out[0].data[i] = f(in[0].data[oa], in[1].data[ob]);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < os[d]) break;
      idx[d] = 0;
    }
  }
}

template <class F>
void unary(const Ins& in, const Ins& out, F f) {
  int64_t n = numel(out[0].shape);
  for (int64_t i = 0; i < n; ++i) out[0].data[i] = f(in[0].data[i]);
}

float scalar_f(const Scalars& s) {
  return std::get<float>(s.at(0));
}
int64_t scalar_i(const Scalars& s, size_t i) {
  return std::get<int64_t>(s.at(i));
}
int64_t norm(int64_t d, size_t rank) {
  return d < 0 ? d + static_cast<int64_t>(rank) : d;
}

// NaN handling as torch's CPU kernels (torch 1.13, x86-64; docs/torch.md): maximum and
// minimum return the canonical quiet NaN when either operand is NaN and the first operand on
// a tie (so maximum(-0.0, +0.0) is -0.0); when both operands of add, sub or mul are NaN the
// second one's payload is kept, for div the first one's; the same with a scalar operand
// (add_scalar ... div_scalar: the scalar is the second).
float quiet(float a) {
  return bits_float(float_bits(a) | 0x00400000u);
}
float canonical_nan() {
  return bits_float(0x7fc00000u);
}
float torch_max(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return canonical_nan();
  return a < b ? b : a;
}
float torch_min(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return canonical_nan();
  return b < a ? b : a;
}
template <class F>
auto second_nan_wins(F f) {
  return [f](float a, float b) { return std::isnan(a) && std::isnan(b) ? quiet(b) : f(a, b); };
}
template <class F>
auto first_nan_wins(F f) {
  return [f](float a, float b) { return std::isnan(a) && std::isnan(b) ? quiet(a) : f(a, b); };
}

void kernel_kAdd(const Ins& i, const Scalars&, const Ins& o) {
  binary(i, o, second_nan_wins([](float a, float b) { return a + b; }));
}
void kernel_kSub(const Ins& i, const Scalars&, const Ins& o) {
  binary(i, o, second_nan_wins([](float a, float b) { return a - b; }));
}
void kernel_kMul(const Ins& i, const Scalars&, const Ins& o) {
  binary(i, o, second_nan_wins([](float a, float b) { return a * b; }));
}
void kernel_kDiv(const Ins& i, const Scalars&, const Ins& o) {
  binary(i, o, first_nan_wins([](float a, float b) { return a / b; }));
}
void kernel_kMaximum(const Ins& i, const Scalars&, const Ins& o) {
  binary(i, o, torch_max);
}
void kernel_kMinimum(const Ins& i, const Scalars&, const Ins& o) {
  binary(i, o, torch_min);
}
void kernel_kNeg(const Ins& i, const Scalars&, const Ins& o) {
  unary(i, o, [](float a) { return -a; });
}
void kernel_kRelu(const Ins& i, const Scalars&, const Ins& o) {
  // torch: x < 0 ? 0 : x, so relu(-0.0) is -0.0 and a NaN passes through (quieted).
  unary(i, o, [](float a) { return a < 0.0f ? 0.0f : (std::isnan(a) ? quiet(a) : a); });
}
void kernel_kAbs(const Ins& i, const Scalars&, const Ins& o) {
  unary(i, o, [](float a) { return std::fabs(a); });
}
void kernel_kExp(const Ins& i, const Scalars&, const Ins& o) {
  unary(i, o, [](float a) { return std::exp(a); });
}
void kernel_kTanh(const Ins& i, const Scalars&, const Ins& o) {
  unary(i, o, [](float a) { return std::tanh(a); });
}
void kernel_kSigmoid(const Ins& i, const Scalars&, const Ins& o) {
  unary(i, o, [](float a) { return 1.0f / (1.0f + std::exp(-a)); });
}
void kernel_kSqrt(const Ins& i, const Scalars&, const Ins& o) {
  unary(i, o, [](float a) { return std::sqrt(a); });
}
void kernel_kClone(const Ins& i, const Scalars&, const Ins& o) {
  unary(i, o, [](float a) { return a; });
}
void kernel_kCopy(const Ins& i, const Scalars&, const Ins& o) {
  int64_t n = numel(o[0].shape);
  for (int64_t j = 0; j < n; ++j) o[0].data[j] = i[1].data[j];
}
void kernel_kAddScalar(const Ins& i, const Scalars& s, const Ins& o) {
  float c = scalar_f(s);
  auto f = second_nan_wins([](float a, float b) { return a + b; });
  unary(i, o, [c, f](float a) { return f(a, c); });
}
void kernel_kSubScalar(const Ins& i, const Scalars& s, const Ins& o) {
  float c = scalar_f(s);
  auto f = second_nan_wins([](float a, float b) { return a - b; });
  unary(i, o, [c, f](float a) { return f(a, c); });
}
void kernel_kMulScalar(const Ins& i, const Scalars& s, const Ins& o) {
  float c = scalar_f(s);
  auto f = second_nan_wins([](float a, float b) { return a * b; });
  unary(i, o, [c, f](float a) { return f(a, c); });
}
void kernel_kDivScalar(const Ins& i, const Scalars& s, const Ins& o) {
  float c = scalar_f(s);
  auto f = first_nan_wins([](float a, float b) { return a / b; });
  unary(i, o, [c, f](float a) { return f(a, c); });
}
void kernel_kMatmul(const Ins& in, const Scalars&, const Ins& o) {
  int64_t m = in[0].shape[0], k = in[0].shape[1], n = in[1].shape[1];
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < n; ++c) {
      float acc = 0.0f;
      for (int64_t j = 0; j < k; ++j) acc += in[0].data[r * k + j] * in[1].data[j * n + c];
      o[0].data[r * n + c] = acc;
    }
}
void kernel_kSum(const Ins& in, const Scalars& s, const Ins& o) {
  const Shape& sh = in[0].shape;
  int64_t d = norm(scalar_i(s, 0), sh.size());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= sh[i];
  for (size_t i = static_cast<size_t>(d) + 1; i < sh.size(); ++i) inner *= sh[i];
  int64_t len = sh[d];
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t b = 0; b < inner; ++b) {
      float acc = 0.0f;
      for (int64_t j = 0; j < len; ++j) acc += in[0].data[(a * len + j) * inner + b];
      o[0].data[a * inner + b] = acc;
    }
}
void kernel_kReshape(const Ins& i, const Scalars&, const Ins& o) {
  kernel_kClone(i, {}, o);
}
void kernel_kTranspose(const Ins& in, const Scalars& s, const Ins& o) {
  const Shape& sh = in[0].shape;
  size_t rank = sh.size();
  int64_t a = norm(scalar_i(s, 0), rank), b = norm(scalar_i(s, 1), rank);
  std::vector<int64_t> st(rank, 1);
  for (size_t d = rank; d-- > 1;) st[d - 1] = st[d] * sh[d];
  std::swap(st[a], st[b]);
  const Shape& os = o[0].shape;
  std::vector<int64_t> idx(rank, 0);
  int64_t n = numel(os);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += idx[d] * st[d];
    o[0].data[i] = in[0].data[off];
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < os[d]) break;
      idx[d] = 0;
    }
  }
}
void kernel_kConcat(const Ins& in, const Scalars& s, const Ins& o) {
  const Shape& os = o[0].shape;
  int64_t d = norm(scalar_i(s, 0), os.size());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= os[i];
  for (size_t i = static_cast<size_t>(d) + 1; i < os.size(); ++i) inner *= os[i];
  float* dst = o[0].data;
  for (int64_t a = 0; a < outer; ++a)
    for (const auto& t : in) {
      int64_t chunk = t.shape[d] * inner;
      // memmove: a wrong memory plan may overlap slots; that must give wrong numbers, not UB.
      if (chunk > 0)  // zero-size tensors may have no storage at all
        std::memmove(dst, t.data + a * chunk, static_cast<size_t>(chunk) * 4);
      dst += chunk;
    }
}
void kernel_kSplit(const Ins& in, const Scalars& s, const Ins& o) {
  const Shape& sh = in[0].shape;
  int64_t d = norm(scalar_i(s, 0), sh.size());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= sh[i];
  for (size_t i = static_cast<size_t>(d) + 1; i < sh.size(); ++i) inner *= sh[i];
  int64_t part = o[0].shape[d] * inner;
  if (part == 0) return;  // zero-size halves: nothing to copy, and maybe no storage
  for (int64_t a = 0; a < outer; ++a)
    for (size_t c = 0; c < o.size(); ++c)  // memmove: slots may overlap (see kConcat)
      std::memmove(o[c].data + a * part,
                   in[0].data + (a * static_cast<int64_t>(o.size()) + c) * part,
                   static_cast<size_t>(part) * 4);
}

using Kernel = void (*)(const Ins&, const Scalars&, const Ins&);

// Ops without a kernel (the interpreter handles them) map to nullptr.
#define KERNEL_true(code) kernel_##code
#define KERNEL_false(code) nullptr
constexpr Kernel kKernels[] = {
#define X(code, name, sig, outs, pure, kernel, weight) KERNEL_##kernel(code),
#include "core/ops/ops.def"
#undef X
};
#undef KERNEL_true
#undef KERNEL_false
static_assert(sizeof(kKernels) / sizeof(kKernels[0]) == kNumOps,
              "every op in ops.def needs an entry in the CPU kernel table");

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  bool host_visible() const override { return true; }
  DeviceBuffer allocate(size_t bytes) override {
    void* p = bytes ? ::operator new(bytes) : nullptr;
    return {p, bytes};
  }
  void release(DeviceBuffer buf) override { ::operator delete(buf.ptr); }
  void copy_in(DeviceBuffer dst, size_t off, const float* src, size_t n) override {
    if (n) std::memcpy(static_cast<float*>(dst.ptr) + off, src, n * 4);
  }
  void copy_out(float* dst, DeviceBuffer src, size_t off, size_t n) override {
    if (n) std::memcpy(dst, static_cast<const float*>(src.ptr) + off, n * 4);
  }
  void run_kernel(OpCode op, const std::vector<TensorView>& in, const std::vector<Scalar>& sc,
                  const std::vector<TensorView>& out) override {
    Kernel k = kKernels[static_cast<size_t>(op)];
    FLATCHECK_CHECK(k != nullptr) << "no CPU kernel for " << op_info(op).name;
    k(in, sc, out);
  }
  void synchronize() override {}
};

}  // namespace

Backend& cpu_backend() {
  static CpuBackend b;
  return b;
}

std::vector<Tensor> run_op(Backend& b, OpCode op, const std::vector<const Tensor*>& in,
                           const std::vector<Scalar>& scalars) {
  // Per-thread scratch vectors, reused from op to op (run_op does not re-enter itself).
  thread_local std::vector<Shape> in_shapes;
  thread_local std::vector<TensorView> host_iv, host_ov;
  in_shapes.clear();
  for (const Tensor* t : in) in_shapes.push_back(t->shape);
  std::vector<Shape> out_shapes = infer_shapes(op, in_shapes, scalars);
  std::vector<Tensor> out;
  out.reserve(out_shapes.size());
  for (auto& s : out_shapes) out.push_back(Tensor::zeros(s));
  if (b.host_visible()) {
    host_iv.clear();
    host_ov.clear();
    for (const Tensor* t : in) host_iv.push_back({const_cast<float*>(t->data.data()), t->shape});
    for (auto& t : out) host_ov.push_back({t.data.data(), t.shape});
    b.run_kernel(op, host_iv, scalars, host_ov);
    return out;
  }
  // Device memory: one buffer for inputs and outputs, copied in and out around the kernel.
  size_t total = 0;
  for (const Tensor* t : in) total += t->data.size();
  for (auto& t : out) total += t.data.size();
  DeviceMemory mem(b, total * 4);
  std::vector<TensorView> iv, ov;
  size_t off = 0;
  for (const Tensor* t : in) {
    b.copy_in(mem.buffer(), off, t->data.data(), t->data.size());
    iv.push_back({mem.floats() + off, t->shape});
    off += t->data.size();
  }
  std::vector<size_t> out_off;
  for (auto& t : out) {
    ov.push_back({mem.floats() + off, t.shape});
    out_off.push_back(off);
    off += t.data.size();
  }
  b.run_kernel(op, iv, scalars, ov);
  b.synchronize();
  for (size_t i = 0; i < out.size(); ++i)
    b.copy_out(out[i].data.data(), mem.buffer(), out_off[i], out[i].data.size());
  return out;
}

}  // namespace flatcheck
