// The cross-backend differential check, in the style of ggml's test-backend-ops: one program
// runs on a reference backend; every kernel it launches is run again, on the same inputs, on a
// second backend, and the two results are compared under the op's ULP bound. Because each
// kernel gets the reference's inputs, an error never propagates: the first node outside its
// bound is the kernel that differs.
//
// Cross-backend equality of one float (the NaN policy across devices, docs/cuda.md):
//   - NaN-ness must agree; NaN payloads are relaxed (GPUs do not carry them through arithmetic);
//   - the sign of zero is kept (IEEE fixes it: -0.0 and +0.0 differ even where the bound is > 0);
//   - otherwise the two floats are at most `bound` apart on the ordered float line (0: bitwise).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/runtime/backend.h"
#include "generators/case.h"

namespace flatcheck {

// Distance in units in the last place on the ordered float line (-0.0 and +0.0 are 0 apart;
// 0 for two NaNs, INT64_MAX for a NaN and a number).
int64_t ulp_distance(float a, float b);

// `got` equals `want` under the cross-backend policy above with an ULP bound of `bound`.
bool within_bound(float want, float got, int bound);

// The first kernel whose result is outside its op's bound.
struct KernelMismatch {
  std::string program;  // "eager" or "flattened"
  std::string origin;   // provenance of the node ("n@1/add"), or "" when no node reported it
  std::string op;
  size_t output = 0, element = 0;
  float want = 0, got = 0;  // the reference backend's and the other backend's value
  int64_t ulps = 0;
  int bound = 0;
};

struct BackendDiffResult {
  std::string reference, other;             // the two backends' names, in every report
  int64_t kernels = 0;                      // kernel launches compared
  std::map<std::string, int64_t> per_op;    // launches compared per op
  std::map<std::string, int64_t> max_ulps;  // per op, the largest distance seen
  std::set<std::string> skipped_ops;        // ops the other backend has no kernel for
  std::optional<KernelMismatch> mismatch;   // the first one, if any
  std::string error;                        // the case did not run (a message), else ""
};

// Runs the case's eager module and its flattened program (engines included) once on
// `reference`, and every kernel launch again on `other` with the same inputs. Stops at the
// first mismatch. `bound(op)` is the allowed ULP distance for op (see cuda_ulp_bound()).
BackendDiffResult diff_backends(const Case& c, Backend& reference, Backend& other,
                                const std::function<int(OpCode)>& bound);

}  // namespace flatcheck
