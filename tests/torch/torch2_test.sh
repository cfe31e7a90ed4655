#!/usr/bin/env bash
# CTest label `torch2`: flatcheck against torch 2.x in the root scripts/torch-root.sh builds
# (docs/torch.md). Exit 77 (reported SKIPPED by CTest) with the reason where the root is not
# there or cannot be entered. In both modes the bridge's runs are forked from one process that
# has imported it (run_repros.py --serve; checked first on scripts of known status), but those of
# --time 0 and of a bad --branch, which start it as a user does.
#   torch2_test.sh bridge FLATCHECK_BIN SOURCE_DIR SHARD SHARDS [CASES [EMIT_OPTION...]]
#       generated cases (seed 7), emitted with the EMIT_OPTIONs (emit-torch's, such as
#       --update-args: CTest gives shard 1 its forms), and, in shard 0, the regression corpus
#       (emitted without them), through eager, fx, the folder, const_fold and merge_matmul
#       paths, the two split paths, the four functional-trace paths (fx.make_fx, fx.reinplace, fx.cse,
#       fx.cse_inplace), sixteen export paths (export.strict.preserve on every fourth program;
#       all but export.strict.hooked: torch 2.6 has no class 30 and it costs a second a program;
#       its case checks it; but export.strict.swap and export.strict.swap_modules, whose classes
#       (31; 45 to 49) the non-strict ones and the classes' cases show; and but
#       export.strict.dynamic, which reports what the non-strict one does on the programs seen;
#       not export.strict.cond, below) and the two partition paths, not their re-export paths (on
#       2.6 nearly every program is reexport-partitioned-no-module-stack; class 32's case and
#       repro check them), the four TorchScript paths (jit); the four decomposition paths on
#       every eighth program, export.nonstrict.swap_modules,
#       export.nonstrict.dynamic, export.nonstrict.functional_call and fx.rewrite on every
#       fourth (not export.strict.functional_call: its classes show on the non-strict one, and
#       the classes' cases and bridge_units.py check both; the main run leaves fx.rewrite out
#       with --paths' -fx.rewrite), export.nonstrict.cond on every eighth (not
#       export.strict.cond: it reports what the non-strict one does on the programs seen), the
#       five torch.compile paths on every sixteenth (not compile.inductor, judged by a float64
#       witness: bridge_units.py runs it on a model of its own);
#       fails on any mismatch or error (known torch
#       issues are counted, not failed)
#       and when fewer programs ran than asked. Not the pipeline path: some of its failures on
#       torch 2.6 are not yet traced to a cause (docs/torch.md); its classes' cases and
#       bridge_units.py check it here
#   torch2_test.sh checks FLATCHECK_BIN SOURCE_DIR [--no-inductor | --only-inductor]
#                         [--no-option-checks]
#       (--no-inductor: nothing below that compiles with Inductor or AOTInductor runs, each
#       named as not run: CTest's torch2/checks on torch 2.6 and torch-current/checks on the
#       newest torch; --only-inductor: only that runs, bridge_units.py whole beside the repros
#       and cases that compile: CTest's torch-current/inductor, label `extended`;
#       --no-option-checks: the checks of the bridge's options, from --pass on below, do not
#       run, named as not run: CTest's torch2/checks, torch-current/checks runs them)
#       naming_table.py --check against torch.fx; bridge_units.py (the bridge's judging,
#       flattening and tracing on the shapes torch 2.11 and 2.14 showed); every corpus/torch
#       repro still reproduces (exit 1) on this torch, or not, as its FIXED_IN / PRESENT_FROM
#       say (each in a process of its own forked from one that imported torch: run_repros.py,
#       checked first on scripts of known status); every case of corpus/torch/cases
#       (CLASS-N.json) is reported, each on its own, as the known torch issue CLASS on the path
#       its class shows on (LATER: as a later torch reports it; a case with a CLASS-N.draw
#       beside it run with that as --draw, which it
#       needs: its own draw does not fail; one with a CLASS-N.args beside it run with those
#       bridge options and paths, such as --reads alias, its summary naming the vector ISA
#       torch picks where those are Inductor or AOTInductor paths and none elsewhere; one with
#       a CLASS-N.emit beside it emitted with those emit-torch options, such as
#       --update-args), and the split class's
#       case agrees on
#       fx.split_ordered; --pass
#       is read by the fx and partition.splitter paths (the by-name pass fails on the
#       graph-break example where the built-in one passes); EXPORT_NAMES is read (a wrong
#       expected placeholder name is a mismatch at stage names); --interesting reads
#       its path, status and text (the text against the known-issue class too); the eager path
#       judges a bounded op whose input is a placeholder (40 wide cases of seed 41); --time 0
#       checks no program and counts them not run; a bridge started on its own runs under
#       PYTHONHASHSEED=0 (a --pass records the seed and a string's hash in two runs); SIGTERM
#       stops the program under way (a --pass that sleeps in the second), the summary counting
#       it not run; --device cuda runs the export path on the GPU (PATH.cuda), or exits 2
#       without one; --branch cond takes class 34's case through
#       torch.cond on the unflatten and pipeline paths (classes 34 and 36); --reads alias reads
#       the buffer of tests/torch/alias/view-read-after-update.json as itself (fx.const_fold)
set -uo pipefail
mode=$1 bin=$2 src=$3
in_root=("$src/scripts/in-torch-root")
if ! why=$("${in_root[@]}" python3 -c 'import torch, torch.export; print(torch.__version__)' 2>&1)
then
  echo "SKIPPED: no torch 2.x root to run in (bash scripts/torch-root.sh builds it, as root):"
  echo "  ${why##*$'\n'}"
  exit 77
fi
echo "torch $why in ${FLATCHECK_TORCH_ROOT:-$src/build/torch-root}"
work=$(mktemp -d)
# Everything printed is kept, and on failure its FAIL lines are printed again at the end: a log
# cut to its head and tail (as CI's record is) still says which check failed.
exec > >(tee "$work/printed") 2>&1
# The bridge's runs (`bridge ARGS...`, as `python3 flatcheck_torch.py ARGS...` would run) are
# each forked from one process that has imported the bridge and torch (run_repros.py --serve):
# torch's import, about 3 s a run, is paid once. The checks of --time and of a bad --branch
# start the bridge on its own (`"${bridge_cmd[@]}"`), as a user does.
bridge_cmd=("${in_root[@]}" python3 "$src/harness/torch/flatcheck_torch.py")
mkdir "$work/q"
"${in_root[@]}" env PYTHONHASHSEED=0 python3 "$src/tests/torch/run_repros.py" --serve "$work/q" \
  "$src/harness/torch/flatcheck_torch.py" </dev/null &
server=$!
stop() {  # the script's exit status kept (bridge mode runs under set -e)
  local status=$?
  if [ "$status" -ne 0 ] && [ "$status" -ne 77 ]; then
    sleep 1  # tee's last writes
    echo "torch2_test.sh $mode failed (exit $status); its FAIL lines:"
    grep -a '^FAIL' "$work/printed" || echo "  (none: see the output above)"
  fi
  kill $server 2>/dev/null
  wait $server 2>/dev/null || true
  rm -rf "$work"
  exit $status
}
trap stop EXIT
served() {  # served SCRIPT ARGS...: `python3 SCRIPT ARGS...` in a process forked from the server
  local id
  id=$(mktemp "$work/q/XXXXXX")
  printf '%s\0' "$@" >"$id.tmp"
  mv "$id.tmp" "$id.req"
  while [ ! -e "$id.rc" ]; do
    if ! kill -0 $server 2>/dev/null && [ ! -e "$id.rc" ]; then
      echo "FAIL: the bridge's server (run_repros.py --serve) has ended" >&2
      return 2
    fi
    sleep 0.05
  done
  cat "$id.out"
  cat "$id.err" >&2
  return "$(cat "$id.rc")"
}
bridge() { served "$src/harness/torch/flatcheck_torch.py" "$@"; }
# The four decomposition paths, and the other export paths with the partition paths.
decomp=export.strict.decomp,export.nonstrict.decomp,export.strict.decomp_preserve
decomp+=,export.nonstrict.decomp_preserve
others=export.strict.module,export.strict.unflatten,export.strict.preserve,export.nonstrict.module
others+=,export.nonstrict.unflatten,export.nonstrict.preserve,export.nonstrict.reexport
others+=,partition.splitter,partition.capability
others+=,export.nonstrict.hooked,export.nonstrict.swap

if [ "$mode" = bridge ]; then
  shard=$4 shards=$5 cases=${6:-200}
  emit=("${@:7}")
  set -e
  "$bin" generate --seed 7 --count "$cases" -o "$work/cases" >/dev/null
  "$bin" emit-torch "$work/cases" -o "$work/all" "${emit[@]}" >/dev/null
  if [ "$shard" -eq 0 ]; then
    "$bin" emit-torch "$src"/corpus/regression/*.json -o "$work/all" >/dev/null
  fi
  mkdir -p "$work/programs"
  i=0
  for f in "$work"/all/*.py; do
    if [ $((i % shards)) -eq "$shard" ]; then mv "$f" "$work/programs/"; fi
    i=$((i + 1))
  done
  n=$(ls "$work"/programs/*.py | wc -l)
  # Every path on every program (the four TorchScript paths about 0.5 s a program together)
  # but the four decomposition paths, which run on every eighth program (on torch 2.6 about 9 s
  # a program for the four, more than the other fifteen together; every other program until
  # the default test run passed 15 minutes, then every fourth until it passed 15 again), the
  # non-strict graph swap, on every fourth (about 0.2 s a program on torch 2.6), and the paths
  # below.
  fourth=$(ls "$work"/programs/*.py | awk 'NR % 4 == 0')
  decomp_set=$(ls "$work"/programs/*.py | awk 'NR % 8 == 0')
  d=$(echo -n "$decomp_set" | grep -c . || true)
  # The non-strict dynamic and functional-call paths and the rewrite path on every fourth
  # program (on torch 2.6 about 1.4 s, 0.5 s and 0.4 s a program), the non-strict cond path on
  # every eighth (a traced class costs it a few seconds), the torch.compile paths on every
  # sixteenth (about 5 s a program for the four: compile.dynamic compiles at up to four sizes)
  # with the aot_eager, non-strict export, unflatten and decomp gradient paths (a few seconds
  # more).
  quarter=$(ls "$work"/programs/*.py | awk 'NR % 4 == 2')
  q=$(echo -n "$quarter" | grep -c . || true)
  eighth=$(ls "$work"/programs/*.py | awk 'NR % 8 == 6')
  e=$(echo -n "$eighth" | grep -c . || true)
  sixteenth=$(ls "$work"/programs/*.py | awk 'NR % 16 == 10')
  c=$(echo -n "$sixteenth" | grep -c . || true)
  m=$(echo -n "$fourth" | grep -c . || true)
  # The strict preserve path on every fourth program: on torch 2.6 strict export with every
  # call signature preserved is about 4 s a program, as much as the fifteen paths of the main
  # run together (up to 30 s a program of 38 modules; every other program until the default
  # test run passed 15 minutes).
  preserve_set=$(ls "$work"/programs/*.py | awk 'NR % 4 == 1')
  h=$(echo -n "$preserve_set" | grep -c . || true)
  set +e
  bridge "$work"/programs/*.py --paths "eager,fx,-fx.rewrite,$others,-export.strict.preserve,jit" \
    --quiet >"$work/out.jsonl"
  rc=$?
  subset() {  # subset OUT PROGRAMS PATHS: the bridge on a subset, none run where it is empty
    local out=$1 programs=$2 paths=$3
    : >"$out"
    [ -n "$programs" ] || return 0
    # shellcheck disable=SC2086 # one program a word
    bridge $programs --paths "$paths" --quiet >"$out" || rc=1
  }
  subset "$work/preserve.jsonl" "$preserve_set" export.strict.preserve
  subset "$work/decomp.jsonl" "$decomp_set" "$decomp"
  subset "$work/swap.jsonl" "$fourth" export.nonstrict.swap_modules
  subset "$work/dynamic.jsonl" "$quarter" \
    export.nonstrict.dynamic,export.nonstrict.functional_call,fx.rewrite
  subset "$work/cond.jsonl" "$eighth" export.nonstrict.cond
  grads=grad.compile.aot_eager,grad.export.nonstrict,grad.export.unflatten,grad.export.decomp
  subset "$work/compile.jsonl" "$sixteenth" "compile,-compile.inductor,$grads"
  set -e
  cat "$work/out.jsonl" "$work/preserve.jsonl" "$work/decomp.jsonl" "$work/swap.jsonl" \
    "$work/dynamic.jsonl" "$work/cond.jsonl" "$work/compile.jsonl"
  # Each set: its output, its programs, its paths (a set with no program has no output, and
  # its paths count for none; fewer than 16 programs leave the compile set empty).
  python3 - "$work/out.jsonl" "$n" 27 "$work/preserve.jsonl" "$h" 1 "$work/decomp.jsonl" "$d" 4 \
    "$work/swap.jsonl" "$m" 1 "$work/dynamic.jsonl" "$q" 3 "$work/cond.jsonl" "$e" 1 \
    "$work/compile.jsonl" "$c" 9 <<'EOF'
import json, sys
paths = want_paths = 0
for out, want, set_paths in zip(sys.argv[1::3], sys.argv[2::3], sys.argv[3::3]):
    want = int(want)
    lines = [json.loads(line) for line in open(out) if line.startswith("{")]
    if want == 0:
        if lines:
            sys.exit(f"FAIL: {out}: the bridge ran on an empty set of programs")
        continue
    want_paths += int(set_paths)
    summary = lines[-1]
    for path, st in sorted(summary["paths"].items()):
        ran = sum(st.values())
        print(f"{path:30s} " + " ".join(f"{k} {v}" for k, v in sorted(st.items()) if v))
        if ran != want:
            sys.exit(f"FAIL: {path} ran {ran} of {want} programs")
    paths += len(summary["paths"])
if paths != want_paths:
    sys.exit(f"FAIL: {paths} paths ran, expected {want_paths}")
EOF
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: torch disagrees with flatcheck beyond the known torch issues (exit $rc)"
    exit 1
  fi
  # Each emit-torch form asked for is in every program (CONFIG says so): "N with --FLAG".
  forms=""
  for flag in "${emit[@]}"; do
    key=${flag#--}
    key=${key//-/_}
    got=$({ grep -l "\"$key\": True" "$work"/programs/*.py || true; } | wc -l)
    if [ "$got" -ne "$n" ]; then
      echo "FAIL: $got of $n programs were emitted with $flag"
      exit 1
    fi
    forms+="${forms:+, }$got with $flag"
  done
  echo "PASS: $n programs through every path ($h through export.strict.preserve, $d through the"
  echo "  decomposition paths, $m through the graph swap, $q through export.nonstrict.dynamic,"
  echo "  export.nonstrict.functional_call and fx.rewrite, $e through export.nonstrict.cond, $c"
  echo "  through the torch.compile paths and four gradient paths) on torch $why; emitted"
  echo "  ${forms:-as they are}"
  exit 0
fi

[ "$mode" = checks ] || { echo "usage: torch2_test.sh bridge|checks ..."; exit 2; }
fail=0
# --no-inductor (CTest's torch2/checks and torch-current/checks): nothing that compiles with
# Inductor or AOTInductor, which is most of the checks' time, runs here (docs/torch.md):
# bridge_units.py's Inductor and AOTInductor sections, the repros that compile with them, the
# cases whose paths are theirs. Each is named as not run. --only-inductor (CTest's
# torch-current/inductor, label `extended`: the default test run leaves it to CI's second
# command) runs only those, and bridge_units.py whole (its other checks are quick), in a process
# beside the repros and the cases; the rest is named as not run. --no-option-checks (CTest's
# torch2/checks: the bridge reads its options as it does on any torch, and torch-current/checks
# checks them) leaves out the checks of the bridge's options, about 50 s. Any other option is
# refused.
inductor=1 rest=1 options=1  # what compiles with Inductor, all else, the option checks: run
for opt in "${@:4}"; do
  case "$opt" in
    --no-inductor) inductor=0 ;;
    --only-inductor) rest=0 ;;
    --no-option-checks) options=0 ;;
    *) echo "torch2_test.sh checks: unknown option '$opt' (expected --no-inductor," \
         "--only-inductor or --no-option-checks)"
       exit 2 ;;
  esac
done
if [ "$inductor" -eq 0 ] && [ "$rest" -eq 0 ]; then
  echo "torch2_test.sh checks: --no-inductor and --only-inductor leave nothing to run"
  exit 2
fi
compiles_with_inductor() {  # compiles_with_inductor FILE: a repro that compiles with Inductor
  grep -q '"inductor"\|torch\._inductor\|aoti_compile\|backend=.inductor' "$1"
}
# Where the checks' time goes: a line "time: WHAT: N s" after each part (the log of a slow run
# says which part to look at).
mark=$SECONDS
took() { echo "time: $1: $((SECONDS - mark)) s"; mark=$SECONDS; }
if [ "$rest" -eq 1 ]; then
  "${in_root[@]}" python3 "$src/tests/core/naming_table.py" --check || fail=1
  took "naming table"
fi
# bridge_units.py's --reads alias checks run on hand-made cases of a buffer read through a view.
"$bin" emit-torch "$src/tests/torch/alias" -o "$work/alias" >/dev/null
# and its --update-inputs checks on seed-quickstart emitted so
"$bin" emit-torch "$src/corpus/regression/seed-quickstart.json" --update-inputs \
  -o "$work/alias/inputs" >/dev/null
alias="$work/alias/view-read-after-update.py"
units=("$work/alias")
[ "$inductor" -eq 1 ] || units=(--no-inductor "$work/alias")
run_units() {  # bridge_units.py's output in units.out, its time in units.time
  local start=$SECONDS
  "${in_root[@]}" python3 -W ignore "$src/tests/torch/bridge_units.py" "${units[@]}" \
    >"$work/units.out" 2>&1 || touch "$work/units.failed"
  echo $((SECONDS - start)) >"$work/units.time"
}
judge_units() {
  [ ! -e "$work/units.failed" ] || fail=1
  cat "$work/units.out"
  # --no-inductor is read: bridge_units.py's Inductor section ran or said it was not run, as
  # asked.
  local ran skipped
  ran=$(grep -c "^the Inductor path's checks: run$" "$work/units.out")
  skipped=$(grep -c "^skip: the Inductor path's checks (not run here" "$work/units.out")
  if [ "$ran $skipped" != "$inductor $((1 - inductor))" ]; then
    echo "FAIL: bridge_units.py's Inductor checks ran $ran times, were skipped $skipped times" \
      "(inductor=$inductor: --no-inductor ignored?)"
    fail=1
  fi
}
if [ "$rest" -eq 1 ]; then
  run_units
  judge_units
  took "bridge_units.py"
else  # --only-inductor: beside the repros and the cases (judged before the cases are)
  run_units &
  units_pid=$!
fi
# A repro exits 1 while its bug is present; one that names FIXED_IN = (major, minor) exits 0 on
# that torch and later ones, one that names PRESENT_FROM = (major, minor) exits 0 before that
# torch (docs/found-bugs.md records both).
torch_version=$("${in_root[@]}" python3 -c 'import torch; print(*torch.__version__.split(".")[:2])')
at_least() {  # at_least MAJOR MINOR: this torch is that version or later
  local major minor
  read -r major minor <<<"$torch_version"
  [ "$major" -gt "$1" ] || { [ "$major" -eq "$1" ] && [ "$minor" -ge "$2" ]; }
}
# Each repro in a process of its own, forked from one that imported torch (run_repros.py: the
# import paid once, not per repro); first the runner itself on scripts whose statuses are known.
mkdir -p "$work/repros" "$work/runner"
printf 'import sys\nprint("ok")\n' >"$work/runner/plain.py"
printf 'import sys\nsys.exit(1)\n' >"$work/runner/exits1.py"
printf 'raise ValueError("boom")\n' >"$work/runner/raises.py"
printf 'import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\n' >"$work/runner/killed.py"
"${in_root[@]}" python3 "$src/tests/torch/run_repros.py" "$work/runner" "$work"/runner/*.py
got=$(for s in plain exits1 raises killed; do echo -n "$s=$(cat "$work/runner/$s.rc" 2>&1) "; done)
if [ "$got" != "plain=0 exits1=1 raises=1 killed=143 " ] ||
   ! grep -q '^ok$' "$work/runner/plain.out" || ! grep -q 'ValueError: boom' "$work/runner/raises.out"
then
  echo "FAIL: run_repros.py reports $got(expected plain=0 exits1=1 raises=1 killed=143) or lost"
  echo "  a script's output"
  fail=1
fi
# The server the bridge's runs are forked from, on the same scripts: their statuses, and stdout
# and stderr apart.
got=$(for s in plain exits1 raises killed; do
  served "$work/runner/$s.py" >"$work/runner/$s.so" 2>"$work/runner/$s.se"
  echo -n "$s=$? "
done)
if [ "$got" != "plain=0 exits1=1 raises=1 killed=143 " ] ||
   [ "$(cat "$work/runner/plain.so")" != ok ] || [ -s "$work/runner/plain.se" ] ||
   ! grep -q 'ValueError: boom' "$work/runner/raises.se" || [ -s "$work/runner/raises.so" ]; then
  echo "FAIL: run_repros.py --serve reports $got(expected plain=0 exits1=1 raises=1 killed=143)"
  echo "  or mixed or lost a script's stdout and stderr"
  fail=1
fi
repros=() unrun=()
for repro in "$src"/corpus/torch/*.py; do
  if compiles_with_inductor "$repro"; then run=$inductor; else run=$rest; fi
  if [ "$run" -eq 1 ]; then repros+=("$repro"); else unrun+=("$(basename "$repro" .py)"); fi
done
if [ "$inductor" -eq 0 ]; then
  echo "not run here (--no-inductor): ${#unrun[@]} repros that compile with Inductor:" \
    "${unrun[*]}"
  [ "${#unrun[@]}" -gt 0 ] || { echo "FAIL: --no-inductor found no Inductor repro"; fail=1; }
elif [ "$rest" -eq 0 ]; then
  echo "not run here (--only-inductor): ${#unrun[@]} repros that do not compile with Inductor"
  [ "${#unrun[@]}" -gt 0 ] && [ "${#repros[@]}" -gt 0 ] ||
    { echo "FAIL: --only-inductor left ${#repros[@]} repros to run, ${#unrun[@]} unrun"; fail=1; }
fi
"${in_root[@]}" python3 "$src/tests/torch/run_repros.py" "$work/repros" "${repros[@]}"
for repro in "${repros[@]}"; do
  name=$(basename "$repro" .py)
  rc=$(cat "$work/repros/$name.rc" 2>/dev/null || echo "none (the runner did not run it)")
  # its last line, prefixed (a repro's own "FAIL: ..." is its bug shown, not a failed check)
  tail -n 1 "$work/repros/$name.out" 2>/dev/null | sed "s/^/$name: /"
  want=1
  fixed=$(sed -n 's/^FIXED_IN = (\([0-9]*\), \([0-9]*\)).*/\1 \2/p' "$repro")
  from=$(sed -n 's/^PRESENT_FROM = (\([0-9]*\), \([0-9]*\)).*/\1 \2/p' "$repro")
  if [ -n "$fixed" ] && at_least $fixed; then want=0; fi
  if [ -n "$from" ] && ! at_least $from; then want=0; fi
  if [ "$rc" = 77 ]; then  # a repro that cannot show its bug on this machine says why, exit 77
    echo "not run: $name cannot show its bug on this machine (its last line above says why)"
    continue
  fi
  if [ "$rc" != "$want" ]; then
    echo "FAIL: $repro exits $rc on torch $why, expected $want (1: the bug is there; 0: fixed from"
    echo "  FIXED_IN on, or not yet there before PRESENT_FROM): if torch fixed it, say so in"
    echo "  docs/found-bugs.md and set FIXED_IN"
    fail=1
  fi
done
took "the repros"
# scripts/in-torch-root passes ATEN_CPU_CAPABILITY in (a run as on another CPU needs it;
# "default": torch's plain kernels, whatever the CPU, named "NO AVX" by torch 2.6 and "DEFAULT"
# by 2.14.1), with Inductor's caches in a folder of that ISA's own (found-bugs 100), and
# refuses a value that is no ISA name.
got=$(ATEN_CPU_CAPABILITY=default "${in_root[@]}" python3 -c 'import os, torch
print(torch.backends.cpu.get_cpu_capability(), os.environ.get("TORCHINDUCTOR_CACHE_DIR"))' \
  2>&1 | tail -n 1)
ATEN_CPU_CAPABILITY='avx2 x' "${in_root[@]}" true 2>/dev/null
bad=$?
if [ "$bad" -ne 2 ] || { [ "$got" != "NO AVX /tmp/torchinductor_root-default" ] &&
                         [ "$got" != "DEFAULT /tmp/torchinductor_root-default" ]; }; then
  echo "FAIL: ATEN_CPU_CAPABILITY=default gave '$got' in the root (expected 'NO AVX' or" \
    "'DEFAULT', then /tmp/torchinductor_root-default); a bad value exit $bad (expected 2)"
  fail=1
fi
"$bin" emit-torch "$src/corpus/torch/cases" -o "$work/cases" >/dev/null
# emit-torch names a case's program after its file with each '+' (classes joined) as '_':
# the program of a case's side file (CLASS-N.SUFFIX), and the side file of a program (in $side,
# with no process started: a basename and a tr per corpus file cost 40 s of a run beside
# another test, 2026-12-07).
emitted() { local b=${1##*/}; b=${b%"$2"}; echo "$work/cases/${b//+/_}.py"; }
side_file() {  # side_file PROGRAM SUFFIX: its side file in $side, "" where there is none
  local s b want=${1##*/}
  want=${want%.py}
  side=""
  for s in "$src"/corpus/torch/cases/*"$2"; do
    b=${s##*/}
    b=${b%"$2"}
    [ "${b//+/_}" = "$want" ] && { side=$s; return; }
  done
}
# A case whose class shows only in a program emitted with options of its own (CLASS-N.emit:
# emit-torch's options on one line, such as --update-args) is emitted again with them.
for e in "$src"/corpus/torch/cases/*.emit; do
  [ -e "$e" ] || continue
  read -r -a opts <"$e"
  "$bin" emit-torch "${e%.emit}.json" "${opts[@]}" -o "$work/cases" >/dev/null || fail=1
  grep -q '"update_args": True' "$(emitted "$e" .emit)" ||
    [[ " ${opts[*]} " != *" --update-args "* ]] || { echo "FAIL: $e: not emitted so"; fail=1; }
done
# A case whose class shows only on a draw of its own (CLASS-N.draw: the --draw JSON) runs on
# its own with it.
mkdir -p "$work/drawn"
for d in "$src"/corpus/torch/cases/*.draw; do
  [ -e "$d" ] || continue
  mv "$(emitted "$d" .draw)" "$work/drawn/" || fail=1
done
# A case whose class shows only with bridge options of its own (CLASS-N.args: its paths and
# options on one line, such as --reads alias, which the classes of state read as the buffer
# itself need) runs on its own with them.
mkdir -p "$work/argsd"
for a in "$src"/corpus/torch/cases/*.args; do
  [ -e "$a" ] || continue
  mv "$(emitted "$a" .args)" "$work/argsd/" || fail=1
done
: >"$work/cases.jsonl"
: >"$work/unrun-cases"
if [ "$rest" -eq 1 ]; then
  # Each class's cases through the paths its class shows on (all of them on every case would
  # double the run): the decomposition classes' through the decomposition paths, split_module's
  # through the split paths, to_folder's, const_fold's, the rewriter's (52, 53), the functional
  # trace's passes' (75 to 77), TorchScript's (78), pipelining's,
  # the hooked export's, the swap's (entry 31), the graph swap's (45 to 49), the partitioned
  # module's re-export's (32, 44), the dynamic export's (33) and the cond export's (34, 35)
  # through theirs, strict export's cond operands' (39) through the
  # strict preserve path with --branch cond, the no_grad blocks' (40, 41, 42, and 36's no_grad
  # form) through the unflatten, strict preserve, non-strict decomp_preserve and pipeline paths
  # with --branch nograd; the other classes' cases through the export or partition paths their
  # class shows on (by_class below: on torch 2.6 and 2.14.1, 2026-12-02), and a case of any other
  # class through every other export path and the partition paths.
  other_cases=$(ls "$work"/cases/*.py |
    grep -v '/decomp-\|/split-\|/fx-to-folder-\|/const-fold-\|/pipeline-\|/export-bound-\|/export-strict-bound-\|/unflatten-preserve-dead-input-\|/reexport-partitioned-\|/unflatten-later-call-first-\|/unflatten-drops-shape-guards-\|/unflatten-cond-\|/cond-\|/export-strict-cond-\|/export-load-dead-grad-\|/export-strict-grad-\|grad-region-\|/swap-modules-\|/functional-call-\|/rewrite-\|/reinplace-\|/cse-\|/jit-')
  preserving=export.strict.preserve,export.nonstrict.preserve
  unflattening=export.strict.unflatten,export.nonstrict.unflatten,export.nonstrict.reexport
  unflattening+=,export.nonstrict.hooked
  by_class=(  # "NAME-PREFIX PATHS": the cases whose file name starts so, through those paths
    "capability- partition.splitter,partition.capability"
    "preserve- $preserving"
    "export-strict-preserve- $preserving"
    "reexport-variant- export.nonstrict.reexport"
    "unflatten-strict-keys- export.strict.unflatten,export.strict.preserve"
    "unflatten-strict-source-path- export.strict.unflatten"
    "unflatten-preserve-entry-without-module $preserving,export.nonstrict.swap"
    "unflatten-dedup- $unflattening"
    "unflatten-reorder- $unflattening"
  )
  for entry in "${by_class[@]}"; do
    prefix=${entry%% *} paths=${entry#* }
    chosen=$(echo "$other_cases" | grep "/$prefix" || true)
    other_cases=$(echo "$other_cases" | grep -v "/$prefix" || true)
    if [ -z "$chosen" ]; then
      echo "FAIL: no corpus/torch case's name starts with $prefix (by_class is out of date)"
      fail=1
      continue
    fi
    bridge $chosen --paths "$paths" >>"$work/cases.jsonl"
  done
  [ -z "$other_cases" ] || bridge $other_cases --paths "$others" >>"$work/cases.jsonl"
  bridge $(ls "$work"/cases/decomp-*.py | grep -v grad-region-) --paths "$decomp" \
    >>"$work/cases.jsonl"
  bridge "$work"/cases/split-*.py --paths fx.split,fx.split_ordered >>"$work/cases.jsonl"
  bridge "$work"/cases/fx-to-folder-*.py --paths fx.folder >>"$work/cases.jsonl"
  bridge "$work"/cases/const-fold-*.py --paths fx.const_fold >>"$work/cases.jsonl"
  bridge "$work"/cases/rewrite-*.py --paths fx.rewrite >>"$work/cases.jsonl"  # (52, 53)
  bridge "$work"/cases/reinplace-*.py --paths fx.make_fx,fx.reinplace \
    >>"$work/cases.jsonl"  # (75, 76)
  bridge "$work"/cases/cse-*.py --paths fx.make_fx,fx.cse,fx.cse_inplace \
    >>"$work/cases.jsonl"  # (77; 81's case, which reads its buffer as itself, is in argsd)
  bridge "$work"/cases/jit-*.py --paths jit >>"$work/cases.jsonl"  # (78)
  bridge $(ls "$work"/cases/pipeline-*.py | grep -v grad-region-) --paths pipeline \
    >>"$work/cases.jsonl"
  for f in "$work"/cases/export-bound-*.py; do
    [ -e "$f" ] && bridge "$f" --paths export.nonstrict.hooked >>"$work/cases.jsonl"
  done
  for f in "$work"/cases/export-strict-bound-*.py; do
    [ -e "$f" ] && bridge "$f" --paths export.strict.hooked >>"$work/cases.jsonl"
  done
  for f in "$work"/cases/unflatten-preserve-dead-input-*.py; do
    [ -e "$f" ] && bridge "$f" --paths export.strict.swap,export.nonstrict.swap \
      >>"$work/cases.jsonl"
  done
  # (50, pytorch#164759) the functional-call classes' cases: one run through both paths
  calls=$(ls "$work"/cases/functional-call-*.py 2>/dev/null)
  [ -n "$calls" ] && bridge $calls \
    --paths export.strict.functional_call,export.nonstrict.functional_call >>"$work/cases.jsonl"
  # (45 to 49) the graph-swap classes' cases: one bridge run through both graph-swap paths
  swaps=$(ls "$work"/cases/swap-modules-*.py 2>/dev/null)
  [ -n "$swaps" ] && bridge $swaps \
    --paths export.strict.swap_modules,export.nonstrict.swap_modules >>"$work/cases.jsonl"
  for f in "$work"/cases/unflatten-drops-shape-guards-*.py; do
    [ -e "$f" ] && bridge "$f" --paths export.nonstrict.dynamic >>"$work/cases.jsonl"
  done
  for f in "$work"/cases/unflatten-cond-*.py "$work"/cases/cond-*.py; do
    [ -e "$f" ] && bridge "$f" --paths export.nonstrict.cond >>"$work/cases.jsonl"
  done
  for f in "$work"/cases/export-strict-cond-*.py; do  # (39): only with the branch op by torch.cond
    [ -e "$f" ] && bridge "$f" --paths export.strict.preserve --branch cond \
      >>"$work/cases.jsonl"
  done
  # (40, 41, 42, 36's no_grad form): only with --branch nograd; one bridge run for their cases
  grad=$(ls "$work"/cases/*grad-region-*.py 2>/dev/null | grep -v /reexport-partitioned-)
  [ -n "$grad" ] && bridge $grad --branch nograd \
    --paths export.nonstrict.unflatten,export.strict.unflatten,export.strict.preserve,export.nonstrict.decomp_preserve,pipeline \
    >>"$work/cases.jsonl"
  # the re-export's classes (32, 44; 32 joined with 43 with --branch nograd): one bridge run each
  reexport=$(ls "$work"/cases/reexport-partitioned-*.py "$work"/cases/unflatten-later-call-first-*.py \
    2>/dev/null)
  plain=$(echo "$reexport" | grep -v grad-region-)
  nograd=$(echo "$reexport" | grep grad-region-)
  [ -n "$plain" ] && bridge $plain --paths partition.reexport.capability \
    >>"$work/cases.jsonl"
  [ -n "$nograd" ] && bridge $nograd --branch nograd --paths partition.reexport.capability \
    >>"$work/cases.jsonl"
  for f in "$work"/drawn/*.py; do
    [ -e "$f" ] || continue
    case $(basename "$f") in
      pipeline-*) path=pipeline ;;
      export-strict-*) path=export.strict.hooked ;;
      *) path=export.nonstrict.hooked ;;
    esac
    side_file "$f" .draw
    bridge "$f" --paths "$path" --draw "$(cat "$side")" >>"$work/cases.jsonl"
  done
  took "the corpus cases through their classes' paths"
else  # --only-inductor: none of these is on an Inductor path
  for f in "$work"/cases/*.py "$work"/drawn/*.py; do
    [ -e "$f" ] && basename "$f" .py >>"$work/unrun-cases"
  done
fi
# The summary names the vector ISA Inductor builds its kernels for (as torch picks it; None:
# scalar kernels) where an Inductor or AOTInductor path ran, and has no such field elsewhere
# (torch's pick, 4 to 8 s, asked only where those paths run).
isa=absent
[ "$inductor" -eq 0 ] || isa=$("${in_root[@]}" python3 -c \
  'from torch._inductor.cpu_vec_isa import pick_vec_isa as p
print(str(p()) if p() else None)' 2>&1 | tail -n 1)
isa_runs=0
for f in "$work"/argsd/*.py; do
  [ -e "$f" ] || continue
  side_file "$f" .args
  read -r -a extra <"$side"
  want=absent
  if [[ " ${extra[*]} " =~ \ --paths\ ([^\ ]*[,.])?(aoti|inductor|[a-z_]*_inductor) ]]; then
    if [ "$inductor" -eq 0 ]; then
      basename "$f" .py >>"$work/unrun-cases"
      continue
    fi
    want=$isa isa_runs=$((isa_runs + 1))
  elif [ "$rest" -eq 0 ]; then
    basename "$f" .py >>"$work/unrun-cases"
    continue
  fi
  bridge "$f" "${extra[@]}" >"$work/argsd.jsonl"
  cat "$work/argsd.jsonl" >>"$work/cases.jsonl"
  # the summary's field as Python prints it (null: None), "absent" where it has none
  got=absent
  [[ $(tail -n 1 "$work/argsd.jsonl") =~ \"inductor_vector_isa\":\ (null|\"([^\"]*)\") ]] &&
    got=${BASH_REMATCH[2]:-None}
  if [ "$got" != "$want" ]; then
    echo "FAIL: $(basename "$f") (${extra[*]}): the summary's inductor_vector_isa is $got," \
      "expected $want"
    fail=1
  fi
done
if { [ "$inductor" -eq 1 ] && [ "$isa_runs" -lt 2 ]; } ||
   { [ "$inductor" -eq 0 ] && { [ "$isa_runs" -ne 0 ] || [ ! -s "$work/unrun-cases" ]; }; }; then
  echo "FAIL: $isa_runs runs of an Inductor path among the cases," \
    "$(grep -c . "$work/unrun-cases") not run (inductor=$inductor)"
  fail=1
fi
took "the corpus cases with bridge options of their own (.args)"
if [ "$inductor" -eq 0 ] && [ -s "$work/unrun-cases" ]; then
  echo "not run here (--no-inductor): $(grep -c . "$work/unrun-cases") cases on Inductor or" \
    "AOTInductor paths:" $(cat "$work/unrun-cases")
elif [ "$rest" -eq 0 ]; then
  echo "not run here (--only-inductor): $(grep -c . "$work/unrun-cases") cases on no Inductor" \
    "or AOTInductor path"
  # --only-inductor is read: no case ran on any other path (cases.jsonl holds the .args runs).
  others_run=$(grep -o '"path": "[^"]*"' "$work/cases.jsonl" | grep -v 'aoti\|inductor' | sort -u)
  if [ -n "$others_run" ] || [ ! -s "$work/unrun-cases" ]; then
    echo "FAIL: --only-inductor ran cases on other paths ($others_run) or left none unrun"
    fail=1
  fi
  wait "$units_pid"
  judge_units
  echo "time: bridge_units.py (beside the repros and the cases): $(cat "$work/units.time") s"
fi
python3 - "$work/cases.jsonl" $torch_version "$src/corpus/torch/cases" "$work/unrun-cases" \
  <<'EOF' || fail=1
import json, os, re, sys
# Classes (or single cases, by file name) a later torch reports otherwise: [(from torch, the
# labels expected from then on; None: fixed, so any label but the class's own), ...] in version
# order; a case's own entry stands before its class's. docs/found-bugs.md says what
# changed (2.11: on the GPU machine; 2.14: Debian sid's, scripts/torch-root.sh).
LATER = {"preserve-tied-buffer-update": [((2, 11), None)],
         # (114) 2.6's AOTInductor also inlines the counters once they are buffers (the removal
         # needs INLINED's too); 2.14.1 shows 114 alone (2.7 to 2.13 not run)
         "aoti-constant-update-internal-assert":
             [((0, 0), {"aoti-constant-update-internal-assert_aoti-small-mutated-buffer-inlined"}),
              ((2, 14), {"aoti-constant-update-internal-assert"})],
         # (112 with 17 and 107) 2.6's unflatten of the re-export recurses (17's keys make a
         # module its own child); 2.14.1's re-export unflattens, and 112 and 107 remain (2.7 to
         # 2.13 not run)
         # (91, 112 and 32's other form) 2.6's export of the partitioned module records no
         # module stack for a node; 2.14.1's re-export of the splitter's module agrees once the
         # child names and 112 are removed (2.7 to 2.13 not run)
         "export-child-named-as-module-attribute_export-nonstrict-runs-constant-update_"
         "reexport-partitioned-no-module-stack":
             [((2, 14), {"export-child-named-as-module-attribute_"
                         "export-nonstrict-runs-constant-update"})],
         "export-nonstrict-runs-constant-update_reexport-variant-call-keys-collide_"
         "unflatten-aliased-constants-untied":
             [((2, 14), {"export-nonstrict-runs-constant-update_"
                         "unflatten-aliased-constants-untied"})],
         # (32 with 107) 2.6's export records no module stack for some nodes of the partitioned
         # module (its own class, 32's other form); 2.14.1 shows both (2.7 to 2.13 not run)
         "reexport-partitioned-stale-module-stack_unflatten-aliased-constants-untied":
             [((0, 0), {"reexport-partitioned-no-module-stack"}),
              ((2, 14), {"reexport-partitioned-stale-module-stack_"
                         "unflatten-aliased-constants-untied"})],
         # (108) 2.6's symbolic_trace makes a buffer persistent, and to_folder loads it; 2.14.1's
         # keeps it non-persistent (pytorch#191708), which to_folder drops (2.7 to 2.13 not run)
         "fx-to-folder-drops-non-persistent-buffer":
             [((0, 0), None), ((2, 14), {"fx-to-folder-drops-non-persistent-buffer"})],
         # 2.6's lowering specializes the case's rows (pytorch#150364, open); 2.14.1's does
         # not, and the case agrees (2.7 to 2.13 not run)
         "aoti-lowering-guard-unchecked": [((2, 14), None)],
         # 2.6's dynamo reuses the graph compiled before the buffer required grad; 2.14.1
         # recompiles, and the case agrees (2.7 to 2.13 not run)
         "compile-buffer-grad-unguarded": [((2, 14), None)],
         "capability-partition-after-output": [((2, 11), {"capability-partition-without-outputs"}),
                                               ((2, 14), None)],
         # the cases agree from 2.11 on (2.11 still raises class 4 on other shapes)
         "preserve-multicall-buffer-update": [((2, 11), None)],
         "unflatten-reorder-keyerror": [((2, 11), None)],
         "unflatten-dedup-ignores-call-targets_unflatten-reorder-keyerror":
             [((2, 11), {"unflatten-dedup-ignores-call-targets"})],
         # to_folder writes self.0 = ... on 2.6; 2.14.1 writes setattr (2.11 not run)
         "fx-to-folder-child-name-not-identifier": [((2, 14), None)],
         # not on torch 2.6 (any label but its own), there from 2.11 on
         "export-strict-preserve-numeric-name-keyerror":
             [((0, 0), None), ((2, 11), {"export-strict-preserve-numeric-name-keyerror"})],
         # torch 2.6's _sink_params fails first on these three cases (its IndexError, fixed by
         # 2.14.1); each class is reported from 2.14 on (2.7 to 2.13 not run)
         "pipeline-shared-state-name-missing":  # (case 2 shows the class on 2.6 too)
             [((0, 0), {"pipeline-sink-params-no-inputs-indexerror",
                        "pipeline-shared-state-name-missing"}),
              ((2, 14), {"pipeline-shared-state-name-missing"})],
         "pipeline-state-placeholder-renamed":
             [((0, 0), {"pipeline-sink-params-no-inputs-indexerror"}),
              ((2, 14), {"pipeline-state-placeholder-renamed"})],
         "pipeline-bound-forward-module-stack":
             [((0, 0), {"pipeline-sink-params-no-inputs-indexerror"}),
              ((2, 14), {"pipeline-bound-forward-module-stack"})],
         # (29) every torch shows the class on its cases, as no entry here says: torch 2.6
         # records case 1's wrong module stack too, and its unflatten, blind to the module
         # types there, agrees on the numbers but leaves layer0.layer0 without a graph (the
         # structure form, as 2.14.1 on case 2; 2.6's unflatten raises on case 2)
         # (29, the compile form) case 3 compiles a module (its .draw): torch 2.6's non-strict
         # export refuses a compiled module, and the path is skipped there
         "export-bound-forward-module-stack-3":
             [((0, 0), None), ((2, 14), {"export-bound-forward-module-stack"})],
         "export-strict-bound-forward-source-path":  # torch 2.6 records the right path
             [((0, 0), None), ((2, 14), {"export-strict-bound-forward-source-path"})],
         # torch 2.6 records no module stack for some of the re-exported nodes and unflatten
         # refuses this case (its repro shows the wrong result on 2.6 too)
         # torch 2.6 puts these cases' shape conditions in the graph as runtime assertions,
         # which the unflattened module runs too: it refuses what ep.module() refuses
         "unflatten-drops-shape-guards":
             [((0, 0), None), ((2, 14), {"unflatten-drops-shape-guards"})],
         # torch 2.6 keeps the dead value's old name and raises entry 19's error
         "decomp-dead-value-renamed-to-placeholder":
             [((0, 0), {"decomp-preserve-dead-value"}),
              ((2, 14), {"decomp-dead-value-renamed-to-placeholder"})],
         # (65) torch 2.6 unflattens a read of a preserved child's updated buffer and agrees
         "unflatten-update-read-outside-preserved-module":
             [((0, 0), None), ((2, 14), {"unflatten-update-read-outside-preserved-module"})],
         # (96) torch 2.6's Inductor gives eager's output (2.7 to 2.13 not run)
         "compile-output-aliases-updated-input":
             [((0, 0), None), ((2, 14), {"compile-output-aliases-updated-input"})],
         # (97) torch 2.6's Inductor gives eager's gradients (2.7 to 2.13 not run)
         "compile-cond-backward-donated-input":
             [((0, 0), None), ((2, 14), {"compile-cond-backward-donated-input"})],
         # (101) torch 2.6 functionalizes torch.cond at a second size (2.7 to 2.13 not run)
         "functionalize-cond-recompiled-dynamic":
             [((0, 0), None), ((2, 14), {"functionalize-cond-recompiled-dynamic"})],
         # (37) the functional traces of a cond whose operands share a storage: torch 2.6
         # traces them (2.7 to 2.13 not run for this form)
         "decomp-cond-operands-share-storage":
             [((0, 0), None), ((2, 14), {"decomp-cond-operands-share-storage"})],
         # (103) torch 2.6's strict export records the child's FQN, and its structure is right
         "unflatten-strict-source-path-module":
             [((0, 0), None), ((2, 14), {"unflatten-strict-source-path-module"})],
         # (105) torch 2.6's strict export lifts the state under its own FQNs
         "export-strict-root-name-merges-state":
             [((0, 0), None), ((2, 14), {"export-strict-root-name-merges-state"})],
         # torch 2.6's torch.cond takes a size-1 dimension's stride as it comes
         "cond-size-one-stride-rejected":
             [((0, 0), None), ((2, 14), {"cond-size-one-stride-rejected"})],
         # (79) torch 2.6's cond merges no strides: func.vmap agrees there (func.vmap.last shows
         # 35 under vmap's metadata check); 2.7 to 2.13 not run
         "cond-vmap-expanded-branch-output":
             [((0, 0), None), ((2, 14), {"cond-vmap-expanded-branch-output"})],
         "reexport-partitioned-stale-module-stack":
             [((0, 0), {"reexport-partitioned-no-module-stack"}),
              ((2, 14), {"reexport-partitioned-stale-module-stack"})],
         # (32) the case of seed 166: 2.6's partitioner runs a call's nodes in two pieces, and
         # the removal that keeps the stacks shows the class; 2.14.1's keeps them together
         "reexport-partitioned-stale-module-stack-2":
             [((0, 0), {"reexport-partitioned-stale-module-stack"}), ((2, 14), None)],
         # (44) torch 2.6 records no module stack for some of the re-exported nodes first; the
         # repro, which needs no re-export, shows the class there too
         "unflatten-later-call-first-dedup":
             [((0, 0), {"reexport-partitioned-no-module-stack"}),
              ((2, 14), {"unflatten-later-call-first-dedup"})],
         # torch 2.6's rewriter also asserts on a match nothing reads (pytorch#143841, fixed
         # upstream; 2.7 to 2.13 not run), which these cases have
         "rewrite-input-after-first-user":
             [((0, 0), {"rewrite-input-after-first-user_rewrite-match-without-user"}),
              ((2, 14), {"rewrite-input-after-first-user"})],
         "rewrite-moves-read-past-update":
             [((0, 0), {"rewrite-match-without-user_rewrite-moves-read-past-update"}),
              ((2, 14), {"rewrite-moves-read-past-update"})],
         # (43) 2.14.1 finds the wrong use lists alone; 2.6 refuses the mended re-export too
         "reexport-partitioned-no-module-stack_export-grad-region-dead-user-unlinked":
             [((2, 14), {"export-grad-region-dead-user-unlinked"})],
         "reexport-partitioned-stale-module-stack_export-grad-region-dead-user-unlinked":
             [((0, 0), {"reexport-partitioned-no-module-stack"}),
              ((2, 14), {"reexport-partitioned-stale-module-stack_"
                         "export-grad-region-dead-user-unlinked"})]}
version = tuple(int(x) for x in sys.argv[2:4])
seen = {}  # per case (not per class: each case must show its class on its own)
for line in open(sys.argv[1]):
    if not line.startswith("{"):  # torch may print to stdout (torch 2.11 did)
        continue
    r = json.loads(line)
    if "program" in r:
        case = os.path.splitext(os.path.basename(r["program"]))[0]
        got = r.get("known_torch_issue", "").split(":")[0].replace("+", "_")  # emit-torch: + to _
        seen.setdefault(case, set()).add(got)
def class_of(case):
    return re.sub(r"-\d+$", "", case)
def holds(case, got):
    c = class_of(case)
    since, labels = None, None  # the latest change at or before this torch
    for at, then in LATER.get(case, LATER.get(c, [])):  # a case's own entry first
        if version >= at:
            since, labels = at, then
    if since is None:
        return c in got
    return c not in got if labels is None else bool(labels & got)
bad = [c for c, g in sorted(seen.items()) if not holds(c, g)]
for c, g in sorted(seen.items()):  # (FAIL: the line the end of the log repeats)
    verdict = "NOT as expected, got " + str(sorted(g)) if c in bad else "as expected on this torch"
    print(f"{'FAIL: ' if c in bad else ''}corpus/torch/cases {c}: {verdict}")
want = {os.path.splitext(f)[0].replace("+", "_") for f in os.listdir(sys.argv[4])
        if f.endswith(".json")}
want -= {line.strip() for line in open(sys.argv[5])}  # not run here: --no-inductor
if want - set(seen):
    print(f"FAIL: corpus/torch/cases with no result: {sorted(want - set(seen))}")
sys.exit(1 if bad or not seen or want - set(seen) else 0)
EOF
if [ "$rest" -eq 0 ]; then
  took "judging the corpus cases"
  [ "$fail" -eq 0 ] && echo "PASS: bridge_units.py, the repros and corpus cases that compile" \
    "with Inductor or AOTInductor"
  exit "$fail"
fi
# The split paths read their order: on the split class's case fx.split reports the class and
# fx.split_ordered (the same split, keep_original_order=True) agrees.
python3 - "$work/cases.jsonl" <<'EOF' || fail=1
import json, sys
got = {}
for line in open(sys.argv[1]):
    if line.startswith("{") and "split-module-reorders-mutation-1.py" in line:
        r = json.loads(line)
        got[r["path"]] = r.get("known_torch_issue", r["status"]).split(":")[0]
ok = got.get("fx.split") == "split-module-reorders-mutation" and \
    got.get("fx.split_ordered") == "agree"
print(f"split paths on split-module-reorders-mutation-1: {got}" +
      ("" if ok else " (FAIL: expected the class on fx.split, agree on fx.split_ordered)"))
sys.exit(0 if ok else 1)
EOF
took "judging the corpus cases"
if [ "$options" -eq 0 ]; then
  echo "not run here (--no-option-checks): the checks of the bridge's options (--pass," \
    "EXPORT_NAMES, --interesting, --time, --path-time, --progress, the hash seed, SIGTERM," \
    "--device, --draw, --branch, --reads)"
  [ "$fail" -eq 0 ] && echo "PASS: naming table, corpus/torch repros and cases"
  exit "$fail"
fi
# --interesting (the shrinker's test) reads its path, status and text, the text matched against
# the known-issue class too: a class-6 case is interesting as its own class only. Class 6 is on
# torch 2.6, 2.11 and 2.14 (the tied-buffer case served here until 2.11 fixed it, the multi-call
# buffer case until 2.14 gave eager's outputs).
tied="$work/cases/unflatten-preserve-entry-without-module-1.py"
for want in "0 export.nonstrict.preserve:known_torch_issue:unflatten-preserve-entry-without-module" \
            "1 export.nonstrict.preserve:known_torch_issue:preserve-tied-buffer-update" \
            "1 export.nonstrict.preserve:agree" "1 export.nonstrict.module:known_torch_issue"; do
  bridge "$tied" --quiet --interesting "${want#* }" >/dev/null 2>&1
  rc=$?
  if [ "$rc" -ne "${want%% *}" ]; then
    echo "FAIL: --interesting ${want#* } exits $rc on $tied, expected ${want%% *}"
    fail=1
  fi
done
"$bin" example graph-break -o "$work/gb.json" >/dev/null
"$bin" emit-torch "$work/gb.json" -o "$work/gb" >/dev/null
for path in fx partition.splitter; do
  bridge "$work/gb/gb.py" --paths "$path" --quiet >/dev/null || {
    echo "FAIL: the built-in flatten pass disagrees on the graph-break example ($path)"; fail=1; }
  bridge "$work/gb/gb.py" --paths "$path" --quiet \
    --pass "$src/harness/torch/passes/by_name.py:flatten" >/dev/null 2>&1
  if [ $? -ne 1 ]; then
    echo "FAIL: --pass by_name.py:flatten did not reproduce the graph-break bug on $path"
    echo "  (the pass is ignored?)"
    fail=1
  fi
done
# A bound that reads an op's inputs (sum, matmul) finds an input that is a placeholder: the eager
# path judges such a node and goes on (case 37 of seed 41 at --max-nodes 40 sums its input x and
# differs within the bound; the bridge crashed there once).
"$bin" generate --seed 41 --count 40 --max-nodes 40 -o "$work/wide" >/dev/null
"$bin" emit-torch "$work/wide" -o "$work/wide-py" >/dev/null
if ! bridge "$work"/wide-py/*.py --paths eager --quiet >"$work/wide.jsonl" 2>&1 ||
   ! tail -n 1 "$work/wide.jsonl" | grep -q '"programs": 40'; then
  tail -n 5 "$work/wide.jsonl"
  echo "FAIL: the eager path failed on the wide cases of seed 41"
  fail=1
fi
# EXPORT_NAMES is read: a program whose expected placeholder name is made wrong is a mismatch
# at stage `names` of export.nonstrict.module.
"$bin" generate --seed 12 --count 20 -o "$work/named" >/dev/null
"$bin" emit-torch "$work/named" -o "$work/named-py" >/dev/null
python3 - "$work/named-py" "$work/wrong.py" <<'EOF' || fail=1
import glob, re, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.py")):
    s = open(f).read()
    m = re.search(r'^EXPORT_NAMES = \{\n    "[^"]+": "[^"]+",$', s, re.M)
    if m:
        open(sys.argv[2], "w").write(s.replace(m.group(0), m.group(0)[:-2] + '_x",', 1))
        sys.exit(0)
sys.exit("FAIL: no emitted program with EXPORT_NAMES to edit")
EOF
bridge "$work/wrong.py" --paths export.nonstrict.module >"$work/wrong.jsonl" 2>&1
if [ $? -ne 1 ] || ! grep -q '"stage": "names"' "$work/wrong.jsonl"; then
  echo "FAIL: a wrong EXPORT_NAMES entry was not reported (the names are not compared?)"
  fail=1
fi
# --time is read: with no time left, no program is checked and the summary counts them not run.
"${bridge_cmd[@]}" "$work"/named-py/*.py --paths eager --time 0 >"$work/time.jsonl" 2>&1
if [ $? -ne 0 ] || [ "$(wc -l <"$work/time.jsonl")" -ne 1 ] ||
   ! grep -q '"programs_not_run": 20' "$work/time.jsonl"; then
  cat "$work/time.jsonl"
  echo "FAIL: --time 0 still checked programs, or did not count the 20 not run"
  fail=1
fi
# --path-time is read: a limit no path meets stops strict export and fx.folder, each skipped
# with the reason "time limit" (every other run here has no limit and expects its classes;
# bridge_units checks which paths share a limit and that a path runs after one was stopped).
one=$(ls "$work"/named-py/*.py | head -n 1)
bridge "$one" --paths export.strict.module,fx.folder --path-time 0.001 \
  >"$work/ptime.jsonl" 2>&1
if [ "$(grep -c '"status": "skipped", "skip": "time limit: ran past --path-time 0.001 s' \
        "$work/ptime.jsonl")" -ne 2 ]; then
  cat "$work/ptime.jsonl"
  echo "FAIL: --path-time 0.001 did not stop the two paths"
  fail=1
fi
# --progress is read: with a limit every program meets, a line on stderr after each of the two
# programs; with 0, none; a negative limit is bad usage.
two=$(ls "$work"/named-py/*.py | head -n 2)
bridge $two --paths eager --quiet --progress 0.000001 2>"$work/progress.err" >/dev/null
bridge $two --paths eager --quiet --progress 0 2>"$work/noprogress.err" >/dev/null
bridge "$one" --progress -1 >/dev/null 2>&1
prc=$?
if ! grep -q '^flatcheck_torch: 1/2 programs, 0 results failing, [0-9]* s$' "$work/progress.err" ||
   ! grep -q '^flatcheck_torch: 2/2 programs, 0 results failing' "$work/progress.err" ||
   grep -q 'programs,' "$work/noprogress.err" || [ "$prc" -ne 2 ]; then
  cat "$work/progress.err" "$work/noprogress.err"
  echo "FAIL: --progress is not read (two lines at 0.000001, none at 0, exit 2 at -1; got $prc)"
  fail=1
fi
# A bridge started as a user starts it runs under PYTHONHASHSEED=0 (it starts itself again so,
# before torch's import: pipelining's results depend on string hashing): a --pass that records
# the seed and a string's hash, in two such runs, sees "0" and the same hash both times.
cat >"$work/hash_pass.py" <<EOF
import os
from torch_fx import flatten_by_position
def flatten(split):
    with open("$work/hash.txt", "a") as f:
        print(os.environ.get("PYTHONHASHSEED"), hash("flatcheck"), file=f)
    return flatten_by_position(split)
EOF
for k in 1 2; do
  "${bridge_cmd[@]}" "$one" --paths fx --quiet --pass "$work/hash_pass.py:flatten" >/dev/null 2>&1
done
if [ "$(sort -u "$work/hash.txt" 2>/dev/null | wc -l)" -ne 1 ] || ! grep -q '^0 ' "$work/hash.txt"
then
  cat "$work/hash.txt"
  echo "FAIL: the bridge did not run under PYTHONHASHSEED=0, or hashed a string two ways"
  fail=1
fi
# The bridge's stdout holds its records alone: what a pass (or torch: 2.14.1's unflatten,
# docs/found-bugs.md 74) prints while the paths run, by print or to file descriptor 1, goes to
# stderr.
cat >"$work/noisy_pass.py" <<EOF
import os
from torch_fx import flatten_by_position
def flatten(split):
    print("{noisy pass: print")
    os.write(1, b"{noisy pass: fd 1\\n")
    return flatten_by_position(split)
EOF
"${bridge_cmd[@]}" "$one" --paths fx --pass "$work/noisy_pass.py:flatten" \
  >"$work/noisy.jsonl" 2>"$work/noisy.err"
if ! python3 -c 'import json, sys
lines = open(sys.argv[1]).read().splitlines()
sys.exit(0 if lines and all(isinstance(json.loads(l), dict) for l in lines) else 1)' \
     "$work/noisy.jsonl" 2>/dev/null ||
   ! grep -q '"path": "fx"' "$work/noisy.jsonl" || ! grep -q '{noisy pass: print' "$work/noisy.err" ||
   ! grep -q '{noisy pass: fd 1' "$work/noisy.err"; then
  cat "$work/noisy.jsonl" "$work/noisy.err"
  echo "FAIL: what a pass printed reached the bridge's stdout, or its records or the printed"
  echo "  lines were lost"
  fail=1
fi
# SIGTERM (a campaign's time limit) stops the program under way: a --pass that returns at once
# on the first program and sleeps on the second; SIGTERM then gives, within seconds, the first
# program's result and a summary counting the second not run, "stopped": "SIGTERM", exit 0.
two=$(ls "$work"/named-py/*.py | sed -n 2p)
cat >"$work/sleepy_pass.py" <<EOF
import os, time
from torch_fx import flatten_by_position
calls = []
def flatten(split):
    calls.append(1)
    if len(calls) == 2:
        with open("$work/sleepy.pid", "w") as f:
            print(os.getpid(), file=f)
        time.sleep(120)
    return flatten_by_position(split)
EOF
"${bridge_cmd[@]}" "$one" "$two" --paths fx --pass "$work/sleepy_pass.py:flatten" \
  >"$work/stop.jsonl" 2>"$work/stop.err" &
stopped=$!
for _ in $(seq 1 240); do [ -s "$work/sleepy.pid" ] && break; sleep 0.5; done
stop_start=$SECONDS
kill -TERM "$(cat "$work/sleepy.pid" 2>/dev/null)" 2>/dev/null
wait "$stopped"
rc=$?
summary=$(grep '"summary": true' "$work/stop.jsonl")
if [ "$rc" -ne 0 ] || [ $((SECONDS - stop_start)) -gt 60 ] ||
   [ "$(grep -c '"path": "fx"' "$work/stop.jsonl")" -ne 1 ] ||
   ! grep '"path": "fx"' "$work/stop.jsonl" | grep -qF "\"program\": \"$one\"" ||
   [[ "$summary" != *'"programs_not_run": 1,'* ]] || [[ "$summary" != *'"stopped": "SIGTERM"'* ]]
then
  cat "$work/stop.jsonl" "$work/stop.err"
  echo "FAIL: SIGTERM did not stop the bridge's second program with the first one's result and a"
  echo "  summary counting one not run (exit $rc, $((SECONDS - stop_start)) s)"
  fail=1
fi
# --device is read: on a GPU, the export path runs there and its result is named PATH.cuda; with
# no CUDA device the bridge refuses (exit 2, the reason), never a silent CPU run.
bridge "$one" --paths eager,export.nonstrict.module --device cuda >"$work/dev.jsonl" 2>&1
rc=$?
if "${in_root[@]}" python3 -c 'import sys, torch; sys.exit(not torch.cuda.is_available())'; then
  if [ "$rc" -ne 0 ] || ! grep -Eq '"path": "export.nonstrict.module.cuda", "status": "(agree|excused)"' \
       "$work/dev.jsonl" || ! grep -q '"path": "eager", "status": "agree"' "$work/dev.jsonl"; then
    cat "$work/dev.jsonl"
    echo "FAIL: --device cuda: no agreeing export.nonstrict.module.cuda result (exit $rc)"
    fail=1
  fi
elif [ "$rc" -ne 2 ] || ! grep -q "sees no CUDA device" "$work/dev.jsonl"; then
  cat "$work/dev.jsonl"
  echo "FAIL: --device cuda without a CUDA device gave exit $rc, expected 2 and the reason"
  fail=1
fi
# --draw is read by the cases run with a .draw above (their own draws agree); a malformed one is
# refused (exit 2, the reason), never a silent draw of the program's own.
refused_draw() {  # refused_draw PATH KEY DRAW WHAT: the bridge exits 2 naming the draw's KEY
  bridge "$one" --paths "$1" --draw "$3" >"$work/draw.out" 2>&1
  local rc=$?
  if [ "$rc" -ne 2 ] || ! grep -q -- "--draw: $2" "$work/draw.out"; then
    cat "$work/draw.out"
    echo "FAIL: a --draw $4 gave exit $rc, expected 2 and the reason"
    fail=1
  fi
}
refused_draw pipeline pipeline '{"pipeline": {"a": "MIDDLE"}}' "with an unknown split point"
refused_draw export.nonstrict.preserve_some preserve '{"preserve": "a"}' \
  "with preserved modules that are no list"
refused_draw export.nonstrict.hooked hooked '{"hooked": {"a": "sideways"}}' \
  "with an unknown hook kind"
# The swap paths read --draw too: swapping nothing, entry 31's case agrees (its own draw, its one
# module, is the class; above).
bridge "$work/cases/unflatten-preserve-dead-input-none-1.py" --paths export.nonstrict.swap \
  --draw '{"swap": []}' >"$work/swapdraw.out" 2>&1
if ! grep -q '"path": "export.nonstrict.swap", "swapped": \[\], "status": "agree"' "$work/swapdraw.out"; then
  cat "$work/swapdraw.out"
  echo "FAIL: --draw '{\"swap\": []}' did not swap nothing on unflatten-preserve-dead-input-none-1"
  fail=1
fi
refused_draw export.nonstrict.swap swap '{"swap": ["a", "a.b"]}' \
  "swapping a module and its child"
# So do the graph-swap paths (the same key): swapping nothing, entry 45's case agrees (its own
# draw, its one module, is the class; above).
bridge "$work/cases/swap-modules-output-by-position-1.py" \
  --paths export.nonstrict.swap_modules --draw '{"swap": []}' >"$work/swapdraw.out" 2>&1
if ! grep -q '"path": "export.nonstrict.swap_modules", "swapped": \[\], "status": "agree"' \
    "$work/swapdraw.out"; then
  cat "$work/swapdraw.out"
  echo "FAIL: --draw '{\"swap\": []}' did not swap nothing on swap-modules-output-by-position-1"
  fail=1
fi
# The dynamic paths read --draw: pinned to no other size, entry 33's case (its drawn sizes show
# the class on torch 2.14) is judged at its own size alone; a size that is no list of shapes is
# refused.
bridge "$work/cases/unflatten-drops-shape-guards-1.py" --paths export.nonstrict.dynamic \
  --draw '{"dynamic": []}' >"$work/dyndraw.out" 2>&1
if ! grep -q '"path": "export.nonstrict.dynamic", "status": "agree", "sizes": \[\[\[[0-9, ]*\]\]\]' \
    "$work/dyndraw.out"; then
  cat "$work/dyndraw.out"
  echo "FAIL: --draw '{\"dynamic\": []}' did not judge entry 33's case at its own size alone"
  fail=1
fi
refused_draw export.nonstrict.dynamic dynamic '{"dynamic": [[[-1]]]}' "with a negative size"
# --branch is read: entry 34's case agrees on the plain unflatten path with its branch as written,
# and is class 34 there with the branch taken by torch.cond (each result says so); its pipeline
# is then class 36; a branch form that is neither is refused (exit 2, the reason).
c34="$work/cases/unflatten-cond-dead-first-call-1.py"
bridge "$c34" --paths export.nonstrict.unflatten >"$work/branch0.out" 2>&1
bridge "$c34" --paths export.nonstrict.unflatten,pipeline --branch cond \
  >"$work/branch1.out" 2>&1
if ! grep -q '"path": "export.nonstrict.unflatten", "status": "agree"' "$work/branch0.out" ||
   ! grep -q '"path": "export.nonstrict.unflatten", .*"known_torch_issue": "unflatten-cond-dead-first-call", .*"branch": "cond"' \
     "$work/branch1.out" ||
   ! grep -q '"path": "pipeline", .*"known_torch_issue": "pipeline-cond-branch-graphs: .*"branch": "cond"' \
     "$work/branch1.out"; then
  cat "$work/branch0.out" "$work/branch1.out"
  echo "FAIL: --branch cond did not take entry 34's case through torch.cond (ignored?)"
  fail=1
fi
"${bridge_cmd[@]}" "$c34" --paths eager --branch ifelse >"$work/branch2.out" 2>&1
if [ $? -ne 2 ] || ! grep -q "argument --branch: invalid choice" "$work/branch2.out"; then
  cat "$work/branch2.out"
  echo "FAIL: --branch ifelse was not refused with exit 2"
  fail=1
fi
# --reads is read: with the buffer read as itself, const_fold's folded transpose of it misses the
# update the view sees (a wrong output; read as a copy only the update itself is missing).
bridge "$alias" --paths fx.const_fold --reads alias >"$work/reads.out" 2>&1
if ! grep -q '"path": "fx.const_fold", "status": "known_torch_issue", "detail": "call 1 output 0: .*"reads": "alias"' \
    "$work/reads.out"; then
  cat "$work/reads.out"
  echo "FAIL: --reads alias did not read the buffer as itself on the alias case (ignored?)"
  fail=1
fi
took "the option checks"
[ "$fail" -eq 0 ] && echo "PASS: naming table, corpus/torch repros, --pass, export names," \
  "--interesting, --time, the hash seed, SIGTERM, --device, --draw, --branch, --reads"
exit "$fail"
