// A graph's namespace, with torch.fx's rules for creating node names.
//
//   create_name("getitem")   -> "getitem"      (first use)
//   create_name("getitem")   -> "getitem_1"    (collision: next free number)
//   create_name("getitem_1") -> "getitem_2"    (a trailing _<digits> is a suffix, replaced)
//   create_name("Add.Tensor")-> "add_tensor"   (snake_case; illegal characters become _)
//   create_name("0x")        -> "_0x"          (a leading digit gets a _ prefix)
//
// Names are never released: an erased node's name stays reserved for the life of the graph.
// Creating a name is amortized O(1): each base remembers the last number it handed out.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace flatcheck {

class Namespace {
 public:
  // Returns a fresh, legal name derived from `candidate` and marks it used.
  std::string create_name(std::string_view candidate);
  // True when `name` has been handed out (or reserved) in this namespace.
  bool contains(std::string_view name) const { return used_.count(std::string(name)) > 0; }
  // Marks an exact name as used (it must be legal and free); returns false if taken.
  bool reserve(const std::string& name);
  // Releases a name. Only the fault `erased-name-reuse` calls this.
  void release(const std::string& name);
  size_t size() const { return used_.size(); }

 private:
  std::unordered_set<std::string> used_;
  std::unordered_map<std::string, int64_t> base_count_;
};

// torch.fx's `_snake_case`: "MyModule" -> "my_module", "Add.Tensor" stays for sanitizing.
std::string snake_case(std::string_view s);

// Replaces characters outside [A-Za-z0-9_] by '_', prefixes '_' before a leading digit and
// maps "" to "_unnamed".
std::string sanitize_name(std::string_view s);

// True for Python keywords and the few builtins torch.fx refuses as names.
bool is_reserved_name(std::string_view s);

}  // namespace flatcheck
