#include "harness/campaign.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "core/ir/check.h"
#include "harness/minimize.h"

namespace flatcheck {

void write_file_atomic(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  fs::path p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path + ": cannot write file");
    out << text;
    out.flush();
    if (!out) throw InputError(path + ": cannot write file");
  }
  fs::rename(tmp, p);
}

void add_coverage(Coverage& a, const Coverage& b) {
  for (const auto& [k, v] : b.ops) a.ops[k] += v;
  a.nodes += b.nodes;
  a.calls += b.calls;
  a.acc_partitions += b.acc_partitions;
  a.fallback_partitions += b.fallback_partitions;
  a.renamed_nodes += b.renamed_nodes;
  a.specialized_fqns += b.specialized_fqns;
  a.buffer_mutations += b.buffer_mutations;
  a.paths += b.paths;
}

namespace {

std::string slug(const Failure& f, uint64_t seed) {
  std::string s = f.property + "-" + f.stage + "-" + (f.op == "-" ? "none" : f.op);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '_';
  char hex[24];
  std::snprintf(hex, sizeof hex, "-%016llx", static_cast<unsigned long long>(seed));
  return s + hex + ".json";
}

}  // namespace

CampaignResult run_campaign(const CampaignOptions& o) {
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  std::atomic<int64_t> next{0}, done{0}, failing{0};
  std::atomic<bool> stop{false};
  std::atomic<int> finished{0};
  std::mutex mu;
  CampaignResult res;
  std::map<std::string, std::pair<int64_t, Failure>> first;  // signature -> first case

  auto out_of_time = [&] {
    return o.time_s > 0 && std::chrono::duration<double>(Clock::now() - t0).count() >= o.time_s;
  };
  auto worker = [&] {
    Coverage local;
    while (!stop.load()) {
      int64_t k = next.fetch_add(1);
      if (o.time_s <= 0 && k >= o.cases) break;
      if (out_of_time()) break;
      int64_t index = static_cast<int64_t>(o.shard_index) + k * o.shard_count;
      uint64_t seed = case_seed(o.seed, index);
      Case c = generate_case_for_seed(seed, o.gen);
      OracleResult r = check_case(c, o.oracle);
      add_coverage(local, r.coverage);
      if (r.failure) {
        failing.fetch_add(1);
        std::lock_guard<std::mutex> lock(mu);
        auto sig = r.failure->signature();
        auto it = first.find(sig);
        if (it == first.end() || it->second.first > index) {
          first[sig] = {index, *r.failure};
          // Write the raw case at once, before anything else can go wrong.
          if (!o.out_dir.empty()) {
            c.expect = Expectation{r.failure->property, r.failure->stage, r.failure->op};
            c.note = "unminimized: " + r.failure->message;
            write_file_atomic(o.out_dir + "/" + slug(*r.failure, seed), save_case(c));
          }
        }
        if (o.stop_at_first) stop.store(true);
      }
      done.fetch_add(1);
    }
    std::lock_guard<std::mutex> lock(mu);
    add_coverage(res.totals, local);
    finished.fetch_add(1);
  };

  int jobs = std::max(1, o.jobs);
  std::vector<std::thread> threads;
  for (int j = 0; j < jobs; ++j) threads.emplace_back(worker);
  if (o.progress) {
    while (finished.load() < jobs) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      o.progress(done.load(), failing.load(),
                 std::chrono::duration<double>(Clock::now() - t0).count());
    }
  }
  for (auto& t : threads) t.join();
  res.cases = done.load();
  res.failing_cases = failing.load();
  res.seconds = std::chrono::duration<double>(Clock::now() - t0).count();

  std::vector<std::pair<int64_t, Failure>> order;
  for (auto& [sig, v] : first) order.push_back(v);
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  if (!order.empty()) res.first_failing_case = order.front().first;
  for (auto& [index, failure] : order) {
    Finding f;
    f.failure = failure;
    f.case_index = index;
    f.case_seed = case_seed(o.seed, index);
    Case c = generate_case_for_seed(f.case_seed, o.gen);
    f.original_nodes = case_size(c);
    Case out = c;
    if (o.minimize) {
      MinimizeOptions mo;
      mo.oracle = o.oracle;
      MinimizeResult m = minimize(c, failure, mo);
      out = std::move(m.reduced);
      f.failure = m.failure;
      f.steps = m.log;
    }
    f.minimized_nodes = case_size(out);
    if (!o.out_dir.empty()) {
      out.expect = Expectation{f.failure.property, f.failure.stage, f.failure.op};
      out.note = "found by flatcheck fuzz --seed " + std::to_string(o.seed) + " (case " +
                 std::to_string(index) + ", " + std::to_string(f.original_nodes) +
                 " nodes, minimized to " + std::to_string(f.minimized_nodes) +
                 "): " + f.failure.message;
      out.seed = f.case_seed;
      f.path = o.out_dir + "/" + slug(failure, f.case_seed);
      write_file_atomic(f.path, save_case(out));
    }
    res.findings.push_back(std::move(f));
  }
  return res;
}

}  // namespace flatcheck
