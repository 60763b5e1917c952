// argsort and topk groups on a GPU (Backend::sort): the kernels of sort_kernels.cpp, compiled by
// NVRTC once per key dtype and device in a process, launched on the device's stream. Paths:
// topk of k <= 64 selects (lf_select_block, a block per row); rows up to 4096 sort in shared
// memory, a block per row (lf_radix_block*, or lf_sort_block's bitonic sort for short rows and for
// the 64-bit keys of rows over 2048); longer rows run the Onesweep radix sort, rows side by side.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <utility>

#include "codegen/backend/sort_call.h"
#include "codegen/cuda/backend.h"
#include "codegen/cuda/library_cache.h"
#include "codegen/cuda/sort.h"
#include "runtime/cuda_driver.h"
#include "runtime/storage.h"

namespace lf::cuda {
namespace {

namespace cu = rt::cu;

constexpr int64_t kBlockSortMax = 4096;  // shared memory: 4096 x (8 + 4) bytes = 48 KiB at most
constexpr int64_t kSelectMaxK = 64;
constexpr int64_t kSelectWideRow = 16384;  // rows this long select with 1024 threads a block
// Rows up to this long sort by the bitonic network: its few stages beat the radix passes' fixed
// work on a block of 256 threads.
constexpr int64_t kBitonicMax = 64;
// Long rows sort side by side, as many a launch as fit this much scratch (keys and positions
// twice: 16 bytes a 32-bit key, 24 a 64-bit one; at least one row): 2^22 keys of 32 bits, already
// thousands of tiles a pass, so more rows a launch would not fill the GPU better.
constexpr int64_t kOnesweepChunkBytes = int64_t{64} << 20;

// The kernels' Row, with the same layout.
struct Row {
  long long off, so, sn, si, inner, n, kept;
  int desc;
};

struct Module {
  cu::CUfunction block = nullptr, radix = nullptr, radix_1k = nullptr, select = nullptr, hist = nullptr, pass = nullptr;
};

// The module for keys of `dtype` on `device`, compiled on first use; an error status when NVRTC or
// the driver refused it.
lf::StatusOr<Module> module_for(DType dtype, int device) {
  static std::mutex mu;
  static std::map<std::pair<int, DType>, Module>& modules = *new std::map<std::pair<int, DType>, Module>;
  std::lock_guard<std::mutex> lock(mu);
  auto it = modules.find({device, dtype});
  if (it != modules.end()) return it->second;
  std::string log;
  auto loaded_module = library_module(sort_source(dtype), "lf_sort", arch_of(device), device, &log);
  if (!loaded_module.ok())
    return lf::Status(loaded_module.status().code(), std::string(loaded_module.status().message()) + "\n" + log);
  const cu::Api& api = cu::api();
  cu::CUmodule mod = static_cast<cu::CUmodule>(*loaded_module);
  Module m;
  std::pair<cu::CUfunction*, const char*> fns[] = {{&m.block, "lf_sort_block"},
                                                   {&m.radix, "lf_radix_block"},
                                                   {&m.radix_1k, "lf_radix_block_1k"},
                                                   {&m.select, "lf_select_block"},
                                                   {&m.hist, "lf_onesweep_hist"},
                                                   {&m.pass, "lf_onesweep_pass"}};
  for (auto& [fn, name] : fns)
    if (cu::CUresult r = api.cuModuleGetFunction(fn, mod, name); r != 0)
      return lf::InternalError(std::string("cuModuleGetFunction(") + name + "): " + cu::error_text(r));
  modules[{device, dtype}] = m;
  return m;
}

// One kernel of the sort on `device`'s stream (a grid of 0 launches nothing); grid_y <= 65535.
void launch(int device, cu::CUfunction fn, int64_t grid, unsigned block, unsigned shared, void** params,
            int64_t grid_y = 1) {
  if (grid <= 0 || grid_y <= 0) return;
  if (grid > INT32_MAX) throw Error("sort: " + std::to_string(grid) + " blocks exceed the GPU's grid");
  cu::check(cu::api().cuLaunchKernel(fn, static_cast<unsigned>(grid), static_cast<unsigned>(grid_y), 1, block, 1, 1, shared,
                                     cu::device_context(device).stream, params, nullptr),
            "cuLaunchKernel(sort)");
}

}  // namespace

void run_sort(backend::SortCall& call) {
  ir::Node* y = call.node();
  int device = y->device.index();
  if (call.n > int64_t{0xFFFFFFFF}) return backend::run_sort_on_reference(call, "a row of 2^32 elements or more");
  auto mod = module_for(call.dtype, device);
  if (!mod.ok()) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      std::fprintf(stderr, "[lazyfuse] warning: the GPU sort did not compile; sorting on the host: %s\n",
                   std::string(mod.status().message()).c_str());
    });
    return backend::run_sort_on_reference(call, "the GPU sort did not compile");
  }
  const Module m = *mod;
  auto out = rt::Storage::allocate(y->device, static_cast<size_t>(y->numel()) * sizeof(int64_t));
  Row r{call.offset, call.stride_outer, call.stride_n, call.stride_inner, call.inner, call.n, call.kept,
        call.descending ? 1 : 0};
  const int64_t rows = call.rows();
  const bool wide = call.dtype == DType::Int64 || call.dtype == DType::Float64;
  // The launches over the keys at `x` (their storage's base), the positions to `o` and the values
  // to `vals` (or null): run once now, and again by a flush plan's replay, which keeps the radix
  // sort's scratch (its launches are ordered on the one stream).
  std::function<void(const void*, void*, void*)> run;
  uint64_t launches = 0;
  std::string how;
  if (call.kept <= kSelectMaxK && call.kept < call.n) {
    // Each of the 4 to 8 digit passes reads the row: long rows take 1024 threads, so that a block
    // has 4x the loads in flight (a row per block, and few rows: topk 50 of 256 rows of 32000).
    const unsigned threads = call.n >= kSelectWideRow ? 1024u : 256u;
    run = [m, r, rows, threads, device](const void* x, void* o, void* vals) mutable {
      void* params[] = {&x, &r, &o, &vals};
      launch(device, m.select, rows, threads, 0, params);
    };
    launches = 1;
    how = "radix select per row (a block of " + std::to_string(threads) +
          " threads per row), then the k sorted in shared memory";
  } else if (call.n > kBitonicMax && call.n <= (wide ? 2048 : 4096)) {
    int first_shift = 0;
    int passes = radix_passes(call.dtype, &first_shift);
    const cu::CUfunction fn = call.n <= 1024 ? m.radix_1k : m.radix;
    run = [fn, r, rows, first_shift, passes, device](const void* x, void* o, void* vals) mutable {
      void* params[] = {&x, &r, &first_shift, &passes, &o, &vals};
      launch(device, fn, rows, 256, 0, params);
    };
    launches = 1;
    how = "LSD radix sort in shared memory (" + std::to_string(passes) + " passes of 8-bit digits, a block per row)";
  } else if (call.n <= kBlockSortMax) {
    int p = 1;
    while (p < call.n) p <<= 1;
    unsigned threads = std::max(static_cast<unsigned>(std::min(p, 1024)), 32u);
    unsigned shared = static_cast<unsigned>(p) * ((wide ? 8u : 4u) + 4u);
    run = [m, r, rows, p, threads, shared, device](const void* x, void* o, void* vals) mutable {
      void* params[] = {&x, &r, &p, &o, &vals};
      launch(device, m.block, rows, threads, shared, params);
    };
    launches = 1;
    how = "bitonic sort in shared memory (a block per row)";
  } else {
    // Onesweep (sort_kernels.cpp): every pass's digit counts in one read, then a kernel a pass, for
    // `chunk` rows at once (a grid row each: rows of many tiles side by side, not one after another).
    const int64_t n = call.n;
    int first_shift = 0;
    const int passes = radix_passes(call.dtype, &first_shift);
    if (rows * passes >= (int64_t{1} << 30))  // the status words' epochs
      return backend::run_sort_on_reference(call, "2^30 radix passes or more");
    const int64_t tile = wide ? 2048 : 4096;  // LF_OTILE
    long long tiles = (n + tile - 1) / tile;
    const size_t key_bytes = wide ? 8 : 4;
    const int64_t chunk = std::max<int64_t>(
        1, std::min({kOnesweepChunkBytes / (n * static_cast<int64_t>(2 * key_bytes + 8)), rows, int64_t{65535}}));
    // Per slot of the chunk: keys and positions between passes; the look-back's status words (a
    // tile and digit each), zeroed once a call (each pass's words carry its epoch), with the slots'
    // tile counters after them; the digit counts, zeroed a chunk.
    struct Scratch {
      std::shared_ptr<rt::Storage> keys_a, keys_b, idx_a, idx_b, status, hist;
    };
    const size_t keys = static_cast<size_t>(chunk * n);
    const size_t status_bytes = static_cast<size_t>(chunk * tiles) * 256 * 8;
    const size_t counter_bytes = static_cast<size_t>(chunk) * 8;
    const size_t hist_bytes = static_cast<size_t>(chunk * passes) * 256 * 4;
    auto scratch = std::make_shared<Scratch>(Scratch{rt::Storage::allocate(y->device, keys * key_bytes),
                                                     rt::Storage::allocate(y->device, keys * key_bytes),
                                                     rt::Storage::allocate(y->device, keys * 4),
                                                     rt::Storage::allocate(y->device, keys * 4),
                                                     rt::Storage::allocate(y->device, status_bytes + counter_bytes),
                                                     rt::Storage::allocate(y->device, hist_bytes)});
    const int64_t hist_grid = std::min<int64_t>((n + 4095) / 4096, 1024);
    run = [m, r, rows, chunk, passes, first_shift, tiles, status_bytes, counter_bytes, hist_bytes, hist_grid, scratch,
           device](const void* x, void* o, void* vals) mutable {
      auto clear = [&](rt::Storage& s, size_t bytes) {
        cu::check(cu::api().cuMemsetD8Async(reinterpret_cast<cu::CUdeviceptr>(s.data()), 0, bytes,
                                            cu::device_context(device).stream),
                  "cuMemsetD8Async(sort)");
      };
      clear(*scratch->status, status_bytes + counter_bytes);
      void* st = scratch->status->data();
      void* counter = static_cast<char*>(scratch->status->data()) + status_bytes;
      void* h = scratch->hist->data();
      for (long long row0 = 0; row0 < rows; row0 += chunk) {
        const int64_t count = std::min<int64_t>(chunk, rows - row0);
        clear(*scratch->hist, hist_bytes);
        int fs = first_shift, np = passes;
        void* hp[] = {&x, &r, &row0, &fs, &np, &h};
        launch(device, m.hist, hist_grid, 256, 0, hp, count);
        void *ka = scratch->keys_a->data(), *kb = scratch->keys_b->data(), *ia = scratch->idx_a->data(),
             *ib = scratch->idx_b->data();
        for (int pass = 0; pass < passes; ++pass) {
          int shift = first_shift + 8 * pass, last = pass == passes - 1 ? 1 : 0;
          void* pp[] = {&x, &r, &row0, &ka, &ia, &kb, &ib, &o, &vals, &shift, &pass, &np, &last, &h, &st, &counter, &tiles};
          launch(device, m.pass, tiles, 256, 0, pp, count);
          std::swap(ka, kb);
          std::swap(ia, ib);
        }
      }
    };
    const int64_t chunks = (rows + chunk - 1) / chunk;
    launches = static_cast<uint64_t>(chunks) * static_cast<uint64_t>(passes + 1);
    how = "Onesweep LSD radix sort (" + std::to_string(passes) +
          " passes of 8-bit digits, decoupled look-back per digit), " +
          (chunk > 1 ? std::to_string(chunk) + " rows side by side a launch" : std::string("row after row"));
  }
  void* vals = call.values ? call.values->data() : nullptr;
  run(call.data, out->data(), vals);
  call.run.stats.kernels_launched += launches;
  if (call.record) {  // for a flush plan: the keys' buffer, the positions, the values (or null)
    call.record->outputs.emplace_back(y, out);
    if (call.values) call.record->outputs.emplace_back(call.values_node(), call.values);
    call.record->addresses = {call.data, out->data(), vals};
    call.record->replay = [run](void* const* p) { run(p[0], p[1], p[2]); };
  }
  call.run.stats.bytes_moved += static_cast<uint64_t>(rows * call.n) * dtype_size(call.dtype) +
                                static_cast<uint64_t>(y->numel()) * (sizeof(int64_t) + (vals ? dtype_size(call.dtype) : 0));
  backend::materialize(*y, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  call.log(how + (wide ? " (64-bit keys)" : " (32-bit keys)"));
}

}  // namespace lf::cuda
