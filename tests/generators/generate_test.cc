// The generator: valid cases from any choice sequence, determinism, swarm coverage.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "core/base/faults.h"
#include "core/passes/passes.h"
#include "core/pipeline/pipeline.h"
#include "core/runtime/interpreter.h"
#include "generators/generate.h"
#include "generators/rc_gen.h"
#include "generators/types.h"
#include "harness/oracle.h"
#include "harness/reach.h"

namespace flatcheck {
namespace {

TEST(GenerateTest, SameSeedGivesTheSameCase) {
  for (uint64_t seed : {1u, 2u, 99u}) {
    std::string a = save_case(generate_case_for_seed(seed));
    std::string b = save_case(generate_case_for_seed(seed));
    EXPECT_EQ(a, b);
  }
  EXPECT_NE(save_case(generate_case_for_seed(1)), save_case(generate_case_for_seed(2)));
}

TEST(GenerateTest, RecordedChoicesReplayTheSameCase) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Rng rng(seed);
    rng.start_recording();
    Case a = generate_case(rng);
    Case b = build_recipe(Recipe{rng.choices()});
    EXPECT_EQ(save_case(a), save_case(b)) << "seed " << seed;
  }
}

TEST(GenerateTest, EmptyChoicesAndArbitraryBytesBuildValidCases) {
  Case empty = build_recipe(Recipe{});
  EXPECT_NO_THROW(lint(*empty.module));
  EXPECT_FALSE(check_case(empty).failure.has_value());
  for (int i = 0; i < 200; ++i) {
    std::vector<uint8_t> bytes(static_cast<size_t>(i * 3));
    for (size_t k = 0; k < bytes.size(); ++k)
      bytes[k] = static_cast<uint8_t>((k * 131 + i * 17) & 0xff);
    ByteSource src(bytes.data(), bytes.size());
    Case c = generate_case(src);
    EXPECT_NO_THROW(lint(*c.module));
    auto r = check_case(c);
    EXPECT_FALSE(r.failure.has_value()) << r.failure->signature() << ": " << r.failure->message;
  }
}

// Every reach switch of the swarm is read: with it off no case has its shape (docs/reach.md),
// with it on some do, over the same fixed seeds.
TEST(GenerateTest, EveryReachSwitchIsRead) {
  struct Switch {
    const char* name;
    bool SwarmConfig::*field;
    Reach shape;
    bool only_source = true;  // false: other steps can make the shape too (then on > off)
  };
  const Switch kSwitches[] = {
      {"alias_modules", &SwarmConfig::alias_modules, Reach::kModuleAlias},
      {"shared_buffers", &SwarmConfig::shared_buffers, Reach::kSharedBuffers},
      {"shared_params", &SwarmConfig::shared_params, Reach::kSharedParams},
      {"skip_levels", &SwarmConfig::skip_levels, Reach::kLevelSkip},
      {"repeated_blocks", &SwarmConfig::repeated_blocks, Reach::kRepeatedBlocks},
      {"read_after_write", &SwarmConfig::read_after_write, Reach::kReadAfterWrite},
      // A branch step between two call results also reads as a forwarded flag.
      {"forward_flags", &SwarmConfig::forward_flags, Reach::kForwardedFlag, false},
      {"special_values", &SwarmConfig::special_values, Reach::kSpecialScalars},
      {"zero_dims", &SwarmConfig::zero_dims, Reach::kZeroSize},
      {"int_args", &SwarmConfig::int_args, Reach::kIntShapeSpec},
  };
  for (const Switch& sw : kSwitches) {
    int on = 0, off = 0;
    for (uint64_t seed = 0; seed < 300; ++seed) {
      for (bool value : {false, true}) {
        Rng src(seed);
        SwarmConfig config = draw_swarm(src, GenOptions{});
        config.*sw.field = value;
        // Other switches that make a forwarded flag: a caller's flag passed on by nested
        // specialization, and a flag choosing between two children's results.
        if (sw.field == &SwarmConfig::forward_flags)
          config.nested_specialize = config.child_choice = config.nested_variants = false;
        if (sw.field == &SwarmConfig::zero_dims && !value)  // the draw already zeroed a dim
          for (auto& d : config.base_shape) d = std::max<int64_t>(d, 1);
        if (sw.field == &SwarmConfig::zero_dims && value) config.base_shape[0] = 0;
        Case c = build_case(src, config, GenOptions{});
        bool has = (case_reach(c) & reach_bit(sw.shape)) != 0;
        (value ? on : off) += has;
      }
    }
    if (sw.only_source)
      EXPECT_EQ(off, 0) << sw.name << " off, yet " << off << " cases have the shape";
    else
      EXPECT_GT(on, 2 * off) << sw.name << ": " << on << " cases on, " << off << " off";
    EXPECT_GT(on, 0) << sw.name << " on, yet no case has the shape";
  }
  // The numeric child naming and the output count are read too.
  int numeric = 0, many_outputs = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    Rng src(seed);
    SwarmConfig config = draw_swarm(src, GenOptions{});
    config.child_naming = ChildNaming::kNumeric;
    config.max_outputs = 1;
    config.dead_code = true;  // off, values nothing reads become outputs too
    ReachBits bits = case_reach(build_case(src, config, GenOptions{}));
    numeric += (bits & reach_bit(Reach::kNumericNames)) != 0;
    many_outputs += (bits & reach_bit(Reach::kManyOutputs)) != 0;
  }
  EXPECT_GT(numeric, 0);
  EXPECT_EQ(many_outputs, 0);
}

// The name switches (issue: names and paths) are read: a wide root has more than ten children
// named 0 ... 12, prefixed child naming gives siblings whose names share a prefix, and reserved
// names put a builtin's suffixed forms beside a renamed builtin. Each on vs off, same seeds.
TEST(GenerateTest, NameSwitchesAreRead) {
  struct Row {
    const char* name;
    std::function<void(SwarmConfig&, bool)> set;
    Reach shape;
    bool only_source;
  };
  const Row kRows[] = {
      {"wide", [](SwarmConfig& s, bool v) { s.wide = v; }, Reach::kManyChildren, true},
      {"child_naming=prefixed",
       [](SwarmConfig& s, bool v) {
         s.child_naming = v ? ChildNaming::kPrefixed : ChildNaming::kNumeric;
         s.wide = false;
       },
       Reach::kPrefixSiblings, false},
      {"reserved_names", [](SwarmConfig& s, bool v) { s.reserved_names = v; },
       Reach::kBuiltinMeetsSuffixed, false},
  };
  for (const Row& row : kRows) {
    int on = 0, off = 0, eleven = 0;
    for (uint64_t seed = 0; seed < 300; ++seed)
      for (bool value : {false, true}) {
        Rng src(seed);
        SwarmConfig config = draw_swarm(src, GenOptions{});
        config.depth = std::max(config.depth, 1);
        row.set(config, value);
        Case c = build_case(src, config, GenOptions{});
        (value ? on : off) += (case_reach(c) & reach_bit(row.shape)) != 0;
        if (row.shape == Reach::kManyChildren && value && c.module->children.size() > 10)
          eleven += c.module->children.count("10") && c.module->children.count("1");
      }
    if (row.only_source)
      EXPECT_EQ(off, 0) << row.name << " off, yet " << off << " cases have the shape";
    else
      EXPECT_GT(on, 2 * off) << row.name << ": " << on << " cases on, " << off << " off";
    EXPECT_GT(on, 30) << row.name;
    if (row.shape == Reach::kManyChildren) EXPECT_GT(eleven, 30) << "children named 1 and 10";
  }
}

// The generator types its cases with its own derivation (generators/types.h): a core type
// inference made wrong on purpose (the fault infer-transpose-keeps-shape) changes no generated
// case, and the derivation agrees with the core's inference on generated cases.
TEST(GenerateTest, AWrongCoreTypeInferenceStillGeneratesTheSameCases) {
  int transposes = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    std::string want = save_case(generate_case_for_seed(seed));
    Case c;
    {
      ScopedFault f(Fault::kInferTransposeKeepsShape);
      ASSERT_NO_THROW(c = generate_case_for_seed(seed)) << "seed " << seed;
    }
    EXPECT_EQ(save_case(c), want) << "seed " << seed;
    for_each_module(*c.module, [&](const std::string&, Module& m) {
      for (Node* n = m.graph.first(); n; n = n->next)
        transposes += n->op == NodeOp::kCallFunction && n->fn == OpCode::kTranspose &&
                      n->meta.val && n->meta.val->shape != n->input_nodes()[0]->meta.val->shape;
    });
  }
  EXPECT_GT(transposes, 20) << "cases whose transposes change the shape";
}

TEST(GenerateTest, TheGeneratorsBroadcastingIsTorchs) {
  EXPECT_EQ(gen_broadcast({2, 3}, {3}), (Shape{2, 3}));
  EXPECT_EQ(gen_broadcast({2, 1}, {1, 4}), (Shape{2, 4}));
  EXPECT_EQ(gen_broadcast({4}, {3, 1}), (Shape{3, 4}));
  EXPECT_EQ(gen_broadcast({}, {2}), (Shape{2}));
  EXPECT_EQ(gen_broadcast({0, 1}, {1, 5}), (Shape{0, 5}));
  EXPECT_EQ(gen_broadcast({2, 3}, {3, 2}), std::nullopt);
  EXPECT_EQ(gen_broadcast({0}, {2}), std::nullopt);
}

// The nested_variants switch is read, and makes what it is for: variants that differ only in
// which child variant they call, counted on the unflattened program (as unflatten's dedup sees
// them), far more often with it on than off, and a module tree four levels deep.
TEST(GenerateTest, NestedVariantsSwitchMakesTheShapeAfterUnflatten) {
  int on = 0, off = 0, deepest = 0;
  for (uint64_t seed = 0; seed < 200; ++seed)
    for (bool value : {false, true}) {
      Rng src(seed);
      SwarmConfig config = draw_swarm(src, GenOptions{});
      config.depth = std::max(config.depth, 2);
      config.nested_variants = value;
      Case c = build_case(src, config, GenOptions{});
      Pipeline pipeline(c.module, c.config);
      bool has = unflatten_reach(*pipeline.build(Stage::kUnflattened).module) != 0;
      (value ? on : off) += has;
      for_each_module(*c.module, [&](const std::string& path, Module&) {
        deepest =
            std::max<int>(deepest, 1 + static_cast<int>(std::count(path.begin(), path.end(), '.')));
      });
    }
  EXPECT_GT(on, 3 * off) << on << " cases on, " << off << " off";
  EXPECT_GE(on, 40) << "of 200";
  EXPECT_EQ(deepest, 4) << "GenOptions{}.max_depth is 4";
}

// The dead_code switch is read: off, values nothing reads become outputs (a bounded number),
// so far fewer ops are left without a user than with it on.
TEST(GenerateTest, DeadCodeSwitchIsRead) {
  int dead[2] = {0, 0};
  for (uint64_t seed = 0; seed < 200; ++seed)
    for (bool value : {false, true}) {
      Rng src(seed);
      SwarmConfig config = draw_swarm(src, GenOptions{});
      config.dead_code = value;
      Case c = build_case(src, config, GenOptions{});
      for_each_module(*c.module, [&](const std::string&, Module& m) {
        for (Node* n = m.graph.first(); n; n = n->next)
          dead[value] +=
              n->op == NodeOp::kCallFunction && op_info(n->fn).pure && m.graph.users(n).empty();
      });
    }
  EXPECT_GT(dead[1], 3 * dead[0]) << "ops without a user: " << dead[0] << " with dead_code off, "
                                  << dead[1] << " on";
}

// A zero scalar constant gets its twin of the other sign on the same operand, right after it
// (x * 0.0 beside x * -0.0: equal as Python floats, different results), half of them divides;
// a common-subexpression pass that keys constants by value merges the two (docs/found-bugs.md
// 77). Checked on the trees of generated cases with special values on.
TEST(GenerateTest, AZeroConstantHasItsTwinOfTheOtherSign) {
  int pairs = 0, divides = 0, zeros = 0;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    Rng src(seed);
    SwarmConfig config = draw_swarm(src, GenOptions{});
    config.special_values = true;
    Case c = build_case(src, config, GenOptions{});
    for_each_module(*c.module, [&](const std::string&, Module& m) {
      for (Node* n = m.graph.first(); n; n = n->next) {
        const float* k = n->op == NodeOp::kCallFunction && n->args.size() == 2
                             ? std::get_if<float>(&n->args[1])
                             : nullptr;
        if (!k || *k != 0.0f || !std::signbit(*k)) continue;
        ++zeros;
        for (Node* t : {n->prev, n->next}) {
          const float* tk = t && t->op == NodeOp::kCallFunction && t->fn == n->fn &&
                                    t->args.size() == 2 && t->args[0] == n->args[0]
                                ? std::get_if<float>(&t->args[1])
                                : nullptr;
          if (tk && *tk == 0.0f && !std::signbit(*tk)) {
            ++pairs;
            divides += n->fn == OpCode::kDivScalar;
          }
        }
      }
    });
  }
  // Other steps draw -0.0 too (a graph break's scale), without a twin.
  EXPECT_GT(pairs, 10) << pairs << " twins of " << zeros << " -0.0 constants";
  EXPECT_GT(divides, pairs / 4) << divides << " of " << pairs << " twins divide";
  EXPECT_LT(divides, pairs) << "every twin divides";
}

// The nodes a module stands for with every call expanded, counted on the tree (not by export).
int64_t inlined_size(const Module& m) {
  int64_t n = 0;
  for (Node* node = m.graph.first(); node; node = node->next)
    n += node->op == NodeOp::kCallModule ? inlined_size(*m.submodule(node->target)) : 1;
  return n;
}

// The max_inlined bound is read: calls stop where the inlined tree would pass it, so at
// --max-nodes 128 no case is far over it, and without it (a huge bound) some are.
TEST(GenerateTest, InlinedSizeBoundIsRead) {
  GenOptions opts;
  opts.max_nodes = 128;
  int64_t largest[2] = {0, 0};
  int64_t bound = 0;
  for (uint64_t seed = 0; seed < 60; ++seed)
    for (bool unbounded : {false, true}) {
      Rng src(seed);
      SwarmConfig config = draw_swarm(src, opts);
      bound = config.max_inlined;
      if (unbounded) config.max_inlined = int64_t{1} << 40;
      Case c = build_case(src, config, opts);
      largest[unbounded] = std::max(largest[unbounded], inlined_size(*c.module));
    }
  EXPECT_EQ(bound, kInlinedPerNode * 128);
  // Nodes after a module's last call (ops, getitems, outputs) are not bounded: 2x allows them.
  EXPECT_LE(largest[0], 2 * bound);
  EXPECT_GT(largest[1], 2 * bound) << "the unbounded generator never passed the bound";
}

// The swarm reaches every feature: over fixed seeds, each outcome occurs.
TEST(GenerateTest, SwarmReachesEveryFeature) {
  std::set<std::string> ops;
  int renamed = 0, specialized = 0, mutations = 0, acc = 0, fallback = 0, calls = 0, nested = 0;
  int getitem_names = 0, naming[3] = {0, 0, 0};
  for (uint64_t seed = 0; seed < 400; ++seed) {
    Rng src(seed);
    SwarmConfig sw = draw_swarm(src, GenOptions{});
    ++naming[static_cast<int>(sw.naming)];
    Case c = build_case(src, sw, GenOptions{});
    auto r = check_case(c);
    ASSERT_FALSE(r.failure.has_value()) << "seed " << seed << ": " << r.failure->message;
    for (const auto& [op, n] : r.coverage.ops) ops.insert(op);
    renamed += r.coverage.renamed_nodes;
    specialized += r.coverage.specialized_fqns;
    mutations += r.coverage.buffer_mutations;
    acc += r.coverage.acc_partitions;
    fallback += r.coverage.fallback_partitions;
    calls += r.coverage.calls;
    for (const auto& [name, child] : c.module->children) nested += !child->children.empty();
    for (Node* n = c.module->graph.first(); n; n = n->next)
      getitem_names += n->name.rfind("getitem", 0) == 0 && n->target != "getitem";
  }
  for (int i = 0; i < kNumOps; ++i)
    if (op_info(static_cast<OpCode>(i)).gen_weight > 0)
      EXPECT_TRUE(ops.count(std::string(op_info(static_cast<OpCode>(i)).name)))
          << op_info(static_cast<OpCode>(i)).name;
  for (const char* structural : {"getitem", "branch", "copy_"})
    EXPECT_TRUE(ops.count(structural)) << structural;
  EXPECT_GT(renamed, 0);
  EXPECT_GT(specialized, 0);
  EXPECT_GT(mutations, 0);
  EXPECT_GT(acc, 0);
  EXPECT_GT(fallback, 0);
  EXPECT_GT(calls, 0);
  EXPECT_GT(nested, 0);
  EXPECT_GT(getitem_names, 0) << "no node that is not a getitem was named like one";
  for (int n : naming) EXPECT_GT(n, 0);
}

RC_GTEST_PROP(GenerateProperty, EveryRecipeBuildsAValidCase, (const Recipe& r)) {
  Case c = build_recipe(r);
  lint(*c.module);
  RC_ASSERT(c.inputs.size() == c.module->graph.placeholders().size());
  run_module(*clone_module(*c.module, false), c.inputs);
}

}  // namespace
}  // namespace flatcheck
