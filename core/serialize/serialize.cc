// The JSON format: writers produce canonical documents; readers validate as they go and name
// the JSON path of anything they reject. See docs/format.md.
#include "core/serialize/serialize.h"
#include "core/base/names.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/base/faults.h"
#include "core/base/check.h"
#include "core/ir/analysis.h"

namespace flatcheck {
namespace {

// ------------------------------------------------------------------------- reading helpers

std::string describe(const Json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

[[noreturn]] void fail(const std::string& path, const std::string& msg) {
  throw InputError((path.empty() ? std::string("/") : path) + ": " + msg);
}

std::string key_path(const std::string& path, std::string_view key) {
  // JSON pointer escaping: ~ -> ~0, / -> ~1.
  std::string k;
  for (char c : key) k += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return path + "/" + k;
}
std::string idx_path(const std::string& path, size_t i) {
  return path + "/" + std::to_string(i);
}

const Json& as_object(const Json& j, const std::string& path, std::set<std::string> allowed = {}) {
  if (!j.is_object()) fail(path, "expected an object, got " + describe(j));
  if (!allowed.empty())
    for (const auto& [k, _] : j.items())
      if (!allowed.count(k)) fail(key_path(path, k), "unknown key");
  return j;
}

const Json& as_array(const Json& j, const std::string& path, size_t max_size) {
  if (!j.is_array()) fail(path, "expected an array, got " + describe(j));
  if (j.size() > max_size)
    fail(path, "array of " + std::to_string(j.size()) + " entries is over the limit of " +
                   std::to_string(max_size));
  return j;
}

const Json& member(const Json& j, const char* key, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end()) fail(path.empty() ? "/" : path, std::string("missing key '") + key + "'");
  return *it;
}

std::string as_string(const Json& j, const std::string& path, size_t max_len) {
  if (!j.is_string()) fail(path, "expected a string, got " + describe(j));
  const auto& s = j.get_ref<const std::string&>();
  if (s.size() > max_len) fail(path, "string longer than " + std::to_string(max_len));
  return s;
}

int64_t as_int(const Json& j, const std::string& path, int64_t lo, int64_t hi) {
  if (!j.is_number_integer()) fail(path, "expected an integer, got " + describe(j));
  if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(hi))
    fail(path, "integer " + describe(j) + " out of range");
  int64_t v = j.get<int64_t>();
  if (v < lo || v > hi)
    fail(path, "integer " + std::to_string(v) + " out of range [" + std::to_string(lo) + ", " +
                   std::to_string(hi) + "]");
  return v;
}

void check_name(const std::string& name, const std::string& path) {
  if (name.empty() || sanitize_name(name) != name)
    fail(path, "'" + name + "' is not a legal node name");
}

void check_header(const Json& j, const char* format) {
  as_object(j, "");
  std::string f = as_string(member(j, "format", ""), "/format", 64);
  if (f != format) fail("/format", "expected \"" + std::string(format) + "\", got \"" + f + "\"");
  int64_t v = as_int(member(j, "version", ""), "/version", 0, 1 << 20);
  if (v != kFormatVersion)
    fail("/version", "unsupported version " + std::to_string(v) + " (this build reads " +
                         std::to_string(kFormatVersion) + ")");
}

// ------------------------------------------------------------------------------- scalars

Json float_to_json(float f) {
  if (std::isfinite(f)) return static_cast<double>(f);
  if (std::isinf(f)) return Json{{"float", f > 0 ? "inf" : "-inf"}};
  char buf[32];
  std::snprintf(buf, sizeof buf, "nan:0x%08x", float_bits(f));
  return Json{{"float", buf}};
}

float float_from_json(const Json& j, const std::string& path) {
  if (j.is_number_float()) {
    double d = j.get<double>();
    if (!std::isfinite(d) || std::fabs(d) > 3.4028234663852886e38)
      fail(path, "float " + describe(j) + " out of float32 range");
    return static_cast<float>(d);
  }
  as_object(j, path, {"float"});
  std::string s = as_string(member(j, "float", path), key_path(path, "float"), 32);
  if (s == "inf") return INFINITY;
  if (s == "-inf") return -INFINITY;
  unsigned bits = 0;
  char tail = 0;
  if (s.rfind("nan:0x", 0) == 0 && s.size() == 14 &&
      std::sscanf(s.c_str() + 6, "%8x%c", &bits, &tail) == 1 && std::isnan(bits_float(bits)))
    return bits_float(bits);
  fail(key_path(path, "float"),
       "expected \"inf\", \"-inf\" or \"nan:0x<8 hex digits>\", got \"" + s + "\"");
}

Json shape_to_json(const Shape& s) {
  return Json(s);
}

Shape shape_from_json(const Json& j, const std::string& path, const LoadLimits& lim) {
  as_array(j, path, 8);
  Shape s;
  int64_t n = 1;
  for (size_t i = 0; i < j.size(); ++i) {
    int64_t d = as_int(j[i], idx_path(path, i), 0, lim.max_tensor_elements);
    s.push_back(d);
    n *= d;
    if (n > lim.max_tensor_elements)
      fail(path, "shape has more than " + std::to_string(lim.max_tensor_elements) + " elements");
  }
  return s;
}

Json type_to_json(const ValueType& t) {
  Json j{{"kind", std::string(value_kind_name(t.kind))}};
  if (t.kind == ValueType::kTensor) j["shape"] = shape_to_json(t.shape);
  if (t.kind == ValueType::kTuple) {
    Json e = Json::array();
    for (const auto& s : t.elems) e.push_back(shape_to_json(s));
    j["elems"] = e;
  }
  return j;
}

ValueType type_from_json(const Json& j, const std::string& path, const LoadLimits& lim) {
  as_object(j, path, {"kind", "shape", "elems"});
  std::string k = as_string(member(j, "kind", path), key_path(path, "kind"), 16);
  if (k == "tensor")
    return ValueType::tensor(
        shape_from_json(member(j, "shape", path), key_path(path, "shape"), lim));
  if (k == "bool") return ValueType::scalar(ValueType::kBool);
  if (k == "int") return ValueType::scalar(ValueType::kInt);
  if (k == "float") return ValueType::scalar(ValueType::kFloat);
  fail(key_path(path, "kind"), "expected tensor, bool, int or float, got \"" + k + "\"");
}

// ------------------------------------------------------------------------------- tensors

std::string floats_to_le_bytes(const std::vector<float>& v) {
  std::string out(v.size() * 4, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t u = float_bits(v[i]);
    for (int b = 0; b < 4; ++b) out[i * 4 + b] = static_cast<char>((u >> (8 * b)) & 0xff);
  }
  return out;
}

std::vector<float> le_bytes_to_floats(std::string_view s) {
  std::vector<float> v(s.size() / 4);
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t u = 0;
    for (int b = 0; b < 4; ++b) u |= uint32_t{static_cast<unsigned char>(s[i * 4 + b])} << (8 * b);
    v[i] = bits_float(u);
  }
  return v;
}

// ------------------------------------------------------------------------------- graphs

Json arg_to_json(const Arg& a) {
  if (auto p = std::get_if<Node*>(&a)) return (*p)->name;
  if (auto b = std::get_if<bool>(&a)) return *b;
  if (auto i = std::get_if<int64_t>(&a)) return *i;
  if (auto f = std::get_if<float>(&a)) return float_to_json(*f);
  return Json(std::get<std::vector<int64_t>>(a));
}

Json node_to_json(const Node& n) {
  Json j{{"name", n.name}, {"op", std::string(node_op_name(n.op))}, {"target", n.target}};
  if (n.op != NodeOp::kPlaceholder) {
    Json args = Json::array();
    for (const auto& a : n.args) args.push_back(arg_to_json(a));
    j["args"] = args;
  }
  if (n.op == NodeOp::kPlaceholder && n.meta.val) j["val"] = type_to_json(*n.meta.val);
  if (!n.meta.nn_module_stack.empty()) {
    Json st = Json::array();
    for (const auto& e : n.meta.nn_module_stack) st.push_back(Json::array({e.key, e.fqn, e.type}));
    j["stack"] = st;
  }
  if (!n.meta.origin.empty()) j["origin"] = n.meta.origin;
  return j;
}

Json graph_to_json(const Graph& g) {
  Json nodes = Json::array();
  for (Node* n = g.first(); n; n = n->next) nodes.push_back(node_to_json(*n));
  return Json{{"nodes", nodes}};
}

void graph_from_json(const Json& j, const std::string& path, Graph& g, LoadBudget& b) {
  as_object(j, path, {"nodes"});
  std::string npath = key_path(path, "nodes");
  const Json& nodes = as_array(member(j, "nodes", path), npath, b.limits.max_nodes);
  std::unordered_map<std::string, Node*> by_name;
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::string p = idx_path(npath, i);
    if (++b.nodes > b.limits.max_nodes)
      fail(p, "more than " + std::to_string(b.limits.max_nodes) + " nodes in the document");
    const Json& nj =
        as_object(nodes[i], p, {"name", "op", "target", "args", "val", "stack", "origin"});
    std::string name =
        as_string(member(nj, "name", p), key_path(p, "name"), b.limits.max_name_length);
    check_name(name, key_path(p, "name"));
    std::string op_s = as_string(member(nj, "op", p), key_path(p, "op"), 32);
    auto op = node_op_by_name(op_s);
    if (!op) fail(key_path(p, "op"), "unknown node op \"" + op_s + "\"");
    std::string target = as_string(member(nj, "target", p), key_path(p, "target"), 1024);
    if (*op == NodeOp::kCallFunction && !op_by_name(target))
      fail(key_path(p, "target"), "unknown op \"" + target + "\"");
    std::vector<Arg> args;
    if (auto it = nj.find("args"); it != nj.end()) {
      std::string ap = key_path(p, "args");
      as_array(*it, ap, b.limits.max_args);
      for (size_t k = 0; k < it->size(); ++k) {
        const Json& a = (*it)[k];
        std::string akp = idx_path(ap, k);
        if (a.is_string()) {
          auto ref = by_name.find(a.get<std::string>());
          if (ref == by_name.end())
            fail(akp, "node \"" + a.get<std::string>() + "\" is not defined before this use");
          args.emplace_back(ref->second);
        } else if (a.is_boolean()) {
          args.emplace_back(a.get<bool>());
        } else if (a.is_number_integer()) {
          args.emplace_back(as_int(a, akp, INT64_MIN / 2, INT64_MAX / 2));
        } else if (a.is_number_float() || a.is_object()) {
          args.emplace_back(float_from_json(a, akp));
        } else if (a.is_array()) {
          as_array(a, akp, 64);
          std::vector<int64_t> ints;
          for (size_t q = 0; q < a.size(); ++q)
            ints.push_back(as_int(a[q], idx_path(akp, q), -(int64_t{1} << 40), int64_t{1} << 40));
          args.emplace_back(std::move(ints));
        } else {
          fail(akp, "unsupported argument " + describe(a));
        }
      }
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
      by_name[fresh] = n;
    } else {
      if (by_name.count(name)) fail(key_path(p, "name"), "duplicate node name \"" + name + "\"");
      n = g.create_exact(*op, target, std::move(args), name);
      by_name[name] = n;
    }
    if (auto it = nj.find("val"); it != nj.end())
      n->meta.val = type_from_json(*it, key_path(p, "val"), b.limits);
    if (*op == NodeOp::kPlaceholder && !n->meta.val) fail(p, "placeholder without \"val\"");
    if (auto it = nj.find("stack"); it != nj.end()) {
      std::string sp = key_path(p, "stack");
      as_array(*it, sp, static_cast<size_t>(b.limits.max_module_depth));
      for (size_t k = 0; k < it->size(); ++k) {
        std::string ep = idx_path(sp, k);
        const Json& e = as_array((*it)[k], ep, 3);
        if (e.size() != 3) fail(ep, "expected [key, fqn, type]");
        n->meta.nn_module_stack.push_back({as_string(e[0], idx_path(ep, 0), 1024),
                                           as_string(e[1], idx_path(ep, 1), 1024),
                                           as_string(e[2], idx_path(ep, 2), 256)});
      }
    }
    if (auto it = nj.find("origin"); it != nj.end())
      n->meta.origin = as_string(*it, key_path(p, "origin"), 2048);
  }
}

Json state_map_to_json(const std::map<std::string, TensorPtr>& m,
                       std::unordered_map<const Tensor*, std::string>& seen,
                       const std::string& prefix) {
  Json j = Json::object();
  for (const auto& [k, t] : m) {
    std::string fqn = join_fqn(prefix, k);
    auto it = seen.find(t.get());
    if (it != seen.end()) {
      j[k] = Json{{"alias", it->second}};
    } else {
      seen[t.get()] = fqn;
      j[k] = tensor_to_json(*t);
    }
  }
  return j;
}

struct ModuleWriter {
  std::unordered_map<const Tensor*, std::string> tensors;
  std::unordered_map<const Module*, std::string> modules;

  Json write(const Module& m, const std::string& path) {
    if (auto it = modules.find(&m); it != modules.end()) return Json{{"alias", it->second}};
    modules[&m] = path;
    Json j{{"type", m.type}, {"graph", graph_to_json(m.graph)}};
    if (!m.params.empty()) j["params"] = state_map_to_json(m.params, tensors, path);
    if (!m.buffers.empty()) j["buffers"] = state_map_to_json(m.buffers, tensors, path);
    if (!m.engines.empty()) {
      Json e = Json::object();
      for (const auto& [k, v] : m.engines) {
        std::string blob = dump_canonical(engine_to_json(*v));
        char sum[32];
        std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(fnv1a64(blob)));
        e[k] = Json{{"blob", base64_encode(blob)}, {"checksum", sum}};
      }
      j["engines"] = e;
    }
    if (!m.children.empty()) {
      Json c = Json::object();
      for (const auto& [k, v] : m.children) c[k] = write(*v, join_fqn(path, k));
      j["children"] = c;
    }
    return j;
  }
};

struct ModuleReader {
  LoadBudget& b;
  std::map<std::string, TensorPtr> tensors;                // fqn -> tensor, for aliases
  std::map<std::string, std::shared_ptr<Module>> modules;  // path -> module, for aliases
  std::vector<std::pair<std::shared_ptr<Module>, std::string>> to_lint;

  void read_state(const Json& j, const std::string& jpath, const std::string& prefix,
                  std::map<std::string, TensorPtr>& out) {
    as_object(j, jpath);
    for (const auto& [k, v] : j.items()) {
      std::string p = key_path(jpath, k);
      check_name(k, p);
      std::string fqn = join_fqn(prefix, k);
      if (v.is_object() && v.contains("alias")) {
        as_object(v, p, {"alias"});
        std::string target = as_string(v["alias"], key_path(p, "alias"), 1024);
        auto it = tensors.find(target);
        if (it == tensors.end())
          fail(key_path(p, "alias"), "alias \"" + target + "\" is not defined earlier");
        out[k] = it->second;
      } else {
        out[k] = std::make_shared<Tensor>(tensor_from_json(v, p, b));
      }
      tensors[fqn] = out[k];
    }
  }

  std::shared_ptr<Module> read(const Json& j, const std::string& jpath, const std::string& path,
                               int depth) {
    if (depth > b.limits.max_module_depth)
      fail(jpath, "modules nested deeper than " + std::to_string(b.limits.max_module_depth));
    as_object(j, jpath, {"type", "graph", "params", "buffers", "engines", "children", "alias"});
    if (j.contains("alias")) {
      if (j.size() != 1) fail(jpath, "an alias has no other keys");
      std::string target = as_string(j["alias"], key_path(jpath, "alias"), 1024);
      auto it = modules.find(target);
      if (it == modules.end())
        fail(key_path(jpath, "alias"), "alias \"" + target + "\" is not defined earlier");
      return it->second;
    }
    auto m = std::make_shared<Module>();
    m->type =
        as_string(member(j, "type", jpath), key_path(jpath, "type"), b.limits.max_name_length);
    if (auto it = j.find("params"); it != j.end())
      read_state(*it, key_path(jpath, "params"), path, m->params);
    if (auto it = j.find("buffers"); it != j.end())
      read_state(*it, key_path(jpath, "buffers"), path, m->buffers);
    if (auto it = j.find("engines"); it != j.end()) {
      std::string ep = key_path(jpath, "engines");
      as_object(*it, ep);
      for (const auto& [k, v] : it->items()) {
        check_name(k, key_path(ep, k));
        m->engines[k] = std::make_shared<Engine>(read_engine_blob(v, key_path(ep, k)));
      }
    }
    if (auto it = j.find("children"); it != j.end()) {
      std::string cp = key_path(jpath, "children");
      as_object(*it, cp);
      for (const auto& [k, v] : it->items()) {
        std::string kp = key_path(cp, k);
        if (k.empty() || k.find('.') != std::string::npos || k.size() > b.limits.max_name_length)
          fail(kp, "'" + k + "' is not a legal child name");
        m->children[k] = read(v, kp, join_fqn(path, k), depth + 1);
      }
    }
    std::string gp = key_path(jpath, "graph");
    graph_from_json(member(j, "graph", jpath), gp, m->graph, b);
    to_lint.emplace_back(m, jpath);
    // Aliases may name this module only once its subtree is read: an alias can never point
    // at one of its own ancestors, so the module tree has no cycle.
    modules[path] = m;
    return m;
  }

  Engine read_engine_blob(const Json& j, const std::string& path) {
    as_object(j, path, {"blob", "checksum"});
    std::string bp = key_path(path, "blob");
    std::string text = as_string(member(j, "blob", path), bp, b.limits.max_blob_bytes * 4 / 3 + 8);
    std::string blob = base64_decode(text, bp);
    std::string sum = as_string(member(j, "checksum", path), key_path(path, "checksum"), 16);
    char want[32];
    std::snprintf(want, sizeof want, "%016llx", static_cast<unsigned long long>(fnv1a64(blob)));
    if (sum != want)
      fail(key_path(path, "checksum"),
           "checksum " + sum + " does not match the blob (" + want + ")");
    Json ej = parse_json(blob, b.limits);
    return engine_from_json(ej, bp, b);
  }

  // The expansion budget, computed before any work starts: the program's size once every call
  // is inlined (what export builds), its module calls, the tensor elements one run produces
  // and the multiply-adds of matmul and sum. Computed once per module object (the tree is a
  // DAG: linear), saturating, and bounded by LoadLimits. Needs the inferred types.
  void check_expansion(const Module& root, const std::string& jpath) {
    struct Size {
      int64_t nodes = 0, calls = 0, elements = 0, flops = 0;
    };
    const int64_t cap = int64_t{1} << 60;
    auto add = [cap](int64_t a, int64_t b) { return std::min(cap, a + std::min(cap, b)); };
    auto mul = [cap](int64_t a, int64_t b) {
      return a == 0 || b == 0 ? 0 : (a > cap / b ? cap : a * b);
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
      if (v > static_cast<int64_t>(limit))
        fail(jpath, std::string(what) + " " + std::to_string(v) + ", over the limit of " +
                        std::to_string(limit));
    };
    over(s.nodes, b.limits.max_inlined_nodes, "the program inlines to this many nodes:");
    over(s.calls, b.limits.max_calls, "one run makes this many module calls:");
    over(s.elements, b.limits.max_run_elements, "one run produces this many tensor elements:");
    over(s.flops, b.limits.max_run_flops, "one run does this many multiply-adds:");
  }

  // Lints every graph once all attributes exist; errors name the module's JSON path.
  void lint_all() {
    for (auto& [m, jpath] : to_lint) {
      try {
        lint_graph(m->graph, m.get(), "");
      } catch (const InputError& e) {
        fail(key_path(jpath, "graph"), e.what());
      }
    }
  }
};

}  // namespace

// ---------------------------------------------------------------------------------- public

LoadLimits& default_load_limits() {
  static LoadLimits limits;
  return limits;
}

namespace {

template <class T>
bool assign_limit(T& field, uint64_t v) {
  if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
  field = static_cast<T>(v);
  return true;
}

}  // namespace

// clang-format off
#define FLATCHECK_LOAD_LIMITS(X)                                                             \
  X(max_bytes) X(max_json_depth) X(max_json_values) X(max_module_depth) X(max_nodes)         \
  X(max_inlined_nodes) X(max_calls) X(max_run_elements) X(max_run_flops) X(max_args)         \
  X(max_tensor_elements) X(max_total_elements) X(max_blob_bytes) X(max_name_length)
// clang-format on

bool set_load_limit(LoadLimits& limits, const std::string& name, uint64_t value) {
#define X(field) \
  if (name == #field) return assign_limit(limits.field, value);
  FLATCHECK_LOAD_LIMITS(X)
#undef X
  return false;
}

std::vector<std::string> load_limit_names() {
  return {
#define X(field) #field,
      FLATCHECK_LOAD_LIMITS(X)
#undef X
  };
}

std::string base64_encode(std::string_view in) {
  static constexpr char kAlpha[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint32_t{static_cast<unsigned char>(in[i])} << 16) |
                 (uint32_t{static_cast<unsigned char>(in[i + 1])} << 8) |
                 static_cast<unsigned char>(in[i + 2]);
    out += kAlpha[v >> 18];
    out += kAlpha[(v >> 12) & 63];
    out += kAlpha[(v >> 6) & 63];
    out += kAlpha[v & 63];
  }
  if (i < in.size()) {
    uint32_t v = uint32_t{static_cast<unsigned char>(in[i])} << 16;
    if (i + 1 < in.size()) v |= uint32_t{static_cast<unsigned char>(in[i + 1])} << 8;
    out += kAlpha[v >> 18];
    out += kAlpha[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlpha[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string base64_decode(std::string_view in, const std::string& path) {
  if (in.size() % 4 != 0)
    fail(path, "base64 length " + std::to_string(in.size()) + " is not a multiple of 4");
  auto val = [&](char c, size_t pos) -> uint32_t {
    if (c >= 'A' && c <= 'Z') return static_cast<uint32_t>(c - 'A');
    if (c >= 'a' && c <= 'z') return static_cast<uint32_t>(c - 'a' + 26);
    if (c >= '0' && c <= '9') return static_cast<uint32_t>(c - '0' + 52);
    if (c == '+') return 62;
    if (c == '/') return 63;
    fail(path, "invalid base64 character at offset " + std::to_string(pos));
  };
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    bool last = i + 4 == in.size();
    int pad = 0;
    if (last && in[i + 3] == '=') pad = in[i + 2] == '=' ? 2 : 1;
    uint32_t v = (val(in[i], i) << 18) | (val(in[i + 1], i + 1) << 12);
    if (pad < 2) v |= val(in[i + 2], i + 2) << 6;
    if (pad < 1) v |= val(in[i + 3], i + 3);
    out += static_cast<char>(v >> 16);
    if (pad < 2) out += static_cast<char>((v >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(v & 0xff);
  }
  return out;
}

uint64_t fnv1a64(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

namespace {

// A strict, linear JSON reader over nlohmann's SAX interface: the DOM is built by nlohmann's
// own builder, and every event is checked first, in O(1): nesting depth, the number of values,
// duplicate keys in an object (nlohmann would keep the last), and integers outside the 64-bit
// range (nlohmann would turn them into floats). Errors name the JSON path.
class StrictSax {
 public:
  StrictSax(Json& root, const LoadLimits& limits) : dom_(root, true), limits_(limits) {}

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(Json::number_integer_t v) { return value() && dom_.number_integer(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
  bool number_float(Json::number_float_t v, const Json::string_t& text) {
    if (text.find_first_of(".eE") == std::string::npos)
      fail("integer " + text.substr(0, 40) + " is outside the 64-bit range");
    return value() && dom_.number_float(v, text);
  }
  bool string(Json::string_t& v) { return value() && dom_.string(v); }
  bool binary(Json::binary_t& v) { return value() && dom_.binary(v); }
  bool start_object(std::size_t n) {
    value();
    open(true);
    return dom_.start_object(n);
  }
  bool key(Json::string_t& k) {
    Frame& f = frames_.back();
    if (!f.keys.insert(k).second) {
      f.key = k;
      fail("duplicate key \"" + k.substr(0, 64) + "\"");
    }
    f.key = k;
    return dom_.key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    value();
    open(false);
    return dom_.start_array(n);
  }
  bool end_array() {
    frames_.pop_back();
    return dom_.end_array();
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    throw InputError(path() + ": invalid JSON: " + e.what());
  }

 private:
  struct Frame {
    bool object;
    int64_t index = -1;  // arrays: the element being read
    std::string key;     // objects: the member being read
    std::unordered_set<std::string> keys;
  };

  bool value() {
    if (++values_ > limits_.max_json_values)
      fail("more than " + std::to_string(limits_.max_json_values) + " JSON values");
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    return true;
  }
  void open(bool object) {
    if (static_cast<int>(frames_.size()) >= limits_.max_json_depth)
      fail("JSON nested deeper than " + std::to_string(limits_.max_json_depth));
    frames_.push_back(Frame{object, -1, {}, {}});
  }
  std::string path() const {
    std::string p;
    for (const auto& f : frames_) {
      if (f.object && !f.key.empty()) p += "/" + f.key.substr(0, 64);
      if (!f.object && f.index >= 0) p += "/" + std::to_string(f.index);
    }
    return p.empty() ? "/" : p;
  }
  [[noreturn]] void fail(const std::string& what) const { throw InputError(path() + ": " + what); }

  nlohmann::detail::json_sax_dom_parser<Json> dom_;
  const LoadLimits& limits_;
  std::vector<Frame> frames_;
  size_t values_ = 0;
};

}  // namespace

Json parse_json(std::string_view text, const LoadLimits& limits) {
  if (text.size() > limits.max_bytes)
    throw InputError("/: document of " + std::to_string(text.size()) +
                     " bytes is over the limit of " + std::to_string(limits.max_bytes));
  Json root;
  StrictSax sax(root, limits);
  try {
    Json::sax_parse(text.begin(), text.end(), &sax);
  } catch (const Json::exception& e) {
    throw InputError(std::string("/: invalid JSON: ") + e.what());
  } catch (const std::bad_alloc&) {
    throw InputError("/: the document does not fit in memory");
  }
  return root;
}

namespace {

constexpr size_t kInlineWidth = 100;

// A rendered value: on one line when it is a scalar or a container of one-line values that
// fits in kInlineWidth characters, else indented over several lines. Each value is rendered
// once, bottom-up (linear in the document).
struct Rendered {
  bool one_line;
  std::string text;
};

Rendered render(const Json& j, int indent) {
  if (!j.is_structured()) return {true, j.dump()};
  std::vector<std::pair<std::string, Rendered>> items;
  bool all_one_line = true;
  size_t width = 2;
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string key = j.is_object() ? Json(it.key()).dump() + ": " : "";
    Rendered r = render(*it, indent + 1);
    all_one_line &= r.one_line;
    width += key.size() + r.text.size() + 2;
    items.emplace_back(std::move(key), std::move(r));
  }
  const char* open = j.is_array() ? "[" : "{";
  const char* close = j.is_array() ? "]" : "}";
  if (all_one_line && width <= kInlineWidth + 2) {
    std::string s = open;
    for (size_t i = 0; i < items.size(); ++i)
      s += (i ? ", " : "") + items[i].first + items[i].second.text;
    return {true, s + close};
  }
  std::string pad(static_cast<size_t>(indent + 1), ' ');
  std::string s = std::string(open) + "\n";
  for (size_t i = 0; i < items.size(); ++i)
    s += (i ? ",\n" : "") + pad + items[i].first + items[i].second.text;
  s += "\n" + std::string(static_cast<size_t>(indent), ' ') + close;
  return {false, s};
}

}  // namespace

// Objects and arrays that fit on a line stay on one line (a node, a shape, a signature entry);
// the rest is indented by one space a level. Keys are sorted (nlohmann's default map).
std::string dump_canonical(const Json& j) {
  return render(j, 0).text + "\n";
}

std::string read_file(const std::string& path, size_t max_bytes) {
  // Opened without blocking (a FIFO would wait for a writer), then refused unless it is a
  // regular file; the limit is checked on the bytes read, not on what stat reports.
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot open file (" + std::strerror(errno) + ")");
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    throw InputError(path + ": not a regular file");
  }
  std::string s;
  char buf[1 << 16];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      throw InputError(path + ": cannot read file (" + std::strerror(err) + ")");
    }
    if (n == 0) break;
    if (s.size() + static_cast<size_t>(n) > max_bytes) {
      close(fd);
      throw InputError(path + ": file is over the limit of " + std::to_string(max_bytes) +
                       " bytes");
    }
    s.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return s;
}

Json tensor_to_json(const Tensor& t) {
  Json j{{"dtype", "float32"}, {"shape", shape_to_json(t.shape)}};
  if (fault_on(Fault::kSerializeFloatShort)) {
    // Fault: values as decimal text with 6 significant digits.
    Json v = Json::array();
    for (float f : t.data) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", static_cast<double>(f));
      float g = std::strtof(buf, nullptr);
      v.push_back(float_to_json(std::isfinite(f) ? g : f));
    }
    j["values"] = v;
    return j;
  }
  if (fault_on(Fault::kSerializeNanCanonical)) {
    // Fault: NaN payloads and the sign of zero are normalized on save.
    std::vector<float> d = t.data;
    for (float& f : d) {
      if (std::isnan(f))
        f = bits_float(0x7fc00000u);
      else if (f == 0.0f)
        f = 0.0f;
    }
    j["data"] = base64_encode(floats_to_le_bytes(d));
    return j;
  }
  j["data"] = base64_encode(floats_to_le_bytes(t.data));
  return j;
}

Tensor tensor_from_json(const Json& j, const std::string& path, LoadBudget& b) {
  as_object(j, path, {"dtype", "shape", "data", "values"});
  std::string dt = as_string(member(j, "dtype", path), key_path(path, "dtype"), 16);
  if (dt != "float32") fail(key_path(path, "dtype"), "unsupported dtype \"" + dt + "\"");
  Shape shape = shape_from_json(member(j, "shape", path), key_path(path, "shape"), b.limits);
  int64_t n = numel(shape);
  b.elements += n;
  if (b.elements > b.limits.max_total_elements)
    fail(path, "tensors hold more than " + std::to_string(b.limits.max_total_elements) +
                   " elements in the document");
  bool has_data = j.contains("data"), has_values = j.contains("values");
  if (has_data == has_values) fail(path, "expected exactly one of \"data\" or \"values\"");
  if (has_data) {
    std::string dp = key_path(path, "data");
    std::string text = as_string(j["data"], dp, static_cast<size_t>(n) * 16 + 8);
    std::string bytes = base64_decode(text, dp);
    if (bytes.size() != static_cast<size_t>(n) * 4)
      fail(dp,
           std::to_string(bytes.size()) + " bytes for " + std::to_string(n) + " float32 elements");
    return Tensor(std::move(shape), le_bytes_to_floats(bytes));
  }
  std::string vp = key_path(path, "values");
  const Json& v = as_array(j["values"], vp, static_cast<size_t>(n));
  if (v.size() != static_cast<size_t>(n))
    fail(vp, std::to_string(v.size()) + " values for " + std::to_string(n) + " elements");
  std::vector<float> data;
  data.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const Json& x = v[i];
    if (x.is_number_integer())
      data.push_back(static_cast<float>(as_int(x, idx_path(vp, i), -(1 << 24), 1 << 24)));
    else
      data.push_back(float_from_json(x, idx_path(vp, i)));
  }
  return Tensor(std::move(shape), std::move(data));
}

Json engine_to_json(const Engine& e) {
  Json slots = Json::array(), ins = Json::array(), outs = Json::array(), consts = Json::array(),
       ops = Json::array();
  for (const auto& s : e.slots)
    slots.push_back(Json{{"shape", shape_to_json(s.shape)}, {"offset", s.offset}});
  for (const auto& b : e.inputs)
    ins.push_back(Json{{"name", b.name}, {"slot", b.slot}, {"position", b.position}});
  for (const auto& b : e.outputs) outs.push_back(Json{{"name", b.name}, {"slot", b.slot}});
  for (const auto& [s, t] : e.constants)
    consts.push_back(Json{{"slot", s}, {"value", tensor_to_json(t)}});
  for (const auto& op : e.ops) {
    Json sc = Json::array();
    for (const auto& s : op.scalars)
      std::visit([&](const auto& v) { sc.push_back(arg_to_json(Arg(v))); }, s);
    Json o{
        {"op", std::string(op_info(op.op).name)}, {"in", op.in}, {"out", op.out}, {"scalars", sc}};
    if (!op.origin.empty()) o["origin"] = op.origin;
    ops.push_back(o);
  }
  return Json{{"format", "flatcheck-engine"},
              {"version", Engine::kVersion},
              {"name", e.name},
              {"arena", e.arena_floats},
              {"slots", slots},
              {"inputs", ins},
              {"outputs", outs},
              {"constants", consts},
              {"ops", ops}};
}

Engine engine_from_json(const Json& j, const std::string& path, LoadBudget& b) {
  as_object(
      j, path,
      {"format", "version", "name", "arena", "slots", "inputs", "outputs", "constants", "ops"});
  if (as_string(member(j, "format", path), key_path(path, "format"), 64) != "flatcheck-engine")
    fail(key_path(path, "format"), "expected \"flatcheck-engine\"");
  if (as_int(member(j, "version", path), key_path(path, "version"), 0, 1 << 20) != Engine::kVersion)
    fail(key_path(path, "version"), "unsupported engine version");
  const int64_t kMaxSlot = 1 << 20;
  Engine e;
  e.name = as_string(member(j, "name", path), key_path(path, "name"), b.limits.max_name_length);
  e.arena_floats = as_int(member(j, "arena", path), key_path(path, "arena"), 0, int64_t{1} << 26);
  std::string sp = key_path(path, "slots");
  const Json& slots = as_array(member(j, "slots", path), sp, 20000);
  for (size_t i = 0; i < slots.size(); ++i) {
    std::string p = idx_path(sp, i);
    as_object(slots[i], p, {"shape", "offset"});
    e.slots.push_back(
        {shape_from_json(member(slots[i], "shape", p), key_path(p, "shape"), b.limits),
         as_int(member(slots[i], "offset", p), key_path(p, "offset"), 0, int64_t{1} << 26)});
  }
  auto bindings = [&](const char* key, bool with_position) {
    std::string bp = key_path(path, key);
    const Json& arr = as_array(member(j, key, path), bp, 4096);
    std::vector<EngineBinding> out;
    for (size_t i = 0; i < arr.size(); ++i) {
      std::string p = idx_path(bp, i);
      if (with_position)
        as_object(arr[i], p, {"name", "slot", "position"});
      else
        as_object(arr[i], p, {"name", "slot"});
      EngineBinding eb;
      eb.name = as_string(member(arr[i], "name", p), key_path(p, "name"), b.limits.max_name_length);
      eb.slot =
          static_cast<int>(as_int(member(arr[i], "slot", p), key_path(p, "slot"), 0, kMaxSlot));
      if (with_position)
        eb.position = static_cast<int>(
            as_int(member(arr[i], "position", p), key_path(p, "position"), 0, 100000));
      out.push_back(eb);
    }
    return out;
  };
  e.inputs = bindings("inputs", true);
  e.outputs = bindings("outputs", false);
  std::string cp = key_path(path, "constants");
  const Json& consts = as_array(member(j, "constants", path), cp, 4096);
  for (size_t i = 0; i < consts.size(); ++i) {
    std::string p = idx_path(cp, i);
    as_object(consts[i], p, {"slot", "value"});
    int s =
        static_cast<int>(as_int(member(consts[i], "slot", p), key_path(p, "slot"), 0, kMaxSlot));
    e.constants.emplace_back(
        s, tensor_from_json(member(consts[i], "value", p), key_path(p, "value"), b));
  }
  std::string op_path = key_path(path, "ops");
  const Json& ops = as_array(member(j, "ops", path), op_path, 100000);
  for (size_t i = 0; i < ops.size(); ++i) {
    std::string p = idx_path(op_path, i);
    as_object(ops[i], p, {"op", "in", "out", "scalars", "origin"});
    EngineOp op;
    std::string name = as_string(member(ops[i], "op", p), key_path(p, "op"), 32);
    auto code = op_by_name(name);
    if (!code) fail(key_path(p, "op"), "unknown op \"" + name + "\"");
    op.op = *code;
    for (const char* key : {"in", "out"}) {
      std::string kp = key_path(p, key);
      const Json& arr = as_array(member(ops[i], key, p), kp, 4096);
      for (size_t k = 0; k < arr.size(); ++k)
        (key[0] == 'i' ? op.in : op.out)
            .push_back(static_cast<int>(as_int(arr[k], idx_path(kp, k), 0, kMaxSlot)));
    }
    std::string scp = key_path(p, "scalars");
    const Json& sc = as_array(member(ops[i], "scalars", p), scp, 16);
    for (size_t k = 0; k < sc.size(); ++k) {
      const Json& a = sc[k];
      std::string akp = idx_path(scp, k);
      if (a.is_boolean())
        op.scalars.emplace_back(a.get<bool>());
      else if (a.is_number_integer())
        op.scalars.emplace_back(as_int(a, akp, -(int64_t{1} << 40), int64_t{1} << 40));
      else if (a.is_array()) {
        as_array(a, akp, 8);
        std::vector<int64_t> ints;
        for (size_t q = 0; q < a.size(); ++q)
          ints.push_back(as_int(a[q], idx_path(akp, q), -(int64_t{1} << 40), int64_t{1} << 40));
        op.scalars.emplace_back(std::move(ints));
      } else
        op.scalars.emplace_back(float_from_json(a, akp));
    }
    if (auto it = ops[i].find("origin"); it != ops[i].end())
      op.origin = as_string(*it, key_path(p, "origin"), 2048);
    e.ops.push_back(std::move(op));
  }
  try {
    validate_engine(e);
  } catch (const InputError& err) {
    fail(path + "/" + err.what(), "invalid engine");
  }
  return e;
}

Json module_to_json(const Module& m) {
  return ModuleWriter().write(m, "");
}

std::shared_ptr<Module> module_from_json(const Json& j, const std::string& path, LoadBudget& b) {
  ModuleReader r{b, {}, {}, {}};
  auto m = r.read(j, path, "", 0);
  r.lint_all();
  try {
    infer_types(*m);
  } catch (const InputError& e) {
    fail(path, e.what());
  }
  r.check_expansion(*m, path);
  return m;
}

std::string save_module(const Module& m) {
  Json j{
      {"format", "flatcheck-module"}, {"version", kFormatVersion}, {"module", module_to_json(m)}};
  return dump_canonical(j);
}

std::shared_ptr<Module> load_module(std::string_view text, const LoadLimits& limits) {
  Json j = parse_json(text, limits);
  check_header(j, "flatcheck-module");
  as_object(j, "", {"format", "version", "module"});
  LoadBudget b{limits, 0, 0};
  return module_from_json(member(j, "module", ""), "/module", b);
}

Json program_to_json(const Program& p) {
  Json ins = Json::array(), outs = Json::array(), state = Json::object(), types = Json::object();
  for (const auto& s : p.sig.inputs) {
    Json e{{"kind", std::string(input_kind_name(s.kind))}, {"name", s.name}};
    if (!s.target.empty()) e["target"] = s.target;
    ins.push_back(e);
  }
  for (const auto& s : p.sig.outputs) {
    Json e{{"kind", std::string(output_kind_name(s.kind))}, {"name", s.name}};
    if (!s.target.empty()) e["target"] = s.target;
    outs.push_back(e);
  }
  for (const auto& [k, v] : p.state) state[k] = tensor_to_json(*v);
  for (const auto& [k, v] : p.module_types) types[k] = v;
  return Json{{"module", module_to_json(*p.root)},
              {"signature", Json{{"inputs", ins}, {"outputs", outs}}},
              {"state", state},
              {"module_types", types}};
}

Program program_from_json(const Json& j, const std::string& path, LoadBudget& b) {
  as_object(j, path, {"module", "signature", "state", "module_types", "format", "version"});
  Program p;
  std::string stp = key_path(path, "state");
  const Json& state = as_object(member(j, "state", path), stp);
  for (const auto& [k, v] : state.items()) {
    if (k.empty() || k.size() > 1024) fail(key_path(stp, k), "bad state name");
    p.state[k] = std::make_shared<Tensor>(tensor_from_json(v, key_path(stp, k), b));
  }
  std::string tp = key_path(path, "module_types");
  if (auto it = j.find("module_types"); it != j.end()) {
    as_object(*it, tp);
    for (const auto& [k, v] : it->items()) p.module_types[k] = as_string(v, key_path(tp, k), 256);
  }
  std::string sp = key_path(path, "signature");
  const Json& sig = as_object(member(j, "signature", path), sp, {"inputs", "outputs"});
  std::string ip = key_path(sp, "inputs");
  const Json& ins = as_array(member(sig, "inputs", sp), ip, b.limits.max_nodes);
  for (size_t i = 0; i < ins.size(); ++i) {
    std::string q = idx_path(ip, i);
    as_object(ins[i], q, {"kind", "name", "target"});
    InputSpec s;
    std::string kind = as_string(member(ins[i], "kind", q), key_path(q, "kind"), 32);
    if (kind == "user_input")
      s.kind = InputSpec::kUserInput;
    else if (kind == "parameter")
      s.kind = InputSpec::kParameter;
    else if (kind == "buffer")
      s.kind = InputSpec::kBuffer;
    else
      fail(key_path(q, "kind"), "expected user_input, parameter or buffer, got \"" + kind + "\"");
    s.name = as_string(member(ins[i], "name", q), key_path(q, "name"), b.limits.max_name_length);
    if (s.kind != InputSpec::kUserInput) {
      s.target = as_string(member(ins[i], "target", q), key_path(q, "target"), 1024);
      if (!p.state.count(s.target))
        fail(key_path(q, "target"), "state \"" + s.target + "\" does not exist");
    }
    p.sig.inputs.push_back(s);
  }
  std::string op = key_path(sp, "outputs");
  const Json& outs = as_array(member(sig, "outputs", sp), op, b.limits.max_nodes);
  for (size_t i = 0; i < outs.size(); ++i) {
    std::string q = idx_path(op, i);
    as_object(outs[i], q, {"kind", "name", "target"});
    OutputSpec s;
    std::string kind = as_string(member(outs[i], "kind", q), key_path(q, "kind"), 32);
    if (kind == "user_output")
      s.kind = OutputSpec::kUserOutput;
    else if (kind == "buffer_mutation")
      s.kind = OutputSpec::kBufferMutation;
    else
      fail(key_path(q, "kind"), "expected user_output or buffer_mutation, got \"" + kind + "\"");
    s.name = as_string(member(outs[i], "name", q), key_path(q, "name"), b.limits.max_name_length);
    if (s.kind == OutputSpec::kBufferMutation)
      s.target = as_string(member(outs[i], "target", q), key_path(q, "target"), 1024);
    p.sig.outputs.push_back(s);
  }
  p.root = module_from_json(member(j, "module", path), key_path(path, "module"), b);
  try {
    lint_program(p);
  } catch (const InputError& e) {
    fail(path, e.what());
  }
  return p;
}

std::string save_program(const Program& p) {
  Json j = program_to_json(p);
  j["format"] = "flatcheck-program";
  j["version"] = kFormatVersion;
  return dump_canonical(j);
}

Program load_program(std::string_view text, const LoadLimits& limits) {
  Json j = parse_json(text, limits);
  check_header(j, "flatcheck-program");
  LoadBudget b{limits, 0, 0};
  return program_from_json(j, "", b);
}

}  // namespace flatcheck
