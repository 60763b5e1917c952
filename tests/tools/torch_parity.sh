#!/usr/bin/env bash
# Autograd parity with PyTorch: torch_parity.py writes PyTorch 1.13's outputs, gradients and
# optimizer trajectories, then lazyfuse-torch-parity (the program given) compares LazyFuse's.
# Exit status 77 (skipped) when no python3 here has torch (apt-get install python3-torch).
set -u
here=$(dirname "$0")
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c "import torch, numpy" 2>/dev/null; then
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
    "$py" "$here/torch_parity.py" "$dir" || exit 1
    "$1" "$dir"
    exit $?
  fi
done
echo "PyTorch is not installed (apt-get install python3-torch): skipped"
exit 77
