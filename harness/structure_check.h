// The unflattened module tree against the eager one, from the eager tree and the eager run
// alone: the root and every child, a module of the eager program (or a variant `name@k` of
// one), has the eager module's type; no FQN has more variants than the eager run made calls
// of it; no two variants of one FQN have equal graphs; variants of one FQN share their
// parameters and buffers.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/ir/ir.h"

namespace flatcheck {

struct StructureBreach {
  std::string property;  // "structure" or "shared-state"
  std::string message;
};

// `calls_per_fqn`: the eager run's calls of each FQN. Adds to *specialized_fqns (when given) the
// FQNs unflattened into two or more variants.
std::optional<StructureBreach> unflatten_structure_breach(
    const Module& eager, const Module& unflattened, const std::map<std::string, int>& calls_per_fqn,
    int* specialized_fqns = nullptr);

}  // namespace flatcheck
