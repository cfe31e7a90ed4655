// The fixed Python text of an emit-torch program (harness/torch_emit.h): the prelude (imports,
// tensor and float decoding, the branch op, the no-op recorder `_R` the bridge replaces) and the
// `__main__` that runs the eager program against flatcheck's results bit for bit; the pool of
// names --hostile-names draws forward parameters' names from.
#pragma once

#include <string>
#include <vector>

#include "core/base/tensor.h"
#include "core/ir/ir.h"

namespace flatcheck {

// The sorted pool module `m` (below `root`) draws its parameters' names from under emit-torch
// --hostile-names: names torch makes for nodes and placeholders, Python builtins, the globals
// torch.fx's code imports, "p_"/"b_" + the case's parameter and buffer FQNs (torch.export's
// placeholder names), the case's placeholders' own names and the names of `m`'s own nodes that
// are not placeholders.
std::vector<std::string> hostile_pool(const Module& root, const Module& m);

// `s` as a Python string literal (double quotes; quotes, backslashes and control bytes
// escaped).
std::string py_str(const std::string& s);

// `t` as Python text: `_t("<base64 of its float32 bits, little-endian>", [shape])`, bit-exact.
std::string tensor_expr(const Tensor& t);

extern const char* const kTorchPrelude;
extern const char* const kTorchMain;

}  // namespace flatcheck
