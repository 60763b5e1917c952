#!/usr/bin/env bash
# Dependencies point one way: frontend -> codegen -> runtime. A lower layer that includes a higher
# one fails this test, as does a public header that shows LLVM or CUDA types.
set -u
root=${1:-.}
status=0
check() {  # folder, forbidden include pattern, reason
  local hits
  hits=$(grep -rnE "#include [<\"]($2)" "$root/$1" 2>/dev/null)
  if [ -n "$hits" ]; then
    echo "layering: $1/ must not include $2 ($3):"
    echo "$hits"
    status=1
  fi
}
check runtime 'codegen/|frontend/|lazyfuse/tensor.h|lazyfuse/ops.h' "runtime knows no IR and no Tensor"
check codegen 'frontend/|lazyfuse/tensor.h|lazyfuse/ops.h' "codegen knows no Tensor"
check include 'llvm|cuda|nvrtc|codegen/|runtime/|frontend/' "public headers expose no LLVM, CUDA or internals"
# The optional interop headers stay optional: only lazyfuse/dlpack.h includes DLPack and only
# lazyfuse/eigen.h includes Eigen, and lazyfuse.h includes neither of them.
optional=$({
  grep -lE '#include [<"](dlpack/|Eigen/|unsupported/Eigen/)' "$root"/include/lazyfuse/*.h 2>/dev/null |
    grep -vE '/include/lazyfuse/(dlpack|eigen)\.h$'
  grep -nE '#include [<"]lazyfuse/(dlpack|eigen)\.h' "$root"/include/lazyfuse/*.h 2>/dev/null
})
if [ -n "$optional" ]; then
  echo "layering: DLPack and Eigen belong to the optional headers lazyfuse/dlpack.h and lazyfuse/eigen.h:"
  echo "$optional"
  status=1
fi
# LLVM's headers belong to the plugin's sources alone (CMakeLists.txt, lazyfuse-llvm): the core
# library must run loaded kernels without LLVM in the process.
llvm_users=$(grep -rlE '#include [<"](llvm/|codegen/cpu/llvm/)' "$root"/runtime "$root"/codegen "$root"/frontend 2>/dev/null |
  grep -vE '/codegen/cpu/llvm/[a-z_]+\.(cpp|h)$')
if [ -n "$llvm_users" ]; then
  echo "layering: only codegen/cpu/llvm/ (the LLVM plugin) may include LLVM headers or its own:"
  echo "$llvm_users"
  status=1
fi
# Backends sit behind codegen/backend/backend.h: no backend includes another, and above them only
# the registry names them.
check codegen/cpu 'codegen/cuda/' "a backend does not call another"
check codegen/cuda 'codegen/cpu/' "a backend does not call another"
for module in ir reference fuse kir cache exec; do
  check "codegen/$module" 'codegen/(cpu|cuda)/' "only codegen/backend/registry.cpp names a backend"
done
named=$(grep -rlE '#include [<"]codegen/(cpu|cuda)/' "$root"/codegen/backend 2>/dev/null | grep -v '/registry\.cpp$')
if [ -n "$named" ]; then
  echo "layering: only codegen/backend/registry.cpp names a backend:"
  echo "$named"
  status=1
fi
# Decisions that depend on the kind of device (a layout, whether a library call takes a problem,
# how a value is materialized) are the backend's (Backend: fuse_costs, conv_takes_krsc_filters,
# scatter_takes_constants, ...) or the runtime's (rt::shares_host_memory): code above the backends
# asks, and names no device kind.
branches=$(grep -rnE '\.is_(cpu|cuda)\(\)' "$root"/codegen/{ir,reference,fuse,kir,cache,exec,backend} 2>/dev/null |
  grep -v '/codegen/backend/registry\.cpp:')
if [ -n "$branches" ]; then
  echo "layering: code above the backends branches on the device kind (ask the backend instead):"
  echo "$branches"
  status=1
fi
[ $status -eq 0 ] && echo "layering: ok"
exit $status
