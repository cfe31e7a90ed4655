#include "generators/examples.h"

#include "generators/types.h"

namespace flatcheck {

std::shared_ptr<Module> unflatten_example(bool second_flag) {
  auto n = std::make_shared<Module>();
  n->type = "N";
  {
    Graph& g = n->graph;
    Node* x = g.placeholder("x", ValueType::tensor({1}));
    Node* b = g.placeholder("b", ValueType::scalar(ValueType::kBool));
    Node* plus1 = g.call_function(OpCode::kAddScalar, {x, 1.0f}, "add");
    Node* plus2 = g.call_function(OpCode::kAddScalar, {x, 2.0f}, "add");
    Node* r = g.call_function(OpCode::kBranch, {b, plus1, plus2});
    g.output({r});
  }
  auto m = std::make_shared<Module>();
  m->type = "M";
  m->children["n"] = n;
  Graph& g = m->graph;
  Node* x = g.placeholder("x", ValueType::tensor({1}));
  Node* x0 = g.call_function(OpCode::kAddScalar, {x, 3.0f}, "add");
  Node* x1 = g.call_module("n", {x0, true});
  Node* x2 = g.call_function(OpCode::kAddScalar, {x1, 4.0f}, "add");
  Node* x3 = g.call_module("n", {x2, second_flag});
  Node* y = g.call_function(OpCode::kAddScalar, {x3, 5.0f}, "add");
  g.output({y});
  annotate_types(*m);
  return m;
}

std::shared_ptr<Module> graph_break_example() {
  auto m = std::make_shared<Module>();
  m->type = "GraphBreak";
  Graph& g = m->graph;
  Node* x = g.placeholder("x", ValueType::tensor({4, 4}));
  // Engine 0: five supported ops, a split, and one getitem read outside.
  Node* a = g.call_function(OpCode::kMul, {x, x});
  Node* b = g.call_function(OpCode::kAdd, {a, x});
  Node* c = g.call_function(OpCode::kTanh, {b});
  Node* d = g.call_function(OpCode::kMulScalar, {c, 0.5f});
  Node* e = g.call_function(OpCode::kAddScalar, {d, 0.25f});
  Node* s0 = g.call_function(OpCode::kSplit, {e, int64_t{0}, int64_t{2}});
  Node* gi = g.call_function(OpCode::kGetitem, {s0, int64_t{0}});  // "getitem"
  // The fallback.
  Node* r0 = g.call_function(OpCode::kRelu, {gi});
  // Engine 2: five supported ops and a split whose two halves are both read outside.
  Node* f = g.call_function(OpCode::kNeg, {r0});
  Node* h = g.call_function(OpCode::kSigmoid, {f});
  Node* i = g.call_function(OpCode::kMul, {h, r0});
  Node* j = g.call_function(OpCode::kSubScalar, {i, 0.125f});
  Node* k = g.call_function(OpCode::kAbs, {j});
  Node* s1 = g.call_function(OpCode::kSplit, {k, int64_t{1}, int64_t{2}});
  Node* g1 = g.call_function(OpCode::kGetitem, {s1, int64_t{0}});
  Node* g2 = g.call_function(OpCode::kGetitem, {s1, int64_t{1}});
  // A second fallback reads both.
  Node* r1 = g.call_function(OpCode::kRelu, {g1});
  Node* out = g.call_function(OpCode::kAdd, {r1, g2});
  g.output({out});
  annotate_types(*m);
  return m;
}

std::shared_ptr<Module> quickstart_example() {
  auto block = std::make_shared<Module>();
  block->type = "Block";
  block->params["w"] = std::make_shared<Tensor>(Tensor({2, 2}, {0.5f, -1.0f, 2.0f, 0.25f}));
  block->buffers["steps"] = std::make_shared<Tensor>(Tensor::zeros({2, 2}));
  {
    Graph& g = block->graph;
    Node* x = g.placeholder("x", ValueType::tensor({2, 2}));
    Node* scale = g.placeholder("scale", ValueType::scalar(ValueType::kFloat));
    Node* w = g.get_attr("w");
    Node* mm = g.call_function(OpCode::kMatmul, {x, w});
    Node* sc = g.call_function(OpCode::kMulScalar, {mm, scale});
    Node* r = g.call_function(OpCode::kRelu, {sc});
    Node* steps = g.get_attr("steps");
    Node* inc = g.call_function(OpCode::kAddScalar, {steps, 1.0f});
    g.call_function(OpCode::kCopy, {steps, inc});
    Node* y = g.call_function(OpCode::kAdd, {r, x});
    g.output({y});
  }
  auto m = std::make_shared<Module>();
  m->type = "Model";
  m->children["block"] = block;
  Graph& g = m->graph;
  Node* x = g.placeholder("x", ValueType::tensor({2, 2}));
  Node* h = g.call_module("block", {x, 1.0f});
  Node* t = g.call_function(OpCode::kTanh, {h});
  Node* h2 = g.call_module("block", {t, 2.0f});
  Node* y = g.call_function(OpCode::kSigmoid, {h2});
  g.output({y});
  annotate_types(*m);
  return m;
}

}  // namespace flatcheck
