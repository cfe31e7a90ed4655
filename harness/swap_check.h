// The swap property (docs/faults.md): unflatten's variant API driven by every case. A child
// module is swapped, and separately a parameter or buffer set, in the eager module (one
// attribute, as a user edits an nn.Module) and through the variant API in the unflattened one
// (`swap_module` / `set_attr_all`, every variant `n`, `n@1`, `a@1.b@2` of the FQN); both are run
// `calls` times and must give the same outputs and final state, bit for bit.
//
// The expectation comes from the eager module alone: the replacement is a copy of the eager
// child with its parameters moved (so a variant the API misses still runs the old weights and
// differs), and the new attribute value is the old one moved.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/ir.h"
#include "core/runtime/backend.h"
#include "generators/case.h"

namespace flatcheck {

struct SwapBreach {
  std::string what;     // "swap_module 'a.b'" or "set_attr_all 'a.b' 'w'"
  std::string message;  // what differed, for people
};

// What a swap check did (counted in the reach table) and what it found.
struct SwapResult {
  std::optional<SwapBreach> breach;
  int module_variants = 0;  // variants of the FQN whose module was swapped (0: no swap)
  int attr_variants = 0;    // variants of the FQN whose attribute was set (0: none set)
};

// Which FQNs a module swap may target: modules the eager run calls, under one path only, whose
// placeholders are all tensors (a static argument is a constant after export) and whose every
// called variant in the unflattened tree kept the eager signature (unflatten drops inputs and
// outputs no call uses; a swap needs the signature preserved, as torch's does). Eager paths.
std::vector<std::string> swappable_fqns(const Module& eager, const Module& unflattened);

// Swaps a child and sets an attribute (the one of each `pick` selects; without it, every
// candidate up to eight of each, as replay and shrink do, so a finding does not move to another
// candidate as the case shrinks) in `eager` and in a copy of
// `unflattened` (neither is changed), and compares the runs. No breach when they agree or the
// case has nothing to swap. Throws InputError when the variant API rejects a valid request
// (no variant found for an FQN the eager module calls).
SwapResult check_swaps(const Case& c, const Module& unflattened, Backend& backend,
                       std::optional<uint64_t> pick);

}  // namespace flatcheck
