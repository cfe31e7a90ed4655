// rapidcheck generators for cases (header-only; only the tests link rapidcheck).
//
// The shrinkable value is a Recipe: the choice sequence the generator body consumes. rapidcheck
// shrinks it by dropping and lowering choices; any sequence builds a valid case (exhausted
// choices read as 0, the simplest answer), so shrinking never leaves the space of programs.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <vector>

#include "generators/generate.h"

namespace flatcheck {

struct Recipe {
  std::vector<uint32_t> choices;
};

inline Case build_recipe(const Recipe& r, const GenOptions& opts = {}) {
  ChoiceSource src(r.choices);
  return generate_case(src, opts);
}

inline std::ostream& operator<<(std::ostream& os, const Recipe& r) {
  Case c = build_recipe(r);
  return os << "recipe of " << r.choices.size() << " choices:\n" << save_case(c);
}

}  // namespace flatcheck

namespace rc {

template <>
struct Arbitrary<flatcheck::Recipe> {
  static Gen<flatcheck::Recipe> arbitrary() {
    // rapidcheck's own container shrinks by dropping elements and lowering them toward 0.
    return gen::map(
        gen::scale(4.0, gen::container<std::vector<uint32_t>>(gen::arbitrary<uint32_t>())),
        [](std::vector<uint32_t> c) { return flatcheck::Recipe{std::move(c)}; });
  }
};

}  // namespace rc
