// The float32 tensor-core flash-attention kernel: FlashAttention-2's forward on TF32 mma.sync with
// each product taken as three (big * big + big * small + small * big, every operand split as
// x = big + small into two TF32 values), CUTLASS's "FastF32" and what PyTorch's memory-efficient
// SDPA runs for float32. A product keeps about 21 of float32's 24 bits (the term small * small
// that is dropped is below 2^-22 of it), so the result stays within the float32 tolerance of the
// reference, which a single TF32 product (10 bits) would not. CUDA C compiled by NVRTC;
// codegen/cuda/attention.cpp picks it for float32 at head dims 32, 64, 128 and launches it with the
// other kernels' parameter block.
//
// A block of 4 warps takes BR = 64 query rows of one batch-head, a warp 16 of them; K and V stream
// in tiles of BC = 32 keys (16 at head dim 128): each thread loads its share of the next tile into registers while the
// current one is computed, then splits it into shared memory as (big, small) pairs, so the split
// is done once a tile rather than once a warp. Q is split once; at head dims up to 64 its
// fragments stay in registers. S = Q K^T and O += P V are m16n8k8 mma with float32 accumulators,
// online softmax in registers as the 16-bit kernel (attention_tc.cpp). P goes from the S
// accumulators to A fragments without a shuffle by permuting the keys of each 8-key step: the
// thread that holds scores of keys 2t and 2t + 1 feeds them as k-indices t and t + 4, and reads
// V's rows 2t and 2t + 1 for them.
//
// inf and NaN: a split of inf or NaN is (x, 0), and the big * small and small * big terms would
// turn inf * 0 into NaN where the unfused product gives inf. A tile whose K (or V) holds a
// non-finite value, or a warp whose Q rows do, takes the guarded products instead, in which each
// small term multiplies the other operand's big part with non-finite values zeroed: the non-finite
// values reach the result through big * big alone, exactly as in float32. Semantics are otherwise
// the other kernels': NaN wins the max, a fully masked row is 0 / 0 = NaN, and a non-finite value
// of V past the diagonal makes its column NaN.
#include <string>

#include "codegen/cuda/attention.h"

namespace lf::cuda {
namespace {

constexpr int kRows = 64;

const char* kF32Kernel = R"CUDA(
#define BR 64
#define NT 128
// BC keys a tile: 32, or 16 at head dim 128 (registers for the next tile's loads and for O).
// Shared row strides in (big, small) pairs: a warp's 64-bit loads of 8 rows x 4 columns (Q, K:
// stride = 4 mod 16) and of rows 2t, 2t + 1 x 8 columns (V: stride = 2 mod 8) fall on different banks.
#define QSS (D + 4)
#define KSS (D + 4)
#define VSS (DV + 2)
#define NS (BC / 8)  // the S tile's n-tiles of 8 keys
#define NO (DV / 8)  // the O tile's n-tiles of 8 columns
#define KCH (BC * D / 4 / NT)   // 4-float chunks of a K tile a thread loads
#define VCH (BC * DV / 4 / NT)
// Q's fragments in registers (up to head dim 64, in grids of few blocks), else read from shared
// memory at each product; MINB blocks an SM that ptxas fits the registers for.
#ifndef QREG
#define QREG (D <= 64)
#endif
#ifndef MINB
#define MINB 1
#endif
__device__ __forceinline__ bool lf_nonfinite(float x) { return (__float_as_uint(x) & 0x7f800000u) == 0x7f800000u; }
__device__ __forceinline__ unsigned lf_tf32(float x) { unsigned r; asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x)); return r; }
// x = big + small, both TF32 (the low 13 bits zero); `bad` is set for inf and NaN, which split as
// (x, 0) with NaN made the canonical one (the tensor cores read only the top 19 bits).
__device__ __forceinline__ float2 lf_split(float x, bool& bad) {
  const unsigned u = __float_as_uint(x);
  if (lf_nonfinite(x)) {
    bad = true;
    return make_float2(__uint_as_float((u & 0x7fffffu) ? 0x7fc00000u : u), 0.f);
  }
  unsigned b = lf_tf32(x);
  if ((b & 0x7f800000u) == 0x7f800000u) b = u & 0xffffe000u;  // rounded past the largest float: truncate
  return make_float2(__uint_as_float(b), __uint_as_float(lf_tf32(x - __uint_as_float(b))));
}
__device__ __forceinline__ float lf_fin(float x) { return lf_nonfinite(x) ? 0.f : x; }
// c += a (16x8, row) * b (8x8, col), TF32 operands, float32 accumulators.
__device__ __forceinline__ void lf_mma(float* c, const float* a, float b0, float b1) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])),
                 "r"(__float_as_uint(a[3])), "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)));
}
// c[n] += a * b[n] for N n-tiles in three products each, the small terms first, the n-tiles'
// products interleaved (N independent accumulators between two products of one). G: an operand
// may hold inf or NaN.
// TF32X1 (the user allowed TF32, LAZYFUSE_MATMUL_TF32=1): big * big alone, one TF32 product a
// product, as PyTorch's float32 matmuls with allow_tf32; the operands' TF32 values carry inf and
// NaN as they are, so there is no guarded form.
template <bool G, int N>
__device__ __forceinline__ void lf_mma3(float (*c)[4], const float* ab, const float* as, const float2 (*b)[2]) {
#if TF32X1
  (void)as;
#else
  if (G) {
    const float af[4] = {lf_fin(ab[0]), lf_fin(ab[1]), lf_fin(ab[2]), lf_fin(ab[3])};
#pragma unroll
    for (int n = 0; n < N; ++n) lf_mma(c[n], as, lf_fin(b[n][0].x), lf_fin(b[n][1].x));
#pragma unroll
    for (int n = 0; n < N; ++n) lf_mma(c[n], af, b[n][0].y, b[n][1].y);
  } else {
#pragma unroll
    for (int n = 0; n < N; ++n) lf_mma(c[n], as, b[n][0].x, b[n][1].x);
#pragma unroll
    for (int n = 0; n < N; ++n) lf_mma(c[n], ab, b[n][0].y, b[n][1].y);
  }
#endif
#pragma unroll
  for (int n = 0; n < N; ++n) lf_mma(c[n], ab, b[n][0].x, b[n][1].x);
}
// Columns [c4, c4 + 4) of row `row` of an operand (zeros at or past `nrows`): one 16-byte load
// when vec, else four.
__device__ __forceinline__ float4 lf_load4(const float* src, long long base, long long row, long long nrows,
                                           long long sr, long long sc, int c4, bool vec) {
  if (row >= nrows) return make_float4(0.f, 0.f, 0.f, 0.f);
  const float* p = src + base + row * sr;
  if (vec) return *(const float4*)(p + c4);
  return make_float4(p[c4 * sc], p[(c4 + 1) * sc], p[(c4 + 2) * sc], p[(c4 + 3) * sc]);
}
__device__ __forceinline__ void lf_store_split(float2* d, float4 x, bool& bad) {
  const float2 a = lf_split(x.x, bad), b = lf_split(x.y, bad), c = lf_split(x.z, bad), e = lf_split(x.w, bad);
  *(float4*)d = make_float4(a.x, a.y, b.x, b.y);  // d is 16-byte aligned: an even pair index
  *(float4*)(d + 2) = make_float4(c.x, c.y, e.x, e.y);
}
// NaN wins, as the unfused max.
__device__ __forceinline__ float nmax(float a, float b) { float r; asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }

// S (16 rows x BC keys of the warp) = Q K^T. Q's A fragment of k-step kk: rows g, g + 8, columns
// 8 kk + t, 8 kk + t + 4; K's B fragment of n-tile n: key 8 n + g, the same columns.
template <bool G>
__device__ __forceinline__ void lf_scores(float (&s)[NS][4], const float (&qb)[QREG ? D / 8 : 1][4],
                                          const float (&qs)[QREG ? D / 8 : 1][4], const float2* Qw,
                                          const float2* Kt, int g, int t) {
#pragma unroll
  for (int kk = 0; kk < D / 8; ++kk) {
    float ab[4], as[4];
#if QREG
#pragma unroll
    for (int e = 0; e < 4; ++e) ab[e] = qb[kk][e], as[e] = qs[kk][e];
#else
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 x = Qw[(g + 8 * (e & 1)) * QSS + kk * 8 + t + 4 * (e >> 1)];
      ab[e] = x.x, as[e] = x.y;
    }
#endif
    float2 kf[NS][2];
#pragma unroll
    for (int n = 0; n < NS; ++n) {
      const float2* kr = Kt + (n * 8 + g) * KSS + kk * 8 + t;
      kf[n][0] = kr[0], kf[n][1] = kr[4];
    }
    lf_mma3<G, NS>(s, ab, as, kf);
  }
}

// O += P V over the tile's keys: k-step c's 8 keys in the order 2t, 2t + 1 of each thread
// (k-indices t and t + 4), so P's A fragment is the thread's own S accumulators of n-tile c:
// a0 (row g, key 2t), a1 (row g + 8, key 2t), a2 (row g, key 2t + 1), a3 (row g + 8, key 2t + 1),
// i.e. accumulators 0, 2, 1, 3. P = 2^(x - max) is formed and split here; l gets its sums.
template <bool G>
__device__ __forceinline__ void lf_pv(float (&o)[NO][4], const float (&s)[NS][4], const float (&sub)[2], float (&l)[2],
                                      const float2* Vt, int g, int t) {
#pragma unroll
  for (int c = 0; c < NS; ++c) {
    float pb[4], ps[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float p = lf_exp2(s[c][e] - sub[e >> 1]);
      l[e >> 1] += p;
      bool unused = false;
      const float2 x = lf_split(p, unused);  // p is in [0, 1], or NaN
      const int a = (e == 1) ? 2 : (e == 2) ? 1 : e;
      pb[a] = x.x, ps[a] = x.y;
    }
#pragma unroll
    for (int n0 = 0; n0 < NO; n0 += 4) {  // 4 n-tiles' products interleaved
      float2 vf[4][2];
#pragma unroll
      for (int n = 0; n < 4; ++n) {
        const float2* vr = Vt + (c * 8 + 2 * t) * VSS + (n0 + n) * 8 + g;
        vf[n][0] = vr[0], vf[n][1] = vr[VSS];
      }
      lf_mma3<G, 4>(o + n0, pb, ps, vf);
    }
  }
}

extern "C" __global__ void __launch_bounds__(NT, MINB) lf_attention(Params P) {
  extern __shared__ __align__(16) unsigned char smem[];
  float2* Qs = (float2*)smem;  // [BR][QSS]
  float2* Ks = Qs + BR * QSS;  // [BC][KSS]
  float2* Vs = Ks + BC * KSS;  // [BC][VSS]
  __shared__ unsigned wflags[NT / 32];
  __shared__ int bad[DV];
  const int t = threadIdx.x, warp = t >> 5, lane = t & 31, g = lane >> 2, tq4 = lane & 3;
  // The heaviest causal blocks (the last query rows) first.
  const unsigned nb = gridDim.x / (unsigned)P.qblocks;  // 32-bit: the grid is below 2^31 blocks
  const long long b = blockIdx.x % nb, qblk = P.qblocks - 1 - blockIdx.x / nb, q0 = qblk * BR;
  long long qo, ko, vo, mo;
  lf_batch_offsets(P, b, qo, ko, vo, mo);
  const float* q = (const float*)P.q;
  const float* k = (const float*)P.k;
  const float* v = (const float*)P.v;
  const bool vec = P.vec != 0;
  const long long kv_end = CAUSAL ? min(P.tk, q0 + BR) : P.tk;
  const int ntiles = (int)((kv_end + BC - 1) / BC);
  // The first tile's K and V, in flight while Q is loaded and split.
  float4 kr[KCH], vr[VCH];
#pragma unroll
  for (int u = 0; u < KCH; ++u) {
    const int e = t + u * NT, rr = e / (D / 4), c4 = (e % (D / 4)) * 4;
    kr[u] = ntiles > 0 ? lf_load4(k, ko, rr, P.tk, P.ksr, P.ksc, c4, vec) : make_float4(0.f, 0.f, 0.f, 0.f);
  }
#pragma unroll
  for (int u = 0; u < VCH; ++u) {
    const int e = t + u * NT, rr = e / (DV / 4), c4 = (e % (DV / 4)) * 4;
    vr[u] = ntiles > 0 ? lf_load4(v, vo, rr, P.tk, P.vsr, P.vsc, c4, vec) : make_float4(0.f, 0.f, 0.f, 0.f);
  }
  {  // Q: every load in flight at once, then split
    float4 x[BR * D / 4 / NT];
#pragma unroll
    for (int u = 0; u < BR * D / 4 / NT; ++u) {
      const int e = t + u * NT, rr = e / (D / 4), c4 = (e % (D / 4)) * 4;
      x[u] = lf_load4(q, qo, q0 + rr, P.tq, P.qsr, P.qsc, c4, vec);
    }
    bool unused = false;
#pragma unroll
    for (int u = 0; u < BR * D / 4 / NT; ++u) {
      const int e = t + u * NT, rr = e / (D / 4), c4 = (e % (D / 4)) * 4;
      lf_store_split(Qs + rr * QSS + c4, x[u], unused);
    }
  }
  __syncthreads();
  const int wrow = warp * 16;
  const float2* Qw = Qs + wrow * QSS;
  bool qnf = false;  // the warp's Q rows hold inf or NaN
  for (int e = lane; e < 16 * D; e += 32) qnf |= lf_nonfinite(Qw[(e / D) * QSS + e % D].x);
  const bool qbad = __any_sync(0xffffffffu, qnf);
  float qb[QREG ? D / 8 : 1][4], qs[QREG ? D / 8 : 1][4];
#if QREG
#pragma unroll
  for (int kk = 0; kk < D / 8; ++kk)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float2 x = Qw[(g + 8 * (e & 1)) * QSS + kk * 8 + tq4 + 4 * (e >> 1)];
      qb[kk][e] = x.x, qs[kk][e] = x.y;
    }
#endif
  const float scale = (float)P.scale, post = (float)(P.post * 1.4426950408889634);
  const float scale_post = (float)(P.scale * P.post * 1.4426950408889634);
  const float inf = __int_as_float(0x7f800000), nan = __int_as_float(0x7fc00000);
  // Row h of the thread: q0 + wrow + g + 8 h. l: this thread's columns only, summed over the quad at the end.
  float m[2] = {-inf, -inf}, l[2] = {0.f, 0.f};
  float o[NO][4];
#pragma unroll
  for (int n = 0; n < NO; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  for (int tile = 0; tile < ntiles; ++tile) {
    const long long k0 = (long long)tile * BC;
    __syncthreads();  // every warp is done with the last tile's Ks and Vs
    bool knf = false, vnf = false;
#pragma unroll
    for (int u = 0; u < KCH; ++u) {
      const int e = t + u * NT, rr = e / (D / 4), c4 = (e % (D / 4)) * 4;
      lf_store_split(Ks + rr * KSS + c4, kr[u], knf);
    }
#pragma unroll
    for (int u = 0; u < VCH; ++u) {
      const int e = t + u * NT, rr = e / (DV / 4), c4 = (e % (DV / 4)) * 4;
      lf_store_split(Vs + rr * VSS + c4, vr[u], vnf);
    }
    const unsigned f = __reduce_or_sync(0xffffffffu, (knf ? 1u : 0u) | (vnf ? 2u : 0u));
    if (lane == 0) wflags[warp] = f;
    if (tile + 1 < ntiles) {  // the next tile's loads, in flight while this one is computed
#pragma unroll
      for (int u = 0; u < KCH; ++u) {
        const int e = t + u * NT, rr = e / (D / 4), c4 = (e % (D / 4)) * 4;
        kr[u] = lf_load4(k, ko, k0 + BC + rr, P.tk, P.ksr, P.ksc, c4, vec);
      }
#pragma unroll
      for (int u = 0; u < VCH; ++u) {
        const int e = t + u * NT, rr = e / (DV / 4), c4 = (e % (DV / 4)) * 4;
        vr[u] = lf_load4(v, vo, k0 + BC + rr, P.tk, P.vsr, P.vsc, c4, vec);
      }
    }
    __syncthreads();
    unsigned tf = 0;
#pragma unroll
    for (int w = 0; w < NT / 32; ++w) tf |= wflags[w];
    float s[NS][4];
#pragma unroll
    for (int n = 0; n < NS; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
    if (qbad || (tf & 1u))
      lf_scores<true>(s, qb, qs, Qw, Ks, g, tq4);
    else
      lf_scores<false>(s, qb, qs, Qw, Ks, g, tq4);
    // Scores in the log2 domain: ((s * scale) `mask`) * post * log2(e), as the unfused order.
    const bool edge = MASK != 0 || k0 + BC > P.tk || (CAUSAL && k0 + BC - 1 > q0 + wrow);
    const int keys_left = (int)min(P.tk - k0, (long long)BC);
    const int diag = (int)max(min(k0 - q0 - wrow, (long long)(BR + BC)), (long long)(-BR - BC));
    float mx[2] = {m[0], m[1]}, sub[2];
    if (!edge) {  // the loop twice rather than a branch an element
#pragma unroll
      for (int n = 0; n < NS; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const float x = s[n][e] * scale_post;  // one rounding fewer than the edge path's: within a float32 ulp
          s[n][e] = x;
          mx[e >> 1] = nmax(mx[e >> 1], x);
        }
    } else {
#pragma unroll
      for (int n = 0; n < NS; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float x = s[n][e] * scale;
#if MASK == 1
          const long long i = q0 + wrow + g + 8 * (e >> 1), j = k0 + n * 8 + 2 * tq4 + (e & 1);
          if (i < P.tq && j < P.tk) x += ((const float*)P.mask)[mo + i * P.msr + j * P.msc];
#elif MASK >= 2
          const long long i = q0 + wrow + g + 8 * (e >> 1), j = k0 + n * 8 + 2 * tq4 + (e & 1);
          if (i < P.tq && j < P.tk) {
            bool set = ((const unsigned char*)P.mask)[mo + i * P.msr + j * P.msc] != 0;
            if (set != (MASK == 2)) x = -inf;
          }
#endif
          const int jl = n * 8 + 2 * tq4 + (e & 1), il = g + 8 * (e >> 1);
          if (CAUSAL && diag + jl > il) x = -inf;  // key j > row i
          x *= post;
          if (jl >= keys_left) x = -inf;  // past the last key: weight 0 (its V row is 0)
          s[n][e] = x;
          mx[e >> 1] = nmax(mx[e >> 1], x);
        }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      mx[h] = nmax(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
      mx[h] = nmax(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
      // A row all -inf so far weighs its keys 2^-inf = 0; if it stays so, l = 0 and 0 / 0 = NaN,
      // as the unfused softmax gives.
      sub[h] = mx[h] == -inf ? 0.f : mx[h];
      const float alpha = m[h] == mx[h] ? 1.f : lf_exp2(m[h] - sub[h]);
      m[h] = mx[h];
      l[h] *= alpha;
#pragma unroll
      for (int n = 0; n < NO; ++n) {
        o[n][2 * h] *= alpha;
        o[n][2 * h + 1] *= alpha;
      }
    }
    if (tf & 2u)
      lf_pv<true>(o, s, sub, l, Vs, g, tq4);
    else
      lf_pv<false>(o, s, sub, l, Vs, g, tq4);
  }
  // Keys past the diagonal have weight 0 for every row of the block; the unfused P @ V still
  // multiplies them, so a non-finite value there makes that column NaN. A thread reads the same 4
  // columns (c4) of every NT / (DV / 4)-th key.
  if (CAUSAL && kv_end < P.tk) {
    for (int x = t; x < DV; x += NT) bad[x] = 0;
    __syncthreads();
    const int c4 = (t % (DV / 4)) * 4, kstep = NT / (DV / 4);
    bool f[4] = {false, false, false, false};
    for (long long j0 = kv_end + t / (DV / 4); j0 < P.tk; j0 += 4LL * kstep) {
      float4 x[4];  // 4 loads in flight: the lightest blocks, which run last, have the most keys to check
#pragma unroll
      for (int r = 0; r < 4; ++r) x[r] = lf_load4(v, vo, j0 + (long long)r * kstep, P.tk, P.vsr, P.vsc, c4, vec);
#pragma unroll
      for (int r = 0; r < 4; ++r)
        f[0] |= lf_nonfinite(x[r].x), f[1] |= lf_nonfinite(x[r].y), f[2] |= lf_nonfinite(x[r].z),
            f[3] |= lf_nonfinite(x[r].w);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u)
      if (f[u]) bad[c4 + u] = 1;
    __syncthreads();
#pragma unroll
    for (int n = 0; n < NO; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (bad[n * 8 + 2 * tq4 + (e & 1)]) o[n][e] = nan;
  }
  // [batch, Tq, DV] contiguous, or with the last batch dim (P.heads) interleaved into Tq's rows
  // (AttentionCall::heads): two columns a 64-bit store.
  float* out = (float*)P.out;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float lh = l[h];
    lh += __shfl_xor_sync(0xffffffffu, lh, 1);
    lh += __shfl_xor_sync(0xffffffffu, lh, 2);
    const long long i = q0 + wrow + g + 8 * h;
    if (i < P.tq) {
      const unsigned heads = (unsigned)P.heads;
      const long long row = ((long long)((unsigned)b / heads) * P.tq + i) * heads + (unsigned)b % heads;
#pragma unroll
      for (int n = 0; n < NO; ++n)
        *(float2*)(out + row * DV + n * 8 + 2 * tq4) = make_float2(o[n][2 * h] / lh, o[n][2 * h + 1] / lh);
    }
  }
}
)CUDA";

}  // namespace

bool attention_f32_supports(DType dtype, int64_t d, int64_t dv, std::string* why) {
  auto dim_ok = [](int64_t x) { return x == 32 || x == 64 || x == 128; };
  if (dtype != DType::Float32) {
    *why = "not float32";
    return false;
  }
  if (!dim_ok(d) || !dim_ok(dv)) {
    *why = "head dims other than 32, 64, 128";
    return false;
  }
  return true;
}

int attention_f32_rows() { return kRows; }
int attention_f32_keys_per_tile(int64_t d, int64_t dv) { return d > 64 || dv > 64 ? 16 : 32; }

// Grids of at least 3 blocks an SM at head dims up to 64 read Q from shared memory at each product
// instead of keeping its fragments (64 registers) live: 236 registers a thread become 168, 3
// blocks an SM instead of 2. On the H200 (2026-11-28, causal float32, lazyfuse-programs --quick):
// B8 H16 T512 d64 0.248 -> 0.224 ms, d32 0.157 -> 0.132; B1 H8 T2048 d64 (256 blocks) 0.351 ->
// 0.389, so grids of fewer blocks keep Q in registers. Head dim 128 reads Q from shared memory at
// any grid, and forced to 3 blocks an SM it spills (0.499 -> 0.610).
bool attention_f32_many_blocks(int64_t d, int64_t dv, long long blocks, int multiprocessors) {
  return d <= 64 && dv <= 64 && blocks >= 3LL * multiprocessors;
}

std::string attention_f32_source(int64_t d, int64_t dv, int mask, bool causal, bool many_blocks, bool tf32) {
  return std::string(many_blocks ? "#define QREG 0\n#define MINB 3\n" : "") + "#define TF32X1 " + (tf32 ? "1" : "0") +
         "\n#define BC " +
         std::to_string(attention_f32_keys_per_tile(d, dv)) + "\n#define D " + std::to_string(d) +
         "\n#define DV " + std::to_string(dv) + "\n#define MASK " + std::to_string(mask) + "\n#define CAUSAL " +
         (causal ? "1" : "0") + "\n" + attention_prelude() + kF32Kernel;
}

size_t attention_f32_shared_bytes(int64_t d, int64_t dv) {
  const size_t pair = 8;  // (big, small) floats
  const size_t keys = static_cast<size_t>(attention_f32_keys_per_tile(d, dv));
  return pair * (static_cast<size_t>(kRows) * static_cast<size_t>(d + 4) + keys * static_cast<size_t>(d + 4) +
                 keys * static_cast<size_t>(dv + 2));
}

}  // namespace lf::cuda
