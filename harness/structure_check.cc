#include "harness/structure_check.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "core/base/names.h"
#include "harness/pass_rules.h"

namespace flatcheck {
namespace {

// The eager module at a dotted path, walked here (not by Module::submodule).
const Module* eager_module(const Module& e, const std::string& fqn) {
  size_t dot = fqn.find('.');
  auto it = e.children.find(fqn.substr(0, dot));
  if (it == e.children.end()) return nullptr;
  return dot == std::string::npos ? it->second.get()
                                  : eager_module(*it->second, fqn.substr(dot + 1));
}

using ByFqn = std::map<std::string, std::vector<const Module*>>;

std::optional<StructureBreach> walk(const Module& eager, const Module& m, const std::string& fqn,
                                    ByFqn& by_fqn) {
  for (const auto& [name, child] : m.children) {
    std::string base = name.substr(0, name.find('@'));
    if (base.size() != name.size() && !is_variant_name(name))
      return StructureBreach{"structure", "child '" + name + "' is not a variant name"};
    std::string cfqn = join_fqn(fqn, base);
    const Module* e = eager_module(eager, cfqn);
    if (!e)
      return StructureBreach{"structure",
                             "child '" + cfqn + "' is not a module of the eager program"};
    if (child->type != e->type)
      return StructureBreach{"structure", "child '" + join_fqn(fqn, name) + "' has type '" +
                                              child->type + "'; the eager module is a '" + e->type +
                                              "'"};
    auto& v = by_fqn[cfqn];
    if (std::find(v.begin(), v.end(), child.get()) == v.end()) v.push_back(child.get());
    if (auto b = walk(eager, *child, cfqn, by_fqn)) return b;
  }
  return std::nullopt;
}

template <class Map>
std::optional<StructureBreach> shared(const Map& a, const Map& b, const std::string& fqn,
                                      const char* kind) {
  for (const auto& [k, t] : a)
    if (auto it = b.find(k); it != b.end() && it->second != t)
      return StructureBreach{"shared-state", "variants of '" + fqn + "' hold separate copies of " +
                                                 kind + " '" + k + "'"};
  return std::nullopt;
}

}  // namespace

std::optional<StructureBreach> unflatten_structure_breach(
    const Module& eager, const Module& unflattened, const std::map<std::string, int>& calls_per_fqn,
    int* specialized_fqns) {
  if (unflattened.type != eager.type)
    return StructureBreach{"structure", "the root has type '" + unflattened.type +
                                            "'; the eager root is a '" + eager.type + "'"};
  ByFqn by_fqn;
  if (auto b = walk(eager, unflattened, "", by_fqn)) return b;
  for (const auto& [fqn, mods] : by_fqn) {
    int calls = 0;
    if (auto it = calls_per_fqn.find(fqn); it != calls_per_fqn.end()) calls = it->second;
    // Stubs (modules no call reached) are not variants; count modules with real graphs.
    std::vector<const Module*> variants;
    for (const Module* m : mods)
      if (m->graph.size() > 1 || !m->graph.placeholders().empty()) variants.push_back(m);
    if (static_cast<int>(variants.size()) > std::max(calls, 1))
      return StructureBreach{"structure", "'" + fqn + "' has " + std::to_string(variants.size()) +
                                              " variants for " + std::to_string(calls) + " calls"};
    if (variants.size() >= 2 && specialized_fqns) ++*specialized_fqns;
    for (size_t i = 0; i < variants.size(); ++i)
      for (size_t j = i + 1; j < variants.size(); ++j)
        if (same_structure(variants[i]->graph, variants[j]->graph))
          return StructureBreach{"structure", "two variants of '" + fqn + "' have equal graphs"};
    for (const Module* m : mods)
      for (const Module* other : mods) {
        if (auto b = shared(m->params, other->params, fqn, "parameter")) return b;
        if (auto b = shared(m->buffers, other->buffers, fqn, "buffer")) return b;
      }
  }
  return std::nullopt;
}

}  // namespace flatcheck
