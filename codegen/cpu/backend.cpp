// The CPU backend's core half (cpu_backend.h): compiling goes through the LLVM plugin, loading and
// launching need no LLVM.
#include "codegen/cpu/backend.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

#include "runtime/status.h"
#include "codegen/backend/linalg_call.h"
#include "codegen/cache/fingerprint.h"
#include "codegen/cpu/loader.h"
#include "codegen/cpu/plugin.h"
#include "codegen/kir/row_plan.h"
#include "codegen/kir/split.h"
#include "runtime/thread_pool.h"

namespace lf::cpu {

lf::StatusOr<std::shared_ptr<CompiledKernel>> compile(const kir::Kernel& kernel, const std::string& name,
                                                      const EmitOptions& options) {
  auto start = std::chrono::steady_clock::now();
  auto api = plugin::get();
  if (!api.ok()) return api.status();
  std::string ir, object;
  if (auto st = (*api)->compile(kernel, options, name, &ir, &object); !st.ok()) return st;
  auto out = load(name, object, kernel);
  if (!out.ok()) return out.status();
  (*out)->source = std::move(ir);
  (*out)->binary = std::move(object);
  (*out)->compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

namespace {

// The kernel's functions in its loaded image.
lf::StatusOr<std::shared_ptr<CompiledKernel>> find_functions(const std::string& name,
                                                               lf::StatusOr<std::shared_ptr<const KernelImage>> image,
                                                               const kir::Kernel& kernel) {
  if (!image.ok()) return image.status();
  auto out = std::make_shared<CompiledKernel>();
  out->name = name;
  auto find = [&](const std::string& symbol) -> lf::StatusOr<void*> {
    void* p = (*image)->symbol(symbol);
    if (!p) return lf::InvalidArgumentError("object file: no function " + symbol);
    return p;
  };
  auto fn = find(name);
  if (!fn.ok()) return fn.status();
  out->fn = reinterpret_cast<KernelFn>(*fn);
  if (kir::split_info(kernel).splittable) {
    auto part = find(name + "_part");
    auto comb = find(name + "_comb");
    auto fin = find(name + "_fin");
    for (auto* st : {&part, &comb, &fin})
      if (!st->ok()) return st->status();
    out->part = reinterpret_cast<PartFn>(*part);
    out->combine = reinterpret_cast<CombineFn>(*comb);
    out->finish = reinterpret_cast<FinishFn>(*fin);
    if (kir::column_blocks(kernel)) {
      auto cpart = find(name + "_cpart");
      if (!cpart.ok()) return cpart.status();
      out->column_part = reinterpret_cast<ColumnPartFn>(*cpart);
    }
  }
  out->image = std::move(*image);
  return out;
}

}  // namespace

lf::StatusOr<std::shared_ptr<CompiledKernel>> load(const std::string& name, const std::string& object,
                                                     const kir::Kernel& kernel) {
  return find_functions(name, load_image(object), kernel);
}

lf::StatusOr<std::shared_ptr<CompiledKernel>> load(const std::string& name, const std::string& object,
                                                     const kir::Kernel& kernel, Loader loader) {
  return find_functions(name, load_image(object, loader), kernel);
}

std::string emit_ir(const kir::Kernel& kernel, const std::string& name, const EmitOptions& options) {
  auto api = plugin::get();
  if (!api.ok()) return "; " + std::string(api.status().message()) + "\n";
  return (*api)->emit_ir(kernel, options, name);
}

lf::StatusOr<Inspection> inspect(const kir::Kernel& kernel, const std::string& name, const EmitOptions& options) {
  auto api = plugin::get();
  if (!api.ok()) return api.status();
  return (*api)->inspect(kernel, options, name);
}

namespace {

// Reduces every row in chunks of its outermost reduced dim, `chunks` per row (a function of the
// sizes only), one parallel pass per reduction level, then combines each row's chunks in order.
void launch_split(const CompiledKernel& k, const kir::Kernel& kernel, const int64_t* m, void* const* p, int64_t rows,
                  int64_t len, int64_t chunks) {
  kir::SplitInfo info = kir::split_info(kernel);
  const int64_t slot_bytes = 16 * int64_t{info.reductions};
  std::vector<std::byte> state(static_cast<size_t>(rows * slot_bytes));
  std::vector<std::byte> parts(static_cast<size_t>(rows * chunks * slot_bytes));
  for (int level = 0; level < info.levels; ++level) {
    rt::parallel_for(rows * chunks, [&](int64_t c) {
      int64_t r = c / chunks, j = c % chunks;
      k.part(m, p, r, len * j / chunks, len * (j + 1) / chunks, level, state.data() + r * slot_bytes,
             parts.data() + c * slot_bytes);
    });
    for (int64_t r = 0; r < rows; ++r)
      k.combine(level, parts.data() + r * chunks * slot_bytes, chunks, state.data() + r * slot_bytes);
  }
  for (int64_t r = 0; r < rows; ++r) k.finish(m, p, r, state.data() + r * slot_bytes);
}

// Column-block kernels in `chunks` chunks of the outermost reduced dim, each over every row, in
// parallel; then each row's chunks combined in order, and its outputs written.
void launch_column_split(const CompiledKernel& k, const kir::Kernel& kernel, const int64_t* m, void* const* p,
                         int64_t rows, int64_t len, int64_t chunks) {
  kir::SplitInfo info = kir::split_info(kernel);
  const int64_t slot_bytes = 16 * int64_t{info.reductions};
  std::vector<std::byte> state(static_cast<size_t>(rows * slot_bytes));
  std::vector<std::byte> parts(static_cast<size_t>(rows * chunks * slot_bytes));
  rt::parallel_for(chunks, [&](int64_t j) {
    k.column_part(m, p, 0, rows, len * j / chunks, len * (j + 1) / chunks, parts.data() + j * slot_bytes,
                  chunks * slot_bytes);
  });
  const int64_t tasks = std::clamp<int64_t>(rows / 256, 1, 16);
  rt::parallel_for(tasks, [&](int64_t t) {
    for (int64_t r = rows * t / tasks; r < rows * (t + 1) / tasks; ++r) {
      k.combine(0, parts.data() + r * chunks * slot_bytes, chunks, state.data() + r * slot_bytes);
      k.finish(m, p, r, state.data() + r * slot_bytes);
    }
  });
}

}  // namespace

namespace {

// The element outputs' addresses modulo 64 agree, and they are all of one storage size; that size,
// or 0 when they are not.
size_t congruent_outputs(const kir::Kernel& kernel, const kir::LaunchArgs& args) {
  size_t size = 0;
  uintptr_t residue = 0;
  for (const kir::Output& o : kernel.outputs) {
    if (kernel.instrs[static_cast<size_t>(o.instr)].row) continue;
    size_t s = dtype_size(kernel.operands[static_cast<size_t>(o.slot)].dtype);
    uintptr_t at = reinterpret_cast<uintptr_t>(args.pointers[static_cast<size_t>(o.slot)]) +
                   static_cast<uintptr_t>(args.offsets[static_cast<size_t>(o.slot)]) * s;
    if (size == 0) {
      size = s;
      residue = at % 64;
    } else if (s != size || at % 64 != residue) {
      return 0;
    }
  }
  return size;
}

// Whether an element value is a transcendental function (or a normal random number, which takes
// a log and a sine): a kernel computing one per element is bound by arithmetic on 2 cores, not by
// memory, and ran 3-6% slower with streaming stores (bench/experiments/streaming_ab.cpp: the chain
// and gelu over 2^24 floats), where memory-bound kernels ran 1.4-2.2x faster.
bool transcendental_elements(const kir::Kernel& kernel) {
  using ir::Op;
  for (const kir::Instr& in : kernel.instrs) {
    if (in.row || (in.kind != kir::InstrKind::Op && in.kind != kir::InstrKind::Gen)) continue;
    switch (in.op) {
      case Op::Randn: case Op::Exp: case Op::Exp2: case Op::Log: case Op::Log2: case Op::Log1p: case Op::Expm1:
      case Op::Sin: case Op::Cos: case Op::Tan: case Op::Asin: case Op::Acos: case Op::Atan: case Op::Sinh:
      case Op::Cosh: case Op::Tanh: case Op::Sigmoid: case Op::Gelu: case Op::GeluTanh: case Op::Silu:
      case Op::Erf: case Op::Pow: case Op::Atan2: case Op::Logit:
        return true;
      default: break;
    }
  }
  return false;
}

}  // namespace

bool wants_streaming_stores(const kir::Kernel& kernel, const kir::LaunchArgs& args) {
#if defined(__x86_64__)
  if (kernel.inner_rank != 1 || kernel.has_scan()) return false;  // a scan's pass is one loop, in order
  size_t size = congruent_outputs(kernel, args);
  if (size == 0 || (kernel.row && !kir::row_plan(kernel).keep.empty()) || transcendental_elements(kernel)) return false;
  int64_t elements = args.rows() * args.inner_numel(), outputs = 0;
  for (const kir::Output& o : kernel.outputs) outputs += kernel.instrs[static_cast<size_t>(o.instr)].row ? 0 : 1;
  return elements * outputs * static_cast<int64_t>(size) >= kStreamMinBytes;
#else
  (void)kernel;
  (void)args;
  return false;
#endif
}

void launch(const CompiledKernel& compiled, const kir::Kernel& kernel, const kir::LaunchArgs& args,
            const EmitOptions& options) {
  // A streaming kernel's middle loop assumes every output as aligned as output 0 (emit_module).
  if (options.stream_stores && congruent_outputs(kernel, args) == 0)
    throw Error("internal error: kernel " + compiled.name + " (" + kernel.summary() +
                ") writes with streaming stores, but its outputs' addresses do not agree modulo 64");
  LaunchPlan plan = plan_launch(kernel, args, compiled.part != nullptr, rt::num_cpu_threads(),
                                compiled.column_part != nullptr);
  if (plan.mode == LaunchPlan::Mode::None) return;
  std::vector<int64_t> meta = kir::pack_meta(kernel, args);
  int64_t rows = args.rows();
  int64_t cols = args.sizes[static_cast<size_t>(args.outer_rank)];  // the first inner dim
  const int64_t* m = meta.data();
  void* const* p = args.pointers.data();
  if (plan.mode == LaunchPlan::Mode::Split) return launch_split(compiled, kernel, m, p, rows, cols, plan.per_row);
  if (plan.mode == LaunchPlan::Mode::ColumnSplit)
    return launch_column_split(compiled, kernel, m, p, rows, cols, plan.per_row);
  KernelFn fn = compiled.fn;
  if (plan.mode == LaunchPlan::Mode::Rows) {
    int64_t chunks = plan.chunks;
    const int64_t align = plan.align, units = (rows + align - 1) / align;
    rt::parallel_for(chunks, [&](int64_t c) {
      int64_t r0 = std::min(rows, align * (units * c / chunks)), r1 = std::min(rows, align * (units * (c + 1) / chunks));
      fn(m, p, r0, r1, 0, cols);
    });
    return;
  }
  int64_t per_row = plan.per_row;
  rt::parallel_for(rows * per_row, [&](int64_t c) {
    int64_t r = c / per_row, k = c % per_row;
    int64_t c0 = cols * k / per_row, c1 = cols * (k + 1) / per_row;
    fn(m, p, r, r + 1, c0, c1);
  });
}

LaunchPlan plan_launch(const kir::Kernel& kernel, const kir::LaunchArgs& args, bool has_split, int64_t threads,
                       bool has_column_part) {
  LaunchPlan plan;
  int64_t rows = args.rows();
  int64_t cols = args.sizes[static_cast<size_t>(args.outer_rank)];  // the first inner dim
  int64_t inner = args.inner_numel();
  if (rows == 0 || (!kernel.row && inner == 0)) return plan;
  if (kernel.row && kir::column_blocks(kernel)) {
    const int64_t split = std::min({rows * inner / kColumnGrain, cols / kColumnMinSpan, kColumnMaxChunks});
    if (has_column_part && split >= 2) {
      plan.mode = LaunchPlan::Mode::ColumnSplit;
      plan.per_row = plan.chunks = split;
      return plan;
    }
    plan.mode = LaunchPlan::Mode::Rows;
    plan.align = kColumnAlign;
    plan.chunks = std::clamp<int64_t>(rows * std::max<int64_t>(inner, 1) / (int64_t{1} << 15), 1,
                                      std::min(std::max<int64_t>(threads, 1), (rows + kColumnAlign - 1) / kColumnAlign));
    return plan;
  }
  if (kernel.row && has_split && inner >= kSplitMinElements && cols > 1) {
    plan.mode = LaunchPlan::Mode::Split;
    plan.per_row = std::min(cols, (inner + kSplitGrain - 1) / kSplitGrain);
    plan.chunks = rows * plan.per_row;
    return plan;
  }
  // Chunks of at least kGrain elements, a few per thread for balance.
  constexpr int64_t kGrain = 1 << 15;
  int64_t work = rows * std::max<int64_t>(inner, 1);
  int64_t chunks = std::clamp<int64_t>(work / kGrain, 1, std::max<int64_t>(threads, 1) * 4);
  if (kernel.row || rows >= chunks) {
    plan.mode = LaunchPlan::Mode::Rows;
    plan.chunks = std::min(chunks, rows);
    return plan;
  }
  // Few long rows (a pointwise kernel over contiguous data is one row): split the columns.
  plan.mode = LaunchPlan::Mode::Columns;
  plan.per_row = (chunks + rows - 1) / rows;
  plan.chunks = rows * plan.per_row;
  return plan;
}

// ---- the backend::Backend of the CPU

namespace {

struct Variant final : backend::Variant {
  EmitOptions options;
  std::vector<std::pair<std::string, std::string>> describe() const override {
    return {{"streaming stores", options.stream_stores ? "on" : "off"}};
  }
};

const EmitOptions& options_of(const backend::Variant& v) { return static_cast<const Variant&>(v).options; }

class CpuBackend final : public backend::Backend {
 public:
  const char* name() const override { return "cpu"; }
  // Rows strided in memory (a reduction over a leading dim) run as column blocks, which take one
  // reduction level and per-row values (kir::column_blocks); any other row kernel over them strides
  // a row at a time (logsumexp(x, {0}) of 4096 x 1024: 119 ms fused against 11 unfused).
  fuse::Costs fuse_costs(Device) const override {
    fuse::Costs c;
    c.strided_rows_one_reduction = true;
    return c;
  }
  const char* source_suffix() const override { return ".ll"; }
  const char* comment_prefix() const override { return ";"; }
  bool needs_compiler() const override { return true; }

  backend::Specialized specialize(const kir::Kernel& kernel, const kir::LaunchArgs& args, Device,
                                  int) const override {
    auto v = std::make_shared<Variant>();
    v->options.stream_stores = wants_streaming_stores(kernel, args);
    return {cache_key(kernel, v->options), std::move(v)};
  }
  lf::StatusOr<std::shared_ptr<lf::CompiledKernel>> build(const kir::Kernel& kernel, const std::string& name,
                                                          const backend::Variant& variant, bool) const override {
    auto out = compile(kernel, name, options_of(variant));
    if (!out.ok()) return out.status();
    return std::shared_ptr<lf::CompiledKernel>(std::move(*out));
  }
  lf::StatusOr<std::shared_ptr<lf::CompiledKernel>> load(const std::string& name, const std::string& binary,
                                                         const kir::Kernel& kernel, const backend::Variant&,
                                                         Device) const override {
    auto out = cpu::load(name, binary, kernel);
    if (!out.ok()) return out.status();
    return std::shared_ptr<lf::CompiledKernel>(std::move(*out));
  }
  std::string source(const kir::Kernel& kernel, const std::string& name,
                     const backend::Variant& variant) const override {
    return emit_ir(kernel, name, options_of(variant));
  }
  void launch(const backend::Launch& l, Device) const override {
    cpu::launch(static_cast<const CompiledKernel&>(*l.compiled), *l.kernel, *l.args, options_of(*l.variant));
  }
  void matmul(backend::MatmulCall& call) const override { run_matmul(call); }
  void conv(backend::ConvCall& call) const override { run_conv(call); }
  // 16-bit convolutions: the epilogue after the GEMM scales the convolution's rounded output (as
  // PyTorch eager's batch norm does); a 16-bit filter times the scale would add a rounding to each
  // weight, which the sum's cancellations magnify.
  bool conv_scale_in_epilogue(const ir::Node& conv) const override {
    return is_floating(conv.dtype) && dtype_size(conv.dtype) == 2;
  }
  void pool(backend::PoolCall& call) const override { run_pool(call); }
  void sort(backend::SortCall& call) const override { run_sort(call); }
  void attention(backend::AttentionCall& call) const override { run_attention(call); }
  void scan(backend::ScanCall& call) const override { run_scan(call); }
  void scatter(backend::ScatterCall& call) const override { run_scatter(call); }
  void nearest(backend::NearestCall& call) const override { run_nearest(call); }
  void linalg(backend::LinalgCall& call) const override { backend::run_linalg_on_host(call, ""); }
};

}  // namespace

std::string cache_key(const kir::Kernel& kernel, const EmitOptions& options) {
  return "cpu|" + std::string(codegen_fingerprint()) + "|" + target_id() + (options.stream_stores ? "|nt|" : "|") +
         kernel.key();
}

const backend::Backend& backend() {
  static const CpuBackend b;
  return b;
}

}  // namespace lf::cpu
