#!/usr/bin/env bash
# Reach rates of the default generator (docs/reach.md) for seeds 1..5, written to
# bench/results/reach.md.
#   BUILD=build   the build folder
#   CASES=3000    cases per seed
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
CASES=${CASES:-3000}
mkdir -p bench/results
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for seed in 1 2 3 4 5; do
  "$BUILD/bin/flatcheck" fuzz --cases "$CASES" --seed "$seed" --json --out '' --no-minimize \
    --quiet | tail -n 1 > "$tmp/$seed.json"
done
python3 bench/report.py reach "$(git rev-parse --short HEAD)" "$CASES" "$tmp"/{1,2,3,4,5}.json \
  > bench/results/reach.md
echo "wrote bench/results/reach.md"
