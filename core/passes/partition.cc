// partition: Torch-TensorRT's fast-partitioner rules, and engine compilation of acc runs.
//
// Runs are maximal stretches of call_function nodes with the same support status, in graph
// order. getitem follows its producer so a tuple never crosses a partition. Acc runs smaller
// than min_block_size are demoted, adjacent fallback runs merged, and runs named from one
// shared counter. The parent graph is a fresh namespace; a multi-output child is read through
// getitem nodes minted there, in the order of their first use.
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/ir/engine.h"
#include "core/passes/passes.h"

namespace flatcheck {

// The execute_engine arguments for an engine call: the call's arguments picked by each input
// binding's position, in binding order. Shared by partition's wrappers and inline_engines.
std::vector<Arg> engine_call_args(const Engine& e, const std::vector<Arg>& call_args) {
  for (const auto& b : e.inputs)
    FLATCHECK_INPUT(b.position >= 0 && static_cast<size_t>(b.position) < call_args.size(),
                    "engine " << e.name << ": input " << b.name << " is bound to argument "
                              << b.position << " of a call with " << call_args.size());
  std::vector<Arg> args;
  if (fault_on(Fault::kEngineInputsBySortedName)) {
    // Fault: bindings go through a name-sorted map, so the arguments follow name order.
    std::map<std::string, Arg> by_name;
    for (const auto& b : e.inputs) by_name[b.name] = call_args.at(static_cast<size_t>(b.position));
    for (auto& [_, a] : by_name) args.push_back(a);
    return args;
  }
  for (const auto& b : e.inputs) args.push_back(call_args.at(static_cast<size_t>(b.position)));
  return args;
}

namespace {

struct Run {
  bool acc = false;
  std::vector<Node*> nodes;
};

bool is_partitioned(const Node* n) {
  return n->op == NodeOp::kCallFunction;
}

std::vector<Run> find_runs(const Graph& g, const PartitionOptions& opts) {
  std::unordered_map<const Node*, size_t> run_of;  // node -> index of its run
  std::vector<Run> runs;
  for (Node* n = g.first(); n; n = n->next) {
    if (!is_partitioned(n)) continue;
    if (n->fn == OpCode::kGetitem) {
      // A getitem reads one element of a tuple and nothing else: it goes with the node that
      // made the tuple, even when other runs came between (a tuple never crosses runs).
      size_t r = run_of.at(std::get<Node*>(n->args.at(0)));
      runs[r].nodes.push_back(n);
      run_of[n] = r;
      continue;
    }
    bool acc = !opts.fallback_ops.count(n->target);
    if (runs.empty() || runs.back().acc != acc) runs.push_back({acc, {}});
    runs.back().nodes.push_back(n);
    run_of[n] = runs.size() - 1;
  }
  // Demote small acc runs, then merge neighbours of the same kind.
  for (auto& r : runs)
    if (r.acc && static_cast<int>(r.nodes.size()) < opts.min_block_size) r.acc = false;
  std::vector<Run> merged;
  for (auto& r : runs) {
    if (!merged.empty() && merged.back().acc == r.acc) {
      merged.back().nodes.insert(merged.back().nodes.end(), r.nodes.begin(), r.nodes.end());
    } else {
      merged.push_back(std::move(r));
    }
  }
  return merged;
}

// Replaces an acc child's graph by the engine wrapper and attaches the engine.
void compile_child(Module& child, const std::string& name, const std::vector<TensorPtr>& folded) {
  auto engine = std::make_shared<Engine>(compile_engine(child, name, folded));
  Graph wrapper;
  std::vector<Arg> phs;
  for (Node* p : child.graph.placeholders()) {
    Node* w = wrapper.placeholder(p->name, *p->meta.val);
    w->meta = p->meta;
    phs.emplace_back(w);
  }
  Node* e = wrapper.get_attr("engine");
  std::vector<Arg> args = engine_call_args(*engine, phs);
  args.emplace_back(e);
  Node* exe = wrapper.call_function(OpCode::kExecuteEngine, std::move(args));
  std::vector<Arg> outs;
  for (size_t i = 0; i < engine->outputs.size(); ++i)
    outs.emplace_back(wrapper.call_function(OpCode::kGetitem, {exe, static_cast<int64_t>(i)}));
  wrapper.output(std::move(outs));
  child.graph = std::move(wrapper);
  child.type = "TRTModule";
  child.engines["engine"] = std::move(engine);
}

}  // namespace

namespace {

// Builds the partitioned program: the parent graph keeps the placeholders and calls one child
// per run; a value a later run or the output reads is the child's output (through a getitem
// when the child has several).
class Partitioner {
 public:
  Partitioner(const Program& exported, const PartitionOptions& opts)
      : exported_(exported),
        src_(exported.root->graph),
        runs_(find_runs(src_, opts)),
        outs_(runs_.size()) {
    p_.sig = exported.sig;
    p_.state = exported.state;
    p_.module_types = exported.module_types;
    p_.root->type = exported.root->type;
    for (size_t r = 0; r < runs_.size(); ++r)
      for (Node* n : runs_[r].nodes) run_of_[n] = static_cast<int>(r);
    for (const auto& s : exported.sig.inputs)
      if (s.kind == InputSpec::kParameter) param_names_.insert(s.name);
    // Uses of each source node outside its own run decide a run's outputs.
    for (Node* n = src_.first(); n; n = n->next)
      for (Node* in : n->node_args()) users_[in].push_back(n);
  }

  Program run() {
    Graph& g = p_.root->graph;
    size_t i = 0;
    for (Node* n : src_.placeholders()) {
      Node* c = g.placeholder(n->name, *n->meta.val);
      c->meta = n->meta;
      in_parent_[n] = c;
      // The new graph's namespace may rename it (`input` -> `input_1`, as split_by_tags's
      // placeholders are): the signature names what the graph holds. (A signature of another
      // length, from a user's export, is refused by lint_program below.)
      if (i < p_.sig.inputs.size()) p_.sig.inputs[i].name = c->name;
      ++i;
    }
    for (size_t r = 0; r < runs_.size(); ++r) add_run(r);
    std::vector<Arg> out_args;
    for (Node* v : src_.output_node()->node_args()) out_args.emplace_back(parent_value(v));
    g.output(std::move(out_args));
    const std::vector<Arg>& outs = g.output_node()->args;
    for (size_t k = 0; k < p_.sig.outputs.size() && k < outs.size(); ++k)
      p_.sig.outputs[k].name = std::get<Node*>(outs[k])->name;
    infer_types(*p_.root);
    lint_program(p_);
    return std::move(p_);
  }

 private:
  struct Outputs {
    Node* call = nullptr;
    std::vector<const Node*> values;
    std::unordered_map<const Node*, Node*> minted;  // value -> getitem in parent
  };

  bool in_run(const Node* v, size_t r) const {
    auto it = run_of_.find(v);
    return it != run_of_.end() && it->second == static_cast<int>(r);
  }

  bool used_outside(const Node* v, size_t r) {
    for (Node* u : users_[v])
      if (!in_run(u, r)) return true;
    return false;
  }

  // The parent value of a source node, minting a getitem when it is a multi-output child's.
  Node* parent_value(const Node* v) {
    if (auto it = in_parent_.find(v); it != in_parent_.end()) return it->second;
    Outputs& o = outs_.at(static_cast<size_t>(run_of_.at(v)));
    auto& slot = o.minted[v];
    if (!slot) {
      size_t idx = 0;
      while (o.values[idx] != v) ++idx;
      slot = p_.root->graph.call_function(OpCode::kGetitem, {o.call, static_cast<int64_t>(idx)});
      slot->meta.val = v->meta.val;
      slot->meta.origin = v->meta.origin;
    }
    return slot;
  }

  // The child's graph: inputs are values read from outside the run, in order of first use,
  // each placeholder named after its producer in the pre-split graph. Returns those inputs.
  std::vector<const Node*> build_child_graph(size_t r, Graph& cg) {
    std::unordered_map<const Node*, Node*> local;
    std::vector<const Node*> inputs;
    for (Node* n : runs_[r].nodes)
      for (Node* v : n->node_args())
        if (!in_run(v, r) && !local.count(v)) {
          Node* ph = cg.placeholder(v->name, v->meta.val.value_or(ValueType{}));
          ph->meta.origin = v->meta.origin;
          local[v] = ph;
          inputs.push_back(v);
        }
    for (Node* n : runs_[r].nodes) {
      std::vector<Arg> args = n->args;
      for (auto& a : args)
        if (auto q = std::get_if<Node*>(&a)) *q = local.at(*q);
      Node* c = cg.call_function(n->fn, std::move(args), n->name);
      c->meta = n->meta;
      local[n] = c;
    }
    std::vector<Arg> out_args;
    for (Node* n : runs_[r].nodes)
      if (used_outside(n, r)) {
        outs_[r].values.push_back(n);
        out_args.emplace_back(local.at(n));
      }
    cg.output(std::move(out_args));
    return inputs;
  }

  // The value a parameter placeholder stands for, folded into an acc engine; null otherwise.
  TensorPtr folded_value(const Node* v) const {
    if (v->op != NodeOp::kPlaceholder || !param_names_.count(v->name)) return nullptr;
    TensorPtr value;
    for (const auto& s : exported_.sig.inputs)
      if (s.name == v->name) value = exported_.state.at(s.target);
    return value;
  }

  void add_run(size_t r) {
    const Run& run = runs_[r];
    std::string name = std::string(run.acc ? "_run_on_acc_" : "_run_on_gpu_") + std::to_string(r);
    auto child = std::make_shared<Module>();
    child->type = run.acc ? "TRTModule" : "GraphModule";
    std::vector<const Node*> inputs = build_child_graph(r, child->graph);
    std::vector<Arg> call_args;
    std::vector<TensorPtr> folded;
    for (const Node* v : inputs) {
      call_args.emplace_back(parent_value(v));
      folded.push_back(run.acc ? folded_value(v) : nullptr);
    }
    if (run.acc) compile_child(*child, name, folded);
    p_.root->children[name] = child;
    Node* call = p_.root->graph.call_module(name, std::move(call_args), name);
    outs_[r].call = call;
    if (outs_[r].values.size() == 1) {
      in_parent_[outs_[r].values[0]] = call;
      call->meta.val = outs_[r].values[0]->meta.val;
    }
  }

  const Program& exported_;
  const Graph& src_;
  std::vector<Run> runs_;
  std::vector<Outputs> outs_;
  Program p_;
  std::unordered_map<const Node*, Node*> in_parent_;  // source node -> parent value
  std::unordered_map<const Node*, int> run_of_;       // source node -> run index
  std::unordered_map<const Node*, std::vector<Node*>> users_;
  std::unordered_set<std::string> param_names_;
};

}  // namespace

Program partition(const Program& exported, const PartitionOptions& opts) {
  FLATCHECK_INPUT(opts.min_block_size >= 1, "partition: min_block_size must be at least 1");
  return Partitioner(exported, opts).run();
}

}  // namespace flatcheck
