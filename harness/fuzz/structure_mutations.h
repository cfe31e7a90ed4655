// Structure-aware mutations of flatcheck documents, the way hostile documents change them
// (docs/fuzzing.md): alias a child module to an ancestor, itself or a sibling; duplicate a key
// in the text; blow up a number (0, -1, 2^24, 2^31, 2^40, past 64 bits); drop a field; graft a
// subtree from elsewhere; call a child twice more; and gentler ones that keep many documents
// valid: nudge a number to a small value, rewire a node's argument, retype one (a constant of
// another kind), swap an op. Shared by the
// libFuzzer custom mutator (structure_mutator.cc) and the loader-vs-pipeline property
// (tests/harness/fuzz).
#pragma once

#include <cstdint>
#include <string>

namespace flatcheck {

// Applies one to four mutations, drawn from `seed`, to the JSON document `text`; false when
// `text` is not JSON or no mutation applied (then `text` is unchanged). Never throws.
bool mutate_document(std::string& text, uint64_t seed);

}  // namespace flatcheck
