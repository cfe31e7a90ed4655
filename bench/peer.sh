#!/usr/bin/env bash
# flatcheck against the peer baseline (../shared/peer_fx: the same partition -> positional
# inline -> save/load -> bitwise compare pipeline over real torch.fx in Python), one thread
# each, interleaved in one run at N = 8, 32, 128 flat nodes (peer --nodes N, flatcheck
# --max-nodes N). Writes bench/results/peer.md. Not a test: nothing is asserted.
#   PEER=../shared/peer_fx/peer_fx.py  BUILD=build  ROUNDS=2  SECONDS_EACH=10
#   PIN_CPU=0: both run on this CPU (bench/pin.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/pin.sh
PEER=${PEER:-../shared/peer_fx/peer_fx.py}
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-2}
SECONDS_EACH=${SECONDS_EACH:-10}
[ -f "$PEER" ] || { echo "bench/peer.sh: no peer at $PEER (set PEER=...)" >&2; exit 2; }
[ -x "$BUILD/bin/flatcheck" ] || { echo "bench/peer.sh: build $BUILD/bin/flatcheck first" >&2; exit 2; }
out=$(mktemp)
for round in $(seq 1 "$ROUNDS"); do
  for n in 8 32 128; do
    # The peer runs a case count sized to about SECONDS_EACH (its rate falls with run length,
    # so every round uses the same count); flatcheck runs for SECONDS_EACH.
    case $n in 8) pc=$((SECONDS_EACH * 200)) ;; 32) pc=$((SECONDS_EACH * 80)) ;; *) pc=$((SECONDS_EACH * 20)) ;; esac
    p=$("${PIN[@]}" /usr/bin/python3 "$PEER" --mode loop --cases "$pc" --nodes "$n" --seed "$round" | tail -1)
    # Exit 1 (a finding, such as a case past the 10 s timeout) still ends in the JSON line.
    f=$("${PIN[@]}" "$BUILD/bin/flatcheck" fuzz --time "$SECONDS_EACH" --seed "$round" --max-nodes "$n" \
        --jobs 1 --out '' --quiet --json | tail -1) || true
    python3 - "$n" "$p" "$f" >> "$out" <<'PY'
import json, sys
n, p, f = int(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
nodes = f["coverage"]["nodes"] / max(f["cases"], 1)
flat = f["coverage"]["flat_nodes"] / max(f["cases"], 1)
print(json.dumps({"n": n, "peer": p["cases_per_sec"], "flatcheck": f["cases_per_sec"],
                  "nodes": nodes, "flat": flat, "findings": len(f["findings"])}))
PY
    echo "peer.sh: round $round, N=$n: $(tail -1 "$out")" >&2
  done
done
python3 - "$out" "$(git rev-parse --short HEAD)" "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $PIN_NOTE" "$ROUNDS" "$SECONDS_EACH" > bench/results/peer.md <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("# flatcheck against the torch.fx peer\n")
print(f"command: `ROUNDS={sys.argv[4]} SECONDS_EACH={sys.argv[5]} bash bench/peer.sh` (peer and "
      "flatcheck interleaved, one thread each; flatcheck's default isolated campaign)  ")
print(f"commit: `{sys.argv[2]}`  ")
print(f"machine: {sys.argv[3]}\n")
print("| N (peer --nodes / flatcheck --max-nodes) | peer cases/s | flatcheck cases/s | flatcheck eager nodes/case | ratio | flatcheck ns per eager node | flatcheck flat nodes/case | flat nodes/s ratio | |")
print("|---|---|---|---|---|---|---|---|---|")
for n in (8, 32, 128):
    r = [x for x in rows if x["n"] == n]
    peer = statistics.mean(x["peer"] for x in r)
    fc = statistics.mean(x["flatcheck"] for x in r)
    nodes = statistics.mean(x["nodes"] for x in r)
    flat = statistics.mean(x["flat"] for x in r)
    found = sum(x["findings"] for x in r)
    note = f"{found} finding(s) in flatcheck's runs" if found else ""
    print(f"| {n} | {peer:.1f} | {fc:.1f} | {nodes:.1f} | {fc / peer:.2f}x | {1e9 / (fc * nodes):.0f} | "
          f"{flat:.1f} | {fc * flat / (peer * n):.2f}x | {note} |")
print("\nGoal (issue: performance, decided): >= 60x the peer per flat node (the flat nodes/s ratio) "
      "at every N; the per-case ratio is beside it.")
print("\nThe peer's case is exactly N call_function nodes in one flat graph. flatcheck's `--max-nodes N` "
      "bounds each graph of a module tree, and calls repeat children, so its case is larger: flat "
      "nodes are the call_function nodes of its exported program (every call inlined), the peer's N "
      "counted the same way. The flat nodes/s ratio compares nodes checked per second; the ratio "
      "column compares cases, as the goal does.")
PY
cat bench/results/peer.md
rm -f "$out"
