// Module trees in the file format: graphs, state with aliases, engines as checksummed blobs.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/base/names.h"
#include "core/ir/analysis.h"
#include "core/ir/namespace.h"
#include "core/serialize/fields.h"
#include "core/serialize/serialize.h"

namespace flatcheck {
using namespace serial;
namespace {

// The loader's size budgets count in saturating arithmetic: a count stops at kSaturated.
constexpr int64_t kSaturated = int64_t{1} << 60;
int64_t saturating_add(int64_t a, int64_t b) {
  return std::min(kSaturated, a + std::min(kSaturated, b));
}

// ------------------------------------------------------------------------------- graphs

// Keys in increasing order: args, name, op, origin, stack, target, val.
void write_node(JsonWriter& w, const Node& n) {
  w.begin_object();
  if (n.op != NodeOp::kPlaceholder) {
    w.key("args");
    w.begin_array();
    for (const auto& a : n.args) write_arg(w, a);
    w.end();
  }
  w.key("name");
  w.value(n.name);
  w.key("op");
  w.value(node_op_name(n.op));
  if (!n.meta.origin.empty()) {
    w.key("origin");
    w.value(n.meta.origin);
  }
  if (!n.meta.nn_module_stack.empty()) {
    w.key("stack");
    w.begin_array();
    for (const auto& e : n.meta.nn_module_stack) {
      w.begin_array();
      w.value(e.key);
      w.value(e.fqn);
      w.value(e.type);
      w.end();
    }
    w.end();
  }
  w.key("target");
  w.value(n.target);
  if (n.op == NodeOp::kPlaceholder && n.meta.val) {
    w.key("val");
    write_type(w, *n.meta.val);
  }
  w.end();
}

void write_graph(JsonWriter& w, const Graph& g) {
  w.begin_object();
  w.key("nodes");
  w.begin_array();
  for (Node* n = g.first(); n; n = n->next) write_node(w, *n);
  w.end();
  w.end();
}

// A node's arguments: node references by name (defined before this use), booleans, ints,
// floats and int lists.
std::vector<Arg> args_from_json(JsonRef j, const JsonPath& ap,
                                const std::unordered_map<std::string_view, Node*>& by_name,
                                const LoadBudget& b) {
  std::vector<Arg> args;
  as_array(j, ap, b.limits.max_args);
  for (size_t k = 0; k < j.size(); ++k) {
    JsonRef a = j[k];
    JsonPath akp = idx_path(ap, k);
    if (a.is_string()) {
      auto ref = by_name.find(a.str());
      if (ref == by_name.end())
        fail(akp, "node \"" + std::string(a.str()) + "\" is not defined before this use");
      args.emplace_back(ref->second);
    } else if (a.is_boolean()) {
      args.emplace_back(a.boolean());
    } else if (a.is_number_integer()) {
      args.emplace_back(as_int(a, akp, INT64_MIN / 2, INT64_MAX / 2));
    } else if (a.is_number_float() || a.is_object()) {
      args.emplace_back(float_from_json(a, akp));
    } else if (a.is_array()) {
      as_array(a, akp, b.limits.max_list_length);
      std::vector<int64_t> ints;
      for (size_t q = 0; q < a.size(); ++q)
        ints.push_back(as_int(a[q], idx_path(akp, q), -(int64_t{1} << 40), int64_t{1} << 40));
      args.emplace_back(std::move(ints));
    } else {
      fail(akp, "unsupported argument " + describe(a));
    }
  }
  return args;
}

// nn_module_stack: [key, fqn, type] entries, outermost first.
std::vector<StackEntry> stack_from_json(JsonRef j, const JsonPath& sp, const LoadLimits& lim) {
  std::vector<StackEntry> stack;
  as_array(j, sp, static_cast<size_t>(lim.max_module_depth));
  for (size_t k = 0; k < j.size(); ++k) {
    JsonPath ep = idx_path(sp, k);
    JsonRef e = as_array(j[k], ep, 3);
    if (e.size() != 3) fail(ep, "expected [key, fqn, type]");
    stack.push_back({as_string(e[0], idx_path(ep, 0), lim.max_path_length),
                     as_string(e[1], idx_path(ep, 1), lim.max_path_length),
                     as_string(e[2], idx_path(ep, 2), lim.max_name_length)});
  }
  return stack;
}

void graph_from_json(JsonRef j, const JsonPath& path, Graph& g, LoadBudget& b) {
  as_object(j, path, {"nodes"});
  JsonPath npath = key_path(path, "nodes");
  JsonRef nodes = as_array(member(j, "nodes", path), npath, b.limits.max_nodes);
  // Keyed by the nodes' own names (a node's name and address never change once created).
  std::unordered_map<std::string_view, Node*> by_name;
  by_name.reserve(nodes.size());
  ModuleStack last_stack;
  for (size_t i = 0; i < nodes.size(); ++i) {
    JsonPath p = idx_path(npath, i);
    if (++b.nodes > b.limits.max_nodes)
      fail(p, "more than " + std::to_string(b.limits.max_nodes) + " nodes in the document");
    JsonRef nj = as_object(nodes[i], p, {"name", "op", "target", "args", "val", "stack", "origin"});
    std::string name =
        as_string(member(nj, "name", p), key_path(p, "name"), b.limits.max_name_length);
    check_name(name, key_path(p, "name"));
    std::string op_s = as_string(member(nj, "op", p), key_path(p, "op"), 32);
    auto op = node_op_by_name(op_s);
    if (!op) fail(key_path(p, "op"), "unknown node op \"" + op_s + "\"");
    std::string target =
        as_string(member(nj, "target", p), key_path(p, "target"), b.limits.max_path_length);
    if (*op == NodeOp::kCallFunction && !op_by_name(target))
      fail(key_path(p, "target"), "unknown op \"" + target + "\"");
    std::vector<Arg> args;
    if (auto it = nj.find("args")) {
      args = args_from_json(*it, key_path(p, "args"), by_name, b);
    } else if (*op != NodeOp::kPlaceholder) {
      fail(p, "missing key 'args'");
    }
    if (*op == NodeOp::kPlaceholder && !args.empty())
      fail(key_path(p, "args"), "placeholder with arguments");
    Node* n;
    if (fault_on(Fault::kReloadRenames)) {
      // Fault: names are re-created through the namespace from the target, and references
      // are resolved through the new names.
      std::string hint = *op == NodeOp::kCallFunction ? target : name;
      std::string fresh = g.ns().create_name(hint);
      g.ns().release(fresh);
      n = g.create_exact(*op, target, std::move(args), fresh);
      by_name[n->name] = n;
    } else {
      if (by_name.count(name)) fail(key_path(p, "name"), "duplicate node name \"" + name + "\"");
      n = g.create_exact(*op, target, std::move(args), name);
      by_name[n->name] = n;
    }
    if (auto it = nj.find("val")) n->meta.val = type_from_json(*it, key_path(p, "val"), b.limits);
    if (*op == NodeOp::kPlaceholder && !n->meta.val) fail(p, "placeholder without \"val\"");
    if (auto it = nj.find("stack")) {
      // Nodes of one call carry one stack: a node whose stack equals the last one read shares it.
      std::vector<StackEntry> stack = stack_from_json(*it, key_path(p, "stack"), b.limits);
      if (stack != last_stack.entries()) last_stack = std::move(stack);
      n->meta.nn_module_stack = last_stack;
    }
    if (auto it = nj.find("origin"))
      n->meta.origin = as_string(*it, key_path(p, "origin"), b.limits.max_origin_length);
  }
}

// Who owns shared state and shared modules: the first path in the order params, buffers,
// children (by name, depth first). Every later path is written as {"alias": <owner>}.
struct Owners {
  std::unordered_map<const Tensor*, std::string> tensors;
  std::unordered_map<const Module*, std::string> modules;

  void assign(const Module& m, const std::string& path) {
    if (!modules.emplace(&m, path).second) return;
    for (const auto& [k, t] : m.params) tensors.emplace(t.get(), join_fqn(path, k));
    for (const auto& [k, t] : m.buffers) tensors.emplace(t.get(), join_fqn(path, k));
    for (const auto& [k, v] : m.children) assign(*v, join_fqn(path, k));
  }
};

void write_alias(JsonWriter& w, const std::string& owner) {
  w.begin_object();
  w.key("alias");
  w.value(owner);
  w.end();
}

void write_state_map(JsonWriter& w, const std::map<std::string, TensorPtr>& m, const Owners& owners,
                     const std::string& prefix) {
  w.begin_object();
  for (const auto& [k, t] : m) {
    w.key(k);
    const std::string& owner = owners.tensors.at(t.get());
    if (owner != join_fqn(prefix, k))
      write_alias(w, owner);
    else
      write_tensor(w, *t);
  }
  w.end();
}

struct ModuleWriter {
  JsonWriter& w;
  Owners owners;

  ModuleWriter(JsonWriter& writer, const Module& root) : w(writer) { owners.assign(root, ""); }

  // Keys in increasing order: buffers, children, engines, graph, params, type.
  void write(const Module& m, const std::string& path) {
    if (const std::string& owner = owners.modules.at(&m); owner != path)
      return write_alias(w, owner);
    w.begin_object();
    if (!m.buffers.empty()) {
      w.key("buffers");
      write_state_map(w, m.buffers, owners, path);
    }
    if (!m.children.empty()) {
      w.key("children");
      w.begin_object();
      for (const auto& [k, v] : m.children) {
        w.key(k);
        write(*v, join_fqn(path, k));
      }
      w.end();
    }
    if (!m.engines.empty()) {
      w.key("engines");
      w.begin_object();
      for (const auto& [k, v] : m.engines) {
        JsonWriter blob_writer;
        write_engine(blob_writer, *v);
        std::string blob = blob_writer.take();
        char sum[32];
        std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(fnv1a64(blob)));
        w.key(k);
        w.begin_object();
        w.key("blob");
        w.value_bytes(blob);
        w.key("checksum");
        w.value(sum);
        w.end();
      }
      w.end();
    }
    w.key("graph");
    write_graph(w, m.graph);
    if (!m.params.empty()) {
      w.key("params");
      write_state_map(w, m.params, owners, path);
    }
    w.key("type");
    w.value(m.type);
    w.end();
  }
};

struct ModuleReader {
  LoadBudget& b;
  std::map<std::string, TensorPtr> tensors;                // fqn -> tensor, for aliases
  std::map<std::string, std::shared_ptr<Module>> modules;  // path -> module, for aliases
  std::set<std::string> param_fqns;                        // which tensors are parameters
  std::vector<std::pair<std::shared_ptr<Module>, std::string>> to_lint;

  void read_state(JsonRef j, const JsonPath& jpath, const std::string& prefix,
                  std::map<std::string, TensorPtr>& out, bool params) {
    as_object(j, jpath);
    for (const auto& [key, v] : j.items()) {
      std::string k(key);
      JsonPath p = key_path(jpath, k);
      check_name(k, p, b.limits.max_name_length);
      std::string fqn = join_fqn(prefix, k);
      if (v.is_object() && v.contains("alias")) {
        as_object(v, p, {"alias"});
        std::string target =
            as_string(v.at("alias"), key_path(p, "alias"), b.limits.max_path_length);
        auto it = tensors.find(target);
        if (it == tensors.end())
          fail(key_path(p, "alias"), "alias \"" + target + "\" is not defined earlier");
        // One tensor is a parameter or a buffer, not both: export lifts it once, as one kind.
        if (param_fqns.count(target) != static_cast<size_t>(params))
          fail(key_path(p, "alias"), "a " + std::string(params ? "parameter" : "buffer") +
                                         " cannot alias the " + (params ? "buffer" : "parameter") +
                                         " \"" + target + "\"");
        out[k] = it->second;
      } else {
        out[k] = std::make_shared<Tensor>(tensor_from_json(v, p, b));
      }
      tensors[fqn] = out[k];
      if (params) param_fqns.insert(fqn);
    }
  }

  std::shared_ptr<Module> read(JsonRef j, const JsonPath& jpath, const std::string& path,
                               int depth) {
    if (depth > b.limits.max_module_depth)
      fail(jpath, "modules nested deeper than " + std::to_string(b.limits.max_module_depth));
    as_object(j, jpath, {"type", "graph", "params", "buffers", "engines", "children", "alias"});
    if (j.contains("alias")) {
      if (j.size() != 1) fail(jpath, "an alias has no other keys");
      std::string target =
          as_string(j.at("alias"), key_path(jpath, "alias"), b.limits.max_path_length);
      auto it = modules.find(target);
      if (it == modules.end())
        fail(key_path(jpath, "alias"), "alias \"" + target + "\" is not defined earlier");
      return it->second;
    }
    auto m = std::make_shared<Module>();
    m->type =
        as_string(member(j, "type", jpath), key_path(jpath, "type"), b.limits.max_name_length);
    if (auto it = j.find("params"))
      read_state(*it, key_path(jpath, "params"), path, m->params, true);
    if (auto it = j.find("buffers"))
      read_state(*it, key_path(jpath, "buffers"), path, m->buffers, false);
    if (auto it = j.find("engines")) {
      JsonPath ep = key_path(jpath, "engines");
      as_object(*it, ep);
      for (const auto& [key, v] : it->items()) {
        std::string k(key);
        check_name(k, key_path(ep, k), b.limits.max_name_length);
        m->engines[k] = std::make_shared<Engine>(read_engine_blob(v, key_path(ep, k)));
      }
    }
    if (auto it = j.find("children")) {
      JsonPath cp = key_path(jpath, "children");
      as_object(*it, cp);
      for (const auto& [key, v] : it->items()) {
        std::string k(key);
        JsonPath kp = key_path(cp, k);
        if (k.size() > b.limits.max_name_length || !is_module_name(k))
          fail(kp, "'" + k + "' is not a legal child name (letters, digits and '_')");
        m->children[k] = read(v, kp, join_fqn(path, k), depth + 1);
      }
    }
    JsonPath gp = key_path(jpath, "graph");
    graph_from_json(member(j, "graph", jpath), gp, m->graph, b);
    to_lint.emplace_back(m, jpath.str());
    // Aliases may name this module only once its subtree is read: an alias can never point
    // at one of its own ancestors, so the module tree has no cycle.
    modules[path] = m;
    return m;
  }

  Engine read_engine_blob(JsonRef j, const JsonPath& path) {
    as_object(j, path, {"blob", "checksum"});
    JsonPath bp = key_path(path, "blob");
    std::string text = as_string(member(j, "blob", path), bp, b.limits.max_blob_bytes * 4 / 3 + 8);
    std::string blob = base64_decode(text, bp);
    if (blob.size() > b.limits.max_blob_bytes)
      fail(bp, std::to_string(blob.size()) + " bytes, over the limit of " +
                   std::to_string(b.limits.max_blob_bytes));
    std::string sum = as_string(member(j, "checksum", path), key_path(path, "checksum"), 16);
    char want[32];
    std::snprintf(want, sizeof want, "%016llx", static_cast<unsigned long long>(fnv1a64(blob)));
    if (sum != want)
      fail(key_path(path, "checksum"),
           "checksum " + sum + " does not match the blob (" + want + ")");
    JsonDoc ej;
    try {
      ej = parse_doc(blob, b.limits);
    } catch (const InputError& e) {
      fail(bp, std::string("the engine document: ") + e.what());
    }
    return engine_from_json(ej.root(), bp, b);
  }

  // A budget's count over its limit fails with the count and the limit.
  void over_limit(const JsonPath& jpath, int64_t v, size_t limit, const char* what) {
    if (v > static_cast<int64_t>(limit))
      fail(jpath, std::string(what) + " " + std::to_string(v) + ", over the limit of " +
                      std::to_string(limit));
  }

  // The expansion budget, computed before any work starts: the program's size once every call
  // is inlined (what export builds), its module calls, the tensor elements one run produces
  // and the multiply-adds of matmul and sum. Computed once per module object (the tree is a
  // DAG: linear), saturating, and bounded by LoadLimits. Needs the inferred types.
  void check_expansion(const Module& root, const JsonPath& jpath) {
    struct Size {
      int64_t nodes = 0, calls = 0, elements = 0, flops = 0;
    };
    const auto add = saturating_add;
    auto mul = [](int64_t a, int64_t b) {
      return a == 0 || b == 0 ? 0 : (a > kSaturated / b ? kSaturated : a * b);
    };
    std::unordered_map<const Module*, Size> memo;
    std::function<Size(const Module&)> size = [&](const Module& m) -> Size {
      if (auto it = memo.find(&m); it != memo.end()) return it->second;
      Size s;
      for (Node* n = m.graph.first(); n; n = n->next) {
        s.nodes = add(s.nodes, 1);
        if (n->meta.val) {
          const ValueType& t = *n->meta.val;
          if (t.kind == ValueType::kTensor) s.elements = add(s.elements, numel(t.shape));
          for (const auto& e : t.elems) s.elements = add(s.elements, numel(e));
        }
        if (n->op == NodeOp::kCallFunction && (n->fn == OpCode::kMatmul || n->fn == OpCode::kSum)) {
          auto in = std::get_if<Node*>(&n->args.at(0));
          if (in && (*in)->meta.val && (*in)->meta.val->kind == ValueType::kTensor) {
            const Shape& a = (*in)->meta.val->shape;
            int64_t f = numel(a);
            if (n->fn == OpCode::kMatmul && a.size() == 2 && n->meta.val &&
                n->meta.val->shape.size() == 2)
              f = mul(mul(a[0], a[1]), n->meta.val->shape[1]);
            s.flops = add(s.flops, f);
          }
        }
        if (n->op != NodeOp::kCallModule) continue;
        const Module* child = m.submodule(n->target);
        if (!child) continue;  // lint reports it
        Size c = size(*child);
        s.nodes = add(s.nodes, c.nodes);
        s.calls = add(s.calls, add(c.calls, 1));
        s.elements = add(s.elements, c.elements);
        s.flops = add(s.flops, c.flops);
      }
      return memo[&m] = s;
    };
    Size s = size(root);
    auto over = [&](int64_t v, size_t limit, const char* what) {
      over_limit(jpath, v, limit, what);
    };
    over(s.nodes, b.limits.max_inlined_nodes, "the program inlines to this many nodes:");
    over(s.calls, b.limits.max_calls, "one run makes this many module calls:");
    over(s.elements, b.limits.max_run_elements, "one run produces this many tensor elements:");
    over(s.flops, b.limits.max_run_flops, "one run does this many multiply-adds:");
  }

  // The structural budget, checked before type inference or any other walk: the module and
  // state paths with every alias expanded (what a walk over FQNs visits: export's, the
  // reach's), the nodes once every call is inlined and the module calls of one run. Computed
  // once per module object, saturating: linear in the document, whatever its aliases.
  void check_structure(const Module& root, const JsonPath& jpath) {
    struct Count {
      int64_t paths = 0, nodes = 0, calls = 0;
    };
    const auto add = saturating_add;
    std::unordered_map<const Module*, Count> memo;
    std::function<Count(const Module&, int)> count = [&](const Module& m, int depth) -> Count {
      if (auto it = memo.find(&m); it != memo.end()) return it->second;
      Count c;
      c.paths = 1 + static_cast<int64_t>(m.params.size() + m.buffers.size());
      if (depth <= b.limits.max_module_depth)
        for (const auto& [_, child] : m.children)
          c.paths = add(c.paths, count(*child, depth + 1).paths);
      for (Node* n = m.graph.first(); n; n = n->next) {
        c.nodes = add(c.nodes, 1);
        if (n->op != NodeOp::kCallModule) continue;
        const Module* child = m.submodule(n->target);
        if (!child || depth > b.limits.max_module_depth) continue;  // lint reports it
        Count k = count(*child, depth + 1);
        c.nodes = add(c.nodes, k.nodes);
        c.calls = add(c.calls, add(k.calls, 1));
      }
      return memo[&m] = c;
    };
    Count c = count(root, 0);
    auto over = [&](int64_t v, size_t limit, const char* what) {
      over_limit(jpath, v, limit, what);
    };
    over(c.paths, b.limits.max_module_paths, "module and state paths, aliases expanded:");
    over(c.nodes, b.limits.max_inlined_nodes, "the program inlines to this many nodes:");
    over(c.calls, b.limits.max_calls, "one run makes this many module calls:");
  }

  // Lints every graph once all attributes exist; errors name the module's JSON path.
  void lint_all() {
    for (auto& [m, jpath] : to_lint) {
      try {
        lint_graph(m->graph, m.get(), "");
      } catch (const InputError& e) {
        const JsonPath module_path(jpath);
        fail(key_path(module_path, "graph"), e.what());
      }
    }
  }
};

}  // namespace

void write_module(JsonWriter& w, const Module& m) {
  ModuleWriter(w, m).write(m, "");
}

std::shared_ptr<Module> module_from_json(JsonRef j, const JsonPath& path, LoadBudget& b) {
  ModuleReader r{b, {}, {}, {}, {}};
  auto m = r.read(j, path, "", 0);
  r.lint_all();
  r.check_structure(*m, path);
  try {
    infer_types(*m);
  } catch (const InputError& e) {
    fail(path, e.what());
  }
  r.check_expansion(*m, path);
  return m;
}

namespace {

void write_module_document(JsonWriter& w, const Module& m) {
  w.begin_object();
  w.key("format");
  w.value("flatcheck-module");
  w.key("module");
  write_module(w, m);
  w.key("version");
  w.value(kFormatVersion);
  w.end();
}

}  // namespace

std::string save_module(const Module& m, bool compact) {
  JsonWriter w(compact);
  write_module_document(w, m);
  return w.take();
}

std::shared_ptr<Module> load_module(std::string_view text, const LoadLimits& limits) {
  JsonDoc doc = parse_doc(text, limits);
  JsonRef j = doc.root();
  check_header(j, "flatcheck-module");
  as_object(j, "", {"format", "version", "module"});
  LoadBudget b{limits, 0, 0};
  return module_from_json(member(j, "module", ""), "/module", b);
}

}  // namespace flatcheck
