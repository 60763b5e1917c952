#include "codegen/backend/kernel.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <unordered_set>

#include "codegen/backend/explain.h"
#include "codegen/cache/disk_entry.h"
#include "codegen/ir/view.h"
#include "codegen/reference/reference.h"
#include "runtime/config.h"
#include "runtime/profile.h"

namespace lf::backend {
namespace {

// A failing kernel is reported once per key, not at every flush.
bool first_failure(const std::string& key) {
  static std::mutex mu;
  static std::unordered_set<std::string> seen;
  std::lock_guard<std::mutex> lock(mu);
  return seen.insert(key).second;
}

// Writes the source of a kernel that failed to compile where the user can read it; returns the
// path (or why it could not be written).
std::string save_failed_source(const Prepared& k) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  std::filesystem::path path = dir / ("lazyfuse-failed-" + k.name + k.backend->source_suffix());
  std::ofstream out(path);
  out << k.backend->source(k.low.kernel, k.name, *k.spec.variant);
  out.close();
  return out ? path.string() : "(could not write " + path.string() + ")";
}

// LAZYFUSE_DUMP_DIR: each newly compiled kernel's source, named after the kernel, with its key's
// summary and its compile log as a header comment. A directory that cannot be written is reported
// once.
void dump_source(const Prepared& k) {
  const CompiledKernel& compiled = *k.entry->kernel;
  std::error_code ec;
  std::filesystem::path dir = rt::config().dump_dir;
  std::filesystem::create_directories(dir, ec);
  std::filesystem::path path = dir / (compiled.name + k.backend->source_suffix());
  std::ofstream out(path);
  const char* comment = k.backend->comment_prefix();
  out << comment << " " << k.low.kernel.summary() << "\n";
  out << comment << " why: " << (compiled.why.empty() ? "the first kernel of these ops" : "new: " + compiled.why) << "\n";
  if (!compiled.log.empty()) out << comment << " compile log: " << compiled.log << "\n";
  out << compiled.source;
  out.close();
  static bool warned = false;
  if (!out && !warned) {
    warned = true;
    std::fprintf(stderr, "[lazyfuse] warning: LAZYFUSE_DUMP_DIR: cannot write %s\n", path.c_str());
  }
}

void count_and_log(const GroupRun& run, const Prepared& k, bool hit) {
  CacheStats& stats = run.stats;
  const cache::Entry& entry = *k.entry;
  const kir::Kernel& kernel = k.low.kernel;
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
      if (!rt::config().dump_dir.empty()) dump_source(k);
    }
  }
  if (run.options.log_level < 1 && (hit || !run.options.log_misses)) return;
  std::fprintf(stderr, "[lazyfuse]   group %d: %s%s, %s%d+%dd, %zu in/out, %s %s", run.index,
               run.group.kind == fuse::Group::Kind::Matmul ? "matmul epilogue "
               : run.group.kind == fuse::Group::Kind::Conv ? "conv epilogue " : "", kernel.summary().c_str(),
               kernel.row ? "row " : "", kernel.outer_rank, kernel.inner_rank, kernel.operands.size(), k.name.c_str(),
               hit ? "hit" : "miss");
  if (!hit && entry.from_disk) std::fprintf(stderr, " (loaded from the disk cache)");
  else if (!hit && entry.kernel && entry.kernel->compiler_ms > 0)
    std::fprintf(stderr, " (compiled in %.1f ms, %.1f in the compiler%s)", entry.kernel->compile_ms,
                 entry.kernel->compiler_ms, entry.kernel->quick ? "; a quick build, the optimized one follows" : "");
  else if (!hit && entry.kernel) std::fprintf(stderr, " (compiled in %.1f ms)", entry.kernel->compile_ms);
  std::fprintf(stderr, "\n");
  if (!hit && entry.kernel)
    std::fprintf(stderr, "[lazyfuse]     %s %s: %s\n", entry.from_disk ? "compiled (by an earlier run)" : "compiled", k.name.c_str(),
                 entry.kernel->why.empty() ? "the first kernel of these ops" : ("new: " + entry.kernel->why).c_str());
  if (run.options.log_level >= 2 && !hit && entry.kernel) std::fprintf(stderr, "%s\n", entry.kernel->source.c_str());
}

}  // namespace

void launch_observed(const Backend& backend, const Launch& l, Device device, const std::string& name, uint64_t bytes) {
  std::unique_ptr<rt::obs::DeviceTimer> timer;
  if (rt::obs::profiling()) timer = backend.start_timer(device);
  auto start = rt::obs::now();
  backend.launch(l, device);
  auto end = rt::obs::now();
  rt::obs::launch(name, [&] { return l.kernel->summary(); }, bytes, start, end, std::move(timer));
}

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string kernel_name(const std::string& key) { return "lf_" + cache::disk::key_hash(key); }

Prepared prepare(const GroupRun& run, const fuse::Group& group, const PrepareOptions& options) {
  Prepared k;
  k.device = group.nodes[0]->device;
  k.backend = &backend_for(k.device);
  k.low = lower::lower_group(group, run.partition, run.index, k.device, options.keep_last_dim, options.placement);
  const kir::Kernel& kernel = k.low.kernel;
  int product_operand = -1;
  if (options.product) {
    const auto& ptrs = k.low.args.pointers;
    product_operand = static_cast<int>(std::find(ptrs.begin(), ptrs.end(), options.product) - ptrs.begin());
  }
  k.spec = k.backend->specialize(kernel, k.low.args, k.device, product_operand);
  // The persistent cache's file name for this key is <hash>.lfk: one identifier in logs, dumps,
  // profiles, traces and `lazyfuse-cache show`.
  k.name = kernel_name(k.spec.key);

  const Backend& backend = *k.backend;
  cache::DiskSpec disk;
  disk.kernel = &kernel;
  disk.load = [&](const std::string& name, const std::string& binary) {
    return backend.load(name, binary, kernel, *k.spec.variant, k.device);
  };
  // Tiered compiling: a quick build first, the optimized one on the cache's background thread.
  // The closure is small enough for std::function's inline storage: every lookup builds it.
  const bool tiered = backend.tiered();
  cache::KernelCache::MakeUpgrade upgrade;
  if (tiered) {
    upgrade = [&k]() -> cache::KernelCache::Upgrade {
      return {[&backend = *k.backend, kernel = k.low.kernel, name = k.name, variant = k.spec.variant] {
                return backend.build(kernel, name, *variant, /*quick=*/false);
              },
              [&backend = *k.backend, device = k.device](CompiledKernel& built) {
                return backend.install(built, device);
              }};
    };
  }
  bool hit = false;
  const bool observed = rt::obs::on();
  rt::obs::Clock::time_point start;
  if (observed) start = rt::obs::now();
  k.entry = cache::global_cache().get_or_compile(
      k.spec.key,
      [&]() -> lf::StatusOr<std::shared_ptr<CompiledKernel>> {
        auto built = backend.build(kernel, k.name, *k.spec.variant, tiered);
        if (!built.ok()) return built.status();
        if (lf::Status s = backend.install(**built, k.device); !s.ok()) return s;
        // Before it is stored on disk (get_or_compile stores it after this returns).
        (*built)->why = explain_new(key_shape(kernel, *k.spec.variant, backend.name(), k.spec.key));
        return built;
      },
      &hit, &disk, upgrade);
  if (!hit && k.entry->kernel) remember(key_shape(kernel, *k.spec.variant, backend.name(), k.spec.key));
  if (observed && !hit) {
    const std::string& why = k.entry->kernel ? k.entry->kernel->why : std::string();
    rt::obs::span(k.entry->from_disk ? "load" : "compile", k.name, start, rt::obs::now(),
                  "\"ops\": " + json_quote(kernel.summary()) + ", \"why\": " + json_quote(why));
  }
  count_and_log(run, k, hit);
  const cache::Entry& entry = *k.entry;
  // No compiler at all (the CPU's LLVM plugin missing or broken) is an installation problem, not a
  // kernel's: falling back would run every group unfused, silently slow.
  if (!entry.kernel && entry.status.code() == lf::StatusCode::kUnavailable && backend.needs_compiler())
    throw Error(std::string(entry.status.message()));
  if (!entry.kernel && first_failure(k.spec.key)) {
    std::string saved = save_failed_source(k);
    std::fprintf(stderr,
                 "[lazyfuse] warning: kernel %s (%s) failed to compile: %s\n"
                 "[lazyfuse]   its source is in %s; running this group unfused on the reference executor instead\n",
                 k.name.c_str(), kernel.summary().c_str(), std::string(entry.status.message()).c_str(), saved.c_str());
  }
  return k;
}

void launch(const Prepared& k, CacheStats& stats) {
  if (rt::obs::on()) [[unlikely]] {
    launch_observed(*k.backend, k.as_launch(), k.device, k.name, static_cast<uint64_t>(k.low.bytes));
  } else {
    k.backend->launch(k.as_launch(), k.device);
  }
  ++stats.kernels_launched;
  stats.bytes_moved += static_cast<uint64_t>(k.low.bytes);
}

void materialize_outputs(const Prepared& k) {
  for (size_t i = 0; i < k.low.outputs.size(); ++i) {
    ir::Node* o = k.low.outputs[i];
    materialize(*o, k.low.out_storage[i], ir::Layout{k.low.out_strides[i], 0});
  }
}

std::shared_ptr<rt::Storage> copy_contiguous(const GroupRun& run, const ir::NodePtr& in) {
  ir::NodePtr copy = ir::make_node(ir::Op::Copy, in->dtype, in->device, Shape(in->shape), {in});
  fuse::Group g;
  g.full = in->shape;
  g.nodes = {copy.get()};
  g.outputs = {copy.get()};
  fuse::Partition p;
  p.group_of[copy.get()] = run.index;
  GroupRun copy_run{g, p, run.index, run.options, run.stats};
  Prepared k = prepare(copy_run, g);
  if (!k.entry->kernel) return nullptr;
  launch(k, run.stats);
  return k.low.out_storage[0];  // a copy is contiguous (fuse/lower.h)
}

void run_fallback(const Prepared& k) {
  for (ir::Node* o : k.low.outputs) materialize_value(*o, ir::reference_eval(o));
}

void materialize(ir::Node& n, std::shared_ptr<rt::Storage> storage, ir::Layout layout) {
  n.storage = std::move(storage);
  n.layout = std::move(layout);
  // A node no handle holds is an intermediate the executor stored (an unfused run's, a rewrite's
  // copy): it keeps its history too, or a history-keeping node that reads it would be cut from the
  // graph behind it. Without such a reader it dies with the flush anyway.
  if ((n.keep_history || n.user_refs.load(std::memory_order_relaxed) == 0) && !n.history && !n.inputs.empty())
    n.history.reset(new ir::Node::History{n.op, std::move(n.inputs), n.attrs});
  n.op = ir::Op::Buffer;
  n.inputs.clear();
}

void materialize_value(ir::Node& n, const ir::Value& v) {
  if (rt::shares_host_memory(n.device)) return materialize(n, v.storage, v.layout);  // kept as it is laid out
  ir::Value dense = ir::to_contiguous(v, v.dtype);
  size_t bytes = static_cast<size_t>(n.numel()) * dtype_size(n.dtype);
  materialize(n, rt::placed_on(n.device, dense.storage, bytes), ir::Layout{ir::contiguous_strides(n.shape), 0});
}

fuse::Group epilogue_of(const fuse::Group& group) {
  fuse::Group e = group;
  e.kind = fuse::Group::Kind::Pointwise;
  e.nodes.erase(e.nodes.begin());
  std::erase(e.outputs, group.nodes[0]);
  return e;
}

fuse::Group MatmulCall::epilogue_group() const { return epilogue_of(run.group); }

void ConvCall::log(const std::string& how) const {
  if (run.options.log_level < 1) return;
  // From the call: by now the node is materialized and has dropped its inputs.
  Shape x{batch, channels, height, width}, w{out_channels, channels / params.groups, kernel_h, kernel_w};
  std::fprintf(stderr, "[lazyfuse]   group %d: conv2d %s * %s %s: %s\n", run.index, shape_str(x).c_str(),
               shape_str(w).c_str(), dtype_name(dtype), how.c_str());
}

void NearestCall::log(const std::string& how) const {
  if (run.options.log_level < 1) return;
  std::fprintf(stderr, "[lazyfuse]   group %d: nearest of %lld rows among %lld centers of %lld %s: %s\n", run.index,
               static_cast<long long>(n), static_cast<long long>(k), static_cast<long long>(d), dtype_name(dtype),
               how.c_str());
}

void NearestCall::finish(const std::shared_ptr<rt::Storage>& out, std::function<void(void* const*)> replay,
                         const std::string& how) {
  ir::Node* y = node();
  ++run.stats.kernels_launched;
  run.stats.bytes_moved += static_cast<uint64_t>((n + k) * d * dtype_size(dtype) + n * 8);
  materialize(*y, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  if (record) {
    record->outputs.emplace_back(y, out);
    record->addresses = {x.data, c.data, out->data()};
    record->replay = std::move(replay);
  }
  log(how);
}

void run_nearest_on_reference(NearestCall& call, const std::string& why) {
  ir::Node* y = call.node();
  materialize_value(*y, ir::reference_eval(y));
  ++call.run.stats.kernels_launched;
  call.log("the reference executor on the host (" + why + ")");
}

void PoolCall::log(const std::string& how) const {
  if (run.options.log_level < 1) return;
  ir::Node* y = node();
  static const char* kNames[] = {"max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"};
  std::fprintf(stderr, "[lazyfuse]   group %d: %s %s -> %s %s: %s\n", run.index, kNames[ir::PoolParams::of(*y).kind],
               shape_str(in_shape).c_str(), shape_str(y->shape).c_str(), dtype_name(y->dtype), how.c_str());
}

void run_pool_on_reference(PoolCall& call, const std::string& why) {
  ir::Node* y = call.node();
  materialize_value(*y, ir::reference_eval(y));
  call.log("the reference executor's pooling (" + why + ")");
}

void run_conv_on_reference(ConvCall& call, const std::string& why) {
  ir::Node* y = call.product();
  materialize_value(*y, ir::reference_eval(y));
  ++call.run.stats.kernels_launched;
  std::string how = "reference convolution on the host (" + why + ")";
  if (call.has_epilogue()) {
    fuse::Group e = call.epilogue_group();
    if (!e.outputs.empty()) {
      Prepared k = prepare(call.run, e);
      if (!k.entry->kernel) {
        run_fallback(k);
      } else {
        launch(k, call.run.stats);
        materialize_outputs(k);
        how += ", then the epilogue kernel";
      }
    }
  }
  call.log(how);
}

void MatmulCall::log(const std::string& how) const {
  if (run.options.log_level < 1) return;
  std::fprintf(stderr, "[lazyfuse]   group %d: matmul %s%lldx%lldx%lld %s: %s\n", run.index,
               problem.batch.empty() ? "" : (shape_str(problem.batch) + " x ").c_str(),
               static_cast<long long>(problem.m), static_cast<long long>(problem.n),
               static_cast<long long>(problem.k), dtype_name(product()->dtype), how.c_str());
}

}  // namespace lf::backend

namespace lf::backend {

void RecordedCall::add_outputs(const Prepared& k) {
  for (size_t i = 0; i < k.low.outputs.size(); ++i) {
    outputs.emplace_back(k.low.outputs[i], k.low.out_storage[i]);
    set_strides(outputs.size() - 1, k.low.out_strides[i]);
  }
}

void RecordedCall::add_operands(const Prepared& k) {
  for (size_t o = 0; o < k.low.args.pointers.size(); ++o)
    addresses.push_back(k.low.kernel.operands[o].kind == kir::Operand::Kind::Index ? nullptr : k.low.args.pointers[o]);
}

KernelReplay::KernelReplay(const Prepared& k)
    : entry(k.entry),
      kernel(k.low.kernel),
      args(k.low.args),
      variant(k.spec.variant),
      device(k.device),
      backend(k.backend),
      bytes(static_cast<uint64_t>(k.low.bytes)) {}

void KernelReplay::bind(void* const* pointers) {
  for (size_t o = 0; o < args.pointers.size(); ++o) args.pointers[o] = pointers[o];
}

// Profiled or traced, as a launch outside replays: a row of its own inside its library call's.
void KernelReplay::launch() const {
  const Launch l{entry->kernel.get(), &kernel, &args, variant.get()};
  if (rt::obs::on()) [[unlikely]]
    launch_observed(*backend, l, device, entry->kernel->name, bytes);
  else
    backend->launch(l, device);
}

}  // namespace lf::backend
