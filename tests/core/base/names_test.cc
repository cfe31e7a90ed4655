// Dotted names: module paths, call keys, provenance keys and variant names.
#include "core/base/names.h"

#include <gtest/gtest.h>

namespace flatcheck {
namespace {

TEST(NamesTest, JoinAddsADotOnlyAfterANonEmptyPrefix) {
  EXPECT_EQ(join_fqn("", "b"), "b");
  EXPECT_EQ(join_fqn("a", "b"), "a.b");
  EXPECT_EQ(join_fqn("a.b", "c"), "a.b.c");
}

TEST(NamesTest, SplitIsTheInverseOfJoin) {
  EXPECT_EQ(split_fqn(""), std::vector<std::string>{});
  EXPECT_EQ(split_fqn("a"), (std::vector<std::string>{"a"}));
  EXPECT_EQ(split_fqn("a.b@1.c"), (std::vector<std::string>{"a", "b@1", "c"}));
}

TEST(NamesTest, TheFirstCallKeyIsTheFqnAndLaterOnesCarryTheirIndex) {
  EXPECT_EQ(call_key("n", 0), "n");
  EXPECT_EQ(call_key("n", 1), "n@1");
  EXPECT_EQ(call_key("a.b", 12), "a.b@12");
  EXPECT_EQ(origin_key("", "add"), "add");
  EXPECT_EQ(origin_key("n@1", "add"), "n@1/add");
}

TEST(NamesTest, VariantsOfOneModuleShareTheirStrippedPath) {
  EXPECT_EQ(strip_variants("a@1.b@2"), "a.b");
  EXPECT_EQ(strip_variants("a.b"), "a.b");
  EXPECT_EQ(strip_variants(""), "");
  EXPECT_TRUE(is_variant_name("n@1"));
  EXPECT_TRUE(is_variant_name("block@12"));
  EXPECT_FALSE(is_variant_name("n"));
  EXPECT_FALSE(is_variant_name("n@"));
  EXPECT_FALSE(is_variant_name("n@x"));
  EXPECT_FALSE(is_variant_name("n@1a"));
}

}  // namespace
}  // namespace flatcheck
