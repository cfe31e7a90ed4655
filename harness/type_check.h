// The types property: the core's type inference (core/ir/analysis.h, which every pass and the
// loader run) against the generator's own derivation (generators/types.h), node by node, on
// every case. A wrong inference no longer breaks generation; it is a finding.
#pragma once

#include <optional>
#include <string>

#include "core/ir/ir.h"

namespace flatcheck {

struct TypeBreach {
  std::string op;       // the first differing node's op ("-" for a call or attribute)
  std::string message;  // which node, and both types
};

// Runs the core's inference on a copy of `eager` and compares every node the derivation types.
// nullopt when they agree. An inference that rejects the program is a breach too.
std::optional<TypeBreach> type_breach(const Module& eager);

}  // namespace flatcheck
