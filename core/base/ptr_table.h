// A hash table keyed by pointers, in one allocation: open addressing with linear probing.
//
// The runtime's value table and lint's defined-node set are filled once per module run or
// lint; a node-based std::unordered_map made one allocation per entry there. Entries are never
// erased, and a key is never null. The table keeps at most half its slots full, growing when it
// would pass that.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace flatcheck {

template <class K, class V>
class PtrTable {
 public:
  // Room for `expected` entries before the first growth.
  explicit PtrTable(size_t expected = 0) {
    size_t cap = 8;
    while (cap < 2 * expected) cap <<= 1;
    slots_.resize(cap);
  }
  size_t size() const { return used_; }
  const V* find(const K* key) const {
    const Slot& s = slots_[probe(key)];
    return key && s.key == key ? &s.value : nullptr;
  }
  bool contains(const K* key) const { return find(key) != nullptr; }
  // Inserts `key` with a default value, or finds it; returns the value and whether it is new.
  std::pair<V*, bool> emplace(const K* key) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    Slot& s = slots_[probe(key)];
    bool fresh = s.key != key;
    if (fresh) {
      s.key = key;
      ++used_;
    }
    return {&s.value, fresh};
  }
  V& operator[](const K* key) { return *emplace(key).first; }
  // Inserts `key`; false when it was already there.
  bool insert(const K* key) { return emplace(key).second; }

 private:
  struct Slot {
    const K* key = nullptr;
    V value{};
  };
  // The slot holding `key`, or the empty slot where it would go (a slot is always empty).
  size_t probe(const K* key) const {
    size_t mask = slots_.size() - 1;
    uint64_t h = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key)) * 0x9e3779b97f4a7c15u;
    size_t i = static_cast<size_t>(h >> 32) & mask;
    while (slots_[i].key != nullptr && slots_[i].key != key) i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.clear();
    slots_.resize(old.size() * 2);
    for (Slot& s : old)
      if (s.key) slots_[probe(s.key)] = std::move(s);
  }
  std::vector<Slot> slots_;
  size_t used_ = 0;
};

}  // namespace flatcheck
