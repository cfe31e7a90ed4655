#!/usr/bin/env bash
# Instructions per name of Namespace::create_name at 10^3 ... 10^6 names of one base
# (bench/results/names-instructions.md): the NameCollision and NameSuffixes benchmarks run once
# each under valgrind's callgrind, counting only inside create_name. An instruction count does
# not depend on caches or on other tenants of the machine, so a flat count per name means the
# work is linear in the number of names; the time per name in stages.md also grows with the
# tables outgrowing the caches. Not a test: nothing is asserted.
#   BUILD=build  (needs valgrind: apt-get install valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
command -v valgrind > /dev/null || { echo "bench/names_ir.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
[ -x "$BUILD/bin/flatcheck_bench" ] || { echo "bench/names_ir.sh: build $BUILD/bin/flatcheck_bench first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for b in NameCollision NameSuffixes; do
  for n in 1000 10000 100000 1000000; do
    # One iteration: --benchmark_min_time is far below one iteration's time under valgrind.
    it=$(valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
           --toggle-collect='flatcheck::Namespace::create_name*' \
           "$BUILD/bin/flatcheck_bench" --benchmark_filter="^$b/$n\$" --benchmark_min_time=0.0001 \
           --benchmark_format=json 2> /dev/null |
         python3 -c 'import json,sys; print(json.load(sys.stdin)["benchmarks"][0]["iterations"])')
    ir=$(callgrind_annotate "$tmp/cg" 2> /dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
    echo "$b $n $it $ir" >> "$tmp/rows.txt"
    echo "names_ir.sh: $b/$n: $ir instructions, $it iteration(s)" >&2
  done
done
machine="$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'))"
python3 bench/report.py names_ir "$tmp/rows.txt" "$(git rev-parse --short HEAD)" "$machine" \
  "$(valgrind --version)" > bench/results/names-instructions.md
cat bench/results/names-instructions.md
