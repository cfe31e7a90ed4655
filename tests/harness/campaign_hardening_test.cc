// Campaigns that survive kill -9, full disks, bad folders, tampered state and each other
// (docs/hardening.md). Each scenario runs the real flatcheck binary in its own process group.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "core/serialize/serialize.h"
#include "tests/harness/cli_run.h"

namespace flatcheck {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string fresh_dir(const std::string& name) {
  std::string dir = testing::TempDir() + "/hardening_" + name;
  fs::remove_all(dir);
  return dir;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Starts flatcheck with `args` as the leader of a new process group; output to `log`.
pid_t spawn(const std::vector<std::string>& args, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    setsid();
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv;
    std::string bin = FLATCHECK_BIN;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

// Waits for `pid` to exit; returns its status, or -1 after `seconds`.
int wait_for(pid_t pid, double seconds) {
  auto end = Clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (Clock::now() < end) {
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

bool wait_until(const std::function<bool()>& cond, double seconds) {
  auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return cond();
}

bool group_alive(pid_t pgid) {
  return kill(-pgid, 0) == 0;
}

int64_t state_int(const std::string& dir, const char* key) {
  try {
    Json s = Json::parse(slurp(dir + "/campaign.state"));
    return s.at(key).get<int64_t>();
  } catch (...) {
    return -1;
  }
}

TEST(CampaignHardeningTest, KillNineThenResumeContinuesFromTheSavedState) {
  std::string dir = fresh_dir("kill9");
  // --max-nodes 8: the resume minimizes every finding the kill left (the campaign's --max-nodes
  // is in its state), which at the default size is most of this test's time under sanitizers.
  pid_t pid = spawn({"fuzz", "--cases", "100000000", "--seed", "9", "--jobs", "2", "--out", dir,
                     "--inject", "inline-by-name", "--no-minimize", "--max-nodes", "8"},
                    dir + ".log");
  ASSERT_TRUE(wait_until([&] { return state_int(dir, "next_slot") > 200; }, 60))
      << "no state with progress was written: " << slurp(dir + ".log");
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  wait_for(pid, 5);
  // The forked workers die with their parent.
  EXPECT_TRUE(wait_until([&] { return !group_alive(pid); }, 5)) << "orphaned workers remain";
  int64_t saved = state_int(dir, "next_slot");
  ASSERT_GT(saved, 200);
  EXPECT_EQ(state_int(dir, "seed"), 9);
  bool raw_finding = false;
  for (auto& e : fs::directory_iterator(dir))
    raw_finding |= e.path().filename().string().rfind("lint-flattened", 0) == 0;
  EXPECT_TRUE(raw_finding) << "the finding's raw case is not on disk";
  CliRun r = run_cli("fuzz --resume " + dir + " --cases 50 --inject inline-by-name --json");
  // The finding the kill left unminimized is minimized now and listed once, from its case
  // before the kill; the resumed cases do not report its signature again.
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.out;
  size_t at = r.out.find("\"signature\":\"lint:flattened");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\"signature\":\"lint:flattened", at + 1), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("resumed at case slot " + std::to_string(saved)), std::string::npos)
      << "saved " << saved << ": " << r.out;
  EXPECT_NE(r.out.find(", seed 9,"), std::string::npos) << r.out;  // what actually ran
  EXPECT_NE(r.out.find("\"seed\":9"), std::string::npos) << r.out;
  EXPECT_EQ(state_int(dir, "next_slot"), saved + 50);
  // Once minimized, a further resume reports it no more.
  CliRun again = run_cli("fuzz --resume " + dir + " --cases 10 --inject inline-by-name --json");
  EXPECT_EQ(again.out.find("\"signature\":\"lint:flattened"), std::string::npos) << again.out;
}

// A child process of `parent` (a forked worker), or -1.
pid_t child_of(pid_t parent) {
  for (auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat = slurp(e.path().string() + "/stat");
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + close + 2, "%*c %d", &ppid) == 1 && ppid == parent)
      return static_cast<pid_t>(std::stoi(name));
  }
  return -1;
}

// A worker killed from outside (the OOM killer, a user) makes a crash that a second run does
// not repeat: the campaign finishes, reports it labelled as not reproducing, and does not
// minimize it. Workers are killed several times, at different moments (while a case is
// generated, while it runs, between cases): every kill is such a finding, never an error.
TEST(CampaignHardeningTest, AWorkerKilledFromOutsideIsReportedAsNotReproducing) {
  std::string dir = fresh_dir("killed-worker");
  pid_t pid = spawn({"fuzz", "--time", "6", "--seed", "5", "--out", dir, "--json"}, dir + ".log");
  int kills = 0;
  for (int delay_ms : {300, 0, 170, 45, 90, 20}) {
    pid_t worker = -1;
    if (!wait_until([&] { return (worker = child_of(pid)) > 0; }, 20)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    worker = child_of(pid);
    if (worker > 0 && kill(worker, SIGKILL) == 0) ++kills;
    std::this_thread::sleep_for(std::chrono::milliseconds(150));  // its death is handled
  }
  ASSERT_GT(kills, 0) << slurp(dir + ".log");
  int status = wait_for(pid, 60);
  ASSERT_TRUE(WIFEXITED(status)) << slurp(dir + ".log");
  std::string log = slurp(dir + ".log");
  EXPECT_EQ(WEXITSTATUS(status), 1) << log;
  EXPECT_NE(log.find("SIGKILL"), std::string::npos) << log;
  EXPECT_NE(log.find("(did not reproduce alone)"), std::string::npos) << log;
  EXPECT_NE(log.find("\"reproducible\":false"), std::string::npos) << log;
  EXPECT_EQ(log.find("\"reproducible\":true"), std::string::npos) << log;
  EXPECT_EQ(log.find("error"), std::string::npos) << log;
}

// The folder of a running campaign removed and made again: the campaign no longer holds the
// lock of the folder at that path (another campaign could take it), so it stops, exit 3.
TEST(CampaignHardeningTest, ACampaignWhoseFolderIsReplacedStops) {
  std::string dir = fresh_dir("replaced");
  pid_t pid = spawn({"fuzz", "--time", "60", "--out", dir}, dir + ".log");
  ASSERT_TRUE(wait_until([&] { return fs::exists(dir + "/.campaign.lock"); }, 20));
  fs::remove_all(dir);
  fs::create_directories(dir);
  int status = wait_for(pid, 20);  // the state is saved every 2 s
  ASSERT_TRUE(WIFEXITED(status)) << slurp(dir + ".log");
  EXPECT_EQ(WEXITSTATUS(status), 3) << slurp(dir + ".log");
  EXPECT_NE(slurp(dir + ".log").find("removed or replaced"), std::string::npos)
      << slurp(dir + ".log");
}

TEST(CampaignHardeningTest, TwoCampaignsCannotShareAnOutFolder) {
  std::string dir = fresh_dir("shared");
  pid_t first = spawn({"fuzz", "--time", "30", "--out", dir}, dir + ".log");
  ASSERT_TRUE(wait_until([&] { return fs::exists(dir + "/.campaign.lock"); }, 20));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CliRun second = run_cli("fuzz --cases 10 --out " + dir);
  EXPECT_EQ(second.code, 2) << second.out;
  EXPECT_NE(second.out.find("another campaign is running"), std::string::npos) << second.out;
  kill(-first, SIGKILL);
  wait_for(first, 5);
}

TEST(CampaignHardeningTest, AnUnusableOutFolderIsRefusedBeforeAnyCase) {
  std::string file = fresh_dir("outfile");
  std::ofstream(file) << "not a folder";
  for (const std::string& out : {file, file + "/below", std::string("/proc/flatcheck-out")})
    for (const char* mode : {"", " --no-isolate"}) {
      auto t0 = Clock::now();
      CliRun r = run_cli("fuzz --cases 100000 --out " + out + mode);
      EXPECT_EQ(r.code, 2) << out << mode << ": " << r.out;
      EXPECT_NE(r.out.find(out.substr(0, file.size())), std::string::npos) << r.out;
      EXPECT_EQ(r.out.find("cases in"), std::string::npos) << "cases ran: " << r.out;
      EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 30);
    }
}

// A state as a campaign writes it (no fault, nothing found), with `extra` members replacing or
// adding to it.
std::string state_text(const Json& extra) {
  Json s{{"version", 3},
         {"inject", "none"},
         {"seed", 1},
         {"shard_index", 0},
         {"shard_count", 1},
         {"max_nodes", 20},
         {"next_slot", 0},
         {"cases_done", 0},
         {"done_after", Json::array()},
         {"signatures", Json::array()},
         {"findings", Json::array()}};
  for (auto& [k, v] : extra.items()) {
    if (v.is_null())
      s.erase(k);
    else
      s[k] = v;
  }
  return s.dump();
}

TEST(CampaignHardeningTest, ATamperedResumeStateIsRejectedWithItsJsonPath) {
  const std::vector<std::pair<std::string, std::string>> states = {
      {state_text({{"max_nodes", 100000000}}), "/max_nodes"},
      {state_text({{"shard_count", 0}}), "/shard_count"},
      {state_text({{"shard_count", 2}, {"shard_index", 3}}), "/shard_index"},
      {state_text({{"seed", -1}}), "/seed"},
      {state_text({{"next_slot", -5}}), "/next_slot"},
      {state_text({{"x", 1}}), "/x"},
      {state_text({{"next_slot", 9}, {"done_after", {3}}}), "/done_after"},
      {R"([1, 2])", "campaign.state: /: expected an object"},
      // Round three: the version is read, every count checked, the fault recorded.
      {state_text({{"version", 99}}), "/version: a campaign state of version 99"},
      {state_text({{"version", "3"}}), "/version"},
      {state_text({{"version", nullptr}}), "missing key 'version'"},
      {state_text({{"version", 2}}), "this build resumes version 3"},
      {state_text({{"cases_done", -5}}), "/cases_done"},
      {state_text({{"cases_done", "many"}}), "/cases_done"},
      {state_text({{"inject", "inline-by-name"}}), "ran with --inject inline-by-name"},
      {state_text({{"findings", {{{"index", 1}}}}}), "/findings/0"},
      {state_text({{"findings", Json::array({Json{{"index", 1},
                                                  {"property", "lint"},
                                                  {"stage", "flattened"},
                                                  {"op", "-"},
                                                  {"module", ""},
                                                  {"minimized", 1}}})}}),
       "/findings/0/minimized"},
      {state_text({}) + std::string("\0{\"seed\": 7}", 12), "NUL byte"},
  };
  int i = 0;
  for (const auto& [text, want] : states) {
    std::string dir = fresh_dir("tampered" + std::to_string(i++));
    fs::create_directories(dir);
    std::ofstream(dir + "/campaign.state", std::ios::binary) << text;
    CliRun r = run_cli("fuzz --resume " + dir + " --cases 5");
    EXPECT_EQ(r.code, 2) << text << ": " << r.out;
    EXPECT_NE(r.out.find(want), std::string::npos) << text << ": " << r.out;
    // Every state error names the file.
    EXPECT_NE(r.out.find(dir + "/campaign.state"), std::string::npos) << r.out;
  }
}

// Resuming reads the state and nothing else in the folder: a foreign case file's `expect` does
// not silence its signature, and a hostile file there is not read.
TEST(CampaignHardeningTest, ResumeReadsOnlyItsStateNotOtherFilesInTheFolder) {
  std::string dir = fresh_dir("foreign");
  CliRun first = run_cli("fuzz --cases 1 --seed 2 --out " + dir + " --inject inline-by-name");
  ASSERT_TRUE(first.code == 0 || first.code == 1) << first.out;
  ASSERT_EQ(first.out.find("lint:flattened"), std::string::npos) << first.out;
  // A foreign case claiming the signature the fault shows next, and a file no loader should
  // see: read on resume, the first would silence that signature.
  Json foreign = Json::parse(
      slurp(std::string(FLATCHECK_SOURCE_DIR) + "/corpus/regression/seed-quickstart.json"));
  foreign["expect"] = {{"property", "lint"}, {"stage", "flattened"}, {"op", "-"}};
  std::ofstream(dir + "/foreign.json") << foreign.dump();
  std::ofstream(dir + "/hostile.json") << std::string(1 << 20, '[');
  CliRun r =
      run_cli("fuzz --resume " + dir + " --cases 300 --inject inline-by-name --no-minimize --json");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("\"signature\":\"lint:flattened"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("hostile.json"), std::string::npos) << r.out;
}

// A finding whose file was deleted by hand is written again from its seed, and the summary says
// so; a resume with another --inject than the campaign's is refused.
TEST(CampaignHardeningTest, ResumeRestoresDeletedFindingsAndKeepsTheFault) {
  std::string dir = fresh_dir("deleted");
  CliRun first = run_cli("fuzz --cases 20 --seed 3 --out " + dir + " --inject inline-by-name");
  ASSERT_EQ(first.code, 1) << first.out;
  std::vector<fs::path> found;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") found.push_back(e.path());
  ASSERT_FALSE(found.empty());
  for (const auto& f : found) fs::remove(f);
  CliRun other = run_cli("fuzz --resume " + dir + " --cases 5");
  EXPECT_EQ(other.code, 2) << other.out;
  EXPECT_NE(other.out.find("ran with --inject inline-by-name"), std::string::npos) << other.out;
  CliRun r = run_cli("fuzz --resume " + dir + " --cases 5 --inject inline-by-name");
  EXPECT_TRUE(r.code == 0 || r.code == 1) << r.out;
  for (const auto& f : found) {
    EXPECT_TRUE(fs::exists(f)) << f << " was not written again";
    EXPECT_NE(r.out.find("note: " + f.string() + " was missing"), std::string::npos) << r.out;
  }
}

TEST(CampaignHardeningTest, AFullDiskEndsTheCampaignWithTheSystemErrorExitNamingThePath) {
  std::string dir = fresh_dir("tmpfs");
  fs::create_directories(dir);
  if (mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno)
                 << "): the full-disk scenario needs one";
  {  // leave about 4 KB free
    std::ofstream fill(dir + "/filler", std::ios::binary);
    std::string block(4096, 'x');
    for (int i = 0; i < 15; ++i) fill << block;
  }
  CliRun r = run_cli("fuzz --cases 5000 --inject inline-by-name --no-isolate --out " + dir);
  std::vector<std::string> temps;
  for (auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp") != std::string::npos)
      temps.push_back(e.path().string());
  umount(dir.c_str());
  EXPECT_EQ(r.code, 3) << r.out;  // a system failure, not bad input
  EXPECT_NE(r.out.find("system error: " + dir), std::string::npos) << r.out;
  EXPECT_TRUE(temps.empty()) << "a truncated temporary file was left: " << temps.front();
}

TEST(CampaignHardeningTest, ASecondCtrlCStopsAtOnce) {
  std::string dir = fresh_dir("ctrlc");
  // A case that hangs in-process: the first Ctrl-C cannot end it, the second must.
  pid_t pid = spawn({"fuzz", "--cases", "1000000", "--inject", "unflatten-dedup-hang",
                     "--no-isolate", "--out", dir},
                    dir + ".log");
  ASSERT_TRUE(wait_until([&] { return fs::exists(dir + "/.campaign.lock"); }, 20));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, SIGINT);
  int status = wait_for(pid, 5);
  if (status == -1) kill(-pid, SIGKILL), wait_for(pid, 5);
  ASSERT_NE(status, -1) << "the campaign was still running 5 s after the second Ctrl-C";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "status " << status;
}

}  // namespace
}  // namespace flatcheck
