// Values the generator draws (generators/values.h).
#include "generators/values.h"

#include <array>

#include "core/base/names.h"

namespace flatcheck {

float draw_value(Source& src, bool special) {
  if (special && src.chance(1, 6)) return special_value(src);
  // Multiples of 1/8 in [-4, 4], plus an odd fraction now and then.
  float v = static_cast<float>(src.range(-32, 32)) / 8.0f;
  if (src.chance(1, 4)) v += static_cast<float>(src.range(1, 999)) / 1000.0f;
  return v;
}

float special_value(Source& src) {
  static const std::array<uint32_t, 10> kSpecial = {0x80000000u /* -0.0 */,
                                                    0x7f800000u /* inf */,
                                                    0xff800000u /* -inf */,
                                                    0x7fc00000u /* NaN */,
                                                    0x7fc12345u /* NaN payload */,
                                                    0xffc00001u /* -NaN payload */,
                                                    0x00000001u /* smallest subnormal */,
                                                    0x807fffffu /* largest negative subnormal */,
                                                    0x7f7fffffu /* max */,
                                                    0x00800000u /* smallest normal */};
  return bits_float(kSpecial[src.below(kSpecial.size())]);
}

Tensor draw_tensor(Source& src, const Shape& shape, bool special) {
  Tensor t = Tensor::zeros(shape);
  for (auto& x : t.data) x = draw_value(src, special);
  return t;
}

}  // namespace flatcheck
