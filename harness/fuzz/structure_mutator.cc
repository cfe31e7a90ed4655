// libFuzzer custom mutator for flatcheck documents (docs/fuzzing.md): the structure-aware
// mutations of harness/fuzz/structure_mutations.h, then the loader target (loader_fuzzer.cc,
// linked beside it as `structure_fuzzer`) judges the result. Inputs that are not JSON, and one
// mutation in eight, go to libFuzzer's byte mutator.
#include <cstdint>
#include <cstring>
#include <string>

#include "harness/fuzz/structure_mutations.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  std::string text(reinterpret_cast<const char*>(data), size);
  if ((seed & 7) == 0 || !flatcheck::mutate_document(text, seed) || text.size() > max_size)
    return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}
