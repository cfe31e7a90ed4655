#!/usr/bin/env bash
# CTest `torch-campaign/dying-bridge` (label unit, needs no torch): a bridge process that ends
# before its summary line leaves programs unchecked, so the campaign must say so and exit 2,
# never report the programs that did run as the whole result; --time, --path-time (0 refused),
# --device, --branch and --reads reach the bridge and a shrink's test, and a drawn path's draw
# reaches a shrink's test; --first picks the seed's cases;
# the five emit-torch forms (--update-args, ...) emit the programs and shrinks so;
# progress in a log is a whole line every 10 s; SIGTERM and SIGINT stop the bridges and the
# campaign summarizes what ran.
#   campaign_test.sh FLATCHECK_BIN SOURCE_DIR
set -uo pipefail
bin=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$src/harness/torch/torch_campaign.py" --cases 3 --jobs 2 --flatcheck "$bin" \
  --out "$work/out" --no-shrink --python "python3 -c 'import sys; sys.exit(1)'" \
  >"$work/log" 2>&1
rc=$?
cat "$work/log"
if [ "$rc" -ne 2 ] || ! grep -q "before its summary line" "$work/log"; then
  echo "FAIL: a bridge that died gave exit $rc, expected 2 and the reason"
  exit 1
fi
echo "PASS: a dying bridge is exit 2 with the reason"
# --time, --path-time and --device reach the bridge, and programs it did not run are reported, never counted
# as checked: a stand-in bridge that runs nothing when given --time (its summary counts them not
# run) and names its path after the device it was given.
cat >"$work/bridge.py" <<'PY'
import json, sys
args = sys.argv[2:]
progs = [a for a in args if a.endswith(".py")]
timed = "--time" in args and args[args.index("--time") + 1] == "7.0" and \
    args[args.index("--path-time") + 1] == "30.0"
device = args[args.index("--device") + 1] if "--device" in args else "cpu"
branch = args[args.index("--branch") + 1] if "--branch" in args else "python"
reads = args[args.index("--reads") + 1] if "--reads" in args else "copy"
paths = args[args.index("--paths") + 1].replace(",", "+") if "--paths" in args else "default"
print(json.dumps({"summary": True, "torch": "stand-in", "programs": len(progs),
                  "programs_not_run": len(progs) if timed else 0,
                  "paths": {f"stand-in.{device}.{branch}.{reads}.{paths}": {"agree": 0}},
                  "ops_per_path": {}}))
PY
python3 "$src/harness/torch/torch_campaign.py" --cases 3 --jobs 2 --flatcheck "$bin" \
  --out "$work/out2" --no-shrink --time 7 --path-time 30 --device cuda --branch cond \
  --reads alias --paths compile,aoti --python "python3 $work/bridge.py" >"$work/log2" 2>&1
rc=$?
cat "$work/log2"
if [ "$rc" -ne 0 ] || ! grep -q "programs checked: 0 of 3 (3 not run" "$work/log2" ||
   ! grep -q "every path that ran (0 programs)" "$work/log2" ||
   ! grep -q "stand-in.cuda.cond.alias.compile+aoti " "$work/log2" ||
   ! grep -q "branch op by cond" "$work/log2" ||
   ! grep -q "state read as aliases" "$work/log2"; then
  echo "FAIL: --time, --path-time, --device, --branch, --reads or --paths was not passed on, or"
  echo "  programs not"
  echo "  run were not"
  echo "  reported (exit $rc)"
  exit 1
fi
echo "PASS: --time, --path-time, --device, --branch, --reads and --paths reach the bridge; programs"
echo "  not run are reported"
# Without --paths the bridge's own default (every path) is left to it: no --paths passed.
python3 "$src/harness/torch/torch_campaign.py" --cases 1 --jobs 1 --flatcheck "$bin" \
  --out "$work/out2d" --no-shrink --python "python3 $work/bridge.py" >"$work/log2d" 2>&1
rc=$?
if [ "$rc" -ne 0 ] || ! grep -q "stand-in.cpu.python.copy.default " "$work/log2d"; then
  cat "$work/log2d"
  echo "FAIL: without --paths the campaign gave the bridge paths of its own (exit $rc)"
  exit 1
fi
echo "PASS: without --paths the bridge's default, every path, is left to it"
# A shrink's test runs the bridge as the campaign did: the same --device, --branch and --reads, the path
# without the device's suffix (a stand-in bridge that fails one path on the GPU, and records
# the arguments it is given as a shrink's test).
cat >"$work/failing.py" <<'PY'
import json, sys
args = sys.argv[3:]  # sys.argv[1]: where to record; sys.argv[2]: the bridge's path
if "--interesting" in args:
    open(sys.argv[1], "a").write(" ".join(args[1:]) + "\n")
    sys.exit(0)
progs = [a for a in args if a.endswith(".py")]
for p in progs:
    print(json.dumps({"path": "export.nonstrict.module.cuda", "status": "mismatch",
                      "first_mismatch": {"why": "bits differ"}, "program": p}))
print(json.dumps({"summary": True, "torch": "stand-in", "programs": len(progs),
                  "programs_not_run": 0, "ops_per_path": {},
                  "paths": {"export.nonstrict.module.cuda": {"mismatch": len(progs)}}}))
sys.exit(1)
PY
python3 "$src/harness/torch/torch_campaign.py" --cases 1 --jobs 1 --flatcheck "$bin" \
  --out "$work/out4" --max-checks 3 --device cuda --branch cond --reads alias \
  --python "python3 $work/failing.py $work/pred-args" >"$work/log4" 2>&1
rc=$?
if [ "$rc" -ne 1 ] || ! grep -q -- "--device cuda --branch cond --reads alias --interesting export.nonstrict.module:mismatch$" \
     "$work/pred-args"; then
  cat "$work/log4" "$work/pred-args"
  echo "FAIL: a shrink's test did not run the bridge with the campaign's --device, --branch, --reads"
  echo "  and the path without its device suffix (exit $rc)"
  exit 1
fi
echo "PASS: a shrink's test runs the bridge with the campaign's --device, --branch and --reads"
# A drawn path's shrink pins the finding's draw (--draw) and keeps it beside the shrunk case; a
# path that draws nothing gets no --draw (a stand-in bridge failing a hooked, a rewrite, a
# dynamic and a plain path, recording its arguments as a shrink's test).
cat >"$work/drawn.py" <<'PY'
import json, sys
args = sys.argv[3:]
if "--interesting" in args:
    open(sys.argv[1], "a").write(" ".join(args[1:]) + "\n")
    sys.exit(0)
progs = [a for a in args if a.endswith(".py")]
draws = {"export.nonstrict.hooked": {"hooked": {"a": "partial", "b": "compile"}},
         "fx.rewrite": {"pattern": "mul(add)"},
         "export.nonstrict.dynamic": {"sizes": [[[2, 3]], [[4, 3]]]},
         "export.nonstrict.module": {}}
for p in progs:
    for path, draw in draws.items():
        print(json.dumps({"path": path, "status": "mismatch", "program": p,
                          "first_mismatch": {"why": "bits differ"}, **draw}))
print(json.dumps({"summary": True, "torch": "stand-in", "programs": len(progs),
                  "programs_not_run": 0, "ops_per_path": {},
                  "paths": {path: {"mismatch": len(progs)} for path in draws}}))
sys.exit(1)
PY
python3 "$src/harness/torch/torch_campaign.py" --cases 1 --jobs 1 --flatcheck "$bin" \
  --out "$work/out5" --max-checks 2 --python "python3 $work/drawn.py $work/drawn-args" \
  >"$work/log5" 2>&1
rc=$?
want=(
  '--quiet --draw {"hooked": {"a": "partial", "b": "compile"}} --interesting export.nonstrict.hooked:mismatch'
  '--quiet --draw {"rewrite": ["mul(add)"]} --interesting fx.rewrite:mismatch'
  '--quiet --draw {"dynamic": [[[2, 3]], [[4, 3]]]} --interesting export.nonstrict.dynamic:mismatch'
  '--quiet --interesting export.nonstrict.module:mismatch')
missing=0
for line in "${want[@]}"; do
  grep -qxF -- "$line" "$work/drawn-args" 2>/dev/null || { echo "  missing: $line"; missing=1; }
done
kept=$(cat "$work"/out5/minimized/*-export.nonstrict.hooked.draw 2>/dev/null)
if [ "$rc" -ne 1 ] || [ "$missing" -ne 0 ] ||
   [ "$kept" != '{"hooked": {"a": "partial", "b": "compile"}}' ] ||
   ls "$work"/out5/minimized/*-export.nonstrict.module.draw >/dev/null 2>&1; then
  cat "$work/log5" "$work/drawn-args"
  echo "FAIL: a shrink's test did not pin the finding's draw (--draw), or the draw was not kept"
  echo "  beside the shrunk case, or a path that draws nothing got one (exit $rc)"
  exit 1
fi
echo "PASS: a drawn path's shrink pins the finding's draw and keeps it beside the shrunk case"
# --first K: the bridge is given the seed's cases K..K+N-1, each the same case a campaign from 0
# checks (a stand-in bridge that names a path after each program it is given).
cat >"$work/names.py" <<'PY'
import json, os, sys
progs = sorted(os.path.basename(a) for a in sys.argv[2:] if a.endswith(".py"))
print(json.dumps({"summary": True, "torch": "stand-in", "programs": len(progs),
                  "programs_not_run": 0, "paths": {p: {"agree": 1} for p in progs},
                  "ops_per_path": {}}))
PY
for first in 0 5; do
  python3 "$src/harness/torch/torch_campaign.py" --cases 3 --jobs 1 --seed 4 --first "$first" \
    --flatcheck "$bin" --out "$work/first$first" --no-shrink --python "python3 $work/names.py" \
    >"$work/logf$first" 2>&1 || { cat "$work/logf$first"; echo "FAIL: --first $first"; exit 1; }
done
cat "$work/logf5"
got=$(grep -o 'case-4-[0-9]*\.py' "$work/logf5" | sort -u | tr '\n' ' ')
if [ "$got" != "case-4-5.py case-4-6.py case-4-7.py " ] ||
   ! grep -q "3 cases (5..7), seed 4" "$work/logf5"; then
  echo "FAIL: --first 5 --cases 3 gave the bridge '$got', expected cases 5, 6 and 7"
  exit 1
fi
"$bin" generate --seed 4 --count 6 -o "$work/all" >/dev/null
if ! cmp -s "$work/all/case-4-5.json" "$work/first5/cases/case-4-5.json" ||
   [ -e "$work/first5/cases/case-4-0.json" ]; then
  echo "FAIL: --first 5 wrote another case 5 than the seed's, or kept the cases before 5"
  exit 1
fi
echo "PASS: --first picks the seed's cases"
# Progress off a terminal (a log) is a whole line every 10 s, never carriage returns: a stand-in
# bridge that takes 12 s.
cat >"$work/slow.py" <<'PY'
import json, sys, time
time.sleep(12)
progs = [a for a in sys.argv[2:] if a.endswith(".py")]
print(json.dumps({"summary": True, "torch": "stand-in", "programs": len(progs),
                  "programs_not_run": 0, "paths": {"stand-in": {"agree": len(progs)}},
                  "ops_per_path": {}}))
PY
python3 "$src/harness/torch/torch_campaign.py" --cases 2 --jobs 1 --flatcheck "$bin" \
  --out "$work/out3" --no-shrink --python "python3 $work/slow.py" >"$work/log3" 2>&1
rc=$?
cat "$work/log3"
if [ "$rc" -ne 0 ] || grep -q $'\r' "$work/log3" ||
   ! grep -Eq '^  0/2 programs, 1[0-9] s$' "$work/log3"; then
  echo "FAIL: progress off a terminal is not a whole line every 10 s (exit $rc)"
  exit 1
fi
echo "PASS: progress off a terminal is a whole line every 10 s"
# --path-time must be positive: 0 is refused (exit 2, the reason) before anything is generated.
python3 "$src/harness/torch/torch_campaign.py" --cases 2 --flatcheck "$bin" --out "$work/out-zero" \
  --no-shrink --path-time 0 --python "python3 $work/bridge.py" >"$work/log-zero" 2>&1
rc=$?
if [ "$rc" -ne 2 ] || ! grep -q "path-time must be positive" "$work/log-zero" ||
   [ -e "$work/out-zero/cases" ]; then
  cat "$work/log-zero"
  echo "FAIL: --path-time 0 was not refused with exit 2 before any case was written"
  exit 1
fi
echo "PASS: --path-time 0 is refused"
# --update-args, --update-inputs, --kwargs, --dict-outputs, --packed-args, --op-kwargs,
# --hostile-names, --hostile-child-names, --non-persistent-buffers, --tensor-constants,
# --inplace-updates and --step-counters: the campaign's programs are emitted so (each says
# "update_args": True, ..., "step_counters": True), and so are a shrink's candidates, and the
# campaign names the form it ran (FORMS' phrase); without them, neither (stand-ins that name the
# path after the form of the programs they are given, and record it when run as a shrink's test).
declare -A flag_of=([args]=--update-args [inputs]=--update-inputs [kwargs]=--kwargs
  [dicts]=--dict-outputs [packed]=--packed-args [opkw]=--op-kwargs [hostile]=--hostile-names
  [child]=--hostile-child-names [npbuf]=--non-persistent-buffers [const]=--tensor-constants
  [inpl]=--inplace-updates [steps]=--step-counters)
declare -A phrase_of=([args]="updates made through forward arguments"
  [inputs]="inputs updated in place by the root" [kwargs]="children called with keyword arguments"
  [dicts]="children's results returned as dicts" [packed]="children's arguments packed in a tuple"
  [opkw]="ops spelled with keyword arguments" [hostile]="parameters named as torch names its own"
  [child]="children named as torch names its own" [npbuf]="buffers registered non-persistent"
  [const]="buffers held as plain tensor attributes" [inpl]="updates written as in-place ops"
  [steps]="modules keeping step counters")
cat >"$work/form.py" <<'PY'
import json, sys
args = sys.argv[3:]  # sys.argv[1]: where a shrink's test records the form; [2]: the bridge
progs = [a for a in args if a.endswith(".py")]
texts = [open(p).read() for p in progs]
form = "+".join(f for f, key in (("args", '"update_args": True'),
                                 ("inputs", '"update_inputs": True'),
                                 ("kwargs", '"kwargs": True'),
                                 ("dicts", '"dict_outputs": True'),
                                 ("packed", '"packed_args": True'),
                                 ("opkw", '"op_kwargs": True'),
                                 ("hostile", '"hostile_names": True'),
                                 ("child", '"hostile_child_names": True'),
                                 ("npbuf", '"non_persistent_buffers": True'),
                                 ("const", '"tensor_constants": True'),
                                 ("inpl", '"inplace_updates": True'),
                                 ("steps", '"step_counters": True'))
                if texts and all(key in t for t in texts)) or "plain"
if "--interesting" in args:
    open(sys.argv[1], "a").write(form + "\n")
    sys.exit(0)
for p in progs:
    print(json.dumps({"path": "export.nonstrict.module", "status": "mismatch",
                      "first_mismatch": {"why": "bits differ"}, "program": p}))
print(json.dumps({"summary": True, "torch": "stand-in", "programs": len(progs),
                  "programs_not_run": 0, "ops_per_path": {},
                  "paths": {f"form.{form}": {"mismatch": len(progs)}}}))
sys.exit(1)
PY
for form in plain "${!flag_of[@]}"; do
  flag=${flag_of[$form]:-}
  python3 "$src/harness/torch/torch_campaign.py" --cases 2 --jobs 1 --flatcheck "$bin" \
    --out "$work/form-$form" --max-checks 2 --max-shrinks 1 $flag \
    --python "python3 $work/form.py $work/form-pred-$form" >"$work/log-$form" 2>&1
  rc=$?
  named=ok
  for other in "${!phrase_of[@]}"; do
    [ "$(grep -c "${phrase_of[$other]}" "$work/log-$form")" -eq \
      "$([ "$form" = "$other" ] && echo 1 || echo 0)" ] || named="'${phrase_of[$other]}'"
  done
  if [ "$rc" -ne 1 ] || ! grep -q "form\.$form " "$work/log-$form" ||
     [ "$(sort -u "$work/form-pred-$form" 2>/dev/null)" != "$form" ] || [ "$named" != ok ]; then
    cat "$work/log-$form" "$work/form-pred-$form"
    echo "FAIL: with${flag:+ $flag}${flag:-out a form flag}, the programs or a shrink's"
    echo "  candidates were not emitted as '$form', or the log named the wrong forms"
    echo "  ($named; exit $rc)"
    exit 1
  fi
done
echo "PASS: --update-args, --update-inputs, --kwargs, --dict-outputs, --packed-args,"
echo "  --op-kwargs, --hostile-names, --hostile-child-names, --non-persistent-buffers,"
echo "  --tensor-constants, --inplace-updates and --step-counters emit the campaign's programs"
echo "  and a shrink's candidates so"
# SIGTERM or SIGINT to the campaign (a time limit around it, Ctrl-C) reaches each bridge
# process, whose summary counts the programs it did not run; the campaign then writes its
# summary and results as after --time, within seconds. Stand-ins that check one program and
# wait: one answers SIGTERM with its summary; one has its summary out and is killed by the
# signal (a stop request reaching it as it exits): its results are whole.
cat >"$work/stoppable.py" <<'PY'
import json, signal, sys, time
mode, progs = sys.argv[1], [a for a in sys.argv[3:] if a.endswith(".py")]
def summary(not_run, **more):
    print(json.dumps({"summary": True, "torch": "stand-in", "programs": len(progs),
                      "programs_not_run": not_run, "ops_per_path": {},
                      "paths": {"stand-in": {"agree": len(progs) - not_run}}, **more}),
          flush=True)
def on_term(signum, frame):
    summary(len(progs) - 1, stopped="SIGTERM")
    sys.exit(0)
# The handler before the first record: the test signals once it sees that record (a signal
# between the two under load killed the stand-in before it could answer).
signal.signal(signal.SIGTERM, on_term if mode == "answers" else signal.SIG_DFL)
print(json.dumps({"path": "stand-in", "status": "agree", "program": progs[0]}), flush=True)
if mode == "exits":
    summary(0)
time.sleep(60)
PY
for how in answers:TERM answers:INT exits:TERM; do
  mode=${how%:*} sig=${how#*:}
  python3 "$src/harness/torch/torch_campaign.py" --cases 2 --jobs 1 --flatcheck "$bin" \
    --out "$work/stop-$mode-$sig" --markdown "$work/stop-$mode-$sig.md" \
    --python "python3 $work/stoppable.py $mode" >"$work/log-stop" 2>&1 &
  campaign=$!
  # Each run its own folder: the wait below is for this run's bridge, not an earlier one's.
  for _ in $(seq 1 100); do [ -s "$work/stop-$mode-$sig/bridge-0.jsonl" ] && break; sleep 0.2; done
  sleep 0.5
  stop_start=$SECONDS
  kill -"$sig" "$campaign"
  wait "$campaign"
  rc=$?
  if [ "$mode" = answers ]; then
    want="programs checked: 1 of 2 (1 not run: stopped by SIG$sig)"
    saved="\"programs_not_run\": 1,"
  else
    want="every path that ran (2 programs)"
    saved="\"programs_not_run\": 0,"
  fi
  stopped=$([ "$mode" = answers ] && echo "\"stopped\": \"SIG$sig\"" || echo '"torch"')
  if [ "$rc" -ne 0 ] || [ $((SECONDS - stop_start)) -gt 30 ] || ! grep -qF "$want" "$work/log-stop" ||
     ! tail -n 1 "$work/stop-$mode-$sig/results.jsonl" | grep -qF "$saved" ||
     ! tail -n 1 "$work/stop-$mode-$sig/results.jsonl" | grep -qF "$stopped" ||
     { [ "$mode" = answers ] && ! grep -qF "$want" "$work/stop-$mode-$sig.md"; }; then
    cat "$work/log-stop"
    echo "FAIL: SIG$sig to the campaign ($mode): exit $rc after $((SECONDS - stop_start)) s, expected"
    echo "  0 within 30 s, '$want' in the summary and the markdown, and results.jsonl's"
    echo "  summary line"
    exit 1
  fi
done
echo "PASS: SIGTERM and SIGINT stop the campaign's bridges and it summarizes what ran"
