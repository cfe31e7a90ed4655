#include "harness/allocator.h"

#include <cstdlib>

#ifdef FLATCHECK_MIMALLOC
#include <mimalloc.h>
#endif

namespace flatcheck {

std::string allocator_description() {
#ifdef FLATCHECK_MIMALLOC
  int v = mi_version();  // 209 is 2.0.9
  std::string text = "mimalloc " + std::to_string(v / 100) + "." + std::to_string(v / 10 % 10) +
                     "." + std::to_string(v % 10);
  // The volatile store keeps the compiler from eliding the malloc/free pair.
  void* volatile block = std::malloc(64);
  bool in_use = mi_is_in_heap_region(block);
  std::free(block);
  if (!in_use) text += " (linked, but std::malloc does not use it)";
  return text;
#else
  return "system malloc";
#endif
}

}  // namespace flatcheck
