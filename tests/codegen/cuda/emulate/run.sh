#!/usr/bin/env bash
# Runs the generated GPU convolution and pooling kernels on the host (emulate.cpp): writes their
# CUDA C with codegen_tests (LAZYFUSE_GOLDEN_CUDA_DIR), cuts off the prelude (the kernels' float32 and
# float64 paths use none of it), compiles with the host C++ compiler and runs.
#   run.sh CODEGEN_TESTS CXX
set -euo pipefail
tests=$1
cxx=${2:-c++}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
LAZYFUSE_CACHE_DIR=off LAZYFUSE_GOLDEN_CUDA_DIR="$work" "$tests" --gtest_filter=CudaConvKernels.CompileWithNvrtcForEveryFloatDtype >/dev/null
for k in conv2d_float32 conv2d_float64 pool2d_float32; do
  sed -n '/^#define T /,$p' "$work/lf_$k.cu" >"$work/$k.inc"
  [ -s "$work/$k.inc" ] || { echo "lf_$k.cu: no '#define T' line"; exit 1; }
done
"$cxx" -std=c++20 -O1 -pthread -w -I"$here" -I"$work" "$here/emulate.cpp" -o "$work/emulate"
"$work/emulate"
