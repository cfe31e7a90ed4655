// flatten: Torch-TensorRT's save-time transform of a partitioned module.
//
// inline_engines turns each `_run_on_acc_*` call into `get_attr <name>_engine` +
// `execute_engine(inputs..., engine)` + getitems (a new getitem for a single output, the
// existing ones reused for several). inline_fallbacks copies each `_run_on_gpu_*` body in
// front of its call, wiring placeholders by position to the call's arguments. New nodes are
// named through the parent's namespace, which is where names collide and get renamed.
#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/ir/engine.h"
#include "core/passes/passes.h"

namespace flatcheck {

std::vector<Arg> engine_call_args(const Engine& e, const std::vector<Arg>& call_args);

namespace {

bool starts_with(const std::string& s, std::string_view p) {
  return s.rfind(p, 0) == 0;
}

std::vector<Node*> calls_to(const Graph& g, std::string_view prefix) {
  std::vector<Node*> out;
  for (Node* n = g.first(); n; n = n->next)
    if (n->op == NodeOp::kCallModule && starts_with(n->target, prefix)) out.push_back(n);
  return out;
}

}  // namespace

void inline_engines(Program& p) {
  Graph& g = p.root->graph;
  UsersIndex index(g);
  for (Node* call : calls_to(g, "_run_on_acc_")) {
    Module* child = p.root->submodule(call->target);
    FLATCHECK_INPUT(child, "flatten: child '" << call->target << "' missing");
    auto engine = child->engine("engine");
    FLATCHECK_INPUT(engine, "flatten: child '" << call->target << "' has no engine");
    std::string attr = call->target + "_engine";
    p.root->engines[attr] = engine;
    Graph::InsertingBefore at(g, call);
    Node* e = g.get_attr(attr);
    std::vector<Arg> args = engine_call_args(*engine, call->args);
    args.emplace_back(e);
    Node* exe = g.call_function(OpCode::kExecuteEngine, std::move(args));
    index.add(exe);
    exe->meta.nn_module_stack = call->meta.nn_module_stack;
    if (engine->outputs.size() == 1) {
      Node* gi = g.call_function(OpCode::kGetitem, {exe, int64_t{0}});
      gi->meta.val = call->meta.val;
      index.replace_uses(call, gi);
    } else {
      int64_t k = 0;
      for (Node* u : std::vector<Node*>(index.users(call))) {
        FLATCHECK_INPUT(u->op == NodeOp::kCallFunction && u->fn == OpCode::kGetitem,
                        "flatten: multi-output call %" << call->name << " read by %" << u->name);
        u->args[0] = exe;
        // Fault: the k-th getitem user is given the k-th result, not its own index.
        if (fault_on(Fault::kEngineOutputsByUserOrder)) u->args[1] = k;
        ++k;
      }
    }
    g.erase(call);
  }
}

void inline_fallbacks(Program& p) {
  Graph& g = p.root->graph;
  UsersIndex index(g);
  for (Node* call : calls_to(g, "_run_on_gpu_")) {
    Module* child = p.root->submodule(call->target);
    FLATCHECK_INPUT(child, "flatten: child '" << call->target << "' missing");
    std::unordered_map<const Node*, Arg> env;
    size_t pos = 0;
    for (Node* ph : child->graph.placeholders()) {
      FLATCHECK_INPUT(pos < call->args.size(),
                      "flatten: call %" << call->name << " lacks an argument");
      Arg value = call->args[pos++];
      if (fault_on(Fault::kInlineByName)) {
        // Fault (Torch-TensorRT #4360): match the placeholder to a parent node by name.
        if (Node* same = g.find(ph->name)) value = same;
      }
      env[ph] = value;
    }
    for (Node* n = child->graph.first(); n; n = n->next)
      FLATCHECK_INPUT(n->op != NodeOp::kGetAttr && n->op != NodeOp::kCallModule,
                      "flatten: fallback node %" << n->name << " is not a call_function");
    std::vector<Arg> results =
        copy_body(g, call, child->graph, env, "", [&](const Node& n, Node* c) {
          c->meta = n.meta;
          index.add(c);
        });
    if (results.size() == 1) {
      index.replace_uses(call, std::get<Node*>(results[0]));
    } else {
      for (Node* u : std::vector<Node*>(index.users(call))) {
        FLATCHECK_INPUT(u->op == NodeOp::kCallFunction && u->fn == OpCode::kGetitem,
                        "flatten: multi-output call %" << call->name << " read by %" << u->name);
        int64_t idx = std::get<int64_t>(u->args[1]);
        FLATCHECK_INPUT(idx >= 0 && idx < static_cast<int64_t>(results.size()),
                        "flatten: getitem %" << u->name << " index out of range");
        index.replace_uses(u, std::get<Node*>(results[static_cast<size_t>(idx)]));
        g.erase(u);
      }
    }
    g.erase(call);
  }
}

Program flatten(const Program& partitioned) {
  Program p = partitioned;
  p.root = clone_module(*partitioned.root, /*share_state=*/true);
  Namespace before = p.root->graph.ns();
  inline_engines(p);
  // Fault: the second pass mints names from the namespace the first one started from, so
  // names inline_engines handed out are handed out again.
  if (fault_on(Fault::kSharedNamespaceTwoPasses)) p.root->graph.ns() = before;
  inline_fallbacks(p);
  // Remove children no call refers to any more.
  std::set<std::string> used;
  for (Node* n = p.root->graph.first(); n; n = n->next)
    if (n->op == NodeOp::kCallModule) used.insert(n->target);
  for (auto it = p.root->children.begin(); it != p.root->children.end();)
    it = used.count(it->first) ? std::next(it) : p.root->children.erase(it);
  eliminate_dead_code(p.root->graph);
  Node* out = p.root->graph.output_node();
  for (size_t i = 0; i < p.sig.outputs.size(); ++i)
    p.sig.outputs[i].name = std::get<Node*>(out->args[i])->name;
  // As Torch-TensorRT's eliminate_dead_code(): lint first, so a wiring error reads as the lint
  // error it is ("used before it has been defined"), then refresh the types.
  lint_program(p);
  infer_types(*p.root);
  return p;
}

}  // namespace flatcheck
