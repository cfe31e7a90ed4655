// Analyses the passes share: type (shape) propagation and dead-code elimination.
#pragma once

#include "core/ir/ir.h"

namespace flatcheck {

// Removes pure nodes and get_attr nodes without users, last first. Placeholders, outputs and
// impure nodes (copy_) stay. Returns the number removed.
int eliminate_dead_code(Graph& g);

// The graph's value types, filled into meta.val for every node of `m` and its children (shape
// propagation). Throws InputError for a node whose arguments do not type.
void infer_types(Module& m);

}  // namespace flatcheck
