#!/usr/bin/env bash
# The CPU kernel loaders side by side in one run (issue 53): our ELF loader against LLVM ORC
# (LAZYFUSE_CPU_LOADER=elf|orc), for a program's cold start (empty persistent cache: every kernel
# compiled, the LLVM plugin loaded either way) and warm start (every kernel from the disk cache:
# the ELF loader never loads the plugin, ORC must). Wall time of whole processes, median of REPS.
#   bench/cpu_loaders.sh [build-dir] [program]   (default: build, its lazyfuse-demo)
set -euo pipefail
build=${1:-build}
program=${2:-$build/lazyfuse-demo}
reps=${REPS:-7}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo $(((t1 - t0) / 1000000)); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
echo "$(date -u +%FT%TZ) $(uname -m), $(nproc) cores, $program, median of $reps"
for loader in elf orc; do
  cold=$(for i in $(seq "$reps"); do rm -rf "$tmp/c"; LAZYFUSE_CACHE_DIR=$tmp/c LAZYFUSE_CPU_LOADER=$loader ms "$program"; done | median)
  warm=$(for i in $(seq "$reps"); do LAZYFUSE_CACHE_DIR=$tmp/c LAZYFUSE_CPU_LOADER=$loader ms "$program"; done | median)
  printf '%-4s cold start %6s ms   warm start (all kernels from disk) %6s ms\n' "$loader" "$cold" "$warm"
done
