"""Inductor's FX graph cache keys a compiled graph without the CPU vector ISA its kernels were
written for. A process that builds AVX2 kernels (ATEN_CPU_CAPABILITY=avx2, or a CPU without
AVX-512) and shares the cache directory with one that built AVX-512 kernels (the default on a
CPU with AVX-512; a cache directory on a shared disk, a remote cache, or cache artifacts moved
between machines) takes the AVX-512 graph from the cache and compiles its kernels for AVX2: the
loops step 16 elements and each step handles 8. torch 2.6 and 2.14.1, CPU:

1. AVX-512 first, AVX2 from the cache: a sum over 64 elements comes out as the sum over half
   of them, or the process dies (each step's load of 16 elements into an 8-element vector
   writes past it); no error, no warning.
2. AVX2 first, AVX-512 from the cache: each step stores 16 elements where 8 were loaded, past
   the end of the output; the process dies (SIGBUS or SIGSEGV) or gives wrong numbers.
The same compiles, each in a cache directory of its own, agree with eager: the shared cache is
the cause. The key holds the torch version, Inductor's settings and, on a GPU, the device's
name, but on a CPU nothing of its vector ISA (CacheBase.get_system: an empty dict without a
GPU). pytorch#185049 added the CPU thread count to the key, which C++ kernels also specialize
on; the vector ISA is still missing.
Found while making flatcheck's torch checks run on a CPU without AVX-512 (an Inductor test
program crashed in a cache an AVX-512 run had filled) and written by hand.
    python3 corpus/torch/inductor-cache-ignores-vector-isa.py  # exit 1 while present
It runs order 1 alone: each order is three processes compiling from empty caches (about a
minute on a 2-core machine), and order 1 shows the bug on torch 2.6 and 2.14.1 alike. Order 2's
results above are docs/found-bugs.md 100's (run by hand; ORDERS below lists the orders run).
Exit 77 (not shown) on a CPU without both AVX-512 and AVX2: it needs the two ISAs.
"""
import json
import os
import subprocess
import sys
import tempfile

import torch


ORDERS = [("avx512", "avx2")]  # order 1; order 2 is ("avx2", "avx512")


def child():
    from torch._dynamo.utils import counters
    from torch._inductor.cpu_vec_isa import pick_vec_isa

    def f(x):
        return (x * 2.0).sum(), x * 3.0
    x = torch.arange(64.0) / 8.0  # exact in float32: the sum is 504
    got = torch.compile(f, backend="inductor", fullgraph=True, dynamic=False)(x)
    want = f(x)
    print(json.dumps({"isa": str(pick_vec_isa()),
                      "hit": counters["inductor"]["fxgraph_cache_hit"],
                      "sum": got[0].item(), "eager_sum": want[0].item(),
                      "product_equal": torch.equal(got[1], want[1])}))


def run(capability, cache):
    env = {**os.environ, "ATEN_CPU_CAPABILITY": capability, "TORCHINDUCTOR_CACHE_DIR": cache,
           "TORCHINDUCTOR_FX_GRAPH_CACHE": "1"}
    p = subprocess.run([sys.executable, "-W", "ignore", __file__, "--child"], env=env,
                       capture_output=True, text=True, timeout=600)
    lines = [line for line in p.stdout.splitlines() if line.startswith("{")]
    if p.returncode != 0 or not lines:
        return {"isa": capability, "died": p.returncode}
    return json.loads(lines[-1])


def right(r):
    return "died" not in r and r["sum"] == r["eager_sum"] and r["product_equal"]


def show(r):
    if "died" in r:
        return f"{r['isa']}: the process died (exit {r['died']})"
    return (f"{r['isa']}: cache hit {r['hit']}, sum {r['sum']} (eager {r['eager_sum']}), "
            f"x * 3 {'as eager' if r['product_equal'] else 'NOT as eager'}")


def main():
    if "--child" in sys.argv:
        return child()
    from torch._inductor.cpu_vec_isa import valid_vec_isa_list
    isas = [str(i) for i in valid_vec_isa_list()]
    if not {"avx512", "avx2"} <= {isa.split()[0] for isa in isas}:
        print(f"torch {torch.__version__}: not shown: Inductor builds for {isas} on this CPU; "
              "the repro needs both avx512 and avx2")
        sys.exit(77)
    bad = False
    for first, second in ORDERS:
        with tempfile.TemporaryDirectory() as shared, tempfile.TemporaryDirectory() as own:
            a, b = run(first, shared), run(second, shared)
            alone = run(second, own)
        print(f"torch {torch.__version__}: one cache: {show(a)}; then {show(b)} | "
              f"{second} in a cache of its own: {show(alone)}")
        bad |= right(a) and right(alone) and not right(b)
    if bad:
        print("FAIL: a graph compiled for one vector ISA was taken from the cache by a process "
              "building for another, and computed wrong")
        sys.exit(1)


if __name__ == "__main__":
    main()
