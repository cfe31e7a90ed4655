#!/usr/bin/env bash
# The GPU machine's figures (docs/cuda.md, bench/results/cuda.md, docs/torch.md), in one run on a
# machine with an NVIDIA GPU and a python3 that has torch 2.x with CUDA. Two lanes side by side:
#   cuda   the cuda tests, a GPU campaign beside the same campaign on the CPU, cuda-missing-sync
#          detection, CPU-vs-CUDA node by node, the engine-launch and end-to-end benches, the
#          ULP table;
#   torch  corpus/torch replayed on this torch (tests/torch/torch2_test.sh checks), torch's own
#          exp/tanh/sigmoid/sqrt against correctly rounded results (measure_ulps.py), the torch
#          campaign over every path, and the export and partition paths with tensors on the GPU.
# Each step's output is a file in OUTDIR and its exit status and seconds a line of
# OUTDIR/steps.txt; a failing step is recorded and the next one still runs. Every step has a
# time limit, so the run ends inside its budget with what it measured.
#   bash scripts/gpu-figures.sh OUTDIR
#   BUILD=build-cuda   a Release build with -DFLATCHECK_CUDA=ON (built here unless PREBUILT=1)
#   JOBS=$(nproc)      build parallelism, and the CPU campaign's jobs
#   CASES=20000        the fuzz campaigns' cases
#   TORCH_CASES=5000   the torch campaign's cases (it stops starting programs at TORCH_TIME s)
#   TORCH_TIME=300     TORCH_JOBS=$(nproc)-7      LANES=cuda,torch (either or both)
#   TORCH_SEED=1       TORCH_FIRST=0   the torch campaign's cases FIRST.. of that seed (a later
#                      run goes on where an earlier one stopped: torch_campaign.py --first)
#   TORCH_PATH_TIME=90 a path running longer on one program is stopped and counted skipped
#                      (torch_campaign.py --path-time), so no program outlasts the run's budget
#   SKIP=bench,ulp     steps not to run (comma-separated step names)
#   ARCHIVE=FILE       also pack OUTDIR into FILE (.tar.gz) at the end
# With a build that carries no CTest files (binaries copied from another machine), the cuda
# tests run as the cuda_test binary itself.
# The C++ packages (docs/cuda.md) are found through CMAKE_PREFIX_PATH as usual.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bash scripts/gpu-figures.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
BUILD=${BUILD:-build-cuda}
JOBS=${JOBS:-$(nproc)}
CASES=${CASES:-20000}
TORCH_CASES=${TORCH_CASES:-5000}
TORCH_TIME=${TORCH_TIME:-300}
TORCH_JOBS=${TORCH_JOBS:-$(($(nproc) > 8 ? $(nproc) - 7 : 2))}
LANES=${LANES:-cuda,torch}
TORCH_SEED=${TORCH_SEED:-1}
TORCH_FIRST=${TORCH_FIRST:-0}
TORCH_PATH_TIME=${TORCH_PATH_TIME:-90}
SKIP=${SKIP:-}
bin=$BUILD/bin
step() {  # step NAME COMMAND...: runs it with its output in OUTDIR/NAME.txt, times it
  local name=$1 start rc
  shift
  case ",$SKIP," in *,"$name",*)
    printf '%-18s skipped (SKIP)\n' "$name" | tee -a "$out/steps.txt"
    return 0 ;;
  esac
  start=${EPOCHREALTIME/./}
  "$@" > "$out/$name.txt" 2>&1
  rc=$?
  printf '%-18s exit %3d  %6d s  %s\n' "$name" "$rc" $(((${EPOCHREALTIME/./} - start) / 1000000)) \
    "$*" | tee -a "$out/steps.txt"
  return 0
}
{
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nvidia-smi | grep -m1 "CUDA Version"
  nvcc --version | tail -2
  echo "cpu: $(nproc) x $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(uname -sr)"
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no cuda device")'
  git log -1 --format='commit %h %s' 2>/dev/null
} > "$out/device.txt" 2>&1
if [ "${PREBUILT:-0}" != 1 ]; then
  step configure cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLATCHECK_CUDA=ON
  step build cmake --build "$BUILD" -j "$JOBS"
fi

cuda_lane() {
  if [ -f "$BUILD/CTestTestfile.cmake" ]; then
    step ctest-cuda timeout 150 ctest --test-dir "$BUILD" -L cuda --output-on-failure
  else
    step ctest-cuda timeout 150 "$bin/cuda_test"
  fi
  # A GPU case is launch-bound (about 25 cases/s a thread on an H200, bench/results/cuda.md).
  step fuzz-cuda timeout 300 "$bin/flatcheck" fuzz --device cuda --cases "$CASES" --seed 1 \
    --jobs 8 --out '' --json
  step detect-sync timeout 90 "$bin/flatcheck" detect --fault cuda-missing-sync --device cuda \
    --seeds 5 --json
  step compare-backends timeout 90 "$bin/flatcheck" compare-backends --device cuda --cases 2000
  step bench timeout 90 "$bin/flatcheck_bench" --benchmark_filter='EngineLaunch|EndToEnd' \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
    --benchmark_out="$out/bench.json" --benchmark_out_format=json
  step ulp timeout 150 "$bin/flatcheck_ulp"
}
cpu_side() {  # the same campaign on the CPU, for the rate beside the GPU's
  step fuzz-cpu timeout 200 "$bin/flatcheck" fuzz --cases "$CASES" --seed 1 --jobs 8 --no-isolate \
    --out '' --json
}
torch_lane() {
  export FLATCHECK_TORCH_ROOT=/  # this machine's own python3 (scripts/in-torch-root)
  step torch-corpus timeout "$((TORCH_TIME + 60))" bash tests/torch/torch2_test.sh checks \
    "$bin/flatcheck" "$PWD" &
  step torch-ulps timeout 150 python3 harness/torch/measure_ulps.py &  # torch's own kernels
  # The campaigns' limits stop them with SIGTERM: each still writes its summary and results
  # (the programs under way counted not run); -k: killed 30 s later if that hangs.
  step torch-cuda-export timeout -k 30 "$((TORCH_TIME + 60))" \
    python3 harness/torch/torch_campaign.py --python python3 --flatcheck "$bin/flatcheck" \
    --cases 1000 --seed 3 --jobs 2 --device cuda --time "$TORCH_TIME" \
    --path-time "$TORCH_PATH_TIME" --no-shrink \
    --out "$out/work-torch-cuda" --markdown "$out/torch-cuda.md" &
  step torch-campaign timeout -k 30 "$((TORCH_TIME + 90))" \
    python3 harness/torch/torch_campaign.py --python python3 --flatcheck "$bin/flatcheck" \
    --cases "$TORCH_CASES" --seed "$TORCH_SEED" --first "$TORCH_FIRST" --jobs "$TORCH_JOBS" \
    --time "$TORCH_TIME" --path-time "$TORCH_PATH_TIME" --no-shrink \
    --out "$out/work-torch" --markdown "$out/torch-campaign.md"
  wait
}
case ",$LANES," in *,torch,*) torch_lane & ;; esac
case ",$LANES," in *,cuda,*) cuda_lane & cpu_side ;; esac
wait
# The failing programs of the torch campaigns, kept for triage; the rest of their work folders
# (every case and program) is regenerated by the seed.
for w in "$out"/work-torch*; do
  [ -d "$w" ] || continue
  python3 - "$w" <<'EOF'
import json, os, shutil, sys
w = sys.argv[1]
keep = os.path.join(w, "failing")
os.makedirs(keep, exist_ok=True)
lines = [json.loads(x) for x in open(os.path.join(w, "results.jsonl"))] \
    if os.path.exists(os.path.join(w, "results.jsonl")) else []
for x in lines:
    if x.get("status") in ("mismatch", "error"):
        for src in (x["program"], os.path.join(w, "cases", os.path.basename(x["program"])[:-3] + ".json")):
            if os.path.exists(src):
                shutil.copy(src, keep)
for d in ("cases", "programs"):
    shutil.rmtree(os.path.join(w, d), ignore_errors=True)
EOF
done
echo "done: $out" | tee -a "$out/steps.txt"
if [ -n "${ARCHIVE:-}" ]; then
  tar -czf "$ARCHIVE" -C "$(dirname "$out")" "$(basename "$out")"
fi
