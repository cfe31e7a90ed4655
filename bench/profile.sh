#!/usr/bin/env bash
# Where a case's time goes (bench/results/profile.md): one in-process, single-thread campaign
# under `perf record --call-graph dwarf`, reported as the share of its CPU samples spent inside
# each part of the check (inclusive: a part's callees count to it), and the functions with the
# most samples of their own. Not a test: nothing is asserted, and no part is a timing.
#   bench/profile.sh [BUILD]     (default build; needs BUILD/bin/flatcheck and perf)
#   CASES=500  MAX_NODES=20  SEED=1  FREQ=1500 (samples per second)  PIN_CPU=0 (bench/pin.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/pin.sh
BUILD=${1:-build}
CASES=${CASES:-500}
MAX_NODES=${MAX_NODES:-20}
SEED=${SEED:-1}
FREQ=${FREQ:-1500}
bin="$BUILD/bin/flatcheck"
[ -x "$bin" ] || { echo "bench/profile.sh: $bin is missing (build it first)" >&2; exit 2; }
command -v perf > /dev/null ||
  { echo "bench/profile.sh: perf is missing (Debian: linux-perf)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmd=(fuzz --cases "$CASES" --max-nodes "$MAX_NODES" --seed "$SEED" --no-isolate --jobs 1 --out '' --quiet)
if ! "${PIN[@]}" perf record -q -o "$tmp/perf.data" --call-graph dwarf,16384 -F "$FREQ" \
    "$bin" "${cmd[@]}" > /dev/null 2> "$tmp/record.log"; then
  echo "bench/profile.sh: perf record failed:" >&2
  cat "$tmp/record.log" >&2
  exit 2
fi
perf report -i "$tmp/perf.data" --children --sort symbol -g none --stdio 2> /dev/null > "$tmp/children.txt"
perf report -i "$tmp/perf.data" --no-children --sort dso,symbol -g none --stdio 2> /dev/null > "$tmp/self.txt"
samples=$(perf report -i "$tmp/perf.data" --stdio -F overhead,sample --sort symbol -g none 2> /dev/null |
  awk '$1 ~ /%$/ {n += $2} END {print n + 0}')
machine="$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')), $PIN_NOTE"
commit=$(git rev-parse --short HEAD 2> /dev/null || echo '?')
git diff --quiet HEAD 2> /dev/null || commit="$commit (with uncommitted changes)"
python3 bench/report.py profile "$tmp/children.txt" "$tmp/self.txt" "$commit" "$machine" \
  "$samples" "flatcheck fuzz --cases $CASES --max-nodes $MAX_NODES --seed $SEED --no-isolate --jobs 1 --out '' --quiet"
