// The generator's entry points (generators/generate.h) over the builder (generators/builder.h).
#include "generators/generate.h"

#include "core/base/faults.h"
#include "generators/builder.h"

namespace flatcheck {

Case build_case(Source& src, const SwarmConfig& swarm, const GenOptions& opts) {
  (void)opts;  // bounds were applied when the swarm was drawn
  gen::Builder b(src, swarm);
  b.set_weights();
  return b.build();
}

Case generate_case(Source& src, const GenOptions& opts) {
  // The generator is the harness's side: an injected fault must not bend the cases it builds.
  ScopedFaultSuppression no_faults;
  SwarmConfig s = draw_swarm(src, opts);
  return build_case(src, s, opts);
}

Case generate_case_for_seed(uint64_t seed, const GenOptions& opts) {
  Rng rng(seed);
  Case c = generate_case(rng, opts);
  c.seed = seed;
  return c;
}

}  // namespace flatcheck
