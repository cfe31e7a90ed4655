// The tests' main: property budgets come from the environment.
//   FLATCHECK_PROP_CASES=N  cases per rapidcheck property (default 100; nightly: 10000)
// RC_PARAMS, when set, wins.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  if (std::getenv("RC_PARAMS") == nullptr) {
    const char* n = std::getenv("FLATCHECK_PROP_CASES");
    std::string params = "max_success=" + std::string(n && *n ? n : "100") + " verbose_progress=0";
    setenv("RC_PARAMS", params.c_str(), 1);
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
