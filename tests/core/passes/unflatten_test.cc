// unflatten: shared modules for equal calls, variants for different ones, shared state.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/ir/engine.h"
#include "core/passes/passes.h"
#include "core/pipeline/pipeline.h"
#include "core/runtime/interpreter.h"
#include "core/serialize/serialize.h"
#include "generators/examples.h"
#include "generators/generate.h"
#include "generators/rc_gen.h"
#include "generators/source.h"
#include "harness/oracle.h"
#include "tests/support/programs.h"

namespace flatcheck {
namespace {

using namespace testing_support;

// ------------------------------------------------------------------------------- unflatten

TEST(UnflattenTest, SpecializedCallsBecomeSiblingsAndReturn16) {
  Program ep = export_program(*unflatten_example(false));
  auto u = unflatten(load_program(save_program(ep)));
  std::vector<std::string> names;
  for (const auto& [k, _] : u->children) names.push_back(k);
  EXPECT_EQ(names, (std::vector<std::string>{"n", "n@1"}));
  EXPECT_EQ(run_module(*u, std::vector<Tensor>{Tensor::full({1}, 1)})[0].data,
            std::vector<float>{16});
}

TEST(UnflattenTest, EqualCallsShareOneModule) {
  auto u = unflatten(export_program(*unflatten_example(true)));
  ASSERT_EQ(u->children.size(), 1u);
  EXPECT_TRUE(u->children.count("n"));
  int calls = 0;
  for (Node* n = u->graph.first(); n; n = n->next)
    calls += n->op == NodeOp::kCallModule && n->target == "n";
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(run_module(*u, std::vector<Tensor>{Tensor::full({1}, 1)})[0].data,
            std::vector<float>{15});
}

// A value a call makes is read outside it through a node whose first argument is a constant
// (a branch on a constant condition, which a loaded program may hold): the call still returns
// it, for each of the two calls, and the unflattened module runs like the program.
TEST(UnflattenTest, AUseAfterAConstantArgumentIsStillAUse) {
  for (const char* key : {"n", "n@1"}) {
    Program ep = export_program(*unflatten_example(false));
    Graph& g = ep.root->graph;
    Node* made = nullptr;  // the call's one node
    for (Node* n = g.first(); n; n = n->next)
      if (!n->meta.nn_module_stack.empty() && n->meta.nn_module_stack.back().key == key) made = n;
    ASSERT_NE(made, nullptr) << key;
    std::vector<Node*> readers;
    for (Node* n = made->next; n; n = n->next)
      if (n->meta.nn_module_stack.empty())
        for (Arg& a : n->args)
          if (std::get_if<Node*>(&a) && std::get<Node*>(a) == made) readers.push_back(n);
    ASSERT_EQ(readers.size(), 1u) << key;
    Node* picked;
    {
      Graph::InsertingBefore at(g, readers[0]);
      picked = g.call_function(OpCode::kBranch, {true, made, made}, "picked");
    }
    for (Arg& a : readers[0]->args)
      if (std::get_if<Node*>(&a) && std::get<Node*>(a) == made) a = picked;
    infer_types(*ep.root);
    ASSERT_NO_THROW(lint_program(ep));
    auto u = unflatten(ep);
    EXPECT_EQ(run_module(*u, std::vector<Tensor>{Tensor::full({1}, 1)})[0].data,
              std::vector<float>{16})
        << key;
  }
}

TEST(UnflattenTest, TheFirstCallGraphStrategyReturns15) {
  Program ep = export_program(*unflatten_example(false));
  ScopedFault first_call(Fault::kUnflattenFirstCallGraph);
  auto u = unflatten(ep);
  EXPECT_EQ(run_module(*u, std::vector<Tensor>{Tensor::full({1}, 1)})[0].data,
            std::vector<float>{15});
}

TEST(UnflattenTest, VariantsShareStateAndAnUpdateThroughOneIsSeenByTheOther) {
  Program ep = export_program(*quickstart_example());
  auto u = unflatten(ep);
  auto variants = fqn_variants(*u, "block");
  EXPECT_EQ(variants, (std::vector<std::string>{"block", "block@1"}));
  Module* a = u->submodule("block");
  Module* b = u->submodule("block@1");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->buffers.at("steps"), b->buffers.at("steps"));
  EXPECT_EQ(a->params.at("w"), b->params.at("w"));
  // block@1 writes the buffer (the last update); block reads it on the next call.
  bool b_writes = false;
  for (Node* n = b->graph.first(); n; n = n->next) b_writes |= n->target == "copy_";
  EXPECT_TRUE(b_writes);
  Tensor x({2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(all_bit_equal(run_eager_twice(*u, {x}), run_eager_twice(*quickstart_example(), {x})));
  run_module(*u, std::vector<Tensor>{x});
  run_module(*u, std::vector<Tensor>{x});
  EXPECT_EQ(a->buffers.at("steps")->data, (std::vector<float>{4, 4, 4, 4}));
}

// FX lets a graph call a grandchild directly (call_module target "a.b"); unflatten must attach
// the call's module inside "a", not as root's "a". Found by flatcheck's own minimizer, whose
// inline step makes such targets.
TEST(UnflattenTest, CallsThatSkipALevelAreAttachedInsideTheIntermediateModule) {
  auto b = std::make_shared<Module>();
  b->type = "B";
  b->buffers["buf"] = std::make_shared<Tensor>(Tensor({2}, {0.5f, 0.5f}));
  {
    Graph& g = b->graph;
    Node* x = g.placeholder("x", ValueType::tensor({2}));
    Node* r = g.call_function(OpCode::kAdd, {g.get_attr("buf"), x});
    g.call_function(OpCode::kCopy, {g.get_attr("buf"), r});
    g.output({r});
  }
  auto a = std::make_shared<Module>();
  a->type = "A";
  a->children["b"] = b;
  {
    Node* x = a->graph.placeholder("x", ValueType::tensor({2}));
    a->graph.output({a->graph.call_module("b", {x})});
  }
  auto root = std::make_shared<Module>();
  root->children["a"] = a;
  Node* x = root->graph.placeholder("x", ValueType::tensor({2}));
  Node* y = root->graph.call_module("a.b", {x});
  Node* z = root->graph.call_function(OpCode::kAdd, {root->graph.get_attr("a.b.buf"), y});
  root->graph.output({z});
  infer_types(*root);
  Program ep = export_program(*root);
  auto u = unflatten(ep);
  ASSERT_NE(u->submodule("a"), nullptr);
  EXPECT_EQ(u->submodule("a")->type, "A");
  ASSERT_NE(u->submodule("a.b"), nullptr);
  EXPECT_EQ(u->submodule("a.b")->type, "B");
  Tensor in({2}, {1, 2});
  EXPECT_TRUE(all_bit_equal(run_eager_twice(*u, {in}), run_eager_twice(*root, {in})));
}

// The class behind "module '0.0@1' missing": in trees four deep, a call that skips levels
// attaches its variant inside an intermediate module, and whichever object of that module's
// FQN ends up on the path (the stand-in made before the module's own call, or a variant of it)
// must have it. Many generated cases of the class, each through every path of the oracle.
TEST(UnflattenTest, LevelSkippingCallsInFourDeepTreesRunLikeEager) {
  // 500 cases (467 with such a call below the root): 1,000 were 200 s under the sanitizers.
  int checked = 0, deep_skips = 0;
  for (uint64_t seed = 0; seed < 500; ++seed) {
    Rng src(mix_seed(77, seed));
    SwarmConfig config = draw_swarm(src, GenOptions{});
    config.depth = 4;
    config.skip_levels = config.repeated_calls = config.specialize = true;
    Case c = build_case(src, config, GenOptions{});
    bool skips = false;
    for_each_module(*c.module, [&](const std::string& path, Module& m) {
      for (Node* n = m.graph.first(); n; n = n->next)
        skips |= n->op == NodeOp::kCallModule && n->target.find('.') != std::string::npos &&
                 !path.empty();
    });
    deep_skips += skips;
    OracleResult r = check_case(c);
    EXPECT_FALSE(r.failure) << "seed " << seed << ": " << r.failure->signature() << "\n"
                            << r.failure->message;
    ++checked;
  }
  EXPECT_EQ(checked, 500);
  EXPECT_GE(deep_skips, 100) << "cases with a level-skipping call below the root";
}

// Every placeholder, get_attr and call_function node of an unflattened tree carries its type
// (meta.val), as torch's unflatten copies node.meta: the type inference run again on a copy
// gives the same, node for node. Over generated cases with state read through get_attr.
TEST(UnflattenTest, EveryValueNodeCarriesTheTypeInferenceGives) {
  int get_attrs = 0;
  for (uint64_t i = 0; i < 150; ++i) {
    Case c = generate_case_for_seed(mix_seed(5, i));
    auto u = unflatten(export_program(*c.module));
    auto copy = clone_module(*u, /*share_state=*/true);
    infer_types(*copy);
    std::map<std::string, std::vector<const Node*>> nodes;
    for_each_module(*u, [&](const std::string& path, Module& m) {
      for (const Node* n = m.graph.first(); n; n = n->next) nodes[path].push_back(n);
    });
    for_each_module(*copy, [&](const std::string& path, Module& m) {
      size_t k = 0;
      ASSERT_EQ(nodes[path].size(), m.graph.size()) << path;
      for (const Node* want = m.graph.first(); want; want = want->next) {
        const Node* n = nodes[path][k++];
        if (n->op != NodeOp::kPlaceholder && n->op != NodeOp::kGetAttr &&
            n->op != NodeOp::kCallFunction)
          continue;
        get_attrs += n->op == NodeOp::kGetAttr;
        ASSERT_TRUE(n->meta.val) << "case " << i << ", '" << path << "': %" << n->name;
        EXPECT_EQ(*n->meta.val, *want->meta.val)
            << "case " << i << ", '" << path << "': %" << n->name;
      }
    });
  }
  EXPECT_GE(get_attrs, 100);
}

// A call that skips a level ("p.q@1" from the caller) attaches its variant inside the module
// at `p`, and every module object of that FQN holds it (its variants and its stand-in), as
// PyTorch's call frames of one module share one `_modules` (`self.module._modules =
// base_module_frame.module._modules`, torch/export/unflatten.py, 2.14.1; docs/architecture.md
// says what flatcheck shares and what not).
TEST(UnflattenTest, ALevelSkippingCallsVariantIsHeldByEveryObjectOfItsParentFqn) {
  auto fqn_of = [](const std::string& path) {  // "a@1.b@2" -> "a.b"
    std::string out, part;
    for (size_t i = 0; i <= path.size(); ++i) {
      if (i < path.size() && path[i] != '.') {
        part += path[i];
        continue;
      }
      out += (out.empty() ? "" : ".") + part.substr(0, part.find('@'));
      part.clear();
    }
    return out;
  };
  int checked = 0;
  for (uint64_t i = 0; i < 300; ++i) {
    Case c = generate_case_for_seed(mix_seed(7, i));
    auto u = unflatten(export_program(*c.module));
    std::map<std::string, std::vector<const Module*>> objects;  // FQN -> its module objects
    std::vector<std::pair<std::string, std::string>> skips;     // (caller path, target)
    for_each_module(*u, [&](const std::string& path, Module& m) {
      objects[fqn_of(path)].push_back(&m);
      for (const Node* n = m.graph.first(); n; n = n->next)
        if (n->op == NodeOp::kCallModule && n->target.find('.') != std::string::npos)
          skips.emplace_back(path, n->target);
    });
    for (const auto& [caller, target] : skips) {
      size_t dot = target.rfind('.');
      std::string parent =
          fqn_of(caller.empty() ? target.substr(0, dot) : caller + "." + target.substr(0, dot));
      std::string name = target.substr(dot + 1);
      const Module* held = nullptr;
      for (const Module* m : objects[parent]) {
        auto it = m->children.find(name);
        ASSERT_NE(it, m->children.end())
            << "case " << i << ": an object of '" << parent << "' lacks '" << name << "'";
        if (!held) held = it->second.get();
        EXPECT_EQ(it->second.get(), held) << "case " << i << ": " << parent << "." << name;
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 100);
}

// Variants are found by the exact name before '@': a sibling whose name only starts with the
// FQN's (layer10 beside layer1) is another module.
TEST(UnflattenTest, VariantsAreNotFoundByPrefix) {
  Module root;
  for (const char* name : {"layer1", "layer1@1", "layer10", "layer1_0", "layer"})
    root.children[name] = std::make_shared<Module>();
  root.children["layer10"]->children["a"] = std::make_shared<Module>();
  root.children["layer1"]->children["a"] = std::make_shared<Module>();
  EXPECT_EQ(fqn_variants(root, "layer1"), (std::vector<std::string>{"layer1", "layer1@1"}));
  EXPECT_EQ(fqn_variants(root, "layer1.a"), (std::vector<std::string>{"layer1.a"}));
  EXPECT_EQ(fqn_variants(root, "layer"), (std::vector<std::string>{"layer"}));
  ScopedFault f(Fault::kVariantPrefixMatch);
  EXPECT_EQ(fqn_variants(root, "layer1").size(), 4u);  // the fault: layer10 and layer1_0 too
}

TEST(UnflattenTest, SwapAndSetAttrReachEveryVariant) {
  auto u = unflatten(export_program(*quickstart_example()));
  auto w = std::make_shared<Tensor>(Tensor({2, 2}, {1, 0, 0, 1}));
  set_attr_all(*u, "block", "w", w);
  EXPECT_EQ(u->submodule("block")->params.at("w"), w);
  EXPECT_EQ(u->submodule("block@1")->params.at("w"), w);
  auto replacement = std::make_shared<Module>(*u->submodule("block"));
  swap_module(*u, "block", replacement);
  EXPECT_EQ(u->children.at("block"), replacement);
  EXPECT_EQ(u->children.at("block@1"), replacement);
  // A module that does not exist and an attribute that no variant has are told apart.
  try {
    set_attr_all(*u, "nothing", "w", w);
    ADD_FAILURE() << "set_attr_all of a missing module returned";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no module 'nothing'"), std::string::npos) << e.what();
  }
  try {
    set_attr_all(*u, "block", "nothing", w);
    ADD_FAILURE() << "set_attr_all of a missing attribute returned";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no variant of 'block' has an attribute 'nothing'"),
              std::string::npos)
        << e.what();
  }
}

// The oracle's verdict on a tree of one tensor input, typed here, run twice per path.
OracleResult check_tree(const std::shared_ptr<Module>& root, Tensor input) {
  infer_types(*root);
  Case c;
  c.module = root;
  c.inputs = {std::move(input)};
  c.config.calls = 2;
  return check_case(c);
}

// A module that adds its input to its buffer in place and returns the buffer as it was.
std::shared_ptr<Module> updater(float start, OpCode op) {
  auto u = std::make_shared<Module>();
  u->type = "U";
  u->buffers["buf"] = std::make_shared<Tensor>(Tensor({2}, {start, start + 1}));
  Graph& g = u->graph;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* before = g.get_attr("buf");
  g.call_function(OpCode::kCopy, {g.get_attr("buf"), g.call_function(op, {before, x})});
  g.output({before});
  return u;
}

// A module whose graph takes `inputs` tensors and returns their sum (calling `child` on its
// first input first, when given).
std::shared_ptr<Module> reader(const std::string& type, int inputs, const std::string& child) {
  auto m = std::make_shared<Module>();
  m->type = type;
  Graph& g = m->graph;
  std::vector<Node*> in;
  for (int i = 0; i < inputs; ++i) in.push_back(g.placeholder("x", ValueType::tensor({2})));
  Node* acc = child.empty() ? in[0] : g.call_module(child, {in[0]});
  for (int i = 1; i < inputs; ++i) acc = g.call_function(OpCode::kAdd, {acc, in[i]});
  g.output({g.call_function(OpCode::kMul, {acc, acc})});
  return m;
}

// The class behind "final state 'layer1_0.a1.layer_1.buf': expected 1, got 2": a buffer's value
// from before its update, read (as an exported placeholder) inside a call that owns the buffer
// but runs after the call holding the update. Unflatten read it by get_attr at that call's
// start, after the copy_. Several trees of the class, each through every path of the oracle.
TEST(UnflattenTest, ABuffersOldValueReadAfterItsUpdateIsStillTheOldValue) {
  struct Tree {
    const char* what;
    std::vector<std::string> updates;  // call_module targets of the root, in order, each a U
    std::string read;                  // the root then calls this with every update's result
    std::string read_child;            // which the reader calls on its first input ("" none)
  };
  const std::vector<Tree> kShapes = {
      {"update in a grandchild, read by its parent", {"p.u"}, "p", ""},
      {"update two levels down, read two levels down", {"p.q.u"}, "p", "q"},
      {"two updates of one buffer, read by the parent", {"p.u", "p.u"}, "p", ""},
      {"updates of two buffers, read by the parent", {"p.u", "p.v"}, "p", ""},
  };
  int checked = 0;
  for (const Tree& shape : kShapes) {
    for (OpCode op : {OpCode::kAdd, OpCode::kMul}) {
      auto root = std::make_shared<Module>();
      root->type = "M";
      auto p = reader("P", static_cast<int>(shape.updates.size()), shape.read_child);
      root->children["p"] = p;
      if (!shape.read_child.empty()) {
        auto q = reader("Q", 1, "");
        q->children["u"] = updater(0.5f, op);
        p->children["q"] = q;
      } else {
        p->children["u"] = updater(0.5f, op);
        p->children["v"] = updater(2.0f, op);
      }
      Graph& g = root->graph;
      Node* x = g.placeholder("x", ValueType::tensor({2}));
      std::vector<Arg> olds;
      for (const std::string& target : shape.updates) olds.emplace_back(g.call_module(target, {x}));
      g.output({g.call_module(shape.read, olds)});
      OracleResult r = check_tree(root, Tensor({2}, {1.5f, -2.0f}));
      EXPECT_FALSE(r.failure) << shape.what << ", " << op_info(op).name << ": "
                              << r.failure->signature() << "\n"
                              << r.failure->message;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 8);
}

// A call whose buffer is updated only by a call that holds it (the update's copy_ comes after
// it, inside the holder) reads the buffer's value from before the update: it keeps reading it by
// get_attr, as the eager child does, and keeps the eager signature; the read is not moved to a
// caller and passed down. Trees: the holder updates after one call of the child, or between two.
TEST(UnflattenTest, AChildWhoseHolderUpdatesItsBufferLaterReadsItByGetAttr) {
  for (int child_calls : {1, 2}) {
    auto c = std::make_shared<Module>();
    c->type = "C";
    c->buffers["buf"] = std::make_shared<Tensor>(Tensor({2}, {1, 2}));
    {
      Graph& g = c->graph;
      Node* x = g.placeholder("x", ValueType::tensor({2}));
      g.output({g.call_function(OpCode::kAdd, {x, g.get_attr("buf")})});
    }
    auto m = std::make_shared<Module>();
    m->type = "M";
    m->children["c"] = c;
    {
      Graph& g = m->graph;
      Node* x = g.placeholder("x", ValueType::tensor({2}));
      Node* first = g.call_module("c", {x});
      Node* twice = g.call_function(OpCode::kMulScalar, {first, 2.0f});
      g.call_function(OpCode::kCopy, {g.get_attr("c.buf"), twice});
      g.output({child_calls == 2 ? g.call_module("c", {twice}) : first});
    }
    auto root = std::make_shared<Module>();
    root->type = "R";
    root->children["m"] = m;
    {
      Graph& g = root->graph;
      Node* x = g.placeholder("x", ValueType::tensor({2}));
      g.output({g.call_module("m", {g.call_module("m", {x})})});
    }
    OracleResult r = check_tree(root, Tensor({2}, {0.5f, -1.5f}));
    EXPECT_FALSE(r.failure) << child_calls << ": " << r.failure->signature() << "\n"
                            << r.failure->message;
    PipelineConfig config;
    config.calls = 2;
    Pipeline pipe(root, config);
    auto un = pipe.build(Stage::kUnflattened).module;
    ASSERT_TRUE(un);
    const Module* first_c = un->submodule("m.c");
    ASSERT_NE(first_c, nullptr);
    EXPECT_EQ(first_c->graph.placeholders().size(), 1u)
        << child_calls << ": the first call of m.c kept the eager signature\n"
        << first_c->graph;
    bool reads_buf = false;
    for (Node* n = first_c->graph.first(); n; n = n->next)
      reads_buf |= n->op == NodeOp::kGetAttr && n->target == "buf";
    EXPECT_TRUE(reads_buf) << child_calls << ": m.c reads its buffer by get_attr\n"
                           << first_c->graph;
    EXPECT_EQ(un->graph.placeholders().size(), 1u) << "no buffer passed in from the root\n"
                                                   << un->graph;
  }
}

}  // namespace
}  // namespace flatcheck
