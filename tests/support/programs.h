// Small programs and runners the IR and pass tests share: run a program or an eager module
// twice on its own copy of the state (the second call sees the first call's buffer updates),
// compare bit for bit, a three-node module and a seven-op chain.
#pragma once

#include <memory>
#include <vector>

#include "core/ir/analysis.h"
#include "core/ir/ir.h"
#include "core/ir/program.h"
#include "core/runtime/interpreter.h"

namespace flatcheck::testing_support {

inline std::vector<Tensor> run_program_twice(const Program& p, const std::vector<Tensor>& in) {
  Program c = clone_program(p);
  run_program(c, in);
  return run_program(c, in);
}

inline std::vector<Tensor> run_eager_twice(const Module& m, const std::vector<Tensor>& in) {
  auto c = clone_module(m, false);
  run_module(*c, in);
  return run_module(*c, in);
}

inline bool all_bit_equal(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].bit_equal(b[i])) return false;
  return true;
}

// A chain of `depth` calls: each module calls its child "c" on its f32[2] input, and the
// innermost returns relu of it (depth 0 is that module alone).
inline std::shared_ptr<Module> call_chain(int depth) {
  auto chain = std::make_shared<Module>();
  {
    Graph& g = chain->graph;
    g.output({g.call_function(OpCode::kRelu, {g.placeholder("x", ValueType::tensor({2}))})});
  }
  for (int level = 0; level < depth; ++level) {
    auto parent = std::make_shared<Module>();
    parent->children["c"] = chain;
    Graph& g = parent->graph;
    g.output({g.call_module("c", {g.placeholder("x", ValueType::tensor({2}))})});
    chain = parent;
  }
  return chain;
}

// x -> add(x, x) -> relu -> output, on f32[2].
inline Module small_module() {
  Module m;
  Graph& g = m.graph;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* a = g.call_function(OpCode::kAdd, {x, x});
  Node* r = g.call_function(OpCode::kRelu, {a});
  g.output({r});
  return m;
}

// x -> relu -> add(.., x) -> mul -> sub -> neg -> sigmoid: one fallback op among seven.
inline std::shared_ptr<Module> chain_module() {
  auto m = std::make_shared<Module>();
  Graph& g = m->graph;
  Node* x = g.placeholder("x", ValueType::tensor({2}));
  Node* r = g.call_function(OpCode::kRelu, {x});
  Node* a = g.call_function(OpCode::kAdd, {r, x});
  Node* b = g.call_function(OpCode::kMul, {a, a});
  Node* c = g.call_function(OpCode::kSub, {b, x});
  Node* d = g.call_function(OpCode::kNeg, {c});
  Node* e = g.call_function(OpCode::kSigmoid, {d});
  g.output({e});
  infer_types(*m);
  return m;
}

}  // namespace flatcheck::testing_support
