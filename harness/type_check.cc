// The types property (harness/type_check.h).
#include "harness/type_check.h"

#include <sstream>

#include "core/base/check.h"
#include "core/ir/analysis.h"
#include "generators/types.h"

namespace flatcheck {

std::optional<TypeBreach> type_breach(const Module& eager) {
  auto copy = clone_module(eager, /*share_state=*/true);
  // The derivation keys nodes by address: derive on the copy the core types.
  auto want = derive_types(*copy);
  try {
    infer_types(*copy);
  } catch (const InputError& e) {
    return TypeBreach{"-",
                      std::string("the core's type inference rejects a program the generator's "
                                  "derivation types: ") +
                          e.what()};
  }
  std::optional<TypeBreach> out;
  for_each_module(*copy, [&](const std::string& path, Module& m) {
    for (const Node* n = m.graph.first(); n && !out; n = n->next) {
      auto it = want.find(n);
      if (it == want.end() || (n->meta.val && *n->meta.val == it->second)) continue;
      std::ostringstream os;
      os << "node %" << n->name << " in module '" << (path.empty() ? "<root>" : path)
         << "': the core infers " << (n->meta.val ? *n->meta.val : ValueType{})
         << ", the generator's derivation " << it->second;
      out = TypeBreach{n->op == NodeOp::kCallFunction ? n->target : "-", os.str()};
    }
  });
  return out;
}

}  // namespace flatcheck
