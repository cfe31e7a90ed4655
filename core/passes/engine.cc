#include "core/passes/engine.h"

#include <atomic>

#include <algorithm>
#include <unordered_map>

#include "core/faults.h"
#include "core/ir/check.h"

namespace flatcheck {
namespace {

constexpr int64_t kMaxArenaFloats = int64_t{1} << 26;
constexpr size_t kMaxSlots = 20000;

// Live interval of every slot: defined at step `def` (-1 for inputs and constants), last read
// at step `last` (ops.size() for engine outputs, -1 when never read).
struct Liveness {
  std::vector<int> def, last;
};

Liveness liveness(const Engine& e) {
  int n = static_cast<int>(e.ops.size());
  Liveness l{std::vector<int>(e.slots.size(), -1), std::vector<int>(e.slots.size(), -1)};
  for (int s = 0; s < n; ++s) {
    for (int in : e.ops[s].in) l.last[in] = std::max(l.last[in], s);
    for (int out : e.ops[s].out) l.def[out] = s;
  }
  for (const auto& o : e.outputs) l.last[o.slot] = n;
  // A value that is written but never read is live at the step that writes it.
  for (size_t i = 0; i < e.slots.size(); ++i) l.last[i] = std::max(l.last[i], l.def[i]);
  return l;
}

// Best-fit allocator over a free list; the arena grows at the end when nothing fits.
class Arena {
 public:
  int64_t allocate(int64_t size) {
    size_t best = free_.size();
    for (size_t i = 0; i < free_.size(); ++i)
      if (free_[i].second >= size && (best == free_.size() || free_[i].second < free_[best].second))
        best = i;
    if (best == free_.size()) {
      int64_t off = end_;
      end_ += size;
      return off;
    }
    auto [off, len] = free_[best];
    if (len == size)
      free_.erase(free_.begin() + static_cast<long>(best));
    else
      free_[best] = {off + size, len - size};
    return off;
  }
  void release(int64_t off, int64_t size) {
    if (size > 0) free_.emplace_back(off, size);
  }
  int64_t end() const { return end_; }

 private:
  std::vector<std::pair<int64_t, int64_t>> free_;
  int64_t end_ = 0;
};

// Lays the slots out in one arena: a slot's memory is reused once its last reader has run.
void plan_memory(Engine& e) {
  Liveness l = liveness(e);
  int n = static_cast<int>(e.ops.size());
  std::vector<bool> freed(e.slots.size(), false);
  Arena arena;
  auto size_of = [&](int s) { return numel(e.slots[s].shape); };
  auto free_slot = [&](int s) {
    if (freed[s]) return;
    freed[s] = true;
    arena.release(e.slots[s].offset, size_of(s));
  };
  std::vector<int> preset;
  for (const auto& b : e.inputs) preset.push_back(b.slot);
  for (const auto& c : e.constants) preset.push_back(c.first);
  for (int s : preset) e.slots[s].offset = arena.allocate(size_of(s));
  for (int s : preset)
    if (l.last[s] < 0) free_slot(s);
  for (int step = 0; step < n; ++step) {
    if (fault_on(Fault::kMemoryPlanOverlap)) {
      // Fault: a slot is released one step before its last use, so this step's output can
      // land on it before the next step reads it.
      for (size_t s = 0; s < e.slots.size(); ++s)
        if (l.last[s] == step + 1 && l.def[s] < step) free_slot(static_cast<int>(s));
    }
    for (int out : e.ops[step].out) e.slots[out].offset = arena.allocate(size_of(out));
    for (size_t s = 0; s < e.slots.size(); ++s)
      if (l.last[s] == step) free_slot(static_cast<int>(s));
  }
  e.arena_floats = arena.end();
}

}  // namespace

Engine compile_engine(const Module& sub, const std::string& name,
                      const std::vector<TensorPtr>& folded) {
  Engine e;
  e.name = name;
  std::unordered_map<const Node*, int> slot_of;
  std::unordered_map<const Node*, std::vector<int>> tuple_of;
  auto new_slot = [&](Shape s) {
    e.slots.push_back({std::move(s), 0});
    return static_cast<int>(e.slots.size() - 1);
  };
  auto slot_arg = [&](const Arg& a, const Node& at) {
    auto p = std::get_if<Node*>(&a);
    FLATCHECK_INPUT(p && slot_of.count(*p), "engine " << name << ": node %" << at.name
                                                      << " reads a value the engine lacks");
    return slot_of.at(*p);
  };
  int position = 0;
  for (Node* n = sub.graph.first(); n; n = n->next) {
    switch (n->op) {
      case NodeOp::kPlaceholder: {
        FLATCHECK_INPUT(n->meta.val && n->meta.val->kind == ValueType::kTensor,
                        "engine " << name << ": input %" << n->name << " is not a tensor");
        int s = new_slot(n->meta.val->shape);
        slot_of[n] = s;
        size_t pos = static_cast<size_t>(position);
        if (pos < folded.size() && folded[pos]) {
          FLATCHECK_INPUT(folded[pos]->shape == n->meta.val->shape,
                          "engine " << name << ": folded constant shape differs");
          e.constants.emplace_back(s, *folded[pos]);
        } else {
          e.inputs.push_back({n->name, s, position});
        }
        ++position;
        break;
      }
      case NodeOp::kCallFunction: {
        if (n->fn == OpCode::kGetitem) {
          Node* src = std::get<Node*>(n->args.at(0));
          auto it = tuple_of.find(src);
          int64_t idx = std::get<int64_t>(n->args.at(1));
          FLATCHECK_INPUT(
              it != tuple_of.end() && idx >= 0 && idx < static_cast<int64_t>(it->second.size()),
              "engine " << name << ": bad getitem %" << n->name);
          slot_of[n] = it->second[static_cast<size_t>(idx)];
          break;
        }
        FLATCHECK_INPUT(op_info(n->fn).has_kernel && op_info(n->fn).pure,
                        "engine " << name << ": op " << n->target << " cannot be compiled");
        EngineOp op;
        op.op = n->fn;
        op.origin = n->meta.origin;
        std::vector<Shape> shapes;
        for (const auto& a : n->args) {
          if (std::holds_alternative<Node*>(a)) {
            int s = slot_arg(a, *n);
            op.in.push_back(s);
            shapes.push_back(e.slots[s].shape);
          } else if (auto b = std::get_if<bool>(&a)) {
            op.scalars.emplace_back(*b);
          } else if (auto i = std::get_if<int64_t>(&a)) {
            op.scalars.emplace_back(*i);
          } else if (auto f = std::get_if<float>(&a)) {
            op.scalars.emplace_back(*f);
          } else {
            op.scalars.emplace_back(std::get<std::vector<int64_t>>(a));
          }
        }
        std::vector<Shape> outs = infer_shapes(op.op, shapes, op.scalars);
        for (auto& s : outs) op.out.push_back(new_slot(s));
        if (op_info(op.op).outputs == 1)
          slot_of[n] = op.out[0];
        else
          tuple_of[n] = op.out;
        e.ops.push_back(std::move(op));
        break;
      }
      case NodeOp::kOutput:
        for (const auto& a : n->args) {
          int s = slot_arg(a, *n);
          e.outputs.push_back({std::get<Node*>(a)->name, s, 0});
        }
        break;
      default:
        throw InputError("engine " + name + ": node %" + n->name + " (" +
                         std::string(node_op_name(n->op)) + ") cannot be compiled");
    }
  }
  // Fault: an internal assertion of the builder that real engines of this size would trip.
  if (fault_on(Fault::kEngineBuilderAbort))
    FLATCHECK_CHECK(e.ops.size() <= 6)
        << "engine builder: " << e.ops.size() << " layers in " << name;
  plan_memory(e);
  return e;
}

uint64_t EngineId::next() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

namespace {

// Launches an engine's op list on its arena; with an observer, reports each op's first output.
void launch_ops(Backend& b, const Engine& e, const DeviceMemory& arena,
                const NodeObserver& observer) {
  auto view = [&](int s) {
    return TensorView{arena.floats() + e.slots[s].offset, e.slots[s].shape};
  };
  for (const auto& op : e.ops) {
    std::vector<TensorView> iv, ov;
    for (int s : op.in) iv.push_back(view(s));
    for (int s : op.out) ov.push_back(view(s));
    b.run_kernel(op.op, iv, op.scalars, ov);
    if (observer && !op.origin.empty()) {
      b.synchronize();
      const EngineSlot& slot = e.slots[op.out[0]];
      Tensor t = Tensor::zeros(slot.shape);
      b.copy_out(t.data.data(), arena.buffer(), static_cast<size_t>(slot.offset),
                 static_cast<size_t>(numel(slot.shape)));
      observer(op.origin, op_info(op.op).name, Value::of(std::move(t)));
    }
  }
}

}  // namespace

std::vector<Tensor> run_engine(Backend& b, const Engine& e, const std::vector<const Tensor*>& in,
                               const NodeObserver& observer) {
  FLATCHECK_INPUT(in.size() == e.inputs.size(), "engine " << e.name << " expects "
                                                          << e.inputs.size() << " inputs, got "
                                                          << in.size());
  DeviceMemory arena(b, static_cast<size_t>(e.arena_floats) * 4);
  auto slot_size = [&](int s) { return static_cast<size_t>(numel(e.slots[s].shape)); };
  for (size_t i = 0; i < in.size(); ++i) {
    int s = e.inputs[i].slot;
    FLATCHECK_INPUT(in[i]->shape == e.slots[s].shape,
                    "engine " << e.name << ": input " << e.inputs[i].name << " expects "
                              << shape_str(e.slots[s].shape) << ", got "
                              << shape_str(in[i]->shape));
    b.copy_in(arena.buffer(), static_cast<size_t>(e.slots[s].offset), in[i]->data.data(),
              slot_size(s));
  }
  for (const auto& [s, t] : e.constants)
    b.copy_in(arena.buffer(), static_cast<size_t>(e.slots[s].offset), t.data.data(), slot_size(s));
  bool replayed = !observer && b.replay_ops(e.id.value, arena.floats());
  if (!replayed) {
    if (!observer) b.begin_ops(e.id.value, arena.floats());
    try {
      launch_ops(b, e, arena, observer);
    } catch (...) {
      if (!observer) b.abort_ops();  // a launch that throws must not leave a capture open
      throw;
    }
    if (!observer) b.end_ops(e.id.value, arena.floats());
  }
  std::vector<Tensor> out;
  for (const auto& o : e.outputs) {
    Tensor t = Tensor::zeros(e.slots[o.slot].shape);
    out.push_back(std::move(t));
  }
  for (size_t i = 0; i < out.size(); ++i)
    b.copy_out_async(out[i].data.data(), arena.buffer(),
                     static_cast<size_t>(e.slots[e.outputs[i].slot].offset),
                     slot_size(e.outputs[i].slot));
  b.synchronize();  // the outputs hold their values only now
  return out;
}

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
  auto check_slot = [&](int s, const std::string& where) {
    FLATCHECK_INPUT(s >= 0 && s < nslots, where << ": slot " << s << " out of range");
  };
  std::vector<bool> defined(e.slots.size(), false);
  std::vector<bool> positions;
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    std::string where = "inputs/" + std::to_string(i);
    check_slot(e.inputs[i].slot, where);
    FLATCHECK_INPUT(!defined[e.inputs[i].slot], where << ": slot written twice");
    FLATCHECK_INPUT(e.inputs[i].position >= 0 && e.inputs[i].position < 100000,
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
  for (size_t k = 0; k < e.ops.size(); ++k) {
    const auto& op = e.ops[k];
    std::string where = "ops/" + std::to_string(k);
    FLATCHECK_INPUT(op_info(op.op).has_kernel && op_info(op.op).pure,
                    where << ": op " << op_info(op.op).name << " is not allowed in an engine");
    std::vector<Shape> shapes;
    for (size_t j = 0; j < op.in.size(); ++j) {
      check_slot(op.in[j], where + "/in/" + std::to_string(j));
      FLATCHECK_INPUT(defined[op.in[j]], where << "/in/" << j << ": slot " << op.in[j]
                                               << " read before it is written");
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
    FLATCHECK_INPUT(outs.size() == op.out.size(), where << "/out: " << op.out.size()
                                                        << " slots for " << outs.size()
                                                        << " outputs");
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
  for (size_t i = 0; i < e.outputs.size(); ++i) {
    check_slot(e.outputs[i].slot, "outputs/" + std::to_string(i));
    FLATCHECK_INPUT(defined[e.outputs[i].slot], "outputs/" << i << ": slot never written");
  }
  // No two slots that are live at the same step may share memory.
  Liveness l = liveness(e);
  for (int a = 0; a < nslots; ++a) {
    if (!defined[a]) continue;
    int64_t a0 = e.slots[a].offset, a1 = a0 + numel(e.slots[a].shape);
    if (a1 == a0) continue;
    for (int b = a + 1; b < nslots; ++b) {
      if (!defined[b]) continue;
      int64_t b0 = e.slots[b].offset, b1 = b0 + numel(e.slots[b].shape);
      bool mem = a0 < b1 && b0 < a1;
      bool time = l.def[a] <= l.last[b] && l.def[b] <= l.last[a];
      FLATCHECK_INPUT(!(mem && time), "slots/" << a << " and slots/" << b
                                               << " overlap in memory while both are live");
    }
  }
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
