#!/usr/bin/env bash
# CTest `scripts/gpu-figures` (label unit, needs no GPU and no torch): scripts/gpu-figures.sh
# reads its switches. Stand-ins for the binaries and for python3 record how they were called:
# SKIP leaves its steps out (and says so in steps.txt), a build without CTest files runs the
# cuda tests as the cuda_test binary, TORCH_SEED, TORCH_FIRST and TORCH_PATH_TIME reach the torch
# campaign as --seed, --first and --path-time, and ARCHIVE packs the output folder.
#   gpu_figures_test.sh SOURCE_DIR
set -uo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/stub" "$work/build/bin"
for b in flatcheck cuda_test flatcheck_bench flatcheck_ulp; do
  printf '#!/bin/sh\necho "%s $*" >> "%s/calls"\n' "$b" "$work" >"$work/build/bin/$b"
done
printf '#!/bin/sh\necho "python3 $*" >> "%s/calls"\n' "$work" >"$work/stub/python3"
chmod +x "$work"/build/bin/* "$work/stub/python3"
PATH="$work/stub:$PATH" LANES=cuda,torch PREBUILT=1 BUILD="$work/build" CASES=7 \
  SKIP=bench,torch-cuda-export,torch-corpus TORCH_SEED=9 TORCH_FIRST=300 TORCH_PATH_TIME=45 \
  ARCHIVE="$work/out.tar.gz" \
  bash "$src/scripts/gpu-figures.sh" "$work/out" >"$work/log" 2>&1
rc=$?
cat "$work/log"
fail=0
expect() {  # expect WHAT COMMAND...: the check, named
  local what=$1
  shift
  if ! "$@"; then
    echo "FAIL: $what"
    fail=1
  fi
}
expect "the run exits 0 (got $rc)" [ "$rc" -eq 0 ]
expect "SKIP=bench: steps.txt says the bench was skipped" \
  grep -q '^bench  *skipped (SKIP)' "$work/out/steps.txt"
expect "SKIP=bench: the bench binary was not run" \
  bash -c "! grep -q '^flatcheck_bench' '$work/calls'"
expect "SKIP=torch-cuda-export: no campaign with --device cuda" \
  bash -c "! grep -q 'torch_campaign.py.*--device cuda' '$work/calls'"
expect "the steps not skipped run: ulp" grep -q '^flatcheck_ulp' "$work/calls"
expect "no CTest files: the cuda tests run as cuda_test" grep -q '^cuda_test' "$work/calls"
expect "CASES reaches the GPU campaign" \
  grep -q '^flatcheck fuzz --device cuda --cases 7 ' "$work/calls"
expect "TORCH_SEED and TORCH_FIRST reach the torch campaign" \
  grep -q 'torch_campaign.py .*--seed 9 --first 300 ' "$work/calls"
expect "TORCH_PATH_TIME reaches the torch campaign" \
  grep -q 'torch_campaign.py .*--path-time 45 ' "$work/calls"
expect "ARCHIVE packs the output folder" \
  bash -c "tar -tzf '$work/out.tar.gz' | grep -q '^out/steps.txt$'"
[ "$fail" -eq 0 ] && echo "PASS: gpu-figures.sh reads SKIP, TORCH_SEED, TORCH_FIRST, TORCH_PATH_TIME, ARCHIVE, CASES"
exit "$fail"
