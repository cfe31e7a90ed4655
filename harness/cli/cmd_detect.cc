// The `detect` command: cases-to-detection of every fault over several seeds.
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

Json detect_fault(const FaultInfo& f, int seeds, int64_t budget, int jobs, Device device) {
  set_active_fault(f.fault);
  std::vector<int64_t> ctd(static_cast<size_t>(seeds), -1);
  std::vector<size_t> sizes(static_cast<size_t>(seeds), 0);
  std::vector<int> stage_ok(static_cast<size_t>(seeds), 0);
  std::atomic<int> next{0};
  auto work = [&] {
    for (int s; (s = next.fetch_add(1)) < seeds;) {
      CampaignOptions o;
      o.seed = static_cast<uint64_t>(s + 1);
      o.cases = budget;
      o.stop_at_first = true;
      o.out_dir = "";
      o.oracle.device = device;
      if (f.kind == FaultKind::kCrash || f.kind == FaultKind::kHang) {  // need worker processes
        o.isolate = true;
        o.timeout_s = f.kind == FaultKind::kHang ? 0.5 : 2;  // a hang costs the whole timeout
        o.batch = 16;
      }
      CampaignResult r = run_campaign(o);
      if (r.first_failing_case >= 0) {
        ctd[static_cast<size_t>(s)] = r.first_failing_case + 1;
        sizes[static_cast<size_t>(s)] = r.findings.front().minimized_nodes;
        stage_ok[static_cast<size_t>(s)] = r.findings.front().failure.stage == stage_name(f.stage);
      }
    }
  };
  std::vector<std::thread> ts;
  for (int j = 0; j < jobs; ++j) ts.emplace_back(work);
  for (auto& t : ts) t.join();
  std::vector<int64_t> found;
  std::vector<size_t> found_sizes;
  int ok = 0;
  for (int s = 0; s < seeds; ++s)
    if (ctd[static_cast<size_t>(s)] > 0) {
      found.push_back(ctd[static_cast<size_t>(s)]);
      found_sizes.push_back(sizes[static_cast<size_t>(s)]);
      ok += stage_ok[static_cast<size_t>(s)];
    }
  std::sort(found.begin(), found.end());
  std::sort(found_sizes.begin(), found_sizes.end());
  int64_t median = found.empty() ? -1 : found[found.size() / 2];
  int64_t worst = found.empty() ? -1 : found.back();
  int64_t med_size =
      found_sizes.empty() ? -1 : static_cast<int64_t>(found_sizes[found_sizes.size() / 2]);
  std::cout << std::setw(30) << f.name << std::setw(10)
            << (std::to_string(found.size()) + "/" + std::to_string(seeds)) << std::setw(10)
            << (median < 0 ? "-" : std::to_string(median)) << std::setw(10)
            << (worst < 0 ? "-" : std::to_string(worst)) << std::setw(12)
            << (med_size < 0 ? "-" : std::to_string(med_size)) << ok << "/" << found.size() << "\n";
  std::cout.flush();  // a row per fault as it ends, also into a pipe: a run takes minutes
  return Json{{"fault", std::string(f.name)},
              {"stage", std::string(stage_name(f.stage))},
              {"seeds", seeds},
              {"detected", found.size()},
              {"median_cases", median},
              {"max_cases", worst},
              {"median_repro_nodes", med_size},
              {"stage_matches", ok},
              {"cases_to_detection", ctd}};
}

int cmd_detect(int argc, char** argv) {
  Args a(argc, argv, 2, "detect");
  if (a.flag("--help")) {
    std::cout << command_help("detect");
    return 0;
  }
  int seeds = static_cast<int>(a.integer("--seeds", 5, 1, 10000));
  int64_t budget = a.integer("--cases", 20000, 1, int64_t{1} << 32);
  int jobs = static_cast<int>(a.integer("--jobs", 1, 1, 256));
  std::vector<FaultInfo> faults;
  for (const auto& f : all_faults())
    if (!a.has("--fault") || f.name == a.str("--fault")) faults.push_back(f);
  if (faults.empty()) throw UsageError("unknown fault '" + a.str("--fault") + "'");
  Json rows = Json::array();
  std::cout << std::left << std::setw(30) << "fault" << std::setw(10) << "detected" << std::setw(10)
            << "median" << std::setw(10) << "max" << std::setw(12) << "repro(med)"
            << "stage ok\n";
  Device device = device_option(a);
  bool cuda = device == Device::kCuda;
  for (const auto& f : faults) {
    const char* skip = nullptr;
    if (f.kind == FaultKind::kDeviceOnly && !cuda) skip = "needs --device cuda";
    // Crash and hang faults need forked workers; a CUDA context does not survive fork().
    if ((f.kind == FaultKind::kCrash || f.kind == FaultKind::kHang) && cuda)
      skip = "needs forked workers, which --device cuda cannot use";
    if (skip) {
      std::cout << std::setw(30) << f.name << skip << " (not run)\n";
      rows.push_back(Json{{"fault", std::string(f.name)},
                          {"stage", std::string(stage_name(f.stage))},
                          {"skipped", skip}});
      continue;
    }
    rows.push_back(detect_fault(f, seeds, budget, jobs, device));
  }
  set_active_fault(Fault::kNone);
  std::cout << "backend: " << backend_label(device_name(device)) << "\n";
  if (a.flag("--json"))
    std::cout << Json{{"budget", budget},
                      {"seeds", seeds},
                      {"backend", device_name(device)},
                      {"faults", rows}}
                     .dump()
              << "\n";
  return 0;
}

}  // namespace flatcheck::cli
