// Sources of randomness: the seeded Rng is portable and its bounded draws are exact.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <set>

#include "core/passes/passes.h"
#include "core/runtime/interpreter.h"
#include "generators/generate.h"
#include "generators/rc_gen.h"
#include "harness/oracle.h"

namespace flatcheck {
namespace {

TEST(RngTest, SameSeedSameSequenceAndDrawsStayInRange) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 1000; ++i) {
    uint64_t x = a.below(1000), y = b.below(1000);
    EXPECT_EQ(x, y);
    EXPECT_LT(x, 1000u);
    differs |= x != c.below(1000);
  }
  EXPECT_TRUE(differs);
}

TEST(RngTest, BelowIsRoughlyUniform) {
  Rng r(7);
  std::vector<int> counts(10, 0);
  for (int i = 0; i < 100000; ++i) ++counts[r.below(10)];
  for (int c : counts) {
    EXPECT_GT(c, 9500);
    EXPECT_LT(c, 10500);
  }
}

}  // namespace
}  // namespace flatcheck
