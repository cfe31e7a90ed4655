// libFuzzer custom mutator for flatcheck documents (docs/fuzzing.md): it parses the input as
// JSON and changes its tree the way hostile documents do, then lets the loader target
// (loader_fuzzer.cc, linked beside it as `structure_fuzzer`) judge the result:
//   - alias a child module to one of its ancestors, to itself or to a sibling
//   - duplicate a key of an object (in the text, where the parser must see it)
//   - blow up a dimension (0, 2^24, 2^31, 2^40, -1) or any number (past 64 bits, negative)
//   - drop a field, or graft a subtree from elsewhere in the document
//   - call a child twice more (exponential expansion through aliases)
// Inputs that are not JSON, and one mutation in eight, go to libFuzzer's byte mutator.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/base/names.h"
#include "core/serialize/serialize.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using flatcheck::Json;

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
    for (auto& [k, v] : it->items()) modules(v, flatcheck::join_fqn(path, k), out);
}

bool mutate_tree(Json& doc, Rand& r) {
  std::vector<Json*> all, objects, numbers;
  collect(doc, all, objects, numbers);
  std::vector<std::pair<Json*, std::string>> mods;
  if (doc.is_object() && doc.contains("module")) modules(doc["module"], "", mods);
  switch (r.below(6)) {
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
    case 4: {  // call a child twice more
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

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  Rand r{seed * 0x9e3779b97f4a7c15ull + 1};
  Json doc = Json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || r.below(8) == 0) return LLVMFuzzerMutate(data, size, max_size);
  std::string text;
  bool changed = false;
  try {  // the mutator must be total: any surprise in the tree falls back to the byte mutator
    for (int tries = 0; tries < 4 && !changed; ++tries) changed = mutate_tree(doc, r);
    text = doc.dump();
  } catch (const Json::exception&) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  if (!changed || r.below(4) == 0) changed = duplicate_key(text, r) || changed;
  if (!changed || text.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}
