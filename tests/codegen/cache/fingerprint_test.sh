#!/usr/bin/env bash
# The code-generator fingerprint (cmake/codegen_sources.py) covers every source that shapes
# generated code and none that does not, and the build used that set.
# usage: fingerprint_test.sh SOURCE_DIR BUILD_DIR
set -u
root=$1
build=$2
status=0
list=$(python3 "$root/cmake/codegen_sources.py" "$root") || { echo "codegen_sources.py failed"; exit 1; }
fail() { echo "fingerprint: $*"; status=1; }

# Everything that emits or compiles code, and the analyses and tables it reads.
must=(codegen/ir/ops.inc codegen/ir/op.h codegen/kir/kernel_ir.h codegen/kir/kernel_ir.cpp codegen/kir/row_plan.cpp
      codegen/kir/split.cpp codegen/cuda/emit.cpp codegen/cuda/emit_analysis.cpp codegen/cuda/ops.cpp
      codegen/cuda/nvrtc.cpp codegen/cpu/emit_options.h codegen/cpu/plugin_api.h)
for f in "$root"/codegen/cpu/llvm/* "$root"/codegen/cuda/emit*.cpp; do must+=("${f#"$root"/}"); done
for f in "${must[@]}"; do grep -qxF "$f" <<<"$list" || fail "$f shapes generated code but is left out"; done

# Running, caching and recording kernels shapes no code: editing them keeps users' caches valid.
for f in codegen/exec/executor.cpp codegen/exec/replay.cpp codegen/cache/kernel_cache.cpp codegen/cache/disk_cache.cpp \
         codegen/backend/kernel.cpp codegen/fuse/fuser.cpp codegen/cpu/backend.cpp codegen/cuda/backend.cpp \
         codegen/cpu/elf_loader.cpp; do
  grep -qxF "$f" <<<"$list" && fail "$f is in the fingerprint but shapes no generated code"
done

# The closure follows includes: a header an emitter includes, and the .cpp beside it, join the set.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/codegen/cuda" "$tmp/codegen/kir"
printf '#include "codegen/kir/extra.h"\n' >"$tmp/codegen/cuda/emit.cpp"
printf '#pragma once\n' >"$tmp/codegen/kir/extra.h"
printf 'int x;\n' >"$tmp/codegen/kir/extra.cpp"
printf 'int y;\n' >"$tmp/codegen/kir/unrelated.cpp"
got=$(python3 "$root/cmake/codegen_sources.py" "$tmp" | tr '\n' ' ')
[ "$got" = "codegen/cuda/emit.cpp codegen/kir/extra.cpp codegen/kir/extra.h " ] ||
  fail "include closure: got '$got'"

# The build fingerprinted exactly this set.
if ! diff <(echo "$list") "$build/generated/codegen_sources.txt" >/dev/null; then
  fail "the build's list ($build/generated/codegen_sources.txt) differs: re-run cmake"
fi
[ $status -eq 0 ] && echo "fingerprint: ok ($(wc -l <<<"$list") sources)"
exit $status
