// The tests' main: rapidcheck properties run with a fixed seed, so a run is reproducible on
// any machine; the budget comes from the environment.
//   FLATCHECK_PROP_CASES=N  cases per rapidcheck property (default 100; nightly: 10000)
//   FLATCHECK_PROP_SEED=S   the seed (default 20261122); a nightly run varies it
// RC_PARAMS, when set, wins.
//
// Each test process runs in a fresh folder of its own (removed at exit): ctest runs the tests
// in parallel, one process each, and a relative path one test writes (the campaign's default
// --out, corpus/found, and its lock) must never be one another test is writing too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace {

std::string g_private_dir;
pid_t g_owner = 0;

// Only by the process that made it: a forked child that exits must not take it away.
void remove_private_dir() {
  if (getpid() != g_owner) return;
  std::error_code ec;
  std::filesystem::remove_all(g_private_dir, ec);
}

// FLATCHECK_TEST_CWD is set to the folder, for the test that checks this.
void enter_private_dir() {
  std::string tmpl = std::filesystem::temp_directory_path().string() + "/flatcheck-test-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr || chdir(tmpl.c_str()) != 0) {
    std::perror("test_main: cannot make and enter a private working folder");
    std::exit(2);
  }
  g_private_dir = tmpl;
  g_owner = getpid();
  setenv("FLATCHECK_TEST_CWD", tmpl.c_str(), 1);
  std::atexit(remove_private_dir);
}

}  // namespace

int main(int argc, char** argv) {
  enter_private_dir();
  if (std::getenv("RC_PARAMS") == nullptr) {
    const char* n = std::getenv("FLATCHECK_PROP_CASES");
    const char* seed = std::getenv("FLATCHECK_PROP_SEED");
    std::string params = "max_success=" + std::string(n && *n ? n : "100") +
                         " seed=" + std::string(seed && *seed ? seed : "20261122") +
                         " verbose_progress=0";
    setenv("RC_PARAMS", params.c_str(), 1);
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
