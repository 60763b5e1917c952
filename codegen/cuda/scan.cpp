// Scans (cumsum, cumprod) on a GPU: CUDA C compiled by NVRTC once per dtype and op (program.h).
// - Short lines (n <= kShortLine): a thread per line, in order (threads side by side along
//   `inner`, so a scan along a leading dim reads coalesced rows).
// - Otherwise: a single-pass scan with decoupled look-back (Merrill & Garland, "Single-pass
//   Parallel Prefix Scan with Decoupled Look-back", 2016): each block takes the next tile of 2048
//   elements (tile numbers handed out by an atomic counter, so a block only ever waits for tiles
//   that are already running), scans it, publishes its total (flag 1), looks back over the tiles
//   before it until one has published its inclusive prefix (flag 2), and publishes its own: the
//   data is read once and written once. Tiles of several lines follow one another; the look-back
//   stops at a line's first tile.
// Floats accumulate in their compute type (float for the 16-bit floats), rounded on store; the
// summation order differs from the reference's (within the reductions' tolerance).
#include <algorithm>

#include "codegen/backend/scan_scatter.h"
#include "codegen/cuda/backend.h"
#include "codegen/cuda/program.h"
#include "runtime/cuda_driver.h"

namespace lf::cuda {
namespace {

constexpr int64_t kShortLine = 64;
constexpr int kThreads = 256, kItems = 8;
constexpr int64_t kTile = kThreads * kItems;

const char* const kScanSource = R"(
#define THREADS 256
#define ITEMS 8
#define TILE (THREADS * ITEMS)

extern "C" __global__ void __launch_bounds__(THREADS)
lf_scan_columns(const S* x, S* y, i64 outer, i64 n, i64 inner, i64 so, i64 sn, i64 si) {
  i64 line = (i64)blockIdx.x * THREADS + threadIdx.x;
  if (line >= outer * inner) return;
  i64 o = line / inner, k = line % inner;
  const S* src = x + o * so + k * si;
  S* dst = y + o * n * inner + k;
  C acc = IDENTITY;
  for (i64 j = 0; j < n; ++j) {
    acc = COMBINE(acc, LOAD(src[j * sn]));
    dst[j * inner] = STORE(acc);
  }
}

// Scratch: counter (the next tile), then per tile a flag (0 nothing, 1 aggregate, 2 inclusive
// prefix), its aggregate and its inclusive prefix.
extern "C" __global__ void __launch_bounds__(THREADS)
lf_scan_tiles(const S* x, S* y, i64 inner, i64 n, i64 so, i64 sn, i64 si, i64 tiles_per_line,
              unsigned* counter, int* flags, C* aggregates, C* prefixes) {
  __shared__ unsigned s_tile;
  __shared__ C s_warp[THREADS / 32];
  __shared__ C s_prefix;
  if (threadIdx.x == 0) s_tile = atomicAdd(counter, 1u);
  __syncthreads();
  const i64 t = s_tile;
  const i64 line = t / tiles_per_line, tile = t % tiles_per_line;
  const i64 o = line / inner, k = line % inner;
  const S* src = x + o * so + k * si;
  S* dst = y + o * n * inner + k;
  const i64 base = tile * TILE + (i64)threadIdx.x * ITEMS;
  C v[ITEMS];
  C acc = IDENTITY;
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    i64 j = base + i;
    if (j < n) acc = COMBINE(acc, LOAD(src[j * sn]));
    v[i] = acc;
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  C inc = acc;  // inclusive scan of the threads' totals within the warp
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    C up = __shfl_up_sync(0xffffffffu, inc, d);
    if (lane >= d) inc = COMBINE(up, inc);
  }
  C before = __shfl_up_sync(0xffffffffu, inc, 1);
  if (lane == 0) before = IDENTITY;
  if (lane == 31) s_warp[warp] = inc;
  __syncthreads();
  if (warp == 0) {
    C w = lane < THREADS / 32 ? s_warp[lane] : IDENTITY;
#pragma unroll
    for (int d = 1; d < THREADS / 32; d *= 2) {
      C up = __shfl_up_sync(0xffffffffu, w, d);
      if (lane >= d) w = COMBINE(up, w);
    }
    if (lane < THREADS / 32) s_warp[lane] = w;
  }
  __syncthreads();
  const C total = s_warp[THREADS / 32 - 1];
  const C thread_before = COMBINE(warp > 0 ? s_warp[warp - 1] : IDENTITY, before);
  if (threadIdx.x == 0) {
    C exclusive = IDENTITY;
    if (tile == 0) {
      ((volatile C*)prefixes)[t] = total;
      __threadfence();
      ((volatile int*)flags)[t] = 2;
    } else {
      ((volatile C*)aggregates)[t] = total;
      __threadfence();
      ((volatile int*)flags)[t] = 1;
      for (i64 p = t - 1;; --p) {  // tile p's flag 1 means p is not its line's first tile
        int f;
        do {
          f = ((volatile int*)flags)[p];
        } while (f == 0);
        __threadfence();
        if (f == 2) {
          exclusive = COMBINE(((volatile C*)prefixes)[p], exclusive);
          break;
        }
        exclusive = COMBINE(((volatile C*)aggregates)[p], exclusive);
      }
      ((volatile C*)prefixes)[t] = COMBINE(exclusive, total);
      __threadfence();
      ((volatile int*)flags)[t] = 2;
    }
    s_prefix = exclusive;
  }
  __syncthreads();
  const C start = COMBINE(s_prefix, thread_before);
#pragma unroll
  for (int i = 0; i < ITEMS; ++i) {
    i64 j = base + i;
    if (j < n) dst[j * inner] = STORE(COMBINE(start, v[i]));
  }
}
)";

}  // namespace

std::string scan_source(DType dtype, ir::Op op) {
  std::string s = dtype_macros(dtype);
  bool sum = op == ir::Op::CumSum;
  bool integer = !is_floating(dtype);
  s += sum ? "#define IDENTITY ((C)0)\n" : "#define IDENTITY ((C)1)\n";
  if (integer)  // two's complement wrap-around, as the reference
    s += sum ? "#define COMBINE(a, b) ((C)((u64)(a) + (u64)(b)))\n" : "#define COMBINE(a, b) ((C)((u64)(a) * (u64)(b)))\n";
  else
    s += sum ? "#define COMBINE(a, b) ((a) + (b))\n" : "#define COMBINE(a, b) ((a) * (b))\n";
  return s + kScanSource;
}

void run_scan(backend::ScanCall& call) {
  ir::Node* y = call.node();
  if (dtype_size(call.dtype) > 8 || call.dtype == DType::Bool || call.dtype == DType::Int32)
    return backend::run_scan_on_reference(call, "no GPU scan for this dtype");
  int device = y->device.index();
  size_t bytes = static_cast<size_t>(call.numel()) * dtype_size(call.dtype);
  auto out = rt::Storage::allocate(y->device, std::max<size_t>(bytes, 1));
  const bool columns = call.n <= kShortLine;
  std::string how;
  if (call.numel() > 0) {
    const char* entry = columns ? "lf_scan_columns" : "lf_scan_tiles";
    auto fn = library_function(scan_source(call.dtype, call.op), entry, device);
    if (!fn.ok()) return backend::run_scan_on_reference(call, "the scan kernel failed to compile: " + std::string(fn.status().message()));
    rt::cu::DeviceContext& ctx = rt::cu::device_context(device);
    const rt::cu::Api& cu = rt::cu::api();
    const void* x = static_cast<const char*>(call.data) + call.offset * static_cast<int64_t>(dtype_size(call.dtype));
    void* yp = out->data();
    if (columns) {
      int64_t lines = call.lines();
      unsigned blocks = static_cast<unsigned>((lines + kThreads - 1) / kThreads);
      void* params[] = {&x, &yp, &call.outer, &call.n, &call.inner, &call.so, &call.sn, &call.si};
      LF_CU_CHECK(cu.cuLaunchKernel(static_cast<rt::cu::CUfunction>(*fn), blocks, 1, 1, kThreads, 1, 1, 0, ctx.stream,
                                    params, nullptr));
      how = "a thread per line (" + std::to_string(lines) + " lines)";
    } else {
      int64_t tiles_per_line = (call.n + kTile - 1) / kTile;
      int64_t tiles = tiles_per_line * call.lines();
      if (tiles > INT32_MAX) return backend::run_scan_on_reference(call, "too many tiles for one grid");
      // counter (16 bytes), flags (4 bytes a tile), aggregates and prefixes (8 bytes a tile each).
      size_t flags_at = 16, values_at = flags_at + ((static_cast<size_t>(tiles) * 4 + 15) / 16) * 16;
      auto scratch = rt::Storage::allocate(y->device, values_at + static_cast<size_t>(tiles) * 16);
      char* base = static_cast<char*>(scratch->data());
      LF_CU_CHECK(cu.cuMemsetD8Async(reinterpret_cast<rt::cu::CUdeviceptr>(base), 0, values_at, ctx.stream));
      void* counter = base;
      void* flags = base + flags_at;
      void* aggregates = base + values_at;
      void* prefixes = base + values_at + static_cast<size_t>(tiles) * 8;
      void* params[] = {&x,        &yp,     &call.inner, &call.n,     &call.so,   &call.sn,
                        &call.si,  &tiles_per_line, &counter, &flags, &aggregates, &prefixes};
      LF_CU_CHECK(cu.cuLaunchKernel(static_cast<rt::cu::CUfunction>(*fn), static_cast<unsigned>(tiles), 1, 1, kThreads,
                                    1, 1, 0, ctx.stream, params, nullptr));
      // The scratch goes back to the allocator now: later work on the device is ordered after this
      // kernel on the one stream.
      how = "single-pass decoupled look-back scan, " + std::to_string(tiles) + " tiles of " + std::to_string(kTile);
    }
  }
  ++call.run.stats.kernels_launched;
  call.run.stats.bytes_moved += 2 * static_cast<uint64_t>(bytes);
  backend::materialize(*y, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  call.log(how.empty() ? "empty" : how);
}

}  // namespace lf::cuda
