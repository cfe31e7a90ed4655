// An external interestingness test for the minimizer, as C-Reduce's: a candidate case is
// written to a file and a shell command judges it; exit status 0 means "still interesting"
// (the failure is still there). Any system a user can drive from a command line (real
// torch.export, their own pass) becomes something flatcheck can shrink against.
#pragma once

#include <string>

#include "harness/oracle.h"

namespace flatcheck {

struct ExternalPredicate {
  // Run with /bin/sh -c. "{}" is replaced by the candidate's path; without "{}" the path is
  // appended as the last argument. FLATCHECK_CASE holds the path too.
  std::string command;
  double timeout_s = 60;  // a run past this is killed and judged not interesting
  std::string dir;        // where candidates are written (created when missing)
};

// Writes `c` to `p.dir/candidate.json` and runs the command. Interesting: a failure
// `predicate:external:-` whose message quotes the command; otherwise no failure. Throws
// InputError when the candidate cannot be written or the shell cannot be started.
OracleResult check_with_predicate(const Case& c, const ExternalPredicate& p);

}  // namespace flatcheck
