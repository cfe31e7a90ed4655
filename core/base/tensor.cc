#include "core/base/tensor.h"

#include <cstdint>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace flatcheck {

void Shape::check_index(size_t i) const {
  if (i >= size_)
    throw std::out_of_range("shape index " + std::to_string(i) + " out of range for rank " +
                            std::to_string(size_));
}

int64_t numel(const Shape& shape) {
  // Saturating: a shape read from a file may multiply past int64 (8 dims of 2^24).
  for (int64_t d : shape)
    if (d == 0) return 0;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > INT64_MAX / d)) return INT64_MAX;
    n *= d;
  }
  return n;
}

std::string shape_str(const Shape& shape) {
  std::string s = "f32[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Tensor Tensor::zeros(Shape s) {
  return full(std::move(s), 0.0f);
}

Tensor Tensor::full(Shape s, float v) {
  int64_t n = flatcheck::numel(s);
  return Tensor(std::move(s), std::vector<float>(static_cast<size_t>(n), v));
}

bool Tensor::bit_equal(const Tensor& o) const {
  return shape == o.shape && data.size() == o.data.size() &&
         (data.empty() || std::memcmp(data.data(), o.data.data(), data.size() * 4) == 0);
}

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::string format_float(float f) {
  char buf[48];
  if (std::isnan(f)) {
    std::snprintf(buf, sizeof buf, "nan(0x%08x)", float_bits(f));
  } else if (std::isinf(f)) {
    return f > 0 ? "inf" : "-inf";
  } else {
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
  }
  return buf;
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  os << shape_str(t.shape) << "{";
  size_t n = std::min<size_t>(t.data.size(), 8);
  for (size_t i = 0; i < n; ++i) os << (i ? ", " : "") << format_float(t.data[i]);
  if (t.data.size() > n) os << ", ...";
  return os << "}";
}

}  // namespace flatcheck
