// The `shrink` command: minimize a failing case against the oracle or an external predicate.
#include "harness/cli/cli.h"

#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/passes/passes.h"
#include "core/runtime/cuda/cuda_backend.h"
#include "core/runtime/cuda/device.h"
#include "core/serialize/serialize.h"
#include "generators/examples.h"
#include "generators/generate.h"
#include "harness/backend_diff.h"
#include "harness/campaign.h"
#include "harness/dot.h"
#include "harness/isolate.h"
#include "harness/minimize.h"
#include "harness/oracle.h"
#include "harness/predicate.h"
#include "harness/torch_emit.h"

namespace flatcheck::cli {

int cmd_shrink(int argc, char** argv) {
  Args a(argc, argv, 2, "shrink");
  if (a.flag("--help")) {
    std::cout << command_help("shrink");
    return 0;
  }
  if (a.positional().size() != 1) throw UsageError("shrink needs exactly one CASE file");
  std::string out = a.has("-o") ? a.str("-o") : a.str("--out");
  if (out.empty()) throw UsageError("shrink needs -o OUT");
  check_output_file(out, "-o");
  if (a.has("--timeout") && !a.has("--predicate"))
    throw UsageError("--timeout goes with --predicate");
  apply_inject(a);
  Case c = load_case_file(a.positional()[0]);
  MinimizeOptions mo;
  mo.max_checks = static_cast<int>(a.integer("--max-checks", 3000, 1, 1000000));
  mo.time_budget_s = a.number("--time-budget", 0, 0.001, 1e7);
  ExternalPredicate pred;
  if (a.has("--predicate")) {
    pred.command = a.str("--predicate");
    if (pred.command.empty()) throw UsageError("--predicate needs a command");
    pred.timeout_s = a.number("--timeout", 60, 0.01, 86400);
    pred.dir =
        (std::filesystem::temp_directory_path() / ("flatcheck-shrink-" + std::to_string(getpid())))
            .string();
    std::filesystem::create_directories(pred.dir);
    mo.check = [&pred](const Case& x) { return check_with_predicate(x, pred); };
  }
  OracleResult r = mo.check ? mo.check(c) : check_case(c);
  if (!r.failure)
    throw InputError(a.positional()[0] +
                     (pred.command.empty()
                          ? ": the case passes; there is nothing to shrink"
                          : ": the predicate does not hold for the case (it did not exit 0)"));
  auto start = std::chrono::steady_clock::now();
  // On a terminal one line rewritten after each check; elsewhere (a log, a pipe) a line every
  // 10 s, as fuzz does: a shrink against a slow predicate can run for hours.
  bool quiet = a.flag("--quiet"), tty = stderr_tty() && !quiet;
  double next_line = 10;
  if (!quiet)
    mo.progress = [start, tty, &next_line](size_t nodes, int checks) {
      std::chrono::duration<double> t = std::chrono::steady_clock::now() - start;
      if (!tty && t.count() < next_line) return;
      next_line = t.count() + 10;
      std::fprintf(stderr,
                   tty ? "\r  %zu nodes after %d checks, %.1f s   "
                       : "  %zu nodes after %d checks, %.1f s\n",
                   nodes, checks, t.count());
      std::fflush(stderr);
    };
  size_t before = case_size(c);
  MinimizeResult m = minimize(c, *r.failure, mo);
  if (tty) std::fprintf(stderr, "\r%50s\r", "");
  if (!pred.dir.empty()) std::filesystem::remove_all(pred.dir);
  if (pred.command.empty())
    m.reduced.expect =
        Expectation{m.failure.property, m.failure.stage, m.failure.op, m.failure.module};
  m.reduced.note =
      "minimized by flatcheck shrink from " + a.positional()[0] + ": " + m.failure.message;
  write_file_atomic(out, save_case(m.reduced));
  std::cout << "shrink: " << m.failure.signature() << ": " << before << " -> "
            << case_size(m.reduced) << " nodes in " << m.checks << " checks (" << m.steps
            << " steps kept)"
            << (m.stopped_early ? "; stopped by --max-checks or --time-budget, not a fixpoint" : "")
            << "\n  wrote " << out << "\n\n"
            << "signature: " << m.failure.signature() << "\n"
            << m.failure.message << "\n"
            << *m.reduced.module;
  return 1;
}

}  // namespace flatcheck::cli
