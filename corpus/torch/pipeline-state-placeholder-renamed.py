"""torch.distributed.pipelining.pipeline builds a stage that cannot be called when a child's
buffer is named so that its node name collides: a root buffer `b_buf` beside a child `b` with
a buffer `b_buf` — crash (TypeError: forward() missing 1 required positional argument; found
by flatcheck's torch campaign, path pipeline; torch 2.14.1; torch 2.6 builds and runs it,
2.11 has it too; 2.7 to 2.10 not run).

The exported module names the get_attr of `b.b_buf` `b_b_buf_1` (`b_b_buf`, its natural name,
is the lifted name of the root's `b_buf`). split_module names the stage's placeholder after it
(`b_b_buf_1`), while the split root graph gets a new get_attr node named `b_b_buf`, the name
pipelining keys the state by (`inputs_to_state`). `_sink_params` looks the stage's placeholder
up by its own name, finds nothing, and leaves the buffer as an input of the stage: the root
passes the user's inputs only, and the stage's forward wants one more. Matching by name across
a rename, as in Torch-TensorRT's graph-break bug. Without the root's `b_buf` it runs.
    python3 corpus/torch/pipeline-state-placeholder-renamed.py   # exit 1 while present
"""
import sys

import torch
from torch.distributed.pipelining import pipeline

PRESENT_FROM = (2, 11)  # torch 2.6 runs it (exit 0); 2.7 to 2.10 not run; 2.11 and 2.14.1 have it


class Child(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b_buf", torch.full((2,), 10.0))


class Model(torch.nn.Module):
    def __init__(self, root_buffer=True):
        super().__init__()
        self.b = Child()
        if root_buffer:
            self.register_buffer("b_buf", torch.full((2,), 100.0))

    def forward(self, x, y):
        return x * y + self.b.b_buf


def main():
    x, y = torch.ones(2), torch.full((2,), -5.0)
    want = Model()(x, y)
    alone = pipeline(Model(root_buffer=False), mb_args=(x, y))(x, y)[0]  # runs: the name is the cause
    try:
        got = pipeline(Model(), mb_args=(x, y))(x, y)[0]
    except TypeError as e:
        print("torch", torch.__version__, "eager:", want.tolist(), "without the root buffer:",
              alone.tolist(), "with it: TypeError:", str(e).splitlines()[0])
        return 1
    print("torch", torch.__version__, "eager:", want.tolist(), "pipe:", got.tolist())
    return 0 if torch.equal(want, got) else 1


if __name__ == "__main__":
    sys.exit(main())
