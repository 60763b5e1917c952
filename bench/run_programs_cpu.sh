#!/usr/bin/env bash
# The whole-program suite on the CPU (issue 20), one command, building nothing: LazyFuse
# (build/bench/lazyfuse-programs: fused, unfused, Eigen; every program in a fresh kernel cache, then a
# second process on it) and its peers (bench/programs_peers.py: numpy and Debian's PyTorch eager,
# and the check of LazyFuse's outputs against a float64 reference). Writes
# bench/results/programs_cpu.csv (every implementation, one set of columns; bench/plot.py reads it)
# and bench/results/programs_cpu.txt (the log and the tables).
#   bench/run_programs_cpu.sh [--only SUBSTRING] [--quick]      (BUILD_DIR: default build)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BUILD_DIR:-build}/bench/lazyfuse-programs
[ -x "$bin" ] || { echo "no $bin: build it first (cmake --build build --target lazyfuse-programs)" >&2; exit 1; }
# Debian's numpy and torch live in the system python (a pyenv or venv python3 may lack them).
py=${PYTHON:-/usr/bin/python3}
"$py" -c 'import numpy, torch' 2>/dev/null || py=python3
only=() quick=()
while [ $# -gt 0 ]; do
  case $1 in
    --only) only=(--only "$2"); shift 2 ;;
    --quick) quick=(--quick); shift ;;
    *) echo "usage: $0 [--only SUBSTRING] [--quick]" >&2; exit 2 ;;
  esac
done
out=bench/results
mkdir -p "$out"
work=$(mktemp -d /tmp/lazyfuse-programs-XXXXXX)
trap 'rm -rf "$work"' EXIT
{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo ' (with local changes)')"
  lscpu | head -n 14 | sed -n '/Model name\|^CPU(s)\|Thread\|Core/p'
  echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
  "$py" -c 'import numpy, torch, sys; print(f"python {sys.version.split()[0]}, numpy {numpy.__version__}, torch {torch.__version__}")'
  echo
  LAZYFUSE_DEVICE=cpu "$bin" --device cpu --csv "$work/lazyfuse.csv" --dump "$work/dump" "${only[@]}" "${quick[@]}"
  echo
  budget=0.5; [ ${#quick[@]} -gt 0 ] && budget=0.15
  "$py" bench/programs_peers.py --device cpu --lazyfuse-csv "$work/lazyfuse.csv" --dump "$work/dump" \
    --csv "$out/programs_cpu.csv" --budget "$budget" "${only[@]}"
  echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$out/programs_cpu.txt"
