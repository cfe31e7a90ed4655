// Reference kernels: a second implementation of every op that has a kernel (core/ops/ops.def),
// written for obviousness from torch's documented semantics, not for speed. Scalar loops over
// explicit multi-indices, its own broadcasting, shape derivation and offset arithmetic; nothing
// is shared with core/runtime/cpu or with the op table's shape rules. The oracle checks every
// op of the eager run against it (property `reference`), so a kernel bug that every path shares
// (the eager reference included) is found.
//
// Exact ops are compared bit for bit, NaN payloads and signs of zero included, as torch's CPU
// kernels give them in their scalar path (docs/torch.md): a NaN operand is returned quieted; of
// two NaN operands add, sub and mul keep the second, div the first; maximum and minimum give
// the canonical NaN for any NaN and their first operand on a tie (so on +0/-0); relu(x) is
// x < 0 ? +0 : x; neg flips and abs clears the sign bit. exp, tanh and sigmoid are compared with
// a long-double result within their measured bounds (bench/results/ulp.md: 1, 2 and 2 ulp from
// the correctly rounded value, plus 1 for rounding the reference); sum and matmul with a
// long-double sum within the error bound of any summation order, gamma(n) * sum |terms|.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/tensor.h"
#include "core/ir/ir.h"
#include "core/ops/ops.h"

namespace flatcheck {

// Checks what a kernel computed for `op` (outputs `out`) on inputs `in` and `scalars` against
// the reference. Returns "" when it agrees, else what differs ("element 3: got 0x3f800001,
// reference 0x3f800000"). `nan_exact` false: NaN payloads are not compared.
std::string check_against_reference(OpCode op, const std::vector<const Tensor*>& in,
                                    const std::vector<Scalar>& scalars,
                                    const std::vector<Tensor>& out, bool nan_exact);

// Whether the reference covers `op` (every op with a kernel but copy_, whose result is its
// source, checked by the interpreter's own compare).
bool has_reference(OpCode op);

// How many ops with a reference one call of `m` runs: its graph's call_function nodes the
// reference covers, plus, for each call_module node, one call of that child. Read from the
// module tree, not from a run: the oracle holds the count of ops the eager run reported for
// checking to it, so a run that stops reporting ops leaves no kernel silently unchecked.
uint64_t reference_ops_per_call(const Module& m);

}  // namespace flatcheck
