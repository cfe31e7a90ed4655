// What every op launcher receives: device views, scalars and the stream. One launcher per op
// (kernels/*.cu); the dispatch table in cuda_backend.cu is generated from ops.def, so an op
// without a launcher is a build error.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "core/runtime/backend.h"

namespace flatcheck::cuda {

struct Launch {
  const std::vector<TensorView>& in;
  const std::vector<Scalar>& scalars;
  const std::vector<TensorView>& out;
  cudaStream_t stream;
};

using Launcher = void (*)(const Launch&);

constexpr int kThreads = 256;
inline unsigned blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 ? 65535 : b));
}

// Declarations of every launcher: launch_<code>.
#define X(code, name, sig, outs, pure, kernel, weight) void launch_##code(const Launch& l);
#include "core/ops/ops.def"
#undef X

}  // namespace flatcheck::cuda
