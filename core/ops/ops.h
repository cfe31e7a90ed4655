// The op table (core/ops/ops.def) as C++: the enum, names, signatures and shape rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

#include "core/base/tensor.h"

namespace flatcheck {

enum class OpCode : uint8_t {
#define X(code, name, sig, outs, pure, kernel, weight) code,
#include "core/ops/ops.def"
#undef X
};

inline constexpr int kNumOps = 0
#define X(code, name, sig, outs, pure, kernel, weight) +1
#include "core/ops/ops.def"
#undef X
    ;
static_assert(kNumOps == 28, "the op table changed: update every table generated from it");

// Static facts about one op, straight from the table.
struct OpInfo {
  OpCode code;
  std::string_view name;  // the JSON and printer name, e.g. "add_scalar"
  std::string_view sig;   // argument signature, see ops.def
  int outputs;            // 1, or 0 for a tuple
  bool pure;              // false for in-place updates (copy_)
  bool has_kernel;        // false for ops the interpreter handles itself
  int gen_weight;         // generator weight
};

const OpInfo& op_info(OpCode op);
std::optional<OpCode> op_by_name(std::string_view name);

// A constant argument as the kernels see it.
using Scalar = std::variant<bool, int64_t, float, std::vector<int64_t>>;

// Checks a call's argument kinds against the signature: `kinds` has one letter per argument
// (T, f, i, B, L, X, E as in ops.def, where T also stands for X). Returns an empty string when
// they fit, else a reason.
std::string check_signature(OpCode op, std::string_view kinds);

// The shape rule: output shapes from input tensor shapes and the scalar arguments (in order).
// Throws InputError with a reason when the shapes do not fit.
std::vector<Shape> infer_shapes(OpCode op, const std::vector<Shape>& in,
                                const std::vector<Scalar>& scalars);

// Numpy broadcasting of two shapes; throws InputError when they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace flatcheck
