#!/usr/bin/env python3
"""A campaign over real PyTorch (docs/torch.md): generate N cases, write each as a PyTorch
program, run them through every path of flatcheck_torch.py, and shrink every mismatch and error
with flatcheck's minimizer, the torch run itself as the interestingness test, into a standalone
PyTorch repro.

    python3 harness/torch/torch_campaign.py --cases 5000 --torch-root --jobs 2
        [--seed 1] [--first K] [--out torch-campaign]
        [--paths eager,fx,export,partition,pipeline,compile,aoti,jit,func,grad]
        [--pass MODULE:FUNCTION] [--flatcheck build/bin/flatcheck] [--python CMD] [--no-shrink]
        [--max-nodes N] [--max-shrinks K] [--time SECONDS] [--path-time SECONDS]
        [--device cpu|cuda] [--branch python|cond|nograd] [--reads copy|alias|changed]
        [--update-args] [--update-inputs] [--kwargs] [--dict-outputs] [--packed-args]
        [--op-kwargs] [--hostile-names] [--hostile-child-names] [--non-persistent-buffers]
        [--tensor-constants] [--inplace-updates] [--step-counters]

--torch-root runs the bridge in the torch 2.x root (scripts/torch-root.sh builds it; this is
--python "scripts/in-torch-root python3"); without it, --python (default: this interpreter).
Writes OUT/cases/*.json, OUT/programs/*.py, OUT/results.jsonl (one line per program and path,
then the summary), and for each distinct failure OUT/minimized/<name>-<path>.json and
OUT/repros/<name>-<path>.py. --first K: the cases K..K+N-1 of the seed (case i is the same case
whatever K and N are), so campaigns on several machines or days add up to one seed's cases
0..M-1 without running one twice. --time SECONDS: each bridge process starts no program after
SECONDS, and the summary says how many were not run. --path-time SECONDS: a path
(export.MODE.module and .unflatten: together) that runs longer on one program is stopped and
counted skipped, reason "time limit" (the bridge's --path-time). --device cuda: every path
but eager runs on the GPU (the bridge's --device). --branch cond: every path but eager takes the branch op by
torch.cond; --branch nograd: its value computed again under torch.no_grad() (the bridge's
--branch). --reads alias: every path but eager reads the model's state as the buffers themselves,
not copies; --reads changed: so, on the programs whose results change read so alone (the
bridge's --reads). --update-args: the programs are emitted with each buffer update below the root
made through a forward argument the caller fills with the buffer (emit-torch --update-args), so
torch sees submodules update their inputs in place. A shrink's test runs the bridge with the same
--pass, --device, --branch and --reads, on programs emitted with the same --update-args and
--update-inputs (and --kwargs, --dict-outputs, --packed-args, --op-kwargs, --hostile-names,
--hostile-child-names), and, for a path that draws per program (hooked, swap, preserve_some,
pipeline, rewrite, dynamic), with the finding's draw as --draw, written beside the shrunk case
(OUT/minimized/<name>-<path>.draw). --update-inputs: the
programs' roots update their inputs in
place once their results are made (emit-torch --update-inputs); every path judges the inputs
after each call against torch eager's. --kwargs: each child is called with some or all of its
arguments by keyword (emit-torch --kwargs). --dict-outputs: each child of several results returns
them as a dict, read by key (emit-torch --dict-outputs). --packed-args: each child takes its
arguments as one tuple (emit-torch --packed-args). --op-kwargs: additions, subtractions and
divisions spelled with keyword arguments (emit-torch --op-kwargs). --hostile-names: each forward's
parameters named from names torch makes or reads (emit-torch --hostile-names).
--hostile-child-names: most children named from names torch's modules and values use
(emit-torch --hostile-child-names). --non-persistent-buffers: about two of each three buffers
registered with persistent=False (emit-torch --non-persistent-buffers). --tensor-constants:
about two of each three buffers held as plain tensor attributes (emit-torch --tensor-constants).
--inplace-updates: buffer updates by an arithmetic op written as the in-place op (b.add_(y);
emit-torch --inplace-updates). --step-counters: about two of each three modules keep an int64
step counter raised by one at each run (emit-torch --step-counters). Prints counts per
path, the skip and known-issue classes, and per op and
path; exits 1 when a mismatch or an error was found, 2 on bad usage. SIGTERM or SIGINT (a time limit around the campaign,
Ctrl-C) stops each bridge process, which counts the program under way and those after it not
run; the campaign then writes its results and summary as after --time, and starts no shrink.
"""
import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BRIDGE = os.path.join(HERE, "flatcheck_torch.py")
STATUSES = ("agree", "excused", "mismatch", "error", "skipped", "known_torch_issue")


def run(cmd, **kw):
    return subprocess.run(cmd, check=False, text=True, capture_output=True, **kw)


def add_counts(into, more):
    """Sums nested dicts of counts."""
    for k, v in more.items():
        if isinstance(v, dict):
            add_counts(into.setdefault(k, {}), v)
        elif isinstance(v, int) and not isinstance(v, bool):
            into[k] = into.get(k, 0) + v


STOP = {"signal": None, "bridges": []}


def on_stop(signum, frame):
    """SIGTERM or SIGINT (a time limit around the campaign, Ctrl-C): each bridge process is
    asked to stop (SIGTERM: it counts the program under way and those after it not run and
    prints its summary), and the campaign summarizes what ran; no shrink is started."""
    if STOP["signal"] is None:
        STOP["signal"] = signal.Signals(signum).name
        print(f"torch_campaign: {STOP['signal']}: stopping the bridge processes",
              file=sys.stderr, flush=True)
    for p in STOP["bridges"]:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)


def run_bridge(python, files, extra, jobs, scratch):
    """Runs the bridge over `files` in `jobs` processes, showing progress on stderr; returns
    (lines, merged summary, worst exit status) or (None, None, status) when a process failed."""
    chunks = [files[i::jobs] for i in range(jobs) if files[i::jobs]]
    procs = []
    for k, chunk in enumerate(chunks):
        out = open(os.path.join(scratch, f"bridge-{k}.jsonl"), "w", encoding="utf-8")
        err = open(os.path.join(scratch, f"bridge-{k}.err"), "w", encoding="utf-8")
        procs.append((subprocess.Popen(python + [BRIDGE] + extra + chunk, stdout=out, stderr=err,
                                       text=True), out, err, k))
        STOP["bridges"].append(procs[-1][0])
        if STOP["signal"]:  # asked to stop while the processes were being started
            procs[-1][0].send_signal(signal.SIGTERM)
    start = time.time()
    # on a terminal one line rewritten every 5 s; elsewhere (a log) a whole line every 10 s
    tty = sys.stderr.isatty()
    shown = start
    while any(p.poll() is None for p, _, _, _ in procs):
        time.sleep(5 if tty else 1)
        if not tty and time.time() - shown < 10:
            continue
        shown = time.time()
        done = set()
        for _, _, _, k in procs:
            with open(os.path.join(scratch, f"bridge-{k}.jsonl"), encoding="utf-8") as f:
                done |= {json.loads(line).get("program") for line in f if line.startswith("{")}
        print(f"{chr(13) if tty else ''}  {len(done) - (None in done)}/{len(files)} programs, "
              f"{time.time() - start:.0f} s", end="" if tty else "\n", file=sys.stderr,
              flush=True)
    if tty:
        print(file=sys.stderr)
    lines, summary, worst = [], {}, 0
    for p, out, err, k in procs:
        out.close()
        err.close()
        text = open(os.path.join(scratch, f"bridge-{k}.jsonl"), encoding="utf-8").read()
        parsed = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
        # A process killed by a signal once its summary line is out (a stop request reaching
        # it as it exits) has checked all it says; bad usage (2) or any other status is a fault.
        whole = any(x.get("summary") for x in parsed) and p.returncode < 0
        if p.returncode not in (0, 1) and not whole:
            errors = open(os.path.join(scratch, f"bridge-{k}.err"), encoding="utf-8").read()
            print(text[-3000:] + errors[-3000:] + f"torch_campaign: bridge process {k} exited "
                  f"with status {p.returncode}", file=sys.stderr)
            return None, None, p.returncode
        if not any(x.get("summary") for x in parsed):  # it died part way: programs unchecked
            errors = open(os.path.join(scratch, f"bridge-{k}.err"), encoding="utf-8").read()
            print(errors[-3000:] + f"torch_campaign: bridge process {k} ended (exit "
                  f"{p.returncode}) before its summary line", file=sys.stderr)
            return None, None, 2
        worst = max(worst, p.returncode)
        lines += [x for x in parsed if not x.get("summary")]
        for x in parsed:
            if x.get("summary"):
                summary["torch"] = x["torch"]
                if x.get("stopped"):
                    summary["stopped"] = x["stopped"]
                add_counts(summary, {k2: v for k2, v in x.items() if k2 != "torch"})
    return lines, summary, worst


def print_summary(args, summary, seconds, out=print):
    which = f" ({args.first}..{args.first + args.cases - 1})" if args.first else ""
    branch = f", branch op by {args.branch}" if args.branch != "python" else ""
    branch += ", state read as aliases" if args.reads != "copy" else ""
    branch += "".join(f", {said}" for flag, said, _ in FORMS
                      if getattr(args, flag[2:].replace("-", "_")))
    out(f"torch campaign: {args.cases} cases{which}, seed {args.seed}, torch {summary['torch']}, "
        f"{seconds:.0f} s, {args.jobs} jobs{branch}")
    if args.reads != "copy":
        out(f"  programs whose torch eager results change with state read as aliases: "
            f"{summary.get('programs_reads_change', 0)} (the others compute as read as copies)")
    not_run = summary.get("programs_not_run", 0)
    if not_run:
        why = (f"stopped by {summary['stopped']}" if summary.get("stopped") else
               f"--time {args.time:g} s ran out")
        out(f"  programs checked: {args.cases - not_run} of {args.cases} ({not_run} not run: "
            f"{why})")
    width = max([28] + [len(p) for p in summary["paths"]])
    out("  " + "path".ljust(width) + " " + "".join(f"{s:>10s}" for s in STATUSES[:5]) +
        "  known torch issue")
    for path, st in sorted(summary["paths"].items()):
        out(f"  {path:{width}s} " + "".join(f"{st.get(s, 0):10d}" for s in STATUSES[:5]) +
            f"  {st.get('known_torch_issue', 0):10d}")
    for key, title in (("skip_reasons", "skipped"), ("known_torch_issue_reasons",
                                                    "known torch issues")):
        for path, reasons in sorted(summary.get(key, {}).items()):
            for why, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
                out(f"  {title} on {path}: {n} x {why}")
    out("  programs per op and path (agree+excused / mismatch+error / skipped+known):")
    ops = sorted({op for per in summary["ops_per_path"].values() for op in per})
    paths = sorted(summary["ops_per_path"])
    short = [p.replace("export.", "").replace(".", "/") for p in paths]
    cell = max([21] + [len(p) for p in short]) + 1
    out("    " + f"{'op':12s}" + "".join(f"{p:>{cell}s}" for p in short))
    for op in ops:
        cells = []
        for p in paths:
            c = summary["ops_per_path"][p].get(op, {})
            cells.append(f"{c.get('agree', 0) + c.get('excused', 0)}/"
                         f"{c.get('mismatch', 0) + c.get('error', 0)}/"
                         f"{c.get('skipped', 0) + c.get('known_torch_issue', 0)}")
        out("    " + f"{op:12s}" + "".join(f"{c:>{cell}s}" for c in cells))
    out("  eager nodes per op (every call): bitwise / within bound / unchecked / mismatch")
    for op, c in sorted(summary.get("nodes_per_op", {}).items()):
        out(f"    {op:12s} {c.get('bitwise', 0):7d} {c.get('within_bound', 0):6d} "
              f"{c.get('unchecked', 0):6d} {c.get('mismatch', 0):6d}")


def write_markdown(args, summary, seconds, failing, commit):
    """The campaign's figures as a results file: command, commit, torch, the summary tables."""
    lines = []
    print_summary(args, summary, seconds, out=lines.append)
    with open(args.markdown, "w", encoding="utf-8") as f:
        f.write("# Torch campaign\n\n")
        f.write("command: `python3 harness/torch/torch_campaign.py " +
                " ".join(shlex.quote(a) for a in sys.argv[1:]) + f"`  \ncommit: `{commit}`\n\n")
        f.write("Per path, programs that agree, are excused (NaN payloads traced to a constant), "
                "mismatch, raised, were skipped with a class, or hit a known torch issue "
                "(docs/torch.md, docs/found-bugs.md).\n\n```\n" + "\n".join(lines) + "\n```\n")
        f.write(f"\nUnexplained failing paths: {len(failing)}.\n")


def signature(x):
    """Failures with one signature are shrunk once: the path, status and the message's head."""
    why = x.get("first_mismatch", "")
    why = why.get("why", "") if isinstance(why, dict) else why
    return (x["path"], x["status"], why.split(":")[0][:60])


# emit-torch's program forms the campaign takes: (flag, what the summary says, --help).
FORMS = (
    ("--update-args", "submodules' updates made through forward arguments",
     "emit each buffer update below the root as an update of a forward argument the caller "
     "fills with the buffer (emit-torch --update-args)"),
    ("--update-inputs", "inputs updated in place by the root",
     "emit the programs with the root updating each input in place once its results are made; "
     "the paths judge the inputs after each call (emit-torch --update-inputs)"),
    ("--kwargs", "children called with keyword arguments",
     "emit the programs with each child called with some or all of its arguments by keyword "
     "(emit-torch --kwargs)"),
    ("--dict-outputs", "children's results returned as dicts",
     "emit the programs with each child of several results returning them as a dict, read by "
     "key (emit-torch --dict-outputs)"),
    ("--packed-args", "children's arguments packed in a tuple",
     "emit the programs with each child taking its arguments as one tuple "
     "(emit-torch --packed-args)"),
    ("--op-kwargs", "ops spelled with keyword arguments",
     "emit the programs with each addition spelled torch.sub(a, b, alpha=-1), each subtraction "
     "torch.add(a, b, alpha=-1) and each division with rounding_mode=None "
     "(emit-torch --op-kwargs)"),
    ("--hostile-names", "parameters named as torch names its own",
     "emit the programs with each forward's parameters named from names torch makes or reads "
     "(getitem_1, arg0_1, p_<param>, input, operator, ...) (emit-torch --hostile-names)"),
    ("--hostile-child-names", "children named as torch names its own",
     "emit the programs with most children named from names torch's modules and values use "
     "(graph, code, meta, L__self__, submod_0, ...) (emit-torch --hostile-child-names)"),
    ("--non-persistent-buffers", "buffers registered non-persistent",
     "emit the programs with about two of each three buffers registered with persistent=False "
     "(emit-torch --non-persistent-buffers)"),
    ("--tensor-constants", "buffers held as plain tensor attributes",
     "emit the programs with about two of each three buffers held as plain tensor attributes, "
     "not registered (emit-torch --tensor-constants)"),
    ("--inplace-updates", "updates written as in-place ops",
     "emit the programs with each buffer update by an addition, subtraction, multiplication or "
     "division of the buffer written as the in-place op, b.add_(y) (emit-torch "
     "--inplace-updates)"),
    ("--step-counters", "modules keeping step counters",
     "emit the programs with about two of each three modules keeping an int64 step counter, "
     "raised by one in place at each run, like BatchNorm's num_batches_tracked (emit-torch "
     "--step-counters)"),
)


def emit_flags(args):
    """The emit-torch options the campaign's programs, and a shrink's candidates, are made with."""
    return [flag for flag, _, _ in FORMS if getattr(args, flag[2:].replace("-", "_"))]


# A drawn path's result names its draw (the hooked paths' modules and kinds, the swap paths'
# modules, preserve_some's modules, the pipeline's split points, the rewrite path's pattern, the
# dynamic paths' sizes): as `RESULT FIELD: --draw KEY`. A shrink's test pins it, so that every
# smaller candidate is checked with the finding's draw, not one drawn from the candidate itself.
DRAWS = {"hooked": "hooked", "swapped": "swap", "preserved": "preserve", "split_spec": "pipeline"}
SIZED = ("export.strict.dynamic", "export.nonstrict.dynamic", "aoti.dynamic")  # read --draw's sizes


def pinned_draw(x, path):
    """The --draw that fixes what the path `path` drew for the result `x` ({} when it drew
    nothing)."""
    draw = {key: x[field] for field, key in DRAWS.items() if field in x}
    if "pattern" in x:
        draw["rewrite"] = [x["pattern"]]
    if "sizes" in x and path in SIZED:
        draw["dynamic"] = x["sizes"]
    return draw


def shrink(args, python, x, cases):
    program, path = x["program"], x["path"]
    if args.device != "cpu":  # the bridge names a result PATH.<device>; --interesting takes PATH
        path = path[:-len("." + args.device)] if path.endswith("." + args.device) else path
    name = os.path.splitext(os.path.basename(program))[0]
    scratch = os.path.join(os.path.abspath(args.out), "scratch", f"{name}-{path}")
    os.makedirs(scratch, exist_ok=True)
    why = x.get("first_mismatch", "")
    why = why.get("why", "") if isinstance(why, dict) else why
    text = why.split(":")[0] if x["status"] == "error" else ""
    interesting = f"{path}:{x['status']}" + (f":{text}" if text else "")
    extra = f" --pass {shlex.quote(args.flatten_pass)}" if args.flatten_pass else ""
    extra += f" --device {args.device}" if args.device != "cpu" else ""
    extra += f" --branch {args.branch}" if args.branch != "python" else ""
    extra += f" --reads {args.reads}" if args.reads != "copy" else ""
    pinned = pinned_draw(x, path)
    draw = json.dumps(pinned) if pinned else ""
    extra += f" --draw {shlex.quote(draw)}" if draw else ""
    emit = "".join(" " + f for f in emit_flags(args))
    pred = (f"{shlex.quote(args.flatcheck)} emit-torch {{}}{emit} -o {shlex.quote(scratch)} "
            f">/dev/null && {' '.join(shlex.quote(c) for c in python)} {shlex.quote(BRIDGE)} "
            f"{shlex.quote(os.path.join(scratch, 'candidate.py'))} --quiet{extra} "
            f"--interesting {shlex.quote(interesting)} >/dev/null 2>&1")
    minimized = os.path.join(args.out, "minimized", f"{name}-{path}.json")
    os.makedirs(os.path.dirname(minimized), exist_ok=True)
    s = run([args.flatcheck, "shrink", os.path.join(cases, name + ".json"), "-o", minimized,
             "--predicate", pred, "--max-checks", str(args.max_checks)])
    print("    " + (s.stdout.strip().replace("\n", "\n    ") or s.stderr.strip()[-500:]))
    if os.path.exists(minimized):
        repros = os.path.join(args.out, "repros")
        run([args.flatcheck, "emit-torch", minimized, "-o", repros] + emit.split())
        print(f"    repro: python3 {os.path.join(repros, name + '-' + path + '.py')}")
        if draw:  # beside the shrunk case, as corpus/torch/cases keeps a case's draw
            with open(os.path.splitext(minimized)[0] + ".draw", "w") as f:
                f.write(draw + "\n")
            print(f"    its draw (the bridge's --draw): {draw}")


def main():
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--cases", type=int, default=1000, help="cases to generate (default 1000)")
    ap.add_argument("--seed", type=int, default=1, help="the generator's seed (default 1)")
    ap.add_argument("--first", type=int, default=0, metavar="K",
                    help="check the seed's cases K..K+N-1 (default 0)")
    ap.add_argument("--out", default="torch-campaign",
                    help="folder for cases, programs, results, shrunk cases and repros "
                    "(default torch-campaign)")
    ap.add_argument("--paths", default=None,
                    help="the bridge's paths, comma-separated (default: the bridge's, every path)")
    ap.add_argument("--pass", dest="flatten_pass", metavar="MODULE:FUNCTION",
                    help="the flatten pass of the fx and partition paths (the bridge's --pass)")
    ap.add_argument("--flatcheck", default=os.path.join(ROOT, "build", "bin", "flatcheck"),
                    help="the flatcheck binary (default build/bin/flatcheck)")
    ap.add_argument("--max-nodes", type=int, default=20,
                    help="nodes per generated graph at most (default 20)")
    ap.add_argument("--jobs", type=int, default=1, help="bridge processes (default 1)")
    ap.add_argument("--no-shrink", action="store_true", help="shrink no failure")
    ap.add_argument("--max-shrinks", type=int, default=5,
                    help="distinct failures to shrink (by path, status and message)")
    ap.add_argument("--max-checks", type=int, default=400,
                    help="predicate runs per shrink at most (default 400)")
    ap.add_argument("--python", default=None, help="the interpreter command (shell words)")
    ap.add_argument("--torch-root", action="store_true",
                    help="run the bridge in the torch 2.x root (scripts/in-torch-root python3)")
    ap.add_argument("--time", type=float, metavar="SECONDS",
                    help="each bridge process starts no program after SECONDS (the summary "
                         "counts those not run)")
    ap.add_argument("--path-time", type=float, metavar="SECONDS",
                    help="stop a path that runs longer on one program and count it skipped "
                         "(the bridge's --path-time)")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                    help="where every path but eager runs (the bridge's --device)")
    ap.add_argument("--branch", default="python", choices=("python", "cond", "nograd"),
                    help="how every path but eager takes the branch op (the bridge's --branch)")
    ap.add_argument("--reads", default="copy", choices=("copy", "alias", "changed"),
                    help="how every path but eager reads the model's state: a copy, as "
                         "flatcheck does, or the buffer itself (alias), or that on the programs "
                         "whose results change read so alone (changed; the bridge's --reads)")
    for flag, _, text in FORMS:
        ap.add_argument(flag, action="store_true", help=text)
    ap.add_argument("--markdown", metavar="FILE",
                    help="also write the summary, the command and the commit to FILE")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    if args.cases < 1 or args.jobs < 1:
        ap.error("--cases and --jobs must be at least 1")
    if args.first < 0:
        ap.error("--first must be at least 0")
    if args.path_time is not None and not args.path_time > 0:
        ap.error("--path-time must be positive")
    if args.torch_root and args.python:
        ap.error("--torch-root and --python are two ways to name the interpreter: pick one")
    python = shlex.split(args.python) if args.python else [sys.executable]
    if args.torch_root:
        python = [os.path.join(ROOT, "scripts", "in-torch-root"), "python3"]
        probe = run(python + ["-c", "import torch; print(torch.__version__)"])
        if probe.returncode != 0:
            print("torch_campaign: the torch root does not run (bash scripts/torch-root.sh "
                  "builds it): " + (probe.stderr.strip() or probe.stdout.strip()),
                  file=sys.stderr)
            return 2
    if not os.access(args.flatcheck, os.X_OK):
        print(f"torch_campaign: {args.flatcheck} is not an executable (build flatcheck first)",
              file=sys.stderr)
        return 2
    args.out = os.path.abspath(args.out)
    cases, programs = os.path.join(args.out, "cases"), os.path.join(args.out, "programs")
    for d in (cases, programs):
        os.makedirs(d, exist_ok=True)
    start = time.time()
    # The commit the cases and programs come from (a results file names it).
    try:
        commit = run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).stdout.strip() or "?"
        if run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]).stdout.strip():
            commit += " (with uncommitted changes)"
    except OSError:  # no git on this machine
        commit = "? (no git)"
    r = run([args.flatcheck, "generate", "--seed", str(args.seed),
             "--count", str(args.first + args.cases), "--max-nodes", str(args.max_nodes),
             "-o", cases])
    if r.returncode != 0:
        print(r.stdout + r.stderr, file=sys.stderr)
        return 2
    wanted = range(args.first, args.first + args.cases)
    for i in range(args.first):  # the cases before --first: another campaign's
        os.remove(os.path.join(cases, f"case-{args.seed}-{i}.json"))
    r = run([args.flatcheck, "emit-torch", cases, "-o", programs] + emit_flags(args))
    if r.returncode != 0:
        print(r.stdout + r.stderr, file=sys.stderr)
        return 2
    # In case order, dealt round-robin to the bridge processes: a run that --time cuts short
    # has checked about the first cases, and a later run can go on with --first.
    files = [f for f in (os.path.join(programs, f"case-{args.seed}-{i}.py") for i in wanted)
             if os.path.exists(f)]
    extra = ["--paths", args.paths] if args.paths else []
    extra += ["--pass", args.flatten_pass] if args.flatten_pass else []
    extra += (["--time", str(args.time)] if args.time is not None else [])
    extra += (["--path-time", str(args.path_time)] if args.path_time is not None else [])
    extra += (["--device", args.device] if args.device != "cpu" else [])
    extra += (["--branch", args.branch] if args.branch != "python" else [])
    extra += (["--reads", args.reads] if args.reads != "copy" else [])
    if STOP["signal"]:
        print(f"torch_campaign: stopped by {STOP['signal']} before any program ran",
              file=sys.stderr)
        return 2
    lines, summary, rc = run_bridge(python, files, extra, args.jobs, args.out)
    if lines is None:
        return 2
    if STOP["signal"]:
        summary["stopped"] = STOP["signal"]  # what stopped the campaign, as the user sent it
    with open(os.path.join(args.out, "results.jsonl"), "w", encoding="utf-8") as f:
        for line in lines + [summary]:
            f.write(json.dumps(line) + "\n")
    seconds = time.time() - start
    print_summary(args, summary, seconds)
    failing = [x for x in lines if x.get("status") in ("mismatch", "error")]
    if args.markdown:
        write_markdown(args, summary, seconds, failing, commit)
    if not failing:
        checked = len(files) - summary.get("programs_not_run", 0)
        print(f"result: torch agrees with flatcheck on every path that ran ({checked} programs)")
        return 0
    groups = {}
    for x in failing:
        groups.setdefault(signature(x), []).append(x)
    print(f"result: {len(failing)} failing paths in {len(groups)} signatures")
    for i, (sig, xs) in enumerate(sorted(groups.items(), key=lambda kv: -len(kv[1]))):
        x = xs[0]
        print(f"  {len(xs)} x {sig[0]} {sig[1]}: e.g. {os.path.basename(x['program'])}: "
              f"{json.dumps(x.get('first_mismatch'))[:300]}")
        if not args.no_shrink and i < args.max_shrinks and not STOP["signal"]:
            shrink(args, python, x, cases)
    if STOP["signal"] and not args.no_shrink:
        print(f"  not shrunk: stopped by {STOP['signal']} (the failing programs are listed in "
              f"{os.path.join(args.out, 'results.jsonl')})")
    return 1


if __name__ == "__main__":
    sys.exit(main())
