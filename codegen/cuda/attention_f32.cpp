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
// in tiles of BC = 32 keys (16 at head dim 128): each thread loads its share of the next tile into
// registers while the current one is computed, then splits it into shared memory, so the split is
// done once a tile rather than once a warp. The split of a tile is three instructions a value (an
// integer rounding to TF32, a subtraction: lf_split_fast), with the exact one (lf_split) again only
// where a check sum says the tile has inf, NaN or a value near the largest float; on the H200 the
// exact split of every value took a third of the kernel's time. Q is split once; at head dims up
// to 64 its fragments stay in registers. S = Q K^T and O += P V are m16n8k8 mma with float32
// accumulators, online softmax in registers as the 16-bit kernel (attention_tc.cpp). P goes from
// the S accumulators to A fragments without a shuffle by permuting the keys of each 8-key step:
// the thread that holds scores of keys 2t and 2t + 1 feeds them as k-indices t and t + 4, and
// reads V's rows 2t and 2t + 1 for them.
//
// WG (sm_90, compiled for sm_90a): the products are Hopper's warpgroup MMA, m64 x n x k8 on TF32.
// The 4 warps are one warpgroup of the 64 rows; Q, K and V sit in shared memory as separate big
// and small tiles, 128-byte swizzled; S = Q K^T reads both from shared memory, O += P V takes P
// from registers (the same fragments as mma.sync's). TF32 operands must be K-major, so V is stored
// transposed, its keys in the permuted order P's fragments give them: the even keys of an 8-key
// group are 4 consecutive places of a V^T row, the odd ones the next 4, and a thread that loads 4
// such keys' rows stores a 16-byte chunk a column. A tile with inf or NaN (or a Q with them) takes
// the guarded products below on mma.sync, reading the same tiles.
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
#if WG
// A V tile in items of 4 keys (the even or the odd keys of an 8-key group) x 4 columns, VIT a thread.
#define VITEMS (BC / 4 * DV / 4)
#define VIT ((VITEMS + NT - 1) / NT)
#else
#define VCH (BC * DV / 4 / NT)
#endif
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
// The same split in three instructions, for the K and V tiles: big is x's bit pattern rounded to
// TF32's 10 mantissa bits (half the dropped range added, then cleared), small = x - big exactly.
// small goes to the tensor cores as it is: they read a .tf32 register's top 19 bits and ignore
// the rest (sm_80 and sm_90, measured within float32's tolerance on the H200; PTX leaves it
// implementation-defined, so a new architecture would want lf_tf32 here). inf, NaN and values that round past the largest float
// give a non-finite small; `chk` sums the smalls (finite ones cannot overflow it), and where it is
// not finite the caller splits its values again with lf_split.
__device__ __forceinline__ float2 lf_split_fast(float x, float& chk) {
  const float big = __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xffffe000u);
  const float small = x - big;
  chk += small;
  return make_float2(big, small);
}
// A probability p in [0, 1], or NaN (ex2's and the float unit's NaN have their top mantissa bits
// set, which truncation keeps): big = p truncated to TF32, small = p - big. With one product
// (TF32X1) big is all there is: rounded to nearest, or every p would be biased low against the
// row sum, which takes p whole.
__device__ __forceinline__ float2 lf_split_p(float p) {
#if TF32X1
  const float big = __uint_as_float(lf_tf32(p));
#else
  const float big = __uint_as_float(__float_as_uint(p) & 0xffffe000u);
#endif
  return make_float2(big, p - big);
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
__device__ __forceinline__ void lf_store_split(float2* d, float4 x, float& chk) {
  const float2 a = lf_split_fast(x.x, chk), b = lf_split_fast(x.y, chk), c = lf_split_fast(x.z, chk),
               e = lf_split_fast(x.w, chk);
  *(float4*)d = make_float4(a.x, a.y, b.x, b.y);
  *(float4*)(d + 2) = make_float4(c.x, c.y, e.x, e.y);
}
// NaN wins, as the unfused max.
__device__ __forceinline__ float nmax(float a, float b) { float r; asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b)); return r; }

#if WG
// Byte offset of element (r, c) of a [ROWS][...] float tile in wgmma's 128-byte swizzle: blocks of
// 32 columns, each ROWS rows of 128 bytes from a 1024-byte boundary, the 16-byte chunks of row r
// at chunk ^ (r % 8).
template <int ROWS>
__device__ __forceinline__ unsigned lf_sw(int r, int c) {
  return (unsigned)((c >> 5) * ROWS * 128 + r * 128 + ((((c & 31) >> 2) ^ (r & 7)) << 4) + (c & 3) * 4);
}
template <int ROWS>
__device__ __forceinline__ float lf_ld(const float* tile, int r, int c) {
  return *(const float*)((const unsigned char*)tile + lf_sw<ROWS>(r, c));
}
// Four values at columns c4 .. c4 + 3 (c4 % 4 == 0) of row r, split into the big and small tiles.
// Bad: bool (lf_split, setting it for inf and NaN) or float (lf_split_fast's check sum).
template <int ROWS, typename Bad>
__device__ __forceinline__ void lf_store_split(float* hi, float* lo, int r, int c4, float4 x, Bad& bad) {
  float2 a, b, c, e;
  if constexpr (sizeof(Bad) == sizeof(bool))
    a = lf_split(x.x, bad), b = lf_split(x.y, bad), c = lf_split(x.z, bad), e = lf_split(x.w, bad);
  else
    a = lf_split_fast(x.x, bad), b = lf_split_fast(x.y, bad), c = lf_split_fast(x.z, bad), e = lf_split_fast(x.w, bad);
  const unsigned off = lf_sw<ROWS>(r, c4);
  *(float4*)((unsigned char*)hi + off) = make_float4(a.x, b.x, c.x, e.x);
  *(float4*)((unsigned char*)lo + off) = make_float4(a.y, b.y, c.y, e.y);
}
// Item `it` of the V tile from key k0 (VITEMS items): the even or odd keys (quad & 1) of 8-key group
// quad / 2, columns c4 .. c4 + 3. In V^T those 4 keys are the 4 consecutive places 4 quad .. 4 quad
// + 3 of a row (lf_vplace), so a thread stores a 16-byte chunk a column, and the 8 threads of a
// quarter warp (8 quads) fill a row's 8 chunks: no bank conflict.
__device__ __forceinline__ void lf_load_vitem(float4 (&x)[4], const float* v, long long vo, long long k0, const Params& P,
                                              int it, bool vec) {
  const int quad = it % (BC / 4), c4 = it / (BC / 4) * 4;
#pragma unroll
  for (int r = 0; r < 4; ++r)
    x[r] = (VITEMS % NT == 0 || it < VITEMS)
               ? lf_load4(v, vo, k0 + (quad >> 1) * 8 + (quad & 1) + 2 * r, P.tk, P.vsr, P.vsc, c4, vec)
               : make_float4(0.f, 0.f, 0.f, 0.f);
}
// The descriptors of k-step kk (8 columns, 32 bytes of a 128-byte row) of Q and K, and c of V^T (one
// 32-column block: BC = 32).
#define LF_QDESC(T, kk) lf_desc(lf_smem(T) + ((kk) >> 2) * BR * 128 + ((kk) & 3) * 32, 16, 1024)
#define LF_KDESC(T, kk) lf_desc(lf_smem(T) + ((kk) >> 2) * BC * 128 + ((kk) & 3) * 32, 16, 1024)
#define LF_VDESC(T, c) lf_desc(lf_smem(T) + (c) * 32, 16, 1024)
#endif

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

// P = 2^(x - max) of one n-tile's scores (sc: row g keys 2t, 2t + 1, row g + 8 the same), split
// into A fragments as bits: k-step c's 8 keys in the order 2t, 2t + 1 of each thread (k-indices t
// and t + 4), so the fragment is the thread's own accumulators: a0 (row g, key 2t), a1 (row g + 8,
// key 2t), a2 (row g, key 2t + 1), a3 (row g + 8, key 2t + 1), i.e. accumulators 0, 2, 1, 3. l
// gets the rows' sums.
__device__ __forceinline__ void lf_p_fragment(const float (&sc)[4], const float (&sub)[2], float (&l)[2],
                                              unsigned (&pb)[4], unsigned (&ps)[4]) {
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const float p = lf_exp2(sc[e] - sub[e >> 1]);
    l[e >> 1] += p;
    const float2 x = lf_split_p(p);
    const int a = (e == 1) ? 2 : (e == 2) ? 1 : e;
    pb[a] = __float_as_uint(x.x), ps[a] = __float_as_uint(x.y);
  }
}

// O += P V over the tile's keys (lf_p_fragment's key order: V's rows 2t and 2t + 1 for k-indices t
// and t + 4).
template <bool G>
__device__ __forceinline__ void lf_pv(float (&o)[NO][4], const float (&s)[NS][4], const float (&sub)[2], float (&l)[2],
                                      const float2* Vt, int g, int t) {
#pragma unroll
  for (int c = 0; c < NS; ++c) {
    unsigned pbu[4], psu[4];
    lf_p_fragment(s[c], sub, l, pbu, psu);
    float pb[4], ps[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) pb[e] = __uint_as_float(pbu[e]), ps[e] = __uint_as_float(psu[e]);
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

#if WG
// The products by mma.sync, in lf_mma3's guarded form, for the tiles whose operands hold inf or NaN
// (the warpgroup products have no per-fragment guard): the fragments of lf_scores and lf_pv, read
// from the swizzled tiles. V^T's place 8 c + t is key 8 c + 2 t, 8 c + t + 4 key 8 c + 2 t + 1: the
// k-indices P's fragments give them.
__device__ __forceinline__ void lf_scores_sync(float (&s)[NS][4], const float* Qhi, const float* Qlo, const float* Khi,
                                               const float* Klo, int wrow, int g, int t) {
#pragma unroll
  for (int kk = 0; kk < D / 8; ++kk) {
    float ab[4], as[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = wrow + g + 8 * (e & 1), c = kk * 8 + t + 4 * (e >> 1);
      ab[e] = lf_ld<BR>(Qhi, r, c), as[e] = lf_ld<BR>(Qlo, r, c);
    }
    float2 kf[NS][2];
#pragma unroll
    for (int n = 0; n < NS; ++n)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        kf[n][h] = make_float2(lf_ld<BC>(Khi, n * 8 + g, kk * 8 + t + 4 * h), lf_ld<BC>(Klo, n * 8 + g, kk * 8 + t + 4 * h));
    lf_mma3<true, NS>(s, ab, as, kf);
  }
}
__device__ __forceinline__ void lf_pv_sync(float (&o)[NO][4], const unsigned (&pb)[NS][4], const unsigned (&ps)[NS][4],
                                           const float* Vhi, const float* Vlo, int g, int t) {
#pragma unroll
  for (int c = 0; c < NS; ++c) {
    float ab[4], as[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) ab[e] = __uint_as_float(pb[c][e]), as[e] = __uint_as_float(ps[c][e]);
#pragma unroll
    for (int n0 = 0; n0 < NO; n0 += 4) {
      float2 vf[4][2];
#pragma unroll
      for (int n = 0; n < 4; ++n)
#pragma unroll
        for (int h = 0; h < 2; ++h)
          vf[n][h] = make_float2(lf_ld<DV>(Vhi, (n0 + n) * 8 + g, c * 8 + t + 4 * h),
                                 lf_ld<DV>(Vlo, (n0 + n) * 8 + g, c * 8 + t + 4 * h));
      lf_mma3<true, 4>(o + n0, ab, as, vf);
    }
  }
}
#endif

extern "C" __global__ void __launch_bounds__(NT, MINB) lf_attention(Params P) {
  extern __shared__ __align__(16) unsigned char smem[];
#if WG
  // From a 1024-byte boundary (the host adds 1024 bytes for it), swizzled (lf_sw): Q, K and V^T,
  // each as its big and its small TF32 halves.
  float* Qhi = (float*)(smem + ((1024u - (lf_smem(smem) & 1023u)) & 1023u));  // [BR][D]
  float* Qlo = Qhi + BR * D;
  float* Khi = Qlo + BR * D;  // [BC][D]
  float* Klo = Khi + BC * D;
  float* Vhi = Klo + BC * D;  // [DV][BC]: V transposed, its keys in the order of P's fragments
  float* Vlo = Vhi + DV * BC;
#else
  float2* Qs = (float2*)smem;  // [BR][QSS]
  float2* Ks = Qs + BR * QSS;  // [BC][KSS]
  float2* Vs = Ks + BC * KSS;  // [BC][VSS]
#endif
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
  float4 kr[KCH];
#pragma unroll
  for (int u = 0; u < KCH; ++u) {
    const int e = t + u * NT, rr = e / (D / 4), c4 = (e % (D / 4)) * 4;
    kr[u] = ntiles > 0 ? lf_load4(k, ko, rr, P.tk, P.ksr, P.ksc, c4, vec) : make_float4(0.f, 0.f, 0.f, 0.f);
  }
#if WG
  float4 vr[VIT][4];
#pragma unroll
  for (int u = 0; u < VIT; ++u) lf_load_vitem(vr[u], v, vo, ntiles > 0 ? 0 : P.tk, P, t + u * NT, vec);
#else
  float4 vr[VCH];
#pragma unroll
  for (int u = 0; u < VCH; ++u) {
    const int e = t + u * NT, rr = e / (DV / 4), c4 = (e % (DV / 4)) * 4;
    vr[u] = ntiles > 0 ? lf_load4(v, vo, rr, P.tk, P.vsr, P.vsc, c4, vec) : make_float4(0.f, 0.f, 0.f, 0.f);
  }
#endif
  bool qbad = false;
  {  // Q: every load in flight at once, then split
    float4 x[BR * D / 4 / NT];
#pragma unroll
    for (int u = 0; u < BR * D / 4 / NT; ++u) {
      const int e = t + u * NT, rr = e / (D / 4), c4 = (e % (D / 4)) * 4;
      x[u] = lf_load4(q, qo, q0 + rr, P.tq, P.qsr, P.qsc, c4, vec);
    }
    bool qnf = false;
#pragma unroll
    for (int u = 0; u < BR * D / 4 / NT; ++u) {
      const int e = t + u * NT, rr = e / (D / 4), c4 = (e % (D / 4)) * 4;
#if WG
      lf_store_split<BR>(Qhi, Qlo, rr, c4, x[u], qnf);
#else
      lf_store_split(Qs + rr * QSS + c4, x[u], qnf);
#endif
    }
#if WG
    lf_proxy_fence();
    qbad = __syncthreads_or(qnf);  // the block's Q holds inf or NaN: the guarded products
  }
#else
  }
  __syncthreads();
#endif
  const int wrow = warp * 16;
#if !WG
  const float2* Qw = Qs + wrow * QSS;
  bool qnf = false;  // the warp's Q rows hold inf or NaN
  for (int e = lane; e < 16 * D; e += 32) qnf |= lf_nonfinite(Qw[(e / D) * QSS + e % D].x);
  qbad = __any_sync(0xffffffffu, qnf);
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
#endif  // !WG
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
    // The fast split, then where a check sum is not finite (inf, NaN or a value rounding past the
    // largest float: rare) the exact one again over the same places, which also says whether the
    // tile holds inf or NaN.
    bool knf = false, vnf = false;
#if WG
    auto store_k = [&](auto& bad) {
#pragma unroll
      for (int u = 0; u < KCH; ++u) {
        const int e = t + u * NT, rr = e / (D / 4), c4 = (e % (D / 4)) * 4;
        lf_store_split<BC>(Khi, Klo, rr, c4, kr[u], bad);
      }
    };
    auto store_v = [&](auto& bad) {
#pragma unroll
      for (int u = 0; u < VIT; ++u) {  // V^T: a column's 4 keys a 16-byte chunk
        const int it = t + u * NT, quad = it % (BC / 4), c4 = it / (BC / 4) * 4;
        if (VITEMS % NT == 0 || it < VITEMS) {
          const float4(&x)[4] = vr[u];
          lf_store_split<DV>(Vhi, Vlo, c4, 4 * quad, make_float4(x[0].x, x[1].x, x[2].x, x[3].x), bad);
          lf_store_split<DV>(Vhi, Vlo, c4 + 1, 4 * quad, make_float4(x[0].y, x[1].y, x[2].y, x[3].y), bad);
          lf_store_split<DV>(Vhi, Vlo, c4 + 2, 4 * quad, make_float4(x[0].z, x[1].z, x[2].z, x[3].z), bad);
          lf_store_split<DV>(Vhi, Vlo, c4 + 3, 4 * quad, make_float4(x[0].w, x[1].w, x[2].w, x[3].w), bad);
        }
      }
    };
#else
    auto store_k = [&](auto& bad) {
#pragma unroll
      for (int u = 0; u < KCH; ++u) {
        const int e = t + u * NT, rr = e / (D / 4), c4 = (e % (D / 4)) * 4;
        lf_store_split(Ks + rr * KSS + c4, kr[u], bad);
      }
    };
    auto store_v = [&](auto& bad) {
#pragma unroll
      for (int u = 0; u < VCH; ++u) {
        const int e = t + u * NT, rr = e / (DV / 4), c4 = (e % (DV / 4)) * 4;
        lf_store_split(Vs + rr * VSS + c4, vr[u], bad);
      }
    };
#endif
    float kchk = 0.f, vchk = 0.f;
    store_k(kchk);
    store_v(vchk);
    if (lf_nonfinite(kchk)) store_k(knf);
    if (lf_nonfinite(vchk)) store_v(vnf);
#if WG
    lf_proxy_fence();
#endif
    const unsigned f = __reduce_or_sync(0xffffffffu, (knf ? 1u : 0u) | (vnf ? 2u : 0u));
    if (lane == 0) wflags[warp] = f;
    if (tile + 1 < ntiles) {  // the next tile's loads, in flight while this one is computed
#pragma unroll
      for (int u = 0; u < KCH; ++u) {
        const int e = t + u * NT, rr = e / (D / 4), c4 = (e % (D / 4)) * 4;
        kr[u] = lf_load4(k, ko, k0 + BC + rr, P.tk, P.ksr, P.ksc, c4, vec);
      }
#if WG
#pragma unroll
      for (int u = 0; u < VIT; ++u) lf_load_vitem(vr[u], v, vo, k0 + BC, P, t + u * NT, vec);
#else
#pragma unroll
      for (int u = 0; u < VCH; ++u) {
        const int e = t + u * NT, rr = e / (DV / 4), c4 = (e % (DV / 4)) * 4;
        vr[u] = lf_load4(v, vo, k0 + BC + rr, P.tk, P.vsr, P.vsc, c4, vec);
      }
#endif
    }
    __syncthreads();
    unsigned tf = 0;
#pragma unroll
    for (int w = 0; w < NT / 32; ++w) tf |= wflags[w];
    float s[NS][4];
#if WG
    if (!qbad && !(tf & 1u)) {
      // S = Q K^T: per k-step of 8 columns, the small terms (Q_lo K_hi, Q_hi K_lo), then Q_hi K_hi,
      // m64 x BC x k8 warpgroup products with both operands K-major in shared memory.
      lf_wg_fence();
#if !TF32X1
#pragma unroll
      for (int kk = 0; kk < D / 8; ++kk) LF_WGMMA_SS(BC)(&s[0][0], LF_QDESC(Qlo, kk), LF_KDESC(Khi, kk), kk > 0);
#pragma unroll
      for (int kk = 0; kk < D / 8; ++kk) LF_WGMMA_SS(BC)(&s[0][0], LF_QDESC(Qhi, kk), LF_KDESC(Klo, kk), 1);
#endif
#pragma unroll
      for (int kk = 0; kk < D / 8; ++kk)
        LF_WGMMA_SS(BC)(&s[0][0], LF_QDESC(Qhi, kk), LF_KDESC(Khi, kk), TF32X1 ? kk > 0 : 1);
      lf_wg_wait();
      LF_KEEP(BC)(&s[0][0]);
    } else {
#pragma unroll
      for (int n = 0; n < NS; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
      lf_scores_sync(s, Qhi, Qlo, Khi, Klo, wrow, g, tq4);
    }
#else
#pragma unroll
    for (int n = 0; n < NS; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
    if (qbad || (tf & 1u))
      lf_scores<true>(s, qb, qs, Qw, Ks, g, tq4);
    else
      lf_scores<false>(s, qb, qs, Qw, Ks, g, tq4);
#endif
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
#if WG
    // P = 2^(x - max) split as A fragments (V^T holds its keys in their order), then O += P V:
    // m64 x DV x k8 products, P from registers, V^T K-major in shared memory.
    unsigned pb[NS][4], ps[NS][4];
#pragma unroll
    for (int c = 0; c < NS; ++c) lf_p_fragment(s[c], sub, l, pb[c], ps[c]);
    if (!(tf & 2u)) {
      LF_KEEP(DV)(&o[0][0]);
      lf_wg_fence();
#if !TF32X1
#pragma unroll
      for (int c = 0; c < NS; ++c) LF_WGMMA_RS(DV)(&o[0][0], ps[c], LF_VDESC(Vhi, c), 1);
#pragma unroll
      for (int c = 0; c < NS; ++c) LF_WGMMA_RS(DV)(&o[0][0], pb[c], LF_VDESC(Vlo, c), 1);
#endif
#pragma unroll
      for (int c = 0; c < NS; ++c) LF_WGMMA_RS(DV)(&o[0][0], pb[c], LF_VDESC(Vhi, c), 1);
      lf_wg_wait();
      LF_KEEP(DV)(&o[0][0]);
#pragma unroll
      for (int c = 0; c < NS; ++c) lf_keep_a(pb[c]), lf_keep_a(ps[c]);
    } else {
      lf_pv_sync(o, pb, ps, Vhi, Vlo, g, tq4);
    }
#else
    if (tf & 2u)
      lf_pv<true>(o, s, sub, l, Vs, g, tq4);
    else
      lf_pv<false>(o, s, sub, l, Vs, g, tq4);
#endif
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
int attention_f32_keys_per_tile(int64_t d, int64_t dv, bool wgmma) { return !wgmma && (d > 64 || dv > 64) ? 16 : 32; }

bool attention_f32_wgmma_supports(int64_t d, int64_t dv, int sm_major, int sm_minor, std::string* why) {
  if (!attention_f32_supports(DType::Float32, d, dv, why)) return false;
  if (sm_major != 9 || sm_minor != 0) {
    *why = "not an sm_90 GPU (wgmma is Hopper's)";
    return false;
  }
  return true;
}

// Grids of at least 3 blocks an SM at head dims up to 64 read Q from shared memory at each product
// instead of keeping its fragments (64 registers) live: 236 registers a thread become 168, 3
// blocks an SM instead of 2. On the H200 (2026-11-28, causal float32, lazyfuse-programs --quick):
// B8 H16 T512 d64 0.248 -> 0.224 ms, d32 0.157 -> 0.132; B1 H8 T2048 d64 (256 blocks) 0.351 ->
// 0.389, so grids of fewer blocks keep Q in registers. Head dim 128 reads Q from shared memory at
// any grid, and forced to 3 blocks an SM it spills (0.499 -> 0.610).
// The same grids take the wgmma kernel on an sm_90 GPU. On the H200 (2026-11-29, causal float32,
// lazyfuse-programs --quick, both kernels with the fast split; mma.sync -> wgmma): B8 H16 T512 d64
// 0.164 -> 0.143 ms, d32 0.088 -> 0.073; B1 H8 T2048 d64 (256 blocks) 0.181 -> 0.195; d128 (1
// block an SM: 129 KiB of tiles) 0.361 -> 0.476.
bool attention_f32_many_blocks(int64_t d, int64_t dv, long long blocks, int multiprocessors) {
  return d <= 64 && dv <= 64 && blocks >= 3LL * multiprocessors;
}

std::string attention_f32_source(int64_t d, int64_t dv, int mask, bool causal, bool many_blocks, bool tf32,
                                 bool wgmma) {
  const int bc = attention_f32_keys_per_tile(d, dv, wgmma);
  std::string head = "#define WG " + std::string(wgmma ? "1" : "0") + "\n";
  if (wgmma)
    head += std::string(d <= 64 && dv <= 64 ? "#define MINB 3\n" : "");
  else if (many_blocks)
    head += "#define QREG 0\n#define MINB 3\n";
  head += "#define TF32X1 " + std::string(tf32 ? "1" : "0") + "\n#define BC " + std::to_string(bc) + "\n#define D " +
          std::to_string(d) + "\n#define DV " + std::to_string(dv) + "\n#define MASK " + std::to_string(mask) +
          "\n#define CAUSAL " + (causal ? "1" : "0") + "\n" + attention_prelude();
  // S = Q K^T, and O += P V with V stored transposed: TF32 operands are K-major only.
  if (wgmma) head += attention_wgmma_helpers("tf32", bc, static_cast<int>(dv), /*rs_b_n_major=*/false);
  return head + kF32Kernel;
}

size_t attention_f32_shared_bytes(int64_t d, int64_t dv, bool wgmma) {
  const size_t keys = static_cast<size_t>(attention_f32_keys_per_tile(d, dv, wgmma));
  const size_t rows = static_cast<size_t>(kRows), ud = static_cast<size_t>(d), udv = static_cast<size_t>(dv);
  // wgmma: unpadded big and small tiles from a 1024-byte boundary (up to 1024 bytes to get there).
  if (wgmma) return 2 * 4 * (rows * ud + keys * ud + keys * udv) + 1024;
  const size_t pair = 8;  // (big, small) floats
  return pair * (rows * (ud + 4) + keys * (ud + 4) + keys * (udv + 2));
}

}  // namespace lf::cuda
