// Scans (cumsum, cumprod, logcumsumexp, cummax / cummin positions) on a GPU: CUDA C compiled by
// NVRTC once per dtype and op (program.h), the op a monoid over states (a value; for cummax and
// cummin a value and its position).
// - Short lines (n <= kShortLine): a thread per line, in order (threads side by side along
//   `inner`, so a scan along a leading dim reads coalesced rows).
// - Many lines side by side (a scan along a leading dim, inner >= 32 contiguous, >= 65536 lines):
//   the same, a thread per line, whatever n.
// - Otherwise: a single-pass scan with decoupled look-back (Merrill & Garland, "Single-pass
//   Parallel Prefix Scan with Decoupled Look-back", 2016): each block takes the next tile of 4096
//   elements (16 a thread, 32 on long lines; tile numbers handed out by an atomic counter, so a
//   block only ever waits for tiles that are already running), scans it, publishes its total (flag
//   1), looks back over the tiles before it until one has published its inclusive prefix (flag 2),
//   and publishes its own: the data is read once and written once. The look-back is a warp's: 32
//   predecessors inspected at once (a ballot for "published", the nearest prefix by ballot, the
//   aggregates after it reduced by shuffles), not one thread spinning on one tile after another.
//   It waits only for the tiles up to the nearest prefix, not for the whole window. A float state
//   shares one 64-bit status word with its flag (one load sees both); float32 lines are read and
//   written with 16-byte accesses, the tile kept in shared memory from load to store (no items in
//   registers: 6 blocks an SM at 32 items a thread). Tiles of several lines follow one another; the
//   look-back stops at a line's first tile.
// Floats accumulate in their compute type (float for the 16-bit floats), rounded on store; the
// summation order differs from the reference's (within the reductions' tolerance).
#include <algorithm>
#include <functional>

#include "codegen/backend/scan_scatter.h"
#include "codegen/cuda/backend.h"
#include "codegen/cuda/program.h"
#include "runtime/config.h"
#include "runtime/cuda_driver.h"

namespace lf::cuda {
namespace {

constexpr int64_t kShortLine = 64, kManyLines = 65536;
constexpr int kThreads = 256;
// Items a thread: 16 (tiles of 4096), or 32 for float32 lines of at least kLongLine: half the
// tiles, so half the look-backs, of a long line, where a tile longer than a short line would only
// leave the 16-byte path. cumsum of 2^26 float32 on the H100 (2026-11-28): 0.218 ms with 32, 0.250
// with 16; 2^24: 0.064 and 0.068.
constexpr int kItems = 16, kLongItems = 32;
constexpr int64_t kLongLine = 65536;

const char* const kScanSource = R"(
#define THREADS 256
#define TILE (THREADS * ITEMS)
#define LF_SWZ(j) ((j) ^ (((j) >> 3) & 7))

extern "C" __global__ void __launch_bounds__(THREADS)
lf_scan_columns(const S* x, O* y, i64 outer, i64 n, i64 inner, i64 so, i64 sn, i64 si) {
  i64 line = (i64)blockIdx.x * THREADS + threadIdx.x;
  if (line >= outer * inner) return;
  i64 o = line / inner, k = line % inner;
  const S* src = x + o * so + k * si;
  O* dst = y + o * n * inner + k;
  T acc = IDENTITY;
  for (i64 j = 0; j < n; ++j) {
    acc = COMBINE(acc, LIFT(LOAD(src[j * sn]), j));
    dst[j * inner] = EMIT(acc);
  }
}

// Scratch: counter (the next tile), then a status per tile. PACKED (a 32-bit state): one 64-bit
// word, the flag (0 nothing, 1 aggregate, 2 inclusive prefix) above the value's bits, written and
// read in one access, so no fence orders a flag after its value. Otherwise a flag per tile (the
// low 32 bits of the same word) and the aggregate and inclusive prefix in arrays of their own,
// written before the flag and read after it behind a fence.
__device__ __forceinline__ void lf_publish(u64* status, T* aggregates, T* prefixes, i64 t, int flag, T v) {
#if PACKED
  ((volatile u64*)status)[t] = ((u64)flag << 32) | (u64)lf_state_bits(v);
#else
  if (flag == 2) VSTORE(prefixes, t, v); else VSTORE(aggregates, t, v);
  __threadfence();
  ((volatile int*)status)[2 * t] = flag;
#endif
}

// The look-back of tile `t` (the first of its line is `first`), by one warp: the combination of
// every earlier tile of the line, in every lane. Lane l inspects tile w - l of a window of 32
// predecessors; the warp waits until the tiles it needs have published something (those up to the
// nearest inclusive prefix, flag 2, or the whole window when it holds none), combines that prefix
// with the aggregates of the tiles after it, and, when the window has no prefix, goes on 32 tiles
// further back. Windows reaching before the line's first tile see identities with flag 2.
__device__ __forceinline__ T lf_look_back(i64 t, i64 first, u64* status, T* aggregates, T* prefixes) {
  const int lane = threadIdx.x & 31;
  T exclusive = IDENTITY;
  for (i64 w = t - 1;; w -= 32) {
    const i64 p = w - lane;
    int f;
    T pv = IDENTITY;
    unsigned twos;
    for (;;) {
      if (p < first) {
        f = 2;
      } else {
#if PACKED
        u64 word = ((volatile u64*)status)[p];
        f = (int)(word >> 32);
        pv = lf_state_from_bits((unsigned)word);
#else
        f = ((volatile int*)status)[2 * p];
#endif
      }
      const unsigned seen = __ballot_sync(0xffffffffu, f != 0);
      twos = __ballot_sync(0xffffffffu, f == 2);
      const unsigned need = twos ? twos ^ (twos - 1) : 0xffffffffu;  // up to the nearest prefix
      if ((seen & need) == need) break;
    }
#if !PACKED
    __threadfence();
    if (p >= first && f != 0) pv = f == 2 ? VLOAD(prefixes, p) : VLOAD(aggregates, p);
#endif
    const int stop = twos ? __ffs(twos) - 1 : 31;
    if (lane > stop) pv = IDENTITY;
    // In order: the farther tiles (higher lanes) first.
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      T down = SHFL_DOWN(pv, d);
      if (lane + d < 32) pv = COMBINE(down, pv);
    }
    exclusive = COMBINE(SHFL_IDX(pv, 0), exclusive);
    if (twos) return exclusive;
  }
}

// The start of this thread's items in its line: `acc` is the combination of the thread's items in
// tile `t` (the `tile`th of its line, whose first tile is `first`). Scans the block's totals,
// publishes the tile's aggregate, and warp 0 looks back and publishes the inclusive prefix.
__device__ __forceinline__ T lf_thread_start(T acc, i64 t, i64 tile, i64 first, u64* status, T* aggregates,
                                             T* prefixes) {
  __shared__ T s_warp[THREADS / 32];
  __shared__ T s_prefix;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  T inc = acc;  // inclusive scan of the threads' totals within the warp
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    T up = SHFL_UP(inc, d);
    if (lane >= d) inc = COMBINE(up, inc);
  }
  T before = SHFL_UP(inc, 1);
  if (lane == 0) before = IDENTITY;
  if (lane == 31) s_warp[warp] = inc;
  __syncthreads();
  if (warp == 0) {
    T w = lane < THREADS / 32 ? s_warp[lane] : IDENTITY;
#pragma unroll
    for (int d = 1; d < THREADS / 32; d *= 2) {
      T up = SHFL_UP(w, d);
      if (lane >= d) w = COMBINE(up, w);
    }
    if (lane < THREADS / 32) s_warp[lane] = w;
  }
  __syncthreads();
  const T total = s_warp[THREADS / 32 - 1];
  if (warp == 0) {
    T exclusive = IDENTITY;
    if (lane == 0) lf_publish(status, aggregates, prefixes, t, tile == 0 ? 2 : 1, total);
    if (tile > 0) {
      exclusive = lf_look_back(t, first, status, aggregates, prefixes);
      if (lane == 0) lf_publish(status, aggregates, prefixes, t, 2, COMBINE(exclusive, total));
    }
    if (lane == 0) s_prefix = exclusive;
  }
  __syncthreads();
  return COMBINE(s_prefix, COMBINE(warp > 0 ? s_warp[warp - 1] : IDENTITY, before));
}

// The block's tile: the next one from the counter (so a block only waits for tiles already
// running), its line, and the line's first element in x and y.
struct LfTile {
  i64 t, line, tile;
  const S* src;
  O* dst;
};
__device__ __forceinline__ LfTile lf_take_tile(const S* x, O* y, i64 inner, i64 n, i64 so, i64 si, i64 tiles_per_line,
                                               unsigned* counter) {
  __shared__ unsigned s_tile;
  if (threadIdx.x == 0) s_tile = atomicAdd(counter, 1u);
  __syncthreads();
  LfTile r;
  r.t = s_tile;
  r.line = r.t / tiles_per_line;
  r.tile = r.t % tiles_per_line;
  const i64 o = r.line / inner, k = r.line % inner;
  r.src = x + o * so + k * si;
  r.dst = y + o * n * inner + k;
  return r;
}

#if VEC4
// Float32: a tile stays in shared memory from its load to its store, each thread's items scanned
// in place, so a thread holds no items in registers (tiles of 32 items a thread fit 6 blocks an
// SM). A whole tile of a contiguous line is read as 16-byte loads, consecutive threads at
// consecutive addresses (coalesced), and written back the same way; other tiles element by
// element through the strides. The float4 index is swizzled (its low 3 bits XOR the next 3) so
// that neither the striped nor the blocked accesses conflict on banks.
__device__ __forceinline__ float4& lf_quad(float4* s, int q) { return s[LF_SWZ(threadIdx.x * (ITEMS / 4) + q)]; }

// This thread's items of the tile, scanned in place; returns their total.
__device__ __forceinline__ T lf_scan_quads(float4* s) {
  T acc = IDENTITY;
#pragma unroll
  for (int q = 0; q < ITEMS / 4; ++q) {
    float4 f = lf_quad(s, q);
    acc = COMBINE(acc, f.x); f.x = acc;
    acc = COMBINE(acc, f.y); f.y = acc;
    acc = COMBINE(acc, f.z); f.z = acc;
    acc = COMBINE(acc, f.w); f.w = acc;
    lf_quad(s, q) = f;
  }
  return acc;
}

extern "C" __global__ void __launch_bounds__(THREADS, 6)  // 6 blocks an SM: at most 40 registers
lf_scan_tiles(const S* x, O* y, i64 inner, i64 n, i64 so, i64 sn, i64 si, i64 tiles_per_line,
              unsigned* counter, u64* status, T* aggregates, T* prefixes) {
  __shared__ float4 s_data[TILE / 4];
  const LfTile b = lf_take_tile(x, y, inner, n, so, si, tiles_per_line, counter);
  const i64 t = b.t, line = b.line, tile = b.tile;
  const S* src = b.src;
  O* dst = b.dst;
  const i64 tile_base = tile * TILE, base = tile_base + (i64)threadIdx.x * ITEMS;
  const bool vec = sn == 1 && inner == 1 && tile_base + TILE <= n &&
                   (((u64)(src + tile_base) | (u64)(dst + tile_base)) & 15) == 0;  // the same in the block
  if (vec) {
    const float4* in4 = (const float4*)(src + tile_base);
#pragma unroll
    for (int q = 0; q < ITEMS / 4; ++q) {
      const int j = threadIdx.x + q * THREADS;
      s_data[LF_SWZ(j)] = __ldcs(in4 + j);
    }
    __syncthreads();
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const i64 j = base + i;
      ((float*)&lf_quad(s_data, i / 4))[i & 3] = j < n ? LOAD(src[j * sn]) : IDENTITY;
    }
  }
  const T acc = lf_scan_quads(s_data);
  const T start = lf_thread_start(acc, t, tile, line * tiles_per_line, status, aggregates, prefixes);
#pragma unroll
  for (int q = 0; q < ITEMS / 4; ++q) {
    float4 f = lf_quad(s_data, q);
    f.x = COMBINE(start, f.x);
    f.y = COMBINE(start, f.y);
    f.z = COMBINE(start, f.z);
    f.w = COMBINE(start, f.w);
    lf_quad(s_data, q) = f;
  }
  if (vec) {
    __syncthreads();
    float4* out4 = (float4*)(dst + tile_base);
#pragma unroll
    for (int q = 0; q < ITEMS / 4; ++q) {
      const int j = threadIdx.x + q * THREADS;
      __stcs(out4 + j, s_data[LF_SWZ(j)]);
    }
  } else {
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
      const i64 j = base + i;
      if (j < n) dst[j * inner] = EMIT(((float*)&lf_quad(s_data, i / 4))[i & 3]);
    }
  }
}
#else
// Other states: a thread's items in registers, read and written element by element.
extern "C" __global__ void __launch_bounds__(THREADS)
lf_scan_tiles(const S* x, O* y, i64 inner, i64 n, i64 so, i64 sn, i64 si, i64 tiles_per_line,
              unsigned* counter, u64* status, T* aggregates, T* prefixes) {
  const LfTile b = lf_take_tile(x, y, inner, n, so, si, tiles_per_line, counter);
  const i64 t = b.t, line = b.line, tile = b.tile;
  const S* src = b.src;
  O* dst = b.dst;
  const i64 base = tile * TILE + (i64)threadIdx.x * ITEMS;
  T v[ITEMS];
  T acc = IDENTITY;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    i64 j = base + i;
    if (j < n) acc = COMBINE(acc, LIFT(LOAD(src[j * sn]), j));
    v[i] = acc;
  }
  const T start = lf_thread_start(acc, t, tile, line * tiles_per_line, status, aggregates, prefixes);
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    i64 j = base + i;
    if (j < n) dst[j * inner] = EMIT(COMBINE(start, v[i]));
  }
}
#endif
)";

}  // namespace

// The state type T of a scan and its operations, as CUDA C macros (see kScanSource).
std::string scan_source(DType dtype, ir::Op op, int items) {
  std::string s = dtype_macros(dtype) + "#define ITEMS " + std::to_string(items) + "\n";
  const bool integer = !is_floating(dtype);
  if (op == ir::Op::CumMax || op == ir::Op::CumMin) {
    // {value, position}: the later one wins among equals; NaN wins and stays (the latest NaN).
    s += "typedef i64 O;\nstruct T { C v; i64 at; };\n";
    s += "__device__ __forceinline__ T lf_lift(C x, i64 j) { T t; t.v = x; t.at = j; return t; }\n";
    s += "__device__ __forceinline__ T lf_combine(T a, T b) {\n"
         "  if (b.at < 0) return a;\n"
         "  if (a.at < 0 || b.v != b.v) return b;\n"
         "  if (a.v != a.v) return a;\n";
    s += op == ir::Op::CumMax ? "  return b.v >= a.v ? b : a;\n}\n" : "  return b.v <= a.v ? b : a;\n}\n";
    s += "__device__ __forceinline__ T lf_shfl_up_t(T t, int d) {\n"
         "  t.v = __shfl_up_sync(0xffffffffu, t.v, d); t.at = __shfl_up_sync(0xffffffffu, t.at, d); return t;\n}\n";
    s += "__device__ __forceinline__ T lf_shfl_down_t(T t, int d) {\n"
         "  t.v = __shfl_down_sync(0xffffffffu, t.v, d); t.at = __shfl_down_sync(0xffffffffu, t.at, d); return t;\n}\n";
    s += "__device__ __forceinline__ T lf_shfl_idx_t(T t, int l) {\n"
         "  t.v = __shfl_sync(0xffffffffu, t.v, l); t.at = __shfl_sync(0xffffffffu, t.at, l); return t;\n}\n";
    s += "#define PACKED 0\n#define VEC4 0\n#define SHFL_DOWN(t, d) lf_shfl_down_t((t), (d))\n"
         "#define SHFL_IDX(t, l) lf_shfl_idx_t((t), (l))\n";
    s += "__device__ __forceinline__ void lf_vstore(T* p, i64 i, T t) { ((volatile C*)&p[i].v)[0] = t.v; "
         "((volatile i64*)&p[i].at)[0] = t.at; }\n";
    s += "__device__ __forceinline__ T lf_vload(T* p, i64 i) { T t; t.v = ((volatile C*)&p[i].v)[0]; "
         "t.at = ((volatile i64*)&p[i].at)[0]; return t; }\n";
    s += "#define IDENTITY lf_lift((C)0, -1)\n#define LIFT(x, j) lf_lift((x), (j))\n#define COMBINE(a, b) lf_combine((a), (b))\n"
         "#define EMIT(t) ((t).at)\n#define SHFL_UP(t, d) lf_shfl_up_t((t), (d))\n"
         "#define VSTORE(p, i, t) lf_vstore((p), (i), (t))\n#define VLOAD(p, i) lf_vload((p), (i))\n";
    return s + kScanSource;
  }
  s += "typedef S O;\ntypedef C T;\n#define LIFT(x, j) (x)\n#define EMIT(t) STORE(t)\n"
       "#define SHFL_UP(t, d) __shfl_up_sync(0xffffffffu, (t), (d))\n"
       "#define VSTORE(p, i, t) (((volatile T*)(p))[i] = (t))\n#define VLOAD(p, i) (((volatile T*)(p))[i])\n";
  s += "#define SHFL_DOWN(t, d) __shfl_down_sync(0xffffffffu, (t), (d))\n"
       "#define SHFL_IDX(t, l) __shfl_sync(0xffffffffu, (t), (l))\n";
  // A float state (float32 and the 16-bit floats) fits a status word beside its flag.
  const bool packed = is_floating(dtype) && dtype != DType::Float64;
  s += packed ? "#define PACKED 1\n"
                "__device__ __forceinline__ unsigned lf_state_bits(T v) { return __float_as_uint(v); }\n"
                "__device__ __forceinline__ T lf_state_from_bits(unsigned b) { return __uint_as_float(b); }\n"
              : "#define PACKED 0\n";
  s += dtype == DType::Float32 ? "#define VEC4 1\n" : "#define VEC4 0\n";
  if (op == ir::Op::LogCumSumExp) {
    bool f64 = dtype == DType::Float64;
    s += "#define IDENTITY (-(C)INFINITY)\n";
    s += std::string("__device__ __forceinline__ C lf_logaddexp(C a, C b) {\n"
                     "  if (a != a || b != b) return (C)NAN;\n"
                     "  C hi = a < b ? b : a, lo = a < b ? a : b;\n"
                     "  if (hi == (C)INFINITY || hi == -(C)INFINITY) return hi;\n"
                     "  return hi + ") + (f64 ? "log1p(exp(lo - hi));\n}\n" : "log1pf(expf(lo - hi));\n}\n");
    s += "#define COMBINE(a, b) lf_logaddexp((a), (b))\n";
    return s + kScanSource;
  }
  bool sum = op == ir::Op::CumSum;
  s += sum ? "#define IDENTITY ((C)0)\n" : "#define IDENTITY ((C)1)\n";
  if (integer)  // two's complement wrap-around, as the reference
    s += sum ? "#define COMBINE(a, b) ((C)((u64)(a) + (u64)(b)))\n" : "#define COMBINE(a, b) ((C)((u64)(a) * (u64)(b)))\n";
  else
    s += sum ? "#define COMBINE(a, b) ((a) + (b))\n" : "#define COMBINE(a, b) ((a) * (b))\n";
  return s + kScanSource;
}

void run_scan(backend::ScanCall& call) {
  ir::Node* y = call.node();
  bool extreme = call.op == ir::Op::CumMax || call.op == ir::Op::CumMin;
  // Sums and products arrive as int64 or floats (the frontend casts bool and int32); cummax and
  // cummin of bool run on the host.
  if (call.in_dtype == DType::Bool || (!extreme && call.in_dtype == DType::Int32))
    return backend::run_scan_on_reference(call, std::string("no GPU scan of ") + dtype_name(call.in_dtype));
  int device = y->device.index();
  size_t bytes = static_cast<size_t>(call.numel()) * dtype_size(call.dtype);
  auto out = rt::Storage::allocate(y->device, std::max<size_t>(bytes, 1));
  // Many lines side by side in memory (a scan along a leading dim): a thread per line reads whole
  // rows coalesced, where tiles along a line would read one element of each row they touch.
  const bool columns = call.n <= kShortLine || (call.si == 1 && call.inner >= 32 && call.lines() >= kManyLines);
  std::string how = "empty";
  // The launch over the input at `data` (its storage's base) into `yp`; `scratch` holds the tiles'
  // counter and status words, zeroed first.
  std::function<void(const void*, void*)> run;
  if (call.numel() > 0) {
    const char* entry = columns ? "lf_scan_columns" : "lf_scan_tiles";
    const int items = !columns && !extreme && call.in_dtype == DType::Float32 && call.n >= kLongLine ? kLongItems : kItems;
    const int64_t tile = int64_t{kThreads} * items;
    // A float sum, product or logcumsumexp over lines of several tiles adds the tiles' totals in an
    // order that depends on which earlier tile had published its prefix first: the last bits vary
    // from run to run. LAZYFUSE_DETERMINISTIC=1 runs those in order on the host instead, as the
    // float scatters. (cummax and cummin, and integers, are exact in any order.)
    if (!columns && !extreme && is_floating(call.in_dtype) && call.n > tile && rt::config().deterministic)
      return backend::run_scan_on_reference(
          call, "LAZYFUSE_DETERMINISTIC=1: a float scan over lines of several tiles, whose look-back order varies");
    auto fn = library_function(scan_source(call.in_dtype, call.op, items), entry, device);
    if (!fn.ok()) return backend::run_scan_on_reference(call, "the scan kernel failed to compile: " + std::string(fn.status().message()));
    const auto f = static_cast<rt::cu::CUfunction>(*fn);
    // Shared memory before L1: 6 float32 tiles of 32 KB an SM. A preference, not checked.
    if (items == kLongItems) (void)rt::cu::api().cuFuncSetAttribute(f, /*CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT=*/9, 100);
    backend::ScanLines l = call;
    const int64_t in_offset = call.offset * static_cast<int64_t>(dtype_size(call.in_dtype));
    if (columns) {
      const unsigned blocks = static_cast<unsigned>((l.lines() + kThreads - 1) / kThreads);
      run = [f, l, in_offset, blocks, device](const void* data, void* yp) mutable {
        const void* x = static_cast<const char*>(data) + in_offset;
        void* params[] = {&x, &yp, &l.outer, &l.n, &l.inner, &l.so, &l.sn, &l.si};
        LF_CU_CHECK(rt::cu::api().cuLaunchKernel(f, blocks, 1, 1, kThreads, 1, 1, 0, rt::cu::device_context(device).stream,
                                                 params, nullptr));
      };
      how = "a thread per line (" + std::to_string(l.lines()) + " lines)";
    } else {
      int64_t tiles_per_line = (l.n + tile - 1) / tile;
      int64_t tiles = tiles_per_line * l.lines();
      if (tiles > INT32_MAX) return backend::run_scan_on_reference(call, "too many tiles for one grid");
      // counter (16 bytes), a status word a tile (8 bytes, zeroed), aggregates and prefixes (16
      // bytes a tile each, unused by a packed status: a state is a value, or a value and a position).
      // A plan's replay keeps it (its launches are ordered on the one stream).
      size_t status_at = 16, values_at = status_at + static_cast<size_t>(tiles) * 8;
      std::shared_ptr<rt::Storage> scratch = rt::Storage::allocate(y->device, values_at + static_cast<size_t>(tiles) * 32);
      run = [f, l, in_offset, tiles, tiles_per_line, status_at, values_at, scratch, device](const void* data,
                                                                                              void* yp) mutable {
        rt::cu::DeviceContext& ctx = rt::cu::device_context(device);
        char* base = static_cast<char*>(scratch->data());
        LF_CU_CHECK(rt::cu::api().cuMemsetD8Async(reinterpret_cast<rt::cu::CUdeviceptr>(base), 0, values_at, ctx.stream));
        const void* x = static_cast<const char*>(data) + in_offset;
        void* counter = base;
        void* status = base + status_at;
        void* aggregates = base + values_at;
        void* prefixes = base + values_at + static_cast<size_t>(tiles) * 16;
        void* params[] = {&x,    &yp,     &l.inner,   &l.n,         &l.so,       &l.sn,
                          &l.si, &tiles_per_line, &counter, &status, &aggregates, &prefixes};
        LF_CU_CHECK(rt::cu::api().cuLaunchKernel(f, static_cast<unsigned>(tiles), 1, 1, kThreads, 1, 1, 0, ctx.stream,
                                                 params, nullptr));
      };
      how = "single-pass decoupled look-back scan, " + std::to_string(tiles) + " tiles of " + std::to_string(tile);
    }
    run(call.data, out->data());
  }
  ++call.run.stats.kernels_launched;
  call.run.stats.bytes_moved += bytes + static_cast<uint64_t>(call.numel()) * dtype_size(call.in_dtype);
  if (call.record) {  // for a flush plan: the input's buffer, the output
    call.record->outputs.emplace_back(y, out);
    call.record->addresses = {call.data, out->data()};
    if (run) call.record->replay = [run](void* const* p) { run(p[0], p[1]); };
    else call.record->replay = [](void* const*) {};  // nothing to compute: the output is empty
  }
  backend::materialize(*y, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  call.log(how);
}

}  // namespace lf::cuda
