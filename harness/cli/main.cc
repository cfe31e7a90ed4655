// The flatcheck command line (DESIGN §5).
//
//   flatcheck fuzz | replay | shrink | show | faults | detect | help
//
// Exit codes: 0 nothing found / all passed, 1 a failure found (its minimized repro written),
// 2 bad usage or bad input.
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

#include "core/base/faults.h"
#include "core/base/check.h"
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

namespace flatcheck {
namespace {

constexpr const char* kVersion = "0.1.0";

constexpr const char* kUsage =
    R"(flatcheck: property-based fuzzing and differential testing of the passes a
deep-learning compiler runs when it saves a partitioned model.

usage:
  flatcheck fuzz    [--cases N | --time SECONDS] [--seed S] [--jobs J] [--shard I/N]
                    [--inject FAULT] [--device cpu|cuda] [--out DIR] [--json]
                    [--max-nodes N] [--no-minimize] [--no-isolate] [--timeout S] [--resume DIR]
  flatcheck replay  PATH... [--inject FAULT] [--device cpu|cuda] [--json]
                                                        files or folders of case files
  flatcheck shrink  CASE -o OUT [--inject FAULT] [--predicate CMD [--timeout S]]
  flatcheck show    FILE [--stage eager|exported|partitioned|flattened|reloaded|unflattened]
                    [--format text|dot|json]
  flatcheck faults  [--verbose]                          one fault name per line
  flatcheck detect  [--seeds K] [--cases N] [--jobs J] [--fault F] [--device cpu|cuda] [--json]
  flatcheck compare-backends [--device cuda] [--cases N] [--seed S] [--json]
                                                        CPU vs another backend, node by node
  flatcheck generate --seed S [--count N] [--max-nodes N] -o DIR
                                                        generated cases as case files
  flatcheck emit-torch CASE -o DIR                      the case as a runnable PyTorch program
  flatcheck example [NAME] [-o FILE]                    write a built-in example as a case file
  flatcheck validate FILE...                            check case, module and program files
  flatcheck help | --help | --version

every command: --limit KEY=VALUE[,...]   load limits for the files it reads (docs/hardening.md)

exit codes: 0 nothing found / all passed, 1 a failure found (its minimized repro written),
            2 bad usage or bad input.
Run 'flatcheck COMMAND --help' for a command's details. Docs: docs/cli.md.
)";

// ------------------------------------------------------------------------------ arguments

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A small flag parser: --name VALUE, --name=VALUE, boolean --name, and positionals.
class Args {
 public:
  Args(int argc, char** argv, int start, std::vector<std::string> valued,
       std::vector<std::string> flags)
      : valued_(std::move(valued)), flags_(std::move(flags)) {
    for (int i = start; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--") {
        for (++i; i < argc; ++i) positional_.push_back(argv[i]);
        break;
      }
      if (a.size() > 1 && a[0] == '-' &&
          !(a.size() > 1 && std::isdigit(static_cast<unsigned char>(a[1])))) {
        std::string name = a, value;
        bool has_value = false;
        if (auto eq = a.find('='); eq != std::string::npos) {
          name = a.substr(0, eq);
          value = a.substr(eq + 1);
          has_value = true;
        }
        if (std::find(flags_.begin(), flags_.end(), name) != flags_.end()) {
          if (has_value) throw UsageError(name + " takes no value");
          set_.insert(name);
          continue;
        }
        if (std::find(valued_.begin(), valued_.end(), name) == valued_.end())
          throw UsageError("unknown option '" + name + "'");
        if (!has_value) {
          if (i + 1 >= argc) throw UsageError(name + " needs a value");
          value = argv[++i];
        }
        values_[name] = value;
        continue;
      }
      positional_.push_back(a);
    }
  }
  bool flag(const std::string& n) const { return set_.count(n) > 0; }
  bool has(const std::string& n) const { return values_.count(n) > 0; }
  std::string str(const std::string& n, const std::string& def = "") const {
    auto it = values_.find(n);
    return it == values_.end() ? def : it->second;
  }
  int64_t integer(const std::string& n, int64_t def, int64_t lo, int64_t hi) const {
    if (!has(n)) return def;
    std::string v = str(n);
    char* end = nullptr;
    errno = 0;
    long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || errno != 0 || x < lo || x > hi)
      throw UsageError(n + " expects an integer in [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "], got '" + v + "'");
    return x;
  }
  uint64_t unsigned_int(const std::string& n, uint64_t def) const {
    if (!has(n)) return def;
    std::string v = str(n);
    char* end = nullptr;
    errno = 0;
    unsigned long long x = std::strtoull(v.c_str(), &end, 0);
    if (v.empty() || v[0] == '-' || *end != '\0' || errno != 0)
      throw UsageError(n + " expects a non-negative integer, got '" + v + "'");
    return x;
  }
  double number(const std::string& n, double def, double lo, double hi) const {
    if (!has(n)) return def;
    std::string v = str(n);
    char* end = nullptr;
    double x = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !(x >= lo && x <= hi))
      throw UsageError(n + " expects a number in [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "], got '" + v + "'");
    return x;
  }
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::vector<std::string> valued_, flags_;
  std::map<std::string, std::string> values_;
  std::set<std::string> set_;
  std::vector<std::string> positional_;
};

bool stderr_tty() {
  return isatty(fileno(stderr)) != 0;
}

// Set by SIGINT: the campaign stops claiming cases, finishes, prints its summary, saves state.
std::atomic<bool> g_interrupted{false};

void apply_inject(const Args& a) {
  if (!a.has("--inject")) return;
  auto f = fault_by_name(a.str("--inject"));
  if (!f) throw UsageError("unknown fault '" + a.str("--inject") + "' (see 'flatcheck faults')");
  set_active_fault(*f);
}

// --device: cpu, or cuda when this build has the CUDA runtime and a device is present
// (otherwise exit 2 with the reason, before any case runs).
Device device_option(const Args& a, const char* fallback = "cpu") {
  std::string name = a.str("--device", fallback);
  auto d = device_by_name(name);
  if (!d) throw UsageError("--device expects cpu or cuda, got '" + name + "'");
  std::string why;
  if (*d == Device::kCuda && !cuda_available(&why)) throw InputError("--device cuda: " + why);
  return *d;
}

// "cpu", or "cuda (NVIDIA H100 80GB HBM3)": the backend that ran, for every report.
std::string backend_label(const std::string& backend) {
  if (backend == "cuda") {
    std::string dev = cuda_device_name();
    return dev.empty() ? backend : backend + " (" + dev + ")";
  }
  return backend.empty() ? "none (no case ran)" : backend;
}

std::string fmt(double x, int prec = 1) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(prec) << x;
  return os.str();
}

// ------------------------------------------------------------------------------ fuzz

Json coverage_json(const Coverage& c) {
  return Json{{"nodes", c.nodes},
              {"module_calls", c.calls},
              {"acc_partitions", c.acc_partitions},
              {"fallback_partitions", c.fallback_partitions},
              {"renamed_nodes", c.renamed_nodes},
              {"specialized_fqns", c.specialized_fqns},
              {"buffer_mutations", c.buffer_mutations},
              {"paths_checked", c.paths},
              {"ops", c.ops}};
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
            << "  module calls       " << c.calls << "\n"
            << "  partitions         " << c.acc_partitions << " engines (_run_on_acc_*), "
            << c.fallback_partitions << " fallbacks (_run_on_gpu_*)\n"
            << "  renamed nodes      " << c.renamed_nodes
            << " (flattened names with a collision suffix)\n"
            << "  specialized calls  " << c.specialized_fqns
            << " modules unflattened into 2+ variants\n"
            << "  buffer mutations   " << c.buffer_mutations << "\n"
            << "  paths checked      " << c.paths
            << " (exported, partitioned, flattened, reloaded, unflattened)\n";
  std::vector<std::pair<int, std::string>> ops;
  for (const auto& [k, v] : c.ops) ops.emplace_back(v, k);
  std::sort(ops.rbegin(), ops.rend());
  std::cout << "  ops                ";
  for (size_t i = 0; i < ops.size(); ++i)
    std::cout << (i ? ", " : "") << ops[i].second << " " << ops[i].first;
  std::cout << "\n";
  if (r.known_skipped > 0)
    std::cout << "known: " << r.known_skipped
              << " failing cases with signatures found by earlier runs\n";
  if (r.findings.empty()) {
    std::cout << "result: no new failures\n";
    return;
  }
  std::cout << "result: " << r.failing_cases << " failing case" << (r.failing_cases == 1 ? "" : "s")
            << ", " << r.findings.size() << " unique signature"
            << (r.findings.size() == 1 ? "" : "s") << "\n";
  for (const auto& f : r.findings) {
    std::cout << "  " << f.failure.signature() << "  case " << f.case_index << ", "
              << f.original_nodes << " -> " << f.minimized_nodes << " nodes";
    if (!f.path.empty())
      std::cout << "\n    repro: " << f.path << "  (flatcheck replay " << f.path << ")";
    std::string msg = f.failure.message;
    if (msg.size() > 300) msg = msg.substr(0, 297) + "...";
    std::cout << "\n    " << msg << "\n";
  }
}

int cmd_fuzz(int argc, char** argv) {
  Args a(argc, argv, 2,
         {"--cases", "--time", "--seed", "--jobs", "--shard", "--inject", "--device", "--out",
          "--max-nodes", "--timeout", "--resume"},
         {"--json", "--no-minimize", "--help", "--quiet", "--no-isolate"});
  if (a.flag("--help")) {
    std::cout << "flatcheck fuzz: generate cases from a seed and check every path bit for bit.\n"
                 "  --cases N       cases to run (default 2000)\n"
                 "  --time SECONDS  run for a time instead of a count\n"
                 "  --seed S        campaign seed (default 1); case i uses mix(S, i)\n"
                 "  --jobs J        worker threads (default 1)\n"
                 "  --shard I/N     run only case indices i with i % N == I\n"
                 "  --inject FAULT  switch on an injected fault (see 'flatcheck faults')\n"
                 "  --device D      cpu (default) or cuda: the backend every path runs on\n"
                 "  --out DIR       where findings are written (default corpus/found)\n"
                 "  --max-nodes N   steps per generated graph (default 20)\n"
                 "  --no-minimize   write findings unminimized\n"
                 "  --no-isolate    run cases in this process (faster; a crash ends the campaign)\n"
                 "  --timeout S     per-case time limit in isolated mode (default 10)\n"
                 "  --resume DIR    continue the campaign whose findings and state are in DIR\n"
                 "  --json          end with one JSON line of figures\n";
    return 0;
  }
  if (!a.positional().empty()) throw UsageError("fuzz takes no positional arguments");
  if (a.has("--cases") && a.has("--time"))
    throw UsageError("--cases and --time exclude each other");
  apply_inject(a);
  CampaignOptions o;
  o.oracle.device = device_option(a);
  bool cuda = o.oracle.device == Device::kCuda;
  o.cases = a.integer("--cases", 2000, 1, int64_t{1} << 40);
  o.time_s = a.number("--time", 0, 0.001, 1e7);
  o.seed = a.unsigned_int("--seed", 1);
  o.jobs = static_cast<int>(a.integer("--jobs", 1, 1, 256));
  o.out_dir = a.str("--out", "corpus/found");
  o.minimize = !a.flag("--no-minimize");
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
  o.interrupt = &g_interrupted;
  // The first Ctrl-C stops the campaign cleanly (summary, state); a second one ends the
  // process at once (its findings are on disk already; workers die with it).
  std::signal(SIGINT, [](int) {
    if (g_interrupted.exchange(true)) {
      std::signal(SIGINT, SIG_DFL);
      std::raise(SIGINT);
    }
  });
  if (a.has("--shard")) {
    std::string s = a.str("--shard");
    auto slash = s.find('/');
    char* end = nullptr;
    long i = slash == std::string::npos ? -1 : std::strtol(s.substr(0, slash).c_str(), &end, 10);
    long n = slash == std::string::npos ? -1 : std::strtol(s.substr(slash + 1).c_str(), &end, 10);
    if (slash == std::string::npos || n < 1 || i < 0 || i >= n)
      throw UsageError("--shard expects I/N with 0 <= I < N, got '" + s + "'");
    o.shard_index = static_cast<int>(i);
    o.shard_count = static_cast<int>(n);
  }
  bool tty = stderr_tty() && !a.flag("--quiet");
  if (tty) {
    o.progress = [&](int64_t done, int64_t failing, double secs) {
      std::fprintf(stderr, "\r  %lld cases, %lld failing, %.0f cases/s, %.1f s   ",
                   static_cast<long long>(done), static_cast<long long>(failing),
                   secs > 0 ? double(done) / secs : 0.0, secs);
      std::fflush(stderr);
    };
  }
  CampaignResult r = run_campaign(o);
  if (tty) std::fprintf(stderr, "\r%60s\r", "");
  print_summary(o, r);
  if (g_interrupted.load())
    std::cout << "interrupted: resume with 'flatcheck fuzz --resume " << o.out_dir << "'\n";
  if (a.flag("--json")) {
    Json findings = Json::array();
    for (const auto& f : r.findings)
      findings.push_back(Json{{"signature", f.failure.signature()},
                              {"case", f.case_index},
                              {"case_seed", f.case_seed},
                              {"nodes", f.original_nodes},
                              {"minimized_nodes", f.minimized_nodes},
                              {"path", f.path},
                              {"first_divergence", f.failure.first_divergence}});
    Json j{{"cases", r.cases},
           {"failures", r.findings.size()},
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
    std::cout << j.dump() << "\n";
  }
  return r.findings.empty() ? 0 : 1;
}

// ------------------------------------------------------------------------------ replay

std::vector<std::string> case_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (auto& e : fs::recursive_directory_iterator(p, ec))
        if (e.is_regular_file() && e.path().extension() == ".json")
          found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::exists(p, ec)) {
      out.push_back(p);
    } else {
      throw InputError(p + ": no such file or folder");
    }
  }
  return out;
}

int cmd_replay(int argc, char** argv) {
  Args a(argc, argv, 2, {"--inject", "--device", "--timeout"},
         {"--json", "--help", "--no-isolate"});
  if (a.flag("--help")) {
    std::cout
        << "flatcheck replay PATH...: check every case file (folders are searched for *.json).\n"
           "  exit 0 when every case passes, 1 when one fails, 2 for unreadable files.\n"
           "  --inject FAULT  replay with a fault switched on\n"
           "  --device D      cpu (default) or cuda: the backend every path runs on\n"
           "  --no-isolate    check in this process (a crash in the system under test ends the "
           "replay)\n"
           "  --timeout S     per-case time limit (default 10)\n";
    return 0;
  }
  bool isolate = !a.flag("--no-isolate");
  double timeout = a.number("--timeout", 10, 0.01, 86400);
  if (a.positional().empty()) throw UsageError("replay needs at least one file or folder");
  apply_inject(a);
  OracleOptions oo;
  oo.device = device_option(a);
  if (oo.device == Device::kCuda) isolate = false;  // CUDA contexts do not survive fork()
  auto files = case_files(a.positional());
  if (files.empty()) throw InputError("no case files (*.json) found");
  int failed = 0;
  Json results = Json::array();
  std::string backend;
  for (const auto& f : files) {
    Case c = load_case_file(f);
    OracleResult r = isolate ? check_case_isolated(c, oo, timeout) : check_case(c, oo);
    if (!r.backend.empty()) backend = r.backend;
    if (r.failure) {
      ++failed;
      std::cout << "FAIL " << f << "\n     " << r.failure->signature() << ": " << r.failure->message
                << "\n";
    } else {
      std::cout << "PASS " << f << "\n";
    }
    results.push_back(Json{
        {"path", f}, {"ok", !r.failure}, {"signature", r.failure ? r.failure->signature() : ""}});
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
  return failed ? 1 : 0;
}

// ------------------------------------------------------------------------------ shrink

int cmd_shrink(int argc, char** argv) {
  Args a(argc, argv, 2, {"-o", "--out", "--inject", "--max-checks", "--predicate", "--timeout"},
         {"--help"});
  if (a.flag("--help")) {
    std::cout
        << "flatcheck shrink CASE -o OUT: minimize a failing case, keeping its failure signature.\n"
           "  --predicate CMD  minimize against an external test instead of the oracle: CMD runs\n"
           "                   with /bin/sh -c on each candidate ({} is the candidate file's\n"
           "                   path, else it is appended); exit 0 means the failure is still "
           "there\n"
           "  --timeout S      per predicate run (default 60); a run past it is not interesting\n"
           "  --max-checks N   candidate checks at most (default 3000)\n"
           "  exit 1 when the minimized repro was written, 2 when the case does not fail.\n";
    return 0;
  }
  if (a.positional().size() != 1) throw UsageError("shrink needs exactly one CASE file");
  std::string out = a.has("-o") ? a.str("-o") : a.str("--out");
  if (out.empty()) throw UsageError("shrink needs -o OUT");
  if (a.has("--timeout") && !a.has("--predicate"))
    throw UsageError("--timeout goes with --predicate");
  apply_inject(a);
  Case c = load_case_file(a.positional()[0]);
  MinimizeOptions mo;
  mo.max_checks = static_cast<int>(a.integer("--max-checks", 3000, 1, 1000000));
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
  if (stderr_tty())
    mo.progress = [](size_t nodes, int checks) {
      std::fprintf(stderr, "\r  %zu nodes after %d checks   ", nodes, checks);
      std::fflush(stderr);
    };
  size_t before = case_size(c);
  MinimizeResult m = minimize(c, *r.failure, mo);
  if (stderr_tty()) std::fprintf(stderr, "\r%50s\r", "");
  if (!pred.dir.empty()) std::filesystem::remove_all(pred.dir);
  if (pred.command.empty())
    m.reduced.expect = Expectation{m.failure.property, m.failure.stage, m.failure.op};
  m.reduced.note =
      "minimized by flatcheck shrink from " + a.positional()[0] + ": " + m.failure.message;
  write_file_atomic(out, save_case(m.reduced));
  std::cout << "shrink: " << m.failure.signature() << ": " << before << " -> "
            << case_size(m.reduced) << " nodes in " << m.checks << " checks (" << m.steps
            << " steps kept)\n  wrote " << out << "\n";
  return 1;
}

// ------------------------------------------------------------------------------ show

int cmd_show(int argc, char** argv) {
  Args a(argc, argv, 2, {"--stage", "--format", "--inject"}, {"--help"});
  if (a.flag("--help")) {
    std::cout
        << "flatcheck show FILE: print a case or module file at every stage of the pipeline.\n"
           "  --stage S    "
        << stage_names_text()
        << " (default: all)\n"
           "  --format F   text (default), dot (Graphviz) or json\n";
    return 0;
  }
  if (a.positional().size() != 1) throw UsageError("show needs exactly one FILE");
  apply_inject(a);
  std::string stage = a.str("--stage", "all"), format = a.str("--format", "text");
  if (stage != "all" && !stage_by_name(stage))
    throw UsageError("--stage expects " + std::string(stage_names_text()) + ", got '" + stage + "'");
  if (format != "text" && format != "dot" && format != "json")
    throw UsageError("--format expects text, dot or json, got '" + format + "'");
  if (stage == "all" && format != "text")
    throw UsageError("--format " + format + " needs one --stage");
  const std::string& path = a.positional()[0];
  std::string text = read_file(path, default_load_limits().max_bytes);
  Json head = parse_json(text, default_load_limits());
  std::string kind = head.is_object() && head.contains("format") && head["format"].is_string()
                         ? head["format"].get<std::string>()
                         : "";
  Case c;
  if (kind == "flatcheck-case") {
    c = load_case(text);
  } else if (kind == "flatcheck-module") {
    c.module = load_module(text);
  } else {
    throw InputError(path + ": /format: expected \"flatcheck-case\" or \"flatcheck-module\"");
  }
  Pipeline pipeline(c.module, c.config);
  for (Stage st : all_stages()) {
    std::string name(stage_name(st));
    if (stage != "all" && stage != name) continue;
    if (stage == "all") std::cout << "==== " << name << " " << std::string(60, '=') << "\n";
    const Artifact& art = pipeline.build(st);
    const Module& m = art.program ? *art.program->root : *art.module;
    if (format == "dot")
      write_dot(std::cout, m, name + ": " + path);
    else if (format == "json")
      std::cout << (art.program ? save_program(*art.program) : save_module(m));
    else if (art.program)
      std::cout << *art.program;
    else
      std::cout << m;
  }
  return 0;
}

// ------------------------------------------------------------------------------ faults, detect

int cmd_faults(int argc, char** argv) {
  Args a(argc, argv, 2, {}, {"--verbose", "--help"});
  if (a.flag("--help")) {
    std::cout << "flatcheck faults: list the injectable faults, one name per line (--verbose: with "
                 "stage and doc).\n";
    return 0;
  }
  for (const auto& f : all_faults()) {
    std::cout << f.name;
    if (a.flag("--verbose")) std::cout << "\t" << stage_name(f.stage) << "\t" << f.doc;
    std::cout << "\n";
  }
  return 0;
}

int cmd_detect(int argc, char** argv) {
  Args a(argc, argv, 2, {"--seeds", "--cases", "--jobs", "--fault", "--device"},
         {"--json", "--help"});
  if (a.flag("--help")) {
    std::cout
        << "flatcheck detect: for every fault, K campaigns (seeds 1..K) until the first failure;\n"
           "reports median and maximum cases-to-detection, median minimized repro size and "
           "whether\n"
           "the signature names the fault's stage.\n"
           "  --seeds K   campaigns per fault (default 5)\n"
           "  --cases N   budget per campaign (default 20000)\n"
           "  --fault F   only this fault\n"
           "  --jobs J    campaigns run in parallel (default 1)\n"
           "  --device D  cpu (default) or cuda: the backend every path runs on\n";
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
      rows.push_back(
          Json{{"fault", std::string(f.name)}, {"stage", std::string(stage_name(f.stage))}, {"skipped", skip}});
      continue;
    }
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
              << (med_size < 0 ? "-" : std::to_string(med_size)) << ok << "/" << found.size()
              << "\n";
    rows.push_back(Json{{"fault", std::string(f.name)},
                        {"stage", std::string(stage_name(f.stage))},
                        {"seeds", seeds},
                        {"detected", found.size()},
                        {"median_cases", median},
                        {"max_cases", worst},
                        {"median_repro_nodes", med_size},
                        {"stage_matches", ok},
                        {"cases_to_detection", ctd}});
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

// ------------------------------------------------------------------------------ compare-backends

std::string float_text(float x) {
  std::ostringstream os;
  os << std::setprecision(9) << x << " (0x" << std::hex << std::setw(8) << std::setfill('0')
     << float_bits(x) << ")";
  return os.str();
}

int cmd_compare_backends(int argc, char** argv) {
  Args a(argc, argv, 2, {"--device", "--cases", "--seed", "--max-nodes"}, {"--json", "--help"});
  if (a.flag("--help")) {
    std::cout
        << "flatcheck compare-backends: generated cases run on the CPU backend (the reference);\n"
           "every kernel launch is run again on --device's backend with the same inputs and\n"
           "compared under the op's ULP bound (docs/cuda.md). Reports the first node outside\n"
           "its bound, naming both backends; ops the device lacks are listed as skipped.\n"
           "  --device D      the backend compared with the CPU: cuda (default) or cpu\n"
           "  --cases N       generated cases (default 2000)\n"
           "  --seed S        campaign seed (default 1); case i uses mix(S, i)\n"
           "  --max-nodes N   steps per generated graph (default 20)\n"
           "  --json          end with one JSON line of figures\n"
           "exit 0 when every kernel is within its bound, 1 at the first that is not.\n";
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

// ------------------------------------------------------------------------------ generate,
// emit-torch

std::string out_dir_option(const Args& a, const char* cmd) {
  std::string out = a.has("-o") ? a.str("-o") : a.str("--out");
  if (out.empty()) throw UsageError(std::string(cmd) + " needs -o DIR");
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec || !std::filesystem::is_directory(out))
    throw InputError(out + ": cannot create the output folder" +
                     (ec ? " (" + ec.message() + ")" : ""));
  return out;
}

int cmd_generate(int argc, char** argv) {
  Args a(argc, argv, 2, {"--seed", "--count", "--max-nodes", "-o", "--out"}, {"--help"});
  if (a.flag("--help")) {
    std::cout << "flatcheck generate --seed S [--count N] -o DIR: write the cases a campaign with\n"
                 "seed S would check, as case files DIR/case-S-<i>.json (case i uses mix(S, i)).\n"
                 "  --seed S        campaign seed (required)\n"
                 "  --count N       cases (default 1)\n"
                 "  --max-nodes N   steps per generated graph (default 20)\n";
    return 0;
  }
  if (!a.positional().empty()) throw UsageError("generate takes no positional arguments");
  if (!a.has("--seed")) throw UsageError("generate needs --seed S");
  uint64_t seed = a.unsigned_int("--seed", 1);
  int64_t count = a.integer("--count", 1, 1, 10000000);
  GenOptions g;
  g.max_nodes = static_cast<int>(a.integer("--max-nodes", 20, 2, 500));
  std::string out = out_dir_option(a, "generate");
  for (int64_t i = 0; i < count; ++i) {
    Case c = generate_case_for_seed(case_seed(seed, i), g);
    c.note = "flatcheck generate --seed " + std::to_string(seed) + ", case " + std::to_string(i);
    write_file_atomic(out + "/case-" + std::to_string(seed) + "-" + std::to_string(i) + ".json",
                      save_case(c));
  }
  std::cout << "generate: wrote " << count << " case file" << (count == 1 ? "" : "s") << " to "
            << out << "\n";
  return 0;
}

int cmd_emit_torch(int argc, char** argv) {
  Args a(argc, argv, 2, {"-o", "--out"}, {"--help"});
  if (a.flag("--help")) {
    std::cout
        << "flatcheck emit-torch CASE... -o DIR: write each case as a self-contained PyTorch\n"
           "program DIR/<name>.py: an nn.Module tree mirroring the module tree, inputs and state\n"
           "bit-exact, flatcheck's eager outputs, final state and node values as the expected\n"
           "results. Run it with python3 (eager check) or harness/torch/flatcheck_torch.py.\n";
    return 0;
  }
  if (a.positional().empty()) throw UsageError("emit-torch needs at least one CASE file");
  std::string out = out_dir_option(a, "emit-torch");
  for (const auto& path : case_files(a.positional())) {
    Case c = load_case_file(path);
    std::string text;
    try {
      text = emit_torch(c, path);
    } catch (const InputError& e) {
      throw InputError(path + ": " + e.what());
    }
    std::string stem = std::filesystem::path(path).stem().string();
    for (char& ch : stem)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-') ch = '_';
    std::string dst = out + "/" + stem + ".py";
    write_file_atomic(dst, text);
    std::cout << "emit-torch: " << path << " -> " << dst << "\n";
  }
  return 0;
}

// ------------------------------------------------------------------------------ example

struct Example {
  const char* name;
  const char* note;
  std::function<Case()> make;
};

const std::vector<Example>& examples() {
  static const std::vector<Example> ex = {
      {"graph-break",
       "Torch-TensorRT #4360: relu fallback between a one-output engine and a two-output engine "
       "whose "
       "getitems take the names the relu's input had; flatten must wire fallback inputs by "
       "position",
       [] {
         Case c;
         c.module = graph_break_example();
         Tensor x({4, 4}, {1, 2, 3, 4, -1, -2, -3, -4, 0.5f, 0.25f, -0.5f, 3, 2, 1, 0, -1});
         c.inputs = {x};
         c.config.fallback_ops = {"relu"};
         c.config.min_block_size = 5;
         return c;
       }},
      {"unflatten-specialized",
       "PyTorch #137013: n(x, True) then n(x, False); unflatten must make n and n@1 and return 16",
       [] {
         Case c;
         c.module = unflatten_example(false);
         c.inputs = {Tensor::full({1}, 1.0f)};
         return c;
       }},
      {"unflatten-same-flag",
       "PyTorch #137013, both calls with the same flag: one module n, result 15",
       [] {
         Case c;
         c.module = unflatten_example(true);
         c.inputs = {Tensor::full({1}, 1.0f)};
         return c;
       }},
      {"quickstart",
       "a child called twice with different static scales, a parameter, and a buffer updated in "
       "place",
       [] {
         Case c;
         c.module = quickstart_example();
         c.inputs = {Tensor({2, 2}, {1, 2, 3, 4})};
         c.config.fallback_ops = {"relu"};
         c.config.min_block_size = 2;
         return c;
       }},
  };
  return ex;
}

int cmd_example(int argc, char** argv) {
  Args a(argc, argv, 2, {"-o", "--out"}, {"--help"});
  if (a.flag("--help") || a.positional().empty()) {
    std::cout << "flatcheck example NAME [-o FILE]: write a built-in example as a case file "
                 "(stdout without -o).\n"
                 "examples:\n";
    for (const auto& e : examples())
      std::cout << "  " << std::left << std::setw(24) << e.name << e.note << "\n";
    return a.flag("--help") ? 0 : 2;
  }
  if (a.positional().size() != 1) throw UsageError("example takes one NAME");
  for (const auto& e : examples()) {
    if (a.positional()[0] != e.name) continue;
    Case c = e.make();
    c.note = e.note;
    std::string text = save_case(c);
    std::string out = a.has("-o") ? a.str("-o") : a.str("--out");
    if (out.empty())
      std::cout << text;
    else
      write_file_atomic(out, text);
    return 0;
  }
  throw UsageError("unknown example '" + a.positional()[0] +
                   "' (run 'flatcheck example' for the list)");
}

// ------------------------------------------------------------------------------ validate

int cmd_validate(int argc, char** argv) {
  Args a(argc, argv, 2, {}, {"--help"});
  if (a.flag("--help") || a.positional().empty()) {
    std::cout << "flatcheck validate FILE...: load each case, module or program file with full "
                 "validation.\n"
                 "  exit 0 when all are valid, 2 at the first invalid one (the message names the "
                 "JSON path).\n";
    return a.flag("--help") ? 0 : 2;
  }
  for (const auto& path : a.positional()) {
    std::string text = read_file(path, default_load_limits().max_bytes);
    std::string kind;
    try {
      Json head = parse_json(text, default_load_limits());
      kind = head.is_object() && head.contains("format") && head["format"].is_string()
                 ? head["format"].get<std::string>()
                 : "";
      if (kind == "flatcheck-case")
        load_case(text);
      else if (kind == "flatcheck-module")
        load_module(text);
      else if (kind == "flatcheck-program")
        load_program(text);
      else
        throw InputError(
            "/format: expected \"flatcheck-case\", \"flatcheck-module\" or \"flatcheck-program\"");
    } catch (const InputError& e) {
      throw InputError(path + ": " + e.what());
    }
    std::cout << "OK " << path << " (" << kind << ")\n";
  }
  return 0;
}

// --limit KEY=VALUE[,KEY=VALUE...], accepted by every command and taken out of argv before
// the command parses its own flags: the load limits (docs/hardening.md) for every file read.
std::vector<char*> take_limits(int argc, char** argv) {
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    std::string spec;
    if (a == "--limit") {
      if (i + 1 >= argc) throw UsageError("--limit needs KEY=VALUE");
      spec = argv[++i];
    } else if (a.rfind("--limit=", 0) == 0) {
      spec = a.substr(8);
    } else {
      rest.push_back(argv[i]);
      continue;
    }
    size_t start = 0;
    while (start <= spec.size()) {
      size_t comma = spec.find(',', start);
      std::string item = spec.substr(start, comma == std::string::npos ? comma : comma - start);
      size_t eq = item.find('=');
      std::string key = item.substr(0, eq),
                  value = eq == std::string::npos ? "" : item.substr(eq + 1);
      bool digits = !value.empty() && value.size() <= 19 &&
                    value.find_first_not_of("0123456789") == std::string::npos;
      if (eq == std::string::npos || !digits ||
          !set_load_limit(default_load_limits(), key, std::stoull(value))) {
        std::string names;
        for (const auto& n : load_limit_names()) names += (names.empty() ? "" : ", ") + n;
        throw UsageError("--limit expects KEY=VALUE with a decimal VALUE in range and KEY one of " +
                         names + "; got '" + item + "'");
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return rest;
}

int dispatch(int argc, char** argv) {
  std::vector<char*> args = take_limits(argc, argv);
  args.push_back(nullptr);
  argc = static_cast<int>(args.size()) - 1;
  argv = args.data();
  if (argc < 2) {
    std::cerr << kUsage;
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::cout << kUsage;
    return 0;
  }
  if (cmd == "--version") {
    std::cout << "flatcheck " << kVersion << "\n";
    return 0;
  }
  if (cmd == "fuzz") return cmd_fuzz(argc, argv);
  if (cmd == "replay") return cmd_replay(argc, argv);
  if (cmd == "shrink") return cmd_shrink(argc, argv);
  if (cmd == "show") return cmd_show(argc, argv);
  if (cmd == "faults") return cmd_faults(argc, argv);
  if (cmd == "detect") return cmd_detect(argc, argv);
  if (cmd == "example") return cmd_example(argc, argv);
  if (cmd == "compare-backends") return cmd_compare_backends(argc, argv);
  if (cmd == "generate") return cmd_generate(argc, argv);
  if (cmd == "emit-torch") return cmd_emit_torch(argc, argv);
  if (cmd == "validate") return cmd_validate(argc, argv);
  throw UsageError("unknown command '" + cmd + "'");
}

}  // namespace
}  // namespace flatcheck

int main(int argc, char** argv) {
  try {
    return flatcheck::dispatch(argc, argv);
  } catch (const flatcheck::UsageError& e) {
    std::cerr << "flatcheck: " << e.what() << "\nRun 'flatcheck --help' for usage.\n";
    return 2;
  } catch (const flatcheck::InputError& e) {
    std::cerr << "flatcheck: error: " << e.what() << "\n";
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    std::cerr << "flatcheck: error: " << e.what() << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "flatcheck: error: out of memory\n";
    return 2;
  }
}
