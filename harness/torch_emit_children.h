// emit-torch --hostile-child-names (harness/torch_emit.h): each child's Python name and the
// Python expressions that reach children and state through the program's CHILD_NAMES table.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/ir.h"

namespace flatcheck {

class ChildNames {
 public:
  // The Python name of every child of every module below `root`: flatcheck's own without
  // `hostile`, else drawn as EmitOptions::hostile_child_names says.
  ChildNames(const Module& root, bool hostile);

  bool hostile() const { return hostile_; }
  // Whether some child's Python name is not flatcheck's.
  bool spelled() const { return spelled_; }
  // A flatcheck FQN of the case's state (from the root) as the Python model spells it.
  std::string python_fqn(const std::string& fqn) const;

  // The Python classes of the program's modules ("M<i>"), set once they are named.
  void set_classes(const std::unordered_map<const Module*, std::string>* class_of) {
    class_of_ = class_of;
  }
  // The key of child `k` of `m` in CHILD_NAMES: "<m's class>.<k>".
  std::string key(const Module& m, const std::string& k) const;
  // The module at `dotted` below `m`, from `self` (through CHILD_NAMES where hostile).
  std::string module_expr(const Module& m, const std::string& dotted) const;
  // The attribute path `dotted` below `m` (children, then a state name) as a Python string
  // expression (its children's parts through CHILD_NAMES where hostile).
  std::string path_expr(const Module& m, const std::string& dotted) const;
  // CHILD_NAMES: every child of the modules of `order`, by key, its Python name.
  void table(std::ostream& os, const std::vector<const Module*>& order) const;

 private:
  void name_children(const Module& m);

  const Module& root_;
  const bool hostile_;
  bool attribute_names_ = false;
  bool spelled_ = false;
  std::unordered_map<const Module*, std::map<std::string, std::string>> names_;
  const std::unordered_map<const Module*, std::string>* class_of_ = nullptr;
};

}  // namespace flatcheck
