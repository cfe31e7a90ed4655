"""torch.save / torch.load of a torch.fx GraphModule freezes a buffer read into a constant.

Found by flatcheck's torch bridge (harness/torch/flatcheck_torch.py, fx path) on torch 1.13.
A GraphModule is pickled as its code; torch.load re-traces that code with a tracer. A buffer
read through a tensor method (`self.buf.clone()`) involves no proxy, so it runs eagerly during
the re-trace and its value at load time is stored as `_tensor_constant0`. The reloaded module
never sees later updates of the buffer: the second call returns a stale value.

    /usr/bin/python3 corpus/torch/fx-reload-freezes-buffer-read.py
Prints the two modules' results per call and exits 1 while the behaviour is present.
"""
import io
import sys

import torch


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.zeros(2))

    def forward(self, x):
        y = self.buf.clone() + x  # read the buffer by value
        self.buf.copy_(y)  # then update it
        return y


def main():
    # The graph a pass builds (symbolic_trace would itself fold self.buf.clone() into a
    # constant): get_attr buf -> clone -> add -> copy_.
    g = torch.fx.Graph()
    x = g.placeholder("x")
    buf = g.get_attr("buf")
    y = g.call_function(torch.add, (g.call_method("clone", (buf,)), x))
    g.call_method("copy_", (buf, y))
    g.output(y)
    gm = torch.fx.GraphModule(M(), g)
    data = io.BytesIO()
    torch.save(gm, data)
    data.seek(0)
    loaded = torch.load(data, weights_only=False)  # a GraphModule is code: torch 2.6 refuses it otherwise
    print("before save:", gm.code.strip().splitlines()[1:4])
    print("after load: ", loaded.code.strip().splitlines()[1:4])
    ok = True
    for call in range(1, 4):
        a, b = gm(torch.ones(2)), loaded(torch.ones(2))
        print(f"call {call}: saved module {a.tolist()}, reloaded module {b.tolist()}")
        ok = ok and torch.equal(a, b)
    print("torch", torch.__version__, "reload keeps buffer reads" if ok else
          "RELOAD FROZE THE BUFFER READ: results differ")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
