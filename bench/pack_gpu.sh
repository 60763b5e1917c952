#!/usr/bin/env bash
# Builds what bench/run_gpu.sh runs, with LLVM linked statically into the plugin liblazyfuse-llvm.so
# (the GPU machine has no LLVM 19), and gathers it, stripped, with the shared libraries it needs that the
# GPU machine lacks (abseil), into carry/gpu (ignored by git; name it in the device call's carry). The
# benchmarks are built without -march=native (LAZYFUSE_BENCH_NATIVE=OFF): the GPU host's CPU may lack
# this one's instruction sets.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-gpu}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLAZYFUSE_LLVM_STATIC=ON -DLAZYFUSE_BENCH_NATIVE=OFF >/dev/null
ninja -C "$build" lazyfuse lazyfuse-llvm runtime_tests codegen_tests frontend_tests lazyfuse-bench-gpu lazyfuse-bench-cpu lazyfuse-programs \
  lazyfuse-dlpack-demo lazyfuse-bench-interop lazyfuse-torch-parity lazyfuse-train-parity lazyfuse-bench-host-numbers lazyfuse-bench-cg lazyfuse-bench-decoder lazyfuse-bench-few-rows lazyfuse-bench-train lazyfuse-bench-linalg lazyfuse-bench-sweep
rm -rf carry/gpu
mkdir -p carry/gpu/lib
cp "$build"/tests/{runtime_tests,codegen_tests,frontend_tests,lazyfuse-torch-parity} "$build"/bench/lazyfuse-train-parity \
  "$build"/bench/lazyfuse-bench-{gpu,cpu,host-numbers,cg,decoder,few-rows,train,linalg,sweep} "$build"/bench/lazyfuse-programs \
  "$build"/bench/lazyfuse-bench-interop "$build"/bench/liblazyfuse-dlpack-demo.so carry/gpu/
cp -L "$build"/liblazyfuse.so.0 "$build"/liblazyfuse-llvm.so carry/gpu/lib/  # the plugin sits next to the library
strip --strip-unneeded carry/gpu/lib/*.so* carry/gpu/*_tests carry/gpu/lazyfuse-bench-* carry/gpu/lazyfuse-programs \
  carry/gpu/lazyfuse-torch-parity carry/gpu/lazyfuse-train-parity \
  carry/gpu/liblazyfuse-dlpack-demo.so
du -sh carry/gpu
# The device call's carry is limited to 64 MiB with the working tree: carry/pkg/gpu.tgz is the same
# folder compressed (about 24 MiB); unpack it there with `tar -xzf carry/pkg/gpu.tgz -C carry`.
mkdir -p carry/pkg
tar -czf carry/pkg/gpu.tgz -C carry gpu
du -sh carry/pkg/gpu.tgz
