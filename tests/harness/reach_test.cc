// Reach (harness/reach.h): each shape is recognised in a case built by hand to have it, and not
// reported for a case built not to.
#include "harness/reach.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/passes/passes.h"
#include "generators/case.h"

namespace flatcheck {
namespace {

bool has(ReachBits bits, Reach r) {
  return (bits & reach_bit(r)) != 0;
}

// child(x, flag): flag ? relu(x) : neg(x), with a parameter w added.
std::shared_ptr<Module> flag_child(const std::string& type = "C") {
  auto m = std::make_shared<Module>();
  m->type = type;
  m->params["w"] = std::make_shared<Tensor>(Tensor::zeros({2}));
  Graph& g = m->graph;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* f = g.placeholder("flag", ValueType::scalar(ValueType::kBool));
  Node* w = g.get_attr("w");
  Node* r = g.call_function(OpCode::kRelu, {x});
  Node* n = g.call_function(OpCode::kNeg, {x});
  Node* b = g.call_function(OpCode::kBranch, {f, r, n});
  g.output({g.call_function(OpCode::kAdd, {b, w})});
  return m;
}

Case case_of(std::shared_ptr<Module> root, int calls = 1) {
  infer_types(*root);
  Case c;
  c.module = std::move(root);
  c.config.calls = calls;
  return c;
}

// root(x): c(c(x, flag1), flag2) [+ a second child d when `alias`, the same object as c].
Case two_calls(bool flag1, bool flag2, bool alias = false) {
  auto root = std::make_shared<Module>();
  root->children["c"] = flag_child();
  if (alias) root->children["d"] = root->children["c"];
  Graph& g = root->graph;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* a = g.call_module("c", {x, flag1});
  Node* b = g.call_module(alias ? "d" : "c", {a, flag2});
  g.output({b});
  return case_of(root);
}

TEST(ReachTest, TwoSpecializationsOfOneModuleAreSpecializedCalls) {
  ReachBits differ = case_reach(two_calls(true, false));
  EXPECT_TRUE(has(differ, Reach::kSpecialized));
  EXPECT_FALSE(has(differ, Reach::kNestedOnly));  // the flag is the module's own
  EXPECT_FALSE(has(differ, Reach::kModuleAlias));
  ReachBits same = case_reach(two_calls(true, true));
  EXPECT_FALSE(has(same, Reach::kSpecialized));
}

// Reach counts what export traces: a call nothing reads is dead code, and a branch on a static
// flag keeps only its choice, so neither specializes anything.
TEST(ReachTest, DeadCallsAndUnchosenBranchesDoNotSpecialize) {
  enum Out { kBoth, kFirst, kBranch };
  // root(x): a = c(x, True), b = c(x, False); returns (a, b), (a) or branch(True, a, b).
  auto two = [](Out out) {
    auto root = std::make_shared<Module>();
    root->children["c"] = flag_child();
    Graph& g = root->graph;
    Node* x = g.placeholder("x", ValueType::tensor({2}));
    Node* a = g.call_module("c", {x, true});
    Node* b = g.call_module("c", {x, false});
    if (out == kBranch)
      g.output({g.call_function(OpCode::kBranch, {true, a, b})});
    else
      g.output(out == kBoth ? std::vector<Arg>{a, b} : std::vector<Arg>{a});
    return case_of(root);
  };
  EXPECT_TRUE(has(case_reach(two(kBoth)), Reach::kSpecialized));
  EXPECT_FALSE(has(case_reach(two(kFirst)), Reach::kSpecialized));   // b is dead code
  EXPECT_FALSE(has(case_reach(two(kBranch)), Reach::kSpecialized));  // b is never traced
}

// root(x): c(c(x, d1), d2) where c(x, dim) sums x over `dim` (or ignores it when !used).
Case int_calls(int64_t d1, int64_t d2, bool used) {
  auto c = std::make_shared<Module>();
  c->type = "C";
  Graph& cg = c->graph;
  Node* x = cg.placeholder("x", ValueType::tensor({2, 2}));
  Node* dim = cg.placeholder("dim", ValueType::scalar(ValueType::kInt));
  Node* t =
      cg.call_function(OpCode::kTranspose, {x, int64_t{0}, used ? Arg(dim) : Arg(int64_t{1})});
  cg.output({t});
  auto root = std::make_shared<Module>();
  root->children["c"] = c;
  Graph& g = root->graph;
  Node* rx = g.placeholder("x", ValueType::tensor({2, 2}));
  g.output({g.call_module("c", {g.call_module("c", {rx, d1}), d2})});
  return case_of(root);
}

TEST(ReachTest, CallsThatDifferInAUsedIntAreIntSpecialized) {
  ReachBits differ = case_reach(int_calls(0, 1, true));
  EXPECT_TRUE(has(differ, Reach::kIntShapeSpec));
  EXPECT_TRUE(has(differ, Reach::kSpecialized));
  EXPECT_FALSE(has(case_reach(int_calls(1, 1, true)), Reach::kIntShapeSpec));
  EXPECT_FALSE(has(case_reach(int_calls(0, 1, false)), Reach::kIntShapeSpec));  // never read
}

TEST(ReachTest, OneModuleUnderTwoNamesIsAliasing) {
  ReachBits bits = case_reach(two_calls(true, true, /*alias=*/true));
  EXPECT_TRUE(has(bits, Reach::kModuleAlias));
  EXPECT_FALSE(has(bits, Reach::kRepeatedBlocks));  // one object, not two blocks
}

TEST(ReachTest, AFlagOnlyPassedOnMakesNestedOnlyVariantsAndAForwardedFlag) {
  // p(x, flag) = c(x, flag): p's variants differ only in which variant of c they call.
  auto p = std::make_shared<Module>();
  p->type = "P";
  p->children["c"] = flag_child();
  {
    Graph& g = p->graph;
    Node* x = g.placeholder("x", ValueType::tensor({2}));
    Node* f = g.placeholder("flag", ValueType::scalar(ValueType::kBool));
    g.output({g.call_module("c", {x, f})});
  }
  auto root = std::make_shared<Module>();
  root->children["p"] = p;
  Graph& g = root->graph;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* a = g.call_module("p", {x, true});
  g.output({g.call_module("p", {a, false})});
  ReachBits bits = case_reach(case_of(root));
  EXPECT_TRUE(has(bits, Reach::kSpecialized));
  EXPECT_TRUE(has(bits, Reach::kNestedOnly));
  EXPECT_TRUE(has(bits, Reach::kForwardedFlag));
}

// root(x) = p(p(x, true), false), p(x, flag) = c(x, flag): after export and unflatten, p's two
// variants have graphs equal but for which variant of c they call (PyTorch's dedup merges them).
// With p reading its flag itself (p(x, flag) = c(x, flag) + flag ? x : -x) they differ in more.
Case forwarded(bool p_reads_flag) {
  auto p = std::make_shared<Module>();
  p->type = "P";
  p->children["c"] = flag_child();
  Graph& pg = p->graph;
  Node* px = pg.placeholder("x", ValueType::tensor({2}));
  Node* f = pg.placeholder("flag", ValueType::scalar(ValueType::kBool));
  Node* out = pg.call_module("c", {px, f});
  if (p_reads_flag)
    out = pg.call_function(
        OpCode::kAdd,
        {out, pg.call_function(OpCode::kBranch, {f, px, pg.call_function(OpCode::kNeg, {px})})});
  pg.output({out});
  auto root = std::make_shared<Module>();
  root->children["p"] = p;
  Graph& g = root->graph;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* a = g.call_module("p", {x, true});
  g.output({g.call_module("p", {a, false})});
  return case_of(root);
}

TEST(ReachTest, NestedOnlyVariantsAreCountedOnTheUnflattenedProgram) {
  auto bits = [](const Case& c) { return unflatten_reach(*unflatten(export_program(*c.module))); };
  EXPECT_TRUE(has(bits(forwarded(false)), Reach::kNestedOnlyUnflattened));
  EXPECT_FALSE(has(bits(forwarded(true)), Reach::kNestedOnlyUnflattened));
  EXPECT_FALSE(has(bits(two_calls(true, false)), Reach::kNestedOnlyUnflattened));  // no child
  EXPECT_FALSE(has(bits(two_calls(true, true)), Reach::kNestedOnlyUnflattened));   // one variant
}

// A chain root -> a -> b -> c -> d of calls: d is four levels below the root; one level less, or
// the call to d dead, and it is not.
Case chain(int levels, bool dead_last = false) {
  std::shared_ptr<Module> inner;
  for (int i = levels; i >= 1; --i) {
    auto m = std::make_shared<Module>();
    m->type = "L" + std::to_string(i);
    Graph& g = m->graph;
    Node* x = g.placeholder("x", ValueType::tensor({2}));
    Node* y = g.call_function(OpCode::kRelu, {x});
    if (inner) {
      m->children["n"] = inner;
      Node* r = g.call_module("n", {y});
      if (!(dead_last && i == levels - 1)) y = r;
    }
    g.output({y});
    inner = m;
  }
  auto root = std::make_shared<Module>();
  root->children["n"] = inner;
  Node* x = root->graph.placeholder("x", ValueType::tensor({2}));
  root->graph.output({root->graph.call_module("n", {x})});
  return case_of(root);
}

TEST(ReachTest, ALiveCallFourLevelsDownIsFourDeep) {
  EXPECT_TRUE(has(case_reach(chain(4)), Reach::kFourDeep));
  EXPECT_FALSE(has(case_reach(chain(3)), Reach::kFourDeep));
  EXPECT_FALSE(has(case_reach(chain(4, /*dead_last=*/true)), Reach::kFourDeep));
}

TEST(ReachTest, TwoBlocksOfOneTypeWithTheirOwnWeightsAreRepeatedBlocks) {
  auto root = std::make_shared<Module>();
  root->children["0"] = flag_child("Layer");
  root->children["1"] = flag_child("Layer");
  Graph& g = root->graph;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* a = g.call_module("0", {x, true});
  g.output({g.call_module("1", {a, true})});
  ReachBits bits = case_reach(case_of(root));
  EXPECT_TRUE(has(bits, Reach::kRepeatedBlocks));
  EXPECT_TRUE(has(bits, Reach::kNumericNames));
  EXPECT_FALSE(has(bits, Reach::kSpecialized));  // two modules, one call each
  // Different types: not repeated blocks.
  root->children["1"]->type = "Other";
  EXPECT_FALSE(has(case_reach(case_of(root)), Reach::kRepeatedBlocks));
}

TEST(ReachTest, SharedStateUnderTwoNamesIsSeenForParamsAndBuffersApart) {
  auto root = std::make_shared<Module>();
  auto t = std::make_shared<Tensor>(Tensor::zeros({2}));
  root->buffers["b1"] = t;
  root->buffers["b2"] = t;
  Graph& g = root->graph;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* a = g.call_function(OpCode::kAdd, {x, g.get_attr("b1")});
  g.output({g.call_function(OpCode::kAdd, {a, g.get_attr("b2")})});
  ReachBits bits = case_reach(case_of(root));
  EXPECT_TRUE(has(bits, Reach::kSharedBuffers));
  EXPECT_FALSE(has(bits, Reach::kSharedParams));
  root->buffers["b2"] = std::make_shared<Tensor>(Tensor::zeros({2}));
  EXPECT_FALSE(has(case_reach(case_of(root)), Reach::kSharedBuffers));
}

TEST(ReachTest, ABufferValueUsedAfterItsUpdateIsReadAfterWrite) {
  for (bool use_after : {true, false}) {
    auto root = std::make_shared<Module>();
    root->buffers["buf"] = std::make_shared<Tensor>(Tensor::zeros({2}));
    Graph& g = root->graph;
    Node* x = g.placeholder("x", ValueType::tensor({2}));
    Node* rd = g.get_attr("buf");
    Node* early = g.call_function(OpCode::kMul, {rd, x});
    g.call_function(OpCode::kCopy, {g.get_attr("buf"), x});
    Node* late = use_after ? g.call_function(OpCode::kAdd, {rd, x}) : x;
    g.output({early, late});
    EXPECT_EQ(has(case_reach(case_of(root)), Reach::kReadAfterWrite), use_after)
        << "use after update: " << use_after;
  }
}

TEST(ReachTest, NamesShapesScalarsAndOutputsOfTheRootAreSeen) {
  auto root = std::make_shared<Module>();
  root->children["a"] = std::make_shared<Module>();
  root->children["a"]->children["b_c"] = flag_child();
  root->children["a_b"] = std::make_shared<Module>();
  root->children["a_b"]->children["c"] = flag_child();
  Graph& g = root->graph;
  Node* x = g.placeholder("x", ValueType::tensor({2, 0, 3}));
  Node* y = g.call_function(OpCode::kAddScalar, {x, -0.0f}, "p_weight");
  Node* z = g.call_function(OpCode::kMulScalar, {x, 2.0f});
  g.output({x, y, z});
  ReachBits bits = case_reach(case_of(root));
  EXPECT_TRUE(has(bits, Reach::kMangleCollision));
  EXPECT_FALSE(has(bits, Reach::kCaseCollision));
  root->children["A"] = std::make_shared<Module>();  // "A" and "a": alike once lower-cased
  root->children["A"]->children["x"] = flag_child();
  EXPECT_TRUE(has(case_reach(case_of(root)), Reach::kCaseCollision));
  root->children.erase("A");
  EXPECT_TRUE(has(bits, Reach::kRank3));
  EXPECT_TRUE(has(bits, Reach::kZeroSize));
  EXPECT_TRUE(has(bits, Reach::kSpecialScalars));
  EXPECT_TRUE(has(bits, Reach::kReservedNames));
  EXPECT_TRUE(has(bits, Reach::kManyOutputs));
  EXPECT_FALSE(has(bits, Reach::kManyCalls));
  EXPECT_TRUE(has(case_reach(case_of(root, 3)), Reach::kManyCalls));

  auto plain = std::make_shared<Module>();
  Graph& h = plain->graph;
  Node* u = h.placeholder("x", ValueType::tensor({2, 2}));
  h.output({h.call_function(OpCode::kMulScalar, {u, 2.0f})});
  EXPECT_EQ(case_reach(case_of(plain)), ReachBits{0});
}

TEST(ReachTest, TheCollisionShapeIsSeenInThePartitionedProgram) {
  // The regression case for the Torch-TensorRT bug has it; a case with one engine does not.
  auto root = std::make_shared<Module>();
  Graph& g = root->graph;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* a = g.call_function(OpCode::kAdd, {x, x});
  g.output({g.call_function(OpCode::kMul, {a, a})});
  infer_types(*root);
  PartitionOptions o;
  o.min_block_size = 1;
  Program p = partition(export_program(*root), o);
  EXPECT_EQ(partition_reach(p), ReachBits{0});

  Case seed = load_case_file(std::string(FLATCHECK_SOURCE_DIR) +
                             "/corpus/regression/seed-graph-break.json");
  Program q = partition(export_program(*seed.module), partition_options(seed.config));
  EXPECT_EQ(partition_reach(q), reach_bit(Reach::kTrtCollision));
}

TEST(ReachTest, EveryShapeHasANameAndADescription) {
  for (int i = 0; i < kNumReach; ++i) {
    EXPECT_FALSE(reach_name(static_cast<Reach>(i)).empty());
    EXPECT_FALSE(reach_doc(static_cast<Reach>(i)).empty());
  }
}

}  // namespace
}  // namespace flatcheck
