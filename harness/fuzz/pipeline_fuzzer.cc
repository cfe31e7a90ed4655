// libFuzzer target: bytes -> case (the structure-aware generator reads its choices from the
// bytes) -> oracle. A failure aborts with its signature and the case, so libFuzzer keeps the
// input. FLATCHECK_INJECT=FAULT switches a fault on. No main here (STYLE.md, habit 15): the
// same object links into libFuzzer and into fuzz_replay.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "generators/generate.h"
#include "harness/oracle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  flatcheck::ByteSource src(data, size);
  flatcheck::GenOptions opts;
  opts.max_nodes = 24;
  flatcheck::Case c = flatcheck::generate_case(src, opts);
  flatcheck::OracleResult r = flatcheck::check_case(c);
  if (r.failure) {
    std::fprintf(stderr, "flatcheck: %s\n%s\n--- case ---\n%s", r.failure->signature().c_str(),
                 r.failure->message.c_str(), flatcheck::save_case(c).c_str());
    std::abort();
  }
  return 0;
}
