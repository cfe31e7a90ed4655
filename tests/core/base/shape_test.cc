// Shape against std::vector<int64_t>: the same operations give the same dimensions, whether the
// shape is in place (rank <= Shape::kInline) or on the heap.
#include "core/base/shape.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <stdexcept>
#include <utility>
#include <vector>

namespace flatcheck {
namespace {

std::vector<int64_t> dims_of(const Shape& s) {
  return std::vector<int64_t>(s.begin(), s.end());
}

TEST(ShapeTest, ConstructorsMatchStdVector) {
  EXPECT_EQ(dims_of(Shape{}), std::vector<int64_t>{});
  EXPECT_EQ(dims_of(Shape{2, 3}), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(dims_of(Shape(3)), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(dims_of(Shape(2, 7)), (std::vector<int64_t>{7, 7}));
  std::vector<int64_t> six{1, 2, 3, 4, 5, 6};
  EXPECT_EQ(dims_of(Shape(six)), six);
  EXPECT_EQ(static_cast<std::vector<int64_t>>(Shape(six)), six);
  EXPECT_EQ(dims_of(Shape(six.begin() + 1, six.end())), (std::vector<int64_t>{2, 3, 4, 5, 6}));
}

TEST(ShapeTest, RanksAboveTheInlineCapacityMoveToTheHeapAndBack) {
  Shape s{1, 2, 3, 4};
  EXPECT_EQ(s.capacity(), Shape::kInline);
  const int64_t* in_place = s.data();
  s.push_back(5);
  EXPECT_GT(s.capacity(), Shape::kInline);
  EXPECT_NE(s.data(), in_place);
  EXPECT_EQ(dims_of(s), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  Shape moved = std::move(s);
  EXPECT_EQ(dims_of(moved), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_TRUE(s.empty());  // NOLINT(bugprone-use-after-move): a moved-from shape is empty
  s = Shape{9};
  EXPECT_EQ(dims_of(s), std::vector<int64_t>{9});
  Shape copy = moved;
  copy[0] = 7;
  EXPECT_EQ(moved[0], 1);
  moved = copy;
  EXPECT_EQ(dims_of(moved), (std::vector<int64_t>{7, 2, 3, 4, 5}));
}

TEST(ShapeTest, AtChecksItsIndex) {
  Shape s{4, 5};
  EXPECT_EQ(s.at(1), 5);
  EXPECT_THROW(s.at(2), std::out_of_range);
}

RC_GTEST_PROP(ShapeProperty, EveryOperationMatchesStdVector, ()) {
  Shape s;
  std::vector<int64_t> ref;
  int steps = *rc::gen::inRange(0, 40);
  for (int k = 0; k < steps; ++k) {
    int64_t v = *rc::gen::inRange<int64_t>(-3, 100);
    switch (*rc::gen::inRange(0, 9)) {
      case 0:
        s.push_back(v), ref.push_back(v);
        break;
      case 1:
        if (!ref.empty()) s.resize(ref.size() - 1), ref.pop_back();  // shrinking keeps the rest
        break;
      case 2: {
        size_t at = *rc::gen::inRange<size_t>(0, ref.size() + 1);
        s.insert(s.begin() + at, v);
        ref.insert(ref.begin() + static_cast<long>(at), v);
        break;
      }
      case 3:
        if (!ref.empty()) {
          size_t at = *rc::gen::inRange<size_t>(0, ref.size());
          s.erase(s.begin() + at);
          ref.erase(ref.begin() + static_cast<long>(at));
        }
        break;
      case 4: {
        size_t n = *rc::gen::inRange<size_t>(0, 10);
        s.resize(n, v), ref.resize(n, v);
        break;
      }
      case 5: {
        Shape copy(s);
        s = std::move(copy);
        break;
      }
      case 6: {
        Shape other{v};
        other = s;
        s = other;
        break;
      }
      case 7:
        if (!ref.empty()) s.back() = v, ref.back() = v;
        break;
      default:
        s.clear(), ref.clear();
        break;
    }
    RC_ASSERT(dims_of(s) == ref);
    RC_ASSERT(s.size() == ref.size());
  }
  Shape same(ref), other(ref);
  RC_ASSERT(same == s);
  other.push_back(1);
  RC_ASSERT(!(other == s));
}

}  // namespace
}  // namespace flatcheck
