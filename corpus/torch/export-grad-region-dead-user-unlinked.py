"""torch.export.export of a module that computes a value it never uses just before a
`torch.no_grad()` block: the exported graph's use lists are wrong. The unused node reads a value
whose `users` do not list it, so `graph.eliminate_dead_code()` on the exported graph raises
(`KeyError: neg` on torch 2.6; on 2.14.1 `SystemError: <method '_update_args_kwargs' of
'torch._C._NodeBase' objects> returned a result with an exception set`, the KeyError inside),
and with the module's call signature preserved, where the unused node reads the module's input,
export itself fails: `Argument 'getitem' of Node 'neg' was used before it has been defined!`.
Found by flatcheck's torch campaign with the generated branch op's value computed under
torch.no_grad() (--branch nograd, seed 64, torch 2.14.1: the preserve paths failing at export,
the partition re-export path failing in unflatten's dead code elimination); written by hand.

export replaces the grad-mode change by a higher-order op (replace_set_grad_with_hop_pass): it
splits the graph into pieces at the change and inlines the pieces without one back
(torch._export.utils.node_inline_), and for a piece whose output is one node it clears that
node's users before giving it the call's users. A node inside the piece that reads the output
and is not itself an output (the unused `neg`) is dropped from the users it was in. Strict and
non-strict export; torch 2.6 and 2.14.1.
    python3 corpus/torch/export-grad-region-dead-user-unlinked.py   # exit 1 while present
"""
import sys

import torch


class Inner(torch.nn.Module):
    def forward(self, x):
        y = x * 2.0
        torch.neg(y)  # unused
        with torch.no_grad():
            return y.clone()


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.b = Inner()

    def forward(self, x):
        return self.b(x) + 1.0


class ReadsInput(torch.nn.Module):  # the unused node reads the preserved module's input
    def forward(self, x):
        torch.neg(x)  # unused
        with torch.no_grad():
            return x.clone()


class CallsIt(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.b = ReadsInput()

    def forward(self, x):
        return self.b(x) + 1.0


def unlinked(ep):
    """The (node, input) pairs where the input's users do not list the node."""
    return [(n.name, a.name) for n in ep.graph.nodes for a in n.all_input_nodes
            if n not in a.users]


def main():
    x = torch.ones(2)
    ep = torch.export.export(Model(), (x,), strict=False)
    wrong = unlinked(ep)
    try:
        ep.graph_module.graph.eliminate_dead_code()
        dce = "runs"
    except Exception as e:  # noqa: BLE001 - the bug's crash
        dce = f"raises {type(e).__name__}: {str(e).splitlines()[0][:80]}"
    try:
        torch.export.export(CallsIt(), (x,), strict=False, preserve_module_call_signature=("b",))
        preserved = "exports"
    except Exception as e:  # noqa: BLE001 - the bug's crash
        preserved = f"raises {type(e).__name__}: {str(e).splitlines()[0][:80]}"
    print("torch", torch.__version__, "| uses the users do not list:", wrong,
          "| eliminate_dead_code:", dce, "| preserving b:", preserved)
    return 0 if not wrong and preserved == "exports" else 1


if __name__ == "__main__":
    sys.exit(main())
