// emit-torch --hostile-child-names: each child's Python name (harness/torch_emit_children.h).
#include "harness/torch_emit_children.h"

#include <array>
#include <set>
#include <string_view>

#include "core/base/names.h"
#include "core/ir/namespace.h"
#include "core/serialize/serialize.h"
#include "harness/torch_emit_text.h"

namespace flatcheck {

namespace {

// Attributes of the modules torch builds (the GraphModule of ep.module() and
// torch.fx.symbolic_trace, unflatten's UnflattenedModule and InterpreterModule, export's
// wrapper), which make those paths fail (docs/found-bugs.md 91), and names torch gives its own
// values and modules or that its generated code reads. None has '@' (unflatten's call index,
// which the bridge reads too) or is an attribute of nn.Module (add_module refuses it).
// clang-format off
constexpr std::array<std::string_view, 17> kAttributeChildNames = {
    "graph", "code", "meta", "ivals", "adapted", "graph_signature", "module_call_graph",
    "flat_args_adapter", "_graph", "_code", "print_readable", "_in_spec", "_out_spec",
    "range_constraints", "_ty", "_guards_fn", "_export_root"};
constexpr std::array<std::string_view, 30> kValueChildNames = {
    "L__self__", "L_self_", "self", "output", "x", "input", "args", "kwargs", "submod_0",
    "submod_1", "fused_0", "_run_on_acc_0", "_run_on_gpu_0", "_tensor_constant0",
    "_param_constant0", "c_lifted_tensor_0", "arg0_1", "_orig_mod", "_lowered", "torch",
    "operator", "pytree", "fx_pytree", "builtins", "math", "device", "inf", "nan", "sum",
    "getitem"};
// clang-format on

// Without --hostile-child-names: "a.b" -> "self.a.b" with getattr for parts that are not
// identifiers ("0" of a Sequential).
std::string attr_path(const std::string& dotted) {
  std::string out = "self";
  size_t start = 0;
  while (start <= dotted.size()) {
    size_t dot = dotted.find('.', start);
    std::string part =
        dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    bool ident = is_identifier(part);
    out = ident ? out + "." + part : "getattr(" + out + ", " + py_str(part) + ")";
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return out;
}

}  // namespace

// Whether the program's children may take kAttributeChildNames: fnv1a64 of the root's children
// ("<name>:<type>;" each, in name order) % 3 is 0 (one program in three: a program with such a
// child fails most paths, and the rest keep reaching them).
ChildNames::ChildNames(const Module& root, bool hostile) : root_(root), hostile_(hostile) {
  std::string edges;
  for (const auto& [k, ch] : root.children) edges += k + ":" + ch->type + ";";
  attribute_names_ = hostile && fnv1a64(edges) % 3 == 0;
  for_each_module(const_cast<Module&>(root),
                  [&](const std::string&, Module& m) { name_children(m); });
}

// A child keeps its name when fnv1a64("<type>.<name>") % 3 is 0; the others, in name order,
// take the first name of the pool from that hash / 3 on that no state of `m` and no other child
// of it holds.
void ChildNames::name_children(const Module& m) {
  if (names_.count(&m)) return;
  std::map<std::string, std::string>& names = names_[&m];
  std::set<std::string> taken;
  for (const auto& [k, _] : m.params) taken.insert(k);
  for (const auto& [k, _] : m.buffers) taken.insert(k);
  std::vector<std::string> drawn;
  for (const auto& [k, _] : m.children) {
    if (!hostile_ || fnv1a64(m.type + "." + k) % 3 == 0) {
      names[k] = k;
      taken.insert(k);
    } else {
      drawn.push_back(k);
    }
  }
  std::vector<std::string_view> pool(kValueChildNames.begin(), kValueChildNames.end());
  if (attribute_names_)
    pool.insert(pool.end(), kAttributeChildNames.begin(), kAttributeChildNames.end());
  for (const auto& k : drawn) {
    const uint64_t start = fnv1a64(m.type + "." + k) / 3;
    std::string name = k;
    for (size_t i = 0; i < pool.size(); ++i) {
      std::string candidate(pool[(start + i) % pool.size()]);
      if (!taken.count(candidate)) {
        name = candidate;
        break;
      }
    }
    while (taken.count(name)) name += "_";
    spelled_ = spelled_ || name != k;
    names[k] = name;
    taken.insert(name);
  }
}

std::string ChildNames::python_fqn(const std::string& fqn) const {
  const auto parts = split_fqn(fqn);
  std::string out;
  const Module* at = &root_;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    out += names_.at(at).at(parts[i]) + ".";
    at = at->children.at(parts[i]).get();
  }
  return out + parts.back();
}

std::string ChildNames::key(const Module& m, const std::string& k) const {
  return class_of_->at(&m) + "." + k;
}

std::string ChildNames::module_expr(const Module& m, const std::string& dotted) const {
  if (!hostile_) return attr_path(dotted);
  std::string out = "self";
  const Module* at = &m;
  for (const auto& part : split_fqn(dotted)) {
    out = "getattr(" + out + ", CHILD_NAMES[" + py_str(key(*at, part)) + "])";
    at = at->children.at(part).get();
  }
  return out;
}

std::string ChildNames::path_expr(const Module& m, const std::string& dotted) const {
  if (!hostile_) return py_str(dotted);
  const auto parts = split_fqn(dotted);
  std::string out;
  const Module* at = &m;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    out += (out.empty() ? "" : " + \".\" + ") + std::string("CHILD_NAMES[") +
           py_str(key(*at, parts[i])) + "]";
    at = at->children.at(parts[i]).get();
  }
  return out.empty() ? py_str(dotted) : out + " + " + py_str("." + parts.back());
}

void ChildNames::table(std::ostream& os, const std::vector<const Module*>& order) const {
  os << "# Each child's Python name, by its parent's class and flatcheck name "
        "(--hostile-child-names).\nCHILD_NAMES = {\n";
  for (const Module* m : order)
    for (const auto& [k, name] : names_.at(m))
      os << "    " << py_str(key(*m, k)) << ": " << py_str(name) << ",\n";
  os << "}\n\n\n";
}

}  // namespace flatcheck
