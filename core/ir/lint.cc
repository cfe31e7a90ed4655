// lint: the structural checks every graph must pass (op kinds, placeholders first, one trailing
// output, defined-before-use, unique names, argument kinds against the op signature, targets).
#include <algorithm>
#include <functional>
#include <ostream>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/base/check.h"
#include "core/base/names.h"
#include "core/base/ptr_table.h"
#include "core/ir/ir.h"

namespace flatcheck {

// ------------------------------------------------------------------------------------ lint

namespace {

// The argument-kind letter a node reference stands for (see ops.def).
char arg_kind(const Node* p, const Module* owner) {
  switch (p->op) {
    case NodeOp::kPlaceholder:
      if (p->meta.val) {
        switch (p->meta.val->kind) {
          case ValueType::kBool:
            return 'B';
          case ValueType::kInt:
            return 'i';
          case ValueType::kFloat:
            return 'f';
          case ValueType::kTuple:
            return 'X';
          default:
            return 'T';
        }
      }
      return 'T';
    case NodeOp::kGetAttr:
      return owner && owner->engine(p->target) ? 'E' : 'T';
    case NodeOp::kCallFunction:
      return op_info(p->fn).outputs == 0 ? 'X' : 'T';
    case NodeOp::kCallModule: {
      Module* c = owner ? owner->submodule(p->target) : nullptr;
      Node* out = c ? c->graph.output_node() : nullptr;
      return out && out->args.size() != 1 ? 'X' : 'T';
    }
    case NodeOp::kOutput:
      return '?';
  }
  return '?';
}

// "lint: <where>: node %<name>: ", written only into an error message.
struct NodeAt {
  const std::string& at;
  const Node* n;
};
std::ostream& operator<<(std::ostream& os, const NodeAt& w) {
  return os << w.at << "node %" << w.n->name << ": ";
}

// The names one graph's nodes hold, to find a duplicate: an open-addressed set of views into
// the nodes' own strings, reused by the thread's next graph (no allocation per node).
class NameSet {
 public:
  // Empties the set, with room for `expected` names: the room kept when it is the size that
  // many names take (at most half full), else made anew, so that one large graph does not make
  // every later small one clear a large table.
  void clear(size_t expected) {
    size_t cap = 16;
    while (cap < 2 * expected) cap <<= 1;
    if (slots_.size() == cap) {
      std::fill(slots_.begin(), slots_.end(), std::string_view());
    } else {
      slots_.assign(cap, std::string_view());
      hashes_.assign(cap, 0);
    }
    count_ = 0;
  }
  // False when `s` is in the set already.
  bool insert(std::string_view s) {
    if (2 * (count_ + 1) > slots_.size()) grow();
    const size_t mask = slots_.size() - 1, h = std::hash<std::string_view>()(s);
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      if (slots_[i].data() == nullptr) {  // a node's name is a std::string: never null data
        slots_[i] = s;
        hashes_[i] = h;
        ++count_;
        return true;
      }
      if (hashes_[i] == h && slots_[i] == s) return false;
    }
  }

 private:
  void grow() {
    std::vector<std::string_view> old(std::max<size_t>(16, 2 * slots_.size()));
    old.swap(slots_);
    hashes_.assign(slots_.size(), 0);
    count_ = 0;
    for (std::string_view s : old)
      if (s.data() != nullptr) insert(s);
  }
  std::vector<std::string_view> slots_;
  std::vector<size_t> hashes_;
  size_t count_ = 0;
};

// A call_module: its target exists (when the owner is known), it passes one argument per
// placeholder, and none is a list constant: a placeholder is a tensor or a scalar, so a list has
// nothing to bind to (the interpreter cannot pass one), whatever type the placeholder declares.
void lint_call_module(const NodeAt& node, const Module* owner, const std::string& kinds) {
  const Node* n = node.n;
  Module* c = owner ? owner->submodule(n->target) : nullptr;
  FLATCHECK_INPUT(!owner || c, node << "call_module target '" << n->target << "' does not exist");
  if (c) {
    size_t nph = c->graph.placeholders().size();
    FLATCHECK_INPUT(nph == n->args.size(), node << "call_module '" << n->target << "' passes "
                                                << n->args.size() << " arguments to " << nph
                                                << " placeholders");
  }
  FLATCHECK_INPUT(kinds.find('L') == std::string::npos,
                  node << "call_module '" << n->target << "' passes a list as argument "
                       << kinds.find('L') << "; a module call passes tensors and scalars");
}

}  // namespace

void lint_graph(const Graph& g, const Module* owner, const std::string& where) {
  PtrTable<Node, bool> defined(g.size());
  thread_local NameSet names;
  names.clear(g.size());
  bool seen_non_placeholder = false;
  Node* out = nullptr;
  const std::string at = "lint: " + (where.empty() ? std::string("<root>") : where) + ": ";
  for (Node* n = g.first(); n; n = n->next) {
    const NodeAt node{at, n};
    FLATCHECK_INPUT(!out, node << "node after the output node");
    FLATCHECK_INPUT(names.insert(n->name), at << "duplicate node name '" << n->name << "'");
    FLATCHECK_INPUT(n->graph == &g, node << "node belongs to another graph");
    std::string kinds;
    for (const auto& a : n->args) {
      if (auto p = std::get_if<Node*>(&a)) {
        FLATCHECK_INPUT(*p != nullptr && (*p)->graph == &g && !(*p)->erased,
                        node << "argument is not a node of this graph");
        FLATCHECK_INPUT(defined.contains(*p),
                        node << "argument '" << (*p)->name << "' used before it has been defined");
        FLATCHECK_INPUT((*p)->op != NodeOp::kOutput, node << "uses the output node");
        kinds += arg_kind(*p, owner);
      } else {
        kinds += const_arg_kind(a);
      }
    }
    switch (n->op) {
      case NodeOp::kPlaceholder:
        FLATCHECK_INPUT(!seen_non_placeholder, node << "placeholder after other nodes");
        FLATCHECK_INPUT(n->meta.val.has_value(), node << "placeholder without a type");
        FLATCHECK_INPUT(n->args.empty(), node << "placeholder with arguments");
        break;
      case NodeOp::kGetAttr:
        FLATCHECK_INPUT(n->args.empty(), node << "get_attr with arguments");
        FLATCHECK_INPUT(!owner || owner->attribute(n->target) || owner->engine(n->target),
                        node << "get_attr target '" << n->target << "' does not exist");
        break;
      case NodeOp::kCallFunction: {
        auto code = op_by_name(n->target);
        FLATCHECK_INPUT(code && *code == n->fn, node << "unknown op '" << n->target << "'");
        std::string why = check_signature(n->fn, kinds);
        FLATCHECK_INPUT(why.empty(), node << op_info(n->fn).name << ": " << why);
        // A tuple's element is chosen by a constant: its type cannot depend on a call.
        FLATCHECK_INPUT(n->fn != OpCode::kGetitem || std::holds_alternative<int64_t>(n->args.at(1)),
                        node << "getitem's index must be an int constant");
        if (n->fn == OpCode::kCopy && owner) {
          // copy_ updates a buffer in place: its destination is a get_attr of a buffer of
          // this module (a parameter, or any other value, is rejected here, not at run).
          Node* const* dst = std::get_if<Node*>(&n->args.at(0));
          bool is_buffer = false;
          FLATCHECK_INPUT(dst && (*dst)->op == NodeOp::kGetAttr &&
                              owner->attribute((*dst)->target, &is_buffer) && is_buffer,
                          node << "copy_ must write a buffer read by get_attr");
        }
        break;
      }
      case NodeOp::kCallModule:
        lint_call_module(node, owner, kinds);
        break;
      case NodeOp::kOutput:
        out = n;
        FLATCHECK_INPUT(kinds.find_first_not_of("TX") == std::string::npos,
                        node << "outputs must be tensors");
        break;
    }
    if (n->op != NodeOp::kPlaceholder) seen_non_placeholder = true;
    defined.insert(n);
  }
  FLATCHECK_INPUT(out != nullptr, at << "graph has no output node");
}

void lint(const Module& m) {
  std::unordered_set<const Module*> seen;
  std::function<void(const Module&, const std::string&, int)> rec =
      [&](const Module& mod, const std::string& path, int depth) {
        FLATCHECK_INPUT(depth <= kMaxModuleDepth,
                        "lint: module tree deeper than " << kMaxModuleDepth << " at " << path);
        if (!seen.insert(&mod).second) return;
        lint_graph(mod.graph, &mod, path);
        for (const auto& [name, c] : mod.children) rec(*c, join_fqn(path, name), depth + 1);
      };
  rec(m, "", 0);
}

}  // namespace flatcheck
