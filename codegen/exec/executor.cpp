#include "codegen/exec/executor.h"

#include "codegen/cache/fingerprint.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_set>

#include "codegen/cpu/backend.h"
#include "codegen/cpu/gemm.h"
#include "codegen/cuda/gemm.h"
#include "codegen/cuda/backend.h"
#include "codegen/exec/flush_plan.h"
#include "codegen/fuse/fuser.h"
#include "codegen/cache/kernel_cache.h"
#include "codegen/fuse/lower.h"
#include "codegen/reference/reference.h"
#include "codegen/ir/view.h"
#include "runtime/config.h"

namespace lf::exec {
namespace {

void materialize(ir::Node& n, std::shared_ptr<rt::Storage> storage, ir::Layout layout) {
  n.storage = std::move(storage);
  n.layout = std::move(layout);
  n.op = ir::Op::Buffer;
  n.inputs.clear();
}

// Stores a host value computed by the reference executor into `n`, on n's device.
void materialize_value(ir::Node& n, const ir::Value& v) {
  if (n.device.is_cpu()) return materialize(n, v.storage, v.layout);
  ir::Value dense = ir::to_contiguous(v, v.dtype);
  size_t bytes = static_cast<size_t>(n.numel()) * dtype_size(n.dtype);
  auto storage = rt::Storage::allocate(n.device, bytes);
  if (bytes) rt::copy(*dense.storage, 0, *storage, 0, bytes);
  materialize(n, std::move(storage), ir::Layout{ir::contiguous_strides(n.shape), 0});
}

std::string short_hash(const std::string& key) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016zx", std::hash<std::string>{}(key));
  return buf;
}

// A failing kernel is reported once per key, not at every flush.
bool first_failure(const std::string& key) {
  static std::mutex mu;
  static std::unordered_set<std::string> seen;
  std::lock_guard<std::mutex> lock(mu);
  return seen.insert(key).second;
}

// Writes the source of a kernel that failed to compile where the user can read it; returns the
// path (or why it could not be written).
std::string save_failed_source(const std::string& name, const std::string& source, bool gpu) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::filesystem::path path = dir / ("lazyfuse-failed-" + name + (gpu ? ".cu" : ".ll"));
  std::ofstream out(path);
  out << source;
  out.close();
  return out ? path.string() : "(could not write " + path.string() + ")";
}

// LAZYFUSE_DUMP_DIR: each newly compiled kernel's source, named after the kernel, with its key's
// summary and its compile log as a header comment. A directory that cannot be written is reported
// once.
void dump_source(const CompiledKernel& k, bool gpu, const kir::Kernel& kernel) {
  std::error_code ec;
  std::filesystem::path dir = rt::config().dump_dir;
  std::filesystem::create_directories(dir, ec);
  std::filesystem::path path = dir / (k.name + (gpu ? ".cu" : ".ll"));
  std::ofstream out(path);
  const char* comment = gpu ? "//" : ";";
  out << comment << " " << kernel.summary() << "\n";
  if (!k.log.empty()) out << comment << " compile log: " << k.log << "\n";
  out << k.source;
  out.close();
  static bool warned = false;
  if (!out && !warned) {
    warned = true;
    std::fprintf(stderr, "[lazyfuse] warning: LAZYFUSE_DUMP_DIR: cannot write %s\n", path.c_str());
  }
}

void run_host(const fuse::Group& g) {
  for (ir::Node* n : g.nodes) {
    std::vector<ir::Value> inputs;
    for (auto& in : n->inputs) inputs.push_back(ir::reference_eval(in.get()));
    materialize_value(*n, ir::reference_op(*n, inputs));
  }
}

// A group's kernel, lowered and found in (or added to) the kernel cache, ready to launch.
struct Prepared {
  lower::Lowered low;
  bool gpu = false;
  cuda::EmitOptions cuda_options;
  std::string key, name;
  std::shared_ptr<const cache::Entry> entry;
};

// `matmul_product` (GPU): the address standing for a matmul's product among the epilogue group's
// inputs; the kernel is then the generated matmul with this epilogue (cuda_emit.h).
Prepared prepare(const fuse::Group& g, const fuse::Partition& p, int index, const Options& opt, CacheStats& stats,
                 bool keep_last_dim = false, const void* matmul_product = nullptr,
                 const std::vector<lower::OutputPlacement>* placement = nullptr) {
  Prepared k;
  Device device = g.nodes[0]->device;
  k.low = lower::lower_group(g, p, index, device, keep_last_dim, placement);
  k.gpu = device.is_cuda();
  const kir::Kernel& kernel = k.low.kernel;
  if (k.gpu) {
    k.cuda_options = cuda::options_for(kernel, k.low.args, device.index());
    std::string mm;
    if (matmul_product) {
      const auto& ptrs = k.low.args.pointers;
      k.cuda_options.matmul_product = static_cast<int>(std::find(ptrs.begin(), ptrs.end(), matmul_product) - ptrs.begin());
      k.cuda_options.vec4 = false;
      k.cuda_options.row_cache = 0;
      k.cuda_options.row_full = false;
      mm = "|mm" + std::to_string(k.cuda_options.matmul_product);
    }
    k.key = "cuda|" + std::string(codegen_fingerprint()) + "|" + cuda::target_id(device.index()) +
            (k.cuda_options.index32 ? "|i32" : "|i64") + "|rc" + std::to_string(k.cuda_options.row_cache) + (k.cuda_options.row_full ? "f" : "") +
            (k.cuda_options.vec4 ? "|v4" : "|v1") + mm + "|" + kernel.key();
  } else {
    k.low.kernel.stream_stores = cpu::wants_streaming_stores(kernel, k.low.args);
    k.key = cpu_cache_key(kernel);
  }
  k.name = "lf_" + short_hash(k.key);
  bool hit = false;
  cache::DiskSpec disk;
  disk.kernel = &kernel;
  disk.load = [&](const std::string& kname, const std::string& binary)
      -> lf::StatusOr<std::shared_ptr<CompiledKernel>> {
    if (k.gpu) return cuda::load(kname, binary, device.index());
    return cpu::load(kname, binary, kernel);
  };
  // Tiered compiling (GPU): a quick build first, the optimized one on the cache's background thread.
  // The closure is small enough for std::function's inline storage: every lookup builds it.
  const bool tiered = k.gpu && rt::config().tiered_compile;
  cache::KernelCache::MakeUpgrade upgrade;
  if (tiered) {
    upgrade = [&k, dev = device.index()]() -> cache::KernelCache::Upgrade {
      return {[kernel = k.low.kernel, name = k.name, options = k.cuda_options, arch = cuda::arch_of(dev)] {
                return cuda::build(kernel, name, options, arch, /*quick=*/false);
              },
              [dev](CompiledKernel& built) { return cuda::load_into(static_cast<cuda::CompiledKernel&>(built), dev); }};
    };
  }
  k.entry = cache::global_cache().get_or_compile(
      k.key,
      [&]() -> lf::StatusOr<std::shared_ptr<CompiledKernel>> {
        if (k.gpu) return cuda::compile(kernel, k.name, k.cuda_options, device.index(), tiered);
        return cpu::compile(kernel, k.name);
      },
      &hit, &disk, upgrade);
  const cache::Entry& entry = *k.entry;
  if (hit) {
    ++stats.hits;
  } else {
    ++stats.misses;
    if (entry.from_disk) {
      ++stats.disk_hits;
    } else if (entry.kernel) {
      ++stats.kernels_compiled;
      stats.compile_ms += entry.kernel->compile_ms;
      if (entry.kernel->quick) ++stats.quick_builds;
      if (!rt::config().dump_dir.empty()) dump_source(*entry.kernel, k.gpu, kernel);
    }
  }
  if (opt.log_level >= 1) {
    std::fprintf(stderr, "[lazyfuse]   group %d: %s%s, %s%d+%dd, %zu in/out, %s %s", index,
                 g.kind == fuse::Group::Kind::Matmul ? "matmul epilogue " : "", kernel.summary().c_str(),
                 kernel.row ? "row " : "", kernel.outer_rank, kernel.inner_rank, kernel.operands.size(),
                 k.name.c_str(), hit ? "hit" : "miss");
    if (!hit && entry.from_disk) std::fprintf(stderr, " (loaded from the disk cache)");
    else if (!hit && entry.kernel && entry.kernel->compiler_ms > 0)
      std::fprintf(stderr, " (compiled in %.1f ms, %.1f in the compiler%s)", entry.kernel->compile_ms,
                   entry.kernel->compiler_ms, entry.kernel->quick ? "; a quick build, the optimized one follows" : "");
    else if (!hit && entry.kernel) std::fprintf(stderr, " (compiled in %.1f ms)", entry.kernel->compile_ms);
    std::fprintf(stderr, "\n");
    if (opt.log_level >= 2 && !hit && entry.kernel) std::fprintf(stderr, "%s\n", entry.kernel->source.c_str());
  }
  // No CPU compiler at all (the LLVM plugin is missing or broken) is an installation problem, not a
  // kernel's: falling back would run every group unfused, silently slow.
  if (!entry.kernel && !k.gpu && entry.status.code() == lf::StatusCode::kUnavailable)
    throw Error(std::string(entry.status.message()));
  if (!entry.kernel && first_failure(k.key)) {
    std::string saved = save_failed_source(
        k.name, k.gpu ? cuda::emit_cuda(kernel, k.name, k.cuda_options) : cpu::emit_ir(kernel, k.name), k.gpu);
    std::fprintf(stderr,
                 "[lazyfuse] warning: kernel %s (%s) failed to compile: %s\n"
                 "[lazyfuse]   its source is in %s; running this group unfused on the reference executor instead\n",
                 k.name.c_str(), kernel.summary().c_str(), std::string(entry.status.message()).c_str(), saved.c_str());
  }
  return k;
}

// The outputs of a kernel that could not be compiled, computed by the reference executor.
void run_fallback(const Prepared& k) {
  for (ir::Node* o : k.low.outputs) materialize_value(*o, ir::reference_eval(o));
}

void launch(const Prepared& k, CacheStats& stats) {
  const kir::Kernel& kernel = k.low.kernel;
  if (k.gpu) {
    Device device = k.low.outputs[0]->device;
    cuda::launch(static_cast<const cuda::CompiledKernel&>(*k.entry->kernel), kernel, k.low.args, k.cuda_options,
                 device.index());
  } else {
    cpu::launch(static_cast<const cpu::CompiledKernel&>(*k.entry->kernel), kernel, k.low.args);
  }
  ++stats.kernels_launched;
  stats.bytes_moved += static_cast<uint64_t>(k.low.bytes);
}

void materialize_outputs(const Prepared& k) {
  for (size_t i = 0; i < k.low.outputs.size(); ++i) {
    ir::Node* o = k.low.outputs[i];
    materialize(*o, k.low.out_storage[i], ir::Layout{ir::contiguous_strides(o->shape), 0});
  }
}

// A matmul operand as storage + strides: a view of realized data as it is; anything else (a
// generator, a reshape that is no view) computed by the reference executor first.
struct MatmulOperand {
  std::shared_ptr<rt::Storage> storage;
  cpu::GemmOperand view;
};

MatmulOperand matmul_operand(ir::Node* in, Device device) {
  auto [source, chain] = ir::resolve_views(in);
  if (source->realized()) {
    if (auto v = ir::view_of_chain(*source, chain))
      return {source->storage, {source->storage->data(), v->offset, v->strides}};
  }
  ir::Value v = ir::to_contiguous(ir::reference_eval(in), in->dtype);
  std::shared_ptr<rt::Storage> storage = v.storage;
  if (!device.is_cpu()) {
    size_t bytes = static_cast<size_t>(in->numel()) * dtype_size(in->dtype);
    storage = rt::Storage::allocate(device, bytes);
    if (bytes) rt::copy(*v.storage, 0, *storage, 0, bytes);
  }
  return {storage, {storage->data(), 0, ir::contiguous_strides(in->shape)}};
}

// The same operand as host data (the GPU path's last resort runs the GEMM on the host).
MatmulOperand on_host(const MatmulOperand& o) {
  if (o.storage->device().is_cpu()) return o;
  auto host = rt::Storage::allocate(Device::cpu(), o.storage->nbytes());
  rt::copy(*o.storage, 0, *host, 0, o.storage->nbytes());
  return {host, {host->data(), o.view.offset, o.view.strides}};
}

// How a CPU epilogue kernel's rows line up with the matmul's rows (see lower.h, keep_last_dim):
// its columns are the matmul's n (then a block of matmul rows is a block of kernel rows), or it is
// one row of every element (a block is a range of columns), or neither (it runs after the GEMM).
cpu::RowsDone epilogue_by_rows(const Prepared& k, const std::vector<int64_t>& meta, int64_t n, bool* deferred) {
  const auto& compiled = static_cast<const cpu::CompiledKernel&>(*k.entry->kernel);
  int64_t rows = k.low.args.rows(), cols = k.low.args.sizes.back();
  cpu::KernelFn fn = compiled.fn;
  const int64_t* m = meta.data();
  void* const* ptrs = k.low.args.pointers.data();
  *deferred = false;
  if (cols == n) return [=](int64_t r0, int64_t r1) { fn(m, ptrs, r0, r1, 0, cols); };
  if (rows == 1) return [=](int64_t r0, int64_t r1) { fn(m, ptrs, 0, 1, r0 * n, r1 * n); };
  *deferred = true;
  return nullptr;
}

// A matmul group's epilogue as a pointwise group of its own: every member but the matmul, with
// the product read as an input (the members keep their partition index).
fuse::Group epilogue_group(const fuse::Group& g) {
  fuse::Group e = g;
  e.kind = fuse::Group::Kind::Pointwise;
  e.nodes.erase(e.nodes.begin());
  std::erase(e.outputs, g.nodes[0]);
  return e;
}

// The generated matmul kernel with the epilogue inside (GPU), when it is the better choice. The
// cost rule compares it with cuBLASLt's product plus an epilogue pass, using rates measured on the
// H100 (bench/RESULTS.md): cuBLASLt about 50 TFLOP/s in float32 and float64 and 600 in the 16-bit
// floats; the generated SIMT kernel 16.5 TFLOP/s once its 128x128 tiles fill every SM, and
// proportionally less with fewer tiles (a 256^3 product is 4 tiles: 0.5 TFLOP/s measured); the
// pass writes and reads the product once more at about 3 TB/s, plus a launch. So the generated
// kernel wins on wide products with a short k, cuBLASLt on the rest. Taken too whenever cuBLASLt
// declines the problem (integers, no unit stride). Only when the product itself is not kept
// (otherwise it must be written anyway) and there is an epilogue. Returns false to go on.
constexpr double kGeneratedRate = 16.5e12;
bool run_generated_matmul(const fuse::Group& g, const fuse::Partition& p, int index, const Options& opt,
                          CacheStats& stats, const cpu::GemmProblem& problem, const std::string& lt_why,
                          const std::function<void(const std::string&)>& log) {
  ir::Node* mm = g.nodes[0];
  if (g.nodes.size() < 2 || std::find(g.outputs.begin(), g.outputs.end(), mm) != g.outputs.end()) return false;
  if (problem.batch.size() > static_cast<size_t>(cuda::kGemmMaxBatchRank)) return false;
  int64_t batch = 1;
  for (int64_t s : problem.batch) batch *= s;
  if (batch > 65535 || (problem.m + cuda::kGemmTile - 1) / cuda::kGemmTile > 65535) return false;
  double flop = 2.0 * static_cast<double>(batch * problem.m) * static_cast<double>(problem.n) * static_cast<double>(problem.k);
  double out_bytes = static_cast<double>(batch * problem.m * problem.n) * static_cast<double>(dtype_size(mm->dtype));
  lf::Status lt = cuda::lt_supports(problem);
  double lt_rate = dtype_size(mm->dtype) == 2 ? 600e12 : 50e12;
  double t_lt = flop / lt_rate + 2 * out_bytes / 3e12 + 5e-6;
  double tiles = static_cast<double>(batch) * static_cast<double>((problem.m + cuda::kGemmTile - 1) / cuda::kGemmTile) *
                 static_cast<double>((problem.n + cuda::kGemmTile - 1) / cuda::kGemmTile);
  double sms = rt::cu::context_of(mm->device.index()).info.multiprocessors;
  double t_gen = flop / (kGeneratedRate * std::min(1.0, tiles / std::max(sms, 1.0)));
  const std::string& choice = rt::config().matmul;  // LAZYFUSE_MATMUL
  std::string why;
  if (!lt.ok()) why = "cuBLASLt cannot take it: " + std::string(lt.message());
  else if (choice == "generated") why = "LAZYFUSE_MATMUL=generated";
  else if (choice == "auto" && t_gen < t_lt) why = "estimated faster than cuBLASLt plus an epilogue pass";
  else return false;
  Device device = mm->device;
  // The product is an input of the epilogue that the kernel never loads: lower with a stand-in
  // storage, then make the node pending again (its value lives only in registers).
  auto stand_in = rt::Storage::allocate(device, dtype_size(mm->dtype));
  mm->storage = stand_in;
  mm->layout = ir::Layout{ir::contiguous_strides(mm->shape), 0};
  Prepared k = prepare(epilogue_group(g), p, index, opt, stats, /*keep_last_dim=*/true, stand_in->data());
  mm->storage = nullptr;
  mm->layout = ir::Layout{};
  if (!k.entry->kernel) return false;  // reported by prepare(); the other path runs it
  cuda::GemmParams gp;
  gp.a = problem.a.data;
  gp.b = problem.b.data;
  gp.m = problem.m;
  gp.n = problem.n;
  gp.k = problem.k;
  size_t r = problem.batch.size();
  gp.a_offset = problem.a.offset;
  gp.a_sm = problem.a.strides[r];
  gp.a_sk = problem.a.strides[r + 1];
  gp.b_offset = problem.b.offset;
  gp.b_sk = problem.b.strides[r];
  gp.b_sn = problem.b.strides[r + 1];
  gp.batch_rank = static_cast<int64_t>(r);
  for (size_t d = 0; d < r; ++d) {
    gp.batch[d] = problem.batch[d];
    gp.a_batch_stride[d] = problem.a.strides[d];
    gp.b_batch_stride[d] = problem.b.strides[d];
  }
  cuda::launch_matmul(static_cast<const cuda::CompiledKernel&>(*k.entry->kernel), k.low.kernel, k.low.args, gp,
                      device.index());
  ++stats.kernels_launched;
  stats.bytes_moved += static_cast<uint64_t>(k.low.bytes);
  materialize_outputs(k);
  log("generated matmul kernel " + k.name + " with the epilogue inside (" + why + ")" +
      (lt_why.empty() ? "" : "; cuBLASLt's epilogue: " + lt_why));
  return true;
}

// A matmul group: the GEMM, then its epilogue kernel (the group's other members, a pointwise
// kernel over the matmul's output shape that reads the product as an input). On the CPU the
// epilogue runs on each block of rows as soon as the GEMM finishes it, on the same thread.
// A matmul group: the GEMM, then its epilogue kernel (the group's other members, a pointwise
// kernel over the matmul's output shape that reads the product as an input). On the CPU the
// epilogue runs on each block of rows as soon as the GEMM finishes it, on the same thread. On a
// GPU, cuBLASLt computes the product, with the epilogue inside it where cuBLASLt has that
// epilogue (bias, relu), else followed by the epilogue kernel.
void run_matmul_group(const fuse::Group& g, const fuse::Partition& p, int index, const Options& opt,
                      CacheStats& stats) {
  ir::Node* mm = g.nodes[0];
  Device device = mm->device;
  size_t rank = mm->shape.size();
  MatmulOperand a = matmul_operand(mm->inputs[0].get(), device);
  MatmulOperand b = matmul_operand(mm->inputs[1].get(), device);
  cpu::GemmProblem problem;
  problem.dtype = mm->dtype;
  problem.batch.assign(mm->shape.begin(), mm->shape.end() - 2);
  problem.m = mm->shape[rank - 2];
  problem.n = mm->shape[rank - 1];
  problem.k = mm->inputs[0]->shape[rank - 1];
  problem.a = a.view;
  problem.b = b.view;
  size_t esize = dtype_size(mm->dtype);
  size_t c_bytes = static_cast<size_t>(mm->numel()) * esize;
  uint64_t gemm_bytes = c_bytes + (mm->inputs[0]->numel() + mm->inputs[1]->numel()) * esize;
  auto log = [&](const std::string& how) {
    if (opt.log_level < 1) return;
    std::fprintf(stderr, "[lazyfuse]   group %d: matmul %s%lldx%lldx%lld %s: %s\n", index,
                 problem.batch.empty() ? "" : (shape_str(problem.batch) + " x ").c_str(),
                 static_cast<long long>(problem.m), static_cast<long long>(problem.n),
                 static_cast<long long>(problem.k), dtype_name(mm->dtype), how.c_str());
  };

  std::string lt_why;
  if (device.is_cuda()) {
    // The whole epilogue inside cuBLASLt: it writes the group's one output, nothing else runs.
    cuda::LtMatch match = cuda::match_lt_epilogue(g);
    if (match.whole && match.epilogue != cuda::LtEpilogue::kNone) {
      auto out = rt::Storage::allocate(device, c_bytes);
      problem.c = out->data();
      const void* bias = nullptr;
      if (match.bias) bias = static_cast<const char*>(match.bias->storage->data()) + match.bias_offset * static_cast<int64_t>(esize);
      lf::Status st = problem.m * problem.n == 0 ? lf::OkStatus() : cuda::lt_matmul(problem, match.epilogue, bias, device.index());
      if (st.ok()) {
        ++stats.kernels_launched;
        stats.bytes_moved += gemm_bytes;
        materialize(*match.output, out, ir::Layout{ir::contiguous_strides(match.output->shape), 0});
        log(std::string("cuBLASLt with its ") + cuda::lt_epilogue_name(match.epilogue) + " epilogue (" +
            cuda::lt_status() + "), product written once");
        return;
      }
      lt_why = std::string(st.message());
    }
  }

  if (device.is_cuda() && run_generated_matmul(g, p, index, opt, stats, problem, lt_why, log)) return;

  auto c = rt::Storage::allocate(device, c_bytes);
  problem.c = c->data();
  materialize(*mm, c, ir::Layout{ir::contiguous_strides(mm->shape), 0});
  // The epilogue, lowered while the product is a realized input of it.
  std::optional<Prepared> epilogue;
  if (g.nodes.size() > 1) {
    fuse::Group e = epilogue_group(g);
    if (!e.outputs.empty()) epilogue = prepare(e, p, index, opt, stats, /*keep_last_dim=*/true);
  }
  bool epilogue_pending = epilogue && epilogue->entry->kernel;

  std::string how;
  if (device.is_cpu()) {
    std::vector<int64_t> meta;
    bool deferred = true;
    cpu::RowsDone done;
    if (epilogue_pending) {
      meta = kir::pack_meta(epilogue->low.kernel, epilogue->low.args);
      done = epilogue_by_rows(*epilogue, meta, problem.n, &deferred);
    }
    cpu::gemm(problem, done);
    how = std::string("cpu gemm (") + cpu::gemm_kernel_name(mm->dtype) + ")";
    if (epilogue_pending && !deferred) {
      ++stats.kernels_launched;
      stats.bytes_moved += static_cast<uint64_t>(epilogue->low.bytes);
      materialize_outputs(*epilogue);
      how += ", epilogue fused per row block";
      epilogue_pending = false;
    }
  } else {
    lf::Status st = problem.m * problem.n == 0 ? lf::OkStatus()
                                                 : cuda::lt_matmul(problem, cuda::LtEpilogue::kNone, nullptr, device.index());
    if (st.ok()) {
      how = "cuBLASLt (" + cuda::lt_status() + ")";
      if (!lt_why.empty()) how += "; its epilogue could not: " + lt_why;
    } else {
      // The last resort: the product on the host, copied over; the epilogue runs on the device.
      MatmulOperand ha = on_host(a), hb = on_host(b);
      auto hc = rt::Storage::allocate(Device::cpu(), c_bytes);
      cpu::GemmProblem host = problem;
      host.a = ha.view;
      host.b = hb.view;
      host.c = hc->data();
      cpu::gemm(host, nullptr);
      if (c_bytes) rt::copy(*hc, 0, *c, 0, c_bytes);
      how = "host gemm copied to the device (cuBLASLt: " + std::string(st.message()) + ")";
    }
  }
  ++stats.kernels_launched;
  stats.bytes_moved += gemm_bytes;
  if (epilogue && !epilogue->entry->kernel) {
    run_fallback(*epilogue);
  } else if (epilogue_pending) {
    launch(*epilogue, stats);
    materialize_outputs(*epilogue);
    how += ", then the epilogue kernel";
  }
  log(how);
}

// cat: each input copied by a generated kernel straight into its slab of the output (a view of
// the output storage), on the output's device; the inputs are read through their views. Returns
// false when an input is not realized data (a generator) or a copy kernel failed to compile: the
// reference executor then computes the whole cat.
bool run_cat(const fuse::Group& g, int index, const Options& opt, CacheStats& stats) {
  ir::Node* n = g.nodes[0];
  ir::Inputs inputs = n->inputs;
  for (const ir::NodePtr& in : inputs)
    if (!ir::resolve_views(in.get()).first->realized()) return false;
  auto storage = rt::Storage::allocate(n->device, static_cast<size_t>(n->numel()) * dtype_size(n->dtype));
  Shape strides = ir::contiguous_strides(n->shape);
  int64_t axis = n->attrs.axis, at = 0;
  std::vector<Prepared> copies;
  for (const ir::NodePtr& in : inputs) {
    int64_t extent = in->shape[static_cast<size_t>(axis)];
    if (in->numel() > 0) {
      ir::NodePtr copy = ir::make_node(ir::Op::Copy, n->dtype, n->device, Shape(in->shape), {in});
      fuse::Group cg;
      cg.full = in->shape;
      cg.nodes = {copy.get()};
      cg.outputs = {copy.get()};
      fuse::Partition cp;
      cp.group_of[copy.get()] = index;
      std::vector<lower::OutputPlacement> place{{storage, at * strides[static_cast<size_t>(axis)], strides}};
      Prepared k = prepare(cg, cp, index, opt, stats, false, nullptr, &place);
      if (!k.entry->kernel) return false;
      copies.push_back(std::move(k));
    }
    at += extent;
  }
  for (const Prepared& k : copies) launch(k, stats);
  materialize(*n, storage, ir::Layout{strides, 0});
  return true;
}

// Records the launches of a flush as a plan (flush_plan.h) while the flush runs normally.
struct Recorder {
  const plan::Signature& sig;
  plan::Plan plan;
  bool ok = true;  // false once a group is something a plan cannot replay
  std::unordered_map<const void*, int64_t> pointer_from;
  int64_t slots = 0;

  explicit Recorder(const plan::Signature& s) : sig(s) {
    for (size_t l = 0; l < sig.leaves.size(); ++l)
      pointer_from.emplace(sig.leaves[l]->storage->data(), static_cast<int64_t>(l));
  }

  void add(const Prepared& k) {
    plan::Step s;
    for (size_t i = 0; i < k.low.outputs.size() && ok; ++i) {
      int position = plan::position(sig, k.low.outputs[i]);
      const void* data = k.low.out_storage[i]->data();
      if (position < 0 || data == nullptr || pointer_from.count(data)) ok = false;
      else s.outputs.push_back(position);
      pointer_from.emplace(data, plan::from_output(slots++));
    }
    for (size_t o = 0; o < k.low.args.pointers.size() && ok; ++o) {
      const void* ptr = k.low.args.pointers[o];
      if (k.low.kernel.operands[o].kind == kir::Operand::Kind::Index) {
        s.pointer_from.push_back(plan::kNoPointer);
      } else if (auto it = pointer_from.find(ptr); ptr != nullptr && it != pointer_from.end()) {
        s.pointer_from.push_back(it->second);
      } else {
        ok = false;  // memory neither a leaf nor written by this flush (or empty)
      }
    }
    if (!ok) return;
    s.entry = k.entry;
    s.kernel = k.low.kernel;
    s.args = k.low.args;
    s.gpu = k.gpu;
    s.cuda_options = k.cuda_options;
    s.bytes = k.low.bytes;
    plan.steps.push_back(std::move(s));
  }
};

void run_group(const fuse::Group& g, const fuse::Partition& p, int index, const Options& opt, CacheStats& stats,
               Recorder* rec) {
  // Only plain fused kernels are replayed; anything else runs through this function every time.
  if (rec && g.kind != fuse::Group::Kind::Pointwise && g.kind != fuse::Group::Kind::Row) rec->ok = false;
  size_t cat_inputs = g.nodes[0]->inputs.size();
  if (g.kind == fuse::Group::Kind::Host && g.nodes[0]->op == ir::Op::Cat && run_cat(g, index, opt, stats)) {
    if (opt.log_level >= 1)
      std::fprintf(stderr, "[lazyfuse]   group %d: cat of %zu inputs: copy kernels into the output's slabs\n", index,
                   cat_inputs);
    return;
  }
  if (g.kind == fuse::Group::Kind::Host) {
    run_host(g);
    if (opt.log_level >= 1)
      std::fprintf(stderr, "[lazyfuse]   group %d: %s on the host (reference executor)\n", index,
                   ir::op_name(g.nodes[0]->op));
    return;
  }
  if (g.kind == fuse::Group::Kind::Matmul) return run_matmul_group(g, p, index, opt, stats);
  Prepared k = prepare(g, p, index, opt, stats);
  if (!k.entry->kernel) {
    if (rec) rec->ok = false;
    return run_fallback(k);
  }
  launch(k, stats);
  if (rec && rec->ok) rec->add(k);
  materialize_outputs(k);
}

// A held view of materialized data is just new strides over the same storage.
void materialize_held_views(const std::vector<ir::Node*>& order, const std::function<bool(const ir::Node&)>& wanted) {
  for (ir::Node* n : order) {
    if (!ir::is_view(n->op) || !wanted(*n)) continue;
    auto [source, chain] = ir::resolve_views(n);
    if (!source->realized()) continue;
    if (auto v = ir::view_of_chain(*source, chain)) {
      auto storage = source->storage;
      materialize(*n, std::move(storage), ir::Layout{v->strides, v->offset});
    }
  }
}

// The device of a plan whose steps all run on one GPU; -1 otherwise.
int single_gpu(const plan::Plan& plan, const std::vector<ir::Node*>& order) {
  int device = -1;
  for (const plan::Step& s : plan.steps) {
    Device d = order[static_cast<size_t>(s.outputs[0])]->device;
    if (!s.gpu || !d.is_cuda() || (device >= 0 && d.index() != device)) return -1;
    device = d.index();
  }
  return device;
}

// A GPU plan's steps as one CUDA graph (cuda_backend.h), tried once per plan.
void try_graph(plan::Plan& plan, const std::vector<ir::Node*>& order) {
  plan.graph_tried = true;
  int device = single_gpu(plan, order);
  if (device < 0) return;
  std::vector<cuda::LaunchGraph::Launch> launches;
  for (const plan::Step& s : plan.steps)
    launches.push_back({static_cast<const cuda::CompiledKernel*>(s.entry->kernel.get()), &s.kernel, &s.args,
                        &s.cuda_options});
  plan.graph = cuda::LaunchGraph::build(launches, device);
}

// Runs a recorded plan on this flush's nodes and buffers (whose signature matched the plan's):
// allocates every output and binds every step's pointers, launches (one CUDA graph, or step by
// step), then hands the outputs to their nodes.
void replay(plan::Plan& plan, const std::vector<ir::Node*>& order, const plan::Signature& sig,
            const std::function<bool(const ir::Node&)>& wanted, CacheStats& stats) {
  // The leaves' addresses first: storing a held view may free the node of the buffer it views
  // (the view was its only holder; the view keeps the storage itself).
  thread_local std::vector<void*> leaf_data;
  leaf_data.clear();
  for (const ir::Node* leaf : sig.leaves) leaf_data.push_back(leaf->storage->data());
  materialize_held_views(order, wanted);
  thread_local std::vector<std::shared_ptr<rt::Storage>> slots;  // its memory kept between replays
  slots.clear();
  for (plan::Step& s : plan.steps) {
    for (int o : s.outputs) {
      const ir::Node* n = order[static_cast<size_t>(o)];
      slots.push_back(rt::Storage::allocate(n->device, static_cast<size_t>(n->numel()) * dtype_size(n->dtype)));
    }
    for (size_t i = 0; i < s.pointer_from.size(); ++i) {
      int64_t from = s.pointer_from[i];
      s.args.pointers[i] = from == plan::kNoPointer ? nullptr
                           : from >= 0            ? leaf_data[static_cast<size_t>(from)]
                                                  : slots[static_cast<size_t>(plan::output_slot(from))]->data();
    }
  }
  if (!plan.graph_tried) try_graph(plan, order);  // with this replay's pointers: none to set below
  bool pointers_set = plan.graph != nullptr;
  for (size_t i = 0; i < plan.steps.size() && pointers_set; ++i)
    pointers_set = plan.graph->set_pointers(i, plan.steps[i].args.pointers);
  if (plan.graph && !pointers_set) plan.graph.reset();  // the driver refused an update: no graph from now on
  if (plan.graph) {
    if (plan.graph->launch()) ++stats.queued_launches;
    ++stats.graph_launches;
  } else {
    for (plan::Step& s : plan.steps) {
      if (s.gpu) {
        cuda::launch(static_cast<const cuda::CompiledKernel&>(*s.entry->kernel), s.kernel, s.args, s.cuda_options,
                     order[static_cast<size_t>(s.outputs[0])]->device.index());
      } else {
        cpu::launch(static_cast<const cpu::CompiledKernel&>(*s.entry->kernel), s.kernel, s.args);
      }
    }
  }
  size_t slot = 0;
  for (plan::Step& s : plan.steps) {
    for (int o : s.outputs) {
      ir::Node* n = order[static_cast<size_t>(o)];
      materialize(*n, slots[slot++], ir::Layout{ir::contiguous_strides(n->shape), 0});
    }
    ++stats.hits;
    ++stats.kernels_launched;
    stats.bytes_moved += static_cast<uint64_t>(s.bytes);
  }
  slots.clear();  // the nodes hold the buffers now
  ++stats.flushes;
  ++stats.plans_replayed;
  stats.nodes_executed += plan.nodes;
}

}  // namespace

std::string cpu_cache_key(const kir::Kernel& kernel) {
  return "cpu|" + std::string(codegen_fingerprint()) + "|" + cpu::target_id() + "|" + kernel.key();
}

void run(const std::vector<ir::Node*>& roots, const std::function<bool(const ir::Node&)>& wanted,
         const Options& opt, CacheStats& stats) {
  cache::global_cache().install_upgrades();  // optimized builds compiled since the last flush
  // Kept from flush to flush (flushes do not nest: the caller holds the flush lock).
  thread_local std::vector<ir::Node*> order;
  ir::flush_order(roots, &order);
  if (order.empty()) return;
  std::chrono::steady_clock::time_point start;  // read only for the log: a clock read costs on some hosts
  if (opt.log_level >= 1) start = std::chrono::steady_clock::now();
  // Flush plans (flush_plan.h); off while logging, so that every flush shows its groups.
  static std::mutex plans_mu;
  // Never destroyed: a plan's CUDA graph must not be freed after the driver shut down at exit.
  static plan::PlanCache& plans = *new plan::PlanCache;
  static plan::Signature signature;  // reused: its buffers keep their capacity
  std::unique_lock<std::mutex> plans_lock(plans_mu, std::defer_lock);
  const plan::Signature* sig = nullptr;
  if (rt::config().flush_plans && opt.log_level == 0) {
    plans_lock.lock();
    plan::describe(order, wanted, opt.fusion, &signature);
    sig = &signature;
    if (plan::Plan* recorded = plans.find(*sig, cache::global_cache().generation())) {
      return replay(*recorded, order, *sig, wanted, stats);
    }
  }
  std::optional<Recorder> rec;
  if (sig && plans.seen_before(*sig)) {
    rec.emplace(*sig);
    rec->plan.generation = cache::global_cache().generation();
  }
  if (fuse::insert_reshape_copies(order) > 0) {
    ir::flush_order(roots, &order);
    rec.reset();  // the graph changed under the signature
  }
  materialize_held_views(order, wanted);
  std::erase_if(order, [](ir::Node* n) { return n->realized(); });
  fuse::Partition p = fuse::partition(order, wanted, opt.fusion);
  if (opt.log_level >= 1) {
    std::fprintf(stderr, "[lazyfuse] flush: %zu nodes -> %zu groups; cuts:", order.size(), p.groups.size());
    for (size_t r = 0; r < p.cuts.size(); ++r)
      if (p.cuts[r]) std::fprintf(stderr, " %s=%lld", fuse::cut_reason_name(static_cast<fuse::CutReason>(r)),
                                  static_cast<long long>(p.cuts[r]));
    std::fprintf(stderr, "\n");
  }
  for (size_t i = 0; i < p.groups.size(); ++i)
    run_group(p.groups[i], p, static_cast<int>(i), opt, stats, rec ? &*rec : nullptr);
  ++stats.flushes;
  stats.nodes_executed += order.size();
  if (rec && rec->ok && !rec->plan.steps.empty()) {
    rec->plan.nodes = order.size();
    plans.store(*sig, std::move(rec->plan));
  }
  if (opt.log_level >= 1) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "[lazyfuse] flush done in %.3f ms\n", ms);
  }
}

}  // namespace lf::exec
