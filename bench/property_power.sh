#!/usr/bin/env bash
# CTest power: for every wrong-result fault of core/base/faults.def, the rapidcheck property
# suite (every test named *Property.*, FLATCHECK_PROP_CASES cases each, the CI budget by
# default) runs with the fault injected under SEEDS different fixed seeds; a run counts as
# detecting the fault when any property fails. Prints the table and writes
# bench/results/property-power.md. Not a test: no timing is asserted.
# The row `none` is the control: no fault injected, so it must read 0 of SEEDS.
#   BUILD=build  SEEDS=20  JOBS=2  FLATCHECK_PROP_CASES=100
#   FAULTS="a b"  only these faults (the table is printed, not written to bench/results/)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SEEDS=${SEEDS:-20}
JOBS=${JOBS:-2}
export FLATCHECK_PROP_CASES=${FLATCHECK_PROP_CASES:-100}
all_faults=$(python3 - <<'PY'
import re
src = open("core/base/faults.def").read()
for m in re.finditer(r'X\((k\w+),\s*"([^"]+)",[^X]*?(kWrongResult|kCrash|kHang|kDeviceOnly)\)', src):
    if m.group(3) == "kWrongResult":
        print(m.group(2))
PY
)
faults=${FAULTS:-"none $all_faults"}
one_run() {  # FAULT SEED -> "FAULT SEED 1" when a property failed
  local fail=0
  for b in core_test generators_test harness_test; do
    # No shrinking (only "does it fail" counts) and stop at the first failing property.
    local inject=$1
    [ "$inject" = none ] && inject=
    if ! FLATCHECK_INJECT=$inject timeout 300 env \
        RC_PARAMS="max_success=$FLATCHECK_PROP_CASES seed=$2 noshrink=1 verbose_progress=0" \
        "$BUILD/bin/$b" --gtest_filter='*Property.*' --gtest_fail_fast >/dev/null 2>&1; then
      fail=1
      break
    fi
  done
  echo "$1 $2 $fail"
}
export -f one_run
export BUILD
out=$(mktemp)
for f in $faults; do for s in $(seq 1 "$SEEDS"); do echo "$f $s"; done; done |
  xargs -P "$JOBS" -n 2 bash -c 'one_run "$0" "$1"' > "$out"
{
  echo "# Property-suite power against each wrong-result fault"
  echo
  echo "command: \`SEEDS=$SEEDS bash bench/property_power.sh\` (FLATCHECK_PROP_CASES=$FLATCHECK_PROP_CASES," \
       "rapidcheck seeds 1..$SEEDS, no shrinking)  "
  echo "commit: \`$(git rev-parse --short HEAD)\`"
  echo
  echo "A run detects the fault when any \`*Property.*\` test of core_test, generators_test or"
  echo "harness_test fails with the fault injected. Goal: >= 19 of 20 runs for every fault."
  echo
  echo "| fault | runs that failed |"
  echo "|---|---|"
  for f in $faults; do
    n=$(awk -v f="$f" '$1 == f && $3 == 1' "$out" | wc -l)
    echo "| \`$f\` | $n/$SEEDS |"
  done
} > "$out.md"
if [ -z "${FAULTS:-}" ]; then cp "$out.md" bench/results/property-power.md; fi
cat "$out.md"
rm -f "$out.md"
rm -f "$out"
