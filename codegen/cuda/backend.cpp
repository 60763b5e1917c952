#include "codegen/cuda/backend.h"
#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda/cudnn.h"
#include "codegen/ir/conv.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <mutex>
#include <vector>

#include "codegen/backend/linalg_call.h"
#include "codegen/cache/fingerprint.h"
#include "codegen/cuda/cusolver.h"
#include "runtime/config.h"
#include "runtime/status.h"
#include "runtime/cuda_driver.h"
#include "runtime/storage.h"

namespace lf::cuda {
namespace {

}  // namespace

namespace {
// Few long rows: each row is split over several blocks so that every SM has work.
bool will_split(const kir::Kernel& kernel, const kir::LaunchArgs& args, int64_t sms) {
  return can_split_rows(kernel) && args.rows() < 2 * sms && args.inner_numel() >= 32 * kBlockThreads;
}

}  // namespace

// Whether a scan kernel's only row work is its scans (EmitOptions::scan_chunks): no reductions, no
// per-row outputs, no scan reads another scan's result (a chunk's first pass computes the scans'
// inputs alone), and the chunk totals (kScanChunks x 32 of each scan's state, and positions for
// cummax / cummin) fit kScanChunkShared bytes of shared memory.
bool scans_can_chunk(const kir::Kernel& kernel) {
  static_assert(kBlockThreads == 32 * kScanChunks, "emit_chunk_prefix: a warp a chunk, 32 lines a block");
  std::vector<bool> after_scan(kernel.instrs.size(), false);
  int64_t shared = 0;
  for (size_t i = 0; i < kernel.instrs.size(); ++i) {
    const kir::Instr& in = kernel.instrs[i];
    if (in.kind == kir::InstrKind::Reduce) return false;
    if (in.kind == kir::InstrKind::Scan)
      shared += kScanChunks * 32 * (kir::scan_extreme(in.op) ? 16 : 8);  // 8 bytes a state at most, 8 a position
    bool reads_scan = false;
    for (int a : in.args) reads_scan |= after_scan[static_cast<size_t>(a)];
    if (in.kind == kir::InstrKind::Scan && reads_scan) return false;
    after_scan[i] = reads_scan || in.kind == kir::InstrKind::Scan;
  }
  for (const kir::Output& o : kernel.outputs)
    if (kernel.instrs[static_cast<size_t>(o.instr)].row) return false;
  return shared <= kScanChunkShared;
}

EmitOptions options_for(const kir::Kernel& kernel, const kir::LaunchArgs& args, int device) {
  int64_t sms = rt::cu::context_of(device).info.multiprocessors;
  // 32-bit index math when every offset an operand can reach fits.
  int64_t rank = static_cast<int64_t>(args.sizes.size());
  bool fits = args.rows() * args.inner_numel() < INT32_MAX;
  for (size_t o = 0; o < kernel.operands.size() && fits; ++o) {
    int64_t reach = args.offsets[o];
    for (int64_t d = 0; d < rank; ++d) reach += std::max<int64_t>(args.sizes[d] - 1, 0) * std::abs(args.strides[o * rank + d]);
    fits = reach < INT32_MAX;
  }
  // A remap's source reaches as far as its last param says (kir::InstrKind::Remap).
  for (const kir::Instr& in : kernel.instrs)
    if (in.kind == kir::InstrKind::Remap)
      fits = fits && args.offsets[static_cast<size_t>(in.slot)] + args.params[static_cast<size_t>(in.params.back())] < INT32_MAX;
  EmitOptions opt;
  opt.index32 = fits;
  opt.int_arange = fits ? int_aranges(kernel, args.params) : 0;
  if (fits) opt.narrow = narrow_ints(kernel, args, opt.int_arange);
  // Operand o can be read 16 bytes at a time along the inner dim: 4-byte elements, aligned at
  // every row start.
  auto vector_aligned = [&](size_t o) {
    if (dtype_size(kernel.operands[o].dtype) != 4 || reinterpret_cast<uintptr_t>(args.pointers[o]) % 16 != 0) return false;
    if (args.offsets[o] % 4 != 0) return false;
    for (int64_t d = 0; d + 1 < rank; ++d)
      if (args.strides[o * rank + d] % 4 != 0) return false;
    return true;
  };
  if (!kernel.row) {
    // 16-byte vectors along rows: 4-byte operands, contiguous or broadcast along the row, aligned
    // at every row start; outputs are contiguous by construction.
    int64_t cols = args.sizes.back();
    bool vec = cols % 4 == 0;
    for (size_t o = 0; o < kernel.operands.size() && vec; ++o) {
      const kir::Operand& op = kernel.operands[o];
      kir::StrideClass inner_class = op.strides.back();
      if (inner_class == kir::StrideClass::Any) vec = false;
      if (op.kind == kir::Operand::Kind::Index || inner_class == kir::StrideClass::Zero) continue;
      if (!vector_aligned(o)) vec = false;
    }
    opt.vec4 = vec;
  }
  // Short rows: a few lanes of a warp a row (row_group) instead of a block of 256 threads, about
  // four elements a lane: each lane computes the row's bases (a division per outer dim) and takes
  // part in the shuffles, which cost more than the elements when a lane has one (k-means'
  // distances, rows of 16: 7.1 ms on the H100 with 16 lanes a row, then mostly the row prologue).
  int64_t inner = args.inner_numel();
  std::vector<bool> held;  // row sweeps: the inputs held in registers
  // Short rows over two or more outer dims, one input invariant along all but the last: a thread a
  // row, the invariant input read once a thread (row_sweep), where each thread takes at least
  // kSweepMinRows rows of a full grid.
  if (kernel.row && kernel.inner_rank == 1 && inner <= kSweepMaxInner &&
      args.rows() >= kSweepMinRows * kSweepThreadsPerSm * sms) {
    std::vector<bool> inv = sweep_invariant(kernel);
    int64_t count = std::count(inv.begin(), inv.end(), true);
    int s = 4;
    while (s < inner) s *= 2;
    if (count > 0 && count * s <= 2 * kSweepMaxInner) {
      opt.row_sweep = s;
      opt.row_full = inner == s;
      held = std::move(inv);
    }
  }
  if (kernel.row && opt.row_sweep == 0 && inner <= kRowGroupMaxInner) {
    int g = 1;
    while (g < 32 && 4 * g < inner) g *= 2;
    opt.row_group = g;
  }
  // Rows short enough to sit in registers, unless the launch will split rows over blocks.
  if (kernel.row && opt.row_group == 0 && opt.row_sweep == 0 && !will_split(kernel, args, sms) && inner <= 32 * kBlockThreads) {
    int k = 1;
    while (k * kBlockThreads < inner) k *= 2;
    opt.row_cache = k;
    opt.row_full = inner == k * kBlockThreads;
  }
  // Other row kernels (short rows' lane groups included) stream their rows from memory: 16-byte
  // loads where every per-element input is 4 bytes wide and contiguous along a single inner dim
  // (or not read per element), aligned at every row start, rows a multiple of 4 long. (Scalar
  // loads left sum(x*x) over 2^26 floats at 1.14x the copy floor on the H100, 16-byte ones at
  // 1.06x: bench/RESULTS.md.)
  // (Row sweeps: the same for the inputs not held in registers, rows at most row_sweep long.)
  if (kernel.row && opt.row_cache == 0 && kernel.inner_rank == 1 && inner % 4 == 0) {
    bool vec = true;
    for (const kir::Instr& in : kernel.instrs) {
      if (in.kind != kir::InstrKind::Load || in.row || (!held.empty() && held[static_cast<size_t>(in.slot)])) continue;
      if (kernel.operands[in.slot].strides.back() != kir::StrideClass::Unit) continue;  // read one element at a time
      if (!vector_aligned(static_cast<size_t>(in.slot))) vec = false;
    }
    opt.vec4 = vec;
  }
  // Scans (the fuser fuses one only over many lines: fuse::fused_scan): rows contiguous along the
  // scanned dim take a lane group a row, each step a run of consecutive elements scanned by
  // shuffles (coalesced; about 4 elements a lane); rows side by side (a scan along an earlier dim)
  // a thread a row, whose loads the warp's neighbouring rows coalesce.
  if (kernel.has_scan()) {
    bool contiguous = false;
    for (const kir::Output& o : kernel.outputs)
      contiguous |= kernel.operands[static_cast<size_t>(o.slot)].strides.back() == kir::StrideClass::Unit;
    int g = 1;
    while (contiguous && g < 32 && 4 * g < inner) g *= 2;
    opt.row_group = g;
    // Lines side by side, long enough for chunks of kScanChunkMin: a warp a chunk
    // (EmitOptions::scan_chunks), where the kernel's only row work is its scans.
    if (g == 1 && inner >= kScanChunks * kScanChunkMin && scans_can_chunk(kernel)) opt.scan_chunks = kScanChunks;
    opt.row_sweep = 0;
    opt.row_cache = 0;
    opt.row_full = false;
    opt.vec4 = false;
  }
  // Gathers and remaps read through their element offsets, which the 16-byte paths do not declare.
  for (const kir::Instr& in : kernel.instrs)
    if (in.kind == kir::InstrKind::Gather || in.kind == kir::InstrKind::Remap) opt.vec4 = false;
  // Other pointwise kernels over rows: a thread a column, kRows2d rows at a time, where a row is
  // long enough that its last block of 256 columns leaves at most an eighth of the threads idle.
  if (!kernel.row && !opt.vec4 && kernel.outer_rank > 0 && kernel.inner_rank == 1 && args.rows() >= 2) {
    int64_t cols = args.sizes.back();
    int64_t padded = (cols + kBlockThreads - 1) / kBlockThreads * kBlockThreads;
    if (cols >= 64 && 8 * (padded - cols) <= padded) opt.rows2d = kRows2d;
  }
  return opt;
}

std::string arch_of(int device) {
  const auto& info = rt::cu::context_of(device).info;
  return "sm_" + std::to_string(info.sm_major) + std::to_string(info.sm_minor);
}

std::string target_id(const std::string& arch) {
  return arch + "/nvrtc" + nvrtc_version() + "/driver" + std::to_string(rt::cuda_status().driver_version);
}

std::string target_id(int device) { return target_id(arch_of(device)); }

lf::StatusOr<std::shared_ptr<CompiledKernel>> build(const kir::Kernel& kernel, const std::string& name,
                                                      const EmitOptions& options, const std::string& arch, bool quick) {
  auto start = std::chrono::steady_clock::now();
  if (lf::Status s = nvrtc_status(); !s.ok()) return s;
  auto out = std::make_shared<CompiledKernel>();
  out->name = name;
  try {
    out->source = emit_cuda(kernel, name, options);
  } catch (const std::exception& e) {
    return lf::InternalError(e.what());
  }
  quick = quick && quick_builds_available();
  auto compiler_start = std::chrono::steady_clock::now();
  auto cubin = nvrtc_compile(out->source, name, arch, generated_kernel_build(quick), &out->log);
  if (!cubin.ok() && quick) {  // then the optimized build now, which is all that is needed
    quick = false;
    cubin = nvrtc_compile(out->source, name, arch, generated_kernel_build(false), &out->log);
  }
  if (!cubin.ok()) return cubin.status();
  auto end = std::chrono::steady_clock::now();
  out->quick = quick;
  out->compiler_ms = std::chrono::duration<double, std::milli>(end - compiler_start).count();
  out->compile_ms = std::chrono::duration<double, std::milli>(end - start).count();
  out->binary.assign(cubin->data(), cubin->size());
  return out;
}

lf::Status load_into(CompiledKernel& built, int device) {
  auto start = std::chrono::steady_clock::now();
  auto loaded = load(built.name, built.binary, device);
  if (!loaded.ok()) return loaded.status();
  built.module = (*loaded)->module;
  built.function = (*loaded)->function;
  built.compile_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return lf::OkStatus();
}

lf::StatusOr<std::shared_ptr<CompiledKernel>> compile(const kir::Kernel& kernel, const std::string& name,
                                                        const EmitOptions& options, int device, bool quick) {
  auto built = build(kernel, name, options, arch_of(device), quick);
  if (!built.ok()) return built.status();
  if (lf::Status s = load_into(**built, device); !s.ok()) return s;
  return built;
}

lf::StatusOr<std::shared_ptr<CompiledKernel>> load(const std::string& name, const std::string& cubin, int device) {
  rt::cu::context_of(device);  // makes the device's context current
  const rt::cu::Api& cu = rt::cu::api();
  rt::cu::CUmodule module = nullptr;
  rt::cu::CUfunction fn = nullptr;
  if (rt::cu::CUresult r = cu.cuModuleLoadData(&module, cubin.data()); r != 0)
    return lf::InternalError("cuModuleLoadData(" + name + "): " + rt::cu::error_text(r));
  if (rt::cu::CUresult r = cu.cuModuleGetFunction(&fn, module, name.c_str()); r != 0)
    return lf::InternalError("cuModuleGetFunction(" + name + "): " + rt::cu::error_text(r));
  auto out = std::make_shared<CompiledKernel>();
  out->name = name;
  out->module = module;
  out->function = fn;
  return out;
}

namespace {

// The first three parameters of every generated kernel (cuda_emit.h): metadata, operand
// pointers, scratch for split rows. Never empty arrays: the kernel's structs have one entry at least.
// The arrays are per-thread buffers reused from launch to launch (cuLaunchKernel copies the
// parameters before it returns), so a launch allocates nothing here.
struct KernelParams {
  KernelParams(const kir::Kernel& kernel, const kir::LaunchArgs& args) : meta(meta_buffer()), ptrs(ptr_buffer()) {
    pack_kernel_meta(kernel, args, &meta);
    ptrs.assign(args.pointers.begin(), args.pointers.end());
    if (meta.empty()) meta.push_back(0);
    if (ptrs.empty()) ptrs.push_back(nullptr);
  }
  static std::vector<int64_t>& meta_buffer() {
    thread_local std::vector<int64_t> b;
    return b;
  }
  static std::vector<void*>& ptr_buffer() {
    thread_local std::vector<void*> b;
    return b;
  }
  std::vector<int64_t>& meta;
  std::vector<void*>& ptrs;
  struct Scratch {
    void* partial = nullptr;
    void* partial_index = nullptr;
    unsigned* counters = nullptr;
  } scratch;
};

// The grid of a launch: a block per 256 threads' share of an elementwise kernel, a block per row
// of a row kernel (with grid_y > 1 segments of split rows), a block per 256 columns and chunk of
// rows2d rows of a rows2d kernel. `skip` when there is nothing to compute.
struct Grid {
  unsigned x = 1, y = 1;
  bool skip = false;
  bool split = false;  // rows split over grid.y blocks: scratch for their partials
};

Grid grid_of(const kir::Kernel& kernel, const kir::LaunchArgs& args, const EmitOptions& options, int64_t sms) {
  int64_t rows = args.rows();
  int64_t inner = args.inner_numel();
  Grid g;
  if (rows == 0 || (!kernel.row && inner == 0)) {
    g.skip = true;
    return g;
  }
  if (kernel.row && options.row_sweep > 0) {  // a thread a row, a full grid's threads in sweeps of whole columns
    int64_t cols = args.sizes[static_cast<size_t>(kernel.outer_rank - 1)];
    int64_t chunks = std::clamp<int64_t>(kSweepThreadsPerSm * sms / cols, 1, rows / cols);
    g.x = static_cast<unsigned>((chunks * cols + kBlockThreads - 1) / kBlockThreads);
    return g;
  }
  if (kernel.row && options.scan_chunks > 0) {  // 32 lines a block, a warp a chunk of each
    g.x = static_cast<unsigned>(std::clamp<int64_t>((rows + 31) / 32, 1, 32 * sms));
    return g;
  }
  if (kernel.row && options.row_group > 0) {  // row_group threads a row
    // At most 32 blocks an SM, striding over the rest: each lane's prologue (parameters, the
    // segment) then serves many rows, which matters when a row is a few elements a lane.
    int64_t blocks = (rows * options.row_group + kBlockThreads - 1) / kBlockThreads;
    g.x = static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, 32 * sms));
    return g;
  }
  if (!kernel.row && options.rows2d > 0) {  // a thread a column, rows2d rows at a time
    g.x = static_cast<unsigned>((args.sizes.back() + kBlockThreads - 1) / kBlockThreads);
    g.y = static_cast<unsigned>(std::clamp<int64_t>((rows + options.rows2d - 1) / options.rows2d, 1, 65535));
    return g;
  }
  if (!kernel.row) {
    int64_t per_thread = options.vec4 ? 4 : 1;
    // One block per 256 threads' share, not a grid-stride loop over a few waves of blocks: on the
    // H100 the capped grid (32 blocks an SM) ran the elementwise chain at 1.07x the copy floor, the
    // full grid at 1.01x (bench/RESULTS.md).
    int64_t blocks = (rows * inner / per_thread + kBlockThreads - 1) / kBlockThreads;
    g.x = static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, INT32_MAX));
    return g;
  }
  // A block per row up to 256 blocks an SM (32 waves); beyond that blocks loop over rows, so
  // that millions of short rows do not each pay for a block.
  g.x = static_cast<unsigned>(std::clamp<int64_t>(rows, 1, sms * 256));
  if (will_split(kernel, args, sms)) {
    int64_t segs = std::min<int64_t>((8 * sms + rows - 1) / rows, inner / (16 * kBlockThreads));
    g.y = static_cast<unsigned>(std::clamp<int64_t>(segs, 1, 65535));
    g.split = g.y > 1;
  }
  return g;
}

}  // namespace

void launch(const CompiledKernel& compiled, const kir::Kernel& kernel, const kir::LaunchArgs& args,
            const EmitOptions& options, int device) {
  rt::cu::DeviceContext& ctx = rt::cu::device_context(device);
  Grid grid = grid_of(kernel, args, options, ctx.info.multiprocessors);
  if (grid.skip) return;
  const rt::cu::Api& cu = rt::cu::api();
  KernelParams kp(kernel, args);
  std::shared_ptr<rt::Storage> partial, partial_index, counters;
  if (grid.split) {
    Device dev = Device::cuda(device);
    int64_t rows = args.rows();
    size_t parts = static_cast<size_t>(rows) * grid.y;
    partial = rt::Storage::allocate(dev, parts * 8);
    partial_index = rt::Storage::allocate(dev, parts * 8);
    counters = rt::Storage::allocate(dev, static_cast<size_t>(rows) * sizeof(unsigned));
    LF_CU_CHECK(cu.cuMemsetD8Async(reinterpret_cast<rt::cu::CUdeviceptr>(counters->data()), 0,
                                   static_cast<size_t>(rows) * sizeof(unsigned), ctx.stream));
    kp.scratch = {partial->data(), partial_index->data(), static_cast<unsigned*>(counters->data())};
  }
  void* params[] = {kp.meta.data(), kp.ptrs.data(), &kp.scratch};
  LF_CU_CHECK(cu.cuLaunchKernel(static_cast<rt::cu::CUfunction>(compiled.function), grid.x, grid.y, 1,
                                kBlockThreads, 1, 1, 0, ctx.stream, params, nullptr));
  // Scratch blocks go back to the allocator now: all work on this device is ordered on one
  // stream, so a later use of the same block runs after this kernel.
}

// ---- LaunchGraph

struct LaunchGraph::Node {
  rt::cu::CUgraphNode node = nullptr;  // null: a launch with nothing to compute, left out
  rt::cu::KernelNodeParams params{};
  std::vector<int64_t> meta;
  std::vector<void*> ptrs;  // as the executable graph has them
  KernelParams::Scratch scratch;
  void* param_ptrs[3] = {};
};

LaunchGraph::LaunchGraph(const rt::cu::DeviceContext& context) : context_(&context) {}

LaunchGraph::~LaunchGraph() {
  rt::cu::drain_launches(/*rethrow=*/false);  // a queued launch of this graph goes first
  const rt::cu::Api& cu = rt::cu::api();
  if (exec_) cu.cuGraphExecDestroy(static_cast<rt::cu::CUgraphExec>(exec_));
  if (graph_) cu.cuGraphDestroy(static_cast<rt::cu::CUgraph>(graph_));
}

std::unique_ptr<LaunchGraph> LaunchGraph::build(const std::vector<backend::Launch>& launches, int device) {
  if (!rt::config().cuda_graphs || launches.empty()) return nullptr;
  const rt::cu::Api& cu = rt::cu::api();
  if (!cu.graphs) return nullptr;
  rt::cu::DeviceContext& ctx = rt::cu::device_context(device);
  std::unique_ptr<LaunchGraph> g(new LaunchGraph(ctx));
  rt::cu::CUgraph graph = nullptr;
  if (cu.cuGraphCreate(&graph, 0) != 0) return nullptr;
  g->graph_ = graph;
  rt::cu::CUgraphNode last = nullptr;
  g->nodes_.reserve(launches.size());
  for (const backend::Launch& l : launches) {
    Grid grid = grid_of(*l.kernel, *l.args, static_cast<const Variant&>(*l.variant).options, ctx.info.multiprocessors);
    if (!grid.skip && grid.split) return nullptr;  // split rows: scratch set up at each launch
    Node& n = *g->nodes_.emplace_back(std::make_unique<Node>());
    if (grid.skip) continue;
    KernelParams kp(*l.kernel, *l.args);
    n.meta = kp.meta;
    n.ptrs = kp.ptrs;
    n.param_ptrs[0] = n.meta.data();
    n.param_ptrs[1] = n.ptrs.data();
    n.param_ptrs[2] = &n.scratch;
    n.params = {static_cast<rt::cu::CUfunction>(static_cast<const CompiledKernel*>(l.compiled)->function), grid.x, grid.y, 1, kBlockThreads, 1, 1, 0,
                n.param_ptrs, nullptr};
    // Each kernel after the one before, as on the stream.
    if (cu.cuGraphAddKernelNode(&n.node, graph, last ? &last : nullptr, last ? 1 : 0, &n.params) != 0) return nullptr;
    last = n.node;
  }
  if (last == nullptr) return nullptr;  // nothing to launch
  rt::cu::CUgraphExec exec = nullptr;
  if (cu.cuGraphInstantiateWithFlags(&exec, graph, 0) != 0) return nullptr;
  g->exec_ = exec;
  return g;
}

bool needs_setup(const backend::Launch& l, int device) {
  const rt::cu::DeviceContext& ctx = rt::cu::context_of(device);
  Grid grid = grid_of(*l.kernel, *l.args, static_cast<const Variant&>(*l.variant).options, ctx.info.multiprocessors);
  return !grid.skip && grid.split;
}

bool LaunchGraph::update(size_t i, const backend::Launch& launch) {
  Node& n = *nodes_[i];
  if (n.node == nullptr) return true;
  KernelParams kp(*launch.kernel, *launch.args);  // the same kernel: the same sizes as n's
  if (kp.meta == n.meta && kp.ptrs == n.ptrs) return true;
  // A launch of this graph still queued must not see the new values (launches of other graphs
  // queued after it may stay queued); and if this throws (a queued launch failed), the recorded
  // ones must still be the graph's.
  if (queued_ != 0) rt::cu::drain_launches_to(queued_);
  std::copy(kp.meta.begin(), kp.meta.end(), n.meta.begin());  // in place: n.param_ptrs point at them
  std::copy(kp.ptrs.begin(), kp.ptrs.end(), n.ptrs.begin());
  return rt::cu::api().cuGraphExecKernelNodeSetParams(static_cast<rt::cu::CUgraphExec>(exec_), n.node, &n.params) == 0;
}

bool LaunchGraph::launch() {
  return rt::cu::launch_graph(static_cast<rt::cu::CUgraphExec>(exec_), *context_, &queued_);
}

void launch_matmul(const CompiledKernel& compiled, const kir::Kernel& kernel, const kir::LaunchArgs& args,
                   const GemmParams& gemm, int device) {
  int64_t batch = 1;
  for (int64_t d = 0; d < gemm.batch_rank; ++d) batch *= gemm.batch[d];
  if (batch == 0 || gemm.m == 0 || gemm.n == 0) return;
  int64_t gx = (gemm.n + kGemmTile - 1) / kGemmTile, gy = (gemm.m + kGemmTile - 1) / kGemmTile;
  if (gx > INT32_MAX || gy > 65535 || batch > 65535)
    throw Error("matmul: a " + std::to_string(gemm.m) + "x" + std::to_string(gemm.n) + " product in " +
                std::to_string(batch) + " batches exceeds the generated kernel's grid (internal error: checked before)");
  rt::cu::DeviceContext& ctx = rt::cu::device_context(device);
  KernelParams kp(kernel, args);
  GemmParams g = gemm;
  void* params[] = {kp.meta.data(), kp.ptrs.data(), &kp.scratch, &g};
  LF_CU_CHECK(rt::cu::api().cuLaunchKernel(static_cast<rt::cu::CUfunction>(compiled.function), static_cast<unsigned>(gx),
                                           static_cast<unsigned>(gy), static_cast<unsigned>(batch), kBlockThreads, 1, 1,
                                           0, ctx.stream, params, nullptr));
}

// ---- the backend::Backend of CUDA devices

namespace {

const Variant& variant_of(const backend::Variant& v) { return static_cast<const Variant&>(v); }

// Profiling a launch on the device: an event recorded on LazyFuse's stream before the launch and
// one after; the profile reads the time between them when it reports (cuEventSynchronize waits for
// the launch then). Untested on a GPU. A failure anywhere makes the timing unknown (elapsed_ms < 0),
// never an error of the program.
class EventTimer final : public rt::obs::DeviceTimer {
 public:
  static std::unique_ptr<rt::obs::DeviceTimer> start(int device) {
    const auto& cu = rt::cu::api();
    auto t = std::unique_ptr<EventTimer>(new EventTimer(device));
    rt::cu::DeviceContext& ctx = rt::cu::device_context(device);
    t->stream_ = ctx.stream;
    if (cu.cuEventCreate(&t->begin_, 0) != 0 || cu.cuEventCreate(&t->end_, 0) != 0 ||
        cu.cuEventRecord(t->begin_, t->stream_) != 0)
      t->failed_ = true;
    return t;
  }
  void stop() override {
    if (!failed_ && rt::cu::api().cuEventRecord(end_, stream_) != 0) failed_ = true;
  }
  double elapsed_ms() override {
    const auto& cu = rt::cu::api();
    float ms = 0;
    rt::cu::context_of(device_);  // the device's context current on this thread
    if (failed_ || cu.cuEventSynchronize(end_) != 0 || cu.cuEventElapsedTime(&ms, begin_, end_) != 0) return -1;
    return ms;
  }
  ~EventTimer() override {
    const auto& cu = rt::cu::api();
    if (begin_) cu.cuEventDestroy(begin_);
    if (end_) cu.cuEventDestroy(end_);
  }

 private:
  explicit EventTimer(int device) : device_(device) {}
  int device_;
  rt::cu::CUstream stream_ = nullptr;
  rt::cu::CUevent begin_ = nullptr, end_ = nullptr;
  bool failed_ = false;
};

class CudaBackend final : public backend::Backend {
 public:
  const char* name() const override { return "cuda"; }
  const char* source_suffix() const override { return ".cu"; }
  const char* comment_prefix() const override { return "//"; }
  bool tiered() const override { return rt::config().tiered_compile; }

  backend::Specialized specialize(const kir::Kernel& kernel, const kir::LaunchArgs& args, Device device,
                                  int product_operand) const override {
    auto v = std::make_shared<Variant>();
    EmitOptions& o = v->options;
    o = options_for(kernel, args, device.index());
    std::string mm;
    if (product_operand >= 0) {  // a generated matmul kernel with this epilogue (matmul.cpp)
      o.matmul_product = product_operand;
      o.vec4 = false;
      o.row_cache = 0;
      o.row_full = false;
      o.rows2d = 0;
      o.row_sweep = 0;
      mm = "|mm" + std::to_string(product_operand);
    }
    v->arch = arch_of(device.index());
    std::string key = "cuda|" + std::string(codegen_fingerprint()) + "|" + target_id(device.index()) +
                      (o.index32 ? "|i32" : "|i64") + "|rc" + std::to_string(o.row_cache) + (o.row_full ? "f" : "") +
                      (o.vec4 ? "|v4" : "|v1") + (o.row_group ? "|rg" + std::to_string(o.row_group) : "") +
                      (o.scan_chunks ? "|sc" + std::to_string(o.scan_chunks) : "") +
                      (o.row_sweep ? "|sw" + std::to_string(o.row_sweep) : "") +
                      (o.int_arange ? "|ia" + std::to_string(o.int_arange) : "") + narrow_key(o.narrow) +
                      (o.rows2d ? "|r2d" + std::to_string(o.rows2d) : "") + mm + "|" +
                      kernel.key();
    return {std::move(key), std::move(v)};
  }
  // options_for reads integer parameters (narrow_ints' ranges), int64 aranges' bounds
  // (int_aranges) and a remap's reach.
  bool specializes_on_param(const kir::Kernel& kernel, int param) const override {
    if (kernel.params[static_cast<size_t>(param)] == kir::ParamKind::Int)
      for (const kir::Instr& in : kernel.instrs)
        if (in.kind == kir::InstrKind::Param && in.slot == param) return true;
    for (const kir::Instr& in : kernel.instrs) {
      bool reads = in.kind == kir::InstrKind::Remap ||
                   (in.kind == kir::InstrKind::Gen && in.op == ir::Op::Arange && in.dtype == DType::Int64);
      if (reads && std::find(in.params.begin(), in.params.end(), param) != in.params.end()) return true;
    }
    return false;
  }
  // A row kernel that will_split() cannot split runs a block a row: over fewer rows than a
  // quarter of the SMs most of the GPU idles while one SM streams each long row several times
  // (a whole-tensor `(x - x.mean()) / x.std()` in one block: 48 ms against 0.34 split, H200).
  // A fused scan runs a thread a line (fuser.h, kScanMinLinesGpu).
  fuse::Costs fuse_costs(Device device) const override {
    fuse::Costs c;
    c.few_rows = std::max<int64_t>(1, rt::cu::context_of(device.index()).info.multiprocessors / 4);
    c.scan_min_lines = fuse::kScanMinLinesGpu;
    c.scan_max_length = fuse::kScanMaxLengthGpu;
    c.scan_short_line = 0;
    c.scan_last_dim_only = false;
    return c;
  }
  // The choices those parameters make (options_for; specialize() overrides neither).
  bool same_variant(const kir::Kernel& kernel, const kir::LaunchArgs& args, const backend::Variant& variant,
                    Device device) const override {
    const EmitOptions& was = variant_of(variant).options;
    EmitOptions now = options_for(kernel, args, device.index());
    return now.index32 == was.index32 && now.int_arange == was.int_arange && now.narrow == was.narrow;
  }
  lf::StatusOr<std::shared_ptr<lf::CompiledKernel>> build(const kir::Kernel& kernel, const std::string& name,
                                                          const backend::Variant& variant, bool quick) const override {
    const Variant& v = variant_of(variant);
    auto out = cuda::build(kernel, name, v.options, v.arch, quick);
    if (!out.ok()) return out.status();
    return std::shared_ptr<lf::CompiledKernel>(std::move(*out));
  }
  lf::Status install(lf::CompiledKernel& built, Device device) const override {
    return load_into(static_cast<CompiledKernel&>(built), device.index());
  }
  lf::StatusOr<std::shared_ptr<lf::CompiledKernel>> load(const std::string& name, const std::string& binary,
                                                         const kir::Kernel&, const backend::Variant&,
                                                         Device device) const override {
    auto out = cuda::load(name, binary, device.index());
    if (!out.ok()) return out.status();
    return std::shared_ptr<lf::CompiledKernel>(std::move(*out));
  }
  std::string source(const kir::Kernel& kernel, const std::string& name,
                     const backend::Variant& variant) const override {
    return emit_cuda(kernel, name, variant_of(variant).options);
  }
  void launch(const backend::Launch& l, Device device) const override {
    cuda::launch(static_cast<const CompiledKernel&>(*l.compiled), *l.kernel, *l.args, variant_of(*l.variant).options,
                 device.index());
  }
  std::unique_ptr<backend::LaunchGraph> graph(const std::vector<backend::Launch>& launches,
                                              Device device) const override {
    return LaunchGraph::build(launches, device.index());
  }
  std::unique_ptr<backend::LaunchGraph> capture(const std::vector<backend::Launch>& kernels,
                                                const std::function<void()>& run, Device device) const override {
    return capture_graph(kernels, run, device.index());
  }
  std::unique_ptr<rt::obs::DeviceTimer> start_timer(Device device) const override {
    return EventTimer::start(device.index());
  }
  void matmul(backend::MatmulCall& call) const override { run_matmul(call); }
  void conv(backend::ConvCall& call) const override { run_conv(call); }
  // 16-bit convolutions that cuDNN's graph API can run with the scale in float32 (cudnn.h).
  bool conv_scale_in_epilogue(const ir::Node& conv) const override {
    const rt::Config& c = rt::config();
    return dtype_size(conv.dtype) == 2 && is_floating(conv.dtype) && c.conv != "generated" && c.conv_nhwc &&
           ir::ConvParams::of(conv).groups == 1 && cudnn_scale_epilogue_available();
  }
  bool conv_takes_krsc_filters() const override { return true; }
  // cuDNN's NHWC calls (cudnn.h), which otherwise transform an OIHW filter before each call.
  bool conv_reads_krsc_filter(const ir::Node& conv) const override {
    const rt::Config& c = rt::config();
    return conv.dtype != DType::Float64 && c.conv_nhwc && c.conv != "generated";
  }
  bool scatter_takes_constants() const override { return true; }
  void pool(backend::PoolCall& call) const override { run_pool(call); }
  void sort(backend::SortCall& call) const override { run_sort(call); }
  void attention(backend::AttentionCall& call) const override { run_attention(call); }
  void scan(backend::ScanCall& call) const override { run_scan(call); }
  void scatter(backend::ScatterCall& call) const override { run_scatter(call); }
  void nearest(backend::NearestCall& call) const override { run_nearest(call); }
  void linalg(backend::LinalgCall& call) const override { run_linalg(call); }
};

}  // namespace

const backend::Backend& backend() {
  static const CudaBackend b;
  return b;
}

}  // namespace lf::cuda
