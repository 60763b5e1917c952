#!/usr/bin/env bash
# One call on the GPU machine does everything (../shared/GPU.md): the test suites on the GPU (the
# default device is CUDA there, so every fused-vs-reference test runs through the CUDA backend),
# PyTorch's baselines and copy bandwidth, then LazyFuse's GPU benchmark. Logs go to $OUT, with
# gpu_torch.csv and gpu_lazyfuse.csv: copy them to bench/results/ and run bench/plot.py.
#   bench/run_gpu.sh CARRY_DIR     (CARRY_DIR holds the binaries and their libraries, see
#                                   bench/pack_gpu.sh)
#   bench/run_gpu.sh CARRY_DIR tests   the test suites only, each failure's first lines
#   bench/run_gpu.sh CARRY_DIR programs
#       the whole-program suite only (issue 20; one device call of its own, the two do not fit in one):
#       lazyfuse-programs on CUDA (fused, unfused, first calls in a fresh cache and a second process),
#       then bench/programs_peers.py (PyTorch eager, eager with SDPA, torch.compile, torch.compile
#       reduce-overhead, and the check of LazyFuse's outputs); writes programs_gpu.csv to $OUT (copy it
#       to bench/results/). PROGRAMS_TORCH_WARM=1 also times torch.compile's first call in a second
#       process (more compile time).
set -uo pipefail
dir=${1:-carry/gpu}
suite=${2:-kernels}
out=${OUT:-/tmp/lazyfuse-gpu}
mkdir -p "$out"
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LAZYFUSE_GOLDEN_DIR="$PWD/tests/codegen/golden"  # the test binaries were built elsewhere
# cuBLASLt (the matmul path) comes with PyTorch's CUDA wheels when no toolkit is installed.
lt=$(find / -name 'libcublasLt.so.1[23]' -not -path '*/proc/*' 2>/dev/null | head -n 1)
[ -n "$lt" ] && export LD_LIBRARY_PATH="$(dirname "$lt"):$LD_LIBRARY_PATH"
echo "cuBLASLt: ${lt:-not found}"
# cuDNN 9 (the convolution path) likewise: PyTorch's nvidia-cudnn wheel has libcudnn.so.9 and the
# libcudnn_cnn/graph/engines libraries it loads from its own folder.
dnn=$(find / -name 'libcudnn.so.9' -not -path '*/proc/*' 2>/dev/null | head -n 1)
[ -n "$dnn" ] && export LD_LIBRARY_PATH="$(dirname "$dnn"):$LD_LIBRARY_PATH"
echo "cuDNN: ${dnn:-not found (convolutions take the generated kernel)}"
# cuSOLVER (lf::linalg) likewise: libcusolver.so.12 (CUDA 13) or .11 (CUDA 12), with the libcublas and
# libnvJitLink of its own folder.
sol=$(find / -name 'libcusolver.so.1[12]' -not -path '*/proc/*' 2>/dev/null | head -n 1)
[ -n "$sol" ] && export LD_LIBRARY_PATH="$(dirname "$sol"):$LD_LIBRARY_PATH"
echo "cuSOLVER: ${sol:-not found (linalg runs on the host)}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
status=0
if [ "$suite" = programs ]; then
  work=$(mktemp -d /tmp/lazyfuse-programs-XXXXXX)
  echo "== LazyFuse whole programs (CUDA)"
  # PROGRAMS_SKIP: programs to leave out (default none); PROGRAMS_ONLY: only these (a comma list of
  # substrings of 'name config dtype', for both LazyFuse and the peers: the suite no longer fits one
  # device call, so it runs in parts). PROGRAMS_TIMEOUT / PEERS_TIMEOUT (250 / 300 s) and
  # PROGRAMS_COMPILE_BUDGET (140 s of torch.compile first calls). Float32 convolutions:
  # LAZYFUSE_CONV_TF32 (default 1: TF32, PyTorch's default allow_tf32) for LazyFuse and, through
  # programs_peers.py, the peers.
  export LAZYFUSE_CONV_TF32=${LAZYFUSE_CONV_TF32:-1}
  only=(); [ -n "${PROGRAMS_ONLY-}" ] && only=(--only "$PROGRAMS_ONLY")
  timeout "${PROGRAMS_TIMEOUT:-250}" "$dir/lazyfuse-programs" --device cuda --skip "${PROGRAMS_SKIP-}" "${only[@]}" \
    --csv "$work/lazyfuse.csv" --dump "$work/dump" 2>&1 | tee "$out/programs_lazyfuse.log" || status=1
  cp "$work/lazyfuse.csv" "$out/programs_gpu_lazyfuse.csv" 2>/dev/null
  echo "== PyTorch peers and the check"
  warm=(); [ "${PROGRAMS_TORCH_WARM:-0}" = 1 ] && warm=(--warm-process)
  PYTHONUNBUFFERED=1 timeout "${PEERS_TIMEOUT:-300}" python3 bench/programs_peers.py --device cuda \
    --lazyfuse-csv "$work/lazyfuse.csv" --dump "$work/dump" --csv "$out/programs_gpu.csv" "${only[@]}" \
    --compile-budget "${PROGRAMS_COMPILE_BUDGET:-140}" "${warm[@]}" 2>&1 |
    tee "$out/programs_peers.log" || status=1
  rm -rf "$work"
  exit $status
fi
# The suites in shards side by side (GTEST_TOTAL_SHARDS): codegen_tests alone took over 420 s in
# one process on the H200; the GPU machine has 16 cores, and the shards share the one GPU.
# TEST_SHARDS (default 6) shards each of codegen_tests and frontend_tests, TEST_TIMEOUT (default 420) s each.
shards=${TEST_SHARDS:-6}
pids=()
for t in runtime_tests codegen_tests frontend_tests; do
  n=$shards; [ $t = runtime_tests ] && n=1
  for ((i = 0; i < n; ++i)); do
    GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i timeout "${TEST_TIMEOUT:-420}" "$dir/$t" --gtest_brief=1 >"$out/$t.$i.log" 2>&1 &
    pids+=($!)
  done
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
for log in "$out"/*_tests.*.log; do
  echo "== $(basename "$log" .log)"
  # Each failure's first lines, then the summary.
  grep -E -A6 'Failure$|FAILED  \]|Error|terminate' "$log" | cut -c1-300 | head -n 60
  tail -n 4 "$log"
done
# `bench/run_gpu.sh DIR tests`: the test suites only (a device call of its own after a large merge).
[ "$suite" = tests ] && exit $status
echo "== matmul paths (LAZYFUSE_LOG=1)"
LAZYFUSE_LOG=1 timeout 120 "$dir/codegen_tests" --gtest_filter='Matmul.BiasRelu*:Matmul.EpiloguePatterns:Matmul.OperandLayouts*' 2>&1 |
  grep -E 'matmul|FAILED|PASSED' | sort | uniq -c | head -n 30
echo "== convolution and pooling paths (LAZYFUSE_LOG=1)"
LAZYFUSE_LOG=1 timeout 120 "$dir/codegen_tests" --gtest_filter='Conv.EveryParameter*:Conv.EveryFloatDtype*:Conv.InputViews*:Pool.EveryOption*' 2>&1 |
  grep -E 'conv2d \[|pool2d \[|FAILED|PASSED' | sed -E 's/.*(float32|float64|float16|bfloat16): //' | cut -c1-110 |
  sort | uniq -c | sort -rn | head -n 30
echo "== PyTorch tensors through DLPack (issue 24)"
# Preloaded: the library's thread-locals use the initial-exec model, which a library dlopen'ed late
# (ctypes) cannot always get ("cannot allocate memory in static TLS block").
LD_PRELOAD="$dir/lib/liblazyfuse.so.0" PYTHONUNBUFFERED=1 timeout 120 python3 bench/interop/dlpack_torch.py "$dir/liblazyfuse-dlpack-demo.so" 2>&1 |
  tee "$out/dlpack.log" || status=1
echo "== PyTorch baselines"
PYTHONUNBUFFERED=1 timeout 420 python3 bench/torch_baseline.py --csv "$out/gpu_torch.csv" 2>&1 | tee "$out/torch.log"
bw=$(sed -n 's/^COPY_GBPS=//p' "$out/torch.log")
echo "== LazyFuse GPU benchmark (copy bandwidth ${bw:-3020} GB/s)"
timeout 300 "$dir/lazyfuse-bench-gpu" "${bw:-3020}" --csv "$out/gpu_lazyfuse.csv" 2>&1 | tee "$out/bench.log"
exit $status
