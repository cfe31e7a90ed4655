"""torch.compile with Inductor's memory planning (torch._inductor.config.memory_planning) on
the CPU: a function returns `n` and a later value `t + s`, where `n` also goes into a `cat`
that Inductor writes in place, so `n` is returned as a view into the cat's buffer. Memory
planning gives the later value the cat's storage (the cat is dead once it is read), although
the returned view still lives in it: `n` comes back as 22.0 for eager's -3.0, torch 2.6. torch
2.14.1 is right (2.7 to 2.13 not run). Found by flatcheck's torch campaign on torch 2.6 (seed
138 case 70, path compile.inductor.memory, judged by its float64 witness: Inductor -13.25 where
eager and the float64 run give -12.5; compile.inductor, without memory planning, agreed),
shrunk from 115 to 16 nodes by `flatcheck shrink`, written plainly from the shrink (the same 16
steps); docs/found-bugs.md 73.
    python3 corpus/torch/inductor-memory-planning-output-view-reused.py   # exit 1 while present
"""
import sys

import torch

FIXED_IN = (2, 14)  # torch2_test.sh: 2.14.1 exits 0; 2.7 to 2.13 not run


def f(g):  # g: [1, 4]
    h = torch.split(g, 2, 1)[1]  # [[3, 4]]
    n = -torch.split(h, 1, 1)[0]  # [[-3]]
    m = h @ h.t()  # [[25]]
    c3 = torch.cat([m, m, m], 1)
    m2 = torch.split(torch.cat([m, m], 1), 1, 1)[1]
    t = torch.cat([m2, n, n], 1)  # [[25, -3, -3]]: n's value is written into this buffer
    s = torch.split(torch.cat([c3, c3], 0), 1, 0)[1]  # [[25, 25, 25]]
    return n, t + s  # [[-3]], [[50, 22, 22]]


def main():
    import torch._inductor.config
    torch._inductor.config.compile_threads = 1  # no worker processes (the repro runner forks)
    g = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    want = [t.tolist() for t in f(g)]
    got = {}
    for planning in (False, True):
        torch._dynamo.reset()
        with torch._inductor.config.patch(memory_planning=planning), torch.no_grad():
            outs = torch.compile(f, backend="inductor", fullgraph=True)(g)
        got[planning] = [t.tolist() for t in outs]
    torch._dynamo.reset()
    print(f"torch {torch.__version__}: eager {want}; Inductor {got[False]}, with memory planning "
          f"{got[True]}")
    if got[False] != want:
        print("Inductor differs without memory planning too: not this bug")
        return 2
    return 1 if got[True] != want else 0


if __name__ == "__main__":
    sys.exit(main())
