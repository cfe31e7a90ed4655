#!/usr/bin/env python3
"""Source mutants of the system under test, each built and put through a campaign.

How many bugs that nobody wrote a fault for does a default campaign catch? This script makes
small, independent edits to core/ (a comparison turned round, && for ||, a statement dropped,
true for false, ...), one at a time, rebuilds flatcheck with the edit, and runs a short
in-process campaign, then (when the campaign passes) replays the regression corpus, and with
--tests runs the core unit tests (core_test) and then the harness tests (harness_test, less its
slow timing tests, HARNESS_SKIP). A mutant is killed when one of these reports a
finding or a failure, crashes or hangs, and the report says which; it survives when all pass.
Survivors are listed with their edit, to be read: some
are equivalent (the edit changes no behaviour), some only weaken a check of bad input (which
the malformed suites judge, not a campaign), and the rest are blind spots of the generator or
the oracle.

The mutants come from the committed tree (git archive HEAD) copied into --work, never from the
working copy, and are sampled deterministically from --seed.

  python3 bench/mutants.py [--count N] [--seed S] [--cases C] [--work DIR] [--files GLOB ...]
                           [--only FILE:LINE ...] [--tests] [--markdown FILE] [--json FILE]
"""
import argparse
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DEFAULT_FILES = [
    "core/passes/*.cc",
    "core/ir/ir.cc",
    "core/ir/namespace.cc",
    "core/ir/analysis.cc",
    "core/ir/engine.cc",
    "core/ir/program.cc",
    "core/serialize/module_io.cc",
    "core/serialize/program_io.cc",
    "core/serialize/writer.cc",
    "core/serialize/fields.cc",
    "core/runtime/interpreter.cc",
    "core/runtime/engine_run.cc",
    "core/runtime/cpu/cpu_backend.cc",
    "core/ops/ops.cc",
]

# Token edits: (name, pattern, replacement). Each match on a line is one mutant.
TOKEN_EDITS = [
    ("== to !=", r"(?<=\s)==(?=\s)", "!="),
    ("!= to ==", r"(?<=\s)!=(?=\s)", "=="),
    ("< to <=", r"(?<=\s)<(?=\s)", "<="),
    ("<= to <", r"(?<=\s)<=(?=\s)", "<"),
    ("> to >=", r"(?<=\s)>(?=\s)", ">="),
    (">= to >", r"(?<=\s)>=(?=\s)", ">"),
    ("&& to ||", r"(?<=\s)&&(?=\s)", "||"),
    ("|| to &&", r"(?<=\s)\|\|(?=\s)", "&&"),
    ("true to false", r"\btrue\b", "false"),
    ("false to true", r"\bfalse\b", "true"),
    ("+ 1 to - 1", r"(?<=\s)\+ 1\b", "- 1"),
    ("- 1 to + 1", r"(?<=\s)- 1\b", "+ 1"),
    ("front to back", r"\.front\(\)", ".back()"),
    ("back to front", r"\.back\(\)", ".front()"),
    ("drop !", r"(?<=[(\s])!(?=[\w(])", ""),
    ("break to continue", r"\bbreak;", "continue;"),
    ("continue to break", r"\bcontinue;", "break;"),
]

# Lines never mutated: comments, preprocessor, and the fault switches and their blocks (each
# fault has its own tests; with no fault on, a block's body never runs).
SKIP_LINE = re.compile(r"^\s*(//|#|\*)|fault_on\(|FLATCHECK_FAULT|faults\.")
# A statement that can be dropped: one line, ends with ';', not a declaration we can tell.
DROPPABLE = re.compile(r"^\s*(?!return\b|case\b|default\b|using\b|namespace\b|struct\b|class\b"
                       r"|enum\b|const\b|auto\b|static\b|std::|template\b|typedef\b)"
                       r"[A-Za-z_][\w.\->:\[\]]*(\(|\s*[-+*/|&]?=\s|\+\+|--).*;\s*$")
# Lines about bad input: a mutant there weakens a check that the malformed suites judge.
ERROR_LINE = re.compile(r"throw|InputError|fail\(|error\(|FLATCHECK_CHECK|FLATCHECK_INPUT|refuse"
                        r"|limit|as_object\(|validate_|lint_|check_name\(|over\(")


def enumerate_mutants(src, files):
    mutants = []
    for rel in files:
        with open(os.path.join(src, rel)) as f:
            lines = f.read().split("\n")
        in_block_comment = False
        fault_depth = None  # brace depth inside an `if (fault_on(...)) {` block
        depth = 0
        for i, line in enumerate(lines):
            code_only = line.split("//")[0]
            opened = depth
            depth += code_only.count("{") - code_only.count("}")
            if fault_depth is None and "fault_on(" in line and code_only.rstrip().endswith("{"):
                fault_depth = opened
                continue
            if fault_depth is not None:
                if depth <= fault_depth:
                    fault_depth = None
                continue
            stripped = line.strip()
            if stripped.startswith("/*"):
                in_block_comment = True
            if in_block_comment:
                if "*/" in stripped:
                    in_block_comment = False
                continue
            if not stripped or SKIP_LINE.search(line) or '"' in line and stripped.startswith('"'):
                continue
            code = line.split("//")[0]
            for name, pat, rep in TOKEN_EDITS:
                for m in re.finditer(pat, code):
                    new = code[:m.start()] + rep + code[m.end():] + line[len(code):]
                    mutants.append({"file": rel, "line": i + 1, "edit": name, "old": line,
                                    "new": new, "error_path": bool(ERROR_LINE.search(line))})
            if DROPPABLE.match(code) and not code.rstrip().endswith("{"):
                indent = code[:len(code) - len(code.lstrip())]
                mutants.append({"file": rel, "line": i + 1, "edit": "drop statement",
                                "old": line, "new": indent + ";",
                                "error_path": bool(ERROR_LINE.search(line))})
    return mutants


def run(cmd, cwd, timeout):
    try:
        p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True, errors="replace")
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out


def configure(src, build, tests):
    if os.path.isfile(os.path.join(build, "CMakeCache.txt")):
        return
    env_cxx = ["-DCMAKE_CXX_COMPILER=clang++", "-DCMAKE_C_COMPILER=clang"] \
        if shutil.which("clang++") else []
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.run(["cmake", "-S", src, "-B", build, *gen, "-DCMAKE_BUILD_TYPE=Release",
                    "-DCMAKE_CXX_FLAGS_RELEASE=-O1", "-DFLATCHECK_TESTS=" + ("ON" if tests else "OFF"),
                    "-DFLATCHECK_BENCH=OFF", *env_cxx], check=True, stdout=subprocess.DEVNULL)


def prepare(work, tests):
    src = os.path.join(work, "src")
    build = os.path.join(work, "build")
    if not os.path.isdir(src):
        os.makedirs(src)
        archive = subprocess.run(["git", "-C", ROOT, "archive", "HEAD"], check=True,
                                 stdout=subprocess.PIPE).stdout
        subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    configure(src, build, False)
    test_build = os.path.join(work, "build-tests")
    if tests:
        configure(src, test_build, True)
    return src, build, test_build


def build_flatcheck(build, jobs):
    return run(["cmake", "--build", build, "-j", str(jobs), "--target", "flatcheck"], build, 900)


def replay_corpus(src, build, work, timeout):
    rc, text = run([os.path.join(build, "bin", "flatcheck"), "replay", "--no-isolate",
                    os.path.join(src, "corpus", "regression")], work, timeout)
    if rc is None:
        return "killed", "corpus replay: hang (over %d s)" % timeout
    if rc == 0:
        return "survived", ""
    failed = [ln.split()[1] for ln in text.split("\n") if ln.startswith("FAIL ")]
    return "killed", "corpus replay: " + (os.path.basename(failed[0]) if failed else
                                          "exit %d" % rc)


# harness_test's tests that wait on clocks or on killed workers: minutes of wall time, and what
# they check (timeouts, progress lines, signals) is not where a mutant of core/ shows.
HARNESS_SKIP = ("IsolationTest.*:CliOptionsTest.ProgressIsALine*:CliOptionsTest.Quiet*"
                ":CampaignHardeningTest.*:MinimizeTest.WhatOnlyAnAncestorReaches*")


def unit_tests(test_build, jobs, timeout):
    for target, extra in (("core_test", []), ("harness_test", ["--gtest_filter=-" + HARNESS_SKIP])):
        rc, text = run(["cmake", "--build", test_build, "-j", str(jobs), "--target", target],
                       test_build, 900)
        if rc != 0:
            return "no build", ""
        rc, text = run([os.path.join(test_build, "bin", target), "--gtest_brief=1", *extra],
                       test_build, timeout)
        if rc is None:
            return "killed", "%s: hang (over %d s)" % (target, timeout)
        if rc != 0:
            failed = re.findall(r"^\[  FAILED  \] ([\w/]+\.[\w/]+)", text, re.M)
            return "killed", "%s: %s" % (target, failed[0] if failed else "exit %d" % rc)
    return "survived", ""


def judge(src, build, test_build, work, args):
    verdict, why = campaign(build, work, args.cases, args.jobs, args.timeout)
    if verdict == "survived":
        verdict, why = replay_corpus(src, build, work, args.timeout)
    if verdict == "survived" and args.tests:
        verdict, why = unit_tests(test_build, args.jobs, args.timeout)
    return verdict, why


def campaign(build, work, cases, jobs, timeout):
    out = os.path.join(work, "found")
    shutil.rmtree(out, ignore_errors=True)
    rc, text = run([os.path.join(build, "bin", "flatcheck"), "fuzz", "--cases", str(cases),
                    "--seed", "1", "--jobs", str(jobs), "--no-isolate", "--quiet",
                    "--no-minimize", "--out", out, "--json"], work, timeout)
    if rc is None:
        return "killed", "hang (over %d s)" % timeout
    if rc == 0:
        return "survived", ""
    if rc == 1:
        try:
            figures = json.loads(text.strip().split("\n")[-1])
            sigs = sorted({f["signature"] for f in figures["findings"]})
            return "killed", ", ".join(sigs[:3]) + (" ..." if len(sigs) > 3 else "")
        except (ValueError, KeyError, IndexError):
            return "killed", "findings"
    return "killed", "exit %d: %s" % (rc, text.strip().split("\n")[-1][:120])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--count", type=int, default=100, help="mutants to sample (default 100)")
    ap.add_argument("--seed", type=int, default=1, help="sampling seed (default 1)")
    ap.add_argument("--cases", type=int, default=2000, help="campaign cases per mutant")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=300, help="campaign time limit, seconds")
    ap.add_argument("--work", default="/tmp/flatcheck-mutants", help="scratch folder")
    ap.add_argument("--files", nargs="+", default=DEFAULT_FILES, help="globs under core/")
    ap.add_argument("--only", nargs="+", metavar="FILE:LINE",
                    help="every mutant of these lines instead of a sample")
    ap.add_argument("--tests", action="store_true",
                    help="also run core_test, then harness_test, on mutants the campaign and corpus miss")
    ap.add_argument("--markdown", help="write the report here too")
    ap.add_argument("--json", help="write every mutant's result here")
    args = ap.parse_args()
    if args.count < 1 or args.cases < 1 or args.jobs < 1:
        ap.error("--count, --cases and --jobs must be positive")

    src, build, test_build = prepare(args.work, args.tests)
    files = sorted({os.path.relpath(p, src) for g in args.files
                    for p in glob.glob(os.path.join(src, g))})
    if not files:
        ap.error("no file matches --files")
    rc, text = build_flatcheck(build, args.jobs)
    if rc != 0:
        sys.exit("bench/mutants.py: the unmutated tree does not build:\n" + text[-2000:])
    if args.tests and build_flatcheck(test_build, args.jobs)[0] != 0:
        sys.exit("bench/mutants.py: the unmutated tree's tests do not build")
    verdict, why = judge(src, build, test_build, args.work, args)
    if verdict != "survived":
        sys.exit("bench/mutants.py: the unmutated tree fails: " + why)

    pool = enumerate_mutants(src, files)
    if args.only:
        wanted = set(args.only)
        chosen = [m for m in pool if "%s:%d" % (m["file"], m["line"]) in wanted]
        missing = wanted - {"%s:%d" % (m["file"], m["line"]) for m in chosen}
        if missing:
            ap.error("no mutant on " + ", ".join(sorted(missing)))
    else:
        chosen = random.Random(args.seed).sample(pool, min(args.count, len(pool)))
    chosen.sort(key=lambda m: (m["file"], m["line"], m["edit"]))
    started = time.time()
    for k, m in enumerate(chosen):
        path = os.path.join(src, m["file"])
        with open(path) as f:
            original = f.read()
        lines = original.split("\n")
        assert lines[m["line"] - 1] == m["old"]
        lines[m["line"] - 1] = m["new"]
        try:
            with open(path, "w") as f:
                f.write("\n".join(lines))
            rc, text = build_flatcheck(build, args.jobs)
            if rc != 0:
                m["verdict"], m["why"] = "no build", ""
            else:
                m["verdict"], m["why"] = judge(src, build, test_build, args.work, args)
        finally:
            with open(path, "w") as f:
                f.write(original)
        print("[%d/%d %.0fs] %-8s %s:%d %s  %s" % (k + 1, len(chosen), time.time() - started,
                                                 m["verdict"], m["file"], m["line"], m["edit"],
                                                 m["why"]), flush=True)
    build_flatcheck(build, args.jobs)  # leave the scratch builds unmutated
    if args.tests:
        for target in ("core_test", "harness_test"):
            run(["cmake", "--build", test_build, "-j", str(args.jobs), "--target", target],
                test_build, 900)

    report = render(chosen, len(pool), args)
    print(report)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(report)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(chosen, f, indent=1)
    return 0


def render(chosen, pool_size, args):
    built = [m for m in chosen if m["verdict"] != "no build"]
    killed = [m for m in built if m["verdict"] == "killed"]
    survived = [m for m in built if m["verdict"] == "survived"]
    out = ["# Source mutants of core/ against a default campaign", "",
           "command: `python3 bench/mutants.py %s--cases %d --jobs %d%s`  "
           % ("--only ... " if args.only else "--count %d --seed %d " % (args.count, args.seed),
              args.cases, args.jobs, " --tests" if args.tests else ""),
           "mutants: %d sampled from %d; %d build, %d do not" %
           (len(chosen), pool_size, len(built), len(chosen) - len(built)), "",
           "killed by: the campaign %d, the regression corpus %d, core_test %d, harness_test %d%s" % (
               sum(1 for m in killed
                   if not m["why"].startswith(("corpus", "core_test", "harness_test"))),
               sum(1 for m in killed if m["why"].startswith("corpus")),
               sum(1 for m in killed if m["why"].startswith("core_test")),
               sum(1 for m in killed if m["why"].startswith("harness_test")),
               "" if args.tests else " (not run: no --tests)"), "",
           "| file | built | killed | survived |", "|---|---|---|---|"]
    for f in sorted({m["file"] for m in built}):
        b = [m for m in built if m["file"] == f]
        out.append("| %s | %d | %d | %d |" % (f, len(b), sum(m["verdict"] == "killed" for m in b),
                                            sum(m["verdict"] == "survived" for m in b)))
    out.append("| all | %d | %d | %d |" % (len(built), len(killed), len(survived)))
    out += ["", "Survivors (an edit on a line about bad input is marked 'input check'):", ""]
    for m in survived:
        out.append("- `%s:%d` %s%s: `%s` -> `%s`" % (
            m["file"], m["line"], m["edit"], " (input check)" if m["error_path"] else "",
            m["old"].strip(), m["new"].strip()))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
