#!/usr/bin/env bash
# What process isolation costs: the default isolated campaign against --no-isolate, one job
# each, interleaved round by round on the same seeds and case counts, with an output folder (so
# the isolated workers record every case before running it). Writes bench/results/isolation.md.
# Not a test: nothing is asserted.
#   BUILD=build  ROUNDS=4  SIZES="8 20 128"
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-4}
SIZES=${SIZES:-8 20 128}
[ -x "$BUILD/bin/flatcheck" ] || { echo "bench/isolation.sh: build $BUILD/bin/flatcheck first" >&2; exit 2; }
out=$(mktemp)
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$out"' EXIT
for round in $(seq 1 "$ROUNDS"); do
  for n in $SIZES; do
    case $n in 8) cases=3000 ;; 20) cases=1500 ;; *) cases=150 ;; esac
    for mode in isolated in-process; do
      flag=""; [ "$mode" = in-process ] && flag="--no-isolate"
      rm -rf "$dir/out"
      f=$("$BUILD/bin/flatcheck" fuzz --cases "$cases" --seed "$round" --max-nodes "$n" --jobs 1 \
          --out "$dir/out" --quiet --json $flag | tail -1) || true
      echo "{\"n\": $n, \"mode\": \"$mode\", \"round\": $round, \"run\": $f}" >> "$out"
    done
    echo "isolation.sh: round $round, --max-nodes $n done" >&2
  done
done
python3 - "$out" "$(git rev-parse --short HEAD)" "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" "$ROUNDS" "$SIZES" > bench/results/isolation.md <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("# What isolation costs\n")
print(f"command: `ROUNDS={sys.argv[4]} bash bench/isolation.sh` (isolated and `--no-isolate` "
      "campaigns interleaved, one job each, same seeds and case counts, with an output folder)  ")
print(f"commit: `{sys.argv[2]}`  ")
print(f"machine: {sys.argv[3]}\n")
print("| --max-nodes | cases per run | isolated cases/s (each round) | in-process cases/s (each round) | throughput lost to isolation (mean of rounds) |")
print("|---|---|---|---|---|")
for n in sorted({r["n"] for r in rows}):
    iso = [r["run"]["cases_per_sec"] for r in rows if r["n"] == n and r["mode"] == "isolated"]
    inp = [r["run"]["cases_per_sec"] for r in rows if r["n"] == n and r["mode"] == "in-process"]
    cases = [r["run"]["cases"] for r in rows if r["n"] == n][0]
    lost = statistics.mean(1 - a / b for a, b in zip(iso, inp))
    fmt = lambda v: ", ".join(f"{x:.0f}" if x >= 100 else f"{x:.1f}" for x in v)
    print(f"| {n} | {cases} | {fmt(iso)} | {fmt(inp)} | {100 * lost:.1f}% |")
print("\nEach round runs the isolated campaign, then the in-process one, on the round's seed; the "
      "loss is 1 - isolated/in-process per round, averaged. The machine is shared and noisy: "
      "read the rounds, not one figure.")
PY
echo "wrote bench/results/isolation.md"
