#!/usr/bin/env bash
# Two builds side by side, interleaved round by round: the load and save stages
# (flatcheck_bench's Pass/load and Pass/save, ns per node) and in-process campaigns of one job
# on the same seeds (cases per CPU-second: user + system time, so a busy machine slows both
# builds alike). Prints a markdown table; nothing is asserted.
#   bench/ab.sh BEFORE_BUILD AFTER_BUILD      (folders holding bin/flatcheck and bin/flatcheck_bench)
#   ROUNDS=3  SIZES="8 20 128"  STAGES="8 128 1024"  NAMES="before-commit after-commit" (for the
#   table's title; the folder names when unset)  PIN_CPU=0 (bench/pin.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/pin.sh
[ $# -eq 2 ] || { sed -n 2,9p "$0" >&2; exit 2; }
ROUNDS=${ROUNDS:-3}
SIZES=${SIZES:-8 20 128}
STAGES=${STAGES:-8 128 1024}
for b in "$1" "$2"; do
  for exe in flatcheck flatcheck_bench; do
    [ -x "$b/bin/$exe" ] || { echo "bench/ab.sh: $b/bin/$exe is missing" >&2; exit 2; }
  done
done
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
filter="Pass/(load|save)/($(echo "$STAGES" | tr ' ' '|'))\$"
for round in $(seq 1 "$ROUNDS"); do
  for side in before after; do
    b=$1; [ "$side" = after ] && b=$2
    "${PIN[@]}" "$b/bin/flatcheck_bench" --benchmark_filter="$filter" --benchmark_min_time=0.5 \
        --benchmark_format=json 2>/dev/null |
      python3 -c '
import json, sys
for r in json.load(sys.stdin)["benchmarks"]:
    _, stage, n = r["name"].split("/")
    print(json.dumps({"kind": "stage", "side": sys.argv[1], "stage": stage, "n": int(n),
                      "ns_per_node": r["ns_per_node"] * 1e9}))' "$side" >> "$rows"
    for n in $SIZES; do
      case $n in 8) cases=3000 ;; 20) cases=1500 ;; *) cases=150 ;; esac
      t=$( { /usr/bin/time -f "%U %S" "${PIN[@]}" "$b/bin/flatcheck" fuzz --cases "$cases" --seed "$round" \
             --max-nodes "$n" --jobs 1 --no-isolate --quiet > /dev/null; } 2>&1 | tail -1)
      echo "{\"kind\": \"campaign\", \"side\": \"$side\", \"n\": $n, \"cases\": $cases," \
           "\"cpu\": $(echo "$t" | awk '{print $1 + $2}')}" >> "$rows"
    done
  done
  echo "ab.sh: round $round done" >&2
done
read -r name1 name2 <<< "${NAMES:-$1 $2}"
python3 bench/report.py ab "$rows" "$name1" "$name2" "$ROUNDS" \
  "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $PIN_NOTE"
