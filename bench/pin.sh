# Sourced by the bench scripts: "${PIN[@]}" goes before every timed single-thread run, so runs
# that are compared share one CPU. The CPUs of a cloud machine need not run at the same speed
# (on this project's 2-core machine one took 1.7x the time of the other for the same
# benchmark), and an unpinned run compares CPUs, not code.
#   PIN_CPU=0 (the default) pins to CPU 0; PIN_CPU=none runs unpinned.
PIN_CPU=${PIN_CPU:-0}
PIN=()
if [ "$PIN_CPU" != none ]; then
  if command -v taskset > /dev/null; then
    PIN=(taskset -c "$PIN_CPU")
  else
    echo "bench: taskset is missing (util-linux); runs are not pinned to one CPU" >&2
  fi
fi
# For the reports' machine line.
PIN_NOTE="single-thread runs pinned to CPU $PIN_CPU"
if [ ${#PIN[@]} -eq 0 ]; then PIN_NOTE="single-thread runs not pinned"; fi
