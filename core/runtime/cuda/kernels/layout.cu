// Data movement: transpose, concat and split (reshape and clone are copies in elementwise.cu).
// Every output element is one load and one store: exact by construction.
#include "core/runtime/cuda/kernels/launch.cuh"

namespace flatcheck::cuda {
namespace {

constexpr int kMaxRank = 8;

struct Perm {
  int rank;
  int64_t out_dims[kMaxRank];
  int64_t in_strides[kMaxRank];  // input stride for each output dim
};

__global__ void permute_kernel(const float* in, float* out, int64_t n, Perm p) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rem = i, off = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      off += (rem % p.out_dims[d]) * p.in_strides[d];
      rem /= p.out_dims[d];
    }
    out[i] = in[off];
  }
}

// Copies `rows` rows of `cols` floats from src (row pitch src_pitch) to dst (row pitch dst_pitch).
__global__ void strided_copy_kernel(const float* src, int64_t src_pitch, float* dst,
                                    int64_t dst_pitch, int64_t rows, int64_t cols) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < rows * cols;
       i += int64_t{gridDim.x} * blockDim.x) {
    int64_t r = i / cols, c = i % cols;
    dst[r * dst_pitch + c] = src[r * src_pitch + c];
  }
}

int64_t norm_dim(int64_t d, size_t rank) {
  return d < 0 ? d + static_cast<int64_t>(rank) : d;
}

void outer_inner(const Shape& s, int64_t d, int64_t* outer, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int64_t i = 0; i < d; ++i) *outer *= s[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(d) + 1; i < s.size(); ++i) *inner *= s[i];
}

}  // namespace

void launch_kTranspose(const Launch& l) {
  const Shape& s = l.in[0].shape;
  size_t rank = s.size();
  int64_t a = norm_dim(std::get<int64_t>(l.scalars.at(0)), rank),
          b = norm_dim(std::get<int64_t>(l.scalars.at(1)), rank);
  Perm p{};
  p.rank = static_cast<int>(rank);
  int64_t st[kMaxRank];
  st[rank - 1] = 1;
  for (size_t d = rank - 1; d-- > 0;) st[d] = st[d + 1] * s[d + 1];
  for (size_t d = 0; d < rank; ++d) {
    p.out_dims[d] = l.out[0].shape[d];
    p.in_strides[d] = st[d];
  }
  std::swap(p.in_strides[a], p.in_strides[b]);
  int64_t n = numel(l.out[0].shape);
  permute_kernel<<<blocks_for(n), kThreads, 0, l.stream>>>(l.in[0].data, l.out[0].data, n, p);
}

void launch_kConcat(const Launch& l) {
  const Shape& os = l.out[0].shape;
  int64_t d = norm_dim(std::get<int64_t>(l.scalars.at(0)), os.size());
  int64_t outer, inner;
  outer_inner(os, d, &outer, &inner);
  int64_t pitch = os[static_cast<size_t>(d)] * inner, col = 0;
  for (const auto& t : l.in) {
    int64_t chunk = t.shape[static_cast<size_t>(d)] * inner;
    strided_copy_kernel<<<blocks_for(outer * chunk), kThreads, 0, l.stream>>>(
        t.data, chunk, l.out[0].data + col, pitch, outer, chunk);
    col += chunk;
  }
}

void launch_kSplit(const Launch& l) {
  const Shape& s = l.in[0].shape;
  int64_t d = norm_dim(std::get<int64_t>(l.scalars.at(0)), s.size());
  int64_t outer, inner;
  outer_inner(s, d, &outer, &inner);
  int64_t pitch = s[static_cast<size_t>(d)] * inner;
  int64_t part = l.out[0].shape[static_cast<size_t>(d)] * inner;
  for (size_t c = 0; c < l.out.size(); ++c)
    strided_copy_kernel<<<blocks_for(outer * part), kThreads, 0, l.stream>>>(
        l.in[0].data + static_cast<int64_t>(c) * part, pitch, l.out[c].data, part, outer, part);
}

}  // namespace flatcheck::cuda
