#!/usr/bin/env bash
# CTest label `torch`: flatcheck's eager reference and the torch.fx path agree with real PyTorch
# on generated cases and on the regression corpus, and the fx path reads --pass (the by-name
# pass fails where the built-in one passes).
# Exit 77 (reported SKIPPED by CTest) with the reason when torch cannot be imported.
#   torch_bridge_test.sh FLATCHECK_BIN SOURCE_DIR [CASES]
set -uo pipefail
bin=$1 src=$2 cases=${3:-200}
py=/usr/bin/python3
if ! why=$("$py" -c 'import torch' 2>&1); then
  echo "SKIPPED: torch is not importable by $py (install Debian's python3-torch:"
  echo "scripts/install-deps.sh --torch): ${why##*$'\n'}"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
set -e
"$bin" generate --seed 7 --count "$cases" -o "$work/cases" >/dev/null
cp "$src"/corpus/regression/*.json "$work/cases/"
"$bin" emit-torch "$work/cases" -o "$work/programs" >/dev/null
set +e
"$py" "$src/harness/torch/flatcheck_torch.py" "$work"/programs/*.py --paths eager,fx --quiet \
  >"$work/out.jsonl"
rc=$?
set -e
cat "$work/out.jsonl"
if [ "$rc" -ne 0 ]; then
  echo "FAIL: torch disagrees with flatcheck (exit $rc)"
  exit 1
fi
n=$(ls "$work"/programs/*.py | wc -l)
if [ "$n" -lt 200 ]; then
  echo "FAIL: only $n programs were checked"
  exit 1
fi
# Each program's own check (`python3 PROGRAM`: its main(), bit for bit), in one process: it
# must agree wherever the eager path above found every node bit-exact (no bounded difference:
# exp, tanh, sigmoid and sums may differ within their bounds there), state shared by two
# modules included (named under each FQN).
"$py" "$src/harness/torch/flatcheck_torch.py" "$work"/programs/*.py --paths eager \
  >"$work/eager.jsonl"
"$py" - "$work/eager.jsonl" "$work"/programs/*.py <<'PYEOF'
import contextlib, importlib.util, io, json, sys
bounded = set()
for line in open(sys.argv[1]):
    r = json.loads(line)  # the eager path's verdict on each program, then a summary
    if r.get("path") == "eager" and r.get("bounded_differences"):
        bounded.add(r["program"])
bad, shared, checked = [], 0, 0
for i, path in enumerate(sys.argv[2:]):
    if path in bounded:
        continue
    spec = importlib.util.spec_from_file_location(f"program{i}", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    model = m.build()
    shared += len(m.EXPECTED_STATE) > \
        len(dict(model.named_parameters())) + len(dict(model.named_buffers()))
    with contextlib.redirect_stdout(io.StringIO()) as out:
        rc = m.main()
    checked += 1
    if rc != 0:
        bad.append(path + ":\n" + "\n".join(
            l for l in out.getvalue().splitlines() if "same" not in l)[-600:])
print(f"{checked} programs' own checks (bit-exact on the eager path): {len(bad)} differ; "
      f"{shared} with state shared by two modules")
if bad or shared == 0 or checked < 150:
    print("FAIL: " + ("\n".join(bad[:3]) if bad else "too few programs checked, or none shares "
                      "state"))
    sys.exit(1)
PYEOF
# The switch that models the old Torch-TensorRT wiring must change the result on the seed
# bug's example: by name it wires the fallback relu to the wrong getitem.
"$bin" example graph-break -o "$work/gb.json"
"$bin" emit-torch "$work/gb.json" -o "$work/gb" >/dev/null
"$py" "$src/harness/torch/flatcheck_torch.py" "$work/gb/gb.py" --paths fx --quiet >/dev/null
set +e
"$py" "$src/harness/torch/flatcheck_torch.py" "$work/gb/gb.py" --paths fx \
  --pass "$src/harness/torch/passes/by_name.py:flatten" \
  --quiet >/dev/null 2>&1
byname=$?
set -e
if [ "$byname" -ne 1 ]; then
  echo "FAIL: --pass by_name.py:flatten did not reproduce the graph-break bug (exit $byname)"
  exit 1
fi
echo "PASS: $n programs agree on the eager and fx paths; the by-name pass reproduces the graph-break bug"
