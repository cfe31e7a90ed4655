"""torch.fx.subgraph_rewriter.replace_pattern raises AssertionError ("The returning_nodes should
have at least one user node") when a match's result is read by nothing — here a dead `relu` a
traced model computes and drops. Seen by flatcheck's torch campaign on torch 2.6 (path
fx.rewrite, on most programs: traced models keep values nothing reads); a known upstream bug,
pytorch/pytorch#143841, fixed by pytorch/pytorch#143842 (December 2024; torch 2.14.1 puts such a
replacement after the match). Not a flatcheck find: the path counts it as a known issue so that
the rest of a program's patterns are still judged on 2.6.
    python3 corpus/torch/rewrite-match-without-user.py   # exit 1 while present
"""
import sys

import torch
import torch.fx
from torch.fx import subgraph_rewriter

FIXED_IN = (2, 7)  # pytorch/pytorch#143842, merged after 2.6 branched


class Model(torch.nn.Module):
    def forward(self, x):
        torch.relu(x)  # computed, read by nothing
        return torch.relu(x) * 2.0


def pattern(p):
    return torch.relu(p)


def main():
    x = torch.full((3,), -1.0)
    want = Model()(x)
    gm = torch.fx.symbolic_trace(Model())
    try:
        subgraph_rewriter.replace_pattern(gm, pattern, pattern)
    except AssertionError as e:
        print(f"torch {torch.__version__}: replace_pattern raised AssertionError: {e}")
        return 1
    got = gm(x)
    if not torch.equal(got, want):
        print(f"torch {torch.__version__}: the rewritten module gave {got.tolist()}, want "
              f"{want.tolist()}")
        return 1
    print(f"torch {torch.__version__}: replace_pattern rewrites the match without a user")
    return 0


if __name__ == "__main__":
    sys.exit(main())
