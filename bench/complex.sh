#!/usr/bin/env bash
# Issue 49's complex programs, LazyFuse (fused and unfused) and numpy in one run.
#   bench/complex.sh [BIN_DIR]   (default build/bench)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../build/bench}
"$bin/lazyfuse-bench-complex"
"${PYTHON:-/usr/bin/python3}" "$here/complex_numpy.py"
