// lint: every structural rule rejects the graph that breaks it, naming the node.
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

std::string lint_error(const Module& m) {
  try {
    lint(m);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(LintTest, AcceptsAWellFormedGraph) {
  EXPECT_EQ(lint_error(small_module()), "");
}

TEST(LintTest, RejectsUseBeforeDefinition) {
  Module m = small_module();
  Node* add = m.graph.find("add");
  Node* relu = m.graph.find("relu");
  add->args[0] = relu;  // add now reads relu, defined after it
  EXPECT_NE(lint_error(m).find("used before it has been defined"), std::string::npos)
      << lint_error(m);
}

TEST(LintTest, RejectsDuplicateNames) {
  Module m = small_module();
  m.graph.find("relu")->name = "add";
  EXPECT_NE(lint_error(m).find("duplicate node name 'add'"), std::string::npos) << lint_error(m);
}

TEST(LintTest, RejectsDanglingGetAttrAndCallModuleTargets) {
  Module m = small_module();
  {
    Graph::InsertingBefore at(m.graph, m.graph.output_node());
    m.graph.get_attr("missing.weight");
  }
  EXPECT_NE(lint_error(m).find("get_attr target 'missing.weight' does not exist"),
            std::string::npos);
  Module m2 = small_module();
  {
    Graph::InsertingBefore at(m2.graph, m2.graph.output_node());
    m2.graph.call_module("nope", {m2.graph.find("x")});
  }
  EXPECT_NE(lint_error(m2).find("call_module target 'nope' does not exist"), std::string::npos);
}

TEST(LintTest, RejectsWrongArity) {
  Module m = small_module();
  m.graph.find("add")->args.pop_back();
  EXPECT_NE(lint_error(m).find("add:"), std::string::npos) << lint_error(m);
}

TEST(LintTest, RejectsAMissingOutput) {
  Module m;
  m.graph.placeholder("x", ValueType::tensor({1}));
  EXPECT_NE(lint_error(m).find("no output node"), std::string::npos);
}

TEST(LintTest, RejectsACallWithTheWrongNumberOfArguments) {
  Module m = small_module();
  auto child = std::make_shared<Module>(small_module());
  m.children["c"] = child;
  Node* x = m.graph.find("x");
  {
    Graph::InsertingBefore at(m.graph, m.graph.output_node());
    m.graph.call_module("c", {x, x});
  }
  EXPECT_NE(lint_error(m).find("passes 2 arguments to 1 placeholders"), std::string::npos);
}

}  // namespace
}  // namespace flatcheck
