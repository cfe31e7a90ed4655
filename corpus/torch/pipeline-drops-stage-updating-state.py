"""torch.distributed.pipelining.pipeline drops a stage that updates a buffer in place when
nothing reads the stage's outputs: the pipe has one stage fewer and the update never happens —
a silent wrong result in the state (found by flatcheck's torch campaign, path pipeline; torch
2.6 and 2.14.1).

Here `count` adds its input into its buffer `total` and its result is unused; a split point at
its beginning puts it in a stage of its own. `_from_traced` runs
`split.graph.eliminate_dead_code()` on the split graph, and fx counts a `call_module` as pure,
so the call of that stage (nothing reads it) is removed, and with it the buffer update. Eager
adds 2 to `total` on each call; the pipe leaves it at 0. Without the split point the update is
kept (the stage also computes the output).
    python3 corpus/torch/pipeline-drops-stage-updating-state.py   # exit 1 while present
"""
import sys

import torch
from torch.distributed.pipelining import SplitPoint, pipeline


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(2))

    def forward(self, x):
        self.total.add_(x)
        return x


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.count = Counter()

    def forward(self, x):
        y = x * 2
        self.count(y)  # result unused: the call is there for its update
        return y


def main():
    x = torch.ones(2)
    eager = Model()
    eager(x)
    model = Model()
    pipe = pipeline(model, mb_args=(x,), split_spec={"count": SplitPoint.BEGINNING})
    pipe(x)
    held = {k: v.tolist() for k, v in pipe.split_gm.state_dict().items()}
    print("torch", torch.__version__, "eager total:", eager.count.total.tolist(), "stages:",
          pipe.num_stages, "model total after the pipe:", model.count.total.tolist(),
          "pipe state:", held)
    return 0 if torch.equal(model.count.total, eager.count.total) else 1


if __name__ == "__main__":
    sys.exit(main())
