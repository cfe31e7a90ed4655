// The IR: graph editing, structural equality and the FX-like printer.
#include <gtest/gtest.h>

#include <dirent.h>

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/base/check.h"
#include "core/ir/analysis.h"
#include "core/ir/ir.h"
#include "core/ir/namespace.h"
#include "core/serialize/serialize.h"
#include "generators/case.h"
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

// Every placeholder is listed, separated by commas, in the order of the graph.
TEST(PrinterTest, ListsEveryPlaceholderSeparatedByCommas) {
  Graph g;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* y = g.placeholder("y", ValueType::tensor({2}));
  g.placeholder("flag", ValueType::scalar(ValueType::kBool));
  g.output({g.call_function(OpCode::kAdd, {x, y})});
  std::ostringstream os;
  os << g;
  EXPECT_EQ(os.str(),
            "graph(%x, %y, %flag):\n"
            "    %add = call_function[target=add](%x, %y)\n"
            "    return (%add)\n");
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

// A placeholder's type is part of the structure (it is the graph's input); the types of other
// nodes are derived from it and do not count.
TEST(GraphEqualTest, PlaceholderTypesCountAndDerivedTypesDoNot) {
  auto make = [](Shape input) {
    auto g = std::make_unique<Graph>();
    Node* x = g->placeholder("x", ValueType::tensor(std::move(input)));
    g->output({g->call_function(OpCode::kRelu, {x}, "r")});
    return g;
  };
  auto a = make({2}), b = make({3}), c = make({2});
  EXPECT_FALSE(graph_equal(*a, *b));
  EXPECT_NE(graph_hash(*a), graph_hash(*b));
  c->find("r")->meta.val = ValueType::tensor({5});  // a derived type, even a wrong one
  EXPECT_TRUE(graph_equal(*a, *c));
  EXPECT_EQ(graph_hash(*a), graph_hash(*c));
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

// graph_equal against a second form written for obviousness: each node as a line of text
// (what it compares, under `eq`), the graphs equal when their lines are.
std::vector<std::string> node_lines(const Graph& g, GraphEq eq) {
  std::map<const Node*, size_t> at;
  std::vector<std::string> lines;
  for (const Node* n = g.first(); n; n = n->next) {
    std::ostringstream os;
    os << node_op_name(n->op) << " ";
    bool target = (n->op != NodeOp::kPlaceholder || eq.names) &&
                  (n->op != NodeOp::kCallModule || eq.call_targets);
    os << (target ? n->target : "-") << " " << (eq.names ? n->name : "-") << " ";
    if (n->op == NodeOp::kPlaceholder && n->meta.val) os << *n->meta.val;
    for (const Arg& a : n->args) {
      if (auto p = std::get_if<Node*>(&a))
        os << " node" << (at.count(*p) ? std::to_string(at[*p]) : "?");
      else if (auto f = std::get_if<float>(&a))
        os << " float" << (eq.constants ? std::to_string(float_bits(*f)) : "");
      else if (eq.constants)
        os << " " << const_arg_kind(a) << a;
      else
        os << " " << const_arg_kind(a);
    }
    at[n] = lines.size();
    lines.push_back(os.str());
  }
  return lines;
}

// Every graph of the regression corpus against copies with one thing changed (a name, a target,
// a constant, a wire, a placeholder's type), under every combination of GraphEq's switches.
TEST(GraphEqualTest, AgreesWithTheNodeLinesOnEveryEditOfCorpusGraphs) {
  std::string dir = std::string(FLATCHECK_SOURCE_DIR) + "/corpus/regression";
  std::vector<std::function<bool(Graph&, Node*)>> edits = {
      [](Graph&, Node* n) { return (n->name += "_x", true); },
      [](Graph&, Node* n) { return n->op != NodeOp::kOutput && (n->target += "x", true); },
      [](Graph&, Node* n) {
        for (Arg& a : n->args) {
          if (auto f = std::get_if<float>(&a)) return (*f = -*f, true);  // 0.0 -> -0.0 too
          if (auto i = std::get_if<int64_t>(&a)) return (++*i, true);
          if (auto b = std::get_if<bool>(&a)) return (*b = !*b, true);
          if (auto l = std::get_if<std::vector<int64_t>>(&a)) return (l->push_back(1), true);
        }
        return false;
      },
      [](Graph& g, Node* n) {  // the first node argument rewired to the graph's first node
        for (Arg& a : n->args)
          if (auto p = std::get_if<Node*>(&a); p && *p != g.first()) return (*p = g.first(), true);
        return false;
      },
      [](Graph&, Node* n) {
        if (n->op != NodeOp::kPlaceholder || !n->meta.val) return false;
        n->meta.val = ValueType::scalar(n->meta.val->kind == ValueType::kInt ? ValueType::kBool
                                                                             : ValueType::kInt);
        return true;
      }};
  size_t checked = 0, unequal = 0;
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr) << dir;
  while (dirent* e = readdir(d)) {
    std::string file = e->d_name;
    if (file.size() < 5 || file.substr(file.size() - 5) != ".json") continue;
    Case c = load_case_file(dir + "/" + file);
    for_each_module(*c.module, [&](const std::string&, Module& m) {
      size_t position = 0;
      for (Node* n = m.graph.first(); n; n = n->next, ++position) {
        for (size_t k = 0; k < edits.size(); ++k) {
          Graph copy = m.graph;
          Node* at = copy.first();
          for (size_t i = 0; i < position; ++i) at = at->next;
          if (!edits[k](copy, at)) continue;
          for (int bits = 0; bits < 8; ++bits) {
            GraphEq eq{(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0};
            bool want = node_lines(m.graph, eq) == node_lines(copy, eq);
            ASSERT_EQ(graph_equal(m.graph, copy, eq), want)
                << file << ": node " << n->name << ", edit " << k << ", GraphEq bits " << bits;
            ASSERT_TRUE(graph_equal(copy, copy, eq));
            ++checked;
            unequal += !want;
          }
        }
      }
    });
  }
  closedir(d);
  EXPECT_GE(checked, 2000u);
  EXPECT_GE(unequal, 500u);  // the edits are seen, not only where a switch hides them
}

TEST(GraphTest, CopyKeepsNamesAndNamespace) {
  Module m = small_module();
  Graph copy = m.graph;
  EXPECT_TRUE(graph_equal(copy, m.graph, GraphEq{.names = true}));
  EXPECT_EQ(copy.call_function(OpCode::kRelu, {copy.find("x")})->name, "relu_1");
  for (Node* n = copy.first(); n; n = n->next) EXPECT_EQ(n->graph, &copy);
}

// Assigning a graph over one that already holds nodes leaves the assigned graph's nodes only:
// its size, its node list and its namespace, whatever the old graph held.
// An erased node links to nothing: its neighbours link past it, and a walk from it ends at once.
TEST(GraphTest, AnErasedNodeLinksToNothing) {
  Module m;
  Node* x = m.graph.placeholder("x", ValueType::tensor({2}));
  Node* mid = m.graph.call_function(OpCode::kRelu, {x});
  Node* last = m.graph.call_function(OpCode::kNeg, {x});
  m.graph.output({last});
  m.graph.erase(mid);
  EXPECT_TRUE(mid->erased);
  EXPECT_EQ(mid->prev, nullptr);
  EXPECT_EQ(mid->next, nullptr);
  EXPECT_EQ(x->next, last);
  EXPECT_EQ(last->prev, x);
}

TEST(GraphTest, AssigningOverAGraphReplacesItsNodesAndCount) {
  Module small = small_module();
  for (int old_nodes : {0, 1, 5, 40}) {
    Graph g;
    Node* v = g.placeholder("y", ValueType::tensor({3}));
    for (int i = 0; i < old_nodes; ++i) v = g.call_function(OpCode::kNeg, {v});
    g.output({v});
    g = small.graph;
    EXPECT_EQ(g.size(), small.graph.size()) << old_nodes;
    size_t listed = 0;
    for (Node* n = g.first(); n; n = n->next) ++listed;
    EXPECT_EQ(listed, small.graph.size()) << old_nodes;
    EXPECT_EQ(g.find("y"), nullptr) << old_nodes;
    EXPECT_TRUE(graph_equal(g, small.graph, GraphEq{.names = true})) << old_nodes;
  }
}

// Nodes live in chunks: growing the graph past several chunks moves no node, a moved graph's
// nodes (erased ones too) belong to it, and copies of any size wire every argument to the copy.
TEST(GraphTest, NodesKeepTheirPlaceAsTheGraphGrowsAndMoves) {
  for (int count : {1, 7, 8, 9, 40, 300}) {
    Graph g;
    std::vector<Node*> made{g.placeholder("x", ValueType::tensor({2}))};
    for (int i = 0; i < count; ++i) made.push_back(g.call_function(OpCode::kRelu, {made.back()}));
    Node* dead = g.call_function(OpCode::kNeg, {made.back()});
    g.erase(dead);
    g.output({made.back()});
    for (size_t i = 1; i < made.size(); ++i) {
      ASSERT_EQ(made[i]->prev, made[i - 1]) << count;
      ASSERT_EQ(std::get<Node*>(made[i]->args[0]), made[i - 1]) << count;
    }
    Graph moved = std::move(g);
    EXPECT_EQ(moved.first(), made[0]);
    EXPECT_EQ(moved.size(), made.size() + 1);
    for (Node* n : made) EXPECT_EQ(n->graph, &moved) << count;
    EXPECT_EQ(dead->graph, &moved) << count;
    Graph copy = moved;
    ASSERT_TRUE(graph_equal(copy, moved, GraphEq{.names = true})) << count;
    for (Node* n = copy.first(); n; n = n->next) {
      EXPECT_EQ(n->graph, &copy);
      for (Node* in : n->input_nodes()) EXPECT_EQ(in->graph, &copy) << n->name;
    }
  }
}

TEST(GraphTest, CopyingAGraphThatUsesANodeBeforeItsDefinitionIsAnInputError) {
  Graph g;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* a = g.call_function(OpCode::kRelu, {x});
  Node* b = g.call_function(OpCode::kNeg, {x});
  a->args[0] = b;  // %relu now reads %neg, defined after it
  g.output({a});
  try {
    Graph copy = g;
    FAIL() << "copied a graph with a use before definition";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("%relu uses %neg"), std::string::npos) << e.what();
  }
}

// erase is for a live node of this graph: erasing one twice, or another graph's node, is an
// internal error (an abort with the check's message), never a silent unlink.
TEST(GraphTest, EraseOfADeadOrForeignNodeAborts) {
  Graph g, other;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* r = g.call_function(OpCode::kRelu, {x});
  Node* foreign = other.placeholder("y", ValueType::tensor({2}));
  g.erase(r);
  EXPECT_TRUE(r->erased);
  EXPECT_EQ(g.size(), 1u);
  EXPECT_DEATH(g.erase(r), "erase of a foreign or dead node");
  EXPECT_DEATH(g.erase(foreign), "erase of a foreign or dead node");
  EXPECT_DEATH(g.erase(nullptr), "erase of a foreign or dead node");
}

// A node that reads one input twice is that input's user once, in the index built from a graph
// and in one grown by add.
TEST(UsersIndexTest, AUserOfOneInputTwiceIsListedOnce) {
  Graph g;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* a = g.call_function(OpCode::kRelu, {x});
  Node* b = g.call_function(OpCode::kAdd, {x, x});
  UsersIndex index(g);
  EXPECT_EQ(index.users(x), (std::vector<Node*>{a, b}));
  Node* c = g.call_function(OpCode::kMul, {x, x});
  index.add(c);
  EXPECT_EQ(index.users(x), (std::vector<Node*>{a, b, c}));
}

// copy_body inlines every kind of node: get_attr and call_module targets take the prefix, names
// come from dst's namespace (a taken name gets a suffix), on_copy sees each copy, and the
// output's arguments come back mapped to the copies.
TEST(GraphTest, CopyBodyCopiesEveryKindOfNodeWithThePrefix) {
  Graph body;
  Node* x = body.placeholder("x", ValueType::tensor({2}));
  Node* w = body.get_attr("w");
  Node* c = body.call_module("c", {x});
  Node* add = body.call_function(OpCode::kAdd, {c, w});
  body.output({add});
  Graph dst;
  Node* y = dst.placeholder("y", ValueType::tensor({2}));
  dst.placeholder("add", ValueType::tensor({2}));  // takes the name the copy of %add wants
  Node* out = dst.output({y});
  std::unordered_map<const Node*, Arg> env{{x, Arg(y)}};
  std::vector<std::pair<std::string, std::string>> copied;  // original name, copy's name
  std::vector<Arg> results = copy_body(dst, out, body, env, "sub.", [&](const Node& n, Node* copy) {
    copied.emplace_back(n.name, copy->name);
  });
  EXPECT_EQ(copied, (std::vector<std::pair<std::string, std::string>>{
                        {"w", "w"}, {"c", "c"}, {"add", "add_1"}}));
  ASSERT_EQ(results.size(), 1u);
  Node* add_copy = std::get<Node*>(results[0]);
  EXPECT_EQ(add_copy->name, "add_1");
  ASSERT_EQ(add_copy->args.size(), 2u);
  Node* c_copy = std::get<Node*>(add_copy->args[0]);
  Node* w_copy = std::get<Node*>(add_copy->args[1]);
  EXPECT_EQ(c_copy->op, NodeOp::kCallModule);
  EXPECT_EQ(c_copy->target, "sub.c");
  EXPECT_EQ(std::get<Node*>(c_copy->args.at(0)), y);
  EXPECT_EQ(w_copy->op, NodeOp::kGetAttr);
  EXPECT_EQ(w_copy->target, "sub.w");
  EXPECT_EQ(add_copy->next, out);  // inserted before `before`
}

TEST(ModuleStackTest, ComparesByValueAndSharesOnCopy) {
  std::vector<StackEntry> entries{{"n", "n", "N"}, {"n.m@1", "n.m", "M"}};
  ModuleStack a = entries, b = entries, none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.size(), 0u);
  EXPECT_EQ(a, b);  // two lists, equal entries
  EXPECT_NE(a, none);
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(a[1].key, "n.m@1");
  EXPECT_EQ(a.back().type, "M");
  ModuleStack copy = a;
  EXPECT_EQ(&copy[0], &a[0]);  // a copy shares the list
  entries[1].fqn = "n.k";
  EXPECT_NE(ModuleStack(entries), a);
  EXPECT_EQ(ModuleStack(std::vector<StackEntry>{}), none);  // an empty list is the empty stack
}

// A getitem's type is one element of its source's tuple: an index at or past the tuple's size,
// a negative one, or a source that is a tensor is refused, by the node's name.
TEST(InferTypesTest, AGetitemOutsideItsTupleIsRefused) {
  struct Bad {
    int64_t index;
    bool of_tuple;
  };
  for (Bad bad : {Bad{2, true}, Bad{5, true}, Bad{-1, true}, Bad{0, false}}) {
    Module m;
    Node* x = m.graph.placeholder("x", ValueType::tensor({4}));
    Node* parts = m.graph.call_function(OpCode::kSplit, {x, int64_t{0}, int64_t{2}});
    Node* src = bad.of_tuple ? parts : x;
    m.graph.output({m.graph.call_function(OpCode::kGetitem, {src, bad.index}, "pick")});
    try {
      infer_types(m);
      ADD_FAILURE() << "getitem " << bad.index << (bad.of_tuple ? " of the tuple" : " of a tensor")
                    << " typed";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("node %pick: getitem of a non-tuple or out of range"),
                std::string::npos)
          << e.what();
    }
  }
  Module m;
  Node* x = m.graph.placeholder("x", ValueType::tensor({4}));
  Node* parts = m.graph.call_function(OpCode::kSplit, {x, int64_t{0}, int64_t{2}});
  Node* last = m.graph.call_function(OpCode::kGetitem, {parts, int64_t{1}});
  m.graph.output({last});
  infer_types(m);
  ASSERT_TRUE(last->meta.val);
  EXPECT_EQ(*last->meta.val, ValueType::tensor({2}));
}

// A getitem's index is an int constant: a float, a bool or a node in its place is refused by
// the node's name before any index is read.
TEST(InferTypesTest, AGetitemIndexThatIsNoIntIsRefused) {
  for (int bad = 0; bad < 3; ++bad) {
    Module m;
    Node* x = m.graph.placeholder("x", ValueType::tensor({4}));
    Node* parts = m.graph.call_function(OpCode::kSplit, {x, int64_t{0}, int64_t{2}});
    Arg index = bad == 0 ? Arg{1.0f} : bad == 1 ? Arg{true} : Arg{x};
    m.graph.output({m.graph.call_function(OpCode::kGetitem, {parts, index}, "pick")});
    try {
      infer_types(m);
      ADD_FAILURE() << "getitem with index kind " << bad << " typed";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("node %pick: getitem's index must be an int constant"),
                std::string::npos)
          << e.what();
    }
  }
}

// A branch picks one of two values at run time, so both must have one type: a differing shape,
// a tuple, or a scalar beside a tensor is refused, and a branch of equal types takes that type.
TEST(InferTypesTest, ABranchBetweenTwoTypesIsRefused) {
  for (int bad = 0; bad < 3; ++bad) {
    Module m;
    Node* c = m.graph.placeholder("c", ValueType::scalar(ValueType::kBool));
    Node* x = m.graph.placeholder("x", ValueType::tensor({4}));
    Node* y = m.graph.placeholder("y", ValueType::tensor({4}));
    Node* other = bad == 0   ? m.graph.placeholder("z", ValueType::tensor({2, 2}))
                  : bad == 1 ? m.graph.call_function(OpCode::kSplit, {y, int64_t{0}, int64_t{2}})
                             : m.graph.placeholder("k", ValueType::scalar(ValueType::kFloat));
    m.graph.output({m.graph.call_function(OpCode::kBranch, {c, x, other}, "pick")});
    try {
      infer_types(m);
      ADD_FAILURE() << "branch " << bad << " typed";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("node %pick: branch between f32[4] and "),
                std::string::npos)
          << e.what();
    }
  }
  Module m;
  Node* c = m.graph.placeholder("c", ValueType::scalar(ValueType::kBool));
  Node* x = m.graph.placeholder("x", ValueType::tensor({4}));
  Node* y = m.graph.placeholder("y", ValueType::tensor({4}));
  Node* pick = m.graph.call_function(OpCode::kBranch, {c, x, y});
  m.graph.output({pick});
  infer_types(m);
  ASSERT_TRUE(pick->meta.val);
  EXPECT_EQ(*pick->meta.val, ValueType::tensor({4}));
}

// A module called twice with static arguments that change a type is refused, and the message
// names the first node in graph order that differs, whatever the chain after it.
TEST(InferTypesTest, ACallThatChangesATypeIsRefusedAtItsFirstDifferingNode) {
  for (int tail = 0; tail < 6; ++tail) {
    auto child = std::make_shared<Module>();
    child->type = "C";
    Graph& cg = child->graph;
    Node* x = cg.placeholder("x", ValueType::tensor({2, 3}));
    Node* k = cg.placeholder("k", ValueType::scalar(ValueType::kInt));
    Node* at = cg.call_function(OpCode::kRelu, {x});  // the same in both calls
    at = cg.call_function(OpCode::kSum, {at, k}, "first_change");
    for (int i = 0; i < tail; ++i) at = cg.call_function(OpCode::kNeg, {at});
    cg.output({at});
    Module root;
    root.children["c"] = child;
    Node* rx = root.graph.placeholder("x", ValueType::tensor({2, 3}));
    Node* a = root.graph.call_module("c", {rx, int64_t{0}});
    Node* b = root.graph.call_module("c", {rx, int64_t{1}});
    root.graph.output({a, b});
    try {
      infer_types(root);
      FAIL() << "typed a module whose calls give %first_change two shapes";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("node %first_change is f32[2] in one call and f32[3]"),
                std::string::npos)
          << tail << ": " << e.what();
    }
  }
}

}  // namespace
}  // namespace flatcheck
