// Engine data: identity, the liveness of its slots, validation of a loaded engine, printing.
#include "core/ir/engine.h"

#include <algorithm>
#include <atomic>
#include <map>

#include "core/base/check.h"
#include "core/ir/ir.h"

namespace flatcheck {

EngineLiveness engine_liveness(const Engine& e) {
  int n = static_cast<int>(e.ops.size());
  EngineLiveness l{std::vector<int>(e.slots.size(), -1), std::vector<int>(e.slots.size(), -1)};
  for (int s = 0; s < n; ++s) {
    for (int in : e.ops[s].in) l.last[in] = std::max(l.last[in], s);
    for (int out : e.ops[s].out) l.def[out] = s;
  }
  for (const auto& o : e.outputs) l.last[o.slot] = n;
  // A value that is written but never read is live at the step that writes it.
  for (size_t i = 0; i < e.slots.size(); ++i) l.last[i] = std::max(l.last[i], l.def[i]);
  return l;
}

uint64_t EngineId::next() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

namespace {

void slot_in_range(const Engine& e, int s, const std::string& where) {
  FLATCHECK_INPUT(s >= 0 && s < static_cast<int>(e.slots.size()),
                  where << ": slot " << s << " out of range");
}

// One op: allowed in an engine, reads written slots, well-typed, writes fresh slots of the
// shapes its shape rule gives.
void validate_op(const Engine& e, size_t k, std::vector<bool>& defined) {
  auto check_slot = [&](int s, const std::string& where) { slot_in_range(e, s, where); };
  const auto& op = e.ops[k];
  std::string where = "ops/" + std::to_string(k);
  FLATCHECK_INPUT(op_info(op.op).has_kernel && op_info(op.op).pure,
                  where << ": op " << op_info(op.op).name << " is not allowed in an engine");
  std::vector<Shape> shapes;
  for (size_t j = 0; j < op.in.size(); ++j) {
    check_slot(op.in[j], where + "/in/" + std::to_string(j));
    FLATCHECK_INPUT(defined[op.in[j]],
                    where << "/in/" << j << ": slot " << op.in[j] << " read before it is written");
    shapes.push_back(e.slots[op.in[j]].shape);
  }
  std::string kinds(op.in.size(), 'T');
  for (const auto& s : op.scalars)
    kinds += std::holds_alternative<bool>(s)      ? 'B'
             : std::holds_alternative<int64_t>(s) ? 'i'
             : std::holds_alternative<float>(s)   ? 'f'
                                                  : 'L';
  std::string why = check_signature(op.op, kinds);
  FLATCHECK_INPUT(why.empty(), where << ": " << why);
  std::vector<Shape> outs;
  try {
    outs = infer_shapes(op.op, shapes, op.scalars);
  } catch (const InputError& err) {
    throw InputError(where + ": " + err.what());
  }
  FLATCHECK_INPUT(outs.size() == op.out.size(),
                  where << "/out: " << op.out.size() << " slots for " << outs.size() << " outputs");
  for (size_t j = 0; j < op.out.size(); ++j) {
    std::string w = where + "/out/" + std::to_string(j);
    check_slot(op.out[j], w);
    FLATCHECK_INPUT(!defined[op.out[j]], w << ": slot " << op.out[j] << " written twice");
    FLATCHECK_INPUT(e.slots[op.out[j]].shape == outs[j],
                    w << ": slot shape " << shape_str(e.slots[op.out[j]].shape)
                      << " differs from the op's " << shape_str(outs[j]));
    defined[op.out[j]] = true;
  }
}

// No two slots that are live at the same step may share memory. A sweep over the steps: the
// slots live at a step have pairwise disjoint memory, kept ordered by offset, so a slot that
// becomes live is checked against its two neighbours only: O(n log n), where comparing every
// pair made a valid 20,000-slot engine cost 2 * 10^8 checks.
void check_no_overlap(const Engine& e, const std::vector<bool>& defined) {
  int nslots = static_cast<int>(e.slots.size());
  EngineLiveness l = engine_liveness(e);
  struct Event {
    int64_t step;
    int slot;
  };
  std::vector<Event> births, deaths;
  for (int s = 0; s < nslots; ++s) {
    if (!defined[s] || numel(e.slots[s].shape) == 0) continue;
    births.push_back({l.def[s], s});
    deaths.push_back({l.last[s], s});
  }
  auto by_step = [](const Event& a, const Event& b) {
    return a.step != b.step ? a.step < b.step : a.slot < b.slot;
  };
  std::sort(births.begin(), births.end(), by_step);
  std::sort(deaths.begin(), deaths.end(), by_step);
  std::map<int64_t, int> live;  // offset -> slot, for the slots live now
  size_t b = 0, d = 0;
  while (b < births.size()) {
    int64_t step = births[b].step;
    // Slots whose last use is before this step are dead (live ranges are closed: a slot last
    // used at this step still overlaps one defined at it).
    while (d < deaths.size() && deaths[d].step < step) {
      live.erase(e.slots[deaths[d].slot].offset);
      ++d;
    }
    for (; b < births.size() && births[b].step == step; ++b) {
      int s = births[b].slot;
      int64_t s0 = e.slots[s].offset, s1 = s0 + numel(e.slots[s].shape);
      auto next = live.lower_bound(s0);
      auto report = [&](int other) {
        int lo = std::min(s, other), hi = std::max(s, other);
        throw InputError("slots/" + std::to_string(lo) + " and slots/" + std::to_string(hi) +
                         " overlap in memory while both are live");
      };
      if (next != live.end() && next->first < s1) report(next->second);
      if (next != live.begin()) {
        auto prev = std::prev(next);
        int p = prev->second;
        if (e.slots[p].offset + numel(e.slots[p].shape) > s0) report(p);
      }
      live.emplace(s0, s);
    }
  }
}

}  // namespace

void validate_engine(const Engine& e) {
  int nslots = static_cast<int>(e.slots.size());
  FLATCHECK_INPUT(e.slots.size() <= kMaxSlots,
                  "slots: " << e.slots.size() << " over the limit of " << kMaxSlots);
  FLATCHECK_INPUT(e.arena_floats >= 0 && e.arena_floats <= kMaxArenaFloats,
                  "arena: " << e.arena_floats << " floats out of range");
  for (int s = 0; s < nslots; ++s) {
    const auto& sl = e.slots[s];
    int64_t n = numel(sl.shape);
    FLATCHECK_INPUT(sl.offset >= 0 && n >= 0 && sl.offset + n <= e.arena_floats,
                    "slots/" << s << ": [" << sl.offset << ", " << sl.offset + n
                             << ") outside the arena of " << e.arena_floats);
  }
  auto check_slot = [&](int s, const std::string& where) { slot_in_range(e, s, where); };
  std::vector<bool> defined(e.slots.size(), false);
  std::vector<bool> positions;
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    std::string where = "inputs/" + std::to_string(i);
    check_slot(e.inputs[i].slot, where);
    FLATCHECK_INPUT(!defined[e.inputs[i].slot], where << ": slot written twice");
    FLATCHECK_INPUT(e.inputs[i].position >= 0 && e.inputs[i].position < kMaxPositions,
                    where << ": bad position " << e.inputs[i].position);
    defined[e.inputs[i].slot] = true;
  }
  for (size_t i = 0; i < e.constants.size(); ++i) {
    std::string where = "constants/" + std::to_string(i);
    int s = e.constants[i].first;
    check_slot(s, where);
    FLATCHECK_INPUT(!defined[s], where << ": slot written twice");
    FLATCHECK_INPUT(e.constants[i].second.shape == e.slots[s].shape,
                    where << ": value shape differs from the slot's");
    defined[s] = true;
  }
  for (size_t k = 0; k < e.ops.size(); ++k) validate_op(e, k, defined);
  for (size_t i = 0; i < e.outputs.size(); ++i) {
    check_slot(e.outputs[i].slot, "outputs/" + std::to_string(i));
    FLATCHECK_INPUT(defined[e.outputs[i].slot], "outputs/" << i << ": slot never written");
  }
  check_no_overlap(e, defined);
}

std::ostream& operator<<(std::ostream& os, const Engine& e) {
  os << "engine " << e.name << " (arena " << e.arena_floats << " floats)\n";
  for (const auto& b : e.inputs)
    os << "  input " << b.name << " -> $" << b.slot << " (arg " << b.position << ")\n";
  for (const auto& [s, t] : e.constants) os << "  const $" << s << " = " << t << "\n";
  for (const auto& op : e.ops) {
    os << "  ";
    for (size_t i = 0; i < op.out.size(); ++i) os << (i ? ", " : "") << "$" << op.out[i];
    os << " = " << op_info(op.op).name << "(";
    bool first = true;
    for (int s : op.in) os << (first ? "" : ", ") << "$" << s, first = false;
    for (const auto& sc : op.scalars) {
      os << (first ? "" : ", ");
      first = false;
      std::visit([&](const auto& v) { os << Arg(v); }, sc);
    }
    os << ")\n";
  }
  for (const auto& b : e.outputs) os << "  output " << b.name << " <- $" << b.slot << "\n";
  return os;
}

}  // namespace flatcheck
