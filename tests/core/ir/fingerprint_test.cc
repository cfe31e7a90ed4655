// Fingerprints (core/ir/fingerprint.h): a structural digest of the objects in memory. A deep
// copy and a save read back have the original's fingerprint; every field a pass could edit,
// changed alone on a copy, changes it. The changes run over the modules and programs of many
// generated cases (exported, partitioned and flattened, so engines are there), and every change
// must have applied to some of them.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/ir/engine.h"
#include "core/ir/fingerprint.h"
#include "core/passes/passes.h"
#include "core/pipeline/pipeline.h"
#include "core/runtime/interpreter.h"
#include "core/serialize/serialize.h"
#include "generators/generate.h"

namespace flatcheck {
namespace {

using Change = std::function<bool(Program&)>;

// Every live node of every module of the program's tree.
std::vector<Node*> all_nodes(Program& p) {
  std::vector<Node*> out;
  for_each_module(*p.root, [&](const std::string&, Module& m) {
    for (Node* n : m.graph.nodes()) out.push_back(n);
  });
  return out;
}

// Applies `f` to the first node for which it returns true.
Change on_node(std::function<bool(Node&)> f) {
  return [f](Program& p) {
    for (Node* n : all_nodes(p))
      if (f(*n)) return true;
    return false;
  };
}

// Applies `f` to a copy of the first engine of the tree for which it returns true.
Change on_engine(std::function<bool(Engine&)> f) {
  return [f](Program& p) {
    bool done = false;
    for_each_module(*p.root, [&](const std::string&, Module& m) {
      for (auto& [k, e] : m.engines) {
        if (done) return;
        auto copy = std::make_shared<Engine>(*e);  // engines are shared with the original
        if (f(*copy)) e = copy, done = true;
      }
    });
    return done;
  };
}

// Applies `f` to the first module of the tree (root first) for which it returns true.
Change on_module(std::function<bool(Module&)> f) {
  return [f](Program& p) {
    bool done = false;
    for_each_module(*p.root, [&](const std::string&, Module& m) { done = done || f(m); });
    return done;
  };
}

bool flip_bit(Tensor& t) {
  if (t.data.empty()) return false;
  t.data[t.data.size() / 2] = bits_float(float_bits(t.data[t.data.size() / 2]) ^ 1u);
  return true;
}

template <class T>
bool first_of(std::vector<T>& v, const std::function<void(T&)>& f) {
  if (v.empty()) return false;
  f(v.front());
  return true;
}

std::map<std::string, Change> changes() {
  std::map<std::string, Change> c;
  // Nodes.
  c["node op"] = on_node([](Node& n) {
    if (n.op != NodeOp::kCallFunction) return false;
    n.op = NodeOp::kCallModule;
    return true;
  });
  c["node target"] = on_node([](Node& n) { return (n.target += "x", true); });
  c["node op code"] = on_node([](Node& n) {
    if (n.op != NodeOp::kCallFunction) return false;
    n.fn = n.fn == OpCode::kAdd ? OpCode::kSub : OpCode::kAdd;
    return true;
  });
  c["node name"] = on_node([](Node& n) { return (n.name += "_x", true); });
  c["node argument rewired"] = on_node([](Node& n) {
    for (Arg& a : n.args) {
      Node** in = std::get_if<Node*>(&a);
      if (!in || !(*in)->prev) continue;
      *in = (*in)->prev;
      return true;
    }
    return false;
  });
  c["node argument constant"] = on_node([](Node& n) {
    for (Arg& a : n.args) {
      if (auto* f = std::get_if<float>(&a)) return (*f = bits_float(float_bits(*f) ^ 1u), true);
      if (auto* i = std::get_if<int64_t>(&a)) return (*i += 1, true);
    }
    return false;
  });
  c["node argument kind"] = on_node([](Node& n) {  // 1 and 1.0 are different arguments
    for (Arg& a : n.args)
      if (auto* i = std::get_if<int64_t>(&a)) return (a = static_cast<float>(*i), true);
    return false;
  });
  c["node argument int list"] = on_node([](Node& n) {
    for (Arg& a : n.args)
      if (auto* l = std::get_if<std::vector<int64_t>>(&a)) return (l->push_back(1), true);
    return false;
  });
  c["node argument dropped"] = on_node([](Node& n) {
    if (n.args.empty()) return false;
    n.args.pop_back();
    return true;
  });
  c["node type dropped"] = on_node([](Node& n) {
    if (!n.meta.val) return false;
    n.meta.val.reset();
    return true;
  });
  c["node type shape"] = on_node([](Node& n) {
    if (!n.meta.val || n.meta.val->kind != ValueType::kTensor) return false;
    n.meta.val->shape.push_back(1);
    return true;
  });
  c["node type kind"] = on_node([](Node& n) {
    if (!n.meta.val || n.meta.val->kind != ValueType::kInt) return false;
    n.meta.val->kind = ValueType::kFloat;
    return true;
  });
  c["node tuple type"] = on_node([](Node& n) {
    if (!n.meta.val || n.meta.val->kind != ValueType::kTuple || n.meta.val->elems.empty())
      return false;
    n.meta.val->elems.back().push_back(1);
    return true;
  });
  // A stack is shared and immutable: a change is a new stack, assigned.
  for (int field = 0; field < 3; ++field)
    c["node stack entry " + std::to_string(field)] = on_node([field](Node& n) {
      std::vector<StackEntry> stack = n.meta.nn_module_stack.entries();
      if (!first_of<StackEntry>(stack, [field](StackEntry& e) {
            (field == 0 ? e.key : field == 1 ? e.fqn : e.type) += "x";
          }))
        return false;
      n.meta.nn_module_stack = std::move(stack);
      return true;
    });
  c["node stack entry dropped"] = on_node([](Node& n) {
    if (n.meta.nn_module_stack.empty()) return false;
    std::vector<StackEntry> stack = n.meta.nn_module_stack.entries();
    stack.pop_back();
    n.meta.nn_module_stack = std::move(stack);
    return true;
  });
  c["node origin"] = on_node([](Node& n) { return (n.meta.origin += "x", true); });
  c["node erased"] = on_node([](Node& n) {
    if (n.op == NodeOp::kOutput || !n.graph->users(&n).empty()) return false;
    n.graph->erase(&n);
    return true;
  });
  // Modules.
  c["module type"] = on_module([](Module& m) { return (m.type += "X", true); });
  c["parameter data"] = on_module([](Module& m) {
    for (auto& [k, t] : m.params)
      if (flip_bit(*t)) return true;
    return false;
  });
  c["buffer shape"] = on_module([](Module& m) {
    if (m.buffers.empty()) return false;
    m.buffers.begin()->second->shape.push_back(1);
    return true;
  });
  c["parameter renamed"] = on_module([](Module& m) {
    if (m.params.empty()) return false;
    auto t = m.params.begin()->second;
    m.params.erase(m.params.begin());
    m.params["zz_renamed"] = t;
    return true;
  });
  c["buffer dropped"] = on_module([](Module& m) {
    if (m.buffers.empty()) return false;
    m.buffers.erase(m.buffers.begin());
    return true;
  });
  c["shared state unshared"] = on_module([](Module& m) {  // a copy of the same value
    for (auto* state : {&m.params, &m.buffers})
      for (auto& [k, t] : *state)
        if (t.use_count() > 1) return (t = std::make_shared<Tensor>(*t), true);
    return false;
  });
  c["child renamed"] = on_module([](Module& m) {
    if (m.children.empty()) return false;
    auto child = m.children.begin()->second;
    m.children.erase(m.children.begin());
    m.children["zz_renamed"] = child;
    return true;
  });
  c["child dropped"] = on_module([](Module& m) {
    if (m.children.empty()) return false;
    m.children.erase(m.children.begin());
    return true;
  });
  c["shared child unshared"] = on_module([](Module& m) {
    for (auto& [k, child] : m.children)
      if (child.use_count() > 1) return (child = clone_module(*child, true), true);
    return false;
  });
  // Engines: every field.
  c["engine name"] = on_engine([](Engine& e) { return (e.name += "x", true); });
  c["engine input binding name"] = on_engine([](Engine& e) {
    return first_of<EngineBinding>(e.inputs, [](EngineBinding& b) { b.name += "x"; });
  });
  c["engine input binding slot"] = on_engine([](Engine& e) {
    return first_of<EngineBinding>(e.inputs, [](EngineBinding& b) { b.slot += 1; });
  });
  c["engine input binding position"] = on_engine([](Engine& e) {
    return first_of<EngineBinding>(e.inputs, [](EngineBinding& b) { b.position += 1; });
  });
  c["engine output binding"] = on_engine([](Engine& e) {
    return first_of<EngineBinding>(e.outputs, [](EngineBinding& b) { b.slot += 1; });
  });
  c["engine constant slot"] = on_engine([](Engine& e) {
    if (e.constants.empty()) return false;
    e.constants.front().first += 1;
    return true;
  });
  c["engine constant data"] = on_engine([](Engine& e) {
    for (auto& [slot, t] : e.constants)
      if (flip_bit(t)) return true;
    return false;
  });
  c["engine slot shape"] = on_engine([](Engine& e) {
    return first_of<EngineSlot>(e.slots, [](EngineSlot& s) { s.shape.push_back(1); });
  });
  c["engine slot offset"] = on_engine([](Engine& e) {
    return first_of<EngineSlot>(e.slots, [](EngineSlot& s) { s.offset += 1; });
  });
  c["engine op code"] = on_engine([](Engine& e) {
    return first_of<EngineOp>(
        e.ops, [](EngineOp& o) { o.op = o.op == OpCode::kAdd ? OpCode::kSub : OpCode::kAdd; });
  });
  c["engine op inputs"] = on_engine(
      [](Engine& e) { return first_of<EngineOp>(e.ops, [](EngineOp& o) { o.in.push_back(0); }); });
  c["engine op outputs"] = on_engine(
      [](Engine& e) { return first_of<EngineOp>(e.ops, [](EngineOp& o) { o.out.push_back(0); }); });
  c["engine op scalars"] = on_engine([](Engine& e) {
    return first_of<EngineOp>(e.ops, [](EngineOp& o) { o.scalars.push_back(int64_t{1}); });
  });
  c["engine op origin"] = on_engine(
      [](Engine& e) { return first_of<EngineOp>(e.ops, [](EngineOp& o) { o.origin += "x"; }); });
  c["engine arena"] = on_engine([](Engine& e) { return (e.arena_floats += 1, true); });
  // The program's own fields.
  c["signature input kind"] = [](Program& p) {
    return first_of<InputSpec>(p.sig.inputs, [](InputSpec& s) {
      s.kind = s.kind == InputSpec::kBuffer ? InputSpec::kParameter : InputSpec::kBuffer;
    });
  };
  c["signature input name"] = [](Program& p) {
    return first_of<InputSpec>(p.sig.inputs, [](InputSpec& s) { s.name += "x"; });
  };
  c["signature input target"] = [](Program& p) {
    return first_of<InputSpec>(p.sig.inputs, [](InputSpec& s) { s.target += "x"; });
  };
  c["signature output kind"] = [](Program& p) {
    return first_of<OutputSpec>(p.sig.outputs, [](OutputSpec& s) {
      s.kind =
          s.kind == OutputSpec::kUserOutput ? OutputSpec::kBufferMutation : OutputSpec::kUserOutput;
    });
  };
  c["signature output name"] = [](Program& p) {
    return first_of<OutputSpec>(p.sig.outputs, [](OutputSpec& s) { s.name += "x"; });
  };
  c["signature output target"] = [](Program& p) {
    return first_of<OutputSpec>(p.sig.outputs, [](OutputSpec& s) { s.target += "x"; });
  };
  c["state data"] = [](Program& p) {
    for (auto& [k, t] : p.state)
      if (flip_bit(*t)) return true;
    return false;
  };
  c["state renamed"] = [](Program& p) {
    if (p.state.empty()) return false;
    auto t = p.state.begin()->second;
    p.state.erase(p.state.begin());
    p.state["zz.renamed"] = t;
    return true;
  };
  c["module type entry"] = [](Program& p) {
    if (p.module_types.empty()) return false;
    p.module_types.begin()->second += "X";
    return true;
  };
  c["module type dropped"] = [](Program& p) {
    if (p.module_types.empty()) return false;
    p.module_types.erase(p.module_types.begin());
    return true;
  };
  return c;
}

// The programs of the case's passes, and its eager module as a program of its own (so the
// module changes apply to the eager tree, with its children and shared state).
std::vector<Program> programs_of(const Case& c) {
  Program eager;
  eager.root = c.module;
  Program ep = export_program(*c.module);
  Program pp = partition(ep, partition_options(c.config));
  Program fp = flatten(pp);
  return {eager, ep, pp, fp};
}

TEST(FingerprintTest, EveryFieldAPassCouldEditChangesTheFingerprint) {
  auto all = changes();
  std::map<std::string, int> applied;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Case c = generate_case_for_seed(seed);
    for (const Program& p : programs_of(c)) {
      Digest print = fingerprint_program(p);
      ASSERT_EQ(fingerprint_program(clone_program(p)), print) << "seed " << seed;
      for (const auto& [what, change] : all) {
        Program copy = clone_program(p);
        if (!change(copy)) continue;
        ++applied[what];
        EXPECT_NE(fingerprint_program(copy), print) << what << ", seed " << seed;
      }
      EXPECT_EQ(fingerprint_program(p), print) << "the changes were made to copies";
    }
  }
  for (const auto& [what, change] : all) EXPECT_GT(applied[what], 0) << what << " never applied";
}

// A deep copy and a program's save read back have the original's fingerprint: it follows the
// content, not the objects' addresses. (Not a module's save: its file keeps the types of
// placeholders only, and the loader types what it can, so a module read back may hold more or
// fewer types than the one saved; the fingerprint covers them all.)
TEST(FingerprintTest, CopiesAndReloadedSavesKeepTheFingerprint) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Case c = generate_case_for_seed(seed);
    Digest module_print = fingerprint_module(*c.module);
    EXPECT_EQ(fingerprint_module(*clone_module(*c.module, /*share_state=*/false)), module_print);
    auto programs = programs_of(c);
    for (size_t i = 1; i < programs.size(); ++i) {
      Digest print = fingerprint_program(programs[i]);
      EXPECT_EQ(fingerprint_program(load_program(save_program(programs[i]))), print)
          << "seed " << seed << ", program " << i;
    }
    // Different stages of one case are different programs.
    EXPECT_NE(fingerprint_program(programs[1]), fingerprint_program(programs[2]));
  }
}

// Without types, a module's fingerprint ignores every node's meta.val (so a module saved and read
// back, typed by the loader, keeps it) and still follows everything else.
TEST(FingerprintTest, WithoutTypesOnlyTheNodesTypesAreLeftOut) {
  int retyped = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Case c = generate_case_for_seed(seed);
    const Module& m = *c.module;
    Digest with = fingerprint_module(m), without = fingerprint_module(m, false);
    EXPECT_NE(with, without) << "seed " << seed;
    EXPECT_EQ(fingerprint_module(*load_module(save_module(m)), false), without) << "seed " << seed;
    auto copy = clone_module(m, false);
    Node* n = copy->graph.first();
    n->meta.val = ValueType::scalar(ValueType::kBool);  // was a tensor's (or nothing)
    EXPECT_NE(fingerprint_module(*copy), with) << "seed " << seed;
    EXPECT_EQ(fingerprint_module(*copy, false), without) << "seed " << seed;
    n->meta.val.reset();
    EXPECT_EQ(fingerprint_module(*copy, false), without) << "seed " << seed;
    n->name += "_renamed";
    EXPECT_NE(fingerprint_module(*copy, false), without) << "seed " << seed;
    ++retyped;
  }
  EXPECT_EQ(retyped, 40);
}

// The oracle runs each program on copy_for_run: its own state, the program's module tree. Runs
// that mutate buffers change the copy's state and leave the program as it was.
TEST(FingerprintTest, RunningACopyForRunLeavesTheProgramAsItWas) {
  int mutated = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Case c = generate_case_for_seed(seed);
    Program ep = export_program(*c.module);
    Digest print = fingerprint_program(ep);
    Program run = copy_for_run(ep);
    EXPECT_EQ(run.root, ep.root);
    for (int k = 0; k < c.config.calls; ++k) {
      RunContext ctx;
      (void)run_program(run, c.inputs, ctx);
    }
    EXPECT_EQ(fingerprint_program(ep), print) << "seed " << seed;
    mutated += fingerprint_program(run) != print;
  }
  EXPECT_GT(mutated, 0) << "no case's runs mutated a buffer: the test shows nothing";
}

// The reference runs the case's own module inside a StateSnapshot: buffers its runs write are
// put back when the snapshot ends, also when a run throws.
TEST(FingerprintTest, AStateSnapshotPutsBackWhatRunsWrote) {
  int written = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Case c = generate_case_for_seed(seed);
    Digest print = fingerprint_module(*c.module);
    {
      StateSnapshot snapshot(*c.module);
      for (int k = 0; k < c.config.calls; ++k) (void)run_module(*c.module, c.inputs);
      written += fingerprint_module(*c.module) != print;
    }
    EXPECT_EQ(fingerprint_module(*c.module), print) << "seed " << seed;
    try {
      StateSnapshot snapshot(*c.module);
      for (int k = 0; k < c.config.calls; ++k) (void)run_module(*c.module, c.inputs);
      throw std::runtime_error("unwinding");
    } catch (const std::runtime_error&) {
    }
    EXPECT_EQ(fingerprint_module(*c.module), print) << "seed " << seed << ", after an exception";
  }
  EXPECT_GT(written, 0) << "no case's runs wrote a buffer: the test shows nothing";
}

}  // namespace
}  // namespace flatcheck
