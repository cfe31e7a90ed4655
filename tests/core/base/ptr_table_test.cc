// PtrTable against std::unordered_map: the same inserts give the same contents, across growth
// and with keys that collide in the table's slots.
#include "core/base/ptr_table.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace flatcheck {
namespace {

TEST(PtrTableTest, FindsWhatWasInsertedAndNothingElse) {
  std::vector<int> keys(100);
  PtrTable<int, int> t(4);  // grows several times
  for (int i = 0; i < 100; ++i) {
    auto [v, fresh] = t.emplace(&keys[i]);
    EXPECT_TRUE(fresh);
    *v = i * 10;
  }
  EXPECT_EQ(t.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    ASSERT_NE(t.find(&keys[i]), nullptr);
    EXPECT_EQ(*t.find(&keys[i]), i * 10);
  }
  int other = 0;
  EXPECT_EQ(t.find(&other), nullptr);
  EXPECT_FALSE(t.contains(nullptr));
  EXPECT_FALSE(t.insert(&keys[7]));  // already there: its value stays
  EXPECT_EQ(t[&keys[7]], 70);
  EXPECT_EQ(t.size(), 100u);
}

RC_GTEST_PROP(PtrTableProperty, MatchesUnorderedMap, ()) {
  // Keys are addresses inside one array, so neighbours differ only in low bits.
  const size_t pool = *rc::gen::inRange<size_t>(1, 300);
  std::vector<char> storage(pool);
  const auto ops = *rc::gen::container<std::vector<std::pair<size_t, int>>>(
      rc::gen::pair(rc::gen::inRange<size_t>(0, pool), rc::gen::arbitrary<int>()));
  PtrTable<char, int> t(*rc::gen::inRange<size_t>(0, 64));
  std::unordered_map<const char*, int> want;
  for (const auto& [k, v] : ops) {
    const char* key = &storage[k];
    bool fresh = !want.count(key);
    RC_ASSERT(t.insert(key) == fresh);
    t[key] = v;
    want[key] = v;
  }
  RC_ASSERT(t.size() == want.size());
  for (size_t k = 0; k < pool; ++k) {
    auto it = want.find(&storage[k]);
    const int* got = t.find(&storage[k]);
    if (it == want.end()) {
      RC_ASSERT(got == nullptr);
    } else {
      RC_ASSERT(got != nullptr);
      RC_ASSERT(*got == it->second);
    }
  }
}

// Values that own memory (made only when their key goes in, moved when the table grows,
// destroyed with the table): the same contents as std::unordered_map, and under ASan no leak,
// no double free and no read of a value never made.
RC_GTEST_PROP(PtrTableProperty, OwningValuesSurviveGrowthAndMoves, ()) {
  const size_t pool = *rc::gen::inRange<size_t>(1, 200);
  std::vector<char> storage(pool);
  const auto ops = *rc::gen::container<std::vector<std::pair<size_t, int>>>(
      rc::gen::pair(rc::gen::inRange<size_t>(0, pool), rc::gen::inRange(0, 1000)));
  PtrTable<char, std::string> t(*rc::gen::inRange<size_t>(0, 8));
  std::unordered_map<const char*, std::string> want;
  for (const auto& [k, v] : ops) {
    const char* key = &storage[k];
    auto [value, fresh] = t.emplace(key);
    RC_ASSERT(fresh == !want.count(key));
    // A new key's value starts empty; each value grows past the small-string room.
    RC_ASSERT(!fresh || value->empty());
    *value += std::string(40, static_cast<char>('a' + v % 26));
    want[key] += std::string(40, static_cast<char>('a' + v % 26));
  }
  PtrTable<char, std::string> moved(std::move(t));
  PtrTable<char, std::string> assigned(4);
  assigned[&storage[0]] = std::string(50, 'z');  // destroyed by the assignment below
  assigned = std::move(moved);
  RC_ASSERT(assigned.size() == want.size());
  for (size_t k = 0; k < pool; ++k) {
    auto it = want.find(&storage[k]);
    const std::string* got = assigned.find(&storage[k]);
    if (it == want.end()) {
      RC_ASSERT(got == nullptr);
    } else {
      RC_ASSERT(got != nullptr);
      RC_ASSERT(*got == it->second);
    }
  }
}

}  // namespace
}  // namespace flatcheck
