#!/usr/bin/env bash
# CTest `torch-campaign/dying-bridge` (label unit, needs no torch): a bridge process that ends
# before its summary line leaves programs unchecked, so the campaign must say so and exit 2,
# never report the programs that did run as the whole result.
#   campaign_test.sh FLATCHECK_BIN SOURCE_DIR
set -uo pipefail
bin=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$src/harness/torch/torch_campaign.py" --cases 3 --jobs 2 --flatcheck "$bin" \
  --out "$work/out" --no-shrink --python "python3 -c 'import sys; sys.exit(1)'" \
  >"$work/log" 2>&1
rc=$?
cat "$work/log"
if [ "$rc" -ne 2 ] || ! grep -q "before its summary line" "$work/log"; then
  echo "FAIL: a bridge that died gave exit $rc, expected 2 and the reason"
  exit 1
fi
echo "PASS: a dying bridge is exit 2 with the reason"
