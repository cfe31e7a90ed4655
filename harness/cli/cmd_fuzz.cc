// The `fuzz` command: the generator-driven campaign and its summary, --json, --sarif and --junit.
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

// Cases with each shape of harness/reach.def, by name.
Json reach_json(const Coverage& c) {
  Json j = Json::object();
  for (int i = 0; i < kNumReach; ++i)
    j[std::string(reach_name(static_cast<Reach>(i)))] = c.reach[static_cast<size_t>(i)];
  return j;
}

Json coverage_json(const Coverage& c) {
  return Json{{"nodes", c.nodes},
              {"module_calls", c.calls},
              {"flat_nodes", c.flat_nodes},
              {"acc_partitions", c.acc_partitions},
              {"fallback_partitions", c.fallback_partitions},
              {"renamed_nodes", c.renamed_nodes},
              {"specialized_fqns", c.specialized_fqns},
              {"buffer_mutations", c.buffer_mutations},
              {"reach", reach_json(c)},
              {"paths_checked", c.paths},
              {"case_roundtrips", c.case_roundtrips},
              {"ops", c.ops}};
}

// "exported, partitioned, ...": the paths of the pipeline table.
std::string path_names() {
  std::string out;
  for (Stage s : path_stages()) out += (out.empty() ? "" : ", ") + std::string(stage_name(s));
  return out;
}

void print_reach(const Coverage& c, int64_t cases) {
  std::cout << "reach (cases with each shape, docs/reach.md):\n";
  for (int i = 0; i < kNumReach; ++i) {
    int n = c.reach[static_cast<size_t>(i)];
    std::string name(reach_name(static_cast<Reach>(i)));
    std::cout << "  " << name << std::string(name.size() < 28 ? 28 - name.size() : 1, ' ') << n
              << " (" << fmt(cases ? 100.0 * n / static_cast<double>(cases) : 0, 1) << "%)\n";
  }
}

void print_summary(const CampaignOptions& o, const CampaignResult& r) {
  double rate = r.seconds > 0 ? static_cast<double>(r.cases) / r.seconds : 0;
  if (r.first_index > 0) std::cout << "resumed at case slot " << r.first_index << "; ";
  std::cout << "flatcheck fuzz: " << r.cases << " cases in " << fmt(r.seconds, 2) << " s ("
            << fmt(rate, 0) << " cases/s), seed " << r.seed << ", " << o.jobs << " job"
            << (o.jobs == 1 ? "" : "s");
  if (r.shard_count > 1) std::cout << ", shard " << r.shard_index << "/" << r.shard_count;
  if (r.max_nodes != 20) std::cout << ", --max-nodes " << r.max_nodes;
  if (active_fault() != Fault::kNone)
    std::cout << ", fault injected: " << fault_info(active_fault()).name;
  std::cout << "\nbackend: " << backend_label(r.backend) << " (every path of every case)\n";
  const Coverage& c = r.totals;
  std::cout << "exercised:\n"
            << "  eager nodes        " << c.nodes << " ("
            << fmt(r.cases ? double(c.nodes) / double(r.cases) : 0) << " per case)\n"
            << "  flat nodes         " << c.flat_nodes << " ("
            << fmt(r.cases ? double(c.flat_nodes) / double(r.cases) : 0)
            << " per case; call_function nodes of the exported program)\n"
            << "  module calls       " << c.calls << "\n"
            << "  partitions         " << c.acc_partitions << " engines (_run_on_acc_*), "
            << c.fallback_partitions << " fallbacks (_run_on_gpu_*)\n"
            << "  renamed nodes      " << c.renamed_nodes
            << " (flattened names with a collision suffix)\n"
            << "  specialized calls  " << c.specialized_fqns
            << " modules unflattened into 2+ variants\n"
            << "  buffer mutations   " << c.buffer_mutations << "\n"
            << "  paths checked      " << c.paths << " (" << path_names() << ")\n"
            << "  case documents     " << c.case_roundtrips
            << " saved, loaded and compared (one case in --spelling-every)\n";
  std::vector<std::pair<int, std::string>> ops;
  for (const auto& [k, v] : c.ops) ops.emplace_back(v, k);
  std::sort(ops.rbegin(), ops.rend());
  std::cout << "  ops                ";
  for (size_t i = 0; i < ops.size(); ++i)
    std::cout << (i ? ", " : "") << ops[i].second << " " << ops[i].first;
  std::cout << "\n";
  print_reach(c, r.cases);
  if (r.known_skipped > 0)
    std::cout << "known: " << r.known_skipped
              << " failing cases with signatures found by earlier runs\n";
  for (const auto& n : r.notes) std::cout << "note: " << n << "\n";
  if (r.findings.empty()) {
    std::cout << "result: no new failures\n";
    return;
  }
  size_t distinct = distinct_signatures(r);
  std::cout << "result: " << r.failing_cases << " failing case" << (r.failing_cases == 1 ? "" : "s")
            << ", " << distinct << " unique signature" << (distinct == 1 ? "" : "s");
  if (distinct != r.findings.size())
    std::cout << " (" << r.findings.size() << " findings: minimizing made some signatures equal)";
  std::cout << "\n";
  for (const auto& f : r.findings) {
    std::cout << "  " << f.failure.signature() << "  case " << f.case_index << ", "
              << f.original_nodes << " -> " << f.minimized_nodes << " nodes"
              << (f.reproducible ? "" : "  (did not reproduce alone)");
    if (!f.path.empty())
      std::cout << "\n    repro: " << f.path << "  (flatcheck replay " << f.path << ")";
    std::string msg = f.failure.message;
    if (msg.size() > 300) msg = msg.substr(0, 297) + "...";
    std::cout << "\n    " << msg << "\n";
  }
}

// The figures of a campaign as one JSON object (--json).
Json campaign_json(const CampaignOptions& o, const CampaignResult& r) {
  Json findings = Json::array();
  for (const auto& f : r.findings)
    findings.push_back(Json{{"signature", f.failure.signature()},
                            {"reproducible", f.reproducible},
                            {"case", f.case_index},
                            {"case_seed", f.case_seed},
                            {"nodes", f.original_nodes},
                            {"minimized_nodes", f.minimized_nodes},
                            {"path", f.path},
                            {"first_divergence", f.failure.first_divergence}});
  Json j{{"cases", r.cases},
         {"failures", distinct_signatures(r)},
         {"failing_cases", r.failing_cases},
         {"cases_per_sec", r.seconds > 0 ? double(r.cases) / r.seconds : 0.0},
         {"seconds", r.seconds},
         {"seed", r.seed},
         {"shard", std::to_string(r.shard_index) + "/" + std::to_string(r.shard_count)},
         {"jobs", o.jobs},
         {"backend", r.backend},
         {"fault", std::string(fault_info(active_fault()).name)},
         {"first_failing_case",
          r.first_failing_case >= 0 ? Json(r.first_failing_case) : Json(nullptr)},
         {"findings", findings},
         {"coverage", coverage_json(r.totals)}};
  return j;
}

// --shard I/N into the options.
void shard_option(const Args& a, CampaignOptions& o) {
  if (!a.has("--shard")) return;
  std::string s = a.str("--shard");
  size_t slash = s.find('/');
  int64_t i = -1, n = -1;
  if (slash == std::string::npos || !parse_decimal(s.substr(0, slash), i) ||
      !parse_decimal(s.substr(slash + 1), n) || n < 1 || n > 1000000 || i < 0 || i >= n)
    throw UsageError("--shard expects I/N, two decimal integers with 0 <= I < N <= 1000000, got '" +
                     s + "'");
  o.shard_index = static_cast<int>(i);
  o.shard_count = static_cast<int>(n);
}

// The campaign options fuzz's flags select.
CampaignOptions campaign_options(const Args& a) {
  CampaignOptions o;
  o.oracle.device = device_option(a);
  bool cuda = o.oracle.device == Device::kCuda;
  o.cases = a.integer("--cases", 2000, 1, int64_t{1} << 40);
  o.time_s = a.number("--time", 0, 0.001, 1e7);
  o.seed = a.unsigned_int("--seed", 1);
  o.jobs = static_cast<int>(a.integer("--jobs", 1, 1, 256));
  o.out_dir = a.str("--out", "corpus/found");
  o.minimize = !a.flag("--no-minimize");
  o.spelling_every = static_cast<int>(a.integer("--spelling-every", 16, 0, 1 << 20));
  o.gen.max_nodes = static_cast<int>(a.integer("--max-nodes", 20, 2, 500));
  // CUDA contexts do not survive fork(): GPU campaigns check cases in-process.
  o.isolate = !a.flag("--no-isolate") && !cuda;
  o.timeout_s = a.number("--timeout", 10, 0.01, 86400);
  if (a.has("--resume")) {
    if (a.has("--seed") || a.has("--shard") || a.has("--max-nodes") || a.has("--out"))
      throw UsageError(
          "--resume takes the seed, shard, node count and folder from the campaign it resumes");
    o.resume = true;
    o.out_dir = a.str("--resume");
  }
  shard_option(a, o);
  return o;
}

int cmd_fuzz(int argc, char** argv) {
  Args a(argc, argv, 2, "fuzz");
  if (a.flag("--help")) {
    std::cout << command_help("fuzz");
    return 0;
  }
  if (!a.positional().empty()) throw UsageError("fuzz takes no positional arguments");
  if (a.has("--cases") && a.has("--time"))
    throw UsageError("--cases and --time exclude each other");
  apply_inject(a);
  CampaignOptions o = campaign_options(a);
  check_ci_report_paths(a);
  o.interrupt = &g_interrupted;
  // The first Ctrl-C stops the campaign cleanly (summary, state); a second one ends the
  // process at once (its findings are on disk already; workers die with it).
  std::signal(SIGINT, [](int) {
    if (g_interrupted.exchange(true)) {
      std::signal(SIGINT, SIG_DFL);
      std::raise(SIGINT);
    }
  });
  bool quiet = a.flag("--quiet"), tty = stderr_tty() && !quiet;
  // On a terminal one line rewritten in place; elsewhere (a CI log, a pipe) a line every 10 s.
  double next_line = 10;
  if (!quiet) {
    o.progress = [&, tty](int64_t done, int64_t failing, double secs) {
      if (!tty && secs < next_line) return;
      next_line = secs + 10;
      std::fprintf(stderr,
                   tty ? "\r  %lld cases, %lld failing, %.0f cases/s, %.1f s   "
                       : "  %lld cases, %lld failing, %.0f cases/s, %.1f s\n",
                   static_cast<long long>(done), static_cast<long long>(failing),
                   secs > 0 ? double(done) / secs : 0.0, secs);
      std::fflush(stderr);
    };
    o.minimizing = [tty](size_t k, size_t n, const std::string& signature) {
      std::fprintf(stderr, "%sminimizing finding %zu of %zu: %s%s", tty ? "\r" : "  ", k, n,
                   signature.c_str(), tty ? "\033[K" : "\n");
      std::fflush(stderr);
    };
  }
  CampaignResult r = run_campaign(o);
  if (tty) std::fprintf(stderr, "\r%60s\r", "");
  print_summary(o, r);
  if (g_interrupted.load())
    std::cout << "interrupted: resume with 'flatcheck fuzz --resume " << o.out_dir << "'\n";
  if (a.flag("--json")) std::cout << campaign_json(o, r).dump() << "\n";
  std::vector<ReportItem> items;
  for (const auto& f : r.findings)
    items.push_back({f.failure.signature(), f.failure.signature(), f.failure.message, f.path,
                     "case " + std::to_string(f.case_index) + " (case seed " +
                         std::to_string(f.case_seed) + "), " + std::to_string(f.original_nodes) +
                         " nodes, minimized to " + std::to_string(f.minimized_nodes) +
                         (f.failure.first_divergence.empty()
                              ? std::string()
                              : "; first divergence " + f.failure.first_divergence)});
  if (items.empty())
    items.push_back(
        {"fuzz seed " + std::to_string(r.seed) + ": " + std::to_string(r.cases) + " cases", "", "",
         "", ""});
  write_ci_reports(a, "flatcheck fuzz", items, r.seconds, argc, argv);
  return r.findings.empty() ? 0 : 1;
}

}  // namespace flatcheck::cli
