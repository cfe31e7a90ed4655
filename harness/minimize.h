// The graph-aware minimizer: reduces a failing case to a fixpoint, keeping a step only when the
// failure signature (property, stage, op) is unchanged. Big cuts first (module calls, whole
// children), then single nodes, outputs, state, inputs and configuration.
#pragma once

#include <functional>
#include <string>

#include "generators/case.h"
#include "harness/oracle.h"

namespace flatcheck {

struct MinimizeOptions {
  int max_checks = 3000;     // oracle runs at most
  double time_budget_s = 0;  // stop after this many seconds with the smallest case so far (0: none)
  OracleOptions oracle;
  // How a candidate is checked (default: check_case in this process; isolated campaigns pass
  // a forking checker so candidates that crash or hang cannot take the minimizer down).
  std::function<OracleResult(const Case&)> check;
  // Called after each candidate check with the current (smallest so far) size, for progress
  // displays: a check against an external predicate can take minutes.
  std::function<void(size_t nodes, int checks)> progress;
};

struct MinimizeResult {
  Case reduced;
  Failure failure;               // the failure the reduced case shows
  int checks = 0;                // oracle runs spent
  int steps = 0;                 // reductions kept
  bool stopped_early = false;    // max_checks or time_budget_s ran out before a fixpoint
  std::vector<std::string> log;  // names of the kept steps, in order
};

// The oracle options for checking shrink candidates of `failure`: `o` with the swap check only
// when the failure is a swap finding. It is the costliest check per case (every candidate swap
// and attribute set, each run `calls` times on two modules); a candidate that fails it keeps
// no other finding, so leaving it out changes which candidates show the target only by letting
// more of them through.
OracleOptions shrink_oracle(OracleOptions o, const Failure& failure);

// `c` must fail with `failure` (its signature is the target).
MinimizeResult minimize(const Case& c, const Failure& failure, const MinimizeOptions& opts = {});

}  // namespace flatcheck
