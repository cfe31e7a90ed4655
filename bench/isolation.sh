#!/usr/bin/env bash
# What process isolation costs: the default isolated campaign against --no-isolate, one job
# each, interleaved round by round on the same seeds and case counts, with an output folder (so
# the isolated workers record every case before running it). Writes bench/results/isolation.md.
# Not a test: nothing is asserted.
#   BUILD=build  ROUNDS=4  SIZES="8 20 128"  PIN_CPU=0 (bench/pin.sh: the coordinator and its
#   worker share that CPU, as do the in-process runs)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/pin.sh
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
      f=$("${PIN[@]}" "$BUILD/bin/flatcheck" fuzz --cases "$cases" --seed "$round" --max-nodes "$n" --jobs 1 \
          --out "$dir/out" --quiet --json $flag | tail -1) || true
      echo "{\"n\": $n, \"mode\": \"$mode\", \"round\": $round, \"run\": $f}" >> "$out"
    done
    echo "isolation.sh: round $round, --max-nodes $n done" >&2
  done
done
python3 bench/report.py isolation "$out" "$(git rev-parse --short HEAD)" \
  "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $PIN_NOTE" "$ROUNDS" \
  > bench/results/isolation.md
echo "wrote bench/results/isolation.md"
