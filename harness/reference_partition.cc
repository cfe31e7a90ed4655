// The reference partitioner (harness/reference_partition.h). Written from DESIGN §3's rule:
// walk the flat graph in order; each call_function node is supported (acc) unless its op is a
// fallback op, and grows the current run while its support matches, else starts a new one; a
// getitem reads one element of a tuple and joins the run of the node that made the tuple; acc
// runs of fewer than min_block_size nodes (getitems counted) become fallbacks; neighbouring runs
// of one kind are merged; the runs are then named in order from one counter.
#include "harness/reference_partition.h"

#include <algorithm>

#include "core/ir/engine.h"

namespace flatcheck {
namespace {

struct Grown {
  bool acc = false;
  std::vector<const Node*> nodes;  // getitems included
};

std::string op_at(const std::string& op, const std::string& origin) {
  return op + "@" + origin;
}

// What one child of the partitioned program holds, in the form of ReferenceRun::ops.
std::vector<std::string> child_ops(const Module& child, bool acc) {
  std::vector<std::string> ops;
  if (acc) {
    if (auto e = child.engine("engine"))
      for (const EngineOp& op : e->ops)
        ops.push_back(op_at(std::string(op_info(op.op).name), op.origin));
    return ops;
  }
  for (const Node* n = child.graph.first(); n; n = n->next)
    if (n->op == NodeOp::kCallFunction && n->fn != OpCode::kGetitem)
      ops.push_back(op_at(n->target, n->meta.origin));
  return ops;
}

std::string list(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
  return s + "]";
}

std::string op_of(const std::string& op_at_origin) {
  return op_at_origin.substr(0, op_at_origin.find('@'));
}

}  // namespace

std::vector<ReferenceRun> reference_partition(const Program& exported,
                                              const std::set<std::string>& fallback_ops,
                                              int min_block_size) {
  std::vector<Grown> grown;
  for (const Node* n = exported.root->graph.first(); n; n = n->next) {
    if (n->op != NodeOp::kCallFunction) continue;
    if (n->fn == OpCode::kGetitem) {  // to the run that holds the tuple, looked for by hand
      const Node* tuple = std::get<Node*>(n->args.at(0));
      for (Grown& g : grown)
        if (std::find(g.nodes.begin(), g.nodes.end(), tuple) != g.nodes.end()) g.nodes.push_back(n);
      continue;
    }
    bool acc = fallback_ops.count(n->target) == 0;
    if (grown.empty() || grown.back().acc != acc) grown.push_back(Grown{acc, {}});
    grown.back().nodes.push_back(n);
  }
  std::vector<Grown> merged;
  for (Grown g : grown) {
    if (g.acc && static_cast<int>(g.nodes.size()) < min_block_size) g.acc = false;
    if (!merged.empty() && merged.back().acc == g.acc)
      merged.back().nodes.insert(merged.back().nodes.end(), g.nodes.begin(), g.nodes.end());
    else
      merged.push_back(g);
  }
  std::vector<ReferenceRun> runs;
  for (size_t k = 0; k < merged.size(); ++k) {
    ReferenceRun r;
    r.acc = merged[k].acc;
    r.name = (r.acc ? "_run_on_acc_" : "_run_on_gpu_") + std::to_string(k);
    for (const Node* n : merged[k].nodes)
      if (n->fn != OpCode::kGetitem) r.ops.push_back(op_at(n->target, n->meta.origin));
    runs.push_back(r);
  }
  return runs;
}

std::optional<RuleBreach> partition_spec_breach(const Program& exported, const Program& partitioned,
                                                const std::set<std::string>& fallback_ops,
                                                int min_block_size) {
  std::vector<ReferenceRun> want = reference_partition(exported, fallback_ops, min_block_size);
  std::vector<std::string> want_names, got_names;
  for (const auto& r : want) want_names.push_back(r.name);
  for (const Node* n = partitioned.root->graph.first(); n; n = n->next)
    if (n->op == NodeOp::kCallModule) got_names.push_back(n->target);
  if (got_names != want_names)
    return RuleBreach{"the parent calls the runs " + list(got_names) +
                      "; the partitioner rules give " + list(want_names)};
  if (partitioned.root->children.size() != want.size())
    return RuleBreach{"the partitioned program has " +
                      std::to_string(partitioned.root->children.size()) + " children for " +
                      std::to_string(want.size()) + " runs"};
  for (const ReferenceRun& r : want) {
    auto it = partitioned.root->children.find(r.name);
    if (it == partitioned.root->children.end())
      return RuleBreach{"run '" + r.name + "' is called but is no child"};
    const Module& child = *it->second;
    bool has_engine = child.engine("engine") != nullptr;
    if (has_engine != r.acc)
      return RuleBreach{"run '" + r.name + "' should " + (r.acc ? "" : "not ") +
                        "be compiled to an engine"};
    std::vector<std::string> got = child_ops(child, r.acc);
    if (got != r.ops) {
      size_t i = 0;
      while (i < got.size() && i < r.ops.size() && got[i] == r.ops[i]) ++i;
      std::string op = i < r.ops.size() ? op_of(r.ops[i]) : i < got.size() ? op_of(got[i]) : "-";
      return RuleBreach{
          "run '" + r.name + "' holds " + list(got) + "; the partitioner rules give " + list(r.ops),
          op};
    }
  }
  return std::nullopt;
}

}  // namespace flatcheck
