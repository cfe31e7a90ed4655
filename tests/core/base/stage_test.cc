// The pipeline table (stages.def): order, names, inputs.
#include "core/base/stage.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace flatcheck {
namespace {

TEST(StageTest, TheReferenceComesFirstAndThePathsFollowInTableOrder) {
  ASSERT_FALSE(all_stages().empty());
  EXPECT_EQ(all_stages().front(), Stage::kEager);
  EXPECT_EQ(path_stages().size() + 1, all_stages().size());
  for (size_t i = 0; i < path_stages().size(); ++i)
    EXPECT_EQ(path_stages()[i], all_stages()[i + 1]);
  // The six stages of DESIGN §2, in the order the oracle runs them.
  std::vector<std::string> names;
  for (Stage s : all_stages()) names.emplace_back(stage_name(s));
  EXPECT_EQ(names, (std::vector<std::string>{"eager", "exported", "partitioned", "flattened",
                                             "reloaded", "unflattened"}));
}

TEST(StageTest, NamesAreUniqueAndFoundAgain) {
  std::set<std::string_view> seen;
  for (Stage s : all_stages()) {
    EXPECT_TRUE(seen.insert(stage_name(s)).second);
    EXPECT_EQ(stage_by_name(stage_name(s)), s);
    EXPECT_FALSE(stage_doc(s).empty());
    EXPECT_NE(stage_names_text().find(stage_name(s)), std::string_view::npos);
  }
  EXPECT_FALSE(stage_by_name("compiled"));
}

TEST(StageTest, EveryPathIsBuiltFromAStageEarlierInTheTable) {
  std::set<Stage> earlier{Stage::kEager};
  for (Stage s : path_stages()) {
    EXPECT_TRUE(earlier.count(stage_input(s))) << stage_name(s);
    earlier.insert(s);
  }
  EXPECT_EQ(stage_input(Stage::kFlattened), Stage::kPartitioned);
  EXPECT_EQ(stage_input(Stage::kUnflattened), Stage::kExported);
}

}  // namespace
}  // namespace flatcheck
