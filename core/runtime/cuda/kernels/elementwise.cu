// Elementwise ops: broadcasting binary ops, unary ops, scalar forms, clone and copy_. Each
// thread computes whole elements with the same expression as the CPU kernel; the build passes
// -fmad=false, so no multiply-add is fused and arithmetic is bit-identical to the CPU's.
#include <cmath>

#include "core/runtime/cuda/kernels/launch.cuh"

namespace flatcheck::cuda {
namespace {

constexpr int kMaxRank = 8;

// Output dims and input strides (0 for broadcast dims), right-aligned to the output rank.
struct Bcast {
  int rank;
  int64_t dims[kMaxRank];
  int64_t sa[kMaxRank];
  int64_t sb[kMaxRank];
};

Bcast make_bcast(const Shape& a, const Shape& b, const Shape& out) {
  Bcast bc{};
  bc.rank = static_cast<int>(out.size());
  auto strides = [&](const Shape& s, int64_t* st) {
    int64_t acc = 1;
    for (size_t i = 0; i < s.size(); ++i) {
      size_t si = s.size() - 1 - i, oi = out.size() - 1 - i;
      st[oi] = (s[si] == 1 && out[oi] != 1) ? 0 : acc;
      acc *= s[si];
    }
  };
  for (int i = 0; i < bc.rank; ++i) bc.dims[i] = out[static_cast<size_t>(i)];
  strides(a, bc.sa);
  strides(b, bc.sb);
  return bc;
}

// As the CPU kernels (torch's semantics): the canonical NaN when either is NaN, the first
// operand on a tie.
__device__ float nan_max(float a, float b) {
  return isnan(a) || isnan(b) ? __int_as_float(0x7fc00000) : (a < b ? b : a);
}
__device__ float nan_min(float a, float b) {
  return isnan(a) || isnan(b) ? __int_as_float(0x7fc00000) : (b < a ? b : a);
}

enum class Bin { kAdd, kSub, kMul, kDiv, kMax, kMin };

template <Bin op>
__device__ float apply(float a, float b) {
  if constexpr (op == Bin::kAdd) return a + b;
  if constexpr (op == Bin::kSub) return a - b;
  if constexpr (op == Bin::kMul) return a * b;
  if constexpr (op == Bin::kDiv) return a / b;
  if constexpr (op == Bin::kMax) return nan_max(a, b);
  return nan_min(a, b);
}

template <Bin op>
__global__ void binary_kernel(const float* a, const float* b, float* out, int64_t n, Bcast bc) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rem = i, oa = 0, ob = 0;
    for (int d = bc.rank - 1; d >= 0; --d) {
      int64_t idx = rem % bc.dims[d];
      rem /= bc.dims[d];
      oa += idx * bc.sa[d];
      ob += idx * bc.sb[d];
    }
    out[i] = apply<op>(a[oa], b[ob]);
  }
}

template <Bin op>
void binary(const Launch& l) {
  int64_t n = numel(l.out[0].shape);
  Bcast bc = make_bcast(l.in[0].shape, l.in[1].shape, l.out[0].shape);
  binary_kernel<op>
      <<<blocks_for(n), kThreads, 0, l.stream>>>(l.in[0].data, l.in[1].data, l.out[0].data, n, bc);
}

enum class Un {
  kNeg,
  kRelu,
  kAbs,
  kExp,
  kTanh,
  kSigmoid,
  kSqrt,
  kCopy,
  kAddS,
  kSubS,
  kMulS,
  kDivS
};

template <Un op>
__device__ float apply1(float a, float c) {
  if constexpr (op == Un::kNeg) return -a;
  if constexpr (op == Un::kRelu) return a < 0.0f ? 0.0f : a;  // relu(-0.0) is -0.0
  if constexpr (op == Un::kAbs) return fabsf(a);
  if constexpr (op == Un::kExp) return expf(a);
  if constexpr (op == Un::kTanh) return tanhf(a);
  if constexpr (op == Un::kSigmoid) return 1.0f / (1.0f + expf(-a));
  if constexpr (op == Un::kSqrt) return sqrtf(a);  // IEEE-rounded: -prec-sqrt=true
  if constexpr (op == Un::kAddS) return a + c;
  if constexpr (op == Un::kSubS) return a - c;
  if constexpr (op == Un::kMulS) return a * c;
  if constexpr (op == Un::kDivS) return a / c;
  return a;
}

template <Un op>
__global__ void unary_kernel(const float* a, float* out, int64_t n, float c) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x)
    out[i] = apply1<op>(a[i], c);
}

// Only the scalar forms read a scalar: reshape's scalar is its shape list, copy_ has none.
constexpr bool takes_scalar(Un op) {
  return op == Un::kAddS || op == Un::kSubS || op == Un::kMulS || op == Un::kDivS;
}

template <Un op>
void unary(const Launch& l, int input = 0) {
  int64_t n = numel(l.out[0].shape);
  float c = 0.0f;
  if constexpr (takes_scalar(op)) c = std::get<float>(l.scalars.at(0));
  unary_kernel<op><<<blocks_for(n), kThreads, 0, l.stream>>>(l.in[static_cast<size_t>(input)].data,
                                                             l.out[0].data, n, c);
}

}  // namespace

void launch_kAdd(const Launch& l) {
  binary<Bin::kAdd>(l);
}
void launch_kSub(const Launch& l) {
  binary<Bin::kSub>(l);
}
void launch_kMul(const Launch& l) {
  binary<Bin::kMul>(l);
}
void launch_kDiv(const Launch& l) {
  binary<Bin::kDiv>(l);
}
void launch_kMaximum(const Launch& l) {
  binary<Bin::kMax>(l);
}
void launch_kMinimum(const Launch& l) {
  binary<Bin::kMin>(l);
}
void launch_kNeg(const Launch& l) {
  unary<Un::kNeg>(l);
}
void launch_kRelu(const Launch& l) {
  unary<Un::kRelu>(l);
}
void launch_kAbs(const Launch& l) {
  unary<Un::kAbs>(l);
}
void launch_kExp(const Launch& l) {
  unary<Un::kExp>(l);
}
void launch_kTanh(const Launch& l) {
  unary<Un::kTanh>(l);
}
void launch_kSigmoid(const Launch& l) {
  unary<Un::kSigmoid>(l);
}
void launch_kSqrt(const Launch& l) {
  unary<Un::kSqrt>(l);
}
void launch_kClone(const Launch& l) {
  unary<Un::kCopy>(l);
}
void launch_kReshape(const Launch& l) {
  unary<Un::kCopy>(l);
}
void launch_kCopy(const Launch& l) {
  unary<Un::kCopy>(l, 1);
}
void launch_kAddScalar(const Launch& l) {
  unary<Un::kAddS>(l);
}
void launch_kSubScalar(const Launch& l) {
  unary<Un::kSubS>(l);
}
void launch_kMulScalar(const Launch& l) {
  unary<Un::kMulS>(l);
}
void launch_kDivScalar(const Launch& l) {
  unary<Un::kDivS>(l);
}

}  // namespace flatcheck::cuda
