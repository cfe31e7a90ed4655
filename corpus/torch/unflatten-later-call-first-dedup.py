"""torch.export.unflatten of a program whose graph runs a module's second call before its first
(a valid order: the calls are independent, and passes such as a partitioner's fusion give such
orders): unflatten crashes, `RuntimeError: Node a_inner_w target a.inner.w references
nonexistent attribute inner of a`. Found by flatcheck's torch campaign (seed 64, case 56,
torch 2.14.1, path partition.reexport.capability: a module partitioned by
CapabilityBasedPartitioner, as Torch-TensorRT partitions it, exported again and unflattened);
the case shrunk from 304 nodes to 18; written by hand.

unflatten numbers a call by the `@N` of its nn_module_stack key (`a.inner@1` is the second call)
and names its module so (`a.inner@1`); `_deduplicate_modules` then takes the calls in the order
the graph meets them and, finding the later one's graph the same as the earlier's, removes the
later one's module as a generated call name. Here the earlier one met is `a.inner@1`, so it
removes `a.inner`, the module at the submodule's own path, which the root's read of
`self.a.inner.w` still names. Numbering the keys in the order the graph meets them (the second
call met becomes `@1`) makes unflatten agree. torch 2.6 and 2.14.1.
    python3 corpus/torch/unflatten-later-call-first-dedup.py   # exit 1 while present
"""
import sys

import torch


class Leaf(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor([0.5, -1.0]), requires_grad=False)

    def forward(self, x):
        return torch.relu(torch.neg(x))


class Wrap(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Leaf()


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Wrap()

    def forward(self, x, y):
        return self.a.inner(x) + self.a.inner(y) + self.a.inner.w


def second_call_first(ep):
    """Move the nodes of `a.inner`'s second call ahead of its first call's (in place)."""
    calls = {}
    for n in ep.graph.nodes:
        for key, (path, _) in (n.meta.get("nn_module_stack") or {}).items():
            if path == "a.inner":
                calls.setdefault(key, []).append(n)
    first, second = list(calls.values())
    for n in second:
        first[0].prepend(n)
    ep.graph_module.recompile()
    return list(calls)


def main():
    m = Model()
    args = (torch.tensor([1.0, -2.0]), torch.tensor([-3.0, 4.0]))
    ep = torch.export.export(m, args)
    keys = second_call_first(ep)
    same_program = torch.equal(ep.module()(*args), m(*args))
    try:
        u = torch.export.unflatten(ep)
        result = "agrees" if torch.equal(u(*args), m(*args)) else "DIFFERS"
    except Exception as e:  # noqa: BLE001 - the bug's crash
        result = f"raises {type(e).__name__}: {str(e).splitlines()[0][:90]}"
    print("torch", torch.__version__, "| calls", keys, "| the reordered program",
          "agrees" if same_program else "DIFFERS", "| torch.export.unflatten:", result)
    return 0 if same_program and result == "agrees" else 1


if __name__ == "__main__":
    sys.exit(main())
