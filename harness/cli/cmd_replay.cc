// The `replay` command: check case files, one forked process each.
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

int cmd_replay(int argc, char** argv) {
  Args a(argc, argv, 2, "replay");
  if (a.flag("--help")) {
    std::cout << command_help("replay");
    return 0;
  }
  bool isolate = !a.flag("--no-isolate");
  bool expect = a.flag("--expect");
  double timeout = a.number("--timeout", 10, 0.01, 86400);
  if (a.positional().empty()) throw UsageError("replay needs at least one file or folder");
  apply_inject(a);
  OracleOptions oo;
  oo.device = device_option(a);
  if (oo.device == Device::kCuda) isolate = false;  // CUDA contexts do not survive fork()
  check_ci_report_paths(a);
  auto files = case_files(a.positional());
  if (files.empty()) throw InputError("no case files (*.json) found");
  int failed = 0;
  Json results = Json::array();
  std::vector<ReportItem> items;
  auto start = std::chrono::steady_clock::now();
  std::string backend;
  for (const auto& f : files) {
    Case c = load_case_file(f);
    if (expect && !c.expect)
      throw InputError(f + ": --expect needs an 'expect' signature in the case");
    OracleResult r = isolate ? check_case_isolated(c, oo, timeout) : check_case(c, oo);
    if (!r.backend.empty()) backend = r.backend;
    std::string got = r.failure ? r.failure->signature() : "";
    if (expect && got == c.expect->signature()) {
      std::cout << "PASS " << printable(f) << "\n     fails as expected: " << got << "\n";
    } else if (expect) {
      ++failed;
      std::cout << "FAIL " << printable(f) << "\n     expected " << c.expect->signature()
                << ", got " << (got.empty() ? "no failure" : got + ": " + r.failure->message)
                << "\n";
    } else if (r.failure) {
      ++failed;
      std::cout << "FAIL " << printable(f) << "\n     " << got << ": " << r.failure->message
                << "\n";
    } else {
      std::cout << "PASS " << printable(f) << "\n";
    }
    results.push_back(Json{
        {"path", f}, {"ok", !r.failure}, {"signature", r.failure ? r.failure->signature() : ""}});
    bool case_failed = expect ? got != c.expect->signature() : r.failure.has_value();
    items.push_back({f, case_failed ? (got.empty() ? "no-failure" : got) : "",
                     case_failed
                         ? (got.empty() ? "expected " + c.expect->signature() : r.failure->message)
                         : "",
                     f, ""});
  }
  std::cout << "backend: " << backend_label(backend) << "\n";
  std::cout << (files.size() - static_cast<size_t>(failed)) << " passed, " << failed << " failed\n";
  if (a.flag("--json"))
    std::cout << Json{{"cases", files.size()},
                      {"failures", failed},
                      {"backend", backend},
                      {"results", results}}
                     .dump()
              << "\n";
  std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  write_ci_reports(a, "flatcheck replay", items, took.count(), argc, argv);
  return failed ? 1 : 0;
}

}  // namespace flatcheck::cli
