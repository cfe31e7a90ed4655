// The Python text emit-torch writes around each program (harness/torch_emit_text.h).
#include "harness/torch_emit_text.h"

#include <array>
#include <functional>
#include <set>
#include <string_view>

#include "core/base/tensor.h"
#include "core/ir/namespace.h"
#include "core/serialize/serialize.h"

namespace flatcheck {

const char* const kTorchPrelude = R"PY(import base64
import struct
import sys

import torch


def _t(b64, shape):
    """A float32 tensor from base64 little-endian bytes, bit-exact (NaN payloads included)."""
    raw = bytearray(base64.b64decode(b64))
    if not raw:
        return torch.zeros(shape, dtype=torch.float32)
    return torch.frombuffer(raw, dtype=torch.float32).clone().reshape(shape)


def _f(bits):
    """The float32 with these bits, as a Python float (exact for every non-NaN value)."""
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _branch(flag, a, b):
    """flatcheck's branch op: `a` when `flag` holds, else `b`, chosen in Python (export
    specializes it); the bridge's cond paths put torch.cond here."""
    return a if flag else b


def _update_inputs(inputs, value):
    """emit-torch --update-inputs: the root's results, each cloned (so that no result that is a
    view of an input changes with it), then each input (float32, as every input here) updated in
    place by the sum of the first result. The caller's tensors change, as torch.export records
    a user input mutation; the results are flatcheck's."""
    outs = [o.clone() for o in (value if isinstance(value, tuple) else (value,))]
    total = outs[0].sum()
    for x in inputs:
        x.add_(total)
    return tuple(outs) if isinstance(value, tuple) else outs[0]


def _call(module, packed, names, first):
    """emit-torch --kwargs and --packed-args: a call of `module` with its first `packed`
    arguments as one tuple, then the first `first` of what it is given by position and the
    rest by their parameters' names (`names`, the forward's, in order)."""
    def call(*args):
        if packed:
            args = (tuple(args[:packed]),) + tuple(args[packed:])
        return module(*args[:first], **dict(zip(names[first:], args[first:])))
    return call


class _NoRecorder:
    """harness/torch replaces _R to compare every node with flatcheck's value."""

    def begin(self, names):
        pass

    def node(self, name, op, value, inputs, dim=None):
        return value

    def invoke(self, target, inputs, fn, *args):
        return fn(*args)

    def end(self, outputs, value):
        return value

    def attr(self, module, path, buffer):
        """A parameter, or a buffer read by value (flatcheck's semantics: a copy)."""
        tensor = self.state(module, path)
        return tensor.clone() if buffer else tensor

    def state(self, module, path):
        """The state tensor itself, which a caller passes to the child that updates it
        (emit-torch --update-args)."""
        for part in path.split("."):
            module = getattr(module, part)
        return module

    def copy(self, module, path, value, into=None):
        """An in-place buffer update (no grad is needed: nothing here requires it, and a
        torch.no_grad() inside forward makes export's strict mode fail on torch 2.6). `into`:
        the buffer as the forward argument it came in by (--update-args), updated through it."""
        (self.state(module, path) if into is None else into).copy_(value)

    def update(self, module, path, op, other, kwargs, into=None):
        """An in-place buffer update by the tensor method `op` (emit-torch --inplace-updates:
        `b.add_(y)`, `b.mul_(2.0)`, ...), where copy() would write the same op's value computed
        out of place from the buffer as it still is. `into` as for copy()."""
        getattr(self.state(module, path) if into is None else into, op)(other, **kwargs)


_R = _NoRecorder()
)PY";

const char* const kTorchMain = R"PY(

def _same(a, b):
    return a.shape == b.shape and bytes(a.contiguous().numpy().tobytes()) == bytes(
        b.contiguous().numpy().tobytes())


def _outputs(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def main():
    model = build()
    agree = True
    for k in range(CONFIG["calls"]):
        with torch.no_grad():
            got = _outputs(model(*[t.clone() for t in INPUTS]))
        for i, (g, w) in enumerate(zip(got, EXPECTED_OUTPUTS[k])):
            same = _same(g, w)
            agree = agree and same and len(got) == len(EXPECTED_OUTPUTS[k])
            print(f"call {k + 1} output {i}: {'same' if same else 'DIFFERENT'}")
            if not same:
                print("  torch eager:   ", g.tolist())
                print("  flatcheck eager:", w.tolist())
    # Every FQN of every state tensor, plain tensor attributes too (--tensor-constants):
    # named_parameters() and named_buffers() name a tensor shared by two modules (or a module
    # under two names) once only.
    state = {}
    for path, module in model.named_modules(remove_duplicate=False):
        plain = [(k, v) for k, v in vars(module).items() if isinstance(v, torch.Tensor)]
        for name, t in [*module._parameters.items(), *module._buffers.items(), *plain]:
            if t is not None:
                state[path + "." + name if path else name] = t
    for fqn, want in EXPECTED_STATE.items():
        same = fqn in state and _same(state[fqn].detach(), want)
        agree = agree and same
        print(f"final {fqn}: {'same' if same else 'DIFFERENT'}")
    print("eager torch " + ("agrees with" if agree else "DIFFERS from") + " flatcheck, bit for bit")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
)PY";

namespace {

// --hostile-names: names torch makes for nodes and placeholders (torch.fx, torch.export,
// AOTAutograd, dynamo), Python builtins and the globals torch.fx's code imports. None is a
// keyword, a name the emitted forward reads (torch, getattr, self, _R, _call, _update_inputs,
// _args, _u<i>, _F<bits>), a "v_" local, nan or inf (EmitOptions::hostile_names).
// clang-format off
constexpr std::array<std::string_view, 40> kHostileNames = {
    "x", "output", "input", "args", "kwargs", "operator", "builtins", "math", "fx_pytree",
    "pytree", "device", "dtype", "sum", "max", "len", "int", "float", "list", "type", "print",
    "getitem", "getitem_1", "add", "add_1", "mul", "relu", "_tensor_constant0",
    "_param_constant0", "c_lifted_tensor_0", "arg0_1", "primals_1", "L_x_", "l_x_", "L_self_",
    "self_1", "forward", "training", "_", "inputs", "result"};
// clang-format on

// A node's name the pool may hold: an identifier, no keyword or builtin, neither private
// ("_", which the program's own globals start with) nor a "v_" local.
bool usable(const std::string& name) {
  return !name.empty() && name[0] != '_' && name.rfind("v_", 0) != 0 && is_identifier(name) &&
         !is_reserved_name(name);
}

}  // namespace

// The sorted pool module `m` draws its parameters' names from under --hostile-names: the fixed
// names, "p_"/"b_" + the case's parameter and buffer FQNs (torch.export's placeholder names),
// the case's placeholders' own names (the generator's confusing names: getitem, p_w, ...) and
// the names of `m`'s own nodes that are not placeholders.
std::vector<std::string> hostile_pool(const Module& root, const Module& m) {
  std::set<std::string> pool(kHostileNames.begin(), kHostileNames.end());
  std::function<void(const Module&, const std::string&)> walk = [&](const Module& at,
                                                                    const std::string& prefix) {
    for (const auto& [k, t] : at.params) pool.insert(sanitize_name("p_" + prefix + k));
    for (const auto& [k, t] : at.buffers) pool.insert(sanitize_name("b_" + prefix + k));
    for (const auto& [k, ch] : at.children) walk(*ch, prefix + k + "_");
    for (Node* ph : at.graph.placeholders())
      if (usable(ph->name)) pool.insert(ph->name);
  };
  walk(root, "");
  for (Node* n = m.graph.first(); n; n = n->next)
    if (n->op != NodeOp::kPlaceholder && usable(n->name)) pool.insert(n->name);
  return {pool.begin(), pool.end()};
}

namespace {

std::string b64(const Tensor& t) {
  std::string bytes(t.data.size() * 4, '\0');
  for (size_t i = 0; i < t.data.size(); ++i) {
    uint32_t u = float_bits(t.data[i]);
    for (int k = 0; k < 4; ++k) bytes[i * 4 + k] = static_cast<char>((u >> (8 * k)) & 0xff);
  }
  return base64_encode(bytes);
}

std::string shape_list(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace

std::string py_str(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string tensor_expr(const Tensor& t) {
  return "_t(\"" + b64(t) + "\", " + shape_list(t.shape) + ")";
}

}  // namespace flatcheck
