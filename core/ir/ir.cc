#include "core/ir/ir.h"
#include "core/base/names.h"

#include <algorithm>
#include <functional>
#include <sstream>
#include <unordered_set>
#include <utility>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/base/ptr_table.h"

namespace flatcheck {
namespace {

constexpr std::string_view kNodeOpNames[] = {"placeholder", "get_attr", "call_function",
                                             "call_module", "output"};

}  // namespace

char const_arg_kind(const Arg& a) {
  if (std::holds_alternative<bool>(a)) return 'B';
  if (std::holds_alternative<int64_t>(a)) return 'i';
  if (std::holds_alternative<float>(a)) return 'f';
  return 'L';
}

std::string_view node_op_name(NodeOp op) {
  return kNodeOpNames[static_cast<int>(op)];
}

std::optional<NodeOp> node_op_by_name(std::string_view name) {
  for (int i = 0; i < 5; ++i)
    if (kNodeOpNames[i] == name) return static_cast<NodeOp>(i);
  return std::nullopt;
}

std::string_view value_kind_name(ValueType::Kind k) {
  static constexpr std::string_view names[] = {"none", "tensor", "tuple", "bool",
                                               "int",  "float",  "engine"};
  return names[k];
}

std::ostream& operator<<(std::ostream& os, const ValueType& t) {
  switch (t.kind) {
    case ValueType::kTensor:
      return os << shape_str(t.shape);
    case ValueType::kTuple: {
      os << "(";
      for (size_t i = 0; i < t.elems.size(); ++i) os << (i ? ", " : "") << shape_str(t.elems[i]);
      return os << ")";
    }
    default:
      return os << value_kind_name(t.kind);
  }
}

std::vector<Node*> Node::input_nodes() const {
  std::vector<Node*> out;
  for (Node* p : node_args()) out.push_back(p);
  return out;
}

std::ostream& operator<<(std::ostream& os, const Arg& a) {
  struct V {
    std::ostream& os;
    void operator()(Node* n) const { os << "%" << (n ? n->name : "<null>"); }
    void operator()(bool b) const { os << (b ? "True" : "False"); }
    void operator()(int64_t i) const { os << i; }
    void operator()(float f) const {
      std::string s = format_float(f);
      if (s.find_first_of(".en") == std::string::npos) s += ".0";
      os << s;
    }
    void operator()(const std::vector<int64_t>& v) const {
      os << "[";
      for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
      os << "]";
    }
  };
  std::visit(V{os}, a);
  return os;
}

std::ostream& operator<<(std::ostream& os, const Node& n) {
  os << "%" << n.name;
  if (n.meta.val && n.meta.val->kind != ValueType::kNone) os << " : " << *n.meta.val;
  os << " = " << node_op_name(n.op) << "[target=" << n.target << "]";
  if (n.op == NodeOp::kPlaceholder) return os;
  os << "(";
  for (size_t i = 0; i < n.args.size(); ++i) os << (i ? ", " : "") << n.args[i];
  return os << ")";
}

const std::vector<StackEntry>& ModuleStack::empty_entries() {
  static const std::vector<StackEntry> none;
  return none;
}

// ----------------------------------------------------------------------------------- Graph

Graph::Graph(const Graph& other) {
  *this = other;
}

Graph& Graph::operator=(const Graph& other) {
  if (this == &other) return *this;
  chunks_.clear();
  head_ = tail_ = insert_before_ = nullptr;
  live_ = 0;
  ns_ = other.ns_;
  if (other.live_) chunks_.push_back({std::make_unique<Node[]>(other.live_), other.live_, 0});
  PtrTable<Node, Node*> map(other.live_);
  for (Node* n = other.head_; n; n = n->next) {
    Node* c = make_node();
    c->op = n->op;
    c->target = n->target;
    c->name = n->name;
    c->meta = n->meta;
    c->fn = n->fn;
    c->args = n->args;
    for (auto& a : c->args)
      if (auto p = std::get_if<Node*>(&a)) {
        Node* const* to = map.find(*p);
        FLATCHECK_INPUT(to, "node %" << n->name << " uses %" << (*p)->name
                                     << ", which is not defined before it in the graph");
        *p = *to;
      }
    map[n] = insert(c);
  }
  return *this;
}

Graph& Graph::operator=(Graph&& other) noexcept {
  if (this == &other) return *this;
  chunks_ = std::move(other.chunks_);
  head_ = std::exchange(other.head_, nullptr);
  tail_ = std::exchange(other.tail_, nullptr);
  insert_before_ = std::exchange(other.insert_before_, nullptr);
  live_ = std::exchange(other.live_, 0);
  ns_ = std::move(other.ns_);
  other.chunks_.clear();
  for (Chunk& c : chunks_)
    for (size_t i = 0; i < c.used; ++i) c.nodes[i].graph = this;  // erased ones too
  return *this;
}

Node* Graph::make_node() {
  if (chunks_.empty() || chunks_.back().used == chunks_.back().size) {
    size_t size = chunks_.empty() ? 8 : 2 * chunks_.back().size;
    chunks_.push_back({std::make_unique<Node[]>(size), size, 0});
  }
  Chunk& c = chunks_.back();
  Node* n = &c.nodes[c.used++];
  n->graph = this;
  return n;
}

Node* Graph::insert(Node* raw) {
  raw->graph = this;
  if (insert_before_) {
    Node* at = insert_before_;
    raw->next = at;
    raw->prev = at->prev;
    if (at->prev)
      at->prev->next = raw;
    else
      head_ = raw;
    at->prev = raw;
  } else {
    raw->prev = tail_;
    if (tail_)
      tail_->next = raw;
    else
      head_ = raw;
    tail_ = raw;
  }
  ++live_;
  return raw;
}

Node* Graph::placeholder(std::string_view name_hint, ValueType type) {
  Node* n = make_node();
  n->op = NodeOp::kPlaceholder;
  n->name = ns_.create_name(target_to_str(name_hint));  // a placeholder's hint is its target
  n->target = n->name;
  n->meta.val = std::move(type);
  return insert(n);
}

Node* Graph::get_attr(std::string target, std::string_view name_hint) {
  Node* n = make_node();
  n->op = NodeOp::kGetAttr;
  n->name = ns_.create_name(name_hint.empty() ? target_to_str(target) : std::string(name_hint));
  n->target = std::move(target);
  return insert(n);
}

Node* Graph::call_function(OpCode op, std::vector<Arg> args, std::string_view name_hint) {
  Node* n = make_node();
  n->op = NodeOp::kCallFunction;
  n->fn = op;
  n->target = std::string(op_info(op).name);
  n->name = ns_.create_name(name_hint.empty() ? target_to_str(n->target) : std::string(name_hint));
  n->args = std::move(args);
  return insert(n);
}

Node* Graph::call_module(std::string target, std::vector<Arg> args, std::string_view name_hint) {
  Node* n = make_node();
  n->op = NodeOp::kCallModule;
  n->name = ns_.create_name(name_hint.empty() ? target_to_str(target) : std::string(name_hint));
  n->target = std::move(target);
  n->args = std::move(args);
  return insert(n);
}

Node* Graph::output(std::vector<Arg> args) {
  Node* n = make_node();
  n->op = NodeOp::kOutput;
  n->name = ns_.create_name("output");
  n->target = "output";
  n->args = std::move(args);
  return insert(n);
}

Node* Graph::create_exact(NodeOp op, std::string target, std::vector<Arg> args, std::string name) {
  OpCode fn = OpCode::kAdd;
  if (op == NodeOp::kCallFunction) {
    auto code = op_by_name(target);
    FLATCHECK_INPUT(code.has_value(), "unknown op '" << target << "'");
    fn = *code;
  }
  FLATCHECK_INPUT(ns_.reserve(name), "duplicate node name '" << name << "'");
  Node* n = make_node();
  n->op = op;
  n->fn = fn;
  n->target = std::move(target);
  n->args = std::move(args);
  n->name = std::move(name);
  return insert(n);
}

void Graph::erase(Node* n) {
  FLATCHECK_CHECK(n && n->graph == this && !n->erased) << "erase of a foreign or dead node";
  if (n->prev)
    n->prev->next = n->next;
  else
    head_ = n->next;
  if (n->next)
    n->next->prev = n->prev;
  else
    tail_ = n->prev;
  n->prev = n->next = nullptr;
  n->erased = true;
  --live_;
  if (fault_on(Fault::kErasedNameReuse)) ns_.release(n->name);
}

void Graph::replace_all_uses(Node* from, Node* to) {
  for (Node* n = head_; n; n = n->next)
    for (auto& a : n->args)
      if (auto p = std::get_if<Node*>(&a); p && *p == from) *p = to;
}

std::unordered_map<const Node*, int> Graph::use_counts() const {
  std::unordered_map<const Node*, int> uses;
  for (Node* n = head_; n; n = n->next)
    for (Node* p : n->node_args()) ++uses[p];
  return uses;
}

std::vector<Node*> Graph::users(const Node* x) const {
  std::vector<Node*> out;
  for (Node* n = head_; n; n = n->next) {
    for (Node* p : n->node_args())
      if (p == x) {
        out.push_back(n);
        break;
      }
  }
  return out;
}

std::vector<Arg> copy_body(Graph& dst, Node* before, const Graph& body,
                           std::unordered_map<const Node*, Arg>& env, const std::string& prefix,
                           const std::function<void(const Node&, Node*)>& on_copy) {
  Graph::InsertingBefore at(dst, before);
  for (Node* n = body.first(); n; n = n->next) {
    if (n->op == NodeOp::kPlaceholder) continue;
    std::vector<Arg> args = n->args;
    for (auto& a : args)
      if (auto q = std::get_if<Node*>(&a)) a = env.at(*q);
    if (n->op == NodeOp::kOutput) return args;
    Node* c = nullptr;
    switch (n->op) {
      case NodeOp::kGetAttr:
        c = dst.get_attr(prefix + n->target, n->name);
        break;
      case NodeOp::kCallModule:
        c = dst.call_module(prefix + n->target, std::move(args), n->name);
        break;
      default:
        c = dst.call_function(n->fn, std::move(args), n->name);
        break;
    }
    if (on_copy) on_copy(*n, c);
    env[n] = c;
  }
  return {};
}

UsersIndex::UsersIndex(const Graph& g) {
  for (Node* n = g.first(); n; n = n->next)
    for (Node* in : n->node_args()) {
      auto& v = users_[in];
      if (v.empty() || v.back() != n) v.push_back(n);
    }
}

void UsersIndex::add(Node* n) {
  for (Node* in : n->node_args()) {
    auto& v = users_[in];
    if (v.empty() || v.back() != n) v.push_back(n);
  }
}

const std::vector<Node*>& UsersIndex::users(const Node* n) const {
  auto it = users_.find(n);
  return it == users_.end() ? none_ : it->second;
}

void UsersIndex::replace_uses(Node* from, Node* to) {
  auto it = users_.find(from);
  if (it == users_.end()) return;
  std::vector<Node*> moved = std::move(it->second);
  users_.erase(it);
  auto& dst = users_[to];
  for (Node* u : moved) {
    for (auto& a : u->args)
      if (auto p = std::get_if<Node*>(&a); p && *p == from) *p = to;
    dst.push_back(u);
  }
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(live_);
  for (Node* n = head_; n; n = n->next) out.push_back(n);
  return out;
}

std::vector<Node*> Graph::placeholders() const {
  std::vector<Node*> out;
  for (Node* n = head_; n; n = n->next)
    if (n->op == NodeOp::kPlaceholder) out.push_back(n);
  return out;
}

Node* Graph::output_node() const {
  for (Node* n = tail_; n; n = n->prev)
    if (n->op == NodeOp::kOutput) return n;
  return nullptr;
}

Node* Graph::find(std::string_view name) const {
  for (Node* n = head_; n; n = n->next)
    if (n->name == name) return n;
  return nullptr;
}

std::ostream& operator<<(std::ostream& os, const Graph& g) {
  os << "graph(";
  bool first = true;
  for (Node* p : g.placeholders()) {
    os << (first ? "" : ", ") << "%" << p->name;
    first = false;
  }
  os << "):\n";
  for (Node* n = g.first(); n; n = n->next) {
    if (n->op == NodeOp::kPlaceholder) continue;
    if (n->op == NodeOp::kOutput) {
      os << "    return (";
      for (size_t i = 0; i < n->args.size(); ++i) os << (i ? ", " : "") << n->args[i];
      os << ")\n";
      continue;
    }
    os << "    " << *n << "\n";
  }
  return os;
}

// ---------------------------------------------------------------------------------- Module

Module* Module::submodule(std::string_view path) const {
  const Module* m = this;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    std::string part(path.substr(start, dot == std::string_view::npos ? path.npos : dot - start));
    auto it = m->children.find(part);
    if (it == m->children.end()) return nullptr;
    m = it->second.get();
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return const_cast<Module*>(m);
}

namespace {
// Splits "a.b.w" into the owner module and the last component.
const Module* attr_owner(const Module& root, std::string_view path, std::string* last) {
  size_t dot = path.rfind('.');
  if (dot == std::string_view::npos) {
    *last = std::string(path);
    return &root;
  }
  *last = std::string(path.substr(dot + 1));
  return root.submodule(path.substr(0, dot));
}
}  // namespace

TensorPtr Module::attribute(std::string_view path, bool* is_buffer) const {
  std::string last;
  const Module* owner = attr_owner(*this, path, &last);
  if (!owner) return nullptr;
  if (auto it = owner->params.find(last); it != owner->params.end()) {
    if (is_buffer) *is_buffer = false;
    return it->second;
  }
  if (auto it = owner->buffers.find(last); it != owner->buffers.end()) {
    if (is_buffer) *is_buffer = true;
    return it->second;
  }
  return nullptr;
}

std::shared_ptr<const Engine> Module::engine(std::string_view path) const {
  std::string last;
  const Module* owner = attr_owner(*this, path, &last);
  if (!owner) return nullptr;
  auto it = owner->engines.find(last);
  return it == owner->engines.end() ? nullptr : it->second;
}

std::shared_ptr<Module> clone_module(const Module& m, bool share_state) {
  std::unordered_map<const Module*, std::shared_ptr<Module>> done;
  std::unordered_map<const Tensor*, TensorPtr> tensors;
  auto copy_state = [&](const TensorPtr& t) {
    if (share_state) return t;
    auto& slot = tensors[t.get()];
    if (!slot) slot = std::make_shared<Tensor>(*t);
    return slot;
  };
  std::function<std::shared_ptr<Module>(const Module&)> rec = [&](const Module& src) {
    if (auto it = done.find(&src); it != done.end()) return it->second;
    auto c = std::make_shared<Module>();
    done[&src] = c;
    c->type = src.type;
    c->graph = src.graph;
    c->engines = src.engines;
    for (const auto& [k, v] : src.params) c->params[k] = copy_state(v);
    for (const auto& [k, v] : src.buffers) c->buffers[k] = copy_state(v);
    for (const auto& [k, v] : src.children) c->children[k] = rec(*v);
    return c;
  };
  return rec(m);
}

std::ostream& operator<<(std::ostream& os, const Module& m) {
  std::function<void(const Module&, const std::string&, int)> rec =
      [&](const Module& mod, const std::string& path, int indent) {
        std::string pad(static_cast<size_t>(indent), ' ');
        os << pad << "module " << (path.empty() ? "<root>" : path) << " : " << mod.type << "\n";
        for (const auto& [k, v] : mod.params) os << pad << "  param " << k << " = " << *v << "\n";
        for (const auto& [k, v] : mod.buffers) os << pad << "  buffer " << k << " = " << *v << "\n";
        for (const auto& [k, v] : mod.engines) os << pad << "  engine " << k << "\n";
        std::ostringstream gs;
        gs << mod.graph;
        std::string line;
        std::istringstream in(gs.str());
        while (std::getline(in, line)) os << pad << "  " << line << "\n";
        for (const auto& [name, c] : mod.children) rec(*c, join_fqn(path, name), indent + 2);
      };
  rec(m, "", 0);
  return os;
}

// ------------------------------------------------------------------------ equality and hash

namespace {

// A canonical token list for a graph, for graph_hash (graph_equal compares the same fields
// node by node).
std::vector<std::string> graph_tokens(const Graph& g, GraphEq eq) {
  std::unordered_map<const Node*, size_t> index;
  std::vector<std::string> toks;
  size_t i = 0;
  for (Node* n = g.first(); n; n = n->next, ++i) {
    index[n] = i;
    std::ostringstream os;
    os << node_op_name(n->op) << "|";
    if ((n->op != NodeOp::kPlaceholder || eq.names) &&
        (n->op != NodeOp::kCallModule || eq.call_targets))
      os << n->target;
    if (eq.names) os << "|" << n->name;
    if (n->op == NodeOp::kPlaceholder && n->meta.val) os << "|" << *n->meta.val;
    os << "(";
    for (const auto& a : n->args) {
      if (auto p = std::get_if<Node*>(&a)) {
        os << "#" << index.at(*p);
      } else if (!eq.constants) {
        os << "c" << const_arg_kind(a);
      } else if (auto f = std::get_if<float>(&a)) {
        os << "f" << float_bits(*f);
      } else {
        os << a;
      }
      os << ",";
    }
    os << ")";
    toks.push_back(os.str());
  }
  return toks;
}

}  // namespace

namespace {

// Two arguments alike under `eq`: nodes at the same positions, constants of one kind with the
// same value (floats by their bits), or, without `eq.constants`, of one kind.
bool args_alike(const Arg& x, const Arg& y, const PtrTable<Node, size_t>& xi,
                const PtrTable<Node, size_t>& yi, GraphEq eq) {
  if (x.index() != y.index()) return false;
  if (auto p = std::get_if<Node*>(&x)) {
    const size_t* i = xi.find(*p);
    const size_t* j = yi.find(std::get<Node*>(y));
    return i && j && *i == *j;
  }
  if (!eq.constants) return true;
  if (auto f = std::get_if<float>(&x)) return float_bits(*f) == float_bits(std::get<float>(y));
  return x == y;
}

}  // namespace

// Node by node, what graph_tokens writes for each compared without writing it.
bool graph_equal(const Graph& a, const Graph& b, GraphEq eq) {
  if (a.size() != b.size()) return false;
  PtrTable<Node, size_t> ai(a.size()), bi(b.size());
  size_t i = 0;
  for (const Node *x = a.first(), *y = b.first(); x || y; x = x->next, y = y->next, ++i) {
    if (!x || !y || x->op != y->op) return false;
    if ((x->op != NodeOp::kPlaceholder || eq.names) &&
        (x->op != NodeOp::kCallModule || eq.call_targets) && x->target != y->target)
      return false;
    if (eq.names && x->name != y->name) return false;
    if (x->op == NodeOp::kPlaceholder && x->meta.val != y->meta.val) return false;
    if (x->args.size() != y->args.size()) return false;
    for (size_t k = 0; k < x->args.size(); ++k)
      if (!args_alike(x->args[k], y->args[k], ai, bi, eq)) return false;
    ai[x] = i;
    bi[y] = i;
  }
  return true;
}

size_t graph_hash(const Graph& g, GraphEq eq) {
  size_t h = 1469598103934665603ull;
  for (const auto& t : graph_tokens(g, eq))
    h = (h ^ std::hash<std::string>{}(t)) * 1099511628211ull;
  return h;
}

void for_each_module(Module& root, const std::function<void(const std::string&, Module&)>& fn) {
  std::unordered_set<const Module*> seen;
  std::function<void(Module&, const std::string&)> walk = [&](Module& m, const std::string& p) {
    if (!seen.insert(&m).second) return;
    fn(p, m);
    for (auto& [k, c] : m.children) walk(*c, join_fqn(p, k));
  };
  walk(root, "");
}

}  // namespace flatcheck
