"""Runs each repro script as `python3 REPRO` would, each in a process of its own forked from one
that has imported torch already: torch's import (about 1.5 s of CPU in a torch root, most of a
repro's time) is paid once for all of them.

    python3 run_repros.py OUTDIR REPRO...

For each REPRO, OUTDIR/NAME.out holds what it printed (stdout and stderr) and OUTDIR/NAME.rc its
exit status as a shell reports it: sys.exit's code (0 for None, 1 for a message), 1 for an
uncaught exception (the traceback printed, as Python does), 128 + N for a signal N. The child runs
the script as __main__ (runpy), with sys.argv [REPRO] and the script's folder first on sys.path.
Exit 0 once every repro has run, 2 on bad usage.

    python3 run_repros.py --serve QDIR SCRIPT

serves the runs of one script (the torch bridge: torch2_test.sh's `bridge`) the same way, each
forked from this process once it has imported SCRIPT as a module (and torch's dynamo), so each
run pays no import (about 3 s of CPU a run on torch 2.14). A run is asked for by a file
QDIR/ID.req, its arguments NUL-terminated (argv[0] SCRIPT); it ends with QDIR/ID.out and
QDIR/ID.err (stdout and stderr) and then QDIR/ID.rc (its exit status, as above). Requests run
one at a time in name order. The server runs until it is killed or the process that started it
has ended. Start it under PYTHONHASHSEED=0 where SCRIPT would restart itself so: each run
inherits this process's hash seed.

Both forms warm torch up before the first fork (warm_up(): one small export, strict and
non-strict, and its decomposition): torch.export's first call in a process builds its tracing
machinery (about 1.2 s of CPU on torch 2.6, then 0.05 s a call), which each child would
otherwise build again.
"""
import importlib
import os
import runpy
import signal
import sys
import time
import traceback
import warnings

import torch  # noqa: F401 - imported before the fork: what the children share


def warm_up():
    """torch.export's machinery built once, in this process: a module of two ops (no state, so
    no path of export's that reports or remembers something) exported strict and non-strict,
    and decomposed. Nothing it prints reaches this process's output (fds 1 and 2 point at
    /dev/null meanwhile), its warnings are dropped, and a torch without torch.export (1.x) or
    one where this fails is left as it is: the children then build it themselves."""
    export = getattr(torch, "export", None)
    if export is None or not hasattr(export, "export"):
        return

    class Warm(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x) + 1

    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            example = (torch.zeros(2),)
            for strict in (True, False):
                export.export(Warm(), example, strict=strict).run_decompositions()
    except Exception:  # noqa: BLE001 - a warm-up only: the children still run as they would
        pass
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved + [null]:
            os.close(fd)


def exit_code(e):
    """The status `python3 script.py` exits with on SystemExit `e`."""
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code & 0xFF
    print(e.code, file=sys.stderr)
    return 1


def redirect(fileno, path):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, fileno)
    os.close(fd)


def run_child(argv, out, err):
    """In the forked child: argv[0] run as __main__ with stdout to `out`, stderr to `err` (the
    same file where they are equal); exits with its status."""
    redirect(1, out)
    if err == out:
        os.dup2(1, 2)
    else:
        redirect(2, err)
    path = argv[0]
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(path))
    try:
        runpy.run_path(path, run_name="__main__")
        code = 0
    except SystemExit as e:
        code = exit_code(e)
    except BaseException:  # noqa: BLE001 - an uncaught exception: Python prints it, exits 1
        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def run_forked(argv, out, err, rc_path):
    """argv run in a forked child; its exit status written to rc_path once it has ended (in
    whole: written aside, then renamed)."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        run_child(argv, out, err)
    _, status = os.waitpid(pid, 0)
    rc = (128 + os.WTERMSIG(status)) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    with open(rc_path + ".tmp", "w", encoding="utf-8") as f:
        f.write(f"{rc}\n")
    os.rename(rc_path + ".tmp", rc_path)


def serve(qdir, script):
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    importlib.import_module(os.path.splitext(os.path.basename(script))[0])
    try:
        importlib.import_module("torch._dynamo")
    except ImportError:  # torch 1.x
        pass
    warm_up()
    starter = os.getppid()
    while os.getppid() == starter:
        requests = sorted(f for f in os.listdir(qdir) if f.endswith(".req"))
        if not requests:
            time.sleep(0.02)
        for name in requests:
            base = os.path.join(qdir, name[:-len(".req")])
            with open(base + ".req", "rb") as f:
                argv = [a.decode() for a in f.read().split(b"\0")[:-1]]
            os.remove(base + ".req")
            run_forked(argv, base + ".out", base + ".err", base + ".rc")
    return 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--serve" and os.path.isdir(sys.argv[2]):
        return serve(sys.argv[2], sys.argv[3])
    if len(sys.argv) < 3 or not os.path.isdir(sys.argv[1]):
        print("usage: run_repros.py OUTDIR REPRO...  (OUTDIR an existing folder)\n"
              "       run_repros.py --serve QDIR SCRIPT", file=sys.stderr)
        return 2
    outdir = sys.argv[1]
    warm_up()
    for path in sys.argv[2:]:
        base = os.path.join(outdir, os.path.splitext(os.path.basename(path))[0])
        run_forked([path], base + ".out", base + ".out", base + ".rc")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(main())
