// The tensor-core flash-attention kernel for float16 and bfloat16 (FlashAttention-2's forward),
// CUDA C compiled by NVRTC; codegen/cuda/attention.cpp picks it and launches it with the SIMT
// kernel's parameter block. A block of 4 warps takes BR = 128 query rows of one batch-head, each
// warp 32 of them (64 and 16 at head dim 128 or with a mask tensor); K and V tiles of BC keys stream through shared memory, double buffered with
// cp.async (16-byte chunks; rows padded by 16 bytes so that ldmatrix's 8 row addresses fall on
// different banks). S = Q K^T and O += P V are mma.sync m16n8k16 with float32 accumulators; the
// operands come from shared memory through ldmatrix (.trans for V, which is stored key-major), Q's
// fragments are loaded once and kept in registers, P goes from the S accumulators to A fragments
// without shared memory. The online softmax lives in registers: a thread holds 2 rows' scores of
// its quad, the row max is reduced over the quad with shuffles, the row sum stays per thread until
// the end; exponentials are ex2.approx.ftz of scores pre-multiplied by log2(e). Causal blocks stop at the
// diagonal; masks, the causal triangle and the tails (rows past Tq, keys past Tk, zero-filled, never
// read out of bounds) are applied to the scores of the tiles that need them. Q, K, V with a unit
// column stride and 16-byte aligned rows take cp.async; any other strides are read element by
// element into the same shared tiles. Semantics are the SIMT kernel's (codegen/cuda/attention.cpp):
// NaN wins the max, a fully masked row is 0 / 0 = NaN, and a non-finite value of V at a key past
// the diagonal makes its column NaN (the tensor cores multiply the masked keys' zero weights by V
// inside the diagonal tile: 0 * NaN = NaN there, as in the unfused P @ V).
//
// WG (sm_90, head dims 64 and 128, compiled for sm_90a): the same kernel with Hopper's warpgroup
// MMA. The 4 warps are one warpgroup of 64 rows; S = Q K^T is wgmma with Q and K from shared memory,
// O += P V wgmma with P from registers and V N-major; the tiles are unpadded and 128-byte swizzled
// (lf_sw), K/V tiles of 64 keys (128 in small grids). Everything between the products is shared.
#include "codegen/cuda/attention.h"

#include <string>

namespace lf::cuda {
namespace {

const char* kTcKernel = R"CUDA(
#define BR (64 * MT)  // 4 warps of MT m-tiles of 16 rows
#define NT 128
#define QS (D + 8)    // shared row strides in elements: 16 bytes of padding against bank conflicts
#define VS (DV + 8)
#define NS (BC / 8)   // the S tile's n-tiles of 8 keys a warp holds
#define NO (DV / 8)   // the O tile's n-tiles of 8 columns
typedef unsigned short u16;
#if DTYPE == 2
__device__ __forceinline__ float lf_to_f(u16 h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned lf_pack(float lo, float hi) {
  unsigned r; asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
}
#define LF_MMA_TYPE "f16"
#define LF_EXP 0x7c00u
#else
__device__ __forceinline__ float lf_to_f(u16 b) { return __uint_as_float(((unsigned)b) << 16); }
__device__ __forceinline__ unsigned lf_pack(float lo, float hi) {
  unsigned r; asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo)); return r;
}
#define LF_MMA_TYPE "bf16"
#define LF_EXP 0x7f80u
#endif
// Two 16-bit values in a word: bit 15 set when the low one is inf or NaN (exponent all ones), bit
// 31 the high one. Adding the exponent's lowest bit to an all-ones exponent (sign cleared) carries
// into the sign's place, and into nothing else.
__device__ __forceinline__ unsigned lf_nonfinite2(unsigned w) {
  const unsigned e2 = LF_EXP | (LF_EXP << 16), one = (LF_EXP & (0u - LF_EXP)) * 0x10001u;
  return ((w & e2) + one) & 0x80008000u;
}
// The check of V for inf and NaN, 8 columns (c8 .. c8 + 7) of a row at a time: seen gathers
// lf_nonfinite2 of each row's words (bits 15 and 31 of word x: columns c8 + 2x and c8 + 2x + 1),
// lf_mark_bad sets flags[c] for the columns it saw.
__device__ __forceinline__ void lf_see(uint4& seen, const uint4& w) {
  seen.x |= lf_nonfinite2(w.x);
  seen.y |= lf_nonfinite2(w.y);
  seen.z |= lf_nonfinite2(w.z);
  seen.w |= lf_nonfinite2(w.w);
}
__device__ __forceinline__ void lf_mark_bad(int* flags, int c8, const uint4& seen) {
  const unsigned words[4] = {seen.x, seen.y, seen.z, seen.w};
#pragma unroll
  for (int x = 0; x < 4; ++x) {
    if (words[x] & 0x8000u) flags[c8 + 2 * x] = 1;
    if (words[x] & 0x80000000u) flags[c8 + 2 * x + 1] = 1;
  }
}
__device__ __forceinline__ void lf_ldsm_x4(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
__device__ __forceinline__ void lf_ldsm_x4_t(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
// c += a (16x16, row) * b (16x8, col), float32 accumulators.
__device__ __forceinline__ void lf_mma(float* c, const unsigned* a, unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." LF_MMA_TYPE "." LF_MMA_TYPE ".f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// NaN wins, as the unfused max (one instruction on sm_80 and later).
__device__ __forceinline__ float nmax(float a, float b) { float r; asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }

// rows [r0, r0 + ROWS) of a [rows, COLS] operand (row stride sr, column stride sc, from element
// `base`) into shared rows of `stride` elements; rows at or past `nrows` are zero. cp.async
// (16 bytes, zero-filled past the end: no byte out of bounds is read) when vec, else element loads.
// A thread's chunks sit at the same place of every tile, so what locates them is the same from one
// call to the next and the compiler keeps it out of the tile loop: a chunk costs a few
// instructions (ncu, 2026-11-28: the loads were 28% of the kernel's instructions before).
// With SW (the wgmma kernel's K and V tiles), the rows are 128 bytes of 64 columns, each 64-column
// block of the tile [ROWS][64] by itself, the 16-byte chunks of row r at chunk ^ (r % 8): the
// 128-byte swizzle that wgmma's descriptors name (its 8-row atoms at 1024-byte boundaries);
// `stride` is then unused.
template <int ROWS>
__device__ __forceinline__ unsigned lf_sw(int r, int c) {
  return (unsigned)((c >> 6) * ROWS * 128 + r * 128 + ((((c & 63) >> 3) ^ (r & 7)) << 4));
}
template <int ROWS, int COLS, bool SW = false>
__device__ __forceinline__ void lf_load_tile(u16* dst, int stride, const u16* src, long long base, long long r0,
                                             long long nrows, long long sr, long long sc, bool vec) {
  constexpr int CPR = COLS / 8, CHUNKS = ROWS * CPR, ITERS = (CHUNKS + NT - 1) / NT;
  const int left = (int)max(min(nrows - r0, (long long)ROWS), 0LL);  // rows of the tile that exist
  if (vec) {
    const u16* first = src + base + r0 * sr;
    const unsigned sdst = lf_smem(dst);
#pragma unroll
    for (int u = 0; u < ITERS; ++u) {
      const int e = threadIdx.x + u * NT;
      if (CHUNKS % NT != 0 && e >= CHUNKS) break;
      const int rr = e / CPR, c8 = (e % CPR) * 8;
      const bool in = rr < left;
      const u16* s = in ? first + rr * sr + c8 : src;
      const unsigned off = SW ? lf_sw<ROWS>(rr, c8) : 2u * (unsigned)(rr * stride + c8);
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(sdst + off), "l"(s), "r"(in ? 16 : 0));
    }
    return;
  }
  for (int e = threadIdx.x; e < CHUNKS; e += NT) {
    const int rr = e / CPR, c8 = (e % CPR) * 8;
    const long long row = r0 + rr;
    u16* d = SW ? (u16*)((unsigned char*)dst + lf_sw<ROWS>(rr, c8)) : dst + rr * stride + c8;
#pragma unroll
    for (int u = 0; u < 8; ++u) d[u] = rr < left ? src[base + row * sr + (c8 + u) * sc] : (u16)0;
  }
}
__device__ __forceinline__ void lf_commit() { asm volatile("cp.async.commit_group;"); }
__device__ __forceinline__ void lf_wait_all() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }
// WG: the wgmma helpers (attention_wgmma_helpers) come before this kernel.
#if !WG
__device__ __forceinline__ void lf_proxy_fence() {}
#endif

// The wgmma kernel with 64-key tiles at head dims up to 64 fits 128 registers without spills
// (ptxas -v, 2026-11-28): 4 blocks an SM, 16 warps to hide latency.
#if WG && BC == 64 && D <= 64 && DV <= 64
#define MINB 4
#else
#define MINB 1
#endif
extern "C" __global__ void __launch_bounds__(NT, MINB) lf_attention(Params P) {
  extern __shared__ __align__(16) unsigned char smem[];
#if WG
  // K and V tiles swizzled (lf_sw) from a 1024-byte boundary (the host adds 1024 bytes for it), then Q.
  unsigned char* base = smem + ((1024u - (lf_smem(smem) & 1023u)) & 1023u);
  u16* Ks = (u16*)base;          // 2 x [BC][D], 64-column blocks
  u16* Vs = Ks + 2 * BC * D;     // 2 x [BC][DV]
  u16* Qs = Vs + 2 * BC * DV;    // [BR][D], swizzled as K: S's A operand is read from shared memory
#define KT (BC * D)              // a K tile's and a V tile's elements
#define VT (BC * DV)
#else
  u16* Qs = (u16*)smem;          // [BR][QS]
  u16* Ks = Qs + BR * QS;        // 2 x [BC][QS]
  u16* Vs = Ks + 2 * BC * QS;    // 2 x [BC][VS]
#define KT (BC * QS)
#define VT (BC * VS)
#endif
  // bad[c]: column c of V holds inf or NaN at a key past this block's diagonal, read from global
  // memory (the heavy block's keys past its diagonal; PAIR: the light block's too); bad_light[c]: at
  // a key between the light block's diagonal and the heavy one's, seen in the heavy block's tiles.
  __shared__ int bad[DV];
#if PAIR
  __shared__ int bad_light[DV];
#endif
  const int t = threadIdx.x, warp = t >> 5, lane = t & 31, g = lane >> 2, tq4 = lane & 3;
  for (int x = t; x < DV; x += NT) {
    bad[x] = 0;
#if PAIR
    bad_light[x] = 0;
#endif
  }
  // The heaviest causal blocks (the last query rows) first. PAIR (causal): a block takes query block
  // qblocks - 1 - u and then u, the same work in every block (qblocks + 1 tiles), and the light
  // one's keys past its diagonal are mostly tiles the heavy one loads anyway: its check of them
  // reads shared memory, not L2 (odd qblocks: the middle one alone).
  const unsigned units = (unsigned)(PAIR ? (P.qblocks + 1) / 2 : P.qblocks);
  const unsigned nb = gridDim.x / units;  // 32-bit: the grid is below 2^31 blocks
  const long long b = blockIdx.x % nb, unit = blockIdx.x / nb;
  long long qo, ko, vo, mo;
  lf_batch_offsets(P, b, qo, ko, vo, mo);
  const u16* q = (const u16*)P.q;
  const u16* k = (const u16*)P.k;
  const u16* v = (const u16*)P.v;
  const bool vec = P.vec != 0;
  const int passes = PAIR && P.qblocks - 1 - unit != unit ? 2 : 1;
  // Keys at or past light_end are past the light block's diagonal.
  const long long light_end = min(P.tk, (unit + 1) * BR);
  for (int pass = 0; pass < passes; ++pass) {
    const long long qblk = pass == 0 ? P.qblocks - 1 - unit : unit, q0 = qblk * BR;
    if (pass > 0) __syncthreads();  // every warp is done with the heavy block's tiles
    const long long kv_end = CAUSAL ? min(P.tk, q0 + BR) : P.tk;
    const int ntiles = (int)((kv_end + BC - 1) / BC);
    lf_load_tile<BR, D, WG>(Qs, QS, q, qo, q0, P.tq, P.qsr, P.qsc, vec);
    if (ntiles > 0) {
      lf_load_tile<BC, D, WG>(Ks, QS, k, ko, 0, P.tk, P.ksr, P.ksc, vec);
      lf_load_tile<BC, DV, WG>(Vs, VS, v, vo, 0, P.tk, P.vsr, P.vsc, vec);
    }
    lf_commit();
    lf_wait_all();
    lf_proxy_fence();
    __syncthreads();
    // The warp's rows: MT m-tiles of 16 from wrow. Q's A fragments, D / 16 k-steps of 16 each (the
    // wgmma kernel reads Q from shared memory instead: on the H200, ptxas gave the P fragments the
    // registers of Q's, which the next tile's product still reads, when Q came from registers).
    const int wrow = warp * 16 * MT;
#if !WG
    unsigned qf[MT][D / 16][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        lf_ldsm_x4(lf_smem(Qs + (wrow + mt * 16 + (lane & 15)) * QS + kk * 16 + (lane >> 4) * 8), qf[mt][kk][0],
                   qf[mt][kk][1], qf[mt][kk][2], qf[mt][kk][3]);
#endif
    const float scale = (float)P.scale, post = (float)(P.post * 1.4426950408889634);
    const float scale_post = (float)(P.scale * P.post * 1.4426950408889634);
    const float inf = __int_as_float(0x7f800000), nan = __int_as_float(0x7fc00000);
    // Row h of m-tile mt of the thread: q0 + wrow + 16 mt + g + 8 h. l: this thread's columns only,
    // summed over the quad at the end.
    float m[MT][2], l[MT][2];
    float o[MT][NO][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      m[mt][0] = m[mt][1] = -inf;
      l[mt][0] = l[mt][1] = 0.f;
#pragma unroll
      for (int n = 0; n < NO; ++n) o[mt][n][0] = o[mt][n][1] = o[mt][n][2] = o[mt][n][3] = 0.f;
    }
    for (int tile = 0; tile < ntiles; ++tile) {
      const long long k0 = (long long)tile * BC;
      const u16* Kt = Ks + (tile & 1) * KT;
      const u16* Vt = Vs + (tile & 1) * VT;
      if (tile > 0) {
        lf_wait_all();
        lf_proxy_fence();
        __syncthreads();  // tile's K and V are in; every warp is done with the other buffer
      }
      if (tile + 1 < ntiles) {  // the next tile streams in while this one is computed
        lf_load_tile<BC, D, WG>(Ks + ((tile + 1) & 1) * KT, QS, k, ko, k0 + BC, P.tk, P.ksr, P.ksc, vec);
        lf_load_tile<BC, DV, WG>(Vs + ((tile + 1) & 1) * VT, VS, v, vo, k0 + BC, P.tk, P.vsr, P.vsc, vec);
        lf_commit();
      }
#if PAIR
      // The heavy block's tile holds keys past the light block's diagonal: their V rows' inf and NaN,
      // by column (a thread's chunks are the same 8 columns in every row it reads, as the check below).
      if (passes == 2 && pass == 0 && k0 + BC > light_end) {
        constexpr int CPR = DV / 8, ITERS = BC * CPR / NT;
        const int c8 = (t % CPR) * 8;
        uint4 seen = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
        for (int u = 0; u < ITERS; ++u) {
          const int rr = (t + u * NT) / CPR;
          if (k0 + rr >= light_end) {  // rows past Tk are zero
#if WG
            lf_see(seen, *(const uint4*)((const unsigned char*)Vt + lf_sw<BC>(rr, c8)));
#else
            lf_see(seen, *(const uint4*)(Vt + rr * VS + c8));
#endif
          }
        }
        lf_mark_bad(bad_light, c8, seen);
      }
#endif
      float s[MT][NS][4];
#if WG
      // S = Q K^T: D / 16 products m64 x BC x k16, Q and K (both K-major) from shared memory: k-step
      // kk is 32 bytes into a row of its 64-column block.
      lf_wg_fence();
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        LF_WGMMA_SS(BC)(&s[0][0][0], lf_desc(lf_smem(Qs) + (kk >> 2) * BR * 128 + (kk & 3) * 32, 16, 1024),
                        lf_desc(lf_smem(Kt) + (kk >> 2) * BC * 128 + (kk & 3) * 32, 16, 1024), kk > 0);
      lf_wg_wait();
      LF_KEEP(BC)(&s[0][0][0]);
#else
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int n = 0; n < NS; ++n) s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.f;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
        for (int n = 0; n < NS; n += 2) {  // two n-tiles of 8 keys a ldmatrix.x4, used by every m-tile
          unsigned b0, b1, b2, b3;
          lf_ldsm_x4(lf_smem(Kt + (n * 8 + (lane & 7) + ((lane >> 4) << 3)) * QS + kk * 16 + ((lane >> 3) & 1) * 8), b0,
                     b1, b2, b3);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            lf_mma(s[mt][n], qf[mt][kk], b0, b1);
            lf_mma(s[mt][n + 1], qf[mt][kk], b2, b3);
          }
        }
      }
#endif
      // Scores in the log2 domain: ((s * scale) `mask`) * post * log2(e), as the unfused order.
      const bool edge = MASK != 0 || k0 + BC > P.tk || (CAUSAL && k0 + BC - 1 > q0 + wrow);
      // The tile's keys past the last one, and the causal diagonal, in 32-bit offsets from the tile's
      // first key and the warp's first row (clamped: only their comparisons with offsets < BR + BC matter).
      const int keys_left = (int)min(P.tk - k0, (long long)BC);
      const int diag = (int)max(min(k0 - q0 - wrow, (long long)(BR + BC)), (long long)(-BR - BC));
      float sub[MT][2];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        float mx[2] = {m[mt][0], m[mt][1]};
        if (!edge) {  // the loop twice rather than a branch an element
#pragma unroll
          for (int n = 0; n < NS; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const float x = s[mt][n][e] * scale_post;  // one rounding fewer than the edge path's: within a float32 ulp
              s[mt][n][e] = x;
              mx[e >> 1] = nmax(mx[e >> 1], x);
            }
        } else {
#pragma unroll
          for (int n = 0; n < NS; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              float x = s[mt][n][e] * scale;
#if MASK == 1
              const long long i = q0 + wrow + mt * 16 + g + 8 * (e >> 1), j = k0 + n * 8 + 2 * tq4 + (e & 1);
              if (i < P.tq && j < P.tk) x += lf_to_f(((const u16*)P.mask)[mo + i * P.msr + j * P.msc]);
#elif MASK >= 2
              const long long i = q0 + wrow + mt * 16 + g + 8 * (e >> 1), j = k0 + n * 8 + 2 * tq4 + (e & 1);
              if (i < P.tq && j < P.tk) {
                bool set = ((const unsigned char*)P.mask)[mo + i * P.msr + j * P.msc] != 0;
                if (set != (MASK == 2)) x = -inf;
              }
#endif
              const int jl = n * 8 + 2 * tq4 + (e & 1), il = mt * 16 + g + 8 * (e >> 1);
              if (CAUSAL && diag + jl > il) x = -inf;  // key j > row i
              x *= post;
              if (jl >= keys_left) x = -inf;  // past the last key: weight 0 (its V row is 0)
              s[mt][n][e] = x;
              mx[e >> 1] = nmax(mx[e >> 1], x);
            }
        }
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          mx[h] = nmax(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
          mx[h] = nmax(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
          // A row all -inf so far weighs its keys 2^-inf = 0; if it stays so, l = 0 and 0 / 0 = NaN,
          // as the unfused softmax gives.
          sub[mt][h] = mx[h] == -inf ? 0.f : mx[h];
          const float alpha = m[mt][h] == mx[h] ? 1.f : lf_exp2(m[mt][h] - sub[mt][h]);
          m[mt][h] = mx[h];
          l[mt][h] *= alpha;
#pragma unroll
          for (int n = 0; n < NO; ++n) {
            o[mt][n][2 * h] *= alpha;
            o[mt][n][2 * h + 1] *= alpha;
          }
        }
      }
      // P = 2^(x - max) as A fragments (16 keys a k-step: n-tiles 2c and 2c + 1), then O += P V.
#if WG
      unsigned pa[BC / 16][4];
#endif
#pragma unroll
      for (int c = 0; c < BC / 16; ++c) {
#if WG
        unsigned(&a)[MT][4] = *(unsigned(*)[MT][4])pa[c];
#else
        unsigned a[MT][4];
#endif
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          float p[8];
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            p[e] = lf_exp2(s[mt][2 * c + (e >> 2)][e & 3] - sub[mt][(e >> 1) & 1]);
            l[mt][(e >> 1) & 1] += p[e];
          }
          a[mt][0] = lf_pack(p[0], p[1]);  // row g, keys 2t, 2t + 1
          a[mt][1] = lf_pack(p[2], p[3]);  // row g + 8
          a[mt][2] = lf_pack(p[4], p[5]);  // row g, keys 8 + 2t, 8 + 2t + 1
          a[mt][3] = lf_pack(p[6], p[7]);  // row g + 8
        }
#if !WG
#pragma unroll
        for (int n = 0; n < NO; n += 2) {  // two n-tiles of 8 columns a ldmatrix.x4.trans
          unsigned b0, b1, b2, b3;
          lf_ldsm_x4_t(lf_smem(Vt + (c * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * VS + n * 8 + (lane >> 4) * 8), b0,
                       b1, b2, b3);
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            lf_mma(o[mt][n], a[mt], b0, b1);
            lf_mma(o[mt][n + 1], a[mt], b2, b3);
          }
        }
#endif
      }
#if WG
      // O += P V: BC / 16 products m64 x DV x k16, P from registers, V (N-major: trans-b) from shared
      // memory, 16 keys (two 8-row groups, 2048 bytes) a k-step; the 64-column blocks BC * 128 apart.
      LF_KEEP(DV)(&o[0][0][0]);
      lf_wg_fence();
#pragma unroll
      for (int c = 0; c < BC / 16; ++c)
        LF_WGMMA_RS(DV)(&o[0][0][0], pa[c], lf_desc(lf_smem(Vt) + c * 2048, BC * 128, 1024), 1);
      lf_wg_wait();
      LF_KEEP(DV)(&o[0][0][0]);
#pragma unroll
      for (int c = 0; c < BC / 16; ++c) lf_keep_a(pa[c]);
#endif
    }
    // Keys past the diagonal have weight 0 for every row of the block; the unfused P @ V still
    // multiplies them, so a non-finite value there makes that column NaN. The light block of a pair
    // reads none: its keys past the heavy block's diagonal are the heavy one's (bad), the others
    // were seen in the heavy one's tiles (bad_light).
    if (CAUSAL && kv_end < P.tk && pass == 0) {
      // NT is a multiple of DV / 8: a thread always reads the same 8 columns (c8), of keys kv_end +
      // t / (DV / 8) + k NT / (DV / 8); 4 loads of 16 bytes in flight at a time (the lightest blocks,
      // which run last, have the most keys to check), kept packed (the accumulators are live).
      const int c8 = (t % (DV / 8)) * 8, kstep = NT / (DV / 8);
      uint4 seen = make_uint4(0u, 0u, 0u, 0u);
      const long long j_first = kv_end + t / (DV / 8);
      if (vec) {
        const u16* col = v + vo + c8;
        for (long long j0 = j_first; j0 < P.tk; j0 += 4LL * kstep) {
          uint4 w[4];
#pragma unroll
          for (int r = 0; r < 4; ++r) {
            const long long j = j0 + (long long)r * kstep;
            w[r] = j < P.tk ? *(const uint4*)(col + j * P.vsr) : make_uint4(0u, 0u, 0u, 0u);
          }
#pragma unroll
          for (int r = 0; r < 4; ++r) lf_see(seen, w[r]);
        }
      } else {
        const long long sc = P.vsc;
        for (long long j = j_first; j < P.tk; j += kstep) {
          const u16* row = v + vo + j * P.vsr;
          lf_see(seen, make_uint4(row[c8 * sc] | ((unsigned)row[(c8 + 1) * sc] << 16),
                                  row[(c8 + 2) * sc] | ((unsigned)row[(c8 + 3) * sc] << 16),
                                  row[(c8 + 4) * sc] | ((unsigned)row[(c8 + 5) * sc] << 16),
                                  row[(c8 + 6) * sc] | ((unsigned)row[(c8 + 7) * sc] << 16)));
        }
      }
      lf_mark_bad(bad, c8, seen);
      __syncthreads();
    }
    if (CAUSAL && kv_end < P.tk) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int n = 0; n < NO; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int c = n * 8 + 2 * tq4 + (e & 1);
#if PAIR
            if (bad[c] | (pass > 0 ? bad_light[c] : 0)) o[mt][n][e] = nan;
#else
            if (bad[c]) o[mt][n][e] = nan;
#endif
          }
    }
    // [batch, Tq, DV] contiguous, or with the last batch dim (P.heads) interleaved into Tq's rows
    // (AttentionCall::heads): two columns a 32-bit store.
    unsigned* out = (unsigned*)P.out;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float lh = l[mt][h];
        lh += __shfl_xor_sync(0xffffffffu, lh, 1);
        lh += __shfl_xor_sync(0xffffffffu, lh, 2);
        // One reciprocal a row (0 -> inf, and 0 * inf = NaN as 0 / 0 is), then products.
        const float inv = __frcp_rn(lh);
        const long long i = q0 + wrow + mt * 16 + g + 8 * h;
        if (i < P.tq) {
          const unsigned heads = (unsigned)P.heads;
          const long long row = ((long long)((unsigned)b / heads) * P.tq + i) * heads + (unsigned)b % heads;
#pragma unroll
          for (int n = 0; n < NO; ++n)
            out[(row * DV + n * 8 + 2 * tq4) / 2] = lf_pack(o[mt][n][2 * h] * inv, o[mt][n][2 * h + 1] * inv);
        }
      }
    }
  }
}
)CUDA";

}  // namespace

bool attention_tc_supports(DType dtype, int64_t d, int64_t dv, std::string* why) {
  auto dim_ok = [](int64_t x) { return x == 32 || x == 64 || x == 128; };
  if (dtype != DType::Float16 && dtype != DType::BFloat16) {
    *why = "not a 16-bit float dtype";
    return false;
  }
  if (!dim_ok(d) || !dim_ok(dv)) {
    *why = "head dims other than 32, 64, 128";
    return false;
  }
  return true;
}

bool attention_wgmma_supports(DType dtype, int64_t d, int64_t dv, int sm_major, int sm_minor, std::string* why) {
  if (!attention_tc_supports(dtype, d, dv, why)) return false;
  if (sm_major != 9 || sm_minor != 0) {
    *why = "not an sm_90 GPU (wgmma is Hopper's)";
    return false;
  }
  if (d == 32 || dv == 32) {
    *why = "head dim 32 (the mma.sync kernel's)";
    return false;
  }
  return true;
}

// The wgmma kernel at head dims up to 64: 64 keys a tile where the grid has blocks enough for 4 an
// SM (128 registers: 4 fit), else 128 (168 registers, 3 an SM; half the tiles, and the SMs are not
// full anyway). On the H200 (2026-11-28, bfloat16 causal d64, lazyfuse-programs --quick): B8 H16
// T512 (1024 blocks) 0.031 ms with 64 against 0.037 with 128; B1 H8 T2048 (256 blocks) 0.038
// against 0.034.
int attention_tc_keys_per_tile(int64_t d, int64_t dv, bool wgmma, bool few_blocks) {
  if (wgmma) return d > 64 || dv > 64 || !few_blocks ? 64 : 128;
  return d > 64 || dv > 64 ? 32 : 64;
}

bool attention_wgmma_few_blocks(long long blocks, int multiprocessors) {
  return blocks < 4LL * multiprocessors;
}

// A causal block's check of V past its diagonal reads the keys it skips, from L2: at B8 H16 T512
// d64 (bfloat16, H200), 29 MB, a third more than its tiles, 3 of the kernel's 31 us. Paired with
// the head's heavy block, the light block's skipped keys are mostly the heavy one's tiles and are
// checked in shared memory: per head, 384 keys read for the check instead of 1792. The pairs halve
// the grid, whose blocks then all do the same work: where that leaves fewer than 3 blocks an SM,
// the unpaired grid (heaviest blocks first) keeps the SMs busier. On the H200 (2026-11-28, causal
// bfloat16 B8 H16 T512): wgmma d64 0.031 -> 0.030 ms, d128 0.064 -> 0.061; mma.sync at d32
// (164 registers, fewer blocks an SM) 0.025 -> 0.031, so by default only the wgmma kernel pairs.
bool attention_tc_pairs(bool causal, bool wgmma, long long batch, long long qblocks, int multiprocessors,
                        int requested) {
  if (!causal || qblocks < 2 || requested == 0) return false;
  return requested == 1 || (wgmma && batch * ((qblocks + 1) / 2) >= 3LL * multiprocessors);
}

// 64 query rows a block (one m-tile of 16 rows a warp) by default; 128 (two m-tiles a warp, each
// K and V fragment feeding two mma) where LAZYFUSE_ATTENTION_ROWS=128 asks and it fits (head dims
// up to 64: at 128, two m-tiles' accumulators spill). On the H100 (2026-11-27,
// bfloat16 d64 causal, lazyfuse-programs --quick in one call): B8 H16 T512 0.058 ms with 64 rows
// against 0.060 with 128, B1 H8 T2048 0.074 against 0.096: at 128 rows that grid has 128
// blocks, one an SM, four warps to hide every latency. The wgmma kernel takes 64 (one warpgroup).
int attention_tc_rows(int64_t d, int64_t dv, int mask, int requested, bool wgmma) {
  (void)mask;
  return !wgmma && requested == 128 && d <= 64 && dv <= 64 ? 128 : 64;
}

std::string attention_tc_source(DType dtype, int64_t d, int64_t dv, int mask, bool causal, int rows, bool wgmma,
                                bool few_blocks, bool pairs) {
  const int bc = attention_tc_keys_per_tile(d, dv, wgmma, few_blocks);
  std::string helpers;
  if (wgmma) {
    // S = Q K^T with both operands K-major in shared memory, O += P V with P from registers and V N-major.
    helpers = attention_wgmma_helpers(dtype == DType::Float16 ? "f16" : "bf16", bc, static_cast<int>(dv),
                                      /*rs_b_n_major=*/true);
  }
  return "#define DTYPE " + std::string(dtype == DType::Float16 ? "2" : "3") + "\n#define D " + std::to_string(d) +
         "\n#define DV " + std::to_string(dv) + "\n#define BC " + std::to_string(bc) +
         "\n#define MT " + std::to_string(rows / 64) + "\n#define WG " + (wgmma ? "1" : "0") +
         "\n#define MASK " + std::to_string(mask) + "\n#define CAUSAL " + (causal ? "1" : "0") +
         "\n#define PAIR " + (causal && pairs ? "1" : "0") + "\n" + attention_prelude() +
         helpers + kTcKernel;
}

size_t attention_tc_shared_bytes(int64_t d, int64_t dv, int rows, bool wgmma, bool few_blocks) {
  const size_t bc = static_cast<size_t>(attention_tc_keys_per_tile(d, dv, wgmma, few_blocks));
  // wgmma: unpadded Q, K and V tiles from a 1024-byte boundary (up to 1024 bytes to get there).
  if (wgmma)
    return 2 * (static_cast<size_t>(rows) * static_cast<size_t>(d) + 2 * bc * static_cast<size_t>(d) +
                2 * bc * static_cast<size_t>(dv)) + 1024;
  return 2 * (static_cast<size_t>(rows) * static_cast<size_t>(d + 8) + 2 * bc * static_cast<size_t>(d + 8) +
              2 * bc * static_cast<size_t>(dv + 8));
}

}  // namespace lf::cuda
