#!/usr/bin/env python3
"""Writes scanexp.cu: variants of the float32 GPU cumsum kernel (codegen/cuda/scan.cpp) in one
program, each timed on 2^26 floats against a device-to-device copy (harness_fn.h). Session 19,
2026-11-29, the H200; the figures are in bench/RESULTS.md ("session 19").

  g++ -std=c++20 -I../../.. -I../../../include -I../../../build/generated gen.cpp \
      -L../../../build -llazyfuse -Wl,-rpath,$PWD/../../../build -o gen
  ./gen 32 > scan32.cuh && ./gen 16 > scan16.cuh && python3 make_variants.py
  nvcc -O3 -arch=sm_90 -std=c++17 -o scanexp scanexp.cu   # then on the GPU: ./scanexp [n] [variant]

The "no look-back" variants give wrong answers on purpose: they measure the kernel without its
wait for earlier tiles. The production kernel times differently inside lazyfuse-programs (a
replayed plan, back to back): there the look-back warp variant lost (0.187 against 0.176 ms).
"""
base32 = open('scan32.cuh').read()
base16 = open('scan16.cuh').read()
lb = "exclusive = lf_look_back(t, first, status, aggregates, prefixes);"
atom = "if (threadIdx.x == 0) s_tile = atomicAdd(counter, 1u);"
ld_old = """      s_data[LF_SWZ(j)] = __ldcs(in4 + j);
    }
    __syncthreads();"""
ld_new = """      lf_cp16(&s_data[LF_SWZ(j)], in4 + j);
    }
    asm volatile("cp.async.wait_all;\\n" ::: "memory");
    __syncthreads();"""
cp16 = """#define LF_CP16
__device__ __forceinline__ void lf_cp16(void* smem, const void* g) {
  unsigned a = (unsigned)__cvta_generic_to_shared(smem);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\\n" :: "r"(a), "l"(g) : "memory");
}
"""
for s in (lb, atom, ld_old):
    assert base32.count(s) == 1, s


def cpasync(src):
    i = src.index('#if VEC4\n')
    return (src[:i] + cp16 + src[i:]).replace(ld_old, ld_new)


UNDEF = ['#undef ' + m for m in ('ITEMS', 'PERSIST_BLOCKS', 'LF_CP16', 'INFINITY', 'NAN', 'LB_CPASYNC',
                                 'LB_MIN_BLOCKS', 'LB_DYNAMIC', 'LB_SMEM', 'LB_LOOK_BACK')]
COPY_LAUNCH = '''void launch(const float* x, float* y, long long n, char*, cudaStream_t st) {
  static bool once = (cudaFuncSetAttribute(lf_copy_tiles, cudaFuncAttributePreferredSharedMemoryCarveout, 100), true);
  (void)once;
  lf_copy_tiles<<<n / TILE, THREADS, 0, st>>>(x, y);
}'''
# name, source, launch, label, extra defines, threads, items
variants = [
    ('v0_base32', base32, 'tiles', 'baseline: 32 items, atomic', '', 256, None),
    ('v1_base16', base16, 'tiles', 'baseline: 16 items', '', 256, None),
    ('v2_nolb', base32.replace(lb, 'exclusive = IDENTITY;'), 'tiles', 'no look-back (wrong)', '', 256, None),
    ('v3_static', base32.replace(atom, 'if (threadIdx.x == 0) s_tile = blockIdx.x;'), 'tiles',
     'blockIdx tiles (unsafe)', '', 256, None),
    ('v4_cpasync', cpasync(base32), 'tiles', 'cp.async loads', '', 256, None),
    ('v5_cpasync_nolb', cpasync(base32).replace(lb, 'exclusive = IDENTITY;'), 'tiles', 'cp.async, no look-back', '', 256,
     None),
    ('v6_persist32', base32, 'persist', 'persistent 2x32 items, 3/SM', '', 256, None),
    ('v7_persist16', base16, 'persist', 'persistent 2x16 items, 6/SM', '#define PERSIST_BLOCKS 6', 256, None),
    ('v8_copytiles', base32, 'copy', 'copy in 32 KB smem tiles', '', 256, None),
    ('v9_lbwarp', base32, 'tiles2', 'look-back warp', '#define LB_SMEM 0', 256, None),
    ('v9b_lbwarp_cp', base32, 'tiles2', 'look-back warp, cp.async', '#define LB_CPASYNC 1\n#define LB_SMEM 0', 256, None),
    ('v9c_lbwarp5', base32, 'tiles2', 'look-back warp, 5/SM', '#define LB_MIN_BLOCKS 5\n#define LB_SMEM 0', 256, None),
    ('v9n_lbwarp_nolb', base32, 'tiles2', 'look-back warp cp.async, NO look-back',
     '#define LB_CPASYNC 1\n#define LB_SMEM 0\n#define LB_LOOK_BACK(...) IDENTITY', 256, None),
    ('v12_lb512', base32, 'tiles2', 'lbwarp 512x32 cp.async 3/SM',
     '#define LB_CPASYNC 1\n#define LB_DYNAMIC 1\n#define LB_SMEM 65536\n#define LB_MIN_BLOCKS 3', 512, 32),
    ('v14_lb512n', base32, 'tiles2', 'lbwarp 512x32, NO look-back',
     '#define LB_CPASYNC 1\n#define LB_DYNAMIC 1\n#define LB_SMEM 65536\n#define LB_MIN_BLOCKS 3\n'
     '#define LB_LOOK_BACK(...) IDENTITY', 512, 32),
]
out = ['#include <algorithm>', '#include <cstdio>', '#include <cstdlib>', '#include <cstring>',
       '#include <cuda_runtime.h>', '#include "harness_fn.h"']
for name, src, kind, label, defs, threads, items in variants:
    open('ns_' + name + '.cuh', 'w').write(src.replace('extern "C" ', ''))
    out += UNDEF + ([defs] if defs else []) + [f'namespace {name} {{', f'#include "ns_{name}.cuh"']
    if threads != 256 or items:
        out += ['#undef THREADS', f'#define THREADS {threads}', '#undef ITEMS', f'#define ITEMS {items}']
    out.append({'tiles': '#include "extra.cuh"\n#include "launch_tiles.h"',
                'persist': '#include "extra.cuh"\n#include "launch_persist.h"',
                'copy': '#include "extra.cuh"\n' + COPY_LAUNCH,
                'tiles2': '#include "lbwarp.cuh"\n#include "launch_tiles2.h"'}[kind])
    out.append('}')
    if threads != 256:
        out += ['#undef THREADS', '#define THREADS 256']
out.append('int main(int argc, char** argv) {')
out.append('  long long n = argc > 1 ? atoll(argv[1]) : (1ll << 26);')
out.append('  const char* only = argc > 2 ? argv[2] : "";')
for name, _, _, label, _, _, _ in variants:
    out.append(f'  if (!*only || strstr("{name}", only)) run_variant("{label}", {name}::launch, n);')
out.append('}')
open('scanexp.cu', 'w').write('\n'.join(out) + '\n')
