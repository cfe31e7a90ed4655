// The per-case swarm (generators/generate.h): which features a case turns on, drawn first.
#include <algorithm>
#include <array>

#include "generators/generate.h"

namespace flatcheck {

std::ostream& operator<<(std::ostream& os, const SwarmConfig& s) {
  os << "swarm{ops=[";
  for (size_t i = 0; i < s.ops.size(); ++i) os << (i ? "," : "") << op_info(s.ops[i]).name;
  os << "] nodes=" << s.nodes << " shape=" << shape_str(s.base_shape) << " depth=" << s.depth
     << " fanout=" << s.fanout << " naming=" << static_cast<int>(s.naming)
     << " child_naming=" << static_cast<int>(s.child_naming) << " wide=" << s.wide
     << " reserved_names=" << s.reserved_names << " calls=" << s.pipeline.calls << " fallback=[";
  bool first = true;
  for (const auto& f : s.pipeline.fallback_ops) os << (first ? "" : ",") << f, first = false;
  return os << "] min_block=" << s.pipeline.min_block_size << "}";
}

SwarmConfig draw_swarm(Source& src, const GenOptions& opts) {
  SwarmConfig s;
  std::vector<OpCode> candidates;
  for (int i = 0; i < kNumOps; ++i)
    if (op_info(static_cast<OpCode>(i)).gen_weight > 0)
      candidates.push_back(static_cast<OpCode>(i));
  // Swarm testing: each op is on with probability 3/4; relu and add always, so every case
  // can partition and every graph can grow.
  for (OpCode op : candidates)
    if (op == OpCode::kRelu || op == OpCode::kAdd || src.chance(3, 4)) s.ops.push_back(op);
  s.nodes = static_cast<int>(src.range(2, std::max(2, opts.max_nodes)));
  // Calls multiply: without a bound, repeated calls two levels deep inline to thousands of
  // nodes at --max-nodes 128. A call that would pass the bound is not made (no draw is spent
  // on the check, so a case within it is the same as before the bound existed).
  s.max_inlined = std::max<int64_t>(kMinInlined, kInlinedPerNode * std::max(2, opts.max_nodes));
  int rank = static_cast<int>(src.range(1, src.chance(1, 6) ? 3 : 2));
  for (int i = 0; i < rank; ++i) s.base_shape.push_back(src.range(1, std::max(1, opts.max_dim)));
  if (src.chance(1, 2)) s.base_shape.back() = 2 * src.range(1, std::max(1, opts.max_dim / 2));
  // Most shapes need children: a flat case one time in eight.
  // Depths 1 and 2 most often; 3 and 4 (a grandchild specialized inside a specialized child)
  // one case in four of those with children.
  int max_depth = std::max(0, opts.max_depth);
  std::vector<int> depth_weights = {0, 3, 3, 1, 1};
  depth_weights.resize(static_cast<size_t>(max_depth) + 1, 1);
  s.depth = src.chance(1, 8) || max_depth == 0 ? 0 : static_cast<int>(src.weighted(depth_weights));
  s.fanout = static_cast<int>(src.range(1, 3));
  s.repeated_calls = src.chance(3, 4);
  s.specialize = src.chance(7, 8);
  s.nested_specialize = src.chance(1, 2);
  s.buffers = src.chance(3, 4);
  s.shared_params = src.chance(3, 4);
  s.special_values = src.chance(1, 2);
  s.naming = static_cast<NamingPolicy>(src.weighted({2, 3, 2}));
  // The shapes of DESIGN §4's reach table, each a switch of its own.
  s.zero_dims = src.chance(1, 12);
  if (s.zero_dims) s.base_shape[src.below(s.base_shape.size())] = 0;
  s.forward_flags = src.chance(1, 2);
  s.child_choice = src.chance(1, 2);
  s.alias_modules = src.chance(1, 4);
  s.shared_buffers = src.chance(1, 2);
  s.skip_levels = src.chance(1, 3);
  s.repeated_blocks = src.chance(2, 3);
  s.read_after_write = src.chance(1, 2);
  s.graph_breaks = src.chance(2, 3);
  s.int_args = src.chance(2, 3);
  // Dead code hides the calls and ops behind it from every pass (export removes it): most cases
  // make every value a graph computes an output of it.
  s.dead_code = src.chance(1, 4);
  s.max_outputs = static_cast<int>(src.range(1, 4));
  s.child_naming = static_cast<ChildNaming>(src.weighted({3, 1, 3, 2, 2}));
  static const std::array<int, 7> kCalls = {2, 2, 2, 1, 3, 3, 4};
  s.pipeline.calls = kCalls[src.below(kCalls.size())];
  // Fallback ops: relu most of the time (the seed bug's setting), else one or two others.
  s.pipeline.fallback_ops.clear();
  if (src.chance(3, 5)) {
    s.pipeline.fallback_ops.insert("relu");
  } else {
    int k = static_cast<int>(src.range(1, 2));
    for (int i = 0; i < k; ++i)
      s.pipeline.fallback_ops.insert(std::string(op_info(s.ops[src.below(s.ops.size())]).name));
  }
  // A graph break needs an elementwise fallback op to break on.
  if (s.graph_breaks && !s.pipeline.fallback_ops.count("relu") && src.chance(2, 3))
    s.pipeline.fallback_ops.insert("relu");
  // A multi-output op as a fallback: its getitems cross partitions.
  if (src.chance(1, 5)) s.pipeline.fallback_ops.insert("split");
  static const std::array<int, 7> kBlocks = {1, 2, 2, 3, 3, 5, 8};
  s.pipeline.min_block_size = kBlocks[src.below(kBlocks.size())];
  s.nested_variants = s.depth >= 2 && src.chance(2, 3);
  // Names (drawn last, after every earlier switch).
  s.wide = s.depth >= 1 && src.chance(1, 8);
  s.reserved_names = src.chance(1, 4);
  return s;
}

}  // namespace flatcheck
