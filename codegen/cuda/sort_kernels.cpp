// The CUDA C of the GPU sort (sort.h). Keys become order-preserving unsigned integers (NaN above
// +inf, -0.0 equal to 0.0, inverted for descending), compared together with their position, so
// every path is stable:
// - lf_sort_block: one block per row of up to 4096 elements, a bitonic sort of (key, position)
//   pairs in shared memory;
// - lf_select_block: topk of k <= 64, one block per row of any length: a radix select finds the
//   k-th key (8-bit digits, a shared histogram a pass), the keys below it and the first of the
//   keys equal to it (in position order) are gathered, and the k are sorted in shared memory;
// - lf_radix_*: a long row's LSD radix sort, 8-bit digits: per-tile digit histograms, one
//   exclusive scan over them (per digit, tiles in order; then over the digits' totals), a stable
//   scatter per tile (ranks among equal digits from warp matches, in position order), the tile
//   ordered by digit in shared memory first so that its digit runs are written coalesced.
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
#define LF_TILE 4096
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

extern "C" __global__ void lf_sort_block(const LF_T* x, Row r, int p, i64* out) {
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
  for (int j = threadIdx.x; j < r.kept; j += blockDim.x) out[lf_out(r, row, j)] = idx[j];
}

// blockDim.x == 256.
extern "C" __global__ void lf_select_block(const LF_T* x, Row r, i64* out) {
  __shared__ unsigned hist[256];
  __shared__ LF_KEY prefix_s;
  __shared__ unsigned rem_s, nless, eq_taken;
  __shared__ unsigned wcount[8];
  __shared__ LF_KEY ckey[64];
  __shared__ unsigned cidx[64];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  i64 row = blockIdx.x;
  LF_KEY prefix = 0, mask = 0;
  unsigned rem = (unsigned)r.kept;  // the rank (from 1) of the key sought among those under the prefix
  for (int shift = (int)sizeof(LF_KEY) * 8 - 8; shift >= 0; shift -= 8) {
    hist[tid] = 0;
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
  for (int j = tid; j < r.kept; j += blockDim.x) out[lf_out(r, row, j)] = cidx[j];
}

extern "C" __global__ void lf_radix_init(const LF_T* x, Row r, i64 row, LF_KEY* keys, unsigned* idx) {
  for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < r.n; j += (i64)gridDim.x * blockDim.x) {
    keys[j] = lf_sort_key(x, r, row, j);
    idx[j] = (unsigned)j;
  }
}

// One block of 256 threads per tile of LF_TILE keys; hist is digit-major: [256][tiles].
extern "C" __global__ void lf_radix_hist(const LF_KEY* keys, i64 n, int shift, unsigned* hist, int tiles) {
  __shared__ unsigned h[256];
  h[threadIdx.x] = 0;
  __syncthreads();
  i64 lo = (i64)blockIdx.x * LF_TILE, hi = lo + LF_TILE < n ? lo + LF_TILE : n;
  for (i64 j = lo + threadIdx.x; j < hi; j += 256) atomicAdd(&h[(unsigned)(keys[j] >> shift) & 255u], 1u);
  __syncthreads();
  hist[(i64)threadIdx.x * tiles + blockIdx.x] = h[threadIdx.x];
}

// One block of 1024 threads per digit: hist[digit][0, tiles) exclusive-scanned in place (so each
// tile learns where its keys of that digit start among the digit's), the digit's total to totals.
extern "C" __global__ void lf_radix_scan(unsigned* hist, int tiles, unsigned* totals) {
  __shared__ unsigned s[1024];
  __shared__ unsigned carry;
  const int tid = threadIdx.x;
  unsigned* h = hist + (i64)blockIdx.x * tiles;
  if (tid == 0) carry = 0;
  __syncthreads();
  for (int base = 0; base < tiles; base += 1024) {
    int i = base + tid;
    unsigned v = i < tiles ? h[i] : 0;
    s[tid] = v;
    __syncthreads();
    for (int off = 1; off < 1024; off <<= 1) {
      unsigned t = tid >= off ? s[tid - off] : 0;
      __syncthreads();
      s[tid] += t;
      __syncthreads();
    }
    unsigned c = carry;
    if (i < tiles) h[i] = c + s[tid] - v;
    __syncthreads();
    if (tid == 1023) carry = c + s[1023];
    __syncthreads();
  }
  if (tid == 0) totals[blockIdx.x] = carry;
}

// One block of 256 threads per tile. The tile is first ordered by digit in shared memory, stably
// (ranks among equal digits from warp matches, 256 keys at a time in position order: each key's
// place in the tile's digit-ordered sequence; shared memory holds its position in the tile), then
// written out in that order: consecutive threads write consecutive places of one digit's run,
// coalesced, where writing each key straight to its digit's place scatters a warp's 32 keys over up
// to 32 runs. The keys and indices are read again at their positions (the tile's, in L1 / L2).
extern "C" __global__ void __launch_bounds__(256)
lf_radix_scatter(const LF_KEY* kin, const unsigned* iin, LF_KEY* kout, unsigned* iout, i64 n, int shift,
                 const unsigned* hist, int tiles, const unsigned* totals) {
  __shared__ unsigned run[256];    // where the tile's keys of each digit go in the output
  __shared__ unsigned first[256];  // where they start in the tile's digit order
  __shared__ unsigned next[256];   // the next free place of each digit in the tile's digit order
  __shared__ unsigned cnt[8][256];
  __shared__ unsigned short pos[LF_TILE];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const i64 lo = (i64)blockIdx.x * LF_TILE;
  const int count = (int)(lo + LF_TILE < n ? LF_TILE : n - lo);
  // The digits' output starts: an exclusive scan of the digits' totals plus this tile's exclusive
  // prefix among the tiles (hist, scanned in place); the tile's own count of each digit is the
  // next tile's prefix (the digit's total after the last tile) minus its own.
  const unsigned mine = hist[(i64)tid * tiles + blockIdx.x];
  const unsigned after = blockIdx.x + 1 < tiles ? hist[(i64)tid * tiles + blockIdx.x + 1] : totals[tid];
  run[tid] = totals[tid];
  first[tid] = after - mine;
  __syncthreads();
  for (int off = 1; off < 256; off <<= 1) {
    unsigned t = tid >= off ? run[tid - off] : 0, f = tid >= off ? first[tid - off] : 0;
    __syncthreads();
    run[tid] += t;
    first[tid] += f;
    __syncthreads();
  }
  run[tid] += mine - totals[tid];
  first[tid] -= after - mine;
  next[tid] = first[tid];
  // The thread's 16 digits loaded at once (coalesced), not one load's latency a round.
  unsigned digit[LF_TILE / 256];
#pragma unroll
  for (int c = 0; c < LF_TILE / 256; ++c) {
    const int at = c * 256 + tid;
    digit[c] = at < count ? ((unsigned)(kin[lo + at] >> shift) & 255u) : 0xffffffffu;
  }
#pragma unroll
  for (int c = 0; c < LF_TILE / 256; ++c) {
    for (int w = 0; w < 8; ++w) cnt[w][tid] = 0;
    __syncthreads();
    const int at = c * 256 + tid;
    const bool in = at < count;
    const unsigned d = digit[c];
    const unsigned peers = __match_any_sync(0xffffffffu, d);
    const unsigned rank = __popc(peers & ((1u << lane) - 1u));
    if (in && lane == __ffs(peers) - 1) cnt[warp][d] = __popc(peers);
    __syncthreads();
    if (in) {
      unsigned p = next[d] + rank;
      for (int w = 0; w < warp; ++w) p += cnt[w][d];
      pos[p] = (unsigned short)at;
    }
    __syncthreads();
    unsigned t = 0;
    for (int w = 0; w < 8; ++w) t += cnt[w][tid];
    next[tid] += t;
    __syncthreads();
  }
  for (int i = tid; i < count; i += 256) {
    const i64 j = lo + pos[i];
    const LF_KEY k = kin[j];
    const unsigned d = (unsigned)(k >> shift) & 255u;
    const unsigned o = run[d] + (unsigned)i - first[d];
    kout[o] = k;
    iout[o] = iin[j];
  }
}

extern "C" __global__ void lf_radix_out(const unsigned* idx, Row r, i64 row, i64* out) {
  for (i64 j = (i64)blockIdx.x * blockDim.x + threadIdx.x; j < r.kept; j += (i64)gridDim.x * blockDim.x)
    out[lf_out(r, row, j)] = idx[j];
}
)";

}  // namespace

std::string sort_source(DType dtype) {
  std::string head;
  switch (dtype) {
    case DType::Bool:
      head = "#define LF_T unsigned char\n#define LF_KEY unsigned\n"
             "__device__ __forceinline__ unsigned lf_key(unsigned char v) { return v != 0; }\n";
      break;
    case DType::Int32:
      head = "#define LF_T int\n#define LF_KEY unsigned\n"
             "__device__ __forceinline__ unsigned lf_key(int v) { return (unsigned)v ^ 0x80000000u; }\n";
      break;
    case DType::Int64:
      head = "#define LF_T long long\n#define LF_KEY unsigned long long\n"
             "__device__ __forceinline__ unsigned long long lf_key(long long v) { "
             "return (unsigned long long)v ^ 0x8000000000000000ull; }\n";
      break;
    case DType::Float16:  // the half's float value: every half is exact in float
      head = "#define LF_T unsigned short\n#define LF_KEY unsigned\n"
             "__device__ __forceinline__ unsigned lf_key(unsigned short h) { float f; "
             "asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return lf_fkey(__float_as_uint(f)); }\n";
      break;
    case DType::BFloat16:
      head = "#define LF_T unsigned short\n#define LF_KEY unsigned\n"
             "__device__ __forceinline__ unsigned lf_key(unsigned short b) { return lf_fkey(((unsigned)b) << 16); }\n";
      break;
    case DType::Float32:
      head = "#define LF_T float\n#define LF_KEY unsigned\n"
             "__device__ __forceinline__ unsigned lf_key(float v) { return lf_fkey(__float_as_uint(v)); }\n";
      break;
    case DType::Float64:
      head = "#define LF_T double\n#define LF_KEY unsigned long long\n"
             "__device__ __forceinline__ unsigned long long lf_key(double v) { "
             "return lf_dkey((unsigned long long)__double_as_longlong(v)); }\n";
      break;
  }
  return kKeyPrelude + head + kSortSource;
}

}  // namespace lf::cuda
