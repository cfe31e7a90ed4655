// The FX-like IR: Node, Graph, Module.
//
// A Graph is an ordered, doubly-linked list of Nodes; the order is a topological order. Nodes
// refer to each other by pointer (never by name); names exist for people and for the file
// format and come from the graph's own Namespace (torch.fx's rules, core/ir/namespace.h).
// A Module owns a graph, named children, parameters and buffers (shared storage) and, after
// flatten, compiled engines.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "core/base/tensor.h"
#include "core/ir/namespace.h"
#include "core/ops/ops.h"

namespace flatcheck {

// The deepest module nesting anything accepts: the hard maximum of the loader's
// max_module_depth, and so the deepest call chain the interpreter and export walk (a call chain
// never goes deeper than the module tree, which has no cycle).
inline constexpr int kMaxModuleDepth = 256;

class Graph;
struct Node;
struct Engine;  // core/ir/engine.h

// The five node kinds of torch.fx.
enum class NodeOp : uint8_t { kPlaceholder, kGetAttr, kCallFunction, kCallModule, kOutput };
std::string_view node_op_name(NodeOp op);
std::optional<NodeOp> node_op_by_name(std::string_view name);

// The type of the value a node produces.
struct ValueType {
  enum Kind : uint8_t { kNone, kTensor, kTuple, kBool, kInt, kFloat, kEngine };
  Kind kind = kNone;
  Shape shape;               // kTensor
  std::vector<Shape> elems;  // kTuple (tuples of tensors only)

  static ValueType tensor(Shape s) { return {kTensor, std::move(s), {}}; }
  static ValueType tuple(std::vector<Shape> e) { return {kTuple, {}, std::move(e)}; }
  static ValueType scalar(Kind k) { return {k, {}, {}}; }
  bool is_static() const { return kind == kBool || kind == kInt || kind == kFloat; }
  bool operator==(const ValueType&) const = default;
};
std::string_view value_kind_name(ValueType::Kind k);
std::ostream& operator<<(std::ostream& os, const ValueType& t);

// One entry of a node's nn_module_stack: the call `key` ("n@1"), the module's `fqn` ("n") and
// its type name ("N").
struct StackEntry {
  std::string key, fqn, type;
  bool operator==(const StackEntry&) const = default;
};

// A node's nn_module_stack, outermost call first; empty at the root. Immutable and shared:
// the nodes one call emits, and every copy of them, point at one list, so copying a node
// copies a pointer. Read it like a vector; change it by assigning a new one.
class ModuleStack {
 public:
  ModuleStack() = default;
  ModuleStack(std::vector<StackEntry> entries)  // NOLINT: implicit, as a vector was
      : p_(entries.empty() ? nullptr
                           : std::make_shared<const std::vector<StackEntry>>(std::move(entries))) {}
  const std::vector<StackEntry>& entries() const { return p_ ? *p_ : empty_entries(); }
  size_t size() const { return p_ ? p_->size() : 0; }
  bool empty() const { return !p_; }
  const StackEntry& operator[](size_t i) const { return (*p_)[i]; }
  const StackEntry& back() const { return p_->back(); }
  std::vector<StackEntry>::const_iterator begin() const { return entries().begin(); }
  std::vector<StackEntry>::const_iterator end() const { return entries().end(); }
  bool operator==(const ModuleStack& o) const { return p_ == o.p_ || entries() == o.entries(); }

 private:
  static const std::vector<StackEntry>& empty_entries();
  std::shared_ptr<const std::vector<StackEntry>> p_;  // null when empty
};

// Metadata carried by every node.
struct Meta {
  std::optional<ValueType> val;  // the value's type; required on placeholders
  ModuleStack nn_module_stack;   // the calls this node was traced in
  std::string origin;            // provenance: the eager node this came from, e.g. "n@1/add"
};

// An argument: a node reference or a constant.
using Arg = std::variant<Node*, bool, int64_t, float, std::vector<int64_t>>;

struct Node {
  NodeOp op = NodeOp::kCallFunction;
  // placeholder: its name; get_attr: attribute path ("n.w"); call_function: op name;
  // call_module: child name; output: "output".
  std::string target;
  std::vector<Arg> args;
  std::string name;
  Meta meta;
  OpCode fn = OpCode::kAdd;  // meaningful for call_function only

  Graph* graph = nullptr;
  Node* prev = nullptr;
  Node* next = nullptr;
  bool erased = false;

  // Node arguments, in order (constants skipped).
  std::vector<Node*> input_nodes() const;
  // The same, as a view of `args` (no vector built); valid while `args` is unchanged.
  class NodeArgs;
  NodeArgs node_args() const;
};

class Node::NodeArgs {
 public:
  class iterator {
   public:
    iterator(const Arg* p, const Arg* end) : p_(p), end_(end) { skip(); }
    Node* operator*() const { return *std::get_if<Node*>(p_); }
    iterator& operator++() {
      ++p_;
      skip();
      return *this;
    }
    bool operator!=(const iterator& o) const { return p_ != o.p_; }

   private:
    void skip() {
      while (p_ != end_ && !std::holds_alternative<Node*>(*p_)) ++p_;
    }
    const Arg* p_;
    const Arg* end_;
  };
  NodeArgs(const Arg* begin, const Arg* end) : begin_(begin), end_(end) {}
  iterator begin() const { return {begin_, end_}; }
  iterator end() const { return {end_, end_}; }

 private:
  const Arg* begin_;
  const Arg* end_;
};

inline Node::NodeArgs Node::node_args() const {
  return {args.data(), args.data() + args.size()};
}

// Prints an argument the way the text form shows it: %name, True, 3.0, [2, 3].
std::ostream& operator<<(std::ostream& os, const Arg& a);
// The signature letter (ops.def) of a constant argument: B, i, f or L.
char const_arg_kind(const Arg& a);
// Prints one node in the FX-like text form, e.g. "%add = call_function[target=add](%x, 1.0)".
std::ostream& operator<<(std::ostream& os, const Node& n);

class Graph {
 public:
  Graph() = default;
  Graph(const Graph& other);  // deep copy: same names, same namespace state
  Graph& operator=(const Graph& other);
  Graph(Graph&& other) noexcept { *this = std::move(other); }
  Graph& operator=(Graph&& other) noexcept;  // nodes move along and point at their new graph

  // Node creation. Each inserts at the insertion point (the end, or before the node given to
  // `InsertingBefore`) and names the node through the namespace from `name_hint` (or, when
  // empty, from the target).
  Node* placeholder(std::string_view name_hint, ValueType type);
  Node* get_attr(std::string target, std::string_view name_hint = "");
  Node* call_function(OpCode op, std::vector<Arg> args, std::string_view name_hint = "");
  Node* call_module(std::string target, std::vector<Arg> args, std::string_view name_hint = "");
  Node* output(std::vector<Arg> args);
  // Creates a node with an exact name that must be free (the loader's path).
  Node* create_exact(NodeOp op, std::string target, std::vector<Arg> args, std::string name);

  // Removes a node that has no users. Its name stays reserved.
  void erase(Node* n);
  // Points every use of `from` (in args of live nodes) at `to`.
  void replace_all_uses(Node* from, Node* to);
  // How many live nodes use each node.
  std::unordered_map<const Node*, int> use_counts() const;
  std::vector<Node*> users(const Node* n) const;

  // Live nodes in order.
  std::vector<Node*> nodes() const;
  std::vector<Node*> placeholders() const;
  Node* output_node() const;  // nullptr when absent
  Node* find(std::string_view name) const;
  Node* first() const { return head_; }
  size_t size() const { return live_; }

  Namespace& ns() { return ns_; }
  const Namespace& ns() const { return ns_; }

  // Scoped insertion point: new nodes go before `n` until the guard ends.
  class InsertingBefore {
   public:
    InsertingBefore(Graph& g, Node* n) : g_(g), saved_(g.insert_before_) { g.insert_before_ = n; }
    ~InsertingBefore() { g_.insert_before_ = saved_; }

   private:
    Graph& g_;
    Node* saved_;
  };

 private:
  // A default node from the arena; insert() links it in.
  Node* make_node();
  Node* insert(Node* n);

  // Nodes live in chunks that never move (a node's address is its identity): one allocation
  // per chunk, not per node. Chunks double in size; a copy gets one chunk of the right size.
  struct Chunk {
    std::unique_ptr<Node[]> nodes;
    size_t size = 0;  // slots
    size_t used = 0;  // slots handed out
  };
  std::vector<Chunk> chunks_;
  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  Node* insert_before_ = nullptr;
  size_t live_ = 0;
  Namespace ns_;
};

std::ostream& operator<<(std::ostream& os, const Graph& g);

// Copies a callee's body into `dst` before `before` (inlining): placeholders are looked up in
// `env` (filled by the caller with the call's arguments, by position), every other node but the
// output is created through dst's namespace with its own name as the hint, and get_attr and
// call_module targets get `prefix` ("" keeps them). `on_copy(original, copy)` runs for each
// created node. Returns the output node's arguments, mapped.
std::vector<Arg> copy_body(Graph& dst, Node* before, const Graph& body,
                           std::unordered_map<const Node*, Arg>& env, const std::string& prefix,
                           const std::function<void(const Node&, Node*)>& on_copy);

// Users of every node, computed once, for passes that rewire many nodes: replacing uses
// through the index costs the number of users, not a walk over the graph.
class UsersIndex {
 public:
  explicit UsersIndex(const Graph& g);
  // Users of `n`, in graph order as of construction (plus nodes added by replace_uses).
  const std::vector<Node*>& users(const Node* n) const;
  // Points every use of `from` at `to` and records those users as users of `to`.
  void replace_uses(Node* from, Node* to);
  // Records a node created after construction as a user of its inputs.
  void add(Node* n);

 private:
  std::unordered_map<const Node*, std::vector<Node*>> users_;
  std::vector<Node*> none_;
};

struct Module {
  std::string type = "Module";  // the class name shown in nn_module_stack ("M", "N")
  Graph graph;
  std::map<std::string, std::shared_ptr<Module>> children;
  std::map<std::string, TensorPtr> params;
  std::map<std::string, TensorPtr> buffers;
  std::map<std::string, std::shared_ptr<const Engine>> engines;

  // The child at a dotted path ("a.b"), or nullptr.
  Module* submodule(std::string_view path) const;
  // The tensor at a dotted attribute path ("a.w"), or nullptr. Sets *is_buffer when given.
  TensorPtr attribute(std::string_view path, bool* is_buffer = nullptr) const;
  // The engine at a dotted path, or nullptr.
  std::shared_ptr<const Engine> engine(std::string_view path) const;
};

// Deep copy of a module tree. With share_state the copy points at the same parameter and
// buffer storage; without, it gets copies of the tensors. Modules shared within the tree stay
// shared in the copy.
std::shared_ptr<Module> clone_module(const Module& m, bool share_state);

// Calls fn(path, module) for every module of the tree rooted at `root` (path ""), depth first,
// children in name order; a module shared by two paths is visited once, at the first.
void for_each_module(Module& root, const std::function<void(const std::string&, Module&)>& fn);

// Checks a module tree: op kinds, placeholders first, one output last, defined-before-use,
// unique names, argument kinds against op signatures, targets that exist. Throws InputError
// naming the module path and node ("lint: n@1: node %relu: ...").
void lint(const Module& m);
void lint_graph(const Graph& g, const Module* owner, const std::string& where);

// Prints a module tree in the FX-like text form (children after the graph, sorted by name).
std::ostream& operator<<(std::ostream& os, const Module& m);

// Structural equality of graphs: same ops, targets, constants and wiring (by position). Names
// count only when `names` is set. With `constants` false, scalar constants are not compared;
// with `call_targets` false, call_module targets are not (what PyTorch's unflatten compares).
struct GraphEq {
  bool names = false;
  bool constants = true;
  bool call_targets = true;
};
bool graph_equal(const Graph& a, const Graph& b, GraphEq eq = {});
size_t graph_hash(const Graph& g, GraphEq eq = {});

}  // namespace flatcheck
