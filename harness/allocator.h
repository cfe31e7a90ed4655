// Which allocator the running executable uses. The flatcheck executables (the CLI and the
// benchmarks) link mimalloc when CMake's FLATCHECK_ALLOCATOR resolves to it: a fuzz campaign
// allocates and frees many small objects per case, and glibc's malloc spends about a quarter
// of a campaign's time doing it. The libraries (flatcheck::core and the rest) never choose an
// allocator for the programs that link them.
#pragma once

#include <string>

namespace flatcheck {

// "mimalloc 2.0.9" or "system malloc". Checked, not assumed: a block from std::malloc must
// lie in mimalloc's heap, or the text says that mimalloc is linked but not in use.
std::string allocator_description();

}  // namespace flatcheck
