#include "generators/case.h"

#include <functional>
#include <unordered_set>

#include "core/base/check.h"
#include "core/base/faults.h"

namespace flatcheck {

Case clone_case(const Case& c) {
  Case d = c;
  d.module = clone_module(*c.module, /*share_state=*/false);
  return d;
}

std::string save_case(const Case& c, bool compact) {
  ScopedFaultSuppression no_faults;
  Json inputs = Json::array();
  for (const auto& t : c.inputs) inputs.push_back(tensor_to_json(t));
  Json cfg{{"fallback_ops", Json(std::vector<std::string>(c.config.fallback_ops.begin(),
                                                          c.config.fallback_ops.end()))},
           {"min_block_size", c.config.min_block_size},
           {"calls", c.config.calls},
           {"nan", c.config.nan_exact ? "exact" : "any"}};
  Json j{{"format", "flatcheck-case"},
         {"version", kFormatVersion},
         {"module", module_to_json(*c.module)},
         {"inputs", inputs},
         {"config", cfg}};
  if (c.expect)
    j["expect"] =
        Json{{"property", c.expect->property}, {"stage", c.expect->stage}, {"op", c.expect->op}};
  if (!c.note.empty()) j["note"] = c.note;
  if (c.seed) j["seed"] = *c.seed;
  return compact ? j.dump() + "\n" : dump_canonical(j);
}

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& msg) {
  throw InputError(path + ": " + msg);
}

std::string str_at(const Json& j, const char* key, const std::string& path, size_t max_len) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) bad(path + "/" + key, "expected a string");
  if (it->get_ref<const std::string&>().size() > max_len) bad(path + "/" + key, "string too long");
  return it->get<std::string>();
}

}  // namespace

Case load_case(std::string_view text, const LoadLimits& limits) {
  ScopedFaultSuppression no_faults;
  Json j = parse_json(text, limits);
  if (!j.is_object()) bad("/", "expected an object");
  if (str_at(j, "format", "", 64) != "flatcheck-case")  // first: a program file says so
    bad("/format", "expected \"flatcheck-case\"");
  static const std::set<std::string> allowed = {"format", "version", "module", "inputs",
                                                "config", "expect",  "note",   "seed"};
  for (const auto& [k, _] : j.items())
    if (!allowed.count(k)) bad("/" + k, "unknown key");
  if (!j.contains("version") || !j["version"].is_number_integer() ||
      j["version"].get<int64_t>() != kFormatVersion)
    bad("/version",
        "unsupported version (this build reads " + std::to_string(kFormatVersion) + ")");
  LoadBudget b{limits, 0, 0};
  Case c;
  if (!j.contains("module")) bad("/module", "missing: a case needs a module");
  c.module = module_from_json(j["module"], "/module", b);
  if (!j.contains("inputs") || !j["inputs"].is_array()) bad("/inputs", "expected an array");
  if (j["inputs"].size() > 64) bad("/inputs", "more than 64 inputs");
  for (size_t i = 0; i < j["inputs"].size(); ++i)
    c.inputs.push_back(tensor_from_json(j["inputs"][i], "/inputs/" + std::to_string(i), b));
  auto phs = c.module->graph.placeholders();
  if (phs.size() != c.inputs.size())
    bad("/inputs", std::to_string(c.inputs.size()) + " inputs for " + std::to_string(phs.size()) +
                       " root placeholders");
  for (size_t i = 0; i < phs.size(); ++i)
    if (phs[i]->meta.val->kind != ValueType::kTensor ||
        phs[i]->meta.val->shape != c.inputs[i].shape)
      bad("/inputs/" + std::to_string(i), "shape " + shape_str(c.inputs[i].shape) +
                                              " does not match root placeholder %" + phs[i]->name);
  if (auto it = j.find("config"); it != j.end()) {
    const Json& cfg = *it;
    if (!cfg.is_object()) bad("/config", "expected an object");
    for (const auto& [k, _] : cfg.items())
      if (k != "fallback_ops" && k != "min_block_size" && k != "calls" && k != "nan")
        bad("/config/" + k, "unknown key");
    if (auto f = cfg.find("fallback_ops"); f != cfg.end()) {
      if (!f->is_array() || f->size() > 64)
        bad("/config/fallback_ops", "expected an array of op names");
      c.config.fallback_ops.clear();
      for (size_t i = 0; i < f->size(); ++i) {
        const Json& o = (*f)[i];
        std::string p = "/config/fallback_ops/" + std::to_string(i);
        if (!o.is_string() || !op_by_name(o.get<std::string>()))
          bad(p, "expected an op name, got " + o.dump());
        c.config.fallback_ops.insert(o.get<std::string>());
      }
    }
    auto int_in = [&](const char* key, int lo, int hi, int& out) {
      if (auto v = cfg.find(key); v != cfg.end()) {
        if (!v->is_number_integer() || v->get<int64_t>() < lo || v->get<int64_t>() > hi)
          bad(std::string("/config/") + key, "expected an integer in [" + std::to_string(lo) +
                                                 ", " + std::to_string(hi) + "], got " + v->dump());
        out = static_cast<int>(v->get<int64_t>());
      }
    };
    int_in("min_block_size", 1, 1000000, c.config.min_block_size);
    int_in("calls", 1, 16, c.config.calls);
    if (cfg.contains("nan")) {
      std::string n = str_at(cfg, "nan", "/config", 16);
      if (n != "exact" && n != "any") bad("/config/nan", "expected \"exact\" or \"any\"");
      c.config.nan_exact = n == "exact";
    }
  }
  if (auto it = j.find("expect"); it != j.end()) {
    if (!it->is_object()) bad("/expect", "expected an object");
    for (const auto& [k, _] : it->items())
      if (k != "property" && k != "stage" && k != "op") bad("/expect/" + k, "unknown key");
    c.expect = Expectation{str_at(*it, "property", "/expect", 64),
                           str_at(*it, "stage", "/expect", 64), str_at(*it, "op", "/expect", 64)};
  }
  if (j.contains("note")) c.note = str_at(j, "note", "", 1 << 16);
  if (auto it = j.find("seed"); it != j.end()) {
    if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<int64_t>() >= 0))
      bad("/seed", "expected a non-negative integer");
    c.seed = it->get<uint64_t>();
  }
  return c;
}

Case load_case_file(const std::string& path) {
  std::string text = read_file(path, default_load_limits().max_bytes);
  try {
    return load_case(text);
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what());
  }
}

size_t case_size(const Case& c) {
  std::unordered_set<const Module*> seen;
  size_t n = 0;
  std::function<void(const Module&)> walk = [&](const Module& m) {
    if (!seen.insert(&m).second) return;
    for (Node* x = m.graph.first(); x; x = x->next)
      if (x->op == NodeOp::kCallFunction || x->op == NodeOp::kCallModule) ++n;
    for (const auto& [_, ch] : m.children) walk(*ch);
  };
  walk(*c.module);
  return n;
}

}  // namespace flatcheck
