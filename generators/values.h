// Values the generator draws for tensors and scalars: plain ones, and the special ones (-0.0,
// infinities, NaN payloads, subnormals, extremes) that catch format and kernel bugs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/base/tensor.h"
#include "generators/generate.h"
#include "generators/source.h"

namespace flatcheck {

float special_value(Source& src);
float draw_value(Source& src, bool special);
Tensor draw_tensor(Source& src, const Shape& shape, bool special);

// A node name under a naming policy: the natural one, or one that collides on purpose with what
// the passes mint (getitems, op names, p_*/b_* placeholders, _run_on_* children) or with a
// name of the graph built so far (`siblings`).
std::string name_hint(Source& src, NamingPolicy policy, std::string_view natural,
                      const std::vector<std::string>& siblings);
// A Python builtin that torch.fx never uses as a node name (sum, input) or a suffixed form of
// one (sum_1): for node and child names under SwarmConfig::reserved_names.
std::string reserved_name_hint(Source& src);
// The name of a module's `index`-th child under a child-naming policy (before de-duplication).
std::string child_name_hint(Source& src, ChildNaming naming, size_t index);
// The name of a module's parameter when it has `count` already: w, w_1, ...; under mangled child
// naming often one that mangles like a child's (a_w is a.w's, a_b_w both a.b_w's and a_b.w's).
std::string param_name_hint(Source& src, ChildNaming naming, size_t count);
// A buffer's name: "buf", or under mangled naming one that may mangle like a child's buf
// (a_buf is a.buf's), under cased naming one alike once lower-cased.
std::string buffer_name_hint(Source& src, ChildNaming naming);

}  // namespace flatcheck
