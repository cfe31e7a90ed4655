// CLI options by effect: --device, --quiet, --no-isolate, generate, emit-torch, shrink.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/ir/namespace.h"
#include "core/runtime/cuda/cuda_backend.h"
#include "core/serialize/serialize.h"
#include "generators/examples.h"
#include "harness/campaign.h"
#include "harness/oracle.h"
#include "tests/harness/cli_run.h"
#include "tests/support/recording_backend.h"

namespace flatcheck {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Runs the CLI under a pseudo-terminal (util-linux `script`), where progress is shown.
CliRun run_cli_tty(const std::string& args) {
  return run_cli(
      "", "script -qec \"" + std::string(FLATCHECK_BIN) + " " + args + "\" /dev/null; exit $?; ");
}

// A folder of this test's own: ctest runs each test in a process of its own, two at a time, so
// a folder shared by name between tests is emptied under another one's feet.
std::string scratch(const std::string& name) {
  const testing::TestInfo* t = testing::UnitTest::GetInstance()->current_test_info();
  std::string dir = testing::TempDir() + "/" + name + "-" + (t ? t->name() : "none");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(CliDeviceTest, EveryReportNamesTheBackendThatRan) {
  CliRun fuzz = run_cli("fuzz --cases 20 --no-isolate --json --out ''");
  EXPECT_EQ(fuzz.code, 0) << fuzz.out;
  EXPECT_NE(fuzz.out.find("backend: cpu"), std::string::npos) << fuzz.out;
  EXPECT_NE(fuzz.out.find("\"backend\":\"cpu\""), std::string::npos) << fuzz.out;
  CliRun replay = run_cli(std::string("replay ") + FLATCHECK_SOURCE_DIR +
                          "/corpus/regression/seed-graph-break.json --json");
  EXPECT_EQ(replay.code, 0) << replay.out;
  EXPECT_NE(replay.out.find("backend: cpu"), std::string::npos) << replay.out;
  EXPECT_NE(replay.out.find("\"backend\":\"cpu\""), std::string::npos) << replay.out;
  CliRun diff = run_cli("compare-backends --device cpu --cases 20");
  EXPECT_EQ(diff.code, 0) << diff.out;
  EXPECT_NE(diff.out.find("cpu (reference) vs cpu"), std::string::npos) << diff.out;
}

TEST(CliDeviceTest, DeviceCudaWithoutADeviceExitsTwoWithTheReason) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present";
  std::string corpus = std::string(FLATCHECK_SOURCE_DIR) + "/corpus/regression";
  for (const std::string& cmd :
       {std::string("fuzz --cases 5 --device cuda"), "replay " + corpus + " --device cuda",
        std::string("detect --seeds 1 --cases 5 --device cuda"),
        std::string("compare-backends --cases 5"),
        std::string("compare-backends --cases 5 --device cuda")}) {
    CliRun r = run_cli(cmd);
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.out;
    EXPECT_NE(r.out.find("--device cuda: "), std::string::npos) << cmd << ": " << r.out;
  }
  CliRun bad = run_cli("fuzz --cases 5 --device tpu");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.out.find("--device expects cpu or cuda"), std::string::npos) << bad.out;
}

TEST(CliOptionsTest, QuietSuppressesProgressOnATerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "util-linux `script` is not installed: no pseudo-terminal to test with";
  // A second of fuzzing: on a terminal the progress line is rewritten every 0.1 s.
  CliRun shown = run_cli_tty("fuzz --time 1 --no-isolate --out ''");
  CliRun quiet = run_cli_tty("fuzz --time 1 --no-isolate --out '' --quiet");
  EXPECT_EQ(shown.code, 0) << shown.out;
  EXPECT_EQ(quiet.code, 0) << quiet.out;
  EXPECT_NE(shown.out.find(" failing, "), std::string::npos) << shown.out;
  EXPECT_EQ(quiet.out.find(" failing, "), std::string::npos) << quiet.out;
}

// Off a terminal (a CI log, a pipe) a campaign still says what it is doing: each finding is
// announced before it is minimized, unless --quiet.
TEST(CliOptionsTest, MinimizingIsAnnouncedOffATerminalUnlessQuiet) {
  CliRun shown = run_cli("fuzz --cases 300 --seed 1 --inject inline-by-name --no-isolate --out ''");
  CliRun quiet =
      run_cli("fuzz --cases 300 --seed 1 --inject inline-by-name --no-isolate --out '' --quiet");
  EXPECT_EQ(shown.code, 1) << shown.out;
  EXPECT_EQ(quiet.code, 1) << quiet.out;
  EXPECT_NE(shown.out.find("minimizing finding 1 of "), std::string::npos) << shown.out;
  EXPECT_EQ(quiet.out.find("minimizing finding"), std::string::npos) << quiet.out;
}

// Off a terminal progress is a whole line every 10 s (a CI log gets one, not a stream of \r
// rewrites), and --quiet silences it. The two campaigns run side by side (10.5 s, not 21).
TEST(CliOptionsTest, ProgressIsALineEvery10SecondsOffATerminalUnlessQuiet) {
  auto quiet_run = std::async(
      std::launch::async, [] { return run_cli("fuzz --time 10.5 --no-isolate --out '' --quiet"); });
  CliRun shown = run_cli("fuzz --time 10.5 --no-isolate --out ''");
  CliRun quiet = quiet_run.get();
  EXPECT_EQ(shown.code, 0) << shown.out;
  EXPECT_EQ(quiet.code, 0) << quiet.out;
  size_t at = shown.out.find(" failing, ");
  ASSERT_NE(at, std::string::npos) << shown.out;
  size_t end = shown.out.find('\n', at);
  ASSERT_NE(end, std::string::npos) << shown.out;
  EXPECT_EQ(shown.out.substr(at, end - at).find('\r'), std::string::npos) << shown.out;
  EXPECT_EQ(shown.out.find(" failing, ", end), std::string::npos)
      << "one line in 10.5 s: " << shown.out;
  EXPECT_EQ(quiet.out.find(" failing, "), std::string::npos) << quiet.out;
}

TEST(CliOptionsTest, NoIsolateRunsCasesInTheHarnessProcess) {
  // A crashing fault is a finding in a forked worker, and ends an in-process campaign.
  CliRun isolated = run_cli("fuzz --cases 400 --seed 1 --inject engine-builder-abort --out ''");
  CliRun inproc =
      run_cli("fuzz --cases 400 --seed 1 --inject engine-builder-abort --out '' --no-isolate");
  EXPECT_EQ(isolated.code, 1) << isolated.out;
  EXPECT_NE(isolated.out.find("crash:partitioned:SIGABRT"), std::string::npos) << isolated.out;
  EXPECT_EQ(inproc.code, 128 + 6) << inproc.out;
}

TEST(CliOptionsTest, ShrinkStopsAtMaxChecks) {
  std::string dir = testing::TempDir() + "/shrink_max_checks";
  std::filesystem::create_directories(dir);
  std::string seed = std::string(FLATCHECK_SOURCE_DIR) + "/corpus/regression/seed-graph-break.json";
  CliRun one = run_cli("shrink " + seed + " -o " + dir + "/a.json --inject inline-by-name " +
                       "--max-checks 1");
  CliRun many = run_cli("shrink " + seed + " -o " + dir + "/b.json --inject inline-by-name");
  EXPECT_EQ(one.code, 1) << one.out;
  EXPECT_EQ(many.code, 1) << many.out;
  EXPECT_NE(one.out.find("in 1 checks"), std::string::npos) << one.out;
  EXPECT_EQ(many.out.find("in 1 checks"), std::string::npos) << many.out;
}

TEST(CliOptionsTest, DetectFaultRunsOnlyThatFault) {
  CliRun r = run_cli("detect --fault inline-by-name --seeds 1 --cases 500 --json");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("inline-by-name"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("unflatten-first-call-graph"), std::string::npos) << r.out;
}

TEST(CliGenerateTest, WritesTheCasesACampaignWouldCheckDeterministically) {
  std::string a = scratch("gen_a"), b = scratch("gen_b");
  CliRun ra = run_cli("generate --seed 5 --count 7 -o " + a);
  CliRun rb = run_cli("generate --seed 5 --count 7 -o " + b);
  ASSERT_EQ(ra.code, 0) << ra.out;
  ASSERT_EQ(rb.code, 0) << rb.out;
  for (int i = 0; i < 7; ++i) {
    std::string name = "/case-5-" + std::to_string(i) + ".json";
    ASSERT_TRUE(std::filesystem::exists(a + name)) << name;
    EXPECT_EQ(slurp(a + name), slurp(b + name));
    // The file is the campaign's case i: same module as the generator's.
    Case c = load_case_file(a + name);
    Case g = generate_case_for_seed(case_seed(5, i));
    EXPECT_EQ(save_module(*c.module), save_module(*g.module)) << name;
  }
  EXPECT_FALSE(std::filesystem::exists(a + "/case-5-7.json"));
  CliRun other = run_cli("generate --seed 6 --count 1 -o " + b);
  EXPECT_NE(slurp(b + "/case-6-0.json"), slurp(a + "/case-5-0.json"));
  EXPECT_EQ(run_cli("generate --count 3 -o " + a).code, 2);  // --seed is required
}

// The program emit-torch writes for corpus/regression/NAME.json with `options`; "" when it fails.
std::string emitted(const std::string& name, const std::string& options = "") {
  std::string dir = scratch("emit");
  std::string src = std::string(FLATCHECK_SOURCE_DIR) + "/corpus/regression/" + name + ".json";
  CliRun r = run_cli("emit-torch " + src + options + " -o " + dir);
  EXPECT_EQ(r.code, 0) << r.out;
  return r.code == 0 ? slurp(dir + "/" + name + ".py") : "";
}

TEST(CliEmitTorchTest, WritesAProgramMirroringTheModuleTree) {
  std::string py = emitted("seed-quickstart");
  std::string src = std::string(FLATCHECK_SOURCE_DIR) + "/corpus/regression/seed-quickstart.json";
  for (const char* want : {"class M0(torch.nn.Module):", "class M1(torch.nn.Module):",
                           "add_module(\"block\"", "torch.matmul(", "_R.copy(self, \"steps\"",
                           "EXPECTED_OUTPUTS", "EXPECTED_NODES", "PARTITION = {", "def build():"})
    EXPECT_NE(py.find(want), std::string::npos) << want << "\n" << py.substr(0, 2000);
  EXPECT_EQ(run_cli("emit-torch " + src).code, 2);  // -o is required
  // Without --update-args, no module takes a buffer as an argument.
  for (const char* absent : {"_u0", "_R.state("})
    EXPECT_EQ(py.find(absent), std::string::npos) << absent;
  EXPECT_NE(py.find("\"update_args\": False"), std::string::npos);
}

TEST(CliEmitTorchTest, UpdateArgsPassesEachUpdatedBufferToTheModuleThatUpdatesIt) {
  // seed-quickstart's child `block`, called twice, updates its buffer `steps`: with
  // --update-args both calls pass the buffer itself, and the child's copy_ goes through it.
  std::string py = emitted("seed-quickstart", " --update-args");
  EXPECT_NE(py.find("def forward(self, v_x, v_scale, _u0=None):"), std::string::npos) << py;
  EXPECT_NE(py.find("_R.copy(self, \"steps\", v_add_scalar, _u0)"), std::string::npos) << py;
  size_t first = py.find("self.block, v_x, 1.0, _R.state(self, \"block.steps\"))");
  ASSERT_NE(first, std::string::npos) << py;
  EXPECT_NE(py.find("_R.state(self, \"block.steps\"))", first + 1), std::string::npos) << py;
  EXPECT_NE(py.find("\"update_args\": True"), std::string::npos);
  // The root is called by the user: its own update stays a copy_ into its buffer.
  py = emitted("fault-dce-drops-mutation", " --update-args");
  EXPECT_NE(py.find("_R.copy(self, \"buf\", v__run_on_acc_0)\n"), std::string::npos) << py;
  EXPECT_EQ(py.find("_u0"), std::string::npos) << py;
}

TEST(CliEmitTorchTest, UpdateInputsUpdatesTheRootsInputsOnceItsResultsAreMade) {
  // seed-quickstart's root takes x: with --update-inputs its forward returns through
  // _update_inputs((x,), ...), which clones the results and then updates x in place.
  std::string py = emitted("seed-quickstart", " --update-inputs");
  EXPECT_NE(py.find("        return _update_inputs((v_x, ), _R.end(("), std::string::npos) << py;
  EXPECT_NE(py.find("\"update_inputs\": True"), std::string::npos);
  // Only the root: the child `block` returns as it did.
  EXPECT_EQ(py.find("return _update_inputs(", py.find("return _update_inputs(") + 1),
            std::string::npos)
      << py;
  // Without the flag no forward updates its inputs (the prelude still defines the helper).
  py = emitted("seed-quickstart");
  EXPECT_EQ(py.find("return _update_inputs("), std::string::npos) << py;
  EXPECT_NE(py.find("\"update_inputs\": False"), std::string::npos);
}

TEST(CliEmitTorchTest, KwargsCallsEachChildWithItsArgumentsByKeywordAlikeForEachCall) {
  // seed-quickstart's root calls `block` twice (x, 1.0; tanh, 2.0): with --kwargs both go
  // through _call with the child's parameter names and one split point k, chosen from the
  // module's class name: FNV-1a 64 of it (computed here) modulo the argument count + 1.
  std::string py = emitted("seed-quickstart", " --kwargs");
  const std::string added = "add_module(\"block\", m_";
  size_t at = py.find(added);
  ASSERT_NE(at, std::string::npos) << py;
  at += added.size();
  const std::string cls = py.substr(at, py.find(')', at) - at);
  uint64_t h = 14695981039346656037ull;
  for (char ch : cls) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  const std::string call =
      "_call(self.block, 0, (\"v_x\", \"v_scale\", ), " + std::to_string(h % 3) + "), ";
  size_t first = py.find(call);
  ASSERT_NE(first, std::string::npos) << call << "\n" << py;
  EXPECT_NE(py.find(call, first + 1), std::string::npos) << py;
  EXPECT_NE(py.find("\"kwargs\": True"), std::string::npos);
  // With --update-args the buffer argument is named too.
  py = emitted("seed-quickstart", " --kwargs --update-args");
  EXPECT_NE(py.find("_call(self.block, 0, (\"v_x\", \"v_scale\", \"_u0\", ), "), std::string::npos)
      << py;
  // Without the flag every child is called by position (the prelude still defines _call).
  py = emitted("seed-quickstart");
  EXPECT_EQ(py.find("_call(self"), std::string::npos) << py;
  EXPECT_NE(py.find(", self.block, v_x, 1.0)"), std::string::npos) << py;
  EXPECT_NE(py.find("\"kwargs\": False"), std::string::npos);
}

TEST(CliEmitTorchTest, DictOutputsReturnsAChildsResultsByKeyAndItsCallersReadThem) {
  // fault-swap-by-name's child returns (add, buf) and the root reads result 0 of each call:
  // with --dict-outputs the child returns {"o0": ..., "o1": ...} and the root reads "o0". The
  // root's one result stays as it is; a getitem of a tensor tuple (no module call) stays an
  // index (seed-graph-break's splits).
  std::string py = emitted("fault-swap-by-name", " --dict-outputs");
  EXPECT_NE(py.find("return _R.end((\"add\", \"buf\", ), {\"o0\": v_add, \"o1\": v_buf, })"),
            std::string::npos)
      << py;
  EXPECT_NE(py.find("v_getitem[\"o0\"]"), std::string::npos) << py;
  EXPECT_NE(py.find("v_getitem_2[\"o0\"]"), std::string::npos) << py;
  EXPECT_NE(py.find("return _R.end((\"getitem_4\", ), v_getitem_4)"), std::string::npos) << py;
  EXPECT_NE(py.find("\"dict_outputs\": True"), std::string::npos);
  py = emitted("seed-graph-break", " --dict-outputs");
  EXPECT_NE(py.find("v_split_1[1]"), std::string::npos) << py;
  EXPECT_EQ(py.find("[\"o"), std::string::npos) << py;
  // Without the flag the child returns a tuple, read by index.
  py = emitted("fault-swap-by-name");
  EXPECT_NE(py.find("return _R.end((\"add\", \"buf\", ), (v_add, v_buf, ))"), std::string::npos)
      << py;
  EXPECT_NE(py.find("v_getitem[0]"), std::string::npos) << py;
  EXPECT_NE(py.find("\"dict_outputs\": False"), std::string::npos);
}

TEST(CliEmitTorchTest, PackedArgsPassesAChildsArgumentsAsOneTuple) {
  // seed-quickstart's child `block` takes (x, scale): with --packed-args it takes `_args` and
  // unpacks it, and each call packs both arguments (k = 1: the tuple by position, or with
  // --kwargs by name or position); --update-args' buffer stays an argument of its own.
  std::string py = emitted("seed-quickstart", " --packed-args");
  EXPECT_NE(py.find("    def forward(self, _args):\n        v_x, v_scale, = _args\n"),
            std::string::npos)
      << py;
  EXPECT_NE(py.find("_call(self.block, 2, (\"_args\", ), 1), v_x, 1.0)"), std::string::npos) << py;
  EXPECT_NE(py.find("\"packed_args\": True"), std::string::npos);
  // The root still takes its inputs as they are.
  EXPECT_NE(py.find("    def forward(self, v_x):\n"), std::string::npos) << py;
  py = emitted("seed-quickstart", " --packed-args --update-args");
  EXPECT_NE(py.find("    def forward(self, _args, _u0=None):\n"), std::string::npos) << py;
  EXPECT_NE(py.find("_call(self.block, 2, (\"_args\", \"_u0\", ), 2), v_x, 1.0, _R.state("),
            std::string::npos)
      << py;
  py = emitted("seed-quickstart");
  EXPECT_NE(py.find("    def forward(self, v_x, v_scale):\n"), std::string::npos) << py;
  EXPECT_NE(py.find("\"packed_args\": False"), std::string::npos);
}

TEST(CliEmitTorchTest, NonPersistentBuffersRegistersTwoOfThreeBuffersSo) {
  // The draw is fnv1a64("<class>.<buffer>") % 3 != 0: seed-quickstart's M0.steps and
  // fault-mangled-fqn-collision's M2.buf are non-persistent, fault-dce-drops-mutation's M0.buf
  // is not (fnv1a64 of "M0.buf" is 0 mod 3). Without the flag, every buffer is persistent.
  std::string py = emitted("seed-quickstart", " --non-persistent-buffers");
  EXPECT_NE(py.find("self.register_buffer(\"steps\", S[1], persistent=False)"), std::string::npos)
      << py;
  EXPECT_NE(py.find("\"non_persistent_buffers\": True"), std::string::npos);
  EXPECT_EQ(py, emitted("seed-quickstart", " --non-persistent-buffers"));  // deterministic
  py = emitted("fault-mangled-fqn-collision", " --non-persistent-buffers");
  EXPECT_NE(py.find("self.register_buffer(\"buf\", S[2], persistent=False)"), std::string::npos)
      << py;
  py = emitted("fault-dce-drops-mutation", " --non-persistent-buffers");
  EXPECT_NE(py.find("self.register_buffer(\"buf\", S[0])\n"), std::string::npos) << py;
  for (const char* name : {"seed-quickstart", "fault-mangled-fqn-collision"}) {
    py = emitted(name);
    EXPECT_EQ(py.find("persistent=False"), std::string::npos) << name;
    EXPECT_NE(py.find("\"non_persistent_buffers\": False"), std::string::npos) << name;
  }
}

TEST(CliEmitTorchTest, TensorConstantsHoldsTwoOfThreeBuffersAsPlainAttributes) {
  // The draw is fnv1a64("const <class>.<buffer>") % 3 != 0: seed-quickstart's M0.steps and
  // fault-container-order-outputs' M1.buf are plain attributes, its M0.buf stays a buffer.
  // Without the flag, every buffer is registered and EXPORT_NAMES names the state.
  std::string py = emitted("seed-quickstart", " --tensor-constants");
  EXPECT_NE(py.find("setattr(self, \"steps\", S[1])"), std::string::npos) << py;
  EXPECT_EQ(py.find("register_buffer(\"steps\""), std::string::npos) << py;
  EXPECT_NE(py.find("\"tensor_constants\": True"), std::string::npos);
  EXPECT_NE(py.find("EXPORT_NAMES = None  # buffers held as plain tensor attributes"),
            std::string::npos)
      << py;
  EXPECT_EQ(py, emitted("seed-quickstart", " --tensor-constants"));  // deterministic
  py = emitted("fault-container-order-outputs", " --tensor-constants");
  EXPECT_NE(py.find("self.register_buffer(\"buf\", S[0])\n"), std::string::npos) << py;
  EXPECT_NE(py.find("setattr(self, \"buf\", S[1])"), std::string::npos) << py;
  for (const char* name : {"seed-quickstart", "fault-container-order-outputs"}) {
    py = emitted(name);
    EXPECT_EQ(py.find("setattr(self"), std::string::npos) << name;
    EXPECT_NE(py.find("\"tensor_constants\": False"), std::string::npos) << name;
  }
  EXPECT_NE(emitted("seed-quickstart").find("\"block.steps\": \"b_block_steps\""),
            std::string::npos);
}

TEST(CliEmitTorchTest, InplaceUpdatesWritesArithmeticUpdatesAsInPlaceOps) {
  // seed-quickstart updates steps by add_scalar(steps, 1.0); fault-container-order-outputs
  // updates b.buf by an addition (with --op-kwargs a subtraction with alpha=-1) and a.buf by a
  // module's result (no in-place form); fault-swap-by-name's child updates the buffer it is
  // given (--update-args: through _u0).
  std::string py = emitted("seed-quickstart", " --inplace-updates");
  EXPECT_NE(py.find("        _R.update(self, \"steps\", \"add_\", 1.0, {})\n"), std::string::npos)
      << py;
  EXPECT_EQ(py.find("_R.copy("), std::string::npos) << py;
  EXPECT_NE(py.find("torch.add(v_steps, 1.0)"), std::string::npos) << py;  // the op's value
  EXPECT_NE(py.find("\"inplace_updates\": True"), std::string::npos);
  py = emitted("fault-container-order-outputs", " --inplace-updates --op-kwargs");
  EXPECT_NE(py.find("_R.update(self, \"b.buf\", \"sub_\", v_x, {\"alpha\": -1})"),
            std::string::npos)
      << py;
  EXPECT_NE(py.find("_R.copy(self, \"a.buf\", v_layer0)"), std::string::npos) << py;
  py = emitted("fault-container-order-outputs", " --inplace-updates");
  EXPECT_NE(py.find("_R.update(self, \"b.buf\", \"add_\", v_x, {})"), std::string::npos) << py;
  py = emitted("fault-swap-by-name", " --inplace-updates --update-args");
  EXPECT_NE(py.find(", _u0)\n"), std::string::npos) << py;
  EXPECT_NE(py.find("_R.update(self, \"buf\", "), std::string::npos) << py;
  py = emitted("seed-quickstart");
  EXPECT_EQ(py.find("_R.update("), std::string::npos) << py;
  EXPECT_NE(py.find("_R.copy(self, \"steps\", v_add_scalar)"), std::string::npos) << py;
  EXPECT_NE(py.find("\"inplace_updates\": False"), std::string::npos);
}

TEST(CliEmitTorchTest, StepCountersCountEachRunOfTwoOfThreeModules) {
  // The draw is fnv1a64("steps <class>") % 3 != 0 (M1, M2: counters; M0 none), the place
  // fnv1a64("steps at <class>") % 2 (M1 before its return, M2 first). fault-mangled-fqn-
  // collision's root (M2) runs once a call and calls b (M1) twice; the case makes two calls.
  // fault-container-order-outputs' root never calls b itself, only b's child: b runs 0 times.
  std::string py = emitted("fault-mangled-fqn-collision", " --step-counters");
  const std::string count = "        _R.update(self, \"num_steps\", \"add_\", 1, {})\n";
  EXPECT_NE(py.find(count + "        return _R.end((\"add_scalar\", ), v_add_scalar)"),
            std::string::npos)
      << py;
  EXPECT_NE(py.find("_R.begin((\"x\", \"getitem\", ))\n" + count), std::string::npos) << py;
  EXPECT_NE(py.find("self.register_buffer(\"num_steps\", torch.zeros((), dtype=torch.int64))"),
            std::string::npos)
      << py;
  EXPECT_NE(py.find("    \"num_steps\": torch.tensor(2, dtype=torch.int64),\n"
                    "    \"b.num_steps\": torch.tensor(4, dtype=torch.int64),\n"),
            std::string::npos)
      << py;
  EXPECT_NE(py.find("EXPORT_NAMES = None  # step counters"), std::string::npos) << py;
  EXPECT_NE(py.find("\"step_counters\": True"), std::string::npos);
  EXPECT_EQ(py, emitted("fault-mangled-fqn-collision", " --step-counters"));  // deterministic
  py = emitted("fault-container-order-outputs", " --step-counters");
  EXPECT_NE(py.find("\"b.num_steps\": torch.tensor(0, dtype=torch.int64)"), std::string::npos)
      << py;
  // The buffer draws hold for counters: M1.num_steps is a plain attribute under
  // --tensor-constants, non-persistent under --non-persistent-buffers.
  py = emitted("fault-mangled-fqn-collision", " --step-counters --tensor-constants");
  EXPECT_NE(py.find("setattr(self, \"num_steps\", torch.zeros((), dtype=torch.int64))"),
            std::string::npos)
      << py;
  py = emitted("fault-mangled-fqn-collision", " --step-counters --non-persistent-buffers");
  EXPECT_NE(py.find("(\"num_steps\", torch.zeros((), dtype=torch.int64), persistent=False)"),
            std::string::npos)
      << py;
  py = emitted("fault-mangled-fqn-collision");
  EXPECT_EQ(py.find("num_steps"), std::string::npos) << py;
  EXPECT_NE(py.find("\"step_counters\": False"), std::string::npos);
}

TEST(CliEmitTorchTest, OpKwargsSpellsAdditionSubtractionAndDivisionWithKeywords) {
  // fault-mangled-fqn-collision holds additions of tensors and of a scalar, a division and a
  // subtraction of a scalar; fault-inline-by-name a subtraction of tensors.
  std::string py = emitted("fault-mangled-fqn-collision", " --op-kwargs");
  for (const char* form :
       {"torch.sub(v_getitem_4, v_getitem_3, alpha=-1)", "torch.sub(v_getitem_6, 0.5, alpha=-1)",
        "torch.div(v_getitem_12, v_relu_2, rounding_mode=None)",
        "torch.add(v_concat_1, 10.0, alpha=-1)", "\"op_kwargs\": True"})
    EXPECT_NE(py.find(form), std::string::npos) << form << "\n" << py;
  EXPECT_EQ(py.find("torch.add(v_getitem_4, v_getitem_3)"), std::string::npos) << py;
  EXPECT_NE(emitted("fault-inline-by-name", " --op-kwargs")
                .find("torch.add(v_getitem_4, v_getitem, alpha=-1)"),
            std::string::npos);
  py = emitted("fault-mangled-fqn-collision");
  for (const char* form :
       {"torch.add(v_getitem_4, v_getitem_3)", "torch.add(v_getitem_6, 0.5)",
        "torch.div(v_getitem_12, v_relu_2)", "torch.sub(v_concat_1, 10.0)", "\"op_kwargs\": False"})
    EXPECT_NE(py.find(form), std::string::npos) << form << "\n" << py;
  EXPECT_EQ(py.find("alpha="), std::string::npos) << py;
}

// The parameter names of each `def forward(self, ...)` line of `py`, in order.
std::vector<std::vector<std::string>> forward_params(const std::string& py) {
  std::vector<std::vector<std::string>> out;
  const std::string head = "    def forward(self";
  for (size_t at = py.find(head); at != std::string::npos; at = py.find(head, at + 1)) {
    std::string list = py.substr(at + head.size(), py.find("):", at) - at - head.size());
    std::vector<std::string> names;
    for (size_t i = 0; i < list.size();) {
      size_t end = list.find(',', i + 1);
      std::string name = list.substr(i, end == std::string::npos ? end : end - i);
      name.erase(0, name.find_first_not_of(", "));
      if (!name.empty() && name.find('=') == std::string::npos) names.push_back(name);
      i = end == std::string::npos ? list.size() : end;
    }
    out.push_back(names);
  }
  return out;
}

TEST(CliEmitTorchTest, HostileNamesGivesParametersNamesTorchMakesOrReads) {
  // seed-quickstart: the root takes x, its child `block` (x, scale). With --hostile-names no
  // parameter is v_<node>; every name is a Python identifier none of the program's own code
  // reads, distinct within its signature, and the same on every emit; --kwargs calls the child
  // by those names.
  std::string py = emitted("seed-quickstart", " --hostile-names --kwargs");
  EXPECT_EQ(py, emitted("seed-quickstart", " --hostile-names --kwargs"));
  EXPECT_NE(py.find("\"hostile_names\": True"), std::string::npos);
  auto sigs = forward_params(py);
  ASSERT_EQ(sigs.size(), 2u) << py;
  const std::set<std::string> own = {"torch",          "getattr", "self", "_R",  "_call", "_branch",
                                     "_update_inputs", "_args",   "nan",  "inf", "None"};
  for (const auto& names : sigs) {
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size()) << py;
    for (const auto& n : names) {
      EXPECT_TRUE(is_identifier(n)) << n;
      EXPECT_NE(n.rfind("v_", 0), 0u) << n;
      EXPECT_EQ(own.count(n), 0u) << n;
    }
  }
  const auto& child = sigs[0].size() == 2 ? sigs[0] : sigs[1];
  const auto& root = sigs[0].size() == 2 ? sigs[1] : sigs[0];
  ASSERT_EQ(child.size(), 2u);
  ASSERT_EQ(root.size(), 1u);
  EXPECT_NE(py.find("_call(self.block, 0, (\"" + child[0] + "\", \"" + child[1] + "\", ), "),
            std::string::npos)
      << py;
  EXPECT_NE(py.find("), " + root[0] + ", 1.0), (\"x\", ))"), std::string::npos) << py;
  EXPECT_EQ(py.find("v_x"), std::string::npos) << py;
  EXPECT_EQ(py.find("v_scale"), std::string::npos) << py;
  // Across cases the pool's parts show: export's placeholder names (p_/b_ + FQN), the module's
  // own node names, and fixed names (builtins, the names torch.fx and AOTAutograd make).
  std::set<std::string> seen;
  for (const char* name :
       {"seed-quickstart", "fault-mangled-fqn-collision", "fault-swap-by-name",
        "fault-inline-by-name", "seed-graph-break", "unflatten-dotted-call-target",
        "found-variants-of-two-input-shapes", "fault-reload-renames"})
    for (const auto& names : forward_params(emitted(name, " --hostile-names")))
      seen.insert(names.begin(), names.end());
  bool state_name = false;
  for (const auto& n : seen) state_name |= n.rfind("p_", 0) == 0 || n.rfind("b_", 0) == 0;
  EXPECT_GT(seen.size(), 10u);
  EXPECT_TRUE(state_name);
  // Without the flag the parameters are v_<node>.
  py = emitted("seed-quickstart");
  EXPECT_NE(py.find("    def forward(self, v_x, v_scale):\n"), std::string::npos) << py;
  EXPECT_NE(py.find("    def forward(self, v_x):\n"), std::string::npos) << py;
  EXPECT_NE(py.find("\"hostile_names\": False"), std::string::npos);
}

// The entries of the CHILD_NAMES table of `py`: "M<i>.<flatcheck name>" -> Python name.
std::map<std::string, std::string> child_table(const std::string& py) {
  std::map<std::string, std::string> out;
  size_t at = py.find("\nCHILD_NAMES = {\n");
  if (at == std::string::npos) return out;
  const size_t end = py.find("\n}", at);
  for (at = py.find("    \"", at); at != std::string::npos && at < end;
       at = py.find("    \"", at + 1)) {
    const size_t colon = py.find("\": \"", at);
    const size_t close = py.find("\",", colon + 4);
    out[py.substr(at + 5, colon - at - 5)] = py.substr(colon + 4, close - colon - 4);
  }
  return out;
}

TEST(CliEmitTorchTest, HostileChildNamesNamesChildrenThroughChildNames) {
  // unflatten-dotted-call-target: the root calls its grandchild by a dotted target and reads
  // and updates its buffer. With --hostile-child-names every child is reached through
  // CHILD_NAMES (build()'s add_module, the call, the buffer's path), EXPECTED_STATE is keyed by
  // the Python names, and EXPORT_NAMES is not compared; the same on every emit.
  std::string py = emitted("unflatten-dotted-call-target", " --hostile-child-names");
  EXPECT_EQ(py, emitted("unflatten-dotted-call-target", " --hostile-child-names"));
  EXPECT_NE(py.find("\"hostile_child_names\": True"), std::string::npos);
  auto table = child_table(py);
  ASSERT_EQ(table.size(), 2u) << py;
  const std::string inner = table["M1.layer0"], outer = table["M2.layer0"];
  EXPECT_FALSE(inner == "layer0" && outer == "layer0") << py;
  for (const char* want :
       {"m_M1.add_module(CHILD_NAMES[\"M1.layer0\"], m_M0)",
        "m_M2.add_module(CHILD_NAMES[\"M2.layer0\"], m_M1)",
        "getattr(getattr(self, CHILD_NAMES[\"M2.layer0\"]), CHILD_NAMES[\"M1.layer0\"]), v_x)",
        "_R.copy(self, CHILD_NAMES[\"M2.layer0\"] + \".\" + CHILD_NAMES[\"M1.layer0\"] + "
        "\".buf\", ",
        "EXPORT_NAMES = None  # children named for torch"})
    EXPECT_NE(py.find(want), std::string::npos) << want << "\n" << py;
  EXPECT_NE(py.find("    \"" + outer + "." + inner + ".buf\": _t("), std::string::npos) << py;
  EXPECT_EQ(py.find("self.layer0"), std::string::npos) << py;
  // Across cases: children renamed and kept, no two children of a module alike, no '@' or '.',
  // no name a module's state holds.
  size_t renamed = 0, kept = 0;
  for (const char* name :
       {"seed-quickstart", "fault-mangled-fqn-collision", "fault-swap-by-name",
        "unflatten-dotted-call-target", "found-variants-of-two-input-shapes",
        "fault-dedup-ignores-call-targets", "found-skip-level-variant-behind-stub"}) {
    std::map<std::string, std::set<std::string>> per_class;
    for (const auto& [key, value] : child_table(emitted(name, " --hostile-child-names"))) {
      const std::string cls = key.substr(0, key.find('.'));
      EXPECT_TRUE(per_class[cls].insert(value).second) << name << ": " << key << " " << value;
      EXPECT_EQ(value.find_first_of("@."), std::string::npos) << value;
      (value == key.substr(key.find('.') + 1) ? kept : renamed) += 1;
    }
  }
  EXPECT_GT(renamed, 2u);
  EXPECT_GT(kept, 0u);
  // Without the flag: no table, children by their names.
  py = emitted("unflatten-dotted-call-target");
  EXPECT_EQ(py.find("CHILD_NAMES"), std::string::npos) << py;
  EXPECT_NE(py.find("add_module(\"layer0\", m_M0)"), std::string::npos) << py;
  EXPECT_NE(py.find("self.layer0.layer0"), std::string::npos) << py;
  EXPECT_NE(py.find("\"hostile_child_names\": False"), std::string::npos);
}

TEST(CliShrinkPredicateTest, MinimizesAgainstAnExternalCommand) {
  std::string dir = scratch("pred");
  std::string src = std::string(FLATCHECK_SOURCE_DIR) + "/corpus/regression/seed-graph-break.json";
  // Interesting while the case still has a tanh: the minimizer must keep one and drop the rest.
  CliRun r = run_cli("shrink " + src + " -o " + dir + "/min.json --predicate \"grep -q tanh {}\"");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("predicate:external:-"), std::string::npos) << r.out;
  Case before = load_case_file(src), after = load_case_file(dir + "/min.json");
  EXPECT_LT(case_size(after), case_size(before));
  EXPECT_NE(slurp(dir + "/min.json").find("\"tanh\""), std::string::npos);
  // Not interesting at the start: bad input.
  CliRun no = run_cli("shrink " + src + " -o " + dir + "/no.json --predicate false");
  EXPECT_EQ(no.code, 2) << no.out;
  EXPECT_NE(no.out.find("predicate does not hold"), std::string::npos) << no.out;
  // A run past --timeout is killed and judged not interesting.
  CliRun slow =
      run_cli("shrink " + src + " -o " + dir + "/slow.json --predicate \"sleep 20\" --timeout 0.3");
  EXPECT_EQ(slow.code, 2) << slow.out;
}

TEST(CliShrinkPredicateTest, TimeBudgetStopsWithTheSmallestCaseSoFar) {
  std::string dir = scratch("budget");
  std::string src = std::string(FLATCHECK_SOURCE_DIR) + "/corpus/regression/seed-graph-break.json";
  // Every candidate is "still failing" and each check sleeps 0.3 s: with no budget this shrink
  // runs 16 checks to its fixpoint; a 0.5 s budget allows two or three. Counts, not times, are
  // compared.
  CliRun r = run_cli("shrink " + src + " -o " + dir +
                     "/min.json --predicate \"sleep 0.3; test -f {}\" " + "--time-budget 0.5");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("stopped by --max-checks or --time-budget"), std::string::npos) << r.out;
  size_t at = r.out.find(" nodes in ");
  ASSERT_NE(at, std::string::npos) << r.out;
  int checks = std::atoi(r.out.c_str() + at + 10);
  EXPECT_GE(checks, 1) << r.out;
  EXPECT_LE(checks, 6) << "the budget was not read: " << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir + "/min.json"));
}

// A shrink against a slow predicate says how far it got: off a terminal a whole line every 10 s
// (after a check, kept or not), and --quiet silences it. Each check sleeps 1 s; the 10.5 s budget
// ends the shrink after the check that crosses 10 s. The two shrinks run side by side.
TEST(CliShrinkPredicateTest, ProgressIsALineEvery10SecondsOffATerminalUnlessQuiet) {
  std::string dir = scratch("progress");
  std::string src = std::string(FLATCHECK_SOURCE_DIR) + "/corpus/regression/seed-graph-break.json";
  auto cmd = [&](const std::string& out) {
    return "shrink " + src + " -o " + dir + "/" + out +
           " --predicate \"sleep 1; test -f {}\" --time-budget 10.5";
  };
  auto quiet_run =
      std::async(std::launch::async, [&] { return run_cli(cmd("quiet.json") + " --quiet"); });
  CliRun shown = run_cli(cmd("min.json"));
  CliRun quiet = quiet_run.get();
  EXPECT_EQ(shown.code, 1) << shown.out;
  EXPECT_EQ(quiet.code, 1) << quiet.out;
  size_t at = shown.out.find(" checks, ");
  ASSERT_NE(at, std::string::npos) << "no progress line: " << shown.out;
  size_t end = shown.out.find('\n', at);
  ASSERT_NE(end, std::string::npos) << shown.out;
  EXPECT_EQ(shown.out.substr(0, end).find('\r'), std::string::npos) << shown.out;
  EXPECT_EQ(shown.out.find(" checks, ", end), std::string::npos)
      << "one line in 10.5 s: " << shown.out;
  EXPECT_EQ(quiet.out.find(" checks, "), std::string::npos) << quiet.out;
}

TEST(CliShrinkTest, PrintsTheReproInTextFormWithItsSignature) {
  std::string dir = scratch("print");
  std::string src = std::string(FLATCHECK_SOURCE_DIR) + "/corpus/regression/seed-graph-break.json";
  CliRun r = run_cli("shrink " + src + " -o " + dir + "/min.json --inject inline-by-name");
  EXPECT_EQ(r.code, 1) << r.out;
  Case min = load_case_file(dir + "/min.json");
  ASSERT_TRUE(min.expect);
  EXPECT_NE(r.out.find("signature: " + min.expect->signature()), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("module <root>"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("graph("), std::string::npos) << r.out;
}

}  // namespace
}  // namespace flatcheck
