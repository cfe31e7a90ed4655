// Campaign options by effect: the backend named in results, jobs, max_nodes, minimize.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/runtime/cuda/cuda_backend.h"
#include "core/serialize/serialize.h"
#include "generators/examples.h"
#include "harness/campaign.h"
#include "harness/oracle.h"
#include "tests/harness/cli_run.h"
#include "tests/support/recording_backend.h"

namespace flatcheck {
namespace {

CampaignOptions small_campaign(Backend* b) {
  CampaignOptions o;
  o.seed = 3;
  o.cases = 40;
  o.out_dir = "";
  o.oracle.backend = b;
  return o;
}

TEST(CampaignBackendTest, InProcessCampaignsRunOnTheOraclesBackendAndNameIt) {
  RecordingBackend rec;
  CampaignResult r = run_campaign(small_campaign(&rec));
  EXPECT_EQ(r.backend, "recording");
  EXPECT_GT(rec.total(), 0);
}

TEST(CampaignBackendTest, IsolatedWorkersReportTheBackendThatRan) {
  RecordingBackend rec;  // used in the forked children: its counters stay there
  CampaignOptions o = small_campaign(&rec);
  o.isolate = true;
  CampaignResult r = run_campaign(o);
  EXPECT_EQ(r.cases, 40);
  EXPECT_EQ(r.backend, "recording");
}

TEST(CampaignBackendTest, JobsRunCasesOnThatManyThreads) {
  RecordingBackend one, two;
  CampaignOptions a = small_campaign(&one), b = small_campaign(&two);
  a.jobs = 1;
  b.jobs = 2;
  b.cases = 400;  // enough that both workers claim cases
  run_campaign(a);
  run_campaign(b);
  EXPECT_EQ(one.threads(), 1u);
  EXPECT_EQ(two.threads(), 2u);
}

TEST(CampaignBackendTest, AnUnavailableDeviceEndsTheCampaignWithTheReason) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: the campaign would run";
  CampaignOptions o = small_campaign(nullptr);
  o.oracle.device = Device::kCuda;
  EXPECT_THROW(run_campaign(o), InputError);
  o.isolate = true;  // forked workers cannot hold a CUDA context: refused before any case
  EXPECT_THROW(run_campaign(o), InputError);
}

TEST(CampaignOptionsTest, MaxNodesBoundsTheGeneratedGraphs) {
  CampaignOptions small = small_campaign(nullptr), large = small_campaign(nullptr);
  small.gen.max_nodes = 3;
  large.gen.max_nodes = 80;
  double a = static_cast<double>(run_campaign(small).totals.nodes);
  double b = static_cast<double>(run_campaign(large).totals.nodes);
  EXPECT_GT(b, 3 * a) << "nodes with --max-nodes 3: " << a << ", with 80: " << b;
}

TEST(CampaignOptionsTest, MinimizeShrinksFindingsOnlyWhenOn) {
  ScopedFault f(Fault::kInlineByName);
  CampaignOptions on = small_campaign(nullptr), off = small_campaign(nullptr);
  on.cases = off.cases = 400;
  on.stop_at_first = off.stop_at_first = true;
  off.minimize = false;
  CampaignResult a = run_campaign(on), b = run_campaign(off);
  ASSERT_FALSE(a.findings.empty());
  ASSERT_FALSE(b.findings.empty());
  EXPECT_LT(a.findings[0].minimized_nodes, a.findings[0].original_nodes);
  EXPECT_EQ(b.findings[0].minimized_nodes, b.findings[0].original_nodes);
}

}  // namespace
}  // namespace flatcheck
