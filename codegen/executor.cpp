#include "codegen/executor.h"

#include "codegen/fingerprint.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <cstdio>
#include <functional>
#include <mutex>
#include <unordered_set>

#include "codegen/cpu_backend.h"
#include "codegen/cuda_backend.h"
#include "codegen/fuser.h"
#include "codegen/kernel_cache.h"
#include "codegen/lower.h"
#include "codegen/reference.h"
#include "codegen/view.h"
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

void run_group(const fuse::Group& g, const fuse::Partition& p, int index, const Options& opt, CacheStats& stats) {
  if (g.kind == fuse::Group::Kind::Host) {
    run_host(g);
    if (opt.log_level >= 1)
      std::fprintf(stderr, "[lazyfuse]   group %d: %s on the host (reference executor)\n", index,
                   ir::op_name(g.nodes[0]->op));
    return;
  }
  Device device = g.nodes[0]->device;
  lower::Lowered low = lower::lower_group(g, p, index, device);
  bool gpu = device.is_cuda();
  cuda::EmitOptions cuda_options;
  std::string key;
  if (gpu) {
    cuda_options = cuda::options_for(low.kernel, low.args, device.index());
    key = "cuda|" + std::string(codegen_fingerprint()) + "|" + cuda::target_id(device.index()) + (cuda_options.index32 ? "|i32" : "|i64") + "|rc" +
          std::to_string(cuda_options.row_cache) + (cuda_options.vec4 ? "|v4|" : "|v1|") + low.kernel.key();
  } else {
    key = cpu_cache_key(low.kernel);
  }
  std::string name = "lf_" + short_hash(key);
  bool hit = false;
  cache::DiskSpec disk;
  disk.kernel = &low.kernel;
  disk.load = [&](const std::string& kname, const std::string& binary)
      -> absl::StatusOr<std::shared_ptr<CompiledKernel>> {
    if (gpu) return cuda::load(kname, binary, device.index());
    return cpu::load(kname, binary);
  };
  auto entry = cache::global_cache().get_or_compile(
      key,
      [&]() -> absl::StatusOr<std::shared_ptr<CompiledKernel>> {
        if (gpu) return cuda::compile(low.kernel, name, cuda_options, device.index());
        return cpu::compile(low.kernel, name);
      },
      &hit, &disk);
  if (hit) {
    ++stats.hits;
  } else {
    ++stats.misses;
    if (entry->from_disk) {
      ++stats.disk_hits;
    } else if (entry->kernel) {
      ++stats.kernels_compiled;
      stats.compile_ms += entry->kernel->compile_ms;
      if (!rt::config().dump_dir.empty()) dump_source(*entry->kernel, gpu, low.kernel);
    }
  }
  if (opt.log_level >= 1) {
    std::fprintf(stderr, "[lazyfuse]   group %d: %s, %s%d+%dd, %zu in/out, %s %s", index, low.kernel.summary().c_str(),
                 low.kernel.row ? "row " : "", low.kernel.outer_rank, low.kernel.inner_rank,
                 low.kernel.operands.size(), name.c_str(), hit ? "hit" : "miss");
    if (!hit && entry->from_disk) std::fprintf(stderr, " (loaded from the disk cache)");
    else if (!hit && entry->kernel) std::fprintf(stderr, " (compiled in %.1f ms)", entry->kernel->compile_ms);
    std::fprintf(stderr, "\n");
    if (opt.log_level >= 2 && !hit && entry->kernel) std::fprintf(stderr, "%s\n", entry->kernel->source.c_str());
  }
  if (!entry->kernel) {
    if (first_failure(key)) {
      std::string saved = save_failed_source(
          name, gpu ? cuda::emit_cuda(low.kernel, name, cuda_options) : cpu::emit_ir(low.kernel, name), gpu);
      std::fprintf(stderr,
                   "[lazyfuse] warning: kernel %s (%s) failed to compile: %s\n"
                   "[lazyfuse]   its source is in %s; running this group unfused on the reference executor instead\n",
                   name.c_str(), low.kernel.summary().c_str(), std::string(entry->status.message()).c_str(),
                   saved.c_str());
    }
    for (ir::Node* o : low.outputs) materialize_value(*o, ir::reference_eval(o));
    return;
  }
  if (gpu) {
    cuda::launch(static_cast<const cuda::CompiledKernel&>(*entry->kernel), low.kernel, low.args, cuda_options,
                 device.index());
  } else {
    cpu::launch(static_cast<const cpu::CompiledKernel&>(*entry->kernel), low.kernel, low.args);
  }
  ++stats.kernels_launched;
  stats.bytes_moved += static_cast<uint64_t>(low.bytes);
  for (size_t i = 0; i < low.outputs.size(); ++i) {
    ir::Node* o = low.outputs[i];
    materialize(*o, low.out_storage[i], ir::Layout{ir::contiguous_strides(o->shape), 0});
  }
}

}  // namespace

std::string cpu_cache_key(const kir::Kernel& kernel) {
  return "cpu|" + std::string(codegen_fingerprint()) + "|" + cpu::target_id() + "|" + kernel.key();
}

void run(const std::vector<ir::Node*>& roots, const std::function<bool(const ir::Node&)>& wanted,
         const Options& opt, CacheStats& stats) {
  std::vector<ir::Node*> order = ir::topo_order(roots);
  if (order.empty()) return;
  auto start = std::chrono::steady_clock::now();
  if (fuse::insert_reshape_copies(order) > 0) order = ir::topo_order(roots);
  // A held view of materialized data is just new strides over the same storage.
  for (ir::Node* n : order) {
    if (!ir::is_view(n->op) || !wanted(*n)) continue;
    auto [source, chain] = ir::resolve_views(n);
    if (!source->realized()) continue;
    if (auto v = ir::view_of_chain(*source, chain)) {
      auto storage = source->storage;
      materialize(*n, std::move(storage), ir::Layout{v->strides, v->offset});
    }
  }
  std::erase_if(order, [](ir::Node* n) { return n->realized(); });
  fuse::Partition p = fuse::partition(order, wanted, opt.fusion);
  if (opt.log_level >= 1) {
    std::fprintf(stderr, "[lazyfuse] flush: %zu nodes -> %zu groups; cuts:", order.size(), p.groups.size());
    for (size_t r = 0; r < p.cuts.size(); ++r)
      if (p.cuts[r]) std::fprintf(stderr, " %s=%lld", fuse::cut_reason_name(static_cast<fuse::CutReason>(r)),
                                  static_cast<long long>(p.cuts[r]));
    std::fprintf(stderr, "\n");
  }
  for (size_t i = 0; i < p.groups.size(); ++i) run_group(p.groups[i], p, static_cast<int>(i), opt, stats);
  ++stats.flushes;
  stats.nodes_executed += order.size();
  if (opt.log_level >= 1) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "[lazyfuse] flush done in %.3f ms\n", ms);
  }
}

}  // namespace lf::exec
