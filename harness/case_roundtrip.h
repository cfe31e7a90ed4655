// The case document's own round trip. The paths save and reload programs, whose state is
// lifted out of the module tree; a case is the one document that holds a module tree with its
// parameters and buffers (and tensors shared between paths), and it is what a campaign writes
// for every finding and what replay reads. So every case is saved, loaded and saved again: the
// second text must be the first, and the loaded case must be the generated one, judged from
// memory (the module's fingerprint, the inputs' bits), not by the writer that saved it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "generators/case.h"

namespace flatcheck {

// The line (from 1) where two texts first differ; one past the shorter's lines when one is a
// prefix of the other.
size_t first_differing_line(std::string_view a, std::string_view b);

// What differs, or nullopt. The module trees are compared by their fingerprints without node
// types (a case file keeps placeholder types only, and the loader types the rest). A loader that
// refuses the saved case throws its InputError.
// `save` is the writer under check (save_case; tests pass a wrong one).
using CaseSaver = std::function<std::string(const Case&)>;
std::optional<std::string> case_roundtrip_breach(const Case& c, const CaseSaver& save = nullptr);

}  // namespace flatcheck
