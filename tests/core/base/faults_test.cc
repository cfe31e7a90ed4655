// The fault table: names, stages, the scoped switches the harness relies on.
#include "core/base/faults.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

namespace flatcheck {
namespace {

TEST(FaultsTest, EveryFaultIsFoundByItsNameAndNamesAreUnique) {
  std::set<std::string> names;
  for (const auto& f : all_faults()) {
    EXPECT_TRUE(names.insert(std::string(f.name)).second) << f.name;
    ASSERT_TRUE(fault_by_name(f.name)) << f.name;
    EXPECT_EQ(*fault_by_name(f.name), f.fault);
    EXPECT_EQ(fault_info(f.fault).name, f.name);
    EXPECT_FALSE(f.doc.empty()) << f.name;
  }
  EXPECT_GE(names.size(), 16u);
  EXPECT_EQ(fault_by_name("none"), Fault::kNone);
  EXPECT_FALSE(fault_by_name("no-such-fault"));
}

TEST(FaultsTest, EveryFaultNamesAPathStageNotTheReference) {
  for (const auto& f : all_faults()) EXPECT_NE(f.stage, Stage::kEager) << f.name;
  EXPECT_EQ(fault_info(*fault_by_name("inline-by-name")).stage, Stage::kFlattened);
  EXPECT_EQ(fault_info(*fault_by_name("unflatten-first-call-graph")).stage, Stage::kUnflattened);
}

TEST(FaultsTest, AScopedFaultIsOnForItsScopeOnly) {
  ASSERT_EQ(active_fault(), Fault::kNone);
  {
    ScopedFault on(Fault::kInlineByName);
    EXPECT_TRUE(fault_on(Fault::kInlineByName));
    EXPECT_FALSE(fault_on(Fault::kReloadRenames));
  }
  EXPECT_EQ(active_fault(), Fault::kNone);
  EXPECT_FALSE(fault_on(Fault::kInlineByName));
}

TEST(FaultsTest, SuppressionSwitchesFaultsOffOnThisThreadOnly) {
  ScopedFault on(Fault::kSerializeFloatShort);
  bool other_thread_sees_it = false;
  {
    ScopedFaultSuppression quiet;
    EXPECT_TRUE(faults_suppressed());
    EXPECT_FALSE(fault_on(Fault::kSerializeFloatShort));
    std::thread t([&] { other_thread_sees_it = fault_on(Fault::kSerializeFloatShort); });
    t.join();
  }
  EXPECT_TRUE(other_thread_sees_it);
  EXPECT_FALSE(faults_suppressed());
  EXPECT_TRUE(fault_on(Fault::kSerializeFloatShort));
}

}  // namespace
}  // namespace flatcheck
