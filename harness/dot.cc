#include "harness/dot.h"
#include "core/base/names.h"

#include <functional>
#include <unordered_set>

namespace flatcheck {
namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';  // a backslash would escape the closing quote
    out += c;
  }
  return out + "\"";
}

std::string color_of(const Node& n, const std::string& module_path) {
  bool acc_module = module_path.find("_run_on_acc_") != std::string::npos;
  bool gpu_module = module_path.find("_run_on_gpu_") != std::string::npos;
  if (n.op == NodeOp::kCallModule && n.target.rfind("_run_on_acc_", 0) == 0) return "palegreen";
  if (n.op == NodeOp::kCallModule && n.target.rfind("_run_on_gpu_", 0) == 0) return "orange";
  if (n.op == NodeOp::kCallFunction && n.fn == OpCode::kExecuteEngine) return "palegreen";
  if (n.op == NodeOp::kPlaceholder) return "lightblue";
  if (n.op == NodeOp::kGetAttr) return "lightyellow";
  if (acc_module) return "honeydew";
  if (gpu_module) return "moccasin";
  return "white";
}

}  // namespace

void write_dot(std::ostream& os, const Module& root, const std::string& title) {
  os << "digraph flatcheck {\n  label=" << quote(title)
     << ";\n  node [shape=box, style=filled, fontname=monospace];\n";
  std::unordered_set<const Module*> seen;
  int cluster = 0;
  std::function<void(const Module&, const std::string&)> rec = [&](const Module& m,
                                                                   const std::string& path) {
    if (!seen.insert(&m).second) return;
    os << "  subgraph cluster_" << cluster++
       << " {\n    label=" << quote((path.empty() ? "<root>" : path) + " : " + m.type) << ";\n";
    for (Node* n = m.graph.first(); n; n = n->next) {
      std::string id = path + "/" + n->name;
      std::string label =
          "%" + n->name + "\\n" + std::string(node_op_name(n->op)) + "[" + n->target + "]";
      os << "    " << quote(id) << " [label=" << quote(label)
         << ", fillcolor=" << color_of(*n, path)
         << (n->op == NodeOp::kGetAttr && m.engine(n->target) ? ", shape=box3d" : "") << "];\n";
      for (Node* in : n->input_nodes())
        os << "    " << quote(path + "/" + in->name) << " -> " << quote(id) << ";\n";
    }
    os << "  }\n";
    for (const auto& [k, c] : m.children) rec(*c, join_fqn(path, k));
  };
  rec(root, "");
  os << "}\n";
}

}  // namespace flatcheck
