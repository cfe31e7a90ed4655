// Campaigns: deterministic across jobs and shards, findings written and minimized.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/base/faults.h"
#include "core/serialize/serialize.h"
#include "generators/examples.h"
#include "harness/campaign.h"
#include "harness/ci_report.h"
#include "harness/isolate.h"
#include "harness/minimize.h"
#include "harness/oracle.h"
#include "tests/harness/cli_run.h"

namespace flatcheck {
namespace {

TEST(CampaignTest, FindingsDoNotDependOnTheNumberOfJobs) {
  ScopedFault f(Fault::kEngineInputsBySortedName);
  auto run = [](int jobs) {
    CampaignOptions o;
    o.seed = 3;
    o.cases = 300;
    o.jobs = jobs;
    o.out_dir = "";
    o.minimize = false;
    CampaignResult r = run_campaign(o);
    std::vector<std::pair<std::string, int64_t>> out;
    for (const auto& x : r.findings) out.emplace_back(x.failure.signature(), x.case_index);
    return std::make_pair(out, r.failing_cases);
  };
  auto one = run(1), two = run(2);
  EXPECT_FALSE(one.first.empty());
  EXPECT_EQ(one, two);
}

TEST(CampaignTest, ShardsPartitionTheCases) {
  ScopedFault f(Fault::kMemoryPlanOverlap);
  auto failing = [](int index, int count, int64_t cases) {
    CampaignOptions o;
    o.seed = 5;
    o.cases = cases;
    o.shard_index = index;
    o.shard_count = count;
    o.out_dir = "";
    o.minimize = false;
    return run_campaign(o).failing_cases;
  };
  EXPECT_EQ(failing(0, 1, 400), failing(0, 2, 200) + failing(1, 2, 200));
}

TEST(CampaignTest, WritesAMinimizedReproThatReplayReproduces) {
  auto dir = std::filesystem::temp_directory_path() / "flatcheck-campaign-test";
  std::filesystem::remove_all(dir);
  ScopedFault f(Fault::kDceDropsMutation);
  CampaignOptions o;
  o.seed = 1;
  o.cases = 200;
  o.out_dir = dir.string();
  CampaignResult r = run_campaign(o);
  ASSERT_FALSE(r.findings.empty());
  for (const auto& x : r.findings) {
    Case c = load_case_file(x.path);
    ASSERT_TRUE(c.expect.has_value());
    EXPECT_EQ(c.expect->property + ":" + c.expect->stage + ":" + c.expect->op,
              x.failure.signature());
    EXPECT_TRUE(check_case(c).failure.has_value());
  }
  std::filesystem::remove_all(dir);
}

// The minimizing callback announces each finding before it is minimized: k = 1..n, n the
// number of findings, each with its finding's signature.
TEST(CampaignTest, AnnouncesEachFindingBeforeMinimizingIt) {
  ScopedFault f(Fault::kDceDropsMutation);
  CampaignOptions o;
  o.seed = 1;
  o.cases = 200;
  o.isolate = false;
  o.out_dir = "";
  std::vector<std::string> seen;
  o.minimizing = [&](size_t k, size_t n, const std::string& signature) {
    EXPECT_EQ(k, seen.size() + 1);
    seen.push_back(std::to_string(n) + " " + signature);
  };
  CampaignResult r = run_campaign(o);
  ASSERT_FALSE(r.findings.empty());
  ASSERT_EQ(seen.size(), r.findings.size());
  for (size_t i = 0; i < seen.size(); ++i)
    EXPECT_EQ(seen[i], std::to_string(r.findings.size()) + " " + r.findings[i].failure.signature());
}

// A user's pass may throw any bytes (terminal controls, ill-formed UTF-8): the finding is kept,
// in process and isolated; its message is printable and its file loads; the SARIF report, JSON
// that must be UTF-8, is written.
TEST(CampaignTest, AFindingWhoseMessageHoldsAnyBytesIsKeptAndReported) {
  for (bool isolate : {false, true}) {
    auto dir = std::filesystem::temp_directory_path() / "flatcheck-campaign-bytes";
    std::filesystem::remove_all(dir);
    CampaignOptions o;
    o.seed = 1;
    o.cases = 4;
    o.isolate = isolate;
    o.minimize = false;
    o.out_dir = dir.string();
    o.oracle.stages[Stage::kFlattened] =
        program_pass(Stage::kFlattened, [](const Program&) -> Program {
          throw std::runtime_error("my pass: \x1b[2J\xff\xfe\xc2\x9b!");
        });
    CampaignResult r = run_campaign(o);
    ASSERT_FALSE(r.findings.empty()) << isolate;
    std::vector<ReportItem> items;
    for (const auto& x : r.findings) {
      const std::string& m = x.failure.message;
      EXPECT_NE(m.find("my pass: \\x1b[2J\\xff\\xfe\\u009b!"), std::string::npos) << m;
      ASSERT_FALSE(x.path.empty());
      EXPECT_NE(load_case_file(x.path).note.find("\\xff\\xfe"), std::string::npos);
      items.push_back({x.path, x.failure.signature(), x.failure.message, x.path, ""});
    }
    std::string sarif = sarif_report(items, "test", "flatcheck fuzz");
    EXPECT_NE(sarif.find("\\\\xff"), std::string::npos) << sarif.substr(0, 2000);
    std::filesystem::remove_all(dir);
  }
}

}  // namespace
}  // namespace flatcheck
