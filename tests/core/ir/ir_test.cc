// The IR: graph editing, structural equality and the FX-like printer.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "core/base/check.h"
#include "core/ir/ir.h"
#include "core/ir/namespace.h"
#include "core/serialize/serialize.h"
#include "tests/support/programs.h"

namespace flatcheck {
namespace {

using namespace testing_support;

// ----------------------------------------------------------------------------------- lint

// ------------------------------------------------------------------------ printer, equality

TEST(PrinterTest, PrintsTheFxLikeTextForm) {
  Module m = small_module();
  std::ostringstream os;
  os << m.graph;
  EXPECT_EQ(os.str(),
            "graph(%x):\n"
            "    %add = call_function[target=add](%x, %x)\n"
            "    %relu = call_function[target=relu](%add)\n"
            "    return (%relu)\n");
}

TEST(GraphEqualTest, IgnoresNamesButNotStructureOrConstants) {
  Graph a, b;
  Node* xa = a.placeholder("x", ValueType::tensor({1}));
  a.output({a.call_function(OpCode::kAddScalar, {xa, 1.0f}, "first")});
  Node* xb = b.placeholder("x", ValueType::tensor({1}));
  b.output({b.call_function(OpCode::kAddScalar, {xb, 1.0f}, "second")});
  EXPECT_TRUE(graph_equal(a, b));
  EXPECT_FALSE(graph_equal(a, b, GraphEq{.names = true}));
  EXPECT_EQ(graph_hash(a), graph_hash(b));
  std::get<float>(b.find("second")->args[1]) = 2.0f;
  EXPECT_FALSE(graph_equal(a, b));
  EXPECT_TRUE(graph_equal(a, b, GraphEq{.names = false, .constants = false}));
}

TEST(GraphEqualTest, CallTargetsCountUnlessSwitchedOff) {
  Graph a, b;
  Node* xa = a.placeholder("x", ValueType::tensor({1}));
  a.output({a.call_module("c", {xa})});
  Node* xb = b.placeholder("x", ValueType::tensor({1}));
  b.output({b.call_module("c@1", {xb})});
  EXPECT_FALSE(graph_equal(a, b));
  EXPECT_TRUE(graph_equal(a, b, GraphEq{.call_targets = false}));
}

TEST(GraphTest, CopyKeepsNamesAndNamespace) {
  Module m = small_module();
  Graph copy = m.graph;
  EXPECT_TRUE(graph_equal(copy, m.graph, GraphEq{.names = true}));
  EXPECT_EQ(copy.call_function(OpCode::kRelu, {copy.find("x")})->name, "relu_1");
  for (Node* n = copy.first(); n; n = n->next) EXPECT_EQ(n->graph, &copy);
}

}  // namespace
}  // namespace flatcheck
