// The tests' main: rapidcheck properties run with a fixed seed, so a run is reproducible on
// any machine; the budget comes from the environment.
//   FLATCHECK_PROP_CASES=N  cases per rapidcheck property (default 100; nightly: 10000)
//   FLATCHECK_PROP_SEED=S   the seed (default 20261122); a nightly run varies it
// RC_PARAMS, when set, wins.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
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
