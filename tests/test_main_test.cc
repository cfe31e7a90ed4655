// The tests' main: rapidcheck properties run with the fixed seed it sets (or
// FLATCHECK_PROP_SEED's), so a property failure reproduces on any machine.
#include <gtest/gtest.h>
#include <rapidcheck/detail/Configuration.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

TEST(TestMainTest, PropertiesRunWithAFixedSeed) {
  const char* env = std::getenv("FLATCHECK_PROP_SEED");
  const char* rc = std::getenv("RC_PARAMS");
  ASSERT_NE(rc, nullptr) << "test_main.cc sets RC_PARAMS";
  if (std::string(rc).find("seed=") == std::string::npos)
    GTEST_SKIP() << "RC_PARAMS was given without a seed: " << rc;
  uint64_t want = env && *env ? std::strtoull(env, nullptr, 10) : 20261122u;
  EXPECT_EQ(rc::detail::configuration().testParams.seed, want);
}

// Parallel tests never share a relative path: each process works in a fresh folder of its own.
TEST(TestMainTest, EachTestProcessWorksInAFreshFolderOfItsOwn) {
  const char* dir = std::getenv("FLATCHECK_TEST_CWD");
  ASSERT_NE(dir, nullptr) << "test_main.cc names the folder it entered";
  EXPECT_EQ(std::filesystem::current_path(), std::filesystem::path(dir));
  EXPECT_NE(std::string(dir).find("/flatcheck-test-"), std::string::npos) << dir;
}

}  // namespace
