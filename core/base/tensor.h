// Dense float32 tensors, held by value; parameters and buffers share them by pointer.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/base/shape.h"

namespace flatcheck {

// Element types. Only float32 is implemented; the file format carries the field.
enum class DType : uint8_t { kFloat32 };

// Number of elements of a shape (1 for a scalar shape `[]`).
int64_t numel(const Shape& shape);  // saturates at INT64_MAX

// "f32[2, 3]".
std::string shape_str(const Shape& shape);

// A dense, row-major float32 tensor.
struct Tensor {
  Shape shape;
  std::vector<float> data;

  Tensor() = default;
  Tensor(Shape s, std::vector<float> d) : shape(std::move(s)), data(std::move(d)) {}
  static Tensor zeros(Shape s);
  static Tensor full(Shape s, float v);

  int64_t numel() const { return static_cast<int64_t>(data.size()); }
  // Same shape and the same bytes: NaN payloads and the sign of zero count.
  bool bit_equal(const Tensor& o) const;
};

// Storage shared between modules (parameters and buffers of unflattened call variants).
using TensorPtr = std::shared_ptr<Tensor>;

// Bit pattern helpers: float32 <-> uint32 without aliasing UB.
uint32_t float_bits(float f);
float bits_float(uint32_t u);

// Prints "f32[2, 3]{1, 2, ...}" with at most 8 values, exact (%.9g); NaN shows its payload.
std::ostream& operator<<(std::ostream& os, const Tensor& t);
std::string format_float(float f);

}  // namespace flatcheck
