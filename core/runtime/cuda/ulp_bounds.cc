// The CPU-vs-CUDA bounds, shared by the CUDA build and the stub. Derived, not guessed
// (docs/cuda.md, "ULP bounds"): bound = CPU error + CUDA error, each against a correctly
// rounded result.
//   CPU error: measured by bench/ulp_main.cc (flatcheck_ulp) against long double over every
//              61st float bit pattern plus 2^21 dense points: glibc expf 1 ulp, tanhf 2 ulp.
//   CUDA error: CUDA Programming Guide, "Mathematical Functions", maximum ulp error (full
//              range): expf 2, tanhf 2; measured by the same tool where a GPU is present.
// sigmoid is 1 / (1 + exp(-x)) on both: exp's 3 ulp become at most 4 after the add's rounding,
// the correctly rounded division maps a relative difference of 4 ulp to at most 8 ulp of the
// result (the result's binade can be half as wide) plus 1 for its own rounding.
// Every other op is correctly rounded or exact on both (IEEE add, sub, mul, div with
// -prec-div=true, sqrt with -prec-sqrt=true; matmul and sum accumulate in one fixed order with
// no fused multiply-add; data movement): bound 0, compared bit for bit.
#include "core/runtime/cuda/cuda_backend.h"

namespace flatcheck {

int cuda_ulp_bound(OpCode op) {
  switch (op) {
    case OpCode::kExp:
      return 1 + 2;
    case OpCode::kTanh:
      return 2 + 2;
    case OpCode::kSigmoid:
      return 9;
    default:
      return 0;
  }
}

}  // namespace flatcheck
