// run_engine: an engine's op list launched on a backend over one arena.
#include <cstdint>

#include "core/base/check.h"
#include "core/runtime/interpreter.h"

namespace flatcheck {

namespace {

// Launches an engine's op list on its arena; with an observer, reports each op's first output.
void launch_ops(Backend& b, const Engine& e, const DeviceMemory& arena,
                const NodeObserver& observer) {
  auto view = [&](int s) {
    return TensorView{arena.floats() + e.slots[s].offset, e.slots[s].shape};
  };
  std::vector<TensorView> iv, ov;  // reused across ops
  for (const auto& op : e.ops) {
    iv.clear();
    ov.clear();
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
  out.reserve(e.outputs.size());
  for (const auto& o : e.outputs) out.push_back(Tensor::zeros(e.slots[o.slot].shape));
  for (size_t i = 0; i < out.size(); ++i)
    b.copy_out_async(out[i].data.data(), arena.buffer(),
                     static_cast<size_t>(e.slots[e.outputs[i].slot].offset),
                     slot_size(e.outputs[i].slot));
  b.synchronize();  // the outputs hold their values only now
  return out;
}

}  // namespace flatcheck
