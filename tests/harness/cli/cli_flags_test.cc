// The flag table (harness/cli/flags.def) against what users read: every command's --help and
// docs/cli.md list the same flags, and numbers are parsed strictly.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "tests/harness/cli_run.h"

namespace flatcheck {
namespace {

// The flags named in a piece of usage text: tokens starting with '-' after a space, '[' or '|'.
std::set<std::string> flags_in(const std::string& text) {
  std::set<std::string> out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '-' || (i > 0 && text[i - 1] != ' ' && text[i - 1] != '[' && text[i - 1] != '|'))
      continue;
    size_t j = i;
    while (j < text.size() && (text[j] == '-' || std::islower(static_cast<unsigned char>(text[j]))))
      ++j;
    std::string tok = text.substr(i, j - i);
    if (tok.size() >= 2 && tok.find_first_not_of('-') <= 2 && tok.back() != '-') out.insert(tok);
    i = j;
  }
  return out;
}

// docs/cli.md's synopses by command: the lines of its code blocks that start with
// "flatcheck NAME", with their indented continuation lines.
std::map<std::string, std::string> doc_synopses() {
  std::ifstream in(std::string(FLATCHECK_SOURCE_DIR) + "/docs/cli.md");
  std::map<std::string, std::string> out;
  std::string line, current;
  bool code = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      code = !code;
      current.clear();
      continue;
    }
    if (!code) continue;
    if (line.rfind("flatcheck ", 0) == 0) {
      std::istringstream words(line.substr(10));
      words >> current;
      out[current] += line.substr(10 + current.size()) + " ";
    } else if (!current.empty() && !line.empty() && line[0] == ' ') {
      out[current] += line + " ";
    }
  }
  return out;
}

// The commands `flatcheck --help` lists.
std::set<std::string> commands() {
  std::istringstream lines(run_cli("--help").out);
  std::set<std::string> out;
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("  flatcheck ", 0) != 0) continue;
    std::istringstream words(line.substr(12));
    std::string name;
    words >> name;
    if (name != "help") out.insert(name);
  }
  return out;
}

// The flags a command's --help lists (the flag lines), each with its aliases.
std::set<std::string> help_flags(const std::string& cmd, std::set<std::string>* aliases) {
  CliRun r = run_cli(cmd + " --help");
  EXPECT_EQ(r.code, 0) << cmd << ": " << r.out;
  std::istringstream lines(r.out);
  std::set<std::string> out;
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("  -", 0) != 0) continue;
    std::istringstream words(line);
    std::string name;
    words >> name;
    bool alias = !name.empty() && name.back() == ',';
    if (alias) name.pop_back();
    out.insert(name);
    if (alias) {
      std::string second;
      words >> second;
      aliases->insert(second);
    }
  }
  return out;
}

TEST(CliFlagsTest, DocsAndHelpListTheSameCommandsAndFlags) {
  auto docs = doc_synopses();
  auto cmds = commands();
  ASSERT_GE(cmds.size(), 10u) << run_cli("--help").out;
  std::set<std::string> documented;
  for (const auto& [name, _] : docs) documented.insert(name);
  EXPECT_EQ(documented, cmds) << "docs/cli.md's code blocks and 'flatcheck --help' differ";
  for (const auto& cmd : cmds) {
    std::set<std::string> aliases;
    std::set<std::string> help = help_flags(cmd, &aliases);
    std::set<std::string> doc = flags_in(docs[cmd]);
    for (const auto& a : aliases) doc.erase(a);  // docs may name a flag by its alias too
    EXPECT_EQ(doc, help) << "docs/cli.md and 'flatcheck " << cmd << " --help' differ";
    // The usage line printed by --help names the same flags as its flag lines.
    std::string usage = run_cli(cmd + " --help").out;
    usage = usage.substr(usage.find("usage:"));
    usage = usage.substr(0, usage.find("\n\n"));
    std::set<std::string> in_usage = flags_in(usage);
    for (const auto& a : aliases) in_usage.erase(a);
    EXPECT_EQ(in_usage, help) << cmd << "'s usage line and its flag lines differ";
  }
}

TEST(CliFlagsTest, NumbersAreStrictDecimalTokens) {
  for (const char* bad :
       {"--shard 1x/2", "--shard abc/2", "--shard 1/2x", "--shard /2", "--shard 1/", "--shard 01/2",
        "--seed 010", "--seed 0x10", "--seed -1", "--seed +5", "--seed 5x", "--seed ''",
        "--jobs 1.5", "--max-nodes 1e2", "--time nan", "--time 0x1p3", "--time inf"}) {
    CliRun r = run_cli(std::string("fuzz --out '' --quiet ") + bad);
    EXPECT_EQ(r.code, 2) << bad << ": " << r.out;
    EXPECT_NE(r.out.find("expects"), std::string::npos) << bad << ": " << r.out;
  }
  // The same values in plain decimal are accepted.
  CliRun ok = run_cli("fuzz --out '' --quiet --cases 2 --seed 10 --shard 1/2 --jobs 1 --json");
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("\"seed\":10"), std::string::npos) << ok.out;
  EXPECT_EQ(run_cli("fuzz --out '' --quiet --time 0.5 --no-isolate").code, 0);
}

TEST(CliFlagsTest, AFlagOfAnotherCommandIsRejectedWithTheCommandNamed) {
  CliRun r = run_cli("detect --max-nodes 5");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("unknown option '--max-nodes' for 'detect'"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli("faults --verbose=yes").code, 2) << "a switch takes no value";
  EXPECT_EQ(run_cli("show --stage").code, 2) << "a valued flag needs its value";
}

}  // namespace
}  // namespace flatcheck
