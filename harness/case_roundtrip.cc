#include "harness/case_roundtrip.h"

#include <algorithm>

#include "core/ir/fingerprint.h"
#include "core/serialize/serialize.h"

namespace flatcheck {

size_t first_differing_line(std::string_view a, std::string_view b) {
  auto at = std::mismatch(a.begin(), a.end(), b.begin(), b.end()).first;
  return static_cast<size_t>(std::count(a.begin(), at, '\n')) + 1;
}

std::optional<std::string> case_roundtrip_breach(const Case& c, const CaseSaver& save) {
  auto write = [&](const Case& x) { return save ? save(x) : save_case(x); };
  const std::string saved = write(c);
  Case back = load_case(saved, hard_load_limits());
  const std::string again = write(back);
  if (again != saved)
    return "the case document: save(load(s)) differs from s at line " +
           std::to_string(first_differing_line(saved, again));
  if (fingerprint_module(*back.module, false) != fingerprint_module(*c.module, false))
    return "the case document loads to another module tree than the one saved (structure, "
           "state or sharing)";
  if (!(back.config == c.config)) return std::string("the case document loads another config");
  if (back.inputs.size() != c.inputs.size())
    return "the case document loads " + std::to_string(back.inputs.size()) + " inputs, not " +
           std::to_string(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (!back.inputs[i].bit_equal(c.inputs[i]))
      return "the case document loads input " + std::to_string(i) + " with other values";
  return std::nullopt;
}

}  // namespace flatcheck
