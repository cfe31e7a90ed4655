#!/usr/bin/env python3
"""A campaign over real PyTorch (docs/torch.md): generate N cases, write each as a PyTorch
program, run them through flatcheck_torch.py, and shrink every mismatch with flatcheck's
minimizer using the torch run itself as the interestingness test, writing a standalone
PyTorch repro for each.

    python3 harness/torch/torch_campaign.py --cases 1000 [--seed 1] [--out torch-campaign]
        [--paths eager,fx,export] [--inline position|name] [--flatcheck build/bin/flatcheck]
        [--no-shrink] [--max-nodes N]

Writes OUT/cases/*.json, OUT/programs/*.py, OUT/results.jsonl, and for each mismatch
OUT/minimized/<name>.json and OUT/repros/<name>.py (run it: python3 OUT/repros/<name>.py).
Prints the counts of agreement per op and per path; exits 1 when a mismatch was found.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run(cmd, **kw):
    return subprocess.run(cmd, check=False, text=True, capture_output=True, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="torch-campaign")
    ap.add_argument("--paths", default="eager,fx,export")
    ap.add_argument("--inline", choices=["position", "name"], default="position")
    ap.add_argument("--flatcheck", default=os.path.join(ROOT, "build", "bin", "flatcheck"))
    ap.add_argument("--max-nodes", type=int, default=20)
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    if args.cases < 1:
        ap.error("--cases must be at least 1")
    if not os.access(args.flatcheck, os.X_OK):
        print(f"torch_campaign: {args.flatcheck} is not an executable (build flatcheck first)",
              file=sys.stderr)
        return 2
    cases, programs = os.path.join(args.out, "cases"), os.path.join(args.out, "programs")
    for d in (cases, programs):
        os.makedirs(d, exist_ok=True)
    r = run([args.flatcheck, "generate", "--seed", str(args.seed), "--count", str(args.cases),
             "--max-nodes", str(args.max_nodes), "-o", cases])
    if r.returncode != 0:
        print(r.stdout + r.stderr, file=sys.stderr)
        return 2
    r = run([args.flatcheck, "emit-torch", cases, "-o", programs])
    if r.returncode != 0:
        print(r.stdout + r.stderr, file=sys.stderr)
        return 2
    files = sorted(os.path.join(programs, f) for f in os.listdir(programs) if f.endswith(".py"))
    bridge = [args.python, os.path.join(HERE, "flatcheck_torch.py"), "--paths", args.paths,
              "--inline", args.inline]
    r = run(bridge + files)
    if r.returncode not in (0, 1):
        print(r.stdout[-4000:] + r.stderr[-4000:], file=sys.stderr)
        return 2
    lines = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    with open(os.path.join(args.out, "results.jsonl"), "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    summary = lines[-1]
    failing = [x for x in lines[:-1] if not x.get("ok", True)]
    print(f"torch campaign: {args.cases} cases, seed {args.seed}, torch {summary['torch']}")
    for path, st in sorted(summary["paths"].items()):
        print(f"  {path:7s} agree {st['agree']:5d}  mismatch {st['mismatch']:4d}  "
              f"skipped {st['skipped']:5d}  stopped by a known torch issue "
              f"{st['known_torch_issue']:4d}")
    print("  nodes per op (eager, first call): op: bitwise / within bound / unchecked / mismatch")
    for op, c in sorted(summary["nodes_per_op"].items()):
        print(f"    {op:12s} {c.get('bitwise', 0):6d} {c.get('within_bound', 0):6d} "
              f"{c.get('unchecked', 0):6d} {c.get('mismatch', 0):6d}")
    if not failing:
        print("result: torch agrees with flatcheck on every path that ran")
        return 0
    print(f"result: {len(failing)} mismatches")
    done = set()
    for x in failing:
        program, path = x["program"], x["path"]
        name = os.path.splitext(os.path.basename(program))[0]
        if (name, path) in done:
            continue
        done.add((name, path))
        print(f"  {name} ({path}): {json.dumps(x.get('first_mismatch'))[:300]}")
        if args.no_shrink:
            continue
        scratch = os.path.join(args.out, "scratch", f"{name}-{path}")
        os.makedirs(scratch, exist_ok=True)
        pred = (f"{shlex.quote(args.flatcheck)} emit-torch {{}} -o {shlex.quote(scratch)} "
                f">/dev/null && {shlex.quote(args.python)} "
                f"{shlex.quote(os.path.join(HERE, 'flatcheck_torch.py'))} "
                f"{shlex.quote(os.path.join(scratch, 'candidate.py'))} --paths eager,{path} "
                f"--inline {args.inline} --quiet >/dev/null 2>&1; test $? -eq 1")
        minimized = os.path.join(args.out, "minimized", f"{name}-{path}.json")
        os.makedirs(os.path.dirname(minimized), exist_ok=True)
        s = run([args.flatcheck, "shrink", os.path.join(cases, name + ".json"), "-o", minimized,
                 "--predicate", pred, "--max-checks", "400"])
        print("    " + (s.stdout.strip().replace("\n", "\n    ") or s.stderr.strip()))
        if os.path.exists(minimized):
            repros = os.path.join(args.out, "repros")
            run([args.flatcheck, "emit-torch", minimized, "-o", repros])
            print(f"    repro: python3 {os.path.join(repros, name + '-' + path + '.py')}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
