// The documented CPU-vs-CUDA bounds, shared by the CUDA build and the stub.
#include "core/runtime/cuda/cuda_backend.h"

namespace flatcheck {

int cuda_ulp_bound(OpCode op) {
  // CUDA Programming Guide, "Mathematical functions": expf 2 ulp, tanhf 2 ulp (full range);
  // glibc's are within 1 ulp. sigmoid = 1 / (1 + exp(-x)) inherits exp's error through one add
  // and one correctly rounded division. Every other op is correctly rounded on both.
  switch (op) {
    case OpCode::kExp:
      return 2;
    case OpCode::kTanh:
      return 2;
    case OpCode::kSigmoid:
      return 4;
    default:
      return 0;
  }
}

}  // namespace flatcheck
