// The emitter writes, in order: a header and helpers (tensor decoding, the no-op recorder),
// the state tensors (each storage once, so sharing survives), one class per distinct module,
// the tree wiring (`add_module`, so one module object may sit under two names), the inputs,
// flatcheck's expected results, and a __main__ that runs the eager program and prints whether
// it agrees bit for bit.
#include "harness/torch_emit.h"
#include "core/base/names.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/base/check.h"
#include "core/ir/engine.h"
#include "core/ir/namespace.h"
#include "core/passes/passes.h"
#include "core/runtime/interpreter.h"
#include "core/serialize/serialize.h"
#include "harness/torch_emit_children.h"
#include "harness/torch_emit_state.h"
#include "harness/torch_emit_text.h"

namespace flatcheck {
namespace {

// A float argument as Python text, exact: a finite value as a literal (17 significant digits
// name the double that equals the float32), an infinity or a NaN as a module-level constant made
// once from its bits (`_f`), so no call of `forward` runs struct.pack (export's strict tracer
// refuses it). `consts` collects the constants' definitions by name.
std::string float_expr(float f, std::map<std::string, std::string>& consts) {
  char buf[48];
  if (std::isfinite(f)) {
    std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(f));
    std::string s = buf;
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
  }
  std::snprintf(buf, sizeof buf, "_F%08x", float_bits(f));
  char def[32];
  std::snprintf(def, sizeof def, "_f(0x%08x)", float_bits(f));
  consts.emplace(buf, def);
  return buf;
}

std::string var(const std::string& node_name) {
  return "v_" + node_name;
}

class Emitter {
 public:
  Emitter(const Case& c, const EmitOptions& options)
      : c_(c), options_(options), children_(*c.module, options.hostile_child_names) {
    children_.set_classes(&class_of_);
  }

  std::string run(const std::string& source) {
    compute_expected();
    std::ostringstream os;
    os << "\"\"\"A flatcheck case as a PyTorch program (flatcheck emit-torch).\n\n"
       << "Source: " << source << "\n"
       << "Run it: python3 THIS_FILE    (eager torch vs flatcheck's eager results, bit for bit)\n"
       << "Check it every way: python3 harness/torch/flatcheck_torch.py THIS_FILE\n\n"
       << "Buffer reads are .clone(): flatcheck's eager semantics read buffers by value, as\n"
       << "export's functional graph does (docs/torch.md).\n\"\"\"\n"
       << kTorchPrelude << "\n";
    os << "CONFIG = {\"calls\": " << c_.config.calls
       << ", \"min_block_size\": " << c_.config.min_block_size << ", \"fallback_ops\": [";
    bool first = true;
    for (const auto& op : c_.config.fallback_ops)
      os << (first ? "" : ", ") << py_str(op), first = false;
    os << "], \"nan_exact\": " << (c_.config.nan_exact ? "True" : "False")
       << ", \"update_args\": " << (options_.update_args ? "True" : "False")
       << ", \"update_inputs\": " << (options_.update_inputs ? "True" : "False")
       << ", \"kwargs\": " << (options_.kwargs ? "True" : "False")
       << ", \"dict_outputs\": " << (options_.dict_outputs ? "True" : "False")
       << ", \"packed_args\": " << (options_.packed_args ? "True" : "False")
       << ", \"op_kwargs\": " << (options_.op_kwargs ? "True" : "False")
       << ", \"hostile_names\": " << (options_.hostile_names ? "True" : "False")
       << ", \"hostile_child_names\": " << (options_.hostile_child_names ? "True" : "False")
       << ", \"non_persistent_buffers\": " << (options_.non_persistent_buffers ? "True" : "False")
       << ", \"tensor_constants\": " << (options_.tensor_constants ? "True" : "False")
       << ", \"inplace_updates\": " << (options_.inplace_updates ? "True" : "False")
       << ", \"step_counters\": " << (options_.step_counters ? "True" : "False") << "}\n\n";
    state(os);
    std::ostringstream body;
    classes(body);
    if (!consts_.empty()) {
      os << "# Float constants that have no exact literal (infinities, NaN payloads), by bits.\n";
      for (const auto& [name, def] : consts_) os << name << " = " << def << "\n";
      os << "\n\n";
    }
    if (children_.hostile()) children_.table(os, order_);
    os << body.str();
    build(os);
    data(os);
    os << kTorchMain;
    return os.str();
  }

 private:
  void compute_expected() {
    auto m = clone_module(*c_.module, /*share_state=*/false);
    traces_.resize(static_cast<size_t>(c_.config.calls));
    for (int k = 0; k < c_.config.calls; ++k) {
      RunContext ctx;
      std::unordered_set<std::string> seen_origin;
      auto& trace = traces_[static_cast<size_t>(k)];
      ctx.observer = [&](const std::string& origin, std::string_view op, const Value& v) {
        if (v.kind == ValueType::kTensor && seen_origin.insert(origin).second)
          trace.push_back({origin, std::string(op), *v.tensor});
      };
      std::vector<Value> in;
      for (const auto& t : c_.inputs) in.push_back(Value::of(t));
      std::vector<Tensor> outs;
      for (auto& v : run_module(*m, in, ctx)) outs.push_back(*v.tensor);
      outputs_.push_back(std::move(outs));
    }
    std::unordered_set<const Module*> seen;
    std::function<void(const Module&, const std::string&)> walk = [&](const Module& mod,
                                                                      const std::string& p) {
      if (!seen.insert(&mod).second) return;
      for (const auto& [k, v] : mod.params) final_state_.emplace(join_fqn(p, k), *v);
      for (const auto& [k, v] : mod.buffers) final_state_.emplace(join_fqn(p, k), *v);
      for (const auto& [k, ch] : mod.children) walk(*ch, join_fqn(p, k));
    };
    walk(*m, "");
  }

  // Each storage once: `S[i]`, a Parameter or a plain tensor (a buffer), made anew by each
  // build() so that every model starts from the case's state.
  void state(std::ostringstream& os) {
    os << "def _state():\n    return [\n";
    std::unordered_set<const Module*> seen;
    std::function<void(const Module&)> walk = [&](const Module& m) {
      if (!seen.insert(&m).second) return;
      auto add = [&](const TensorPtr& t, bool param) {
        if (storage_.count(t.get())) return;
        storage_[t.get()] = static_cast<int>(storage_.size());
        os << "        " << (param ? "torch.nn.Parameter(" : "") << tensor_expr(*t)
           << (param ? ", requires_grad=False)" : "") << ",\n";
      };
      for (const auto& [_, t] : m.params) add(t, true);
      for (const auto& [_, t] : m.buffers) add(t, false);
      for (const auto& [_, ch] : m.children) walk(*ch);
    };
    walk(*c_.module);
    os << "    ]\n\n\n";
  }

  void classes(std::ostringstream& os) {
    std::function<void(const Module&)> walk = [&](const Module& m) {
      if (class_of_.count(&m)) return;
      for (const auto& [_, ch] : m.children) walk(*ch);
      std::string name = "M" + std::to_string(class_of_.size());
      class_of_[&m] = name;
      order_.push_back(&m);
      if (options_.update_args && &m != c_.module.get()) updates_[&m] = updated_paths(m);
      emit_class(os, m, name);
    };
    walk(*c_.module);
  }

  // With --update-args, the buffers module `m` updates, each taken as a forward argument
  // (`_u0`, `_u1`, ...) that its caller fills with the buffer itself; none for the root.
  const std::vector<std::string>& update_args(const Module& m) const {
    static const std::vector<std::string> kNone;
    auto it = updates_.find(&m);
    return it == updates_.end() ? kNone : it->second;
  }

  void emit_class(std::ostringstream& os, const Module& m, const std::string& name) {
    os << "class " << name << "(torch.nn.Module):  # flatcheck type " << py_str(m.type) << "\n"
       << "    def __init__(self, S):\n        super().__init__()\n";
    for (const auto& [k, t] : m.params)
      os << "        self.register_parameter(" << py_str(k) << ", S[" << storage_.at(t.get())
         << "])\n";
    for (const auto& [k, t] : m.buffers)
      os << buffer_line(options_, name, k, "S[" + std::to_string(storage_.at(t.get())) + "]",
                        has_constants_);
    std::string count;  // --step-counters: the counter's update
    if (emit_step_counter(options_, name)) {
      counter_[&m] = step_counter_name(m);
      os << buffer_line(options_, name, counter_[&m], "torch.zeros((), dtype=torch.int64)",
                        has_constants_);
      count = "        _R.update(self, " + py_str(counter_[&m]) + ", \"add_\", 1, {})\n";
    }
    if (options_.inplace_updates) inplace_.merge(inplace_updates(m));
    std::vector<std::string> params;
    std::vector<std::string> ph_names;
    if (options_.hostile_names) {
      const auto pool = hostile_pool(*c_.module, m);
      const auto& phs = m.graph.placeholders();
      const uint64_t start = fnv1a64(name);
      for (size_t i = 0; i < phs.size() && phs.size() <= pool.size(); ++i)
        spelled_[phs[i]] = pool[(start + i) % pool.size()];
    }
    for (Node* n : m.graph.placeholders()) {
      params.push_back(local(n));
      ph_names.push_back(py_str(n->name));
    }
    os << "\n    def forward(self";
    if (packed(&m)) {
      os << ", _args";
    } else {
      for (const auto& p : params) os << ", " << p;
    }
    for (size_t i = 0; i < update_args(m).size(); ++i) os << ", _u" << i << "=None";
    os << "):\n";
    if (packed(&m)) {
      os << "        ";
      for (const auto& p : params) os << p << ", ";
      os << "= _args\n";
    }
    os << "        _R.begin((";
    for (const auto& p : ph_names) os << p << ", ";
    os << "))\n" << (step_counter_first(name) ? count : "");
    for (Node* n = m.graph.first(); n; n = n->next) {
      if (n->op == NodeOp::kOutput && !step_counter_first(name)) os << count;
      emit_node(os, m, *n);
    }
    os << "\n\n";
  }

  // The Python name of node `n`'s value in its module's forward: "v_<name>", or a parameter's
  // name drawn from the hostile pool (--hostile-names).
  std::string local(const Node* n) const {
    auto it = spelled_.find(n);
    return it == spelled_.end() ? var(n->name) : it->second;
  }

  std::string arg(const Arg& a) {
    if (auto p = std::get_if<Node*>(&a)) return local(*p);
    if (auto b = std::get_if<bool>(&a)) return *b ? "True" : "False";
    if (auto i = std::get_if<int64_t>(&a)) return std::to_string(*i);
    if (auto f = std::get_if<float>(&a)) return float_expr(*f, consts_);
    const auto& l = std::get<std::vector<int64_t>>(a);
    std::string out = "[";
    for (size_t i = 0; i < l.size(); ++i) out += (i ? ", " : "") + std::to_string(l[i]);
    return out + "]";
  }

  // The names of a node's node arguments; with `positional`, one entry per argument and None
  // for constants (a child's placeholders, by position).
  static std::string inputs_of(const Node& n, bool positional = false) {
    std::string out = "(";
    for (const auto& a : n.args) {
      auto p = std::get_if<Node*>(&a);
      if (p || positional) out += (p ? py_str((*p)->name) : std::string("None")) + ", ";
    }
    return out + ")";
  }

  // --dict-outputs: whether `child` returns its results as a dict (more than one result, and
  // not the root: the root's results go to the caller as a tuple).
  bool returns_dict(const Module* child) const {
    if (!options_.dict_outputs || !child || child == c_.module.get()) return false;
    const Node* out = child->graph.output_node();
    return out && out->args.size() != 1;
  }

  // --inplace-updates: copy_ `c` (of module `m`) made as the in-place form of op `v`, whose
  // value it writes: `_R.update(self, path, "add_", y, {kwargs}[, _uK])`.
  std::string update_expr(const Module& m, const Node& c, const Node& v) {
    ArithSpelling a = arith_spelling(v.fn, options_.op_kwargs);
    const std::string& path = std::get<Node*>(c.args.at(0))->target;
    const auto& into = update_args(m);
    auto k = std::find(into.begin(), into.end(), path);
    return "_R.update(self, " + children_.path_expr(m, path) + ", " + py_str(a.op + "_") + ", " +
           arg(v.args.at(1)) + ", {" + (a.key.empty() ? "" : py_str(a.key) + ": " + a.value) + "}" +
           (k == into.end() ? "" : ", _u" + std::to_string(k - into.begin())) + ")";
  }

  std::string call_expr(const Module& m, const Node& n) {
    auto a = [&](size_t i) { return arg(n.args.at(i)); };
    switch (n.fn) {
      case OpCode::kAdd:
      case OpCode::kSub:
      case OpCode::kDiv:
      case OpCode::kAddScalar:
      case OpCode::kSubScalar:
      case OpCode::kDivScalar:
      case OpCode::kMul:
      case OpCode::kMulScalar:
        return arith_call(n.fn, options_.op_kwargs, a(0), a(1));
      case OpCode::kMaximum:
        return "torch.maximum(" + a(0) + ", " + a(1) + ")";
      case OpCode::kMinimum:
        return "torch.minimum(" + a(0) + ", " + a(1) + ")";
      case OpCode::kNeg:
      case OpCode::kRelu:
      case OpCode::kAbs:
      case OpCode::kExp:
      case OpCode::kTanh:
      case OpCode::kSigmoid:
      case OpCode::kSqrt:
      case OpCode::kClone:
        return "torch." + n.target + "(" + a(0) + ")";  // the op's name is torch's
      case OpCode::kMatmul:
        return "torch.matmul(" + a(0) + ", " + a(1) + ")";
      case OpCode::kSum:
        return "torch.sum(" + a(0) + ", dim=" + a(1) + ")";
      case OpCode::kReshape:
        return "torch.reshape(" + a(0) + ", " + a(1) + ")";
      case OpCode::kTranspose:
        return "torch.transpose(" + a(0) + ", " + a(1) + ", " + a(2) + ")";
      case OpCode::kConcat: {
        std::string out = "torch.cat([";
        for (size_t i = 0; i + 1 < n.args.size(); ++i) out += (i ? ", " : "") + a(i);
        return out + "], dim=" + a(n.args.size() - 1) + ")";
      }
      case OpCode::kSplit:
        return "torch.chunk(" + a(0) + ", " + a(2) + ", dim=" + a(1) + ")";
      case OpCode::kGetitem: {
        // A child's results as a dict (--dict-outputs): result i is key "o<i>".
        Node* const* src = std::get_if<Node*>(&n.args.at(0));
        const int64_t* index = std::get_if<int64_t>(&n.args.at(1));
        if (src && index && *index >= 0 && (*src)->op == NodeOp::kCallModule &&
            returns_dict(m.submodule((*src)->target)))
          return a(0) + "[\"o" + std::to_string(*index) + "\"]";
        return a(0) + "[" + a(1) + "]";
      }
      case OpCode::kBranch:
        return "_branch(" + a(0) + ", " + a(1) + ", " + a(2) + ")";
      default:
        break;
    }
    throw InputError("emit-torch: node %" + n.name + ": op " + n.target +
                     " has no PyTorch form (it appears only after partitioning)");
  }

  void emit_node(std::ostringstream& os, const Module& m, const Node& n) {
    const std::string ind = "        ";
    switch (n.op) {
      case NodeOp::kPlaceholder:
        return;
      case NodeOp::kGetAttr: {
        bool is_buffer = false;
        FLATCHECK_INPUT(m.attribute(n.target, &is_buffer),
                        "emit-torch: get_attr target '" << n.target << "' is not a tensor");
        os << ind << var(n.name) << " = _R.node(" << py_str(n.name) << ", \"get_attr\", "
           << "_R.attr(self, " << children_.path_expr(m, n.target) << ", "
           << (is_buffer ? "True" : "False") << "), ())\n";
        return;
      }
      case NodeOp::kCallFunction:
        if (n.fn == OpCode::kCopy) {
          Node* dst = std::get<Node*>(n.args.at(0));
          const auto& into = update_args(m);
          auto k = std::find(into.begin(), into.end(), dst->target);
          if (inplace_.count(&n))
            os << ind << update_expr(m, n, *inplace_.at(&n)) << "\n";
          else
            os << ind << "_R.copy(self, " << children_.path_expr(m, dst->target) << ", "
               << arg(n.args.at(1))
               << (k == into.end() ? "" : ", _u" + std::to_string(k - into.begin())) << ")\n";
          os << ind << var(n.name) << " = _R.node(" << py_str(n.name) << ", \"copy_\", "
             << arg(n.args.at(1)) << ", " << inputs_of(n) << ")\n";
          return;
        }
        os << ind << var(n.name) << " = _R.node(" << py_str(n.name) << ", " << py_str(n.target)
           << ", " << call_expr(m, n) << ", " << inputs_of(n)
           << (n.fn == OpCode::kSum ? ", " + arg(n.args.at(1)) : std::string()) << ")\n";
        return;
      case NodeOp::kCallModule: {
        const Module* child = m.submodule(n.target);
        os << ind << var(n.name) << " = _R.node(" << py_str(n.name) << ", \"call_module\", "
           << "_R.invoke(" << py_str(n.target) << ", " << inputs_of(n, /*positional=*/true) << ", "
           << ((options_.kwargs || packed(child)) && child ? call_form(m, n, *child)
                                                           : children_.module_expr(m, n.target));
        for (const auto& a : n.args) os << ", " << arg(a);
        if (child)
          for (const auto& path : update_args(*child))
            os << ", _R.state(self, " << children_.path_expr(m, n.target + "." + path) << ")";
        os << "), " << inputs_of(n) << ")\n";
        return;
      }
      case NodeOp::kOutput: {
        const bool dict = returns_dict(&m);
        std::string value = n.args.size() == 1 ? arg(n.args[0]) : dict ? "{" : "(";
        if (n.args.size() != 1) {
          for (size_t i = 0; i < n.args.size(); ++i)
            value +=
                (dict ? "\"o" + std::to_string(i) + "\": " : std::string()) + arg(n.args[i]) + ", ";
          value += dict ? "}" : ")";
        }
        if (options_.update_inputs && &m == c_.module.get()) {
          std::string inputs = "(";
          for (Node* ph : m.graph.placeholders()) inputs += local(ph) + ", ";
          os << ind << "return _update_inputs(" << inputs << "), _R.end(" << inputs_of(n) << ", "
             << value << "))\n";
          return;
        }
        os << ind << "return _R.end(" << inputs_of(n) << ", " << value << ")\n";
        return;
      }
    }
  }

  // --packed-args: whether `child` takes its arguments as one tuple (a module below the root
  // with arguments; the root's come from its caller).
  bool packed(const Module* child) const {
    return options_.packed_args && child && child != c_.module.get() &&
           !child->graph.placeholders().empty();
  }

  // --kwargs, --packed-args: `_call(self.c, packed, ("v_x", "_u0"), k)`, a call of the child
  // with its first `packed` arguments as one tuple (`_args`), then the first k of what it is
  // given by position and the rest by name (its forward's parameter names). k is one per
  // module, from its class's name (one class per module): torch.export keeps one call signature
  // per preserved module path, records each call of a module under every path it is reached
  // by (a call target may be a grandchild's path), and refuses calls that differ in form
  // (torch/_export/wrappers.py: "in_spec mismatch"). Without --kwargs every argument goes by
  // position (k = all).
  std::string call_form(const Module& m, const Node& n, const Module& child) {
    const size_t placeholders = child.graph.placeholders().size();
    const size_t pack = packed(&child) ? placeholders : 0;
    std::string names = "(";
    if (pack) {
      names += "\"_args\", ";
    } else {
      for (Node* ph : child.graph.placeholders()) names += py_str(local(ph)) + ", ";
    }
    for (size_t i = 0; i < update_args(child).size(); ++i)
      names += "\"_u" + std::to_string(i) + "\", ";
    const size_t count = (pack ? 1 : placeholders) + update_args(child).size();
    const uint64_t first = options_.kwargs ? fnv1a64(class_of_.at(&child)) % (count + 1) : count;
    return "_call(" + children_.module_expr(m, n.target) + ", " + std::to_string(pack) + ", " +
           names + "), " + std::to_string(first) + ")";
  }

  void build(std::ostringstream& os) {
    os << "def build():\n    \"\"\"A fresh model, its modules and state shared as in "
          "flatcheck.\"\"\"\n"
       << "    S = _state()\n";
    for (const Module* m : order_)
      os << "    m_" << class_of_.at(m) << " = " << class_of_.at(m) << "(S)\n";
    for (const Module* m : order_)
      for (const auto& [k, ch] : m->children)
        os << "    m_" << class_of_.at(m) << ".add_module("
           << (children_.hostile() ? "CHILD_NAMES[" + py_str(children_.key(*m, k)) + "]"
                                   : py_str(k))
           << ", m_" << class_of_.at(ch.get()) << ")\n";
    os << "    return m_" << class_of_.at(c_.module.get()) << "\n\n\n";
  }

  void data(std::ostringstream& os) {
    os << "INPUTS = [\n";
    for (const auto& t : c_.inputs) os << "    " << tensor_expr(t) << ",\n";
    os << "]\n\n# flatcheck's eager results: outputs of every call, final state by FQN.\n"
       << "EXPECTED_OUTPUTS = [\n";
    for (const auto& call : outputs_) {
      os << "    [\n";
      for (const auto& t : call) os << "        " << tensor_expr(t) << ",\n";
      os << "    ],\n";
    }
    os << "]\nEXPECTED_STATE = {\n";
    for (const auto& [k, t] : final_state_)
      os << "    " << py_str(children_.python_fqn(k)) << ": " << tensor_expr(t) << ",\n";
    const auto runs = runs_per_call(*c_.module);
    for_each_module(*c_.module, [&](const std::string& k, const Module& m) {
      if (counter_.count(&m))
        os << "    " << py_str(children_.python_fqn(join_fqn(k, counter_.at(&m))))
           << ": torch.tensor("
           << static_cast<int64_t>((runs.count(&m) ? runs.at(&m) : 0) *
                                   static_cast<uint64_t>(c_.config.calls))
           << ", dtype=torch.int64),\n";
    });
    os << "}\n# Every node's value in each call, by provenance key (\"n@1/add\"), with its op "
          "(a get_attr\n# or call_module node: its target).\n"
       << "EXPECTED_NODES = [\n";
    for (const auto& trace : traces_) {
      os << "    {\n";
      for (const auto& e : trace)
        os << "        " << py_str(e.origin) << ": (" << py_str(e.op) << ", "
           << tensor_expr(e.value) << "),\n";
      os << "    },\n";
    }
    os << "]\n# The ops of the case's call_function nodes, every module.\nOPS = [";
    std::set<std::string> ops;
    for_each_module(*c_.module, [&](const std::string&, Module& mod) {
      for (Node* n = mod.graph.first(); n; n = n->next)
        if (n->op == NodeOp::kCallFunction) ops.insert(n->target);
    });
    for (const auto& op : ops) os << py_str(op) << ", ";
    os << "]\n";
    partition_map(os);
    export_names(os);
  }

  // flatcheck's own partition of the case, by provenance key: which `_run_on_acc_*` or
  // `_run_on_gpu_*` run each node went to (the torch.fx path splits torch's graph the same way).
  void partition_map(std::ostringstream& os) {
    os << "# flatcheck's partition: the run each node went to, by provenance key.\n";
    std::map<std::string, std::string> where;
    try {
      Pipeline pipeline(c_.module, c_.config);
      const Program& p = *pipeline.build(Stage::kPartitioned).program;
      for (const auto& [run, child] : p.root->children) {
        for (Node* n = child->graph.first(); n; n = n->next)
          if (n->op == NodeOp::kCallFunction && !n->meta.origin.empty())
            where.emplace(n->meta.origin, run);
        for (const auto& [_, e] : child->engines)
          for (const auto& op : e->ops)
            if (!op.origin.empty()) where.emplace(op.origin, run);
      }
    } catch (const InputError& e) {
      os << "PARTITION = None  # partition failed: " << py_str(e.what()) << "\n";
      return;
    }
    os << "PARTITION = {\n";
    for (const auto& [origin, run] : where)
      os << "    " << py_str(origin) << ": " << py_str(run) << ",\n";
    os << "}\n";
  }

  // flatcheck export's placeholder name of each parameter and buffer, by FQN, for the bridge to
  // compare with torch's non-strict export. None where they cannot compare: the program's
  // inputs are `v_<name>`, so a root input that takes a state placeholder's name in flatcheck
  // (p_*, b_*) takes none in torch; and where one tensor has two FQNs, torch lifts it under
  // each, flatcheck under its first (docs/torch.md, "Differences that remain").
  void export_names(std::ostringstream& os) {
    os << "# flatcheck's exported placeholder names of the state, by FQN.\nEXPORT_NAMES = ";
    if (children_.spelled()) {
      os << "None  # children named for torch (--hostile-child-names)\n";
      return;
    }
    for (Node* ph : c_.module->graph.placeholders()) {
      std::string name = export_mangle(ph->name);
      if (name.starts_with("p_") || name.starts_with("b_")) {
        os << "None  # a root input is named like state\n";
        return;
      }
    }
    if (!counter_.empty()) {
      os << "None  # step counters (--step-counters)\n";
      return;
    }
    if (has_constants_) {
      os << "None  # buffers held as plain tensor attributes (--tensor-constants)\n";
      return;
    }
    std::unordered_set<const Tensor*> tensors;
    if (state_fqns(*c_.module, tensors) != tensors.size()) {
      os << "None  # a tensor under two FQNs\n";
      return;
    }
    try {
      Program p = export_program(*c_.module);
      os << "{\n";
      for (const InputSpec& s : p.sig.inputs)
        if (s.kind != InputSpec::kUserInput)
          os << "    " << py_str(s.target) << ": " << py_str(s.name) << ",\n";
      os << "}\n";
    } catch (const InputError& e) {
      os << "None  # export failed: " << py_str(e.what()) << "\n";
    }
  }

  struct TraceEntry {
    std::string origin, op;
    Tensor value;
  };

  const Case& c_;
  const EmitOptions options_;
  std::unordered_map<const Module*, std::vector<std::string>> updates_;  // --update-args
  std::vector<std::vector<Tensor>> outputs_;
  std::map<std::string, Tensor> final_state_;
  std::vector<std::vector<TraceEntry>> traces_;  // per call
  std::unordered_map<const Tensor*, int> storage_;
  std::unordered_map<const Module*, std::string> class_of_;
  std::vector<const Module*> order_;
  std::unordered_map<const Node*, std::string> spelled_;    // --hostile-names: parameters
  ChildNames children_;                                     // --hostile-child-names
  std::unordered_map<const Node*, const Node*> inplace_;    // --inplace-updates: copy_ -> its op
  std::unordered_map<const Module*, std::string> counter_;  // --step-counters: its name
  bool has_constants_ = false;  // --tensor-constants held some buffer as a plain attribute
  std::map<std::string, std::string> consts_;  // module-level float constants: name -> definition
};

}  // namespace

std::string emit_torch(const Case& c, const std::string& source, const EmitOptions& options) {
  return Emitter(c, options).run(source);
}

}  // namespace flatcheck
