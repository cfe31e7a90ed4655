// The passes' rules and the eager-derived call structure (harness/pass_rules.h). Written from
// DESIGN §3's description of each pass, not from the passes' code.
#include "harness/pass_rules.h"

#include <unordered_map>

#include "core/base/names.h"
#include "core/ir/engine.h"

namespace flatcheck {
namespace {

bool starts_with(const std::string& s, std::string_view p) {
  return s.rfind(p, 0) == 0;
}

bool is_fn(const Node* n, OpCode op) {
  return n->op == NodeOp::kCallFunction && n->fn == op;
}

using OpCounts = std::map<std::string, int>;

// call_function ops of a graph, getitems and engine calls aside.
void count_ops(const Graph& g, OpCounts& out) {
  for (Node* n = g.first(); n; n = n->next)
    if (n->op == NodeOp::kCallFunction && n->fn != OpCode::kGetitem &&
        n->fn != OpCode::kExecuteEngine)
      ++out[n->target];
}

void count_engine_ops(const Engine& e, OpCounts& out) {
  for (const auto& op : e.ops) ++out[std::string(op_info(op.op).name)];
}

std::optional<RuleBreach> compare_counts(const OpCounts& want, const OpCounts& got,
                                         const std::string& what) {
  for (const auto& [op, n] : want) {
    auto it = got.find(op);
    int g = it == got.end() ? 0 : it->second;
    if (g != n)
      return RuleBreach{
          what + " has " + std::to_string(g) + " '" + op + "' ops, expected " + std::to_string(n),
          op};
  }
  for (const auto& [op, n] : got)
    if (!want.count(op))
      return RuleBreach{what + " has " + std::to_string(n) + " '" + op + "' ops, expected 0", op};
  return std::nullopt;
}

std::optional<RuleBreach> acc_child_breach(const std::string& name, const Module& child,
                                           const std::set<std::string>& fallback_ops,
                                           int min_block_size, OpCounts& ops) {
  auto engine = child.engine("engine");
  if (!engine) return RuleBreach{"acc child '" + name + "' has no engine"};
  // Its graph runs the engine and computes nothing itself: one execute_engine of the engine
  // attribute, getitems of its result, nothing else (else the engine is built and never run).
  int runs = 0;
  for (Node* n = child.graph.first(); n; n = n->next) {
    if (n->op == NodeOp::kGetAttr && n->target != "engine")
      return RuleBreach{"acc child '" + name + "' reads '" + n->target + "' beside its engine"};
    if (n->op != NodeOp::kCallFunction) continue;
    std::vector<Node*> in = n->input_nodes();
    if (is_fn(n, OpCode::kExecuteEngine) && !in.empty() && in.back()->op == NodeOp::kGetAttr &&
        in.back()->target == "engine" && ++runs == 1)
      continue;
    if (is_fn(n, OpCode::kGetitem) && !in.empty() && is_fn(in[0], OpCode::kExecuteEngine)) continue;
    return RuleBreach{"acc child '" + name + "' computes %" + n->name + " (" + n->target +
                          ") itself instead of running its engine once",
                      n->target};
  }
  if (runs == 0) return RuleBreach{"acc child '" + name + "' never runs its engine"};
  // A run counts its getitems: at most one per output of a multi-output op.
  size_t most_nodes = 0;
  for (const auto& op : engine->ops) {
    most_nodes += 1 + (op.out.size() > 1 ? op.out.size() : 0);
    std::string opname(op_info(op.op).name);
    if (fallback_ops.count(opname))
      return RuleBreach{"engine '" + name + "' runs the fallback op '" + opname + "'", opname};
  }
  if (static_cast<int>(most_nodes) < min_block_size)
    return RuleBreach{"engine '" + name + "' holds at most " + std::to_string(most_nodes) +
                      " nodes; min_block_size is " + std::to_string(min_block_size)};
  count_engine_ops(*engine, ops);
  return std::nullopt;
}

std::optional<RuleBreach> gpu_child_breach(const std::string& name, const Module& child,
                                           const std::set<std::string>& fallback_ops,
                                           int min_block_size, OpCounts& ops) {
  int nodes = 0;
  bool has_fallback = false;
  for (Node* n = child.graph.first(); n; n = n->next) {
    if (n->op != NodeOp::kCallFunction) continue;
    ++nodes;
    has_fallback |= fallback_ops.count(n->target) > 0;
  }
  if (!has_fallback && nodes >= min_block_size)
    return RuleBreach{"fallback '" + name + "' holds no fallback op and " + std::to_string(nodes) +
                      " nodes (min_block_size " + std::to_string(min_block_size) +
                      "): it should be an engine"};
  count_ops(child.graph, ops);
  return std::nullopt;
}

}  // namespace

std::optional<RuleBreach> partition_breach(const Program& exported, const Program& partitioned,
                                           const std::set<std::string>& fallback_ops,
                                           int min_block_size) {
  const Module& root = *partitioned.root;
  for (Node* n = root.graph.first(); n; n = n->next) {
    if (n->op == NodeOp::kCallFunction) {
      bool reads_child = is_fn(n, OpCode::kGetitem) && !n->input_nodes().empty() &&
                         n->input_nodes()[0]->op == NodeOp::kCallModule;
      if (!reads_child)
        return RuleBreach{"the parent graph still computes %" + n->name + " (" + n->target + ")",
                          n->target};
    }
    if (n->op == NodeOp::kCallModule && !root.children.count(n->target))
      return RuleBreach{"%" + n->name + " calls a missing child '" + n->target + "'"};
  }
  OpCounts got;
  for (const auto& [name, child] : root.children) {
    std::optional<RuleBreach> b;
    if (starts_with(name, "_run_on_acc_"))
      b = acc_child_breach(name, *child, fallback_ops, min_block_size, got);
    else if (starts_with(name, "_run_on_gpu_"))
      b = gpu_child_breach(name, *child, fallback_ops, min_block_size, got);
    else
      b = RuleBreach{"child '" + name + "' is neither _run_on_acc_<k> nor _run_on_gpu_<k>"};
    if (b) return b;
  }
  OpCounts want;
  count_ops(exported.root->graph, want);
  return compare_counts(want, got, "the partitioned program");
}

std::optional<RuleBreach> flatten_breach(const Program& partitioned, const Program& flattened) {
  const Module& root = *flattened.root;
  if (!root.children.empty())
    return RuleBreach{"child '" + root.children.begin()->first + "' is left after flatten"};
  int engine_calls = 0, want_engine_calls = 0;
  for (Node* n = root.graph.first(); n; n = n->next) {
    if (n->op == NodeOp::kCallModule)
      return RuleBreach{"%" + n->name + " still calls '" + n->target + "'"};
    engine_calls += is_fn(n, OpCode::kExecuteEngine);
  }
  OpCounts want;
  for (Node* n = partitioned.root->graph.first(); n; n = n->next)
    if (n->op == NodeOp::kCallModule) {
      if (starts_with(n->target, "_run_on_acc_"))
        ++want_engine_calls;
      else if (auto child = partitioned.root->children.find(n->target);
               child != partitioned.root->children.end())
        count_ops(child->second->graph, want);
    }
  if (engine_calls != want_engine_calls)
    return RuleBreach{std::to_string(engine_calls) + " execute_engine calls for " +
                          std::to_string(want_engine_calls) + " engine calls",
                      "execute_engine"};
  // Dead code removed: every value but a placeholder has a user, or is an in-place update.
  std::set<const Node*> used;
  for (Node* n = root.graph.first(); n; n = n->next)
    for (Node* in : n->node_args()) used.insert(in);
  for (Node* n = root.graph.first(); n; n = n->next) {
    bool value =
        n->op == NodeOp::kGetAttr || (n->op == NodeOp::kCallFunction && op_info(n->fn).pure);
    if (value && !used.count(n))
      return RuleBreach{"dead code left after flatten: %" + n->name + " has no user",
                        n->op == NodeOp::kCallFunction ? n->target : "-"};
  }
  OpCounts got;
  count_ops(root.graph, got);
  return compare_counts(want, got, "the flattened graph");
}

namespace {

// The independent walk behind expected_live_calls.
class LiveCalls {
 public:
  std::map<std::string, int> run(const Module& root) {
    std::vector<Val> ins(root.graph.placeholders().size());
    std::vector<int> roots;
    for (const Val& v : walk(root, "", -1, ins)) flatten_recs(v, roots);
    for (const auto& [_, rec] : current_) roots.push_back(rec);
    std::vector<bool> live(recs_.size());
    while (!roots.empty()) {
      int r = roots.back();
      roots.pop_back();
      if (r < 0 || live[static_cast<size_t>(r)]) continue;
      live[static_cast<size_t>(r)] = true;
      for (int d : recs_[static_cast<size_t>(r)].deps) roots.push_back(d);
    }
    std::vector<bool> present(calls_.size());
    for (size_t r = 0; r < recs_.size(); ++r)
      for (int c = live[r] ? recs_[r].call : -1; c >= 0 && !present[static_cast<size_t>(c)];
           c = calls_[static_cast<size_t>(c)].parent)
        present[static_cast<size_t>(c)] = true;
    std::map<std::string, int> out;
    for (size_t c = 0; c < calls_.size(); ++c)
      if (present[c]) ++out[calls_[c].fqn];
    return out;
  }

 private:
  // A value: a record (rec >= 0), state or an input (rec -1), a constant, or a call's outputs.
  struct Val {
    int rec = -1;
    std::optional<Arg> constant;
    std::vector<Val> tuple;
    bool is_tuple = false;
  };
  struct Rec {
    std::vector<int> deps;
    int call;
  };
  struct Call {
    std::string fqn;
    int parent;
  };

  static void flatten_recs(const Val& v, std::vector<int>& out) {
    if (v.is_tuple)
      for (const Val& e : v.tuple) flatten_recs(e, out);
    else
      out.push_back(v.rec);
  }

  static Val arg_value(const Arg& a, const std::unordered_map<const Node*, Val>& env) {
    if (auto p = std::get_if<Node*>(&a)) {
      auto it = env.find(*p);
      return it == env.end() ? Val{} : it->second;
    }
    return Val{-1, a, {}, false};
  }

  Val record(const Node& n, int call, const std::unordered_map<const Node*, Val>& env) {
    Rec r{{}, call};
    for (const auto& a : n.args) flatten_recs(arg_value(a, env), r.deps);
    recs_.push_back(std::move(r));
    return Val{static_cast<int>(recs_.size()) - 1, std::nullopt, {}, false};
  }

  Val call_function(const Module& m, const Node& n, int call,
                    const std::unordered_map<const Node*, Val>& env) {
    if (n.fn == OpCode::kBranch) {
      Val flag = arg_value(n.args.at(0), env);
      if (flag.constant && std::holds_alternative<bool>(*flag.constant))
        return arg_value(n.args.at(std::get<bool>(*flag.constant) ? 1 : 2), env);
      return record(n, call, env);
    }
    if (n.fn == OpCode::kGetitem) {
      Val src = arg_value(n.args.at(0), env);
      auto idx = static_cast<size_t>(std::get<int64_t>(n.args.at(1)));
      if (src.is_tuple) return idx < src.tuple.size() ? src.tuple[idx] : Val{};
      return record(n, call, env);
    }
    if (n.fn == OpCode::kCopy) {
      Node* dst = std::get<Node*>(n.args.at(0));
      Val v = arg_value(n.args.at(1), env);
      if (TensorPtr t = m.attribute(dst->target)) current_[t.get()] = v.rec;
      return v;
    }
    return record(n, call, env);
  }

  std::vector<Val> walk(const Module& m, const std::string& fqn, int call,
                        const std::vector<Val>& args) {
    std::unordered_map<const Node*, Val> env;
    size_t next_arg = 0;
    for (Node* n = m.graph.first(); n; n = n->next) {
      switch (n->op) {
        case NodeOp::kPlaceholder:
          env[n] = next_arg < args.size() ? args[next_arg++] : Val{};
          break;
        case NodeOp::kGetAttr: {
          bool is_buffer = false;
          TensorPtr t = m.attribute(n->target, &is_buffer);
          auto it = t && is_buffer ? current_.find(t.get()) : current_.end();
          env[n] = Val{it == current_.end() ? -1 : it->second, std::nullopt, {}, false};
          break;
        }
        case NodeOp::kCallFunction:
          env[n] = call_function(m, *n, call, env);
          break;
        case NodeOp::kCallModule: {
          const Module* child = m.submodule(n->target);
          if (!child) break;
          std::vector<Val> cargs;
          for (const auto& a : n->args) cargs.push_back(arg_value(a, env));
          std::string cfqn = join_fqn(fqn, n->target);
          calls_.push_back({cfqn, call});
          std::vector<Val> outs = walk(*child, cfqn, static_cast<int>(calls_.size()) - 1, cargs);
          env[n] = outs.size() == 1 ? outs[0] : Val{-1, std::nullopt, std::move(outs), true};
          break;
        }
        case NodeOp::kOutput: {
          std::vector<Val> outs;
          for (const auto& a : n->args) outs.push_back(arg_value(a, env));
          return outs;
        }
      }
    }
    return {};
  }

  std::vector<Rec> recs_;
  std::vector<Call> calls_;
  std::unordered_map<const Tensor*, int> current_;  // buffer -> the record last written to it
};

bool same_arg(const Arg& a, const Arg& b, const std::unordered_map<const Node*, size_t>& pa,
              const std::unordered_map<const Node*, size_t>& pb) {
  if (a.index() != b.index()) return false;
  if (auto x = std::get_if<Node*>(&a)) {
    auto i = pa.find(*x), j = pb.find(std::get<Node*>(b));
    return i != pa.end() && j != pb.end() && i->second == j->second;
  }
  if (auto x = std::get_if<float>(&a)) return float_bits(*x) == float_bits(std::get<float>(b));
  return a == b;
}

}  // namespace

std::map<std::string, int> expected_live_calls(const Module& eager) {
  return LiveCalls().run(eager);
}

bool same_structure(const Graph& a, const Graph& b) {
  std::vector<Node*> na = a.nodes(), nb = b.nodes();
  if (na.size() != nb.size()) return false;
  std::unordered_map<const Node*, size_t> pa, pb;
  for (size_t i = 0; i < na.size(); ++i) pa[na[i]] = i, pb[nb[i]] = i;
  for (size_t i = 0; i < na.size(); ++i) {
    const Node &x = *na[i], &y = *nb[i];
    if (x.op != y.op || x.args.size() != y.args.size()) return false;
    if (x.op != NodeOp::kPlaceholder && x.target != y.target) return false;
    if (x.op == NodeOp::kPlaceholder && x.meta.val != y.meta.val) return false;
    for (size_t k = 0; k < x.args.size(); ++k)
      if (!same_arg(x.args[k], y.args[k], pa, pb)) return false;
  }
  return true;
}

}  // namespace flatcheck
