// A user's own flatten: inlines a partitioned program's engines and fallbacks into one graph.
// Two versions of the fallback inliner: one wires a fallback's placeholders to the call's
// arguments by position (correct); the other looks them up by name in the parent graph, the
// Torch-TensorRT bug flatcheck was built around.
#pragma once

#include "core/ir/program.h"

namespace own {

enum class Wiring { kByPosition, kByName };

flatcheck::Program own_flatten(const flatcheck::Program& partitioned, Wiring wiring);

}  // namespace own
