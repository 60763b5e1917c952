// argsort and topk groups on a GPU (Backend::sort): the kernels of sort_kernels.cpp, compiled by
// NVRTC once per key dtype and device in a process, launched on the device's stream. Paths:
// topk of k <= 64 selects (lf_select_block, a block per row); rows up to 4096 sort in shared
// memory (lf_sort_block, a block per row); longer rows run the radix sort, row after row.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>
#include <mutex>
#include <utility>

#include "codegen/backend/sort_call.h"
#include "codegen/cuda/backend.h"
#include "codegen/cuda/sort.h"
#include "runtime/cuda_driver.h"
#include "runtime/storage.h"

namespace lf::cuda {
namespace {

namespace cu = rt::cu;

constexpr int64_t kBlockSortMax = 4096;  // shared memory: 4096 x (8 + 4) bytes = 48 KiB at most
constexpr int64_t kSelectMaxK = 64;
constexpr int64_t kTile = 4096;  // LF_TILE

// The kernels' Row, with the same layout.
struct Row {
  long long off, so, sn, si, inner, n, kept;
  int desc;
};

struct Module {
  cu::CUfunction block = nullptr, select = nullptr, init = nullptr, hist = nullptr, scan = nullptr,
                 scatter = nullptr, out = nullptr;
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
  auto cubin = nvrtc_compile(sort_source(dtype), "lf_sort", arch_of(device), /*quick=*/false, &log);
  if (!cubin.ok()) return lf::Status(cubin.status().code(), std::string(cubin.status().message()) + "\n" + log);
  cu::context_of(device);
  const cu::Api& api = cu::api();
  cu::CUmodule mod = nullptr;
  if (cu::CUresult r = api.cuModuleLoadData(&mod, cubin->data()); r != 0)
    return lf::InternalError("cuModuleLoadData(lf_sort): " + cu::error_text(r));
  Module m;
  std::pair<cu::CUfunction*, const char*> fns[] = {{&m.block, "lf_sort_block"},  {&m.select, "lf_select_block"},
                                                   {&m.init, "lf_radix_init"},   {&m.hist, "lf_radix_hist"},
                                                   {&m.scan, "lf_radix_scan"},   {&m.scatter, "lf_radix_scatter"},
                                                   {&m.out, "lf_radix_out"}};
  for (auto& [fn, name] : fns)
    if (cu::CUresult r = api.cuModuleGetFunction(fn, mod, name); r != 0)
      return lf::InternalError(std::string("cuModuleGetFunction(") + name + "): " + cu::error_text(r));
  modules[{device, dtype}] = m;
  return m;
}

struct Launcher {
  cu::DeviceContext& ctx;
  CacheStats& stats;
  void operator()(cu::CUfunction fn, int64_t grid, unsigned block, unsigned shared, void** params) const {
    if (grid <= 0) return;
    if (grid > INT32_MAX) throw Error("sort: " + std::to_string(grid) + " blocks exceed the GPU's grid");
    cu::check(cu::api().cuLaunchKernel(fn, static_cast<unsigned>(grid), 1, 1, block, 1, 1, shared, ctx.stream, params,
                                       nullptr),
              "cuLaunchKernel(sort)");
    ++stats.kernels_launched;
  }
};

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
  const Module& m = *mod;
  Launcher launch{cu::device_context(device), call.run.stats};
  auto out = rt::Storage::allocate(y->device, static_cast<size_t>(y->numel()) * sizeof(int64_t));
  Row r{call.offset, call.stride_outer, call.stride_n, call.stride_inner, call.inner, call.n, call.kept,
        call.descending ? 1 : 0};
  const void* x = call.data;
  void* o = out->data();
  const int64_t rows = call.rows();
  const bool wide = call.dtype == DType::Int64 || call.dtype == DType::Float64;
  std::string how;
  if (call.kept <= kSelectMaxK && call.kept < call.n) {
    void* params[] = {&x, &r, &o};
    launch(m.select, rows, 256, 0, params);
    how = "radix select per row (a block per row), then the k sorted in shared memory";
  } else if (call.n <= kBlockSortMax) {
    int p = 1;
    while (p < call.n) p <<= 1;
    unsigned threads = static_cast<unsigned>(std::min(p, 1024));
    unsigned shared = static_cast<unsigned>(p) * ((wide ? 8u : 4u) + 4u);
    void* params[] = {&x, &r, &p, &o};
    launch(m.block, rows, std::max(threads, 32u), shared, params);
    how = "bitonic sort in shared memory (a block per row)";
  } else {
    const int64_t n = call.n;
    const int tiles = static_cast<int>((n + kTile - 1) / kTile);
    const size_t key_bytes = wide ? 8 : 4;
    auto keys_a = rt::Storage::allocate(y->device, static_cast<size_t>(n) * key_bytes);
    auto keys_b = rt::Storage::allocate(y->device, static_cast<size_t>(n) * key_bytes);
    auto idx_a = rt::Storage::allocate(y->device, static_cast<size_t>(n) * 4);
    auto idx_b = rt::Storage::allocate(y->device, static_cast<size_t>(n) * 4);
    auto hist = rt::Storage::allocate(y->device, static_cast<size_t>(tiles) * 256 * 4);
    // Freed when this returns, before the kernels ran: safe, as every later use of a reused block
    // is queued on the same stream, after them.
    auto totals = rt::Storage::allocate(y->device, 256 * 4);
    int64_t grid = std::min<int64_t>((n + 255) / 256, 65535);
    for (long long row = 0; row < rows; ++row) {
      void *ka = keys_a->data(), *kb = keys_b->data(), *ia = idx_a->data(), *ib = idx_b->data(), *h = hist->data(),
           *tot = totals->data();
      void* init[] = {&x, &r, &row, &ka, &ia};
      launch(m.init, grid, 256, 0, init);
      long long nn = n;
      for (int shift = 0; shift < static_cast<int>(key_bytes) * 8; shift += 8) {
        int t = tiles;
        void* hp[] = {&ka, &nn, &shift, &h, &t};
        launch(m.hist, tiles, 256, 0, hp);
        void* sp[] = {&h, &t, &tot};
        launch(m.scan, 256, 1024, 0, sp);
        void* cp[] = {&ka, &ia, &kb, &ib, &nn, &shift, &h, &t, &tot};
        launch(m.scatter, tiles, 256, 0, cp);
        std::swap(ka, kb);
        std::swap(ia, ib);
      }
      void* op[] = {&ia, &r, &row, &o};
      launch(m.out, std::min<int64_t>((call.kept + 255) / 256, 65535), 256, 0, op);
    }
    how = "LSD radix sort (8-bit digits: tile histograms, a scan, a stable scatter a pass), row after row";
  }
  call.run.stats.bytes_moved += static_cast<uint64_t>(rows * call.n) * dtype_size(call.dtype) +
                                static_cast<uint64_t>(y->numel()) * sizeof(int64_t);
  backend::materialize(*y, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  call.log(how + (wide ? " (64-bit keys)" : " (32-bit keys)"));
}

}  // namespace lf::cuda
