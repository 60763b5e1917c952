#!/usr/bin/env bash
# One device call: where the GPU time of ResNet-18 (B32 224x224) goes in LazyFuse (LAZYFUSE_PROFILE
# table; LAZYFUSE_LOG's convolution paths) and in PyTorch eager (torch.profiler), float32 and
# bfloat16. Run from the repository root with bench/pack_gpu.sh's bundle in carry/gpu.
set -u
d=${CARRY:-carry/gpu}
out=${OUT:-/tmp}
export LD_LIBRARY_PATH=$d/lib
for lib in 'libcublasLt.so.1[23]' 'libcudnn.so.9'; do
  f=$(find / -name "$lib" -not -path '*/proc/*' 2>/dev/null | head -n 1)
  [ -n "$f" ] && export LD_LIBRARY_PATH="$(dirname "$f"):$LD_LIBRARY_PATH"
done
export LAZYFUSE_CACHE_DIR=$(mktemp -d)
date -u
for dt in float32 bfloat16; do
  echo "== LazyFuse resnet18 $dt: LAZYFUSE_PROFILE"
  LAZYFUSE_PROFILE=1 timeout 150 $d/lazyfuse-programs --device cuda --quick --only "resnet18 B32_224x224 $dt" \
    > $out/r18_$dt.log 2> $out/r18_prof_$dt.txt
  grep -E "^\| resnet18" $out/r18_$dt.log
  head -40 $out/r18_prof_$dt.txt
  echo "== LazyFuse resnet18 $dt: convolution paths (LAZYFUSE_LOG=1, one flush)"
  LAZYFUSE_LOG=1 timeout 100 $d/lazyfuse-programs --device cuda --quick --only "resnet18 B32_224x224 $dt" 2>&1 |
    grep -E 'conv2d|pool' | sed -E 's/group [0-9]+: //' | sort | uniq -c | sort -rn | head -30
done
echo "== PyTorch eager"
timeout 120 python3 bench/conv/resnet_profile.py 2>&1 | tail -36
date -u
