// Graphviz output for `flatcheck show --format dot`.
#pragma once

#include <ostream>

#include "core/ir/ir.h"

namespace flatcheck {

// Writes a module tree as a dot digraph: one cluster per module; `_run_on_acc_*` partitions
// and execute_engine nodes green, `_run_on_gpu_*` fallbacks orange, get_attr engines boxed.
void write_dot(std::ostream& os, const Module& m, const std::string& title);

}  // namespace flatcheck
