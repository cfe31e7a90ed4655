// Fuzz campaigns: generate cases from a seed, check each with the oracle on J worker threads,
// deduplicate failures by signature, minimize the first case of each signature and write it
// as a case file that `flatcheck replay` reproduces.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "generators/generate.h"
#include "harness/oracle.h"

namespace flatcheck {

struct CampaignOptions {
  uint64_t seed = 1;
  int64_t cases = 2000;  // stop after this many cases (ignored when time_s > 0)
  double time_s = 0;     // stop after this many seconds
  int jobs = 1;
  int shard_index = 0, shard_count = 1;  // this shard runs case indices i with i % count == index
  std::string out_dir = "corpus/found";  // empty: write nothing
  bool minimize = true;
  bool stop_at_first = false;  // stop at the first failing case (detection runs)
  bool isolate = false;  // run cases in forked worker processes (crashes and hangs become findings)
  double timeout_s = 10;  // per case, isolated mode
  int batch = 1024;       // cases per forked worker (it ends early when the campaign stops)
  // Continue the campaign recorded in out_dir/campaign.state (written every 2 s and at each
  // finding, so a campaign killed with SIGKILL resumes with nothing lost or repeated).
  bool resume = false;
  const std::atomic<bool>* interrupt = nullptr;  // set (e.g. by SIGINT) to stop cleanly
  GenOptions gen;
  OracleOptions oracle;
  // Cases are checked with oracle.spelling_every set to this (re-spelling a case's documents
  // costs about as much as the rest of its checks); a finding is confirmed, minimized and
  // replayed with every case re-spelled (1).
  int spelling_every = 16;
  // Progress callback, called from the coordinating thread about 5 times a second.
  std::function<void(int64_t done, int64_t failing, double seconds)> progress;
  // Called before each finding is confirmed and minimized, after the cases ran (k from 1 of n):
  // minimizing can take longer than the campaign did (a GPU re-runs every candidate there).
  std::function<void(size_t k, size_t n, const std::string& signature)> minimizing;
};

struct Finding {
  Failure failure;
  int64_t case_index = 0;  // index within the campaign (case seed: mix_seed(seed, index))
  uint64_t case_seed = 0;
  size_t original_nodes = 0, minimized_nodes = 0;
  std::string path;                // the written case file, if any
  std::vector<std::string> steps;  // minimizer steps kept
  // False for a crash or hang that a second run, alone in a fresh process, did not repeat (its
  // message says so; it is kept, not minimized).
  bool reproducible = true;
};

struct CampaignResult {
  int64_t first_index = 0;    // the case slot the campaign started at (non-zero when resumed)
  int64_t known_skipped = 0;  // failing cases whose signature an earlier run already found
  int64_t cases = 0;
  int64_t failing_cases = 0;
  double seconds = 0;
  std::vector<Finding> findings;  // one per signature, by first case index
  Coverage totals;
  int64_t first_failing_case = -1;
  std::string backend;  // the backend the cases ran on, as the oracle reported it ("" if none ran)
  std::vector<std::string> notes;  // things the user should know (a finding restored on resume)
  // What actually ran (a resumed campaign takes these from its state file).
  uint64_t seed = 0;
  int shard_index = 0, shard_count = 1, max_nodes = 0;
};

// Throws InputError when the oracle's device is not available (see check_case).
CampaignResult run_campaign(const CampaignOptions& opts);

// The distinct signatures of a campaign's findings as reported (after minimization two findings
// can end with one signature).
size_t distinct_signatures(const CampaignResult& r);

// The seed of case `index` of a campaign with seed `seed`.
inline uint64_t case_seed(uint64_t seed, int64_t index) {
  return mix_seed(seed, static_cast<uint64_t>(index));
}

// Writes `text` to `path` atomically (a temporary file renamed into place); creates folders.
void write_file_atomic(const std::string& path, const std::string& text);

}  // namespace flatcheck
