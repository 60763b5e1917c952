#!/usr/bin/env python3
"""Prints the sources that shape generated code, one path per line (relative to the root).

The kernel cache keys start with a fingerprint of these files (CMakeLists.txt), so that a kernel
compiled by another build of LazyFuse is never loaded from the persistent cache; editing any other
file (the executor, the caches, the frontend) leaves users' caches valid. The set is derived, not
listed: the code generators (the CPU's LLVM emitter and compiler, the CUDA emitter and NVRTC
invocation), every file under codegen/ they include, transitively, and the .cpp beside each
included header (its implementation).

usage: codegen_sources.py ROOT
"""
import glob
import os
import re
import sys

# A folder stands for its sources, a pattern for the files it matches: every part of the CUDA
# emitter (emit.cpp, emit_analysis.cpp, emit_pointwise.cpp, emit_row.cpp, ...), including one split
# off later, is in without being named.
ROOTS = ["codegen/cpu/llvm", "codegen/cuda/emit*.cpp", "codegen/cuda/ops.cpp", "codegen/cuda/nvrtc.cpp"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"(codegen/[^"]+)"', re.M)


def sources(root):
    todo = []
    for r in ROOTS:
        path = os.path.join(root, r)
        if "*" in r:
            todo += sorted(os.path.relpath(f, root) for f in glob.glob(path))
        elif os.path.isdir(path):
            todo += [os.path.join(r, f) for f in sorted(os.listdir(path)) if f.endswith((".cpp", ".h", ".inc"))]
        elif os.path.exists(path):
            todo.append(r)
    seen = set()
    while todo:
        f = todo.pop()
        if f in seen or not os.path.exists(os.path.join(root, f)):
            continue
        seen.add(f)
        with open(os.path.join(root, f), encoding="utf-8") as src:
            todo += INCLUDE.findall(src.read())
        if f.endswith(".h"):
            todo.append(f[:-2] + ".cpp")
    return sorted(seen)


if __name__ == "__main__":
    print("\n".join(sources(sys.argv[1] if len(sys.argv) > 1 else ".")))
