// The CUDA backend: kernel IR -> CUDA C (cuda_emit) -> NVRTC (dlopen'd libnvrtc) -> cubin for the
// device's own architecture -> module and function through the Driver API -> launches on the
// device's stream, asynchronous (only sync points wait). backend() is its backend::Backend
// (codegen/backend/backend.h). This header shows no CUDA types.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/status.h"
#include "codegen/backend/backend.h"
#include "codegen/backend/compiled.h"
#include "codegen/cuda/emit.h"
#include "codegen/cuda/nvrtc.h"
#include "codegen/ir/indexing.h"
#include "codegen/kir/kernel_ir.h"

namespace lf::rt::cu {
struct DeviceContext;
}

namespace lf::cuda {

struct CompiledKernel : lf::CompiledKernel {
  void* function = nullptr;  // CUfunction
  void* module = nullptr;    // CUmodule (kept loaded for the process's lifetime)
};

// The CUDA backend.
const backend::Backend& backend();

// The backend's variant: the options that change the generated code (part of the cache key) and
// the architecture it is built for.
struct Variant final : backend::Variant {
  EmitOptions options;
  std::string arch;  // arch_of(device), read on the flushing thread: build() must not touch the device
  std::vector<std::pair<std::string, std::string>> describe() const override {
    return {{"index", options.index32 ? "32-bit" : "64-bit"},
            {"row cache", std::to_string(options.row_cache) + (options.row_full ? " (full rows)" : "")},
            {"vec4", options.vec4 ? "on" : "off"},
            {"matmul product", options.matmul_product >= 0 ? "operand " + std::to_string(options.matmul_product) : "none"},
            {"arch", arch}};
  }
};

// Rows at most this long run row_group lanes a row (EmitOptions::row_group): on the H100 a block per
// row of 2 elements made Monte Carlo pi 2.66 ms for 2^22 rows, row groups 0.095 ms; longer rows keep
// a block a row, whose register cache reads them once (bench/RESULTS.md).
inline constexpr int64_t kRowGroupMaxInner = 64;
// Row sweeps (EmitOptions::row_sweep): rows at most this long, at least kSweepMinRows rows a thread
// of a grid of kSweepThreadsPerSm threads an SM (the H100's resident threads).
inline constexpr int64_t kSweepMaxInner = 32;
inline constexpr int64_t kSweepMinRows = 4;
inline constexpr int64_t kSweepThreadsPerSm = 2048;
// Scans of lines side by side (EmitOptions::scan_chunks): this many chunks a line, of at least
// kScanChunkMin elements.
inline constexpr int kScanChunks = 8;
inline constexpr int64_t kScanChunkMin = 16;
inline constexpr int64_t kScanChunkShared = 16 << 10;  // the chunk totals' shared memory, at most
// Rows a thread takes at a time in pointwise kernels that run a thread a column (EmitOptions::rows2d).
inline constexpr int kRows2d = 4;

// Whether a scan kernel may cut its lines into chunks (EmitOptions::scan_chunks): its only row
// work is its scans, no scan reads another's result, and the chunk totals fit kScanChunkShared.
bool scans_can_chunk(const kir::Kernel& kernel);

// Options that change the generated code for these launch arguments (part of the cache key).
EmitOptions options_for(const kir::Kernel& kernel, const kir::LaunchArgs& args, int device);

// A matmul group (backend::Backend::matmul; codegen/cuda/matmul.cpp).
void run_matmul(backend::MatmulCall& call);
void run_conv(backend::ConvCall& call);  // conv.cpp
void run_pool(backend::PoolCall& call);  // conv.cpp
void run_sort(backend::SortCall& call);  // sort.cpp
void run_attention(backend::AttentionCall& call);  // attention.cpp
void run_scan(backend::ScanCall& call);        // scan.cpp
void run_nearest(backend::NearestCall& call);  // nearest.cpp
// The nearest kernel's CUDA C (lf_nearest) for points of `dtype` with rows of `dim` values held in
// registers (0: rows read from memory); kPrelude is prepended when it is compiled.
std::string nearest_source(DType dtype, int64_t dim);
void run_scatter(backend::ScatterCall& call);  // scatter.cpp
// The CUDA C of the scan and scatter kernels for a dtype (tests check that NVRTC compiles them).
std::string scan_source(DType dtype, ir::Op op, int items = 16);  // items a thread: 16 or 32
// scatter_source: scatter_add's kernel, or the scatter row's for a reduce mode (all three phases).
std::string scatter_source(DType dtype, DType index_dtype, ir::ScatterReduce reduce = ir::ScatterReduce::Sum);

// build() then load_into(). `quick`: the quick build of tiered compiling (kernel_cache.h), when
// this NVRTC can make one (12.8 and later: --Ofast-compile); the result's `quick` says whether it is one.
lf::StatusOr<std::shared_ptr<CompiledKernel>> compile(const kir::Kernel& kernel, const std::string& name,
                                                        const EmitOptions& options, int device, bool quick = false);

// Generates and compiles for `arch` (arch_of(device)) without loading: no driver call, so it runs
// on any thread (the kernel cache's background thread compiles optimized builds with it).
lf::StatusOr<std::shared_ptr<CompiledKernel>> build(const kir::Kernel& kernel, const std::string& name,
                                                      const EmitOptions& options, const std::string& arch, bool quick);
// Loads a build's cubin on `device`: its module and function.
lf::Status load_into(CompiledKernel& built, int device);
// "sm_90": the device's own architecture.
std::string arch_of(int device);


// Loads a cubin `compile` produced earlier (CompiledKernel::binary, from the persistent cache) on
// `device` and finds `name` in it.
lf::StatusOr<std::shared_ptr<CompiledKernel>> load(const std::string& name, const std::string& cubin, int device);


// "sm_90/nvrtc13.0/driver13000": what the cubin depends on besides the IR, for `device`'s
// architecture or for `arch` ("sm_90a").
std::string target_id(int device);
std::string target_id(const std::string& arch);

void launch(const CompiledKernel& compiled, const kir::Kernel& kernel, const kir::LaunchArgs& args,
            const EmitOptions& options, int device);

// A fixed sequence of kernel launches on one device, replayed many times (a flush plan's,
// flush_plan.h), as one CUDA graph: one cuGraphLaunch for all of them instead of a cuLaunchKernel
// each. On the H100 hosts a graph of one kernel took 1.2-1.9 us of host time to launch, the kernel
// through cuLaunchKernel 2.7-4.2 us (bench/experiments/launch_path.cpp, bench/RESULTS.md). The operands' pointers
// and the launch parameters may change between launches; nothing else may.
class LaunchGraph final : public backend::LaunchGraph {
 public:
  // The launches in order, each after the one before (their variants are cuda::Variant). Null
  // when graphs are off (LAZYFUSE_CUDA_GRAPHS=0), the driver has none, a launch needs set-up of
  // its own (a row reduction split over blocks clears its counters first) or the driver refuses
  // the graph.
  static std::unique_ptr<LaunchGraph> build(const std::vector<backend::Launch>& launches, int device);
  ~LaunchGraph() override;
  LaunchGraph(const LaunchGraph&) = delete;
  LaunchGraph& operator=(const LaunchGraph&) = delete;

  // Launch i's operand pointers and parameters for the next launch (a driver call only when they
  // changed). False when the driver refused the change: launch the kernels one by one instead.
  bool update(size_t i, const backend::Launch& launch) override;
  // Launches every kernel on the device's stream: on the launch thread when flushes come back to
  // back (returns true: queued there), else here (rt::cu::launch_graph).
  bool launch() override;

 private:
  struct Node;
  explicit LaunchGraph(const rt::cu::DeviceContext& context);
  const rt::cu::DeviceContext* context_;  // the device's context and stream
  void* graph_ = nullptr;  // CUgraph
  void* exec_ = nullptr;   // CUgraphExec
  std::vector<std::unique_ptr<Node>> nodes_;
  uint64_t queued_ = 0;  // its latest launch's place on the launch thread's queue (0: launched here)
};

// Whether a launch needs set-up of its own each time (a row reduction split over blocks: scratch
// allocated and counters cleared), which a captured graph would freeze.
bool needs_setup(const backend::Launch& l, int device);

// A flush plan's replay captured on the device's stream as one CUDA graph (capture.cpp); null,
// with one warning on stderr, when the capture fails (nothing ran), or when graphs are off.
std::unique_ptr<backend::LaunchGraph> capture_graph(const std::vector<backend::Launch>& kernels,
                                                    const std::function<void()>& run, int device);

// Launches a generated matmul kernel (options.matmul_product >= 0): one block per 128 x 128 tile
// of the product, per batch. Throws lf::Error when the grid would be too large.
void launch_matmul(const CompiledKernel& compiled, const kir::Kernel& kernel, const kir::LaunchArgs& args,
                   const GemmParams& gemm, int device);

}  // namespace lf::cuda
