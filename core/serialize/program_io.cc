// Programs (signature, state, root module) and engines in the file format.
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
#include "core/serialize/fields.h"
#include "core/serialize/serialize.h"

namespace flatcheck {
using namespace serial;

namespace {

void write_ints(JsonWriter& w, const std::vector<int>& v) {
  w.begin_array();
  for (int i : v) w.value(i);
  w.end();
}

}  // namespace

// Keys in increasing order: arena, constants, format, inputs, name, ops, outputs, slots,
// version.
void write_engine(JsonWriter& w, const Engine& e) {
  w.begin_object();
  w.key("arena");
  w.value(e.arena_floats);
  w.key("constants");
  w.begin_array();
  for (const auto& [s, t] : e.constants) {
    w.begin_object();
    w.key("slot");
    w.value(s);
    w.key("value");
    write_tensor(w, t);
    w.end();
  }
  w.end();
  w.key("format");
  w.value("flatcheck-engine");
  w.key("inputs");
  w.begin_array();
  for (const auto& b : e.inputs) {
    w.begin_object();
    w.key("name");
    w.value(b.name);
    w.key("position");
    w.value(b.position);
    w.key("slot");
    w.value(b.slot);
    w.end();
  }
  w.end();
  w.key("name");
  w.value(e.name);
  w.key("ops");
  w.begin_array();
  for (const auto& op : e.ops) {
    w.begin_object();
    w.key("in");
    write_ints(w, op.in);
    w.key("op");
    w.value(op_info(op.op).name);
    if (!op.origin.empty()) {
      w.key("origin");
      w.value(op.origin);
    }
    w.key("out");
    write_ints(w, op.out);
    w.key("scalars");
    w.begin_array();
    for (const auto& s : op.scalars) std::visit([&](const auto& v) { write_arg(w, Arg(v)); }, s);
    w.end();
    w.end();
  }
  w.end();
  w.key("outputs");
  w.begin_array();
  for (const auto& b : e.outputs) {
    w.begin_object();
    w.key("name");
    w.value(b.name);
    w.key("slot");
    w.value(b.slot);
    w.end();
  }
  w.end();
  w.key("slots");
  w.begin_array();
  for (const auto& s : e.slots) {
    w.begin_object();
    w.key("offset");
    w.value(s.offset);
    w.key("shape");
    write_shape(w, s.shape);
    w.end();
  }
  w.end();
  w.key("version");
  w.value(Engine::kVersion);
  w.end();
}

namespace {

std::vector<EngineBinding> bindings_from_json(JsonRef j, const JsonPath& path, const char* key,
                                              bool with_position, const LoadLimits& lim) {
  JsonPath bp = key_path(path, key);
  JsonRef arr = as_array(member(j, key, path), bp, lim.max_engine_bindings);
  std::vector<EngineBinding> out;
  for (size_t i = 0; i < arr.size(); ++i) {
    JsonPath p = idx_path(bp, i);
    if (with_position)
      as_object(arr[i], p, {"name", "slot", "position"});
    else
      as_object(arr[i], p, {"name", "slot"});
    EngineBinding eb;
    eb.name = as_string(member(arr[i], "name", p), key_path(p, "name"), lim.max_name_length);
    eb.slot = static_cast<int>(as_int(member(arr[i], "slot", p), key_path(p, "slot"), 0,
                                      static_cast<int64_t>(lim.max_engine_slots)));
    if (with_position)
      eb.position = static_cast<int>(as_int(member(arr[i], "position", p), key_path(p, "position"),
                                            0, static_cast<int64_t>(lim.max_nodes)));
    out.push_back(eb);
  }
  return out;
}

// One op of the op list: its code, the slots it reads and writes, its scalars, its origin.
EngineOp engine_op_from_json(JsonRef j, const JsonPath& p, const LoadLimits& lim) {
  const auto kMaxSlot = static_cast<int64_t>(lim.max_engine_slots);
  EngineOp op;
  std::string name = as_string(member(j, "op", p), key_path(p, "op"), 32);
  auto code = op_by_name(name);
  if (!code) fail(key_path(p, "op"), "unknown op \"" + name + "\"");
  op.op = *code;
  for (const char* key : {"in", "out"}) {
    JsonPath kp = key_path(p, key);
    JsonRef arr = as_array(member(j, key, p), kp, lim.max_args);
    for (size_t k = 0; k < arr.size(); ++k)
      (key[0] == 'i' ? op.in : op.out)
          .push_back(static_cast<int>(as_int(arr[k], idx_path(kp, k), 0, kMaxSlot)));
  }
  JsonPath scp = key_path(p, "scalars");
  JsonRef sc = as_array(member(j, "scalars", p), scp, lim.max_args);
  for (size_t k = 0; k < sc.size(); ++k) {
    JsonRef a = sc[k];
    JsonPath akp = idx_path(scp, k);
    if (a.is_boolean()) {
      op.scalars.emplace_back(a.boolean());
    } else if (a.is_number_integer()) {
      op.scalars.emplace_back(as_int(a, akp, -(int64_t{1} << 40), int64_t{1} << 40));
    } else if (a.is_array()) {
      as_array(a, akp, lim.max_rank);
      std::vector<int64_t> ints;
      for (size_t q = 0; q < a.size(); ++q)
        ints.push_back(as_int(a[q], idx_path(akp, q), -(int64_t{1} << 40), int64_t{1} << 40));
      op.scalars.emplace_back(std::move(ints));
    } else {
      op.scalars.emplace_back(float_from_json(a, akp));
    }
  }
  if (auto it = j.find("origin"))
    op.origin = as_string(*it, key_path(p, "origin"), lim.max_origin_length);
  return op;
}

// The signature's input or output specs: {"kind", "name", "target"}, where every kind but
// `plain` (user inputs, user outputs) names its state target. Kinds are read by the names
// input_kind_name / output_kind_name give.
template <class Spec>
std::vector<Spec> specs_from_json(JsonRef sig, const JsonPath& sp, const char* key, int kinds,
                                  std::string_view (*kind_name)(typename Spec::Kind),
                                  typename Spec::Kind plain, const LoadBudget& b,
                                  const std::function<void(const Spec&, const JsonPath&)>& check) {
  std::string expected;
  for (int k = 0; k < kinds; ++k)
    expected += std::string(k == 0           ? ""
                            : k + 1 == kinds ? " or "
                                             : ", ") +
                std::string(kind_name(static_cast<typename Spec::Kind>(k)));
  JsonPath ap = key_path(sp, key);
  JsonRef arr = as_array(member(sig, key, sp), ap, b.limits.max_nodes);
  std::vector<Spec> out;
  for (size_t i = 0; i < arr.size(); ++i) {
    JsonPath q = idx_path(ap, i);
    as_object(arr[i], q, {"kind", "name", "target"});
    Spec s;
    std::string kind = as_string(member(arr[i], "kind", q), key_path(q, "kind"), 32);
    int k = 0;
    while (k < kinds && kind_name(static_cast<typename Spec::Kind>(k)) != kind) ++k;
    if (k == kinds) fail(key_path(q, "kind"), "expected " + expected + ", got \"" + kind + "\"");
    s.kind = static_cast<typename Spec::Kind>(k);
    s.name = as_string(member(arr[i], "name", q), key_path(q, "name"), b.limits.max_name_length);
    if (s.kind != plain)
      s.target =
          as_string(member(arr[i], "target", q), key_path(q, "target"), b.limits.max_path_length);
    if (check) check(s, q);  // before the next entry is read, so the first error is reported
    out.push_back(s);
  }
  return out;
}

}  // namespace

Engine engine_from_json(JsonRef j, const JsonPath& path, LoadBudget& b) {
  as_object(
      j, path,
      {"format", "version", "name", "arena", "slots", "inputs", "outputs", "constants", "ops"});
  if (as_string(member(j, "format", path), key_path(path, "format"), 64) != "flatcheck-engine")
    fail(key_path(path, "format"), "expected \"flatcheck-engine\"");
  if (as_int(member(j, "version", path), key_path(path, "version"), 0, 1 << 20) != Engine::kVersion)
    fail(key_path(path, "version"), "unsupported engine version");
  const LoadLimits& lim = b.limits;
  const auto kMaxSlot = static_cast<int64_t>(lim.max_engine_slots);
  Engine e;
  e.name = as_string(member(j, "name", path), key_path(path, "name"), b.limits.max_name_length);
  e.arena_floats =
      as_int(member(j, "arena", path), key_path(path, "arena"), 0, lim.max_engine_arena_floats);
  JsonPath sp = key_path(path, "slots");
  JsonRef slots = as_array(member(j, "slots", path), sp, lim.max_engine_slots);
  for (size_t i = 0; i < slots.size(); ++i) {
    JsonPath p = idx_path(sp, i);
    as_object(slots[i], p, {"shape", "offset"});
    e.slots.push_back(
        {shape_from_json(member(slots[i], "shape", p), key_path(p, "shape"), b.limits),
         as_int(member(slots[i], "offset", p), key_path(p, "offset"), 0,
                lim.max_engine_arena_floats)});
  }
  e.inputs = bindings_from_json(j, path, "inputs", true, lim);
  e.outputs = bindings_from_json(j, path, "outputs", false, lim);
  JsonPath cp = key_path(path, "constants");
  JsonRef consts = as_array(member(j, "constants", path), cp, lim.max_engine_bindings);
  for (size_t i = 0; i < consts.size(); ++i) {
    JsonPath p = idx_path(cp, i);
    as_object(consts[i], p, {"slot", "value"});
    int s =
        static_cast<int>(as_int(member(consts[i], "slot", p), key_path(p, "slot"), 0, kMaxSlot));
    e.constants.emplace_back(
        s, tensor_from_json(member(consts[i], "value", p), key_path(p, "value"), b));
  }
  JsonPath op_path = key_path(path, "ops");
  JsonRef ops = as_array(member(j, "ops", path), op_path, lim.max_nodes);
  for (size_t i = 0; i < ops.size(); ++i) {
    JsonPath p = idx_path(op_path, i);
    as_object(ops[i], p, {"op", "in", "out", "scalars", "origin"});
    EngineOp op = engine_op_from_json(ops[i], p, lim);
    e.ops.push_back(std::move(op));
  }
  try {
    validate_engine(e);
  } catch (const InputError& err) {
    const std::string where = path.str() + "/" + err.what();
    fail(where, "invalid engine");
  }
  return e;
}

namespace {

template <class Spec, class KindName>
void write_specs(JsonWriter& w, const std::vector<Spec>& specs, KindName kind_name) {
  w.begin_array();
  for (const auto& s : specs) {
    w.begin_object();
    w.key("kind");
    w.value(kind_name(s.kind));
    w.key("name");
    w.value(s.name);
    if (!s.target.empty()) {
      w.key("target");
      w.value(s.target);
    }
    w.end();
  }
  w.end();
}

// The members of a program after "format" and before "version", in increasing order: module,
// module_types, signature, state.
void write_program_members(JsonWriter& w, const Program& p) {
  w.key("module");
  write_module(w, *p.root);
  w.key("module_types");
  w.begin_object();
  for (const auto& [k, v] : p.module_types) {
    w.key(k);
    w.value(v);
  }
  w.end();
  w.key("signature");
  w.begin_object();
  w.key("inputs");
  write_specs(w, p.sig.inputs, input_kind_name);
  w.key("outputs");
  write_specs(w, p.sig.outputs, output_kind_name);
  w.end();
  w.key("state");
  w.begin_object();
  for (const auto& [k, v] : p.state) {
    w.key(k);
    write_tensor(w, *v);
  }
  w.end();
}

}  // namespace

Program program_from_json(JsonRef j, const JsonPath& path, LoadBudget& b) {
  as_object(j, path, {"module", "signature", "state", "module_types", "format", "version"});
  Program p;
  JsonPath stp = key_path(path, "state");
  JsonRef state = as_object(member(j, "state", path), stp);
  for (const auto& [k, v] : state.items()) {
    check_path(k, key_path(stp, k), b.limits.max_path_length);
    p.state[std::string(k)] = std::make_shared<Tensor>(tensor_from_json(v, key_path(stp, k), b));
  }
  JsonPath tp = key_path(path, "module_types");
  if (auto it = j.find("module_types")) {
    as_object(*it, tp);
    for (const auto& [k, v] : it->items()) {
      check_path(k, key_path(tp, k), b.limits.max_path_length);
      p.module_types[std::string(k)] = as_string(v, key_path(tp, k), b.limits.max_name_length);
    }
  }
  JsonPath sp = key_path(path, "signature");
  JsonRef sig = as_object(member(j, "signature", path), sp, {"inputs", "outputs"});
  p.sig.inputs = specs_from_json<InputSpec>(
      sig, sp, "inputs", 3, input_kind_name, InputSpec::kUserInput, b,
      [&p](const InputSpec& s, const JsonPath& q) {
        if (s.kind != InputSpec::kUserInput && !p.state.count(s.target))
          fail(key_path(q, "target"), "state \"" + s.target + "\" does not exist");
      });
  p.sig.outputs = specs_from_json<OutputSpec>(sig, sp, "outputs", 2, output_kind_name,
                                              OutputSpec::kUserOutput, b, nullptr);
  p.root = module_from_json(member(j, "module", path), key_path(path, "module"), b);
  try {
    lint_program(p);
  } catch (const InputError& e) {
    fail(path, e.what());
  }
  return p;
}

namespace {

void write_program_document(JsonWriter& w, const Program& p) {
  w.begin_object();
  w.key("format");
  w.value("flatcheck-program");
  write_program_members(w, p);
  w.key("version");
  w.value(kFormatVersion);
  w.end();
}

}  // namespace

std::string save_program(const Program& p, bool compact) {
  JsonWriter w(compact);
  write_program_document(w, p);
  return w.take();
}

Program load_program(std::string_view text, const LoadLimits& limits) {
  JsonDoc doc = parse_doc(text, limits);
  JsonRef j = doc.root();
  check_header(j, "flatcheck-program");
  LoadBudget b{limits, 0, 0};
  return program_from_json(j, "", b);
}

}  // namespace flatcheck
