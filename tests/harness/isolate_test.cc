// Process isolation: a crash or hang in a forked worker becomes a finding; the worker protocol
// round-trips results and rejects garbled lines.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

#include "core/base/faults.h"
#include "core/passes/passes.h"
#include "core/pipeline/pipeline.h"
#include "core/serialize/serialize.h"
#include "generators/examples.h"
#include "generators/generate.h"
#include "harness/campaign.h"
#include "harness/isolate.h"
#include "harness/minimize.h"
#include "harness/oracle.h"
#include "tests/harness/cli_run.h"

namespace flatcheck {
namespace {

// Crashes and hangs in the system under test: an isolated campaign records them with their
// stage, writes the case, and goes on to the end of its budget.
TEST(IsolationTest, AnAbortIsAFindingAndTheCampaignGoesOn) {
  auto dir = std::filesystem::temp_directory_path() / "flatcheck-isolation-abort";
  std::filesystem::remove_all(dir);
  ScopedFault f(Fault::kEngineBuilderAbort);
  CampaignOptions o;
  o.seed = 1;
  o.cases = 150;
#ifdef FLATCHECK_SANITIZED
  o.jobs = 1;  // fork() from one campaign thread: sanitizer runtimes hold locks across threads
#else
  o.jobs = 2;
#endif
  o.isolate = true;
  o.timeout_s = 60;  // no case hangs here; sanitizer builds under load crash slowly
  o.out_dir = dir.string();
  CampaignResult r = run_campaign(o);
  EXPECT_EQ(r.cases, 150);
  ASSERT_FALSE(r.findings.empty());
  for (const auto& x : r.findings) EXPECT_EQ(x.failure.property, "crash") << x.failure.signature();
  EXPECT_EQ(r.findings[0].failure.signature(), "crash:partitioned:SIGABRT");
  EXPECT_GT(r.failing_cases, 1);
  EXPECT_FALSE(std::filesystem::exists(dir / ".inflight"));  // in-flight cases stay in memory
  Case c = load_case_file(r.findings[0].path);
  EXPECT_LE(case_size(c), r.findings[0].original_nodes);
  OracleResult again = check_case_isolated(c, OracleOptions{}, 10);
  ASSERT_TRUE(again.failure.has_value());
  EXPECT_EQ(again.failure->signature(), "crash:partitioned:SIGABRT");
  set_active_fault(Fault::kNone);
  EXPECT_FALSE(check_case(c).failure.has_value());
  std::filesystem::remove_all(dir);
}

TEST(IsolationTest, AHangIsATimeoutFindingAndTheCampaignGoesOn) {
  auto dir = std::filesystem::temp_directory_path() / "flatcheck-isolation-hang";
  std::filesystem::remove_all(dir);
  ScopedFault f(Fault::kUnflattenDedupHang);
  CampaignOptions o;
  o.seed = 1;
  o.cases = 20;  // each hanging case costs the 2 s timeout: 60 cases took 70 s on 2 cores
  o.jobs = 2;
  o.isolate = true;
  o.timeout_s = 2.0;  // far above a case's normal time (a few ms, even under sanitizers)
  o.out_dir = dir.string();
  o.minimize = false;
  CampaignResult r = run_campaign(o);
  EXPECT_EQ(r.cases, 20);
  // The hang is found; on a badly overloaded machine a slow case may time out too, so other
  // findings are allowed as long as they are timeouts as well.
  bool hang_found = false;
  for (const auto& f : r.findings) {
    EXPECT_EQ(f.failure.property, "timeout") << f.failure.signature();
    hang_found |= f.failure.signature() == "timeout:unflattened:-";
    EXPECT_TRUE(std::filesystem::exists(f.path));
  }
  EXPECT_TRUE(hang_found);
  EXPECT_GE(r.failing_cases, 1);
  std::filesystem::remove_all(dir);
}

TEST(IsolationTest, ResumeContinuesWhereTheCampaignStoppedAndSkipsKnownSignatures) {
  auto dir = std::filesystem::temp_directory_path() / "flatcheck-resume";
  std::filesystem::remove_all(dir);
  ScopedFault f(Fault::kDceDropsMutation);
  CampaignOptions o;
  o.seed = 2;
  o.cases = 100;
  o.out_dir = dir.string();
  o.minimize = false;
  CampaignResult first = run_campaign(o);
  ASSERT_FALSE(first.findings.empty());
  CampaignOptions again;
  again.resume = true;
  again.cases = 100;
  again.out_dir = dir.string();
  again.minimize = false;
  CampaignResult second = run_campaign(again);
  EXPECT_EQ(second.first_index, 100);
  EXPECT_EQ(second.cases, 100);
  for (const auto& x : second.findings)
    for (const auto& y : first.findings) EXPECT_NE(x.failure.signature(), y.failure.signature());
  EXPECT_GT(second.known_skipped, 0);
  std::filesystem::remove_all(dir);
}

// A worker batch whose case at index `crash_at` aborts in the flattened stage: the stage
// override counts the cases of its forked worker.
struct BatchRun {
  std::vector<int64_t> passed;
  std::vector<std::pair<int64_t, Failure>> failed;
  std::vector<std::optional<std::string>> texts;  // with each failure
  int64_t next = -1;
};

WorkerBatch crashing_batch(int64_t to, int64_t crash_at) {
  WorkerBatch b;
  b.from = 0;
  b.to = to;
  b.make_case = [](int64_t k) { return generate_case_for_seed(1000 + static_cast<uint64_t>(k)); };
  auto count = std::make_shared<int64_t>(0);
  b.oracle.stages[Stage::kFlattened] =
      program_pass(Stage::kFlattened, [count, crash_at](const Program& p) {
        if ((*count)++ == crash_at) std::abort();
        return flatten(p);
      });
  b.timeout_s = 60;
  return b;
}

BatchRun run_batch(const WorkerBatch& b) {
  BatchRun out;
  WorkerEvents ev;
  ev.result = [&](int64_t k, const OracleResult& r, const std::string* text) {
    if (!r.failure) return out.passed.push_back(k);
    out.failed.emplace_back(k, *r.failure);
    out.texts.push_back(text ? std::optional<std::string>(*text) : std::nullopt);
  };
  ev.batch_done = [](const OracleResult&) {};
  out.next = run_worker_batch(b, ev);
  return out;
}

// The case in flight is recorded in shared memory, not a file: a crash comes with exactly the
// text of the case that ran, and every case before it that passed is reported passed, whether
// its line was sent or still waiting in the dead worker.
TEST(WorkerBatchTest, ACrashComesWithTheRecordedCaseAndThePassesBeforeIt) {
  WorkerBatch b = crashing_batch(12, 5);
  b.record_case = true;
  BatchRun r = run_batch(b);
  EXPECT_EQ(r.passed, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  ASSERT_EQ(r.failed.size(), 1u);
  EXPECT_EQ(r.failed[0].first, 5);
  EXPECT_EQ(r.failed[0].second.signature(), "crash:flattened:SIGABRT");
  EXPECT_EQ(r.next, 6);
  ASSERT_TRUE(r.texts[0].has_value());
  EXPECT_EQ(*r.texts[0], save_case(generate_case_for_seed(1005), /*compact=*/true));
}

TEST(WorkerBatchTest, NoTextWithoutRecordCaseOrPastTheCapacity) {
  WorkerBatch off = crashing_batch(3, 1);
  BatchRun a = run_batch(off);
  ASSERT_EQ(a.failed.size(), 1u);
  EXPECT_FALSE(a.texts[0].has_value());
  WorkerBatch small = crashing_batch(3, 1);
  small.record_case = true;
  small.case_capacity = 16;  // every case text is longer
  BatchRun b = run_batch(small);
  ASSERT_EQ(b.failed.size(), 1u);
  EXPECT_EQ(b.failed[0].first, 1);
  EXPECT_FALSE(b.texts[0].has_value());
}

// A worker that dies between cases (here: once, just before case 3 starts; in life heap damage
// from an earlier case, a signal from outside) does not end the batch or the campaign: the
// cases it ran since its last report are re-run alone, and the death is attributed to the last
// case it started, labelled as not reproducing alone; the batch goes on after it.
TEST(WorkerBatchTest, ADeathBetweenCasesIsAttributedAndTheBatchGoesOn) {
  auto flag = std::filesystem::temp_directory_path() / "flatcheck-death-between-cases";
  std::filesystem::remove(flag);
  WorkerBatch b = crashing_batch(6, -1);
  pid_t test_pid = getpid();
  b.skip = [test_pid, flag](int64_t k) {
    if (getpid() != test_pid && k == 3 && !std::filesystem::exists(flag)) {
      std::ofstream(flag) << "crashed once";
      raise(SIGTERM);  // not SIGSEGV: a sanitizer runtime turns that into SIGABRT
    }
    return false;
  };
  std::vector<int64_t> passed;
  std::vector<std::pair<int64_t, Failure>> failed;
  WorkerEvents ev;
  ev.result = [&](int64_t k, const OracleResult& r, const std::string*) {
    if (r.failure)
      failed.emplace_back(k, *r.failure);
    else
      passed.push_back(k);
  };
  ev.death = [&](int64_t k, const OracleResult& r) { failed.emplace_back(k, *r.failure); };
  ev.batch_done = [](const OracleResult&) {};
  int64_t next = run_worker_batch(b, ev);  // no SystemError: the death is a finding
  EXPECT_EQ(next, 3);
  b.from = next;
  EXPECT_EQ(run_worker_batch(b, ev), 6);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].first, 2);
  EXPECT_EQ(failed[0].second.signature(), "crash:between-cases:SIGTERM");
  EXPECT_EQ(failed[0].second.message.rfind("[did not reproduce alone]", 0), 0u)
      << failed[0].second.message;
  for (int64_t k : {0, 1, 3, 4, 5})
    EXPECT_NE(std::find(passed.begin(), passed.end(), k), passed.end()) << "case " << k;
  std::filesystem::remove(flag);
}

// A worker killed from outside while it generates a case (here: once, in case 2) leaves no
// text and no repeatable crash: the case is generated and run once more alone, passes, and the
// death is reported labelled as not reproducing; a generator that dies every time is reported
// unlabelled (the campaign stops on it as a generator bug).
TEST(WorkerBatchTest, ADeathWhileGeneratingIsReRunAloneBeforeItIsReported) {
  auto flag = std::filesystem::temp_directory_path() / "flatcheck-death-in-generate";
  for (bool every_time : {false, true}) {
    std::filesystem::remove(flag);
    WorkerBatch b = crashing_batch(4, -1);
    pid_t test_pid = getpid();
    b.make_case = [test_pid, flag, every_time](int64_t k) {
      if (getpid() != test_pid && k == 2 && (every_time || !std::filesystem::exists(flag))) {
        std::ofstream(flag) << "killed once";
        raise(SIGKILL);
      }
      return generate_case_for_seed(1000 + static_cast<uint64_t>(k));
    };
    BatchRun r = run_batch(b);
    ASSERT_EQ(r.failed.size(), 1u) << every_time;
    EXPECT_EQ(r.failed[0].first, 2);
    EXPECT_EQ(r.failed[0].second.signature(), "crash:generate:SIGKILL");
    bool labelled = r.failed[0].second.message.rfind("[did not reproduce alone", 0) == 0;
    EXPECT_EQ(labelled, !every_time) << r.failed[0].second.message;
    EXPECT_EQ(r.passed, (std::vector<int64_t>{0, 1})) << every_time;
    EXPECT_EQ(r.next, 3);
  }
  std::filesystem::remove(flag);
}

// `stop` ends a batch early: the worker is asked between cases, so a batch of 2,000 cases stops
// long before its end once stop says so (a count, not a time).
TEST(WorkerBatchTest, StopEndsTheBatchBetweenCases) {
  WorkerBatch b = crashing_batch(2000, -1);
  size_t seen = 0;
  b.stop = [&seen] { return seen >= 3; };
  BatchRun r;
  WorkerEvents ev;
  ev.result = [&](int64_t, const OracleResult& x, const std::string*) {
    ++seen;
    EXPECT_FALSE(x.failure.has_value());
  };
  ev.batch_done = [](const OracleResult&) {};
  EXPECT_EQ(run_worker_batch(b, ev), 2000);
  EXPECT_GE(seen, 3u);
  EXPECT_LT(seen, 1500u);
  WorkerBatch all = crashing_batch(40, -1);
  EXPECT_EQ(run_batch(all).passed.size(), 40u);  // without stop, every case runs
}

TEST(WorkerProtocolTest, ResultsRoundTripThroughTheirOneLineEncoding) {
  OracleResult r;
  r.backend = "cpu";
  r.coverage.nodes = 7;
  r.coverage.paths = 5;
  r.coverage.flat_nodes = 11;
  r.coverage.ops["relu"] = 3;
  r.failure = Failure{"mismatch", "flattened", "relu", "wired wrong", "n@1/relu", "n"};
  auto back = decode_result(encode_result(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->backend, "cpu");
  EXPECT_EQ(back->coverage.nodes, 7);
  EXPECT_EQ(back->coverage.paths, 5);
  EXPECT_EQ(back->coverage.flat_nodes, 11);
  EXPECT_EQ(back->coverage.ops.at("relu"), 3);
  ASSERT_TRUE(back->failure);
  EXPECT_EQ(back->failure->signature(), "mismatch:flattened:relu:n");
  EXPECT_EQ(back->failure->first_divergence, "n@1/relu");
}

TEST(WorkerProtocolTest, WellFormedLinesParse) {
  auto p = parse_worker_line("P 12");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->kind, 'P');
  EXPECT_EQ(p->index, 12);
  OracleResult f;
  f.failure = Failure{"crash", "partitioned", "SIGABRT", "", "", ""};
  auto r = parse_worker_line("R 4 " + encode_result(f));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->index, 4);
  ASSERT_TRUE(r->result.failure);
  EXPECT_EQ(r->result.failure->op, "SIGABRT");
  ASSERT_TRUE(parse_worker_line("C " + encode_result(OracleResult{})));
}

TEST(WorkerProtocolTest, GarbledLinesAreRejectedNotThrown) {
  for (const char* line : {"", "P", "P ", "P x", "P -1", "P 99999999999999999999", "P 1 extra",
                           "S 12",  // no longer a message: a case's start is in shared memory
                           "R 3", "Q 1", "R 3 {not json", "R 3 {\"cov\": [1, 2]}", "C {}", "C [1]",
                           "R 3 {\"cov\":[0,0,0,0,0,0,0,\"x\"],\"ops\":{}}", "\x01\x02", "P1"})
    EXPECT_FALSE(parse_worker_line(line)) << "accepted: " << line;
}

}  // namespace
}  // namespace flatcheck
