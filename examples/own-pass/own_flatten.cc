#include "own_flatten.h"

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/base/check.h"
#include "core/passes/passes.h"

namespace own {
using namespace flatcheck;

namespace {

void inline_fallbacks(Program& p, Wiring wiring) {
  Graph& g = p.root->graph;
  std::vector<Node*> calls;
  for (Node* n = g.first(); n; n = n->next)
    if (n->op == NodeOp::kCallModule && n->target.rfind("_run_on_gpu_", 0) == 0) calls.push_back(n);
  for (Node* call : calls) {
    Module* child = p.root->submodule(call->target);
    FLATCHECK_INPUT(child, "own_flatten: child '" << call->target << "' missing");
    std::unordered_map<const Node*, Arg> env;
    size_t pos = 0;
    for (Node* ph : child->graph.placeholders()) {
      FLATCHECK_INPUT(pos < call->args.size(), "own_flatten: %" << call->name << " lacks an arg");
      env[ph] = call->args[pos++];
      if (wiring == Wiring::kByName)
        if (Node* same = g.find(ph->name)) env[ph] = same;  // the bug: identity by name
    }
    std::vector<Arg> results =
        copy_body(g, call, child->graph, env, "", [](const Node& n, Node* c) { c->meta = n.meta; });
    if (results.size() == 1) {
      g.replace_all_uses(call, std::get<Node*>(results[0]));
    } else {
      for (Node* u : g.users(call)) {  // getitems: each takes the result of its own index
        int64_t idx = std::get<int64_t>(u->args[1]);
        g.replace_all_uses(u, std::get<Node*>(results.at(static_cast<size_t>(idx))));
        g.erase(u);
      }
    }
    g.erase(call);
  }
}

}  // namespace

Program own_flatten(const Program& partitioned, Wiring wiring) {
  Program p = partitioned;
  p.root = clone_module(*partitioned.root, /*share_state=*/true);
  inline_engines(p);  // flatcheck's engine inliner; the fallbacks are ours
  inline_fallbacks(p, wiring);
  std::set<std::string> used;
  for (Node* n = p.root->graph.first(); n; n = n->next)
    if (n->op == NodeOp::kCallModule) used.insert(n->target);
  std::erase_if(p.root->children, [&](const auto& kv) { return !used.count(kv.first); });
  eliminate_dead_code(p.root->graph);
  Node* out = p.root->graph.output_node();
  for (size_t i = 0; i < p.sig.outputs.size(); ++i)
    p.sig.outputs[i].name = std::get<Node*>(out->args[i])->name;
  lint_program(p);
  infer_types(*p.root);
  return p;
}

}  // namespace own
