// The oracle: it accepts the fault-free core and catches every injected fault within a
// bounded budget (the self-test), and localizes what it finds.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <tuple>

#include "core/base/faults.h"
#include "core/passes/passes.h"
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

class FaultSelfTestProperty : public testing::TestWithParam<FaultInfo> {};

TEST(OracleTest, FaultFreeCoreFailsNoCase) {
  for (uint64_t i = 0; i < 300; ++i) {
    auto r = check_case(generate_case_for_seed(case_seed(7, static_cast<int64_t>(i))));
    ASSERT_FALSE(r.failure.has_value())
        << "case " << i << ": " << r.failure->signature() << ": " << r.failure->message;
    EXPECT_EQ(r.coverage.paths, 5);
  }
}

// Renames every placeholder of every graph in a case document to a name torch.fx reserves
// (a Python keyword, builtin or one of its own: `input`, `min`, `torch`), as a user's
// `forward(self, input)` has; references to it follow. Returns how many were renamed.
int rename_placeholders_to_reserved(Json& module, size_t& k) {
  static const char* const kReserved[] = {"input", "min",    "max",   "sum",    "type",  "id",
                                          "len",   "iter",   "torch", "lambda", "class", "pow",
                                          "abs",   "device", "inf",   "format", "hash",  "object"};
  int renamed = 0;
  if (module.contains("alias")) return 0;
  Json& nodes = module["graph"]["nodes"];
  std::set<std::string> taken;
  for (const Json& n : nodes) taken.insert(n["name"].get<std::string>());
  for (Json& n : nodes) {
    if (n["op"] != "placeholder") continue;
    std::string from = n["name"], to = kReserved[k++ % std::size(kReserved)];
    if (taken.count(to)) continue;
    taken.insert(to);
    n["name"] = n["target"] = to;
    for (Json& m : nodes)
      if (m.contains("args"))
        for (Json& a : m["args"])
          if (a.is_string() && a == from) a = to;
    ++renamed;
  }
  if (module.contains("children"))
    for (auto& [_, child] : module["children"].items())
      renamed += rename_placeholders_to_reserved(child, k);
  return renamed;
}

// A placeholder with a reserved name keeps it at export (as torch.export keeps `input`), and a
// pass that rebuilds the graph gets it renamed (`input_1`, as split_by_tags's and unflatten's
// graphs do): partition renamed it but its signature kept `input`, an error on every case with
// such an input.
TEST(OracleTest, PlaceholdersWithReservedNamesPassEveryPath) {
  size_t k = 0;
  int renamed = 0;
  for (uint64_t i = 0; i < 60; ++i) {
    Json doc =
        Json::parse(save_case(generate_case_for_seed(case_seed(7, static_cast<int64_t>(i)))));
    renamed += rename_placeholders_to_reserved(doc["module"], k);
    Case c = load_case(doc.dump());
    auto r = check_case(c);
    ASSERT_FALSE(r.failure.has_value())
        << "case " << i << ": " << r.failure->signature() << ": " << r.failure->message;
    EXPECT_EQ(r.coverage.paths, 5);
  }
  EXPECT_GE(renamed, 120);
}

// Flat nodes are the call_function nodes once every call is inlined, counted by hand here: the
// graph-break example is flat (18 ops); the quick-start model runs its 6-op block twice and
// has 2 ops of its own, and export turns each copy_ into a buffer-mutation output (as
// torch.export does), so each inlined block keeps 5. Eager nodes count each graph once, module
// calls included.
TEST(OracleTest, CoverageCountsFlatNodesOfTheInlinedProgram) {
  Case flat;
  flat.module = graph_break_example();
  flat.inputs = {Tensor({4, 4}, std::vector<float>(16, 0.5f))};
  auto r = check_case(flat);
  ASSERT_FALSE(r.failure) << r.failure->signature();
  EXPECT_EQ(r.coverage.flat_nodes, 18);
  EXPECT_EQ(r.coverage.nodes, 18);
  Case nested;
  nested.module = quickstart_example();
  nested.inputs = {Tensor({2, 2}, {1.0f, -2.0f, 0.5f, 3.0f})};
  auto q = check_case(nested);
  ASSERT_FALSE(q.failure) << q.failure->signature();
  EXPECT_EQ(q.coverage.flat_nodes, 2 + 2 * 5);
  EXPECT_EQ(q.coverage.nodes, 4 + 6);
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

TEST(OracleTest, AStageOverrideIsTheCodeUnderTest) {
  Case c = generate_case_for_seed(case_seed(1, 0));
  int calls = 0;
  OracleOptions own;
  own.stages[Stage::kFlattened] = program_pass(Stage::kFlattened, [&](const Program& in) {
    ++calls;
    return flatten(in);
  });
  auto ok = check_case(c, own);
  EXPECT_FALSE(ok.failure) << ok.failure->signature();
  EXPECT_EQ(calls, 1) << "the oracle builds the flattened stage through the override";
  OracleOptions identity;
  identity.stages[Stage::kFlattened] =
      program_pass(Stage::kFlattened, [](const Program& in) { return clone_program(in); });
  auto r = check_case(c, identity);
  ASSERT_TRUE(r.failure) << "an identity flatten breaks the flatten rules";
  EXPECT_EQ(r.failure->kind().rfind("rule:flattened", 0), 0u) << r.failure->signature();
}

// A user's pass can return what no built-in pass builds: a null root, child, tensor or engine,
// or a module tree that holds itself. Each is an error of the overridden stage naming the
// place, not a crash or an endless walk.
TEST(OracleTest, AnOverrideReturningNullOrCyclicPartsIsAnErrorOfItsStage) {
  Case c = generate_case_for_seed(case_seed(1, 0));
  using Edit = std::function<void(Program&)>;
  auto first_child = [](Program& p) { return p.root->children.begin()->second; };
  // The modules that close a cycle, whose children are cleared after the check: a cycle of
  // shared_ptr is never freed, and the sanitizer build's leak check would fail the test.
  std::vector<std::shared_ptr<Module>> cycles;
  const std::vector<std::tuple<Stage, Edit, std::string>> rows = {
      {Stage::kFlattened, [](Program& p) { p.root = nullptr; }, "a program without a root"},
      {Stage::kFlattened, [](Program& p) { p.root->children["x"] = nullptr; }, "a null child 'x'"},
      {Stage::kFlattened, [](Program& p) { p.root->params["w"] = nullptr; }, "a null tensor 'w'"},
      {Stage::kFlattened, [](Program& p) { p.state.begin()->second = nullptr; },
       "a null state tensor"},
      {Stage::kFlattened,
       [&](Program& p) {
         auto loop = std::make_shared<Module>();
         loop->graph.output({});
         loop->children["back"] = loop;
         p.root->children["loop"] = loop;
         cycles.push_back(loop);
       },
       "'loop.back' is its own ancestor"},
      {Stage::kPartitioned, [&](Program& p) { first_child(p)->buffers["b"] = nullptr; },
       "a null tensor '_run_on_"},
      {Stage::kPartitioned, [&](Program& p) { first_child(p)->engines["e"] = nullptr; },
       "a null engine '_run_on_"},
      {Stage::kPartitioned,
       [&](Program& p) {
         first_child(p)->children["again"] = p.root;
         cycles.push_back(first_child(p));
       },
       "is its own ancestor"},
  };
  for (const auto& [stage, edit, text] : rows) {
    OracleOptions o;
    o.stages[stage] = program_pass(stage, [stage = stage, edit = edit](const Program& in) {
      Program p = stage == Stage::kFlattened ? flatten(in) : partition(in, PartitionOptions{});
      edit(p);
      return p;
    });
    auto r = check_case(c, o);
    for (auto& m : cycles) m->children.clear();
    cycles.clear();
    ASSERT_TRUE(r.failure) << text;
    EXPECT_EQ(r.failure->kind(), "error:" + std::string(stage_name(stage)) + ":-") << text;
    EXPECT_NE(r.failure->message.find(text), std::string::npos) << r.failure->message;
  }
  // An export whose signature does not match its placeholders or outputs: its own run refuses
  // it (partition_test.cc checks partition, which renames the signature's entries, on such a
  // program directly).
  for (int drop : {0, 1}) {
    OracleOptions o;
    o.stages[Stage::kExported] = [drop](const Artifact& in, const PipelineConfig&) {
      Artifact a;
      a.stage = Stage::kExported;
      a.program = export_program(*in.module);
      if (drop == 0)
        a.program->sig.inputs.pop_back();
      else
        a.program->sig.outputs.push_back(a.program->sig.outputs.back());
      return a;
    };
    auto r = check_case(c, o);
    ASSERT_TRUE(r.failure) << drop;
    EXPECT_EQ(r.failure->kind().rfind("error:exported:", 0), 0u) << r.failure->message;
  }
  for (bool cycle : {false, true}) {
    OracleOptions o;
    o.stages[Stage::kUnflattened] = [cycle, &cycles](const Artifact& in, const PipelineConfig&) {
      Artifact a;
      a.stage = Stage::kUnflattened;
      std::shared_ptr<Module> m = unflatten(clone_program(*in.program));
      auto& child = m->children.begin()->second;
      if (cycle) {
        child->children["again"] = child;
        cycles.push_back(child);
      } else {
        child = nullptr;
      }
      a.module = m;
      return a;
    };
    auto r = check_case(c, o);
    for (auto& m : cycles) m->children.clear();
    cycles.clear();
    ASSERT_TRUE(r.failure) << cycle;
    EXPECT_EQ(r.failure->kind(), "error:unflattened:-") << r.failure->message;
    EXPECT_NE(r.failure->message.find(cycle ? "its own ancestor" : "a null child"),
              std::string::npos)
        << r.failure->message;
  }
}

// No pass may write to its input: a flatten that gives the right program but renames a module
// type of the partitioned program it was given is caught by the fingerprints.
TEST(OracleTest, APassThatWritesToItsInputIsMutatedInput) {
  Case c = generate_case_for_seed(case_seed(1, 0));
  OracleOptions o;
  o.stages[Stage::kFlattened] = program_pass(Stage::kFlattened, [](const Program& in) {
    Program out = flatten(in);
    in.root->type += "Changed";  // the input's root module, shared through its pointer
    return out;
  });
  auto r = check_case(c, o);
  ASSERT_TRUE(r.failure);
  EXPECT_EQ(r.failure->signature(), "mutated-input:partitioned:-") << r.failure->message;
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
  o.minimize = false;  // minimized once, below (twice was most of the time under sanitizers)
  CampaignResult r = run_campaign(o);
  ASSERT_FALSE(r.findings.empty())
      << GetParam().name << " not found in " << kSelfTestBudget << " cases";
  const Finding& found = r.findings.front();
  // The minimized repro fails with the fault and passes without it.
  Case repro = generate_case_for_seed(found.case_seed);
  MinimizeResult m = minimize(repro, found.failure);
  EXPECT_LE(case_size(m.reduced), case_size(repro));
  // The minimizer keeps the failure's kind; its module may change as the case shrinks.
  EXPECT_EQ(m.failure.kind(), found.failure.kind());
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

// Crashes and hangs in the system under test: an isolated campaign records them with their
// stage, writes the case, and goes on to the end of its budget.

INSTANTIATE_TEST_SUITE_P(AllFaults, FaultSelfTestProperty, testing::ValuesIn(wrong_result_faults()),
                         [](const testing::TestParamInfo<FaultInfo>& i) {
                           std::string s(i.param.name);
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

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

}  // namespace
}  // namespace flatcheck
