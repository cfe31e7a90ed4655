#include "core/runtime/interpreter.h"

#include "core/base/check.h"
#include "core/base/names.h"
#include "core/base/ptr_table.h"
#include "core/ir/engine.h"

namespace flatcheck {

namespace {

// A node's provenance key. Nodes that carry an origin from export ("n/add") are keyed by the
// call now running, so a module graph shared by two calls reports "n/add" in the first and
// "n@1/add" in the second; nodes without one are keyed by the call and their own name.
std::string node_origin(const Node& n, const RunContext& ctx) {
  if (n.meta.origin.empty()) return origin_key(ctx.scope_key, n.name);
  size_t slash = n.meta.origin.rfind('/');
  if (slash == std::string::npos || ctx.scope_key.empty()) return n.meta.origin;
  return origin_key(ctx.scope_key, n.meta.origin.substr(slash + 1));
}

// The values of one module run, keyed by node.
using NodeValues = PtrTable<Node, Value>;

const Value& lookup(const NodeValues& env, const Node* n) {
  const Value* v = env.find(n);
  FLATCHECK_INPUT(v, "node %" << n->name << " has no value");
  return *v;
}

const Tensor& tensor_of(const Value& v, const Node& at) {
  FLATCHECK_INPUT(v.kind == ValueType::kTensor && v.tensor,
                  "node %" << at.name << ": expected a tensor argument");
  return *v.tensor;
}

Scalar scalar_of(const Value& v, const Node& at) {
  switch (v.kind) {
    case ValueType::kBool:
      return v.b;
    case ValueType::kInt:
      return v.i;
    case ValueType::kFloat:
      return v.f;
    default:
      break;
  }
  throw InputError("node %" + at.name + ": expected a static scalar argument");
}

Scalar const_scalar(const Arg& a) {
  if (auto b = std::get_if<bool>(&a)) return *b;
  if (auto i = std::get_if<int64_t>(&a)) return *i;
  if (auto f = std::get_if<float>(&a)) return *f;
  return std::get<std::vector<int64_t>>(a);
}

Value arg_value(const Arg& a, const NodeValues& env) {
  if (auto p = std::get_if<Node*>(&a)) return lookup(env, *p);
  if (auto b = std::get_if<bool>(&a)) return Value::of_bool(*b);
  if (auto i = std::get_if<int64_t>(&a)) return Value::of_int(*i);
  if (auto f = std::get_if<float>(&a)) return Value::of_float(*f);
  throw InputError("a list argument cannot be passed to a module call");
}

void check_input(const Node& ph, const Value& v) {
  const ValueType& t = *ph.meta.val;
  FLATCHECK_INPUT(v.kind == t.kind, "placeholder %" << ph.name << " expects a "
                                                    << value_kind_name(t.kind) << ", got a "
                                                    << value_kind_name(v.kind));
  if (t.kind == ValueType::kTensor)
    FLATCHECK_INPUT(v.tensor->shape == t.shape, "placeholder %" << ph.name << " expects "
                                                                << shape_str(t.shape) << ", got "
                                                                << shape_str(v.tensor->shape));
}

// An op a kernel computes: its tensor inputs and scalar arguments, run on the backend.
Value call_op(const Node& n, NodeValues& env, RunContext& ctx, const std::string& origin) {
  std::vector<const Tensor*>& ins = ctx.op_inputs;
  std::vector<Scalar>& scalars = ctx.op_scalars;
  ins.clear();
  scalars.clear();
  for (const auto& a : n.args) {
    if (auto p = std::get_if<Node*>(&a)) {
      const Value& v = lookup(env, *p);
      if (v.kind == ValueType::kTensor)
        ins.push_back(v.tensor.get());
      else
        scalars.push_back(scalar_of(v, n));
    } else {
      scalars.push_back(const_scalar(a));
    }
  }
  std::vector<Tensor> outs;
  try {
    outs = run_op(*ctx.backend, n.fn, ins, scalars);
  } catch (const InputError& e) {
    throw InputError("node %" + n.name + " (" + (origin.empty() ? node_origin(n, ctx) : origin) +
                     "): " + e.what());
  }
  if (ctx.op_observer) ctx.op_observer(n, origin, ins, scalars, outs);
  if (op_info(n.fn).outputs == 1) return Value::of(std::move(outs.at(0)));
  Value v;
  v.kind = ValueType::kTuple;
  v.tuple.reserve(outs.size());
  for (auto& t : outs) v.tuple.push_back(std::make_shared<const Tensor>(std::move(t)));
  return v;
}

Value call_function(const Module& m, const Node& n, NodeValues& env, RunContext& ctx,
                    const std::string& origin) {
  switch (n.fn) {
    case OpCode::kGetitem: {
      const Value& t = lookup(env, std::get<Node*>(n.args.at(0)));
      int64_t idx = std::get<int64_t>(n.args.at(1));
      FLATCHECK_INPUT(
          t.kind == ValueType::kTuple && idx >= 0 && idx < static_cast<int64_t>(t.tuple.size()),
          "node %" << n.name << ": getitem index " << idx << " out of range");
      return Value::of(t.tuple[static_cast<size_t>(idx)]);
    }
    case OpCode::kBranch: {
      Value flag = arg_value(n.args.at(0), env);
      FLATCHECK_INPUT(flag.kind == ValueType::kBool,
                      "node %" << n.name << ": branch needs a static bool");
      return arg_value(n.args.at(flag.b ? 1 : 2), env);
    }
    case OpCode::kExecuteEngine: {
      Value e = arg_value(n.args.back(), env);
      FLATCHECK_INPUT(e.kind == ValueType::kEngine && e.engine,
                      "node %" << n.name << ": last argument must be an engine");
      std::vector<const Tensor*> ins;
      ins.reserve(n.args.size());
      for (size_t i = 0; i + 1 < n.args.size(); ++i) {
        const Value& v = lookup(env, std::get<Node*>(n.args[i]));
        ins.push_back(&tensor_of(v, n));
      }
      std::vector<Tensor> outs = run_engine(*ctx.backend, *e.engine, ins, ctx.observer);
      Value v;
      v.kind = ValueType::kTuple;
      v.tuple.reserve(outs.size());
      for (auto& t : outs) v.tuple.push_back(std::make_shared<const Tensor>(std::move(t)));
      return v;
    }
    case OpCode::kCopy: {
      Node* dst = std::get<Node*>(n.args.at(0));
      bool is_buffer = false;
      TensorPtr storage =
          dst->op == NodeOp::kGetAttr ? m.attribute(dst->target, &is_buffer) : nullptr;
      FLATCHECK_INPUT(storage && is_buffer,
                      "node %" << n.name << ": copy_ must write a buffer read by get_attr");
      const Tensor& src = tensor_of(lookup(env, std::get<Node*>(n.args.at(1))), n);
      FLATCHECK_INPUT(src.shape == storage->shape, "node %" << n.name << ": copy_ of "
                                                            << shape_str(src.shape) << " into "
                                                            << shape_str(storage->shape));
      *storage = src;
      return Value::of(src);
    }
    default:
      break;
  }
  return call_op(n, env, ctx, origin);
}

}  // namespace

std::vector<Value> run_module(const Module& m, const std::vector<Value>& inputs, RunContext& ctx) {
  FLATCHECK_INPUT(ctx.depth <= kMaxModuleDepth,
                  "module calls nested deeper than " << kMaxModuleDepth);
  NodeValues env(m.graph.size());
  size_t next_input = 0;
  std::vector<Value> result;
  // Provenance keys are built only for observers (an error builds its own).
  const bool observed = ctx.observer || ctx.op_observer;
  std::string origin;
  for (Node* n = m.graph.first(); n; n = n->next) {
    if (observed) origin = node_origin(*n, ctx);
    Value v;
    switch (n->op) {
      case NodeOp::kPlaceholder:
        FLATCHECK_INPUT(next_input < inputs.size(),
                        "too few inputs: placeholder %" << n->name << " has no value");
        v = inputs[next_input++];
        check_input(*n, v);
        break;
      case NodeOp::kGetAttr: {
        bool is_buffer = false;
        if (auto t = m.attribute(n->target, &is_buffer)) {
          // Buffers are read by value: a later copy_ must not change what was read here.
          v = is_buffer ? Value::of(*t) : Value::of(std::shared_ptr<const Tensor>(t));
        } else if (auto e = m.engine(n->target)) {
          v.kind = ValueType::kEngine;
          v.engine = e;
        } else {
          throw InputError("get_attr target '" + n->target + "' does not exist");
        }
        break;
      }
      case NodeOp::kCallFunction:
        v = call_function(m, *n, env, ctx, origin);
        break;
      case NodeOp::kCallModule: {
        const Module* child = m.submodule(n->target);
        FLATCHECK_INPUT(child, "call_module target '" << n->target << "' does not exist");
        std::vector<Value> args;
        for (const auto& a : n->args) args.push_back(arg_value(a, env));
        std::string base = strip_variants(n->target);
        std::string fqn = join_fqn(ctx.scope_fqn, base);
        int index = ctx.calls_per_fqn[fqn]++;
        std::string saved_key = ctx.scope_key, saved_fqn = ctx.scope_fqn;
        ctx.scope_key = call_key(fqn, index);
        ctx.scope_fqn = fqn;
        ++ctx.depth;
        std::vector<Value> outs = run_module(*child, args, ctx);
        --ctx.depth;
        ctx.scope_key = saved_key;
        ctx.scope_fqn = saved_fqn;
        if (outs.size() == 1) {
          v = outs[0];
        } else {
          v.kind = ValueType::kTuple;
          for (auto& o : outs) v.tuple.push_back(o.tensor);
        }
        break;
      }
      case NodeOp::kOutput:
        for (const auto& a : n->args) {
          Value o = arg_value(a, env);
          FLATCHECK_INPUT(o.kind == ValueType::kTensor, "outputs must be tensors");
          result.push_back(std::move(o));
        }
        return result;
    }
    if (ctx.observer && n->op != NodeOp::kPlaceholder)
      ctx.observer(origin, n->op == NodeOp::kCallModule ? strip_variants(n->target) : n->target, v);
    env[n] = std::move(v);
  }
  throw InputError("graph has no output node");
}

std::vector<Tensor> run_module(const Module& m, const std::vector<Tensor>& inputs,
                               Backend& backend) {
  RunContext ctx;
  ctx.backend = &backend;
  std::vector<Value> in;
  for (const auto& t : inputs) in.push_back(Value::of(t));
  std::vector<Tensor> out;
  for (auto& v : run_module(m, in, ctx)) out.push_back(*v.tensor);
  return out;
}

}  // namespace flatcheck
