// The CUDA C of the GPU sort (sort.h). Keys become order-preserving unsigned integers (NaN above
// +inf, -0.0 equal to 0.0, inverted for descending), compared together with their position, so
// every path is stable. Each path also writes sort's values where asked (a null `vals` otherwise):
// the keys as they were read, bit for bit.
// - lf_sort_block: one block per row of up to 4096 elements (the 64-bit keys of rows the radix
//   blocks cannot hold, and short rows), a bitonic sort of (key, position)
//   pairs in shared memory;
// - lf_radix_block, lf_radix_block_1k: one block per row of up to 4096 (2048 for 64-bit keys)
//   or 1024 elements, an LSD radix sort in shared memory (the Onesweep pass's ranking, below);
// - lf_select_block: topk of k <= 64, one block per row of any length: a radix select finds the
//   k-th key (8-bit digits, a shared histogram a pass), the keys below it and the first of the
//   keys equal to it (in position order) are gathered, and the k are sorted in shared memory;
// - lf_onesweep_*: a long row's LSD radix sort in the manner of Adinets & Merrill's Onesweep
//   (2022): one read of the row counts every pass's 8-bit digits (lf_onesweep_hist), then one
//   kernel a pass (lf_onesweep_pass). A pass's tiles take their numbers from a counter in launch
//   order, rank their keys among equal digits (warp matches, in position order: stable), and find
//   where each digit's run of the tile goes by decoupled look-back over the earlier tiles' counts
//   of that digit (a thread a digit); the tile is ordered by digit in shared memory so that its
//   runs are written coalesced. The first pass reads the row itself (any strides), the last writes
//   the int64 positions and the values: the passes carry the keys' raw bits (the order-preserving
//   key is recomputed from them), so the values come out exact. Digits that cannot differ are not
//   passed over (bool: one pass, bfloat16: two, float16: three).
#include <stdexcept>
#include <string>

#include "codegen/cuda/sort.h"

namespace lf::cuda {
namespace {

// Key maps every dtype's lf_key builds on.
const char* const kKeyPrelude = R"(
typedef long long i64;
typedef unsigned long long u64;
__device__ __forceinline__ unsigned lf_fkey(unsigned b) {
  if ((b & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;  // NaN: above +inf
  if ((b & 0x7fffffffu) == 0) b = 0;                          // -0.0 == 0.0
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ u64 lf_dkey(u64 b) {
  if ((b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) return ~0ull;
  if ((b & 0x7fffffffffffffffull) == 0) b = 0;
  return (b >> 63) ? ~b : (b | 0x8000000000000000ull);
}
)";

const char* const kSortSource = R"(
struct Row { i64 off, so, sn, si, inner, n, kept; int desc; };
#define LF_MAXKEY ((LF_KEY)~(LF_KEY)0)
__device__ __forceinline__ i64 lf_at(const Row& r, i64 row, i64 j) {
  return r.off + (row / r.inner) * r.so + (row % r.inner) * r.si + j * r.sn;
}
__device__ __forceinline__ i64 lf_out(const Row& r, i64 row, i64 j) {
  return ((row / r.inner) * r.kept + j) * r.inner + row % r.inner;
}
__device__ __forceinline__ LF_KEY lf_sort_key(const LF_T* x, const Row& r, i64 row, i64 j) {
  LF_KEY k = lf_key(x[lf_at(r, row, j)]);
  return r.desc ? (LF_KEY)~k : k;
}
__device__ __forceinline__ bool lf_after(LF_KEY ka, unsigned ia, LF_KEY kb, unsigned ib) {
  return ka > kb || (ka == kb && ia > ib);
}
// Bitonic sort of p (a power of 2) pairs in shared memory, by the whole block.
__device__ void lf_bitonic(LF_KEY* key, unsigned* idx, int p) {
  for (int k = 2; k <= p; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) {
      for (int i = threadIdx.x; i < p; i += blockDim.x) {
        int l = i ^ j;
        if (l > i && lf_after(key[i], idx[i], key[l], idx[l]) == ((i & k) == 0)) {
          LF_KEY tk = key[i]; key[i] = key[l]; key[l] = tk;
          unsigned ti = idx[i]; idx[i] = idx[l]; idx[l] = ti;
        }
      }
      __syncthreads();
    }
}

extern "C" __global__ void lf_sort_block(const LF_T* x, Row r, int p, i64* out, LF_T* vals) {
  extern __shared__ unsigned long long lf_smem[];
  LF_KEY* key = (LF_KEY*)lf_smem;
  unsigned* idx = (unsigned*)(key + p);
  i64 row = blockIdx.x;
  for (int i = threadIdx.x; i < p; i += blockDim.x) {
    bool in = i < r.n;
    key[i] = in ? lf_sort_key(x, r, row, i) : LF_MAXKEY;  // padding sorts after every element
    idx[i] = in ? (unsigned)i : 0xffffffffu;
  }
  __syncthreads();
  lf_bitonic(key, idx, p);
  for (int j = threadIdx.x; j < r.kept; j += blockDim.x) {
    out[lf_out(r, row, j)] = idx[j];
    if (vals) vals[lf_out(r, row, j)] = x[lf_at(r, row, idx[j])];
  }
}

// blockDim.x: a multiple of 32 from 64 to 1024 (more threads for longer rows: more loads in flight).
extern "C" __global__ void lf_select_block(const LF_T* x, Row r, i64* out, LF_T* vals) {
  __shared__ unsigned hist[256];
  __shared__ LF_KEY prefix_s;
  __shared__ unsigned rem_s, nless, eq_taken;
  __shared__ unsigned wcount[32];
  __shared__ LF_KEY ckey[64];
  __shared__ unsigned cidx[64];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  i64 row = blockIdx.x;
  LF_KEY prefix = 0, mask = 0;
  unsigned rem = (unsigned)r.kept;  // the rank (from 1) of the key sought among those under the prefix
  for (int shift = (int)sizeof(LF_KEY) * 8 - 8; shift >= 0; shift -= 8) {
    for (int d = tid; d < 256; d += blockDim.x) hist[d] = 0;
    __syncthreads();
    for (i64 j = tid; j < r.n; j += blockDim.x) {
      LF_KEY k = lf_sort_key(x, r, row, j);
      if ((k & mask) == prefix) atomicAdd(&hist[(unsigned)(k >> shift) & 255u], 1u);
    }
    __syncthreads();
    if (tid == 0) {
      unsigned acc = 0;
      int d = 0;
      for (; d < 255 && acc + hist[d] < rem; ++d) acc += hist[d];
      prefix_s = prefix | ((LF_KEY)d << shift);
      rem_s = rem - acc;
    }
    __syncthreads();
    prefix = prefix_s;
    rem = rem_s;
    mask |= (LF_KEY)255 << shift;
    __syncthreads();
  }
  // prefix is the k-th key; rem of the keys equal to it belong to the k, the first by position.
  const unsigned less = (unsigned)r.kept - rem;
  if (tid == 0) { nless = 0; eq_taken = 0; }
  __syncthreads();
  for (i64 base = 0; base < r.n; base += blockDim.x) {
    i64 j = base + tid;
    bool in = j < r.n;
    LF_KEY k = in ? lf_sort_key(x, r, row, j) : 0;
    bool lt = in && k < prefix, eq = in && k == prefix;
    if (lt) {
      unsigned s = atomicAdd(&nless, 1u);
      ckey[s] = k;
      cidx[s] = (unsigned)j;
    }
    unsigned ballot = __ballot_sync(0xffffffffu, eq);
    if (lane == 0) wcount[warp] = __popc(ballot);
    __syncthreads();
    unsigned before = eq_taken + __popc(ballot & ((1u << lane) - 1u));
    for (int w = 0; w < warp; ++w) before += wcount[w];
    if (eq && before < rem) {
      ckey[less + before] = k;
      cidx[less + before] = (unsigned)j;
    }
    __syncthreads();
    if (tid == 0)
      for (int w = 0; w < (int)(blockDim.x >> 5); ++w) eq_taken += wcount[w];
    __syncthreads();
  }
  for (int i = tid; i < 64; i += blockDim.x)
    if (i >= r.kept) { ckey[i] = LF_MAXKEY; cidx[i] = 0xffffffffu; }
  __syncthreads();
  lf_bitonic(ckey, cidx, 64);
  for (int j = tid; j < r.kept; j += blockDim.x) {
    out[lf_out(r, row, j)] = cidx[j];
    if (vals) vals[lf_out(r, row, j)] = x[lf_at(r, row, cidx[j])];
  }
}

// ---- Onesweep. LF_RAW is LF_KEY's width; lf_to_raw / lf_from_raw (per dtype) keep the bits.
#define LF_ITEMS (sizeof(LF_KEY) == 8 ? 8 : 16)  // keys a thread: 64-bit tiles are half as long (shared memory)
#define LF_OTILE (256 * LF_ITEMS)
// A look-back status word: the count in bits 0-31, the kind (1: this tile's own, 2: inclusive of
// every tile before it) in bits 32-33, the pass's epoch (row * passes + pass + 1, unique in a call,
// so that one zeroed array serves every pass) in bits 34-63.
#define LF_AGG 1ull
#define LF_INCL 2ull
__device__ __forceinline__ unsigned lf_digit(LF_KEY raw, int desc, int shift) {
  LF_KEY k = lf_key(lf_from_raw(raw));
  return (unsigned)((desc ? (LF_KEY)~k : k) >> shift) & 255u;
}
__device__ __forceinline__ i64 lf_row_base(const Row& r, i64 row) { return r.off + (row / r.inner) * r.so + (row % r.inner) * r.si; }

// Every pass's digit counts of row row0 + blockIdx.y: hist[blockIdx.y][pass][digit], added up over
// the blocks along x (zeroed first).
extern "C" __global__ void __launch_bounds__(256)
lf_onesweep_hist(const LF_T* x, Row r, i64 row0, int first_shift, int passes, unsigned* hist) {
  __shared__ unsigned h[8][256];
  const i64 row = row0 + blockIdx.y;
  hist += (i64)blockIdx.y * passes * 256;
  for (int i = threadIdx.x; i < 8 * 256; i += 256) (&h[0][0])[i] = 0;
  __syncthreads();
  const i64 base = lf_row_base(r, row);
  for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < r.n; j += (i64)gridDim.x * blockDim.x) {
    const LF_KEY raw = lf_to_raw(x[base + j * r.sn]);
    for (int p = 0; p < passes; ++p) atomicAdd(&h[p][lf_digit(raw, r.desc, first_shift + 8 * p)], 1u);
  }
  __syncthreads();
  for (int p = 0; p < passes; ++p) {
    const unsigned c = h[p][threadIdx.x];
    if (c) atomicAdd(&hist[p * 256 + threadIdx.x], c);
  }
}

// Exclusive scans over the 256 digits of a and b (thread t holds digit t's), by the whole block.
__device__ __forceinline__ void lf_scan256(unsigned& a, unsigned& b, unsigned (*warp_sums)[2]) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned ia = a, ib = b;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const unsigned ta = __shfl_up_sync(0xffffffffu, ia, o), tb = __shfl_up_sync(0xffffffffu, ib, o);
    if (lane >= o) { ia += ta; ib += tb; }
  }
  if (lane == 31) { warp_sums[warp][0] = ia; warp_sums[warp][1] = ib; }
  __syncthreads();
  unsigned pa = 0, pb = 0;
  for (int w = 0; w < warp; ++w) { pa += warp_sums[w][0]; pb += warp_sums[w][1]; }
  a = pa + ia - a;
  b = pb + ib - b;
}

// The ranking step of a radix pass, by one warp over its ITEMS x 32 keys (item c of lane l at
// warp-relative position 32 c + l; those at or past `count` from the block's first are none):
// rd[c] = the item's rank among the warp's keys of its digit, in position order (stable), | the
// digit << 16 (256: no key). wcnt (the warp's row of counts, zeroed) ends with each digit's count.
template <int ITEMS>
__device__ __forceinline__ void lf_rank_digits(const LF_KEY (&raw)[ITEMS], int count, int desc, int shift,
                                               unsigned* wcnt, unsigned (&rd)[ITEMS]) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const unsigned lt = (1u << lane) - 1u;
#pragma unroll
  for (int c = 0; c < ITEMS; ++c) {
    const bool in = warp * 32 * ITEMS + 32 * c + lane < count;
    const unsigned dg = in ? lf_digit(raw[c], desc, shift) : 256u;
    const unsigned peers = __match_any_sync(0xffffffffu, dg);
    const unsigned below = __popc(peers & lt);
    const unsigned before = in ? wcnt[dg] : 0u;
    __syncwarp();
    if (in && below == 0) wcnt[dg] = before + __popc(peers);
    __syncwarp();
    rd[c] = (before + below) | (dg << 16);
  }
}

// A row of up to 256 x ITEMS keys sorted in shared memory, a block of 256 threads per row: the
// Onesweep pass's ranking (warp matches, stable) without its look-back, a pass per digit with the
// row kept on chip between passes. Item c of lane l of warp w holds the key at
// w * 32 ITEMS + 32 c + l, so the items in (warp, item, lane) order are in the row's current order.
template <int ITEMS>
__device__ __forceinline__ void lf_radix_row(const LF_T* x, const Row& r, int first_shift, int passes, i64* out,
                                             LF_T* vals, LF_KEY* skey, unsigned* sidx, unsigned (*wcnt)[256],
                                             unsigned* sfirst, unsigned (*warp_sums)[2]) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const i64 row = blockIdx.x;
  const int count = (int)r.n;
  const i64 xbase = lf_row_base(r, row);
  LF_KEY raw[ITEMS];
  unsigned pos[ITEMS];
#pragma unroll
  for (int c = 0; c < ITEMS; ++c) {
    const int at = warp * 32 * ITEMS + 32 * c + lane;
    if (at < count) { raw[c] = lf_to_raw(x[xbase + at * r.sn]); pos[c] = (unsigned)at; }
  }
  for (int pass = 0; pass < passes; ++pass) {
    const int shift = first_shift + 8 * pass;
    for (int i = tid; i < 8 * 256; i += 256) (&wcnt[0][0])[i] = 0;
    __syncthreads();
    unsigned rd[ITEMS];  // rank among the warp's keys of the digit | digit << 16 (256: no key)
    lf_rank_digits<ITEMS>(raw, count, r.desc, shift, wcnt[warp], rd);
    __syncthreads();
    // Thread d: digit d's start among the row's keys, and each warp's start among them.
    const unsigned d = tid;
    unsigned total = 0;
    for (int w = 0; w < 8; ++w) {
      const unsigned t = wcnt[w][d];
      wcnt[w][d] = total;
      total += t;
    }
    unsigned first = total, unused = 0;
    lf_scan256(first, unused, warp_sums);
    sfirst[d] = first;
    __syncthreads();
#pragma unroll
    for (int c = 0; c < ITEMS; ++c) {
      const unsigned dg = rd[c] >> 16;
      if (dg == 256u) continue;
      const unsigned p = sfirst[dg] + wcnt[warp][dg] + (rd[c] & 0xffffu);
      skey[p] = raw[c];
      sidx[p] = pos[c];
    }
    __syncthreads();
    if (pass + 1 < passes) {
#pragma unroll
      for (int c = 0; c < ITEMS; ++c) {
        const int at = warp * 32 * ITEMS + 32 * c + lane;
        if (at < count) { raw[c] = skey[at]; pos[c] = sidx[at]; }
      }
    }
  }
  for (int j = tid; j < r.kept; j += 256) {
    out[lf_out(r, row, j)] = sidx[j];
    if (vals) vals[lf_out(r, row, j)] = lf_from_raw(skey[j]);
  }
}

// Rows of up to LF_OTILE keys (4096; 2048 for 64-bit keys), and of up to 1024.
extern "C" __global__ void __launch_bounds__(256)
lf_radix_block(const LF_T* x, Row r, int first_shift, int passes, i64* out, LF_T* vals) {
  __shared__ unsigned wcnt[8][256];
  __shared__ LF_KEY skey[LF_OTILE];
  __shared__ unsigned sidx[LF_OTILE];
  __shared__ unsigned sfirst[256];
  __shared__ unsigned warp_sums[8][2];
  lf_radix_row<LF_ITEMS>(x, r, first_shift, passes, out, vals, skey, sidx, wcnt, sfirst, warp_sums);
}
extern "C" __global__ void __launch_bounds__(256)
lf_radix_block_1k(const LF_T* x, Row r, int first_shift, int passes, i64* out, LF_T* vals) {
  __shared__ unsigned wcnt[8][256];
  __shared__ LF_KEY skey[1024];
  __shared__ unsigned sidx[1024];
  __shared__ unsigned sfirst[256];
  __shared__ unsigned warp_sums[8][2];
  lf_radix_row<4>(x, r, first_shift, passes, out, vals, skey, sidx, wcnt, sfirst, warp_sums);
}

// One pass: blocks of 256 threads (at least 3 an SM: with one, as the registers allowed unbounded,
// the serial steps of ranking and look-back were not hidden; bench/RESULTS.md, 2026-11-27), a tile of LF_OTILE keys each (in the order the tiles' numbers
// are taken from *counter, which grows by `tiles` a pass). Rows side by side: blockIdx.y is the
// row's slot (row row0 + slot), which has its own n keys and positions of scratch, digit counts,
// status words and counter, so the rows' passes run in one launch and a tile only ever waits for
// earlier tiles of its own row. pass 0 reads the row from x, the others kin / iin; the last
// (`last`) writes out (positions j < r.kept) and vals (when not null), the others kout / iout.
extern "C" __global__ void __launch_bounds__(256, 3)
lf_onesweep_pass(const LF_T* x, Row r, i64 row0, const LF_KEY* kin, const unsigned* iin, LF_KEY* kout,
                 unsigned* iout, i64* out, LF_T* vals, int shift, int pass, int passes, int last,
                 const unsigned* hist, unsigned long long* status, unsigned long long* counter, i64 tiles) {
  const i64 slot = blockIdx.y, row = row0 + slot;
  kin += slot * r.n;
  iin += slot * r.n;
  kout += slot * r.n;
  iout += slot * r.n;
  hist += slot * passes * 256;
  status += slot * tiles * 256;
  counter += slot;
  // The status words' epoch: unique in a call (a slot's words serve every row it takes).
  const unsigned epoch = (unsigned)(row * passes + pass + 1);
  __shared__ unsigned wcnt[8][256];  // per warp and digit: its keys' count, then where they start in the tile
  __shared__ LF_KEY skey[LF_OTILE];
  __shared__ unsigned sidx[LF_OTILE];
  __shared__ long long sbase[256];   // a digit's place in the output minus its place in the tile
  __shared__ unsigned sfirst[256];   // where a digit's keys start in the tile's digit order
  __shared__ unsigned warp_sums[8][2];
  __shared__ i64 stile;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int i = tid; i < 8 * 256; i += 256) (&wcnt[0][0])[i] = 0;
  if (tid == 0) stile = (i64)(atomicAdd(counter, 1ull) % (unsigned long long)tiles);
  __syncthreads();
  const i64 tile = stile, lo = tile * LF_OTILE;
  const int count = (int)(lo + LF_OTILE < r.n ? LF_OTILE : r.n - lo);
  const i64 xbase = pass == 0 ? lf_row_base(r, row) : 0;
  // The warp's LF_ITEMS x 32 keys, item c of lane l at warp * 32 LF_ITEMS + 32 c + l: loads
  // coalesced, and items in lane-then-item order are in position order. Only the keys are held
  // through the ranking (each item's rank among the warp's keys of its digit and the digit in one
  // word); the positions are read when the tile is ordered: fewer registers, more blocks an SM.
  LF_KEY raw[LF_ITEMS];
  unsigned rd[LF_ITEMS];  // rank | digit << 16 (digit 256: past the row's end)
#pragma unroll
  for (int c = 0; c < LF_ITEMS; ++c) {
    const int at = warp * 32 * LF_ITEMS + 32 * c + lane;
    if (at < count) raw[c] = pass == 0 ? lf_to_raw(x[xbase + (lo + at) * r.sn]) : kin[lo + at];
  }
  lf_rank_digits<LF_ITEMS>(raw, count, r.desc, shift, wcnt[warp], rd);
  __syncthreads();
  // Thread d: digit d. The warps' starts among the tile's keys of d, the tile's count of d,
  // published at once for the later tiles' look-back.
  const unsigned d = tid;
  unsigned total = 0;
  for (int w = 0; w < 8; ++w) {
    const unsigned t = wcnt[w][d];
    wcnt[w][d] = total;
    total += t;
  }
  const unsigned long long tag = (unsigned long long)epoch << 34;
  volatile unsigned long long* st = status + tile * 256 + d;
  *st = tag | ((tile == 0 ? LF_INCL : LF_AGG) << 32) | total;
  unsigned digit_start = hist[pass * 256 + d], first = total;
  lf_scan256(digit_start, first, warp_sums);  // where d's keys start in the output and in the tile
  sfirst[d] = first;
  __syncthreads();
  // The tile in digit order in shared memory, the positions read now.
#pragma unroll
  for (int c = 0; c < LF_ITEMS; ++c) {
    const unsigned dg = rd[c] >> 16;
    if (dg == 256u) continue;
    const unsigned p = sfirst[dg] + wcnt[warp][dg] + (rd[c] & 0xffffu);
    const int at = warp * 32 * LF_ITEMS + 32 * c + lane;
    skey[p] = raw[c];
    sidx[p] = pass == 0 ? (unsigned)(lo + at) : iin[lo + at];
  }
  // The earlier tiles' counts of d (look-back), then where the tile's run of d goes.
  unsigned long long before = 0;
  for (i64 t = tile - 1; t >= 0;) {
    const unsigned long long w = ((volatile unsigned long long*)status)[t * 256 + d];
    if ((w >> 34) != epoch || ((w >> 32) & 3ull) == 0) continue;  // not published yet
    before += w & 0xffffffffull;
    if (((w >> 32) & 3ull) == LF_INCL) break;
    --t;
  }
  if (tile > 0) *st = tag | (LF_INCL << 32) | (before + total);
  sbase[d] = (long long)digit_start + (long long)before - (long long)first;
  __syncthreads();
  const i64 obase = last ? ((row / r.inner) * r.kept) * r.inner + row % r.inner : 0;
  for (int i = tid; i < count; i += 256) {
    const LF_KEY k = skey[i];
    const i64 o = sbase[lf_digit(k, r.desc, shift)] + i;
    if (!last) {
      kout[o] = k;
      iout[o] = sidx[i];
    } else if (o < r.kept) {
      out[obase + o * r.inner] = sidx[i];
      if (vals) vals[obase + o * r.inner] = lf_from_raw(k);
    }
  }
}
)";

}  // namespace

std::string sort_source(DType dtype) {
  std::string head;
  switch (dtype) {
    case DType::Bool:
      head = "#define LF_T unsigned char\n#define LF_KEY unsigned\n"
             "__device__ __forceinline__ unsigned lf_key(unsigned char v) { return v != 0; }\n"
             "#define lf_to_raw(v) ((unsigned)(v))\n#define lf_from_raw(r) ((unsigned char)(r))\n";
      break;
    case DType::Int32:
      head = "#define LF_T int\n#define LF_KEY unsigned\n"
             "__device__ __forceinline__ unsigned lf_key(int v) { return (unsigned)v ^ 0x80000000u; }\n"
             "#define lf_to_raw(v) ((unsigned)(v))\n#define lf_from_raw(r) ((int)(r))\n";
      break;
    case DType::Int64:
      head = "#define LF_T long long\n#define LF_KEY unsigned long long\n"
             "__device__ __forceinline__ unsigned long long lf_key(long long v) { "
             "return (unsigned long long)v ^ 0x8000000000000000ull; }\n"
             "#define lf_to_raw(v) ((unsigned long long)(v))\n#define lf_from_raw(r) ((long long)(r))\n";
      break;
    case DType::Float16:  // the half's float value: every half is exact in float
      head = "#define LF_T unsigned short\n#define LF_KEY unsigned\n"
             "__device__ __forceinline__ unsigned lf_key(unsigned short h) { float f; "
             "asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return lf_fkey(__float_as_uint(f)); }\n"
             "#define lf_to_raw(v) ((unsigned)(v))\n#define lf_from_raw(r) ((unsigned short)(r))\n";
      break;
    case DType::BFloat16:
      head = "#define LF_T unsigned short\n#define LF_KEY unsigned\n"
             "__device__ __forceinline__ unsigned lf_key(unsigned short b) { return lf_fkey(((unsigned)b) << 16); }\n"
             "#define lf_to_raw(v) ((unsigned)(v))\n#define lf_from_raw(r) ((unsigned short)(r))\n";
      break;
    case DType::Float32:
      head = "#define LF_T float\n#define LF_KEY unsigned\n"
             "__device__ __forceinline__ unsigned lf_key(float v) { return lf_fkey(__float_as_uint(v)); }\n"
             "#define lf_to_raw(v) __float_as_uint(v)\n#define lf_from_raw(r) __uint_as_float(r)\n";
      break;
    case DType::Float64:
      head = "#define LF_T double\n#define LF_KEY unsigned long long\n"
             "__device__ __forceinline__ unsigned long long lf_key(double v) { "
             "return lf_dkey((unsigned long long)__double_as_longlong(v)); }\n"
             "#define lf_to_raw(v) ((unsigned long long)__double_as_longlong(v))\n#define lf_from_raw(r) __longlong_as_double((long long)(r))\n";
      break;
    case DType::Complex64:  // frontend types, never sorted (lazyfuse/types.h)
    case DType::Complex128: throw std::logic_error("internal: a complex sort");
  }
  return kKeyPrelude + head + kSortSource;
}

int radix_passes(DType dtype, int* first_shift) {
  switch (dtype) {
    case DType::Bool: *first_shift = 0; return 1;
    case DType::BFloat16: *first_shift = 16; return 2;
    case DType::Float16: *first_shift = 8; return 3;
    case DType::Int64:
    case DType::Float64: *first_shift = 0; return 8;
    case DType::Int32:
    case DType::Float32:
    case DType::Complex64:
    case DType::Complex128: break;
  }
  *first_shift = 0;
  return 4;
}

}  // namespace lf::cuda
