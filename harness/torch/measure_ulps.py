#!/usr/bin/env python3
"""Measures torch's exp, tanh, sigmoid and sqrt on this CPU against a correctly rounded
reference (the float64 result rounded once to float32; for sqrt that is the correctly rounded
square root), over every 61st float bit pattern of each op's domain plus 2^22 evenly spaced
points. flatcheck_torch.py's ULP bounds are torch's error plus flatcheck's (bench/results/ulp.md);
docs/torch.md records both. sqrt is compared bit for bit, so for it the count of inputs off and
the first of them are printed too, and sqrt(0.555) in tensors of 1, 12 and 64 elements (torch
2.11's x86 wheel gave one ulp low in a 12-element tensor: docs/found-bugs.md, 13).

    /usr/bin/python3 harness/torch/measure_ulps.py
"""
import torch, sys
torch.set_num_threads(1)
def ulps(a, b):
    ai = a.view(torch.int32).to(torch.int64); bi = b.view(torch.int32).to(torch.int64)
    ai = torch.where(ai < 0, -(ai & 0x7fffffff), ai); bi = torch.where(bi < 0, -(bi & 0x7fffffff), bi)
    d = (ai - bi).abs()
    both_nan = torch.isnan(a) & torch.isnan(b)
    return torch.where(both_nan, torch.zeros_like(d), d)
def grid(lo, hi, n=1<<22):
    u = torch.arange(0, 1 << 32, 61, dtype=torch.int64)
    f = torch.tensor(u.numpy().astype('uint32').view('float32'))
    f = f[(f >= lo) & (f <= hi)]
    return torch.cat([f, torch.linspace(lo, hi, n, dtype=torch.float32)])
for name, fn, fd, lo, hi in [("exp", torch.exp, torch.exp, -104, 89), ("tanh", torch.tanh, torch.tanh, -10, 10),
                             ("sigmoid", torch.sigmoid, lambda x: 1/(1+torch.exp(-x)), -87, 20),
                             ("sqrt", torch.sqrt, torch.sqrt, 0, 3.4028234663852886e38)]:
    x = grid(lo, hi)
    got = fn(x); ref = fd(x.double()).float()
    d = ulps(got, ref); i = int(d.argmax())
    print(name, "samples", x.numel(), "torch max ulp vs float64-rounded", int(d.max()), "at", float(x[i]))
    if name == "sqrt":
        off = (d != 0).nonzero().flatten()
        first = [f"{float(x[j])!r} (0x{int(x[j:j + 1].view(torch.int32)) & 0xffffffff:08x})"
                 for j in off[:5]]
        print("sqrt inputs off:", off.numel(), "first:", first)
x = torch.tensor(0.555, dtype=torch.float32)
for n in (1, 12, 64):
    got = torch.sqrt(x.repeat(n))
    ref = int(torch.sqrt(x.double()).float().view(torch.int32)) & 0xffffffff
    bits = sorted({f"0x{b & 0xffffffff:08x}" for b in got.view(torch.int32).tolist()})
    print(f"sqrt(0.555) in {n} elements: {bits}, correctly rounded 0x{ref:08x}")
