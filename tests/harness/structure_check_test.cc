// The unflattened tree against the eager one (harness/structure_check.h): unflatten's trees of
// generated cases pass, and each kind of wrong tree, made from them, is named.
#include "harness/structure_check.h"

#include <gtest/gtest.h>

#include "core/passes/passes.h"
#include "core/runtime/interpreter.h"
#include "core/serialize/serialize.h"
#include "generators/generate.h"

namespace flatcheck {
namespace {

struct Unflattened {
  Case c;
  std::shared_ptr<Module> tree;
  std::map<std::string, int> calls;
};

Unflattened unflatten_case(uint64_t seed) {
  Unflattened u{generate_case_for_seed(seed), nullptr, {}};
  u.tree = unflatten(load_program(save_program(export_program(*u.c.module))));
  auto eager = clone_module(*u.c.module, false);
  RunContext ctx;
  std::vector<Value> in;
  for (const Tensor& t : u.c.inputs) in.push_back(Value::of(t));
  run_module(*eager, in, ctx);
  u.calls = ctx.calls_per_fqn;
  return u;
}

// The first module of the tree (depth first) for which pick(name, module) holds.
Module* find_child(Module& m, const std::function<bool(const std::string&, Module&)>& pick) {
  for (auto& [name, child] : m.children) {
    if (pick(name, *child)) return child.get();
    if (Module* found = find_child(*child, pick)) return found;
  }
  return nullptr;
}

// A variant `n@k` and its twin `n` under one parent, distinct modules with real graphs; or
// nulls.
std::pair<Module*, Module*> pair(Module& m) {
  for (auto& [k, c] : m.children) {
    auto at = k.find('@');
    if (at != std::string::npos && c->graph.size() > 1) {
      auto it = m.children.find(k.substr(0, at));
      if (it != m.children.end() && it->second->graph.size() > 1 && it->second != c)
        return {c.get(), it->second.get()};
    }
    if (auto p = pair(*c); p.first) return p;
  }
  return {nullptr, nullptr};
}

void expect_breach(const Unflattened& u, const std::shared_ptr<Module>& tree,
                   const std::string& property, const std::string& words,
                   const std::string& where) {
  auto b = unflatten_structure_breach(*u.c.module, *tree, u.calls);
  ASSERT_TRUE(b) << where;
  EXPECT_EQ(b->property, property) << where << ": " << b->message;
  EXPECT_NE(b->message.find(words), std::string::npos) << where << ": " << b->message;
}

TEST(StructureCheckTest, UnflattenedTreesOfGeneratedCasesPass) {
  int specialized = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Unflattened u = unflatten_case(seed);
    auto b = unflatten_structure_breach(*u.c.module, *u.tree, u.calls, &specialized);
    EXPECT_FALSE(b) << "seed " << seed << ": " << b->message;
  }
  EXPECT_GT(specialized, 0);
}

TEST(StructureCheckTest, EachKindOfWrongTreeIsNamed) {
  int typed = 0, unknown = 0, copied = 0, extra = 0, variants = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Unflattened u = unflatten_case(seed);
    const std::string where = "seed " + std::to_string(seed);
    auto any = [](const std::string&, Module&) { return true; };
    if (u.tree->children.empty()) continue;
    {  // a module of another type, the root or a child
      auto t = clone_module(*u.tree, true);
      t->type += "X";
      expect_breach(u, t, "structure", "the eager root is a", where);
      t = clone_module(*u.tree, true);
      find_child(*t, any)->type += "X";
      expect_breach(u, t, "structure", "the eager module is a", where);
      ++typed;
    }
    {  // a child the eager program does not have
      auto t = clone_module(*u.tree, true);
      auto first = t->children.begin()->second;
      t->children["not_in_eager"] = first;
      expect_breach(u, t, "structure", "is not a module of the eager program", where);
      ++unknown;
    }
    auto s = clone_module(*u.tree, false);
    auto [v, twin] = pair(*s);
    if (!v) continue;
    // More variants than calls: the run made none.
    auto b = unflatten_structure_breach(*u.c.module, *u.tree, {});
    ASSERT_TRUE(b) << where;
    EXPECT_NE(b->message.find("variants for 0 calls"), std::string::npos) << b->message;
    ++extra;
    // A variant holding its own copy of a parameter its twin holds.
    for (auto& [k, w] : v->params)
      if (auto it = twin->params.find(k); it != twin->params.end() && it->second == w) {
        auto copy = clone_module(*s, true);
        Module* cv = pair(*copy).first;
        cv->params.at(k) = std::make_shared<Tensor>(*w);
        expect_breach(u, copy, "shared-state", "separate copies of parameter", where);
        ++copied;
        break;
      }
    // Two variants with one graph.
    v->graph = twin->graph;
    expect_breach(u, s, "structure", "have equal graphs", where);
    ++variants;
  }
  EXPECT_GT(typed, 20);
  EXPECT_GT(unknown, 20);
  EXPECT_GT(copied, 2);
  EXPECT_GT(extra, 5);
  EXPECT_GT(variants, 2);
}

TEST(StructureCheckTest, AVariantNameMustBeNameAtNumber) {
  Unflattened u = unflatten_case(3);
  ASSERT_FALSE(u.tree->children.empty());
  auto t = clone_module(*u.tree, true);
  auto first = *t->children.begin();
  t->children[first.first + "@x"] = first.second;
  expect_breach(u, t, "structure", "is not a variant name", "seed 3");
}

}  // namespace
}  // namespace flatcheck
