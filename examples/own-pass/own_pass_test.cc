// The property: for every generated case, the pipeline with our flatten in place of
// flatcheck's computes what the eager reference computes, and our flatten keeps flatten's
// rules (no call_module left, names unique, its input untouched). On a failure the case is
// minimized and printed with its signature, ready to be saved as a regression case.
#include <gtest/gtest.h>

#include <sstream>

#include "generators/generate.h"
#include "harness/campaign.h"
#include "harness/minimize.h"
#include "harness/oracle.h"
#include "own_flatten.h"

namespace {
using namespace flatcheck;

constexpr int kCases = 300;  // cases per run; the seeds are fixed, so a run is reproducible

void check_own_flatten(own::Wiring wiring) {
  OracleOptions opts;
  opts.stages[Stage::kFlattened] = program_pass(
      Stage::kFlattened, [wiring](const Program& in) { return own::own_flatten(in, wiring); });
  for (int64_t i = 0; i < kCases; ++i) {
    Case c = generate_case_for_seed(case_seed(/*campaign seed=*/1, i));
    OracleResult r = check_case(c, opts);
    if (!r.failure) continue;
    MinimizeOptions mo;
    mo.oracle = opts;
    MinimizeResult m = minimize(c, *r.failure, mo);
    std::ostringstream repro;
    repro << *m.reduced.module;
    FAIL() << "case " << i << " fails: " << m.failure.signature() << "\n"
           << m.failure.message << "\nminimized in " << m.checks << " checks to:\n"
           << repro.str() << "\nas a case file:\n"
           << save_case(m.reduced);
  }
}

TEST(OwnFlattenProperty, ByPositionMatchesTheEagerReference) {
  check_own_flatten(own::Wiring::kByPosition);
}

TEST(OwnFlattenProperty, ByNameMatchesTheEagerReference) {
  check_own_flatten(own::Wiring::kByName);
}

}  // namespace
