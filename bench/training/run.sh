#!/usr/bin/env bash
# Training parity: PyTorch trains the four models of parity.py (and times its steps), then
# lazyfuse-train-parity trains them from the same weights and compares the loss curves.
#   bench/training/run.sh [BUILD_DIR]    (default build; PYTHON picks the interpreter with torch)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"${PYTHON:-/usr/bin/python3}" "$here/parity.py" "$dir"
"$build/bench/lazyfuse-train-parity" "$dir"
