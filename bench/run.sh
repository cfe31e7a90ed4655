#!/usr/bin/env bash
# Runs the benchmarks and the detection table and writes bench/results/*.md.
#   BUILD=build   the build folder (Release); build-bench after bench/release-benchmark.sh, for
#                 a Release build of Google Benchmark (Debian's reports itself as DEBUG)
#   SEEDS=20      campaigns per fault for the detection table
#   DETECT=1      0 skips the detection table (it takes longest)
#   RSS_SECONDS=60  the campaign whose peak memory is reported (0 skips it)
#   PIN_CPU=0     the CPU of the single-thread runs (bench/pin.sh)
# Needs python3 for the markdown tables.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/pin.sh
BUILD=${BUILD:-build}
SEEDS=${SEEDS:-20}
mkdir -p bench/results
commit=$(git rev-parse --short HEAD)
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
machine="$(nproc) cores ($cpu), $(awk '/MemTotal/{printf "%.0f", $2/1048576}' /proc/meminfo) GiB, $(uname -sr), $PIN_NOTE"
"${PIN[@]}" "$BUILD/bin/flatcheck_bench" --benchmark_out=bench/results/bench.json --benchmark_out_format=json \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > /dev/null
# Campaign rates beside the stage table: one job, in process and isolated, at each --max-nodes.
campaigns=$(mktemp)
tmp=$(mktemp -d)
trap 'rm -rf "$campaigns" "$tmp"' EXIT
for n in 8 32 128; do
  for mode in in-process isolated; do
    flag=""; [ "$mode" = in-process ] && flag="--no-isolate"
    f=$("${PIN[@]}" "$BUILD/bin/flatcheck" fuzz --time 8 --seed 1 --max-nodes "$n" --jobs 1 --out '' --quiet \
        --json $flag | tail -1) || true
    echo "{\"n\": $n, \"mode\": \"$mode\", \"run\": $f}" >> "$campaigns"
  done
done
# The benchmark library: the Release build of bench/release-benchmark.sh when BUILD has one.
if [ -f "$BUILD/gbench/VERSION" ]; then
  bench_lib=$(cat "$BUILD/gbench/VERSION")
else
  bench_lib=$(dpkg-query -W -f='${Version} (Debian libbenchmark-dev)' libbenchmark-dev 2>/dev/null || echo '?')
fi
BENCH_LIB="$bench_lib" python3 bench/report.py stages bench/results/bench.json "$commit" "$machine" "$campaigns" > bench/results/stages.md
RSS_SECONDS=${RSS_SECONDS:-60}
if [ "$RSS_SECONDS" != 0 ]; then
  # Peak resident memory of a default campaign (isolated, 2 jobs, with an output folder): GNU
  # time's %M is the largest of the coordinator and the workers it waited for.
  for flag in "" "--no-isolate"; do
    /usr/bin/time -f "%M" -o "$tmp/rss" "$BUILD/bin/flatcheck" fuzz --time "$RSS_SECONDS" --jobs 2 \
      --out "$tmp/out" --quiet --json $flag > "$tmp/run.json" || true
    echo "| \`flatcheck fuzz --time $RSS_SECONDS --jobs 2 --out DIR${flag:+ $flag}\` | $(tail -1 "$tmp/run.json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["cases"])') | $(( $(cat "$tmp/rss") / 1024 )) MiB |" >> "$tmp/rss.md"
    rm -rf "$tmp/out"
  done
  { echo; echo "## Peak memory"; echo; echo "| campaign | cases | peak RSS |"; echo "|---|---|---|"; cat "$tmp/rss.md"; } >> bench/results/stages.md
fi
echo "wrote bench/results/stages.md"
if [ "${DETECT:-1}" != 0 ]; then
  "$BUILD/bin/flatcheck" detect --seeds "$SEEDS" --jobs 2 --json > bench/results/detection.txt
  python3 bench/report.py detection bench/results/detection.txt "$commit" "$machine" "$SEEDS" > bench/results/detection.md
  echo "wrote bench/results/detection.md"
fi
