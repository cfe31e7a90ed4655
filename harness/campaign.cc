// Campaigns. Case slot k of a shard maps to case index shard_index + k * shard_count, whose
// seed is mix(seed, index): results never depend on the number of jobs. Workers are threads;
// with isolation each thread runs batches of cases in a forked child that reports over a pipe,
// so a crash or hang inside the system under test costs one case, not the campaign.
#include "harness/campaign.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/serialize/fields.h"
#include "harness/isolate.h"
#include "harness/minimize.h"

namespace flatcheck {

void write_file_atomic(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  fs::path p(path);
  std::error_code dir_ec;
  if (p.has_parent_path() && (fs::create_directories(p.parent_path(), dir_ec), dir_ec))
    throw SystemError(path + ": cannot create its folder (" + dir_ec.message() + ")");
  std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw SystemError(path + ": cannot write file (" + std::strerror(errno) + ")");
    out << text;
    out.flush();
    if (!out) {
      int err = errno;
      out.close();
      std::error_code ec;
      fs::remove(tmp, ec);  // never leave a truncated temporary behind (a full disk)
      throw SystemError(path + ": cannot write file (" + std::strerror(err) + ")");
    }
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw SystemError(path + ": cannot write file (" + ec.message() + ")");
  }
}

namespace {

using Clock = std::chrono::steady_clock;

std::string slug(const Failure& f, uint64_t seed) {
  std::string s = f.property + "-" + f.stage + "-" + (f.op == "-" ? "none" : f.op);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '_';
  char hex[24];
  std::snprintf(hex, sizeof hex, "-%016llx", static_cast<unsigned long long>(seed));
  return s + hex + ".json";
}

std::string state_path(const std::string& dir) {
  return dir + "/campaign.state";
}

class Campaign {
 public:
  explicit Campaign(const CampaignOptions& o) : o_(o), every_case_(o.oracle) {
    o_.oracle.spelling_every = o.spelling_every;
    every_case_.spelling_every = 1;
    o_.oracle.swap_all = false;
    every_case_.swap_all = true;
  }

  CampaignResult run() {
    if (o_.isolate && o_.oracle.device == Device::kCuda && !o_.oracle.backend)
      throw InputError(
          "isolated campaigns fork worker processes, which a CUDA context does not survive: "
          "run --device cuda campaigns in-process");
    t0_ = Clock::now();
    if (o_.resume && o_.out_dir.empty()) throw InputError("--resume needs a folder");
    if (!o_.out_dir.empty()) prepare_out_dir();  // before any case runs
    if (o_.resume) load_state();
    next_.store(res_.first_index);
    watermark_ = res_.first_index;
    res_.seed = o_.seed;
    res_.shard_index = o_.shard_index;
    res_.shard_count = o_.shard_count;
    res_.max_nodes = o_.gen.max_nodes;
    int jobs = std::max(1, o_.jobs);
    std::vector<std::thread> threads;
    for (int j = 0; j < jobs; ++j) threads.emplace_back([this] { worker(); });
    // The coordinator: progress, and the resume state every few seconds, so that a campaign
    // killed with SIGKILL resumes where it was.
    auto saved = Clock::now();
    while (finished_.load() < jobs) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (o_.progress) o_.progress(done_.load(), failing_.load(), elapsed());
      if (!o_.out_dir.empty() && Clock::now() - saved > std::chrono::seconds(2)) {
        try {
          save_state();
        } catch (const SystemError&) {  // a full disk: stop, keep what is on disk, exit 3
          std::lock_guard<std::mutex> lock(mu_);
          if (!error_) error_ = std::current_exception();
          stop_.store(true);
        }
        saved = Clock::now();
      }
    }
    for (auto& t : threads) t.join();
    if (error_) std::rethrow_exception(error_);
    res_.cases = done_.load();
    res_.failing_cases = failing_.load();
    res_.seconds = elapsed();
    if (!o_.out_dir.empty()) save_state();
    minimize_findings();
    return res_;
  }

  ~Campaign() {
    if (lock_fd_ >= 0) close(lock_fd_);
  }

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - t0_).count(); }
  bool stopping() const {
    return stop_.load() || (o_.interrupt && o_.interrupt->load()) ||
           (o_.time_s > 0 && elapsed() >= o_.time_s);
  }
  int64_t index_of(int64_t k) const {
    return static_cast<int64_t>(o_.shard_index) + k * o_.shard_count;
  }
  int64_t end_slot() const { return o_.time_s > 0 ? INT64_MAX : res_.first_index + o_.cases; }

  // Claims up to n case slots; returns [begin, end).
  std::pair<int64_t, int64_t> claim(int64_t n) {
    if (stopping()) return {0, 0};
    int64_t b = next_.fetch_add(n);
    int64_t e = std::min(b + n, end_slot());
    if (b >= e) return {0, 0};
    return {b, e};
  }

  // The backend the oracle reported (every case of a campaign runs on the same one).
  void note_backend(const std::string& name) {
    if (name.empty() || backend_seen_.load()) return;
    std::lock_guard<std::mutex> lock(mu_);
    res_.backend = name;
    backend_seen_.store(true);
  }

  // Slot k is finished: the watermark (every slot below it is finished) moves on.
  void mark_done(int64_t k) {
    std::lock_guard<std::mutex> lock(done_mu_);
    if (k < watermark_) return;
    if (k > watermark_) {
      done_ahead_.insert(k);
      return;
    }
    ++watermark_;
    while (done_ahead_.erase(watermark_)) ++watermark_;
  }

  // `counted`: false for a failure attributed to a case already recorded (a worker that died
  // after reporting it).
  void record(int64_t k, const OracleResult& r, Coverage& local, const std::string* case_text,
              bool counted = true) {
    note_backend(r.backend);
    add_coverage(local, r.coverage);
    if (counted) done_.fetch_add(1);
    if (!r.failure) {
      mark_done(k);
      return;
    }
    // A death in generate that repeated alone (run_worker_batch re-runs it): generating the
    // case again would crash here.
    if (!case_text && r.failure->stage == "generate" &&
        r.failure->message.rfind("[did not reproduce", 0) != 0)
      throw SystemError("generating case " + std::to_string(index_of(k)) + " (case seed " +
                        std::to_string(case_seed(o_.seed, index_of(k))) +
                        ") crashed a worker process (" + r.failure->signature() +
                        "): a bug in flatcheck's generator; 'flatcheck generate --seed " +
                        std::to_string(o_.seed) + " --count " + std::to_string(index_of(k) + 1) +
                        "' reproduces it");
    struct MarkDone {  // after the raw case is on disk, and even when writing it fails
      Campaign* c;
      int64_t k;
      ~MarkDone() { c->mark_done(k); }
    } marker{this, k};
    if (counted) failing_.fetch_add(1);
    int64_t index = index_of(k);
    uint64_t seed = case_seed(o_.seed, index);
    std::string sig = r.failure->signature();
    std::lock_guard<std::mutex> lock(mu_);
    if (known_.count(sig)) {
      ++res_.known_skipped;
      return;
    }
    auto it = first_.find(sig);
    if (it != first_.end() && it->second.first <= index) return;
    if (it != first_.end() && !o_.out_dir.empty())  // an earlier case of this signature: it wins
      std::filesystem::remove(o_.out_dir + "/" +
                              slug(*r.failure, case_seed(o_.seed, it->second.first)));
    first_[sig] = {index, *r.failure};
    if (o_.stop_at_first) stop_.store(true);
    if (o_.out_dir.empty()) return;
    // Write the raw case at once, before anything else can go wrong. A case that crashed or
    // hung is the text its worker recorded in shared memory before running it.
    std::string path = o_.out_dir + "/" + slug(*r.failure, seed);
    Case c;
    if (case_text) {
      write_file_atomic(path, *case_text);
      c = load_case_file(path);
    } else {
      c = generate_case_for_seed(seed, o_.gen);
    }
    c.expect = Expectation{r.failure->property, r.failure->stage, r.failure->op, r.failure->module};
    c.note = "unminimized: " + r.failure->message;
    write_file_atomic(path, save_case(c));
    save_state_locked(k);  // a finding is on disk: the state says so at once
  }

  void worker() {
    Coverage local;
    try {
      if (o_.isolate) {
        isolated_worker(local);
      } else {
        // Each case resolves the oracle's backend on this thread (CUDA: this thread's stream).
        for (auto [b, e] = claim(1); b < e; std::tie(b, e) = claim(1)) {
          if (skip_.count(b)) {  // finished before the campaign was resumed
            mark_done(b);
            continue;
          }
          Case c = generate_case_for_seed(case_seed(o_.seed, index_of(b)), o_.gen);
          record(b, check_case(c, o_.oracle), local, nullptr);
        }
      }
    } catch (const std::runtime_error&) {
      // InputError: the device is not available; SystemError: a worker process could not be
      // started or a finding could not be written. The campaign ends with it.
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
      stop_.store(true);
    }
    std::lock_guard<std::mutex> lock(mu_);
    add_coverage(res_.totals, local);
    finished_.fetch_add(1);
  }

  // Each batch runs in a forked child: "S k" before a case, "R k <result>" after it. When the
  // child dies or stalls, the case it started is the finding and the batch goes on after it.
  void isolated_worker(Coverage& local) {
    for (auto [b, e] = claim(o_.batch); b < e; std::tie(b, e) = claim(o_.batch)) {
      for (int64_t k = b; k < e; ++k)
        if (skip_.count(k)) mark_done(k);  // finished before the campaign was resumed
      int64_t pos = b;
      while (pos < e) pos = run_child(pos, e, local);
    }
  }

  int64_t run_child(int64_t from, int64_t to, Coverage& local) {
    WorkerBatch batch;
    batch.from = from;
    batch.to = to;
    batch.make_case = [this](int64_t k) {
      return generate_case_for_seed(case_seed(o_.seed, index_of(k)), o_.gen);
    };
    batch.skip = [this](int64_t k) { return skip_.count(k) > 0; };
    batch.stop = [this] { return stopping(); };
    batch.record_case = !o_.out_dir.empty();
    batch.oracle = o_.oracle;
    batch.timeout_s = o_.timeout_s;
    WorkerEvents events;
    events.result = [&](int64_t k, const OracleResult& r, const std::string* case_text) {
      record(k, r, local, case_text);
    };
    events.batch_done = [&](const OracleResult& batch_cov) {
      note_backend(batch_cov.backend);
      add_coverage(local, batch_cov.coverage);
    };
    events.death = [&](int64_t k, const OracleResult& r) {
      record(k, r, local, nullptr, /*counted=*/false);
    };
    return run_worker_batch(batch, events);
  }

  void minimize_findings() {
    std::vector<std::pair<int64_t, Failure>> order;
    for (auto& [sig, v] : first_) order.push_back(v);
    std::sort(order.begin(), order.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    if (!order.empty()) res_.first_failing_case = order.front().first;
    for (auto& [index, failure] : order) {
      if (o_.minimizing) o_.minimizing(res_.findings.size() + 1, order.size(), failure.signature());
      Finding f;
      f.failure = failure;
      f.case_index = index;
      f.case_seed = case_seed(o_.seed, index);
      Case c = generate_case_for_seed(f.case_seed, o_.gen);
      f.original_nodes = case_size(c);
      Case out = c;
      f.reproducible = confirm(c, f.failure);
      if (o_.minimize && f.reproducible) {
        MinimizeOptions mo;
        mo.oracle = every_case_;
        if (o_.isolate) {
          bool hang = failure.property == "timeout";
          double t = hang ? std::min(o_.timeout_s, 2.0) : o_.timeout_s;
          OracleOptions shrink = shrink_oracle(every_case_, failure);
          mo.check = [shrink, t](const Case& x) { return check_case_isolated(x, shrink, t); };
          if (hang) mo.max_checks = 30;  // each failing check costs the whole timeout
        }
        MinimizeResult m = minimize(c, failure, mo);
        out = std::move(m.reduced);
        f.failure = m.failure;
        f.steps = m.log;
      }
      f.minimized_nodes = case_size(out);
      if (!o_.out_dir.empty()) {
        out.expect =
            Expectation{f.failure.property, f.failure.stage, f.failure.op, f.failure.module};
        out.note = "found by flatcheck fuzz --seed " + std::to_string(o_.seed) + " (case " +
                   std::to_string(index) + ", " + std::to_string(f.original_nodes) +
                   " nodes, minimized to " + std::to_string(f.minimized_nodes) +
                   "): " + f.failure.message;
        out.seed = f.case_seed;
        f.path = o_.out_dir + "/" + slug(failure, f.case_seed);
        write_file_atomic(f.path, save_case(out));
      }
      done_minimizing_.insert(failure.signature());
      res_.findings.push_back(std::move(f));
    }
    if (!o_.out_dir.empty() && !order.empty()) save_state();  // the findings are minimized now
  }

  // A crash or a hang is checked once more, alone in a fresh process, before it is reported:
  // a worker killed from outside, or a case that only failed beside others, does not fail
  // again. Such a finding is kept, labelled, and not minimized (as ClusterFuzz labels an
  // unreproducible crash). Other failures are deterministic and need no second run.
  bool confirm(const Case& c, Failure& failure) {
    bool unstable = failure.property == "crash" || failure.property == "timeout";
    if (!unstable || !o_.isolate || failure.message.rfind("[did not reproduce", 0) == 0)
      return failure.message.rfind("[did not reproduce", 0) != 0;
    OracleResult again = check_case_isolated(c, every_case_, o_.timeout_s);
    if (again.failure && again.failure->kind() == failure.kind()) return true;
    failure.message = "[did not reproduce alone: " +
                      (again.failure ? "a second run gave " + again.failure->signature()
                                     : std::string("a second run passed")) +
                      "] " + failure.message;
    return false;
  }

  // --out is a folder this campaign can write, held with a lock for the campaign's life, so
  // two campaigns never share in-flight files; checked before any case runs.
  void prepare_out_dir() {
    namespace fs = std::filesystem;
    const std::string& dir = o_.out_dir;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir))
      throw InputError(dir + ": --out must be a folder flatcheck can create and write (" +
                       (ec ? ec.message() : std::string("it exists and is not a folder")) + ")");
    std::string probe = dir + "/.write-probe-" + std::to_string(getpid());
    int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, "x", 1) != 1)
      throw InputError(dir + ": cannot write in --out (" + std::strerror(errno) + ")");
    close(fd);
    unlink(probe.c_str());
    std::string lock_path = dir + "/.campaign.lock";
    lock_fd_ = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ < 0)
      throw InputError(lock_path + ": cannot create the campaign lock (" + std::strerror(errno) +
                       ")");
    if (flock(lock_fd_, LOCK_EX | LOCK_NB) != 0)
      throw InputError(dir + ": another campaign is running in this folder (" + lock_path +
                       " is locked); use another --out");
  }

  // The state file's fields, each checked with its JSON path (core/serialize/fields.h).
  void read_state(JsonRef s) {
    using namespace serial;
    as_object(s, "",
              {"version", "seed", "shard_index", "shard_count", "max_nodes", "next_slot",
               "done_after", "signatures", "cases_done", "inject", "findings"});
    int64_t version = as_int(member(s, "version", ""), "/version", 0, 1 << 20);
    if (version != kStateVersion)
      fail("/version", "a campaign state of version " + std::to_string(version) +
                           "; this build resumes version " + std::to_string(kStateVersion) +
                           " (start a new campaign)");
    JsonRef seed = member(s, "seed", "");
    if (!seed.is_number_unsigned()) fail("/seed", "expected a non-negative integer");
    o_.seed = seed.uint64();
    o_.shard_count =
        static_cast<int>(as_int(member(s, "shard_count", ""), "/shard_count", 1, 1 << 20));
    o_.shard_index = static_cast<int>(
        as_int(member(s, "shard_index", ""), "/shard_index", 0, o_.shard_count - 1));
    o_.gen.max_nodes = static_cast<int>(as_int(member(s, "max_nodes", ""), "/max_nodes", 2, 500));
    res_.first_index = as_int(member(s, "next_slot", ""), "/next_slot", 0, int64_t{1} << 50);
    as_int(member(s, "cases_done", ""), "/cases_done", 0, int64_t{1} << 62);
    // The fault the campaign ran with: a resumed campaign runs with the same one.
    std::string fault = as_string(member(s, "inject", ""), "/inject", 64);
    std::string now(fault_info(active_fault()).name);
    if (fault != now)
      throw InputError("the campaign in " + o_.out_dir + " ran with --inject " + fault +
                       "; resume it with the same (this run has " + now + ")");
    if (auto it = s.find("done_after")) {
      const JsonPath dp = "/done_after";
      as_array(*it, dp, 1000000);
      for (size_t i = 0; i < it->size(); ++i)
        skip_.insert(as_int((*it)[i], idx_path(dp, i), res_.first_index, INT64_MAX));
    }
    if (auto it = s.find("signatures")) {
      const JsonPath sp = "/signatures";
      as_array(*it, sp, 1000000);
      for (size_t i = 0; i < it->size(); ++i)
        known_.insert(as_string((*it)[i], idx_path(sp, i), 1024));
    }
    if (auto it = s.find("findings")) read_findings(*it);
  }

  // The findings the campaign wrote, each {index, property, stage, op, module, minimized}. One
  // not minimized yet (the campaign was killed first) is minimized at the end of this run.
  void read_findings(JsonRef list) {
    using namespace serial;
    const JsonPath fp = "/findings";
    as_array(list, fp, 100000);
    for (size_t i = 0; i < list.size(); ++i) {
      const JsonPath p = idx_path(fp, i);
      JsonRef f = list[i];
      as_object(f, p, {"index", "property", "stage", "op", "module", "minimized"});
      int64_t index = as_int(member(f, "index", p), key_path(p, "index"), 0, int64_t{1} << 50);
      Failure failure{as_string(member(f, "property", p), key_path(p, "property"), 64),
                      as_string(member(f, "stage", p), key_path(p, "stage"), 64),
                      as_string(member(f, "op", p), key_path(p, "op"), 64),
                      "found before the campaign was resumed",
                      "",
                      as_string(member(f, "module", p), key_path(p, "module"), 1024)};
      JsonRef m = member(f, "minimized", p);
      if (!m.is_boolean()) fail(key_path(p, "minimized"), "expected true or false");
      std::string sig = failure.signature();
      if (m.boolean()) {
        minimized_[sig] = index;
        known_.insert(sig);
      } else {
        first_[sig] = {index, failure};
        known_.erase(sig);
      }
      restore_if_missing(index, failure);
    }
  }

  // A finding's file deleted by hand is written again, raw, from its seed (and said so).
  void restore_if_missing(int64_t index, const Failure& failure) {
    uint64_t seed = case_seed(o_.seed, index);
    std::string path = o_.out_dir + "/" + slug(failure, seed);
    if (std::filesystem::exists(path)) return;
    Case c = generate_case_for_seed(seed, o_.gen);
    c.expect = Expectation{failure.property, failure.stage, failure.op, failure.module};
    c.note = "unminimized: written again from its seed on resume (the file was missing)";
    write_file_atomic(path, save_case(c));
    res_.notes.push_back(path + " was missing: written again from its seed");
  }

  // --resume: seed, shard, fault and next slot come from the state file, validated like any
  // input; slots done after the watermark are skipped; found signatures are not reported again,
  // findings not yet minimized are minimized now. Only the state file is read.
  void load_state() {
    std::string path = state_path(o_.out_dir), text = read_file(path);  // errors name the path
    try {
      JsonDoc s = parse_doc(text, default_load_limits());
      read_state(s.root());
    } catch (const InputError& e) {
      throw InputError(path + ": " + e.what());
    }
  }

  void save_state() {
    std::lock_guard<std::mutex> lock(mu_);
    save_state_locked(-1);
  }

  // With mu_ held. `also_done` is a slot finished but not yet marked (-1: none).
  void save_state_locked(int64_t also_done) {
    std::set<std::string> sigs = known_;
    for (const auto& [sig, _] : first_) sigs.insert(sig);
    int64_t next = 0;
    std::vector<int64_t> ahead;
    {
      std::lock_guard<std::mutex> lock(done_mu_);
      next = watermark_;
      std::set<int64_t> done = done_ahead_;
      if (also_done >= next) done.insert(also_done);
      while (done.erase(next)) ++next;
      ahead.assign(done.begin(), done.end());
    }
    for (int64_t k : skip_)
      if (k >= next && !std::binary_search(ahead.begin(), ahead.end(), k)) ahead.push_back(k);
    std::sort(ahead.begin(), ahead.end());
    Json findings = Json::array();
    auto add_finding = [&](int64_t index, const Failure& f, bool minimized) {
      findings.push_back(Json{{"index", index},
                              {"property", f.property},
                              {"stage", f.stage},
                              {"op", f.op},
                              {"module", f.module},
                              {"minimized", minimized}});
    };
    for (const auto& [sig, v] : first_) add_finding(v.first, v.second, done_minimizing_.count(sig));
    for (const auto& [sig, index] : minimized_)
      if (!first_.count(sig)) add_finding(index, split_signature(sig), true);
    check_folder_is_ours();
    Json s{{"version", kStateVersion},
           {"inject", std::string(fault_info(active_fault()).name)},
           {"findings", findings},
           {"seed", o_.seed},
           {"shard_index", o_.shard_index},
           {"shard_count", o_.shard_count},
           {"max_nodes", o_.gen.max_nodes},
           {"next_slot", next},
           {"done_after", ahead},
           {"cases_done", done_.load()},
           {"signatures", std::vector<std::string>(sigs.begin(), sigs.end())}};
    write_file_atomic(state_path(o_.out_dir), dump_canonical(s));
  }

  static constexpr int kStateVersion = 3;

  // A signature "property:stage:op[:module]" as a Failure (for findings known only by it).
  static Failure split_signature(const std::string& sig) {
    std::vector<std::string> part;
    size_t start = 0;
    for (int i = 0; i < 3; ++i) {
      size_t c = sig.find(':', start);
      part.push_back(sig.substr(start, c == std::string::npos ? c : c - start));
      start = c == std::string::npos ? sig.size() : c + 1;
    }
    return Failure{part[0], part[1], part[2], "", "", start < sig.size() ? sig.substr(start) : ""};
  }

  // The output folder is the one this campaign locked: removed (or replaced by a new folder of
  // the same name, where another campaign may now run), it stops with a system failure.
  void check_folder_is_ours() const {
    if (lock_fd_ < 0) return;
    struct stat held {
    }, now{};
    std::string lock_path = o_.out_dir + "/.campaign.lock";
    if (fstat(lock_fd_, &held) != 0 || stat(lock_path.c_str(), &now) != 0 ||
        held.st_ino != now.st_ino || held.st_dev != now.st_dev)
      throw SystemError(o_.out_dir +
                        ": the output folder was removed or replaced while the "
                        "campaign ran; it stops (findings written before are in "
                        "the old folder if it still exists)");
  }

  CampaignOptions o_;
  OracleOptions every_case_;  // o_.oracle with every case re-spelled: confirming and minimizing
  CampaignResult res_;
  std::map<std::string, int64_t> minimized_;  // signature -> case index, minimized earlier
  std::set<std::string> done_minimizing_;     // signatures of first_ minimized in this run
  Clock::time_point t0_;
  std::atomic<int64_t> next_{0}, done_{0}, failing_{0};
  std::atomic<bool> stop_{false}, backend_seen_{false};
  std::atomic<int> finished_{0};
  std::mutex mu_;
  std::exception_ptr error_;  // why the campaign cannot go on (rethrown on the caller's thread)
  std::map<std::string, std::pair<int64_t, Failure>> first_;  // signature -> first case
  std::set<std::string> known_;
  std::set<int64_t> skip_;  // slots a resumed campaign had already finished
  std::mutex done_mu_;
  int64_t watermark_ = 0;         // every slot below is finished
  std::set<int64_t> done_ahead_;  // finished slots above the watermark
  int lock_fd_ = -1;              // the flock on <out>/.campaign.lock
};

}  // namespace

CampaignResult run_campaign(const CampaignOptions& opts) {
  return Campaign(opts).run();
}

size_t distinct_signatures(const CampaignResult& r) {
  std::set<std::string> sigs;
  for (const auto& f : r.findings) sigs.insert(f.failure.signature());
  return sigs.size();
}

}  // namespace flatcheck
