// Process isolation: a crash or hang in a forked worker becomes a finding; the worker protocol
// round-trips results and rejects garbled lines.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/base/faults.h"
#include "core/serialize/serialize.h"
#include "generators/examples.h"
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
  o.cases = 60;
  o.jobs = 2;
  o.isolate = true;
  o.timeout_s = 2.0;  // far above a case's normal time (a few ms, even under sanitizers)
  o.out_dir = dir.string();
  o.minimize = false;
  CampaignResult r = run_campaign(o);
  EXPECT_EQ(r.cases, 60);
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

TEST(WorkerProtocolTest, ResultsRoundTripThroughTheirOneLineEncoding) {
  OracleResult r;
  r.backend = "cpu";
  r.coverage.nodes = 7;
  r.coverage.paths = 5;
  r.coverage.ops["relu"] = 3;
  r.failure = Failure{"mismatch", "flattened", "relu", "wired wrong", "n@1/relu", "n"};
  auto back = decode_result(encode_result(r));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->backend, "cpu");
  EXPECT_EQ(back->coverage.nodes, 7);
  EXPECT_EQ(back->coverage.paths, 5);
  EXPECT_EQ(back->coverage.ops.at("relu"), 3);
  ASSERT_TRUE(back->failure);
  EXPECT_EQ(back->failure->signature(), "mismatch:flattened:relu:n");
  EXPECT_EQ(back->failure->first_divergence, "n@1/relu");
}

TEST(WorkerProtocolTest, WellFormedLinesParse) {
  auto s = parse_worker_line("S 12");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, 'S');
  EXPECT_EQ(s->index, 12);
  auto p = parse_worker_line("P 3");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->kind, 'P');
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
  for (const char* line : {"", "S", "S ", "S x", "S -1", "S 99999999999999999999", "P 1 extra",
                           "R 3", "Q 1", "R 3 {not json", "R 3 {\"cov\": [1, 2]}", "C {}", "C [1]",
                           "R 3 {\"cov\":[0,0,0,0,0,0,0,\"x\"],\"ops\":{}}", "S1", "\x01\x02"})
    EXPECT_FALSE(parse_worker_line(line)) << "accepted: " << line;
}

}  // namespace
}  // namespace flatcheck
