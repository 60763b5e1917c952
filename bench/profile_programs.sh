#!/usr/bin/env bash
# Kernel tables of whole programs on the GPU machine: for each PROGRAMS_ONLY item (comma list of
# substrings, as bench/run_gpu.sh), lazyfuse-programs with LAZYFUSE_PROGRAMS_PROFILE=1 prints the
# fused steady state's profile (kernels, launches, time, x floor); the generated sources of every
# new kernel go to $OUT/dump-<item>/. Timings of a profiled run include the per-launch events: read
# the rows' ms from an unprofiled run.
#   PROGRAMS_ONLY="kmeans_step N1048576,jacobi2d 2048" bench/profile_programs.sh carry/gpu
set -uo pipefail
dir=${1:-carry/gpu}
out=${OUT:-/tmp/lazyfuse-profile}
mkdir -p "$out"
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for lib in 'libcublasLt.so.1[23]' 'libcudnn.so.9'; do
  f=$(find / -name "$lib" -not -path '*/proc/*' 2>/dev/null | head -n 1)
  [ -n "$f" ] && export LD_LIBRARY_PATH="$(dirname "$f"):$LD_LIBRARY_PATH"
done
export LAZYFUSE_PROGRAMS_PROFILE=1 LAZYFUSE_PROFILE_FLOOR_GBS=${LAZYFUSE_PROFILE_FLOOR_GBS:-3000}
IFS=, read -r -a items <<<"${PROGRAMS_ONLY:?name the programs}"
for item in "${items[@]}"; do
  tag=$(echo "$item" | tr -c 'A-Za-z0-9_\n' _)
  export LAZYFUSE_CACHE_DIR=$(mktemp -d) LAZYFUSE_DUMP_DIR="$out/dump-$tag"
  mkdir -p "$LAZYFUSE_DUMP_DIR"
  echo "== $item"
  timeout "${PROFILE_TIMEOUT:-120}" "$dir/lazyfuse-programs" --device cuda --quick --only "$item" 2>&1 |
    grep -v '^\s*$' | tee "$out/profile-$tag.log" | grep -A40 'profile of' | head -n 60
done
