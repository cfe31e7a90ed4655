#!/usr/bin/env bash
# The text floor (bench/results/floor.md): what tokenizing the two program documents a case's
# oracle loads costs, against the per-case budget of the throughput goals (20,000 cases/s, and
# 150x the peer with the peer's rate measured in the same run). Not a test: nothing is asserted.
#   BUILD=build  PEER=../shared/peer_fx/peer_fx.py  PEER_SECONDS=8  PIN_CPU=0 (bench/pin.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/pin.sh
BUILD=${BUILD:-build}
PEER=${PEER:-../shared/peer_fx/peer_fx.py}
PEER_SECONDS=${PEER_SECONDS:-8}
[ -f "$PEER" ] || { echo "bench/floor.sh: no peer at $PEER (set PEER=...)" >&2; exit 2; }
[ -x "$BUILD/bin/flatcheck_bench" ] || { echo "bench/floor.sh: build $BUILD/bin/flatcheck_bench first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for n in 8 32 128; do
  # About PEER_SECONDS of peer cases at each size (its rates as in bench/peer.sh).
  case $n in 8) pc=$((PEER_SECONDS * 200)) ;; 32) pc=$((PEER_SECONDS * 80)) ;; *) pc=$((PEER_SECONDS * 20)) ;; esac
  "${PIN[@]}" /usr/bin/python3 "$PEER" --mode loop --cases "$pc" --nodes "$n" --seed 1 | tail -1 >> "$tmp/peer.jsonl"
  echo "floor.sh: peer at N=$n: $(tail -1 "$tmp/peer.jsonl")" >&2
done
"${PIN[@]}" "$BUILD/bin/flatcheck_bench" --benchmark_filter='^TextFloor/' --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true --benchmark_out="$tmp/floor.json" --benchmark_out_format=json > /dev/null
if [ -f "$BUILD/gbench/VERSION" ]; then
  bench_lib=$(cat "$BUILD/gbench/VERSION")
else
  bench_lib=$(dpkg-query -W -f='${Version} (Debian libbenchmark-dev)' libbenchmark-dev 2>/dev/null || echo '?')
fi
machine="$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')), $PIN_NOTE"
python3 bench/report.py floor "$tmp/floor.json" "$tmp/peer.jsonl" "$(git rev-parse --short HEAD)" \
  "$machine" "$bench_lib" > bench/results/floor.md
cat bench/results/floor.md
