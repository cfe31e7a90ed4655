#include "generators/case.h"

#include "core/serialize/fields.h"

#include <functional>
#include <unordered_set>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/base/text.h"

namespace flatcheck {

namespace {

// The longest note a case file may hold (load_case refuses a longer one).
constexpr size_t kMaxNoteBytes = 1 << 16;

// A note as it is written: it may quote a failure message (a user's pass can throw any text),
// so controls other than tab and line breaks and ill-formed UTF-8 are spelled out, and a note
// too long to load again is cut at a character boundary: a written case always loads.
std::string writable_note(const std::string& note) {
  std::string text = printable_text(note, /*keep_layout=*/true);
  if (text.size() <= kMaxNoteBytes) return text;
  const std::string cut = " [note cut]";
  size_t end = kMaxNoteBytes - cut.size();
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end) + cut;
}

}  // namespace

Case clone_case(const Case& c) {
  Case d = c;
  d.module = clone_module(*c.module, /*share_state=*/false);
  return d;
}

// Keys in increasing order: config, expect, format, inputs, module, note, seed, version.
std::string save_case(const Case& c, bool compact) {
  ScopedFaultSuppression no_faults;
  JsonWriter w(compact);
  w.begin_object();
  w.key("config");
  w.begin_object();
  w.key("calls");
  w.value(c.config.calls);
  w.key("fallback_ops");
  w.begin_array();
  for (const auto& op : c.config.fallback_ops) w.value(op);
  w.end();
  w.key("min_block_size");
  w.value(c.config.min_block_size);
  w.key("nan");
  w.value(c.config.nan_exact ? "exact" : "any");
  w.end();
  if (c.expect) {
    w.key("expect");
    w.begin_object();
    if (!c.expect->module.empty()) {
      w.key("module");
      w.value(c.expect->module);
    }
    w.key("op");
    w.value(c.expect->op);
    w.key("property");
    w.value(c.expect->property);
    w.key("stage");
    w.value(c.expect->stage);
    w.end();
  }
  w.key("format");
  w.value("flatcheck-case");
  w.key("inputs");
  w.begin_array();
  for (const auto& t : c.inputs) write_tensor(w, t);
  w.end();
  w.key("module");
  write_module(w, *c.module);
  if (!c.note.empty()) {
    w.key("note");
    w.value(writable_note(c.note));
  }
  if (c.seed) {
    w.key("seed");
    w.value(*c.seed);
  }
  w.key("version");
  w.value(kFormatVersion);
  w.end();
  return w.take();
}

namespace {

using namespace serial;

void read_config(JsonRef j, PipelineConfig& config) {
  const JsonPath p = "/config";
  as_object(j, p, {"fallback_ops", "min_block_size", "calls", "nan"});
  if (auto f = j.find("fallback_ops")) {
    JsonPath fp = key_path(p, "fallback_ops");
    as_array(*f, fp, 64);
    config.fallback_ops.clear();
    for (size_t i = 0; i < f->size(); ++i) {
      std::string op = as_string((*f)[i], idx_path(fp, i), 64);
      if (!op_by_name(op)) fail(idx_path(fp, i), "expected an op name, got \"" + op + "\"");
      config.fallback_ops.insert(op);
    }
  }
  if (auto v = j.find("min_block_size"))
    config.min_block_size = static_cast<int>(as_int(*v, key_path(p, "min_block_size"), 1, 1000000));
  if (auto v = j.find("calls"))
    config.calls = static_cast<int>(as_int(*v, key_path(p, "calls"), 1, 16));
  if (auto v = j.find("nan")) {
    std::string n = as_string(*v, key_path(p, "nan"), 16);
    if (n != "exact" && n != "any") fail(key_path(p, "nan"), "expected \"exact\" or \"any\"");
    config.nan_exact = n == "exact";
  }
}

Expectation read_expect(JsonRef j) {
  const JsonPath p = "/expect";
  as_object(j, p, {"property", "stage", "op", "module"});
  return Expectation{as_string(member(j, "property", p), key_path(p, "property"), 64),
                     as_string(member(j, "stage", p), key_path(p, "stage"), 64),
                     as_string(member(j, "op", p), key_path(p, "op"), 64),
                     j.contains("module") ? as_string(j.at("module"), key_path(p, "module"), 1024)
                                          : std::string()};
}

void read_inputs(JsonRef j, Case& c, LoadBudget& b) {
  const JsonPath ip = "/inputs";
  JsonRef inputs = as_array(j, ip, 64);
  for (size_t i = 0; i < inputs.size(); ++i)
    c.inputs.push_back(tensor_from_json(inputs[i], idx_path(ip, i), b));
  auto phs = c.module->graph.placeholders();
  if (phs.size() != c.inputs.size())
    fail(ip, std::to_string(c.inputs.size()) + " inputs for " + std::to_string(phs.size()) +
                 " root placeholders");
  for (size_t i = 0; i < phs.size(); ++i)
    if (phs[i]->meta.val->kind != ValueType::kTensor ||
        phs[i]->meta.val->shape != c.inputs[i].shape)
      fail(idx_path(ip, i), "shape " + shape_str(c.inputs[i].shape) +
                                " does not match root placeholder %" + phs[i]->name);
}

// A case is the model before partitioning: engines exist only after it, so none is read here.
void no_engines(Module& root) {
  for_each_module(root, [](const std::string& path, Module& m) {
    if (m.engines.empty()) return;
    std::string p = "/module";
    size_t start = 0;
    while (!path.empty() && start <= path.size()) {
      size_t dot = path.find('.', start);
      p += "/children/" + path.substr(start, dot == std::string::npos ? dot : dot - start);
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    p += "/engines";
    const JsonPath jp(p);
    fail(jp, "a case's modules hold no engines (they appear only after partitioning)");
  });
}

}  // namespace

Case load_case(std::string_view text, const LoadLimits& limits) {
  ScopedFaultSuppression no_faults;
  JsonDoc doc = parse_doc(text, limits);
  JsonRef j = doc.root();
  as_object(j, "");
  // The format first: a program or module file says what it is.
  if (as_string(member(j, "format", ""), "/format", 64) != "flatcheck-case")
    fail("/format", "expected \"flatcheck-case\"");
  as_object(j, "", {"format", "version", "module", "inputs", "config", "expect", "note", "seed"});
  if (as_int(member(j, "version", ""), "/version", 0, 1 << 20) != kFormatVersion)
    fail("/version",
         "unsupported version (this build reads " + std::to_string(kFormatVersion) + ")");
  LoadBudget b{limits, 0, 0};
  Case c;
  if (!j.contains("module")) fail("/module", "missing: a case needs a module");
  c.module = module_from_json(j.at("module"), "/module", b);
  no_engines(*c.module);
  read_inputs(member(j, "inputs", ""), c, b);
  if (auto it = j.find("config")) read_config(*it, c.config);
  if (auto it = j.find("expect")) c.expect = read_expect(*it);
  if (auto it = j.find("note")) c.note = as_note(*it, "/note", kMaxNoteBytes);
  if (auto it = j.find("seed")) {
    if (!it->is_number_unsigned() && !(it->is_number_integer() && it->int64() >= 0))
      fail("/seed", "expected a non-negative integer");
    c.seed = it->uint64();
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
