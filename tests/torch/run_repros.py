"""Runs each repro script as `python3 REPRO` would, each in a process of its own forked from one
that has imported torch already: torch's import (about 1.5 s of CPU in a torch root, most of a
repro's time) is paid once for all of them.

    python3 run_repros.py OUTDIR REPRO...

For each REPRO, OUTDIR/NAME.out holds what it printed (stdout and stderr) and OUTDIR/NAME.rc its
exit status as a shell reports it: sys.exit's code (0 for None, 1 for a message), 1 for an
uncaught exception (the traceback printed, as Python does), 128 + N for a signal N. The child runs
the script as __main__ (runpy), with sys.argv [REPRO] and the script's folder first on sys.path.
Exit 0 once every repro has run, 2 on bad usage.
"""
import os
import runpy
import signal
import sys
import traceback

import torch  # noqa: F401 - imported before the fork: what the children share


def exit_code(e):
    """The status `python3 script.py` exits with on SystemExit `e`."""
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code & 0xFF
    print(e.code, file=sys.stderr)
    return 1


def run_child(path, out):
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.argv = [path]
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


def main():
    if len(sys.argv) < 3 or not os.path.isdir(sys.argv[1]):
        print("usage: run_repros.py OUTDIR REPRO...  (OUTDIR an existing folder)",
              file=sys.stderr)
        return 2
    outdir = sys.argv[1]
    for path in sys.argv[2:]:
        name = os.path.splitext(os.path.basename(path))[0]
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            run_child(path, os.path.join(outdir, name + ".out"))
        _, status = os.waitpid(pid, 0)
        rc = (128 + os.WTERMSIG(status)) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        with open(os.path.join(outdir, name + ".rc"), "w", encoding="utf-8") as f:
            f.write(f"{rc}\n")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(main())
