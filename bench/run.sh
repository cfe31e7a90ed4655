#!/usr/bin/env bash
# Runs the benchmarks and the detection table and writes bench/results/*.md.
#   BUILD=build   the build folder (Release)
#   SEEDS=20      campaigns per fault for the detection table
# Needs python3 for the markdown tables.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SEEDS=${SEEDS:-20}
mkdir -p bench/results
commit=$(git rev-parse --short HEAD)
cpu=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')
machine="$(nproc) cores ($cpu), $(awk '/MemTotal/{printf "%.0f", $2/1048576}' /proc/meminfo) GiB, $(uname -sr)"
"$BUILD/bin/flatcheck_bench" --benchmark_out=bench/results/bench.json --benchmark_out_format=json \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true > /dev/null
python3 bench/report.py stages bench/results/bench.json "$commit" "$machine" > bench/results/stages.md
"$BUILD/bin/flatcheck" detect --seeds "$SEEDS" --jobs 2 --json > bench/results/detection.txt
python3 bench/report.py detection bench/results/detection.txt "$commit" "$machine" "$SEEDS" > bench/results/detection.md
echo "wrote bench/results/stages.md and bench/results/detection.md"
