// Structure-aware mutations (harness/fuzz/structure_mutations.h).
#include "harness/fuzz/structure_mutations.h"

#include <cstring>
#include <vector>

#include "core/base/names.h"
#include "core/ops/ops.h"
#include "core/serialize/serialize.h"

namespace flatcheck {
namespace {

struct Rand {
  uint64_t s;
  uint64_t next() {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return s;
  }
  size_t below(size_t n) { return n ? static_cast<size_t>(next() % n) : 0; }
};

// Every value in the tree, with the path of object keys that leads to it.
void collect(Json& j, std::vector<Json*>& all, std::vector<Json*>& objects,
             std::vector<Json*>& numbers) {
  all.push_back(&j);
  if (j.is_object()) objects.push_back(&j);
  if (j.is_number()) numbers.push_back(&j);
  if (j.is_structured())
    for (auto& v : j) collect(v, all, objects, numbers);
}

// Module objects with their module path ("" for the root, "a.b" below).
void modules(Json& j, const std::string& path, std::vector<std::pair<Json*, std::string>>& out) {
  if (!j.is_object()) return;
  out.emplace_back(&j, path);
  if (auto it = j.find("children"); it != j.end() && it->is_object())
    for (auto& [k, v] : it->items()) modules(v, join_fqn(path, k), out);
}

// A small number in place of another: a dim, a split count, a scalar, an index nudged.
bool nudge_number(std::vector<Json*>& numbers, Rand& r) {
  if (numbers.empty()) return false;
  static const double kSmall[] = {-2, -1, 0, 1, 2, 3, 0.5};
  double v = kSmall[r.below(7)];
  Json& n = *numbers[r.below(numbers.size())];
  if (v == 0.5)
    n = v;
  else
    n = static_cast<int64_t>(v);
  return true;
}

// A node's argument rewired to another node of its graph defined before it.
bool rewire_argument(std::vector<Json*>& objects, Rand& r) {
  std::vector<Json*> lists;
  for (Json* o : objects)
    if (auto it = o->find("nodes"); it != o->end() && it->is_array() && it->size() > 2)
      lists.push_back(&*it);
  if (lists.empty()) return false;
  Json& nodes = *lists[r.below(lists.size())];
  size_t i = 1 + r.below(nodes.size() - 1);
  if (!nodes[i].is_object() || !nodes[i].contains("args") || !nodes[i]["args"].is_array() ||
      nodes[i]["args"].empty())
    return false;
  Json& arg = nodes[i]["args"][r.below(nodes[i]["args"].size())];
  const Json& from = nodes[r.below(i)];
  if (!arg.is_string() || !from.is_object() || !from.contains("name")) return false;
  arg = from["name"];
  return true;
}

// A node's argument (or a whole node's args) replaced by a constant of another kind: a bool, an
// int, a float, a list or an empty list, where the slot may want a node or another constant.
bool retype_argument(std::vector<Json*>& objects, Rand& r) {
  for (int tries = 0; tries < 8 && !objects.empty(); ++tries) {
    Json& o = *objects[r.below(objects.size())];
    auto it = o.find("args");
    if (it == o.end() || !it->is_array() || it->empty() || !o.contains("op")) continue;
    static const Json kConstants[] = {true, 0, 2, 0.5, Json::array(), Json::array({1, 2})};
    (*it)[r.below(it->size())] = kConstants[r.below(6)];
    return true;
  }
  return false;
}

// Another op for a call_function node.
bool swap_op(std::vector<Json*>& objects, Rand& r) {
  for (int tries = 0; tries < 8 && !objects.empty(); ++tries) {
    Json& o = *objects[r.below(objects.size())];
    if (o.value("op", Json()) != "call_function") continue;
    o["target"] = std::string(op_info(static_cast<OpCode>(r.below(kNumOps))).name);
    return true;
  }
  return false;
}

// A child called twice more (exponential expansion through aliases).
bool call_child_twice(std::vector<std::pair<Json*, std::string>>& mods, Rand& r) {
  for (auto& [m, path] : mods) {
    auto g = m->find("graph");
    auto c = m->find("children");
    if (g == m->end() || c == m->end() || !c->is_object() || c->empty() || !g->is_object() ||
        !g->contains("nodes") || !(*g)["nodes"].is_array())
      continue;
    Json& nodes = (*g)["nodes"];
    std::string child = c->begin().key();
    for (int k = 0; k < 2; ++k)
      nodes.insert(nodes.begin() + static_cast<long>(nodes.empty() ? 0 : nodes.size() - 1),
                   Json{{"name", "dup" + std::to_string(r.below(1000))},
                        {"op", "call_module"},
                        {"target", child},
                        {"args", Json::array({nodes.empty() || !nodes[0].is_object()
                                                  ? Json()
                                                  : nodes[0].value("name", Json())})}});
    return true;
  }
  return false;
}

bool mutate_tree(Json& doc, Rand& r) {
  std::vector<Json*> all, objects, numbers;
  collect(doc, all, objects, numbers);
  std::vector<std::pair<Json*, std::string>> mods;
  if (doc.is_object() && doc.contains("module")) modules(doc["module"], "", mods);
  switch (r.below(10)) {
    case 0: {  // alias a child to an ancestor, itself or another module
      if (mods.size() < 2) return false;
      auto& [m, path] = mods[1 + r.below(mods.size() - 1)];
      std::string target = mods[r.below(mods.size())].second;
      if (r.below(2))
        target = path.substr(0, path.rfind('.') == std::string::npos ? 0 : path.rfind('.'));
      *m = Json{{"alias", target}};
      return true;
    }
    case 1: {  // blow up a number
      if (numbers.empty()) return false;
      static const int64_t kBig[] = {
          0, -1, int64_t{1} << 24, int64_t{1} << 31, int64_t{1} << 40, INT64_MAX};
      Json& n = *numbers[r.below(numbers.size())];
      n = kBig[r.below(6)];
      return true;
    }
    case 2: {  // drop a field
      if (objects.empty()) return false;
      Json& o = *objects[r.below(objects.size())];
      if (o.empty()) return false;
      auto it = o.begin();
      std::advance(it, static_cast<long>(r.below(o.size())));
      o.erase(it);
      return true;
    }
    case 3: {  // graft a subtree in place of another value
      if (all.size() < 2) return false;
      Json copy = *all[r.below(all.size())];
      *all[1 + r.below(all.size() - 1)] = std::move(copy);
      return true;
    }
    case 4:
      return call_child_twice(mods, r);
    case 6:
      return nudge_number(numbers, r);
    case 7:
      return rewire_argument(objects, r);
    case 8:
      return swap_op(objects, r);
    case 9:
      return retype_argument(objects, r);
    default:
      return false;  // 5: the text-level duplicate key below
  }
}

// Duplicates the first member of a random object in the text: {"a": 1, ...} -> {"a": 1, "a": 1,
// ...}
bool duplicate_key(std::string& text, Rand& r) {
  std::vector<size_t> opens;
  for (size_t i = 0; i + 1 < text.size(); ++i)
    if (text[i] == '{' && text[i + 1] == '"') opens.push_back(i);
  if (opens.empty()) return false;
  size_t at = opens[r.below(opens.size())] + 1;
  size_t end = text.find_first_of(",}", text.find(':', at));
  if (end == std::string::npos) return false;
  std::string member = text.substr(at, end - at);
  text.insert(at, member + ",");
  return true;
}

}  // namespace

bool mutate_document(std::string& text, uint64_t seed) {
  Rand r{seed * 0x9e3779b97f4a7c15ull + 1};
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return false;
  std::string out;
  bool changed = false;
  try {  // total: any surprise in the tree means no mutation
    int rounds = r.below(2) ? 1 : 1 + static_cast<int>(r.below(4));
    for (int k = 0; k < rounds; ++k)
      for (int tries = 0; tries < 4; ++tries)
        if (mutate_tree(doc, r)) {
          changed = true;
          break;
        }
    out = doc.dump();
  } catch (const Json::exception&) {
    return false;
  }
  if (!changed || r.below(4) == 0) changed = duplicate_key(out, r) || changed;
  if (changed) text = std::move(out);
  return changed;
}

}  // namespace flatcheck
