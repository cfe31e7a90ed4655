// compile_engine: an acc partition's subgraph to an op list over a static memory plan.
#include <algorithm>
#include <unordered_map>

#include "core/base/check.h"
#include "core/base/faults.h"
#include "core/passes/passes.h"

namespace flatcheck {
namespace {

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
  EngineLiveness l = engine_liveness(e);
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

namespace {

// Builds an engine node by node: every value gets a slot; getitem reads a slot of a tuple.
class EngineBuilder {
 public:
  explicit EngineBuilder(const std::string& name) { e_.name = name; }

  void placeholder(const Node* n, int position, const std::vector<TensorPtr>& folded) {
    FLATCHECK_INPUT(n->meta.val && n->meta.val->kind == ValueType::kTensor,
                    "engine " << e_.name << ": input %" << n->name << " is not a tensor");
    int s = new_slot(n->meta.val->shape);
    slot_of_[n] = s;
    size_t pos = static_cast<size_t>(position);
    if (pos < folded.size() && folded[pos]) {
      FLATCHECK_INPUT(folded[pos]->shape == n->meta.val->shape,
                      "engine " << e_.name << ": folded constant shape differs");
      e_.constants.emplace_back(s, *folded[pos]);
    } else {
      e_.inputs.push_back({n->name, s, position});
    }
  }

  void getitem(const Node* n) {
    Node* src = std::get<Node*>(n->args.at(0));
    auto it = tuple_of_.find(src);
    int64_t idx = std::get<int64_t>(n->args.at(1));
    FLATCHECK_INPUT(
        it != tuple_of_.end() && idx >= 0 && idx < static_cast<int64_t>(it->second.size()),
        "engine " << e_.name << ": bad getitem %" << n->name);
    slot_of_[n] = it->second[static_cast<size_t>(idx)];
  }

  void op(const Node* n) {
    FLATCHECK_INPUT(op_info(n->fn).has_kernel && op_info(n->fn).pure,
                    "engine " << e_.name << ": op " << n->target << " cannot be compiled");
    EngineOp op;
    op.op = n->fn;
    op.origin = n->meta.origin;
    std::vector<Shape> shapes;
    for (const auto& a : n->args) {
      if (std::holds_alternative<Node*>(a)) {
        int s = slot_arg(a, *n);
        op.in.push_back(s);
        shapes.push_back(e_.slots[s].shape);
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
      slot_of_[n] = op.out[0];
    else
      tuple_of_[n] = op.out;
    e_.ops.push_back(std::move(op));
  }

  void output(const Node* n) {
    for (const auto& a : n->args) {
      int s = slot_arg(a, *n);
      e_.outputs.push_back({std::get<Node*>(a)->name, s, 0});
    }
  }

  Engine finish() {
    // Fault: an internal assertion of the builder that real engines of this size would trip.
    if (fault_on(Fault::kEngineBuilderAbort))
      FLATCHECK_CHECK(e_.ops.size() <= 6)
          << "engine builder: " << e_.ops.size() << " layers in " << e_.name;
    plan_memory(e_);
    return std::move(e_);
  }

 private:
  int new_slot(Shape s) {
    e_.slots.push_back({std::move(s), 0});
    return static_cast<int>(e_.slots.size() - 1);
  }

  int slot_arg(const Arg& a, const Node& at) {
    auto p = std::get_if<Node*>(&a);
    FLATCHECK_INPUT(p && slot_of_.count(*p), "engine " << e_.name << ": node %" << at.name
                                                       << " reads a value the engine lacks");
    return slot_of_.at(*p);
  }

  Engine e_;
  std::unordered_map<const Node*, int> slot_of_;
  std::unordered_map<const Node*, std::vector<int>> tuple_of_;
};

}  // namespace

Engine compile_engine(const Module& sub, const std::string& name,
                      const std::vector<TensorPtr>& folded) {
  EngineBuilder b(name);
  int position = 0;
  for (Node* n = sub.graph.first(); n; n = n->next) {
    switch (n->op) {
      case NodeOp::kPlaceholder:
        b.placeholder(n, position++, folded);
        break;
      case NodeOp::kCallFunction:
        if (n->fn == OpCode::kGetitem)
          b.getitem(n);
        else
          b.op(n);
        break;
      case NodeOp::kOutput:
        b.output(n);
        break;
      default:
        throw InputError("engine " + name + ": node %" + n->name + " (" +
                         std::string(node_op_name(n->op)) + ") cannot be compiled");
    }
  }
  return b.finish();
}

}  // namespace flatcheck
