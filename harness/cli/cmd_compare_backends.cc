// The `compare-backends` command: every kernel launch on the CPU and on a device, compared under
// ULP bounds.
#include "harness/cli/cli.h"

#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <atomic>
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

std::string float_text(float x) {
  std::ostringstream os;
  os << std::setprecision(9) << x << " (0x" << std::hex << std::setw(8) << std::setfill('0')
     << float_bits(x) << ")";
  return os.str();
}

int cmd_compare_backends(int argc, char** argv) {
  Args a(argc, argv, 2, "compare-backends");
  if (a.flag("--help")) {
    std::cout << command_help("compare-backends");
    return 0;
  }
  if (!a.positional().empty()) throw UsageError("compare-backends takes no positional arguments");
  Device device = device_option(a, "cuda");
  int64_t cases = a.integer("--cases", 2000, 1, int64_t{1} << 32);
  uint64_t seed = a.unsigned_int("--seed", 1);
  GenOptions g;
  g.max_nodes = static_cast<int>(a.integer("--max-nodes", 20, 2, 500));
  Backend& other = backend_for(device);
  std::map<std::string, int64_t> per_op, max_ulps;
  std::set<std::string> skipped;
  int64_t kernels = 0, ran = 0, errors = 0;
  std::optional<std::pair<int64_t, BackendDiffResult>> bad;
  for (int64_t i = 0; i < cases && !bad; ++i) {
    Case c = generate_case_for_seed(case_seed(seed, i), g);
    BackendDiffResult r = diff_backends(c, cpu_backend(), other, cuda_ulp_bound);
    ++ran;
    errors += !r.error.empty();
    kernels += r.kernels;
    for (const auto& [op, n] : r.per_op) per_op[op] += n;
    for (const auto& [op, n] : r.max_ulps) max_ulps[op] = std::max(max_ulps[op], n);
    skipped.insert(r.skipped_ops.begin(), r.skipped_ops.end());
    if (r.mismatch) bad.emplace(i, std::move(r));
  }
  std::string other_name = backend_label(std::string(other.name()));
  std::cout << "flatcheck compare-backends: cpu (reference) vs " << other_name << ": " << ran
            << " cases, " << kernels << " kernel launches compared, seed " << seed << "\n";
  std::cout << std::left << std::setw(14) << "  op" << std::setw(12) << "launches" << std::setw(10)
            << "max ulp"
            << "bound\n";
  for (const auto& [op, n] : per_op) {
    auto code = op_by_name(op);
    std::cout << "  " << std::setw(12) << op << std::setw(12) << n << std::setw(10) << max_ulps[op]
              << (code ? cuda_ulp_bound(*code) : 0) << "\n";
  }
  for (const auto& op : skipped)
    std::cout << "  skipped: " << op << " (" << other_name << " has no kernel for it)\n";
  if (errors) std::cout << "  " << errors << " cases did not run to the end on the reference\n";
  if (bad) {
    const KernelMismatch& m = *bad->second.mismatch;
    std::cout << "result: MISMATCH in case " << bad->first << " (seed "
              << case_seed(seed, bad->first) << "), " << m.program << " program, node "
              << (m.origin.empty() ? "?" : m.origin) << " (" << m.op << "), output " << m.output
              << " element " << m.element << ": cpu " << float_text(m.want) << ", " << other_name
              << " " << float_text(m.got) << ", "
              << (m.ulps == INT64_MAX ? std::string("NaN vs number")
                                      : std::to_string(m.ulps) + " ulp")
              << " > bound " << m.bound << "\n";
  } else {
    std::cout << "result: every kernel within its bound\n";
  }
  if (a.flag("--json")) {
    Json j{{"reference", "cpu"},     {"backend", std::string(other.name())},
           {"cases", ran},           {"kernels", kernels},
           {"per_op", per_op},       {"max_ulps", max_ulps},
           {"skipped_ops", skipped}, {"mismatch", nullptr}};
    if (bad) {
      const KernelMismatch& m = *bad->second.mismatch;
      j["mismatch"] = Json{{"case", bad->first}, {"program", m.program}, {"node", m.origin},
                           {"op", m.op},         {"output", m.output},   {"element", m.element},
                           {"cpu", m.want},      {"other", m.got},       {"bound", m.bound}};
    }
    std::cout << j.dump() << "\n";
  }
  return bad ? 1 : 0;
}

}  // namespace flatcheck::cli
