#!/usr/bin/env bash
# One device call for the tensor-core attention (issue 21): PyTorch's SDPA, lazyfuse-programs'
# attention rows and transformer block, the attention tests. Run from /work/main with the bundle of
# bench/pack_gpu.sh copied to carry/attn (with this script and sdpa_peer.py).
set -u
d=carry/attn
export LD_LIBRARY_PATH=$d/lib
lt=$(find / -name 'libcublasLt.so.1[23]' -not -path '*/proc/*' 2>/dev/null | head -n 1)
[ -n "$lt" ] && export LD_LIBRARY_PATH="$(dirname "$lt"):$LD_LIBRARY_PATH"
export LAZYFUSE_CACHE_DIR=$(mktemp -d)
out=${OUT:-/tmp}
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== SDPA"; timeout 40 python3 $d/sdpa_peer.py 2>&1 | tail -8
echo "== lazyfuse-programs attention"
timeout 45 $d/lazyfuse-programs --device cuda --only "attention B8" > $out/programs_attention.log 2>&1; echo rc $?
grep -E "^\| attention" $out/programs_attention.log | head -8
echo "== the same with LAZYFUSE_ATTENTION_ROWS=64 (one m-tile a warp)"
LAZYFUSE_ATTENTION_ROWS=64 timeout 45 $d/lazyfuse-programs --device cuda --only "attention B8" > $out/programs_attention64.log 2>&1; echo rc $?
grep -E "^\| attention" $out/programs_attention64.log | head -8
echo "== tests"
timeout ${TEST_TIMEOUT:-80} $d/codegen_tests --gtest_brief=1 \
  --gtest_filter='Attention*:AttentionTc*:CudaAttention*:LibraryPlan.Attention*' > $out/tests.log 2>&1; echo rc $?
grep -vE "^\[       OK|^\[ RUN" $out/tests.log | tail -60
echo "== lazyfuse-programs transformer_block B8"
timeout 40 $d/lazyfuse-programs --device cuda --only "transformer_block B8" > $out/programs_transformer.log 2>&1; echo rc $?
grep -E "^\| transformer" $out/programs_transformer.log | head -4
echo "== AttentionTc tests with LAZYFUSE_ATTENTION_ROWS=64"
LAZYFUSE_ATTENTION_ROWS=64 timeout 30 $d/codegen_tests --gtest_brief=1 --gtest_filter='AttentionTc*' 2>&1 | grep -vE "^\[lazyfuse" | tail -15
date -u
