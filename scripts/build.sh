#!/usr/bin/env bash
# Configures and builds flatcheck into build/ (Release, Ninja when available).
set -euo pipefail
cd "$(dirname "$0")/.."
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
# clang when present: it builds the libFuzzer targets too (FLATCHECK_FUZZERS=AUTO).
if [ -z "${CXX:-}" ] && command -v clang++ >/dev/null 2>&1; then
  export CC=clang CXX=clang++
fi
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${gen[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
elif [ $# -gt 0 ]; then
  cmake -S . -B build "$@"
fi
cmake --build build -j"${FLATCHECK_JOBS:-2}"
