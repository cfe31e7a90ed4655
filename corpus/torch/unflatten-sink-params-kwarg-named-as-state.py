"""torch.export.unflatten of a preserved module called with a keyword argument named as torch.export
names one of the module's parameters (p_<FQN>): the argument and the parameter trade places
(docs/found-bugs.md 86; silent wrong result, torch 2.6 and 2.14.1).

torch.export names a parameter's placeholder p_<FQN> (c.w: p_c_w). unflatten builds a preserved
call's graph with a placeholder per keyword argument, named by its key, so the copy of the
parameter's placeholder is renamed around it (p_c_w_1); _sink_params then replaces the
placeholders whose *names* are in inputs_to_state with the parameter: the argument's placeholder
becomes c.w, and the renamed placeholder of the parameter, whose target is still p_c_w, takes
the argument's value when InterpreterModule matches keyword arguments to placeholder targets.
Positional calls, and keyword arguments named otherwise, agree. Found by flatcheck's bridge
(paths export.*.preserve) on programs emitted with emit-torch --kwargs --hostile-names.
    python3 corpus/torch/unflatten-sink-params-kwarg-named-as-state.py   # exit 1 while present
"""
import sys

import torch


class Child(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor([1.0, 2.0, 3.0]))

    def forward(self, x, p_c_w):  # named as torch.export names the placeholder of c.w
        return x * self.w + p_c_w


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c = Child()

    def forward(self, x, y):
        return self.c(x=x, p_c_w=y)


INPUTS = (torch.tensor([2.0, 2.0, 2.0]), torch.tensor([10.0, 20.0, 30.0]))


def main():
    print("torch", torch.__version__)
    model = Model()
    want = model(*INPUTS)
    ep = torch.export.export(model, INPUTS, preserve_module_call_signature=("c",))
    unflattened = torch.export.unflatten(ep)
    got = unflattened(*INPUTS)
    print("  eager:", want.tolist())
    print("  unflattened:", got.tolist())
    print(unflattened.c.graph)
    return 0 if torch.equal(got, want) else 1


if __name__ == "__main__":
    sys.exit(main())
