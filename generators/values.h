// Values the generator draws for tensors and scalars: plain ones, and the special ones (-0.0,
// infinities, NaN payloads, subnormals, extremes) that catch format and kernel bugs.
#pragma once

#include "core/base/tensor.h"
#include "generators/source.h"

namespace flatcheck {

float special_value(Source& src);
float draw_value(Source& src, bool special);
Tensor draw_tensor(Source& src, const Shape& shape, bool special);

}  // namespace flatcheck
