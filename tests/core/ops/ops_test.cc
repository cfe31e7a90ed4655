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
  // A kinds list ends where its view ends, whatever lies past it.
  const char kinds[] = "TT";
  EXPECT_EQ(check_signature(OpCode::kAdd, std::string_view(kinds, 1)),
            "argument 1 must be of kind 'T'");
  EXPECT_EQ(check_signature(OpCode::kAdd, std::string_view(kinds, 2)), "");
  // So does a repeated kind's run (concat's "T+i"): the tensors past the view are not counted.
  const char more[] = "TTTTi";
  for (size_t n = 1; n <= 3; ++n)
    EXPECT_EQ(check_signature(OpCode::kConcat, std::string_view(more, n)),
              "argument " + std::to_string(n) + " must be of kind 'i'")
        << n << " tensors";
  EXPECT_EQ(check_signature(OpCode::kConcat, std::string_view(more, 5)), "");
}

// reshape's dims are each 0..2^24: a negative dim (whose product could still equal the input's
// element count) or a larger one is refused.
TEST(ShapeRuleTest, ReshapeRefusesANegativeOrHugeDim) {
  for (const std::vector<int64_t>& bad :
       {std::vector<int64_t>{-2, -6}, std::vector<int64_t>{-12, -1},
        std::vector<int64_t>{1 << 25, 0}}) {
    Shape in = bad[1] == 0 ? Shape{0, 3} : Shape{2, 6};
    try {
      infer_shapes(OpCode::kReshape, {in}, {bad});
      ADD_FAILURE() << "reshape to " << bad[0] << ", " << bad[1] << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("reshape: bad dim"), std::string::npos) << e.what();
    }
  }
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

// reshape's one scalar is its shape list: none, or an int or a float in its place, is refused by
// name (never read as a list).
TEST(ShapeRuleTest, ReshapeNeedsItsShapeList) {
  for (const std::vector<Scalar>& bad : {std::vector<Scalar>{}, std::vector<Scalar>{int64_t{12}},
                                         std::vector<Scalar>{2.0f}, std::vector<Scalar>{true}}) {
    try {
      infer_shapes(OpCode::kReshape, {{2, 6}}, bad);
      ADD_FAILURE() << bad.size() << " scalars taken as reshape's shape";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("reshape needs a shape list"), std::string::npos)
          << e.what();
    }
  }
}

TEST(ShapeRuleTest, ConcatAddsAlongItsDimAndSplitDividesIt) {
  EXPECT_EQ(infer_shapes(OpCode::kConcat, {{2, 3}, {4, 3}}, {int64_t{0}}),
            (std::vector<Shape>{{6, 3}}));
  EXPECT_THROW(infer_shapes(OpCode::kConcat, {{2, 3}, {4, 2}}, {int64_t{0}}), InputError);
  EXPECT_EQ(infer_shapes(OpCode::kSplit, {{4, 6}}, {int64_t{1}, int64_t{3}}),
            (std::vector<Shape>(3, Shape{4, 2})));
  EXPECT_THROW(infer_shapes(OpCode::kSplit, {{4, 5}}, {int64_t{1}, int64_t{2}}), InputError);
  // Chunks from 1 to 64: both ends taken, 0 and 65 refused (a count that bounds the outputs).
  EXPECT_EQ(infer_shapes(OpCode::kSplit, {{64}}, {int64_t{0}, int64_t{64}}).size(), 64u);
  EXPECT_EQ(infer_shapes(OpCode::kSplit, {{3}}, {int64_t{0}, int64_t{1}}),
            (std::vector<Shape>{{3}}));
  EXPECT_THROW(infer_shapes(OpCode::kSplit, {{130}}, {int64_t{0}, int64_t{65}}), InputError);
  EXPECT_THROW(infer_shapes(OpCode::kSplit, {{4}}, {int64_t{0}, int64_t{0}}), InputError);
}

// Every shape rule first counts its tensor inputs: given fewer than its signature's T's (ops.def),
// it refuses with the count it needs and never reads a shape that is not there.
TEST(ShapeRuleTest, EveryRuleRefusesTooFewTensorInputs) {
  int checked = 0;
  for (int i = 0; i < kNumOps; ++i) {
    auto op = static_cast<OpCode>(i);
    if (op == OpCode::kGetitem || op == OpCode::kExecuteEngine) continue;  // no shape rule
    const std::string_view sig = op_info(op).sig;
    size_t tensors = 0;
    std::vector<Scalar> scalars;
    for (char k : sig) {
      if (k == 'T') ++tensors;
      if (k == 'i') scalars.emplace_back(int64_t{1});
      if (k == 'f') scalars.emplace_back(1.0f);
      if (k == 'L') scalars.emplace_back(std::vector<int64_t>{4});
    }
    ASSERT_GE(tensors, 1u) << sig;
    const std::string need =
        std::string(op_info(op).name) + " needs " + std::to_string(tensors) + " tensor inputs";
    for (size_t given = 0; given < tensors; ++given) {
      try {
        infer_shapes(op, std::vector<Shape>(given, Shape{2, 2}), scalars);
        ADD_FAILURE() << op_info(op).name << " took " << given << " tensors";
      } catch (const InputError& e) {
        EXPECT_EQ(std::string(e.what()), need) << op_info(op).name << " given " << given;
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 30);
}

}  // namespace
}  // namespace flatcheck
