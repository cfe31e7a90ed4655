// The case generator: a swarm configuration drawn per case, then a builder that turns it into
// an eager module tree with inputs (DESIGN §4). One body; randomness from any Source.
#pragma once

#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "generators/case.h"
#include "generators/source.h"

namespace flatcheck {

// How node names are chosen. Every policy but kNatural collides on purpose.
enum class NamingPolicy : uint8_t {
  kNatural,    // from the target, as FX does
  kGetitem,    // many nodes named getitem / getitem_<k>
  kConfusing,  // relu, x, getitem_1, op names of other ops, names from sibling graphs
};

// How child modules are named.
enum class ChildNaming : uint8_t {
  kLayers,    // layer0, layer1, sometimes n
  kNumeric,   // 0, 1, 2 (nn.Sequential)
  kMangled,   // a, a_b, b_c, b, ...: dotted paths that mangle to one identifier (a.b_c, a_b.c)
  kPrefixed,  // layer1, layer10, layer1_0, a, a_b, ab: siblings whose names share a prefix
  kCased,     // Layer, layer, convBlock, conv_block: names alike once lower- or snake-cased
};

// The bound on a case's inlined size (SwarmConfig::max_inlined): kInlinedPerNode per
// --max-nodes step, at least kMinInlined.
inline constexpr int64_t kInlinedPerNode = 16;
inline constexpr int64_t kMinInlined = 1024;

// Bounds the generator works within (the knobs a user or a test turns).
struct GenOptions {
  int max_nodes = 20;  // per graph, before calls
  int max_depth = 4;   // module nesting below the root
  int max_dim = 4;     // tensor dims are drawn in [1, max_dim]
};

// The per-case swarm: which features are on. Drawn from the Source first.
struct SwarmConfig {
  std::vector<OpCode> ops;        // enabled ops
  int nodes = 8;                  // steps per graph
  Shape base_shape;               // shape of the root inputs
  int depth = 1;                  // module nesting
  int fanout = 2;                 // children per module
  bool repeated_calls = true;     // call a child more than once
  bool specialize = true;         // static flags and scales on calls
  bool nested_specialize = true;  // pass a caller's static flag on to a grandchild
  bool buffers = true;            // in-place buffer updates
  bool shared_params = false;     // one parameter tensor under two FQNs
  bool special_values = true;     // NaN payloads, -0.0, infinities, subnormals (scalars too)
  bool zero_dims = false;         // a dimension of size 0 in the root inputs
  bool forward_flags = false;     // a module's flag only passed on to its children
  bool child_choice = false;      // a static flag choosing between two children's results
  bool alias_modules = false;     // one child module object under a second name
  bool shared_buffers = false;    // one buffer tensor under two FQNs
  bool skip_levels = false;       // a grandchild called through a dotted target ("a.b")
  bool repeated_blocks = false;   // a child's body cloned under a new name, fresh weights
  bool read_after_write = false;  // buffer values read before an update, used after it
  bool graph_breaks = false;      // a one-tensor fallback op right on a split's half
  bool int_args = false;          // an int static argument used as a dim (calls differ by it)
  bool dead_code = false;         // values nothing reads stay (off: they become outputs)
  bool nested_variants = false;   // a wrapper called with two flags it only forwards to a
                                  // specialized child: variants that differ only in which child
                                  // variant they call, after export (unflatten's dedup shape)
  bool wide = false;              // the root has 11 to 13 children, named 0 ... 12
  bool reserved_names = false;    // node and child names that are Python builtins (sum, input,
                                  // max) or their suffixed forms (sum_1), which torch.fx renames
  int max_outputs = 2;            // root outputs
  int64_t max_inlined = 320;      // nodes of the whole tree inlined (a call counts its callee's)
  NamingPolicy naming = NamingPolicy::kNatural;
  ChildNaming child_naming = ChildNaming::kLayers;
  PipelineConfig pipeline;
};

std::ostream& operator<<(std::ostream& os, const SwarmConfig& s);

SwarmConfig draw_swarm(Source& src, const GenOptions& opts);
// Builds a case from a swarm, drawing the rest from `src`.
Case build_case(Source& src, const SwarmConfig& swarm, const GenOptions& opts);
// draw_swarm + build_case.
Case generate_case(Source& src, const GenOptions& opts = {});
// The case for `seed` (what `flatcheck fuzz --seed S` runs as case i: seed mix_seed(S, i)).
Case generate_case_for_seed(uint64_t seed, const GenOptions& opts = {});

}  // namespace flatcheck
