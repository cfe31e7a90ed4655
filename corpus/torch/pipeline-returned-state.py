"""torch.distributed.pipelining.pipeline fails on a model that returns one of its own buffers or
parameters as it is (`return x * 2, self.buf`): Pipe._from_traced moves each state tensor into
the stage that reads it and asserts that every reader of a get_attr node of the split graph is
a stage (`call_module`); the graph's output reads this one. `AssertionError: Expected user.op
to be 'call_module', got output` on torch 2.14.1 (a bare AssertionError on 2.6), with or
without split points. (Found by flatcheck's pipeline path with the bridge's --reads alias,
where a buffer read is the buffer itself: seed 94, case 1464; reduced by hand.)
    python3 corpus/torch/pipeline-returned-state.py   # exit 1 while present
"""
import sys

import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(2))

    def forward(self, x):
        return x * 2, self.buf


def main():
    from torch.distributed.pipelining import pipeline
    x = torch.ones(2)
    try:
        pipe = pipeline(Model(), mb_args=(x,))
    except AssertionError as e:
        print("torch", torch.__version__, "| pipeline raises AssertionError:",
              str(e) or "(no message)")
        sys.exit(1)
    got, want = pipe(x), Model()(x)
    same = all(torch.equal(a, b) for a, b in zip(got, want))
    print("torch", torch.__version__, "| the pipe builds; results", "agree" if same else "differ")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
