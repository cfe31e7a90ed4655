// export: call keys in nn_module_stack, specialized calls, lifted state.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <memory>
#include <sstream>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/ir/engine.h"
#include "core/passes/passes.h"
#include "core/runtime/interpreter.h"
#include "core/serialize/serialize.h"
#include "generators/examples.h"
#include "generators/rc_gen.h"
#include "tests/support/programs.h"

namespace flatcheck {
namespace {

using namespace testing_support;

// ------------------------------------------------------------------------------- export

TEST(ExportTest, LiftsStateToPlaceholdersAndMutationsToOutputs) {
  Program p = export_program(*quickstart_example());
  auto phs = p.root->graph.placeholders();
  ASSERT_EQ(phs.size(), 3u);
  EXPECT_EQ(phs[0]->name, "p_block_w");
  EXPECT_EQ(phs[1]->name, "b_block_steps");
  EXPECT_EQ(phs[2]->name, "x");
  EXPECT_EQ(p.sig.inputs[0].kind, InputSpec::kParameter);
  EXPECT_EQ(p.sig.inputs[0].target, "block.w");
  EXPECT_EQ(p.sig.inputs[1].kind, InputSpec::kBuffer);
  ASSERT_EQ(p.sig.outputs.size(), 2u);
  EXPECT_EQ(p.sig.outputs[1].kind, OutputSpec::kBufferMutation);
  EXPECT_EQ(p.sig.outputs[1].target, "block.steps");
  for (Node* n = p.root->graph.first(); n; n = n->next) EXPECT_NE(n->target, "copy_");
}

// A buffer mutation output names a buffer input's target: a parameter's target (while a buffer
// input exists) or a target no input has is refused.
TEST(ExportTest, AMutationOutputMustNameABufferInput) {
  Program p = export_program(*quickstart_example());
  ASSERT_NO_THROW(lint_program(p));
  ASSERT_EQ(p.sig.outputs.size(), 2u);
  for (const char* target : {"block.w", "block", "nowhere"}) {
    Program bad = clone_program(p);
    bad.sig.outputs[1].target = target;
    try {
      lint_program(bad);
      ADD_FAILURE() << "a mutation of '" << target << "' accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("is not a buffer input"), std::string::npos) << e.what();
    }
  }
}

// A root output that is not a tensor value is refused before anything is exported: an int,
// bool or float constant by the module's lint, a child's result that is a tuple (of two or of
// three tensors) by export itself; never put in the signature.
TEST(ExportTest, ARootOutputThatIsNotATensorIsRefused) {
  for (int form = 0; form < 5; ++form) {
    Module root;
    root.type = "Model";
    Node* x = root.graph.placeholder("x", ValueType::tensor({2}));
    Node* t = root.graph.call_function(OpCode::kTanh, {x});
    t->meta.val = ValueType::tensor({2});
    if (form < 3) {
      Arg constant = form == 0 ? Arg(int64_t{3}) : form == 1 ? Arg(true) : Arg(0.5f);
      root.graph.output({t, constant});
    } else {
      auto child = std::make_shared<Module>();
      child->type = "Pair";
      Node* a = child->graph.placeholder("a", ValueType::tensor({2}));
      Node* n = child->graph.call_function(OpCode::kNeg, {a});
      n->meta.val = ValueType::tensor({2});
      std::vector<Arg> outs = {a, n};
      if (form == 4) outs.push_back(n);
      child->graph.output(outs);
      root.children["pair"] = child;
      root.graph.output({root.graph.call_module("pair", {t})});
    }
    const char* want = form < 3 ? "lint: <root>: node %output: outputs must be tensors"
                                : "export: root outputs must be tensors";
    try {
      Program p = export_program(root);
      ADD_FAILURE() << "form " << form << ": a root output that is not a tensor exported, "
                    << p.sig.outputs.size() << " outputs";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos)
          << "form " << form << ": " << e.what();
    }
  }
}

// A branch's flag must be a static bool where export meets it: an int or float constant, a
// tensor, or a child's placeholder given a tensor, an int or a float is refused, never read as
// some bool and one side taken. Lint refuses each (a flag is a bool constant in the graph
// itself), so export's own check of the flag is a second line no case reaches.
TEST(ExportTest, ABranchFlagThatIsNoStaticBoolIsRefused) {
  for (int form = 0; form < 6; ++form) {
    Module root;
    root.type = "Model";
    Node* x = root.graph.placeholder("x", ValueType::tensor({2}));
    Node* a = root.graph.call_function(OpCode::kTanh, {x});
    Node* b = root.graph.call_function(OpCode::kNeg, {x});
    a->meta.val = b->meta.val = ValueType::tensor({2});
    if (form < 3) {
      Arg flag = form == 0 ? Arg(int64_t{1}) : form == 1 ? Arg(0.5f) : Arg(x);
      root.graph.output({root.graph.call_function(OpCode::kBranch, {flag, a, b})});
    } else {
      auto child = std::make_shared<Module>();
      child->type = "Choose";
      Graph& g = child->graph;
      Node* f = g.placeholder("flag", ValueType{});
      Node* ca = g.placeholder("a", ValueType::tensor({2}));
      Node* cb = g.placeholder("b", ValueType::tensor({2}));
      g.output({g.call_function(OpCode::kBranch, {f, ca, cb})});
      root.children["choose"] = child;
      Arg flag = form == 3 ? Arg(x) : form == 4 ? Arg(int64_t{0}) : Arg(1.0f);
      root.graph.output({root.graph.call_module("choose", {flag, a, b})});
    }
    try {
      Program p = export_program(root);
      ADD_FAILURE() << "form " << form << ": a branch on a flag that is no static bool exported";
    } catch (const InputError& e) {
      std::string what = e.what();
      EXPECT_TRUE(what.find("branch: argument 0 must be of kind 'B'") != std::string::npos ||
                  what.find("needs a static bool") != std::string::npos)
          << "form " << form << ": " << what;
    }
  }
}

// The text form's signature: state inputs and mutation outputs show their target, user inputs
// and user outputs do not.
TEST(ExportTest, TheSignatureTextShowsTargetsOfStateOnly) {
  std::ostringstream os;
  os << export_program(*quickstart_example());
  std::string text = os.str();
  const std::string want =
      "signature:\n"
      "  input parameter %p_block_w <- block.w\n"
      "  input buffer %b_block_steps <- block.steps\n"
      "  input user_input %x\n"
      "  output user_output %sigmoid\n"
      "  output buffer_mutation %add_scalar_1 -> block.steps\n";
  EXPECT_EQ(text.substr(0, want.size()), want) << text;
}

// A module of the names torch.export renames: upper case in child, parameter and buffer names,
// paths that mangle alike (a.b_c / a_b.c, A.w / a.W), a user input holding a state
// placeholder's name, user inputs that collide once lower-cased ("X" / "x") and a collision
// with digits ("x_1").
std::shared_ptr<Module> export_naming_module() {
  auto leaf = [](const char* buffer) {
    auto m = std::make_shared<Module>();
    m->params["w"] = std::make_shared<Tensor>(Tensor({2}, {1, 1}));
    Graph& g = m->graph;
    Node* x = g.placeholder("x", ValueType::tensor({2}));
    Node* y = g.call_function(OpCode::kMul, {x, g.get_attr("w")});
    if (buffer) {
      m->buffers[buffer] = std::make_shared<Tensor>(Tensor({2}, {1, 1}));
      y = g.call_function(OpCode::kAdd, {y, g.get_attr(buffer)});
    }
    g.output({y});
    return m;
  };
  auto mid = [&](std::vector<std::pair<const char*, const char*>> kids) {
    auto m = std::make_shared<Module>();
    Node* x = m->graph.placeholder("x", ValueType::tensor({2}));
    for (auto [name, buffer] : kids) {
      m->children[name] = leaf(buffer);
      x = m->graph.call_module(name, {x});
    }
    m->graph.output({x});
    return m;
  };
  auto root = std::make_shared<Module>();
  root->params["p_w"] = std::make_shared<Tensor>(Tensor({2}, {1, 1}));
  root->children["A"] = mid({{"w", "Buf"}});
  root->children["a"] = mid({{"W", nullptr}, {"b_c", "buf"}});
  root->children["a_b"] = mid({{"c", nullptr}});
  root->children["convBlock"] = mid({{"Inner", "runMean"}});
  Graph& g = root->graph;
  std::vector<Node*> in;
  for (const char* name : {"p_a_w_w", "X", "x", "x_1"}) {
    in.push_back(g.create_exact(NodeOp::kPlaceholder, name, {}, name));
    in.back()->meta.val = ValueType::tensor({2});
  }
  Node* y = g.call_module("a", {in[0]});
  for (const char* child : {"a_b", "A", "convBlock"}) y = g.call_module(child, {y});
  y = g.call_function(OpCode::kMul, {y, g.get_attr("p_w")});
  for (size_t i = 1; i < in.size(); ++i) y = g.call_function(OpCode::kAdd, {y, in[i]});
  g.output({y});
  infer_types(*root);
  return root;
}

// Expected names: torch 2.6's non-strict torch.export.export of the same module (children and
// state registered in name order, as flatcheck keeps them), its graph_signature.input_specs.
TEST(ExportTest, PlaceholdersAreNamedAsTorchExportNamesThem) {
  Program p = export_program(*export_naming_module());
  std::vector<std::string> got;
  for (const InputSpec& s : p.sig.inputs)
    got.push_back(std::string(s.kind == InputSpec::kParameter ? "PARAMETER"
                              : s.kind == InputSpec::kBuffer  ? "BUFFER"
                                                              : "USER_INPUT") +
                  " " + (s.target.empty() ? "None" : s.target) + " " + s.name);
  EXPECT_EQ(got, (std::vector<std::string>{
                     "PARAMETER p_w p_p_w",
                     "PARAMETER A.w.w p_a_w_w_1",
                     "PARAMETER a.W.w p_a_w_w_2",
                     "PARAMETER a.b_c.w p_a_b_c_w",
                     "PARAMETER a_b.c.w p_a_b_c_w_1",
                     "PARAMETER convBlock.Inner.w p_convblock_inner_w",
                     "BUFFER A.w.Buf b_a_w_buf",
                     "BUFFER a.b_c.buf b_a_b_c_buf",
                     "BUFFER convBlock.Inner.runMean b_convblock_inner_runmean",
                     "USER_INPUT None p_a_w_w",
                     "USER_INPUT None x",
                     "USER_INPUT None x_1",
                     "USER_INPUT None x_1_1",
                 }));
  // The graph's placeholders: state first, then user inputs, each named as its spec.
  std::vector<std::string> phs;
  for (Node* n : p.root->graph.placeholders()) phs.push_back(n->name);
  ASSERT_EQ(phs.size(), p.sig.inputs.size());
  for (size_t i = 0; i < phs.size(); ++i) EXPECT_EQ(phs[i], p.sig.inputs[i].name);
}

TEST(ExportTest, NnModuleStackKeysCarryTheCallIndex) {
  Program p = export_program(*unflatten_example(false));
  std::vector<std::string> keys;
  for (Node* n = p.root->graph.first(); n; n = n->next)
    for (const auto& e : n->meta.nn_module_stack) {
      EXPECT_EQ(e.fqn, "n");
      EXPECT_EQ(e.type, "N");
      if (std::find(keys.begin(), keys.end(), e.key) == keys.end()) keys.push_back(e.key);
    }
  EXPECT_EQ(keys, (std::vector<std::string>{"n", "n@1"}));
}

TEST(ExportTest, StaticArgumentsSpecializeEachCall) {
  Program p = export_program(*unflatten_example(false));
  std::vector<float> constants;
  for (Node* n = p.root->graph.first(); n; n = n->next) {
    EXPECT_NE(n->target, "branch");
    if (n->op == NodeOp::kCallFunction) constants.push_back(std::get<float>(n->args[1]));
  }
  // x+3, then the first call's x+1 (flag True), +4, the second call's x+2, +5.
  EXPECT_EQ(constants, (std::vector<float>{3, 1, 4, 2, 5}));
  EXPECT_EQ(run_program_twice(p, {Tensor::full({1}, 1)})[0].data, std::vector<float>{16});
}

// Calls nest up to kMaxModuleDepth deep: a chain of that many calls exports (its innermost
// node's stack lists every call), and one more is refused (by lint's check of the module tree,
// which export runs first).
TEST(ExportTest, CallsNestUpToTheDepthLimitAndNoDeeper) {
  for (int depth : {kMaxModuleDepth - 1, kMaxModuleDepth, kMaxModuleDepth + 1}) {
    std::shared_ptr<Module> chain = call_chain(depth);
    if (depth > kMaxModuleDepth) {
      try {
        export_program(*chain);
        ADD_FAILURE() << depth << " nested calls exported";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("deeper than 256"), std::string::npos) << e.what();
      }
      continue;
    }
    Program p = export_program(*chain);
    size_t deepest = 0;
    for (Node* n = p.root->graph.first(); n; n = n->next)
      if (n->op == NodeOp::kCallFunction)
        deepest = std::max(deepest, n->meta.nn_module_stack.size());
    EXPECT_EQ(deepest, static_cast<size_t>(depth)) << depth;
  }
}

}  // namespace
}  // namespace flatcheck
