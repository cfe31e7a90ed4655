// A hash table keyed by pointers: open addressing with linear probing.
//
// The runtime's value table and lint's defined-node set are filled once per module run or
// lint; a node-based std::unordered_map made one allocation per entry there. Entries are never
// erased, and a key is never null. The table keeps at most half its slots full, growing when it
// would pass that. Keys and values lie in two arrays, and a value is constructed only when its
// key goes in: making a table zeroes its keys alone (the interpreter's values are about 90 bytes
// each, and most slots of a table stay empty).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
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
    reset(cap);
  }
  PtrTable(const PtrTable&) = delete;
  PtrTable& operator=(const PtrTable&) = delete;
  PtrTable(PtrTable&& o) noexcept
      : keys_(std::move(o.keys_)), values_(std::move(o.values_)), used_(o.used_) {
    o.keys_.clear();
    o.used_ = 0;
  }
  PtrTable& operator=(PtrTable&& o) noexcept {
    if (this != &o) {
      destroy();
      keys_ = std::move(o.keys_);
      values_ = std::move(o.values_);
      used_ = o.used_;
      o.keys_.clear();
      o.used_ = 0;
    }
    return *this;
  }
  ~PtrTable() { destroy(); }

  size_t size() const { return used_; }
  const V* find(const K* key) const {
    size_t i = probe(key);
    return key && keys_[i] == key ? value(i) : nullptr;
  }
  bool contains(const K* key) const { return find(key) != nullptr; }
  // Inserts `key` with a default value, or finds it; returns the value and whether it is new.
  std::pair<V*, bool> emplace(const K* key) {
    if (2 * (used_ + 1) > keys_.size()) grow();
    size_t i = probe(key);
    bool fresh = keys_[i] != key;
    if (fresh) {
      new (&values_[i]) V{};
      keys_[i] = key;
      ++used_;
    }
    return {value(i), fresh};
  }
  V& operator[](const K* key) { return *emplace(key).first; }
  // Inserts `key`; false when it was already there.
  bool insert(const K* key) { return emplace(key).second; }

 private:
  // Room for one value, constructed only while its key is in the table.
  struct Raw {
    alignas(V) unsigned char bytes[sizeof(V)];
  };
  static V* held(Raw& r) { return std::launder(reinterpret_cast<V*>(r.bytes)); }
  V* value(size_t i) const { return held(values_[i]); }
  // The slot holding `key`, or the empty slot where it would go (a slot is always empty).
  size_t probe(const K* key) const {
    size_t mask = keys_.size() - 1;
    uint64_t h = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key)) * 0x9e3779b97f4a7c15u;
    size_t i = static_cast<size_t>(h >> 32) & mask;
    while (keys_[i] != nullptr && keys_[i] != key) i = (i + 1) & mask;
    return i;
  }
  void reset(size_t cap) {
    keys_.assign(cap, nullptr);
    values_.reset(new Raw[cap]);  // not zeroed: a value is made when its key goes in
    used_ = 0;
  }
  void destroy() {
    for (size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i]) value(i)->~V();
  }
  void grow() {
    std::vector<const K*> old_keys = std::move(keys_);
    std::unique_ptr<Raw[]> old_values = std::move(values_);
    size_t used = used_;
    reset(old_keys.size() * 2);
    for (size_t i = 0; i < old_keys.size(); ++i) {
      if (!old_keys[i]) continue;
      V* v = held(old_values[i]);
      size_t j = probe(old_keys[i]);
      new (&values_[j]) V(std::move(*v));
      v->~V();
      keys_[j] = old_keys[i];
    }
    used_ = used;
  }
  std::vector<const K*> keys_;
  std::unique_ptr<Raw[]> values_;
  size_t used_ = 0;
};

}  // namespace flatcheck
