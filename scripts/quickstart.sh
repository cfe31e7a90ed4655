#!/usr/bin/env bash
# The quick start's first command: install dependencies (Debian packages), build, and run a
# short default fuzz campaign (about 30 seconds) that ends in a summary.
#   FLATCHECK_FUZZ_SECONDS=N   campaign length (default 30)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
echo
echo "== flatcheck fuzz --time ${FLATCHECK_FUZZ_SECONDS:-30} --jobs 2"
set +e
build/bin/flatcheck fuzz --time "${FLATCHECK_FUZZ_SECONDS:-30}" --jobs 2 --seed "${FLATCHECK_SEED:-1}"
rc=$?
set -e
if [ "$rc" -eq 1 ]; then
  echo "flatcheck found failures; their minimized repros are in corpus/found/"
elif [ "$rc" -ne 0 ]; then
  exit "$rc"
fi
