#!/usr/bin/env bash
# One device call for attention (issue 21): PyTorch's SDPA, lazyfuse-programs' attention rows and
# the large transformer block, the attention tests, then (TESTS=all) every GPU test suite. Run from
# the repository root with the bundle of bench/pack_gpu.sh in carry/gpu.
set -u
d=${CARRY:-carry/gpu}
export LD_LIBRARY_PATH=$d/lib
lt=$(find / -name 'libcublasLt.so.1[23]' -not -path '*/proc/*' 2>/dev/null | head -n 1)
[ -n "$lt" ] && export LD_LIBRARY_PATH="$(dirname "$lt"):$LD_LIBRARY_PATH"
dnn=$(find / -name 'libcudnn.so.9' -not -path '*/proc/*' 2>/dev/null | head -n 1)
[ -n "$dnn" ] && export LD_LIBRARY_PATH="$(dirname "$dnn"):$LD_LIBRARY_PATH"
export LAZYFUSE_CACHE_DIR=$(mktemp -d)
export LAZYFUSE_GOLDEN_DIR="$PWD/tests/codegen/golden"
out=${OUT:-/tmp}
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== attention tests"
timeout ${TEST_TIMEOUT:-90} $d/codegen_tests --gtest_brief=1 \
  --gtest_filter='Attention*:AttentionTc*:CudaAttention.Shared*:LibraryPlan.Attention*' > $out/tests_attention.log 2>&1; echo rc $?
grep -vE "^\[       OK|^\[ RUN|^\[lazyfuse" $out/tests_attention.log | tail -40
[ "${SDPA:-1}" = 1 ] && { echo "== SDPA"; timeout 60 python3 bench/attn/sdpa_peer.py 2>&1 | tail -14; }
echo "== lazyfuse-programs attention"
timeout 90 $d/lazyfuse-programs --device cuda --only "attention B" > $out/programs_attention.log 2>&1; echo rc $?
grep -E "^\| attention" $out/programs_attention.log | head -12
echo "== lazyfuse-programs transformer_block B8"
timeout 60 $d/lazyfuse-programs --device cuda --only "transformer_block B8" > $out/programs_transformer.log 2>&1; echo rc $?
grep -E "^\| transformer" $out/programs_transformer.log | head -4
if [ "${TESTS:-}" = all ]; then
  for t in runtime_tests codegen_tests frontend_tests; do
    echo "== $t"
    # The NVRTC compile-only tests of the attention kernels run on the build machine (80 s of compiles).
    timeout ${SUITE_TIMEOUT:-150} $d/$t --gtest_brief=1 --gtest_filter=-CudaAttention.Every* > $out/$t.log 2>&1; echo rc $?
    grep -E "^\[  FAILED|^\[  PASSED|^\[==========\]" $out/$t.log | tail -30
  done
fi
date -u
