#!/usr/bin/env bash
# A seed means the same case with any supported compiler (docs/hardening.md): builds the
# `flatcheck` command with the compiler the main build did not use (gcc for a clang build, clang
# for a gcc one) into build-<compiler>/, generates the same cases with both, and compares the
# files byte for byte.
#   bash scripts/check-determinism.sh [BUILD] [COUNT] [SEEDS]
#     BUILD  the main build (default build), COUNT cases per seed (default 500),
#     SEEDS  space-separated (default "7")
# Exit 0 when every file is identical, 1 when some differ (the first difference is shown), 2 on
# bad usage or when a compiler is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
count=${2:-500}
seeds=${3:-7}
cache="$build/CMakeCache.txt"
[ -f "$cache" ] || { echo "check-determinism: no build at $build (run scripts/build.sh)" >&2; exit 2; }
compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$cache")
case "$compiler" in
  *clang++*) other_cc=gcc other_cxx=g++ ;;
  *g++*|*c++*) other_cc=clang other_cxx=clang++ ;;
  *) echo "check-determinism: unknown compiler '$compiler' in $cache" >&2; exit 2 ;;
esac
command -v "$other_cxx" >/dev/null || { echo "check-determinism: $other_cxx not found" >&2; exit 2; }
other="build-$other_cc"
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
CC=$other_cc CXX=$other_cxx cmake -S . -B "$other" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DFLATCHECK_CUDA=OFF -DFLATCHECK_FUZZERS=OFF -DFLATCHECK_BENCH=OFF \
  -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON >/dev/null  # and each file's own includes suffice
cmake --build "$other" -j"${FLATCHECK_JOBS:-2}" --target flatcheck >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
total=0
for seed in $seeds; do
  "$build/bin/flatcheck" generate --seed "$seed" --count "$count" -o "$work/a-$seed" >/dev/null
  "$other/bin/flatcheck" generate --seed "$seed" --count "$count" -o "$work/b-$seed" >/dev/null
  n=$(ls "$work/a-$seed" | wc -l)
  [ "$n" -eq "$count" ] || { echo "check-determinism: $n of $count files for seed $seed"; exit 1; }
  total=$((total + n))
  if ! diff -rq "$work/a-$seed" "$work/b-$seed" >"$work/diff"; then
    echo "check-determinism: $(wc -l <"$work/diff") of $count cases of seed $seed differ between" \
         "$(basename "$compiler") and $other_cxx; the first:"
    first=$(head -n 1 "$work/diff" | awk '{print $2}')
    diff "$first" "${first/a-$seed/b-$seed}" | head -n 20
    exit 1
  fi
done
echo "check-determinism: $total cases (seeds $seeds) byte-identical from $(basename "$compiler")" \
     "and $other_cxx"
