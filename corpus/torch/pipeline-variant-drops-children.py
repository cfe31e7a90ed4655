"""torch.distributed.pipelining.pipeline raises AttributeError ("'InterpreterModule' object has
no attribute 'a'") when a later stage calls a module again, calls its child through it, then
calls it once more (found by flatcheck's torch campaign, path pipeline, case 201 of seed 53,
shrunk; torch 2.6 and 2.14.1). The cause is torch.export.unflatten's (docs/found-bugs.md 5);
pipelining reaches it without the dead call that plain unflatten needs.

Here `p.b` runs once before the split point (stage 0) and twice inside `p` (stage 1), and `p`
calls `b.a` between those two. pipelining rebuilds each stage's module tree with unflatten's
`_ModuleFrame`, keeping the call indices of the whole program, so stage 1's first call of `b`
is the variant `b@1` and stage 1 has no `b`. The call of `b.a` from `p` makes an empty `b` to
hold `a`; the frame of the next call of `b` takes that module and, because `b` was seen, replaces
its children with those of `b@1` (`self.module._modules = base_module_frame.module._modules`):
`a` is gone. Without the split point (one stage), or without the call of `b` after `b.a`, it
builds and agrees.
    python3 corpus/torch/pipeline-variant-drops-children.py   # exit 1 while present
"""
import sys

import torch
from torch.distributed.pipelining import SplitPoint, pipeline


class A(torch.nn.Module):
    def forward(self, x):
        return x + 1


class B(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = A()

    def forward(self, x):
        return x * 2


class P(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.b = B()

    def forward(self, x):
        return self.b(self.b.a(self.b(x)))


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.p = P()

    def forward(self, x):
        return self.p(self.p.b(x))


def main():
    x = torch.ones(2)
    want = Model()(x)
    whole = pipeline(Model(), mb_args=(x,))(x)[0]  # one stage: builds and agrees
    try:
        got = pipeline(Model(), mb_args=(x,), split_spec={"p": SplitPoint.BEGINNING})(x)[0]
    except AttributeError as e:
        print("torch", torch.__version__, "eager:", want.tolist(), "one stage:", whole.tolist(),
              "split at p: AttributeError:", e)
        return 1
    print("torch", torch.__version__, "eager:", want.tolist(), "pipe:", got.tolist())
    return 0 if torch.equal(want, got) else 1


if __name__ == "__main__":
    sys.exit(main())
