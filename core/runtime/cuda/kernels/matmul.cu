// matmul and sum: one thread per output element, accumulating in the CPU kernel's order
// (ascending k), without fused multiply-add, so results are bit-identical to the CPU's.
#include "core/runtime/cuda/kernels/launch.cuh"

namespace flatcheck::cuda {
namespace {

__global__ void matmul_kernel(const float* a, const float* b, float* out, int64_t m, int64_t k,
                              int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < m * n;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t r = i / n, c = i % n;
    float acc = 0.0f;
    for (int64_t j = 0; j < k; ++j) acc = __fadd_rn(acc, __fmul_rn(a[r * k + j], b[j * n + c]));
    out[i] = acc;
  }
}

__global__ void sum_kernel(const float* a, float* out, int64_t outer, int64_t len, int64_t inner) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < outer * inner;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t o = i / inner, in = i % inner;
    float acc = 0.0f;
    for (int64_t j = 0; j < len; ++j) acc = __fadd_rn(acc, a[(o * len + j) * inner + in]);
    out[i] = acc;
  }
}

int64_t norm_dim(int64_t d, size_t rank) {
  return d < 0 ? d + static_cast<int64_t>(rank) : d;
}

}  // namespace

void launch_kMatmul(const Launch& l) {
  int64_t m = l.in[0].shape[0], k = l.in[0].shape[1], n = l.in[1].shape[1];
  matmul_kernel<<<blocks_for(m * n), kThreads, 0, l.stream>>>(l.in[0].data, l.in[1].data,
                                                              l.out[0].data, m, k, n);
}

void launch_kSum(const Launch& l) {
  const Shape& s = l.in[0].shape;
  int64_t d = norm_dim(std::get<int64_t>(l.scalars.at(0)), s.size());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= s[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(d) + 1; i < s.size(); ++i) inner *= s[i];
  sum_kernel<<<blocks_for(outer * inner), kThreads, 0, l.stream>>>(
      l.in[0].data, l.out[0].data, outer, s[static_cast<size_t>(d)], inner);
}

}  // namespace flatcheck::cuda
