// The op table: names, signatures and shape rules, against hand-derived shapes.
#include "core/ops/ops.h"

#include <gtest/gtest.h>

#include "core/base/check.h"

namespace flatcheck {
namespace {

TEST(OpTableTest, EveryOpIsFoundByItsName) {
  int count = 0;
  for (int i = 0; i < kNumOps; ++i) {
    auto op = static_cast<OpCode>(i);
    auto back = op_by_name(op_info(op).name);
    ASSERT_TRUE(back) << op_info(op).name;
    EXPECT_EQ(*back, op);
    ++count;
  }
  EXPECT_GE(count, 20);
  EXPECT_FALSE(op_by_name("conv2d"));
  EXPECT_EQ(op_info(OpCode::kCopy).pure, false);
  EXPECT_EQ(op_info(OpCode::kRelu).pure, true);
}

TEST(OpTableTest, SignaturesAcceptTheirKindsAndNameWhatIsWrong) {
  EXPECT_EQ(check_signature(OpCode::kAdd, "TT"), "");
  EXPECT_EQ(check_signature(OpCode::kAddScalar, "Tf"), "");
  EXPECT_EQ(check_signature(OpCode::kConcat, "TTTi"), "");
  EXPECT_NE(check_signature(OpCode::kAdd, "T"), "");
  EXPECT_NE(check_signature(OpCode::kAddScalar, "TT"), "");
  EXPECT_NE(check_signature(OpCode::kRelu, "Tf"), "");
}

TEST(ShapeRuleTest, BinaryOpsBroadcastFromTheRight) {
  EXPECT_EQ(infer_shapes(OpCode::kAdd, {{2, 3}, {3}}, {}), (std::vector<Shape>{{2, 3}}));
  EXPECT_EQ(infer_shapes(OpCode::kMul, {{2, 1}, {1, 4}}, {}), (std::vector<Shape>{{2, 4}}));
  EXPECT_EQ(infer_shapes(OpCode::kSub, {{}, {5}}, {}), (std::vector<Shape>{{5}}));
  EXPECT_THROW(infer_shapes(OpCode::kAdd, {{2, 3}, {2}}, {}), InputError);
}

TEST(ShapeRuleTest, MatmulSumTransposeAndReshapeFollowTheirDefinitions) {
  EXPECT_EQ(infer_shapes(OpCode::kMatmul, {{2, 3}, {3, 5}}, {}), (std::vector<Shape>{{2, 5}}));
  EXPECT_THROW(infer_shapes(OpCode::kMatmul, {{2, 3}, {2, 3}}, {}), InputError);
  EXPECT_EQ(infer_shapes(OpCode::kSum, {{2, 3, 4}}, {int64_t{1}}), (std::vector<Shape>{{2, 4}}));
  EXPECT_EQ(infer_shapes(OpCode::kSum, {{2, 3, 4}}, {int64_t{-1}}), (std::vector<Shape>{{2, 3}}));
  EXPECT_EQ(infer_shapes(OpCode::kTranspose, {{2, 3}}, {int64_t{0}, int64_t{1}}),
            (std::vector<Shape>{{3, 2}}));
  EXPECT_EQ(infer_shapes(OpCode::kReshape, {{2, 6}}, {std::vector<int64_t>{3, 4}}),
            (std::vector<Shape>{{3, 4}}));
  EXPECT_THROW(infer_shapes(OpCode::kReshape, {{2, 6}}, {std::vector<int64_t>{5}}), InputError);
}

TEST(ShapeRuleTest, ConcatAddsAlongItsDimAndSplitDividesIt) {
  EXPECT_EQ(infer_shapes(OpCode::kConcat, {{2, 3}, {4, 3}}, {int64_t{0}}),
            (std::vector<Shape>{{6, 3}}));
  EXPECT_THROW(infer_shapes(OpCode::kConcat, {{2, 3}, {4, 2}}, {int64_t{0}}), InputError);
  EXPECT_EQ(infer_shapes(OpCode::kSplit, {{4, 6}}, {int64_t{1}, int64_t{3}}),
            (std::vector<Shape>(3, Shape{4, 2})));
  EXPECT_THROW(infer_shapes(OpCode::kSplit, {{4, 5}}, {int64_t{1}, int64_t{2}}), InputError);
}

}  // namespace
}  // namespace flatcheck
