// The CLI: exit codes, show at every stage, replay of the corpus.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/serialize/serialize.h"
#include "generators/examples.h"
#include "harness/campaign.h"
#include "harness/isolate.h"
#include "harness/minimize.h"
#include "harness/oracle.h"
#include "harness/reach.h"
#include "tests/harness/cli_run.h"

namespace flatcheck {
namespace {

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

// FLATCHECK_ALLOCATOR is read: the build's resolved choice (CMake's, passed to this test) is the
// allocator the CLI reports, and a mimalloc build's std::malloc really allocates from mimalloc.
TEST(CliTest, VersionNamesTheAllocatorTheBuildChose) {
  CliRun r = cli("--version");
  ASSERT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("flatcheck "), std::string::npos) << r.out;
  std::string expected = FLATCHECK_EXPECT_ALLOCATOR;
  if (expected == "mimalloc") {
    EXPECT_NE(r.out.find("\nallocator: mimalloc 2."), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("does not use it"), std::string::npos) << r.out;
  } else {
    EXPECT_NE(r.out.find("\nallocator: system malloc\n"), std::string::npos) << r.out;
  }
}

TEST(CliTest, FuzzEndsWithAJsonLineOfFigures) {
  CliRun r = cli("fuzz --cases 100 --seed 1 --json --out ''");
  ASSERT_EQ(r.code, 0) << r.out;
  // Exactly one JSON line, the last.
  size_t json_lines = 0;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) json_lines += !line.empty() && line[0] == '{';
  EXPECT_EQ(json_lines, 1u) << r.out;
  std::string last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  Json j = Json::parse(last);
  EXPECT_EQ(j["cases"], 100);
  EXPECT_EQ(j["failures"], 0);
  EXPECT_GT(j["cases_per_sec"].get<double>(), 0.0);
  // Reach: one count per shape of harness/reach.def, also in the text summary above.
  const Json& reach = j["coverage"]["reach"];
  ASSERT_EQ(reach.size(), static_cast<size_t>(kNumReach)) << reach.dump();
  for (int i = 0; i < kNumReach; ++i) {
    std::string name(reach_name(static_cast<Reach>(i)));
    ASSERT_TRUE(reach.contains(name)) << name;
    EXPECT_LE(reach[name].get<int>(), 100) << name;
    EXPECT_NE(r.out.find("  " + name + " "), std::string::npos) << name;
  }
  EXPECT_GT(reach["specialized-calls"].get<int>(), 0);
  // Flat nodes come back from the isolated workers and are printed as in the JSON.
  int flat = j["coverage"]["flat_nodes"].get<int>();
  EXPECT_GE(flat, j["coverage"]["nodes"].get<int>() / 2);
  EXPECT_NE(r.out.find("  flat nodes         " + std::to_string(flat) + " ("), std::string::npos)
      << r.out;
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

// Control characters a hostile file or argument carries never reach the terminal raw: a string
// value holding one is refused, the error naming it (U+001B), and each place an error quotes
// input (a key, a child name, an argument, a file name) prints them escaped, on one line.
TEST(CliTest, ErrorsQuotingHostileTextEscapeControlCharacters) {
  namespace fs = std::filesystem;
  fs::path tmp = fs::temp_directory_path() / "flatcheck-hostile-text";
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  std::string text;
  {
    std::ifstream in(corpus("seed-graph-break.json"));
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) t.replace(at, from.size(), to);
    return t;
  };
  // `shown`: how the error must spell the control character. A string value holding one is
  // refused by the loader, which names it (docs/hardening.md); a key, an argument or a file name
  // is quoted in the error, escaped.
  struct Hostile {
    std::string what, file_text, args, shown;
  };
  const std::string esc = "\\u001b[2J";  // a JSON escape: the file holds ESC [ 2 J
  std::vector<Hostile> cases = {
      {"a node name", with("\"name\": \"tanh\"", "\"name\": \"t" + esc + "\""), "", "U+001B"},
      {"an unknown key", with("\"name\": \"tanh\"", "\"name\": \"tanh\", \"k" + esc + "\": 1"), "",
       "\\x1b"},
      {"a child name", with("\"module\": {", "\"module\": {\"children\": {\"c" + esc + "\": {}}, "),
       "", "\\x1b"},
      {"an op", with("\"target\": \"tanh\"", "\"target\": \"tanh" + esc + "\""), "", "U+001B"},
      {"a C1 control", with("\"target\": \"tanh\"", "\"target\": \"tanh\\u009b2J\""), "", "U+009B"},
      {"a newline", with("\"name\": \"tanh\"", "\"name\": \"t\\nflatcheck: ok\""), "", "U+000A"},
      {"an argument", "", "fuzz --cases '\x1b[2J'", "\\x1b"},  // the raw byte, quoted for sh
      {"a file name", "", "validate '" + (tmp / "no\x1b[2Jfile.json").string() + "'", "\\x1b"},
  };
  int n = 0;
  for (const Hostile& h : cases) {
    std::string args = h.args;
    if (!h.file_text.empty()) {
      fs::path f = tmp / ("case" + std::to_string(n++) + ".json");
      std::ofstream(f) << h.file_text;
      args = "validate " + f.string();
    }
    CliRun r = cli(args);
    EXPECT_EQ(r.code, 2) << h.what << ": " << r.out;
    std::string body = r.out.substr(0, r.out.find("\nRun 'flatcheck"));
    ASSERT_FALSE(body.empty()) << h.what;
    if (body.back() == '\n') body.pop_back();
    for (char c : body)
      EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
          << h.what << ": a raw control character " << int(c) << " in: " << r.out;
    EXPECT_EQ(body.find("\xc2\x9b"), std::string::npos) << h.what << ": a raw C1 control";
    EXPECT_NE(body.find(h.shown), std::string::npos)
        << h.what << ": the control character is not shown as " << h.shown << ": " << r.out;
  }
  fs::remove_all(tmp);
}

// --sarif and --junit are checked before any case runs, for each way a path can be unwritable: a
// campaign must not run for hours and then fail to write its report.
TEST(CliTest, UnwritableReportPathsExitTwoBeforeTheRun) {
  namespace fs = std::filesystem;
  fs::path tmp = fs::temp_directory_path() / "flatcheck-report-paths";
  fs::remove_all(tmp);
  fs::create_directories(tmp / "a-folder");
  std::ofstream(tmp / "a-file") << "x";
  const std::string bad_paths[] = {
      "/proc/flatcheck-no-such/r.out",      // a folder that cannot be created
      (tmp / "a-file" / "r.out").string(),  // a folder under a regular file
      (tmp / "a-folder").string(),          // the report path is a folder
      "''",                                 // no name at all
  };
  for (const char* flag : {"--sarif", "--junit"}) {
    for (const std::string& bad : bad_paths) {
      fs::path out = tmp / "out";
      fs::remove_all(out);
      CliRun r =
          cli("fuzz --cases 1 --no-isolate --quiet --out " + out.string() + " " + flag + " " + bad);
      EXPECT_EQ(r.code, 2) << flag << " " << bad << ": " << r.out;
      EXPECT_NE(r.out.find(flag), std::string::npos) << r.out;
      EXPECT_FALSE(fs::exists(out / "campaign.state"))
          << flag << " " << bad << ": the campaign ran";
      CliRun replay =
          cli("replay --no-isolate " + corpus("seed-graph-break.json") + " " + flag + " " + bad);
      EXPECT_EQ(replay.code, 2) << flag << " " << bad << ": " << replay.out;
      EXPECT_EQ(replay.out.find("PASS"), std::string::npos) << "replay ran first: " << replay.out;
    }
  }
  // shrink -o and example -o: the same paths are bad input (2) before any shrinking, not a
  // system failure (3) at the end.
  for (const std::string& bad : bad_paths) {
    CliRun shrink = cli("shrink " + corpus("seed-graph-break.json") +
                        " --inject inline-by-name --max-checks 5 -o " + bad);
    EXPECT_EQ(shrink.code, 2) << bad << ": " << shrink.out;
    EXPECT_EQ(shrink.out.find("shrink:"), std::string::npos) << "it shrank first: " << shrink.out;
    if (bad == "''") continue;  // example -o '' writes to stdout
    CliRun example = cli("example graph-break -o " + bad);
    EXPECT_EQ(example.code, 2) << bad << ": " << example.out;
  }
  // The writer itself: a folder it cannot create is a SystemError naming the file, not a
  // std::filesystem exception.
  for (const std::string& bad :
       {std::string("/proc/flatcheck-no-such/r.out"), (tmp / "a-file" / "r.out").string()}) {
    try {
      write_file_atomic(bad, "x");
      ADD_FAILURE() << bad << " was written";
    } catch (const SystemError& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
  // A report in a folder not there yet is created with it.
  CliRun ok = cli("fuzz --cases 1 --no-isolate --quiet --out '' --sarif " +
                  (tmp / "new" / "deeper" / "r.sarif").string());
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_TRUE(fs::is_regular_file(tmp / "new" / "deeper" / "r.sarif"));
  fs::remove_all(tmp);
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
