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

// lint's name set is kept between graphs and sized to each: graphs of many sizes one after
// another, small after large and large after small, each with and without a duplicate name.
TEST(LintTest, FindsDuplicateNamesInGraphsOfEverySizeInAnyOrder) {
  auto chain = [](int n, bool duplicate) {
    Module m;
    Node* v = m.graph.placeholder("x", ValueType::tensor({2}));
    for (int i = 0; i < n; ++i) v = m.graph.call_function(OpCode::kRelu, {v});
    m.graph.output({v});
    if (duplicate) v->name = "x";  // the last node takes the placeholder's name
    return m;
  };
  for (int n : {1000, 2, 300, 1, 40, 5000, 3, 17, 1000}) {
    EXPECT_EQ(lint_error(chain(n, false)), "") << n << " nodes";
    EXPECT_NE(lint_error(chain(n, true)).find("duplicate node name 'x'"), std::string::npos)
        << n << " nodes";
  }
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

// A list constant passed to a module call is refused in every argument slot, whatever type the
// placeholder declares and however deep the call: the interpreter cannot pass a list, so a
// program holding one loaded and then failed its eager run (found by mutating corpus cases).
TEST(LintTest, RejectsAListPassedToAModuleCallInEverySlot) {
  auto leaf = std::make_shared<Module>();
  Node* lx = leaf->graph.placeholder("x", ValueType::tensor({2}));
  leaf->graph.placeholder("s", ValueType::scalar(ValueType::kFloat));
  leaf->graph.placeholder("k", ValueType::scalar(ValueType::kInt));
  leaf->graph.placeholder("b", ValueType::scalar(ValueType::kBool));
  leaf->graph.output({lx});
  const std::vector<Arg> good = {Arg{}, Arg{0.5f}, Arg{int64_t{3}}, Arg{true}};
  int refused = 0;
  for (bool nested : {false, true}) {
    for (size_t slot = 0; slot < good.size(); ++slot) {
      for (const std::vector<int64_t>& list : {std::vector<int64_t>{}, {1, 2}}) {
        // the caller: the root, or a middle module between the root and the leaf
        auto caller = std::make_shared<Module>();
        caller->children["leaf"] = leaf;
        Node* x = caller->graph.placeholder("x", ValueType::tensor({2}));
        std::vector<Arg> args = good;
        args[0] = x;
        args[slot] = list;
        Node* call = nullptr;
        {
          Node* out = caller->graph.output({x});
          Graph::InsertingBefore at(caller->graph, out);
          call = caller->graph.call_module("leaf", args);
        }
        ASSERT_NE(call, nullptr);
        Module root;
        if (nested) {
          root.children["mid"] = caller;
          Node* rx = root.graph.placeholder("x", ValueType::tensor({2}));
          Node* c = root.graph.call_module("mid", {rx});
          root.graph.output({c});
        }
        const Module& checked = nested ? root : *caller;
        std::string err = lint_error(checked);
        EXPECT_NE(err.find("passes a list as argument " + std::to_string(slot)), std::string::npos)
            << "slot " << slot << (nested ? " (nested)" : "") << ": '" << err << "'";
        refused += !err.empty();
        // the same call with the slot's proper value lints
        call->args[slot] = slot == 0 ? Arg{x} : good[slot];
        EXPECT_EQ(lint_error(checked), "") << "slot " << slot;
      }
    }
  }
  EXPECT_EQ(refused, 16);
}

}  // namespace
}  // namespace flatcheck
