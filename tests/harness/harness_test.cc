// The harness: the oracle accepts the fault-free core and catches every injected fault within
// a bounded budget (the self-test), the minimizer keeps signatures, campaigns are
// deterministic across jobs, and the CLI keeps its exit-code contract.
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

// The budget of the fault self-test: every fault must be found within this many cases of the
// campaign with seed 1, and the fault-free core must pass the same cases.
constexpr int64_t kSelfTestBudget = 2000;

TEST(OracleTest, FaultFreeCoreFailsNoCase) {
  for (uint64_t i = 0; i < 300; ++i) {
    auto r = check_case(generate_case_for_seed(case_seed(7, static_cast<int64_t>(i))));
    ASSERT_FALSE(r.failure.has_value())
        << "case " << i << ": " << r.failure->signature() << ": " << r.failure->message;
    EXPECT_EQ(r.coverage.paths, 5);
  }
}

TEST(OracleTest, AnExceptionInTheSystemUnderTestIsAFailureNotACrash) {
  Case c;
  c.module = graph_break_example();
  c.inputs = {Tensor({4, 4}, std::vector<float>(16, 1.0f))};
  ScopedFault by_name(Fault::kInlineByName);
  auto r = check_case(c);
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(r.failure->stage, "flattened");
  EXPECT_EQ(r.failure->property, "lint");
}

TEST(OracleTest, LocalizesTheFirstDivergingNode) {
  Case c;
  c.module = unflatten_example(false);
  c.inputs = {Tensor::full({1}, 1.0f)};
  ScopedFault first_call(Fault::kUnflattenFirstCallGraph);
  auto r = check_case(c);
  ASSERT_TRUE(r.failure.has_value());
  // The eager root graph calls n as %n and %n_1 (the second call, flag False); that call's
  // result is the first value that differs.
  EXPECT_EQ(r.failure->signature(), "mismatch:unflattened:n");
  EXPECT_EQ(r.failure->first_divergence, "n_1");
}

TEST(OracleTest, NanPolicyCanRelaxPayloads) {
  Tensor a({1}, {bits_float(0x7fc00000u)}), b({1}, {bits_float(0x7fc00001u)});
  EXPECT_FALSE(same_tensor(a, b, true));
  EXPECT_TRUE(same_tensor(a, b, false));
  EXPECT_FALSE(same_tensor(Tensor({1}, {0.0f}), Tensor({1}, {-0.0f}), false));
}

class FaultSelfTestProperty : public testing::TestWithParam<FaultInfo> {};

}  // namespace

void PrintTo(const FaultInfo& f, std::ostream* os) {
  *os << f.name;
}

namespace {

TEST_P(FaultSelfTestProperty, IsDetectedWithinTheBudget) {
  ScopedFault f(GetParam().fault);
  CampaignOptions o;
  o.seed = 1;
  o.cases = kSelfTestBudget;
  o.stop_at_first = true;
  o.out_dir = "";
  CampaignResult r = run_campaign(o);
  ASSERT_FALSE(r.findings.empty())
      << GetParam().name << " not found in " << kSelfTestBudget << " cases";
  const Finding& found = r.findings.front();
  EXPECT_LE(found.minimized_nodes, found.original_nodes);
  // The minimized repro fails with the fault and passes without it.
  Case repro = generate_case_for_seed(found.case_seed);
  MinimizeResult m = minimize(repro, found.failure);
  EXPECT_EQ(m.failure.signature(), found.failure.signature());
  EXPECT_TRUE(check_case(m.reduced).failure.has_value());
  set_active_fault(Fault::kNone);
  EXPECT_FALSE(check_case(m.reduced).failure.has_value());
}

// Faults that crash or hang cannot run in this process; IsolationTest covers them.
std::vector<FaultInfo> wrong_result_faults() {
  std::vector<FaultInfo> out;
  for (const auto& f : all_faults())
    if (f.kind == FaultKind::kWrongResult) out.push_back(f);
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllFaults, FaultSelfTestProperty, testing::ValuesIn(wrong_result_faults()),
                         [](const testing::TestParamInfo<FaultInfo>& i) {
                           std::string s(i.param.name);
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

// Crashes and hangs in the system under test: an isolated campaign records them with their
// stage, writes the case, and goes on to the end of its budget.
TEST(IsolationTest, AnAbortIsAFindingAndTheCampaignGoesOn) {
  auto dir = std::filesystem::temp_directory_path() / "flatcheck-isolation-abort";
  std::filesystem::remove_all(dir);
  ScopedFault f(Fault::kEngineBuilderAbort);
  CampaignOptions o;
  o.seed = 1;
  o.cases = 150;
  o.jobs = 2;
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
  EXPECT_EQ(check_case_isolated(c, OracleOptions{}, 10).failure->signature(),
            "crash:partitioned:SIGABRT");
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

TEST(SelfTestProperty, FaultFreeCorePassesTheSameBudget) {
  CampaignOptions o;
  o.seed = 1;
  o.cases = kSelfTestBudget;
  o.out_dir = "";
  o.jobs = 2;
  CampaignResult r = run_campaign(o);
  EXPECT_EQ(r.cases, kSelfTestBudget);
  EXPECT_TRUE(r.findings.empty()) << r.findings.front().failure.message;
}

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

// ------------------------------------------------------------------------------------ CLI

CliRun cli(const std::string& args) {
  return run_cli(args);
}

std::string corpus(const std::string& name) {
  return std::string(FLATCHECK_SOURCE_DIR) + "/corpus/regression/" + name;
}

TEST(CliTest, HelpAndVersionExitZero) {
  EXPECT_EQ(cli("--help").code, 0);
  EXPECT_EQ(cli("--version").code, 0);
  CliRun f = cli("faults");
  EXPECT_EQ(f.code, 0);
  EXPECT_EQ(std::count(f.out.begin(), f.out.end(), '\n'), static_cast<long>(all_faults().size()));
}

TEST(CliTest, FuzzEndsWithAJsonLineOfFigures) {
  CliRun r = cli("fuzz --cases 100 --seed 1 --json --out ''");
  ASSERT_EQ(r.code, 0) << r.out;
  std::string last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  Json j = Json::parse(last);
  EXPECT_EQ(j["cases"], 100);
  EXPECT_EQ(j["failures"], 0);
  EXPECT_GT(j["cases_per_sec"].get<double>(), 0.0);
}

TEST(CliTest, FuzzWithAFaultExitsOneAndWritesTheRepro) {
  auto dir = std::filesystem::temp_directory_path() / "flatcheck-cli-test";
  std::filesystem::remove_all(dir);
  CliRun r = cli("fuzz --cases 500 --seed 1 --inject unflatten-copies-state --out " + dir.string());
  EXPECT_EQ(r.code, 1) << r.out;
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".json") continue;  // campaign.state, .inflight/
    ++files;
    EXPECT_EQ(cli("replay --inject unflatten-copies-state " + e.path().string()).code, 1);
    EXPECT_EQ(cli("replay " + e.path().string()).code, 0);
  }
  EXPECT_GT(files, 0);
  std::filesystem::remove_all(dir);
}

TEST(CliTest, BadUsageAndBadInputExitTwo) {
  EXPECT_EQ(cli("").code, 2);
  EXPECT_EQ(cli("frobnicate").code, 2);
  EXPECT_EQ(cli("fuzz --cases banana").code, 2);
  EXPECT_EQ(cli("fuzz --cases 10 --time 3").code, 2);
  EXPECT_EQ(cli("fuzz --inject no-such-fault").code, 2);
  EXPECT_EQ(cli("fuzz --shard 3/2").code, 2);
  EXPECT_EQ(cli("replay /no/such/file.json").code, 2);
  EXPECT_EQ(cli("show " + corpus("seed-graph-break.json") + " --stage sideways").code, 2);
  auto bad = std::filesystem::temp_directory_path() / "flatcheck-bad.json";
  std::ofstream(bad) << "{\"format\": \"flatcheck-case\", \"version\": 1, \"module\": 7}";
  CliRun r = cli("replay " + bad.string());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("/module"), std::string::npos) << r.out;
  std::filesystem::remove(bad);
}

TEST(CliTest, ShowPrintsEveryStageOfTheSeedExamples) {
  for (const char* f : {"seed-graph-break.json", "seed-unflatten-specialized.json"}) {
    CliRun r = cli("show " + corpus(f));
    ASSERT_EQ(r.code, 0) << r.out;
    for (Stage s : all_stages())
      EXPECT_NE(r.out.find("==== " + std::string(stage_name(s)) + " "), std::string::npos)
          << f << " " << stage_name(s);
  }
  CliRun flat = cli("show " + corpus("seed-graph-break.json") + " --stage flattened");
  EXPECT_NE(flat.out.find("execute_engine"), std::string::npos);
  EXPECT_NE(flat.out.find("%getitem_2"), std::string::npos);
  CliRun un = cli("show " + corpus("seed-unflatten-specialized.json") + " --stage unflattened");
  EXPECT_NE(un.out.find("n@1"), std::string::npos);
  CliRun dot = cli("show " + corpus("seed-graph-break.json") + " --stage partitioned --format dot");
  EXPECT_EQ(dot.code, 0);
  EXPECT_EQ(dot.out.rfind("digraph", 0), 0u);
  EXPECT_NE(dot.out.find("palegreen"), std::string::npos);
  EXPECT_NE(dot.out.find("orange"), std::string::npos);
}

TEST(CliTest, ShrinkWritesASmallerCaseWithTheSameSignature) {
  auto out = std::filesystem::temp_directory_path() / "flatcheck-shrunk.json";
  CliRun r = cli("shrink " + corpus("seed-graph-break.json") + " -o " + out.string() +
                 " --inject inline-by-name");
  ASSERT_EQ(r.code, 1) << r.out;
  Case c = load_case_file(out.string());
  ASSERT_TRUE(c.expect.has_value());
  EXPECT_EQ(c.expect->stage, "flattened");
  EXPECT_LT(case_size(c), case_size(load_case_file(corpus("seed-graph-break.json"))));
  EXPECT_EQ(cli("shrink " + corpus("seed-graph-break.json") + " -o " + out.string()).code,
            2);  // passes: nothing to shrink
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace flatcheck
