// A matmul group on the CPU: the packed GEMM (gemm.h), and the epilogue kernel run on each block of
// rows on the thread that finished it, while the block is still in cache.
#include <optional>

#include "codegen/backend/kernel.h"
#include "codegen/cpu/backend.h"
#include "codegen/cpu/gemm.h"
#include "codegen/ir/view.h"

namespace lf::cpu {
namespace {

// How an epilogue kernel's rows line up with the matmul's rows (see lower.h, keep_last_dim): its
// columns are the matmul's n (then a block of matmul rows is a block of kernel rows), or it is one
// row of every element (a block is a range of columns), or neither (it runs after the GEMM).
RowsDone epilogue_by_rows(const backend::KernelReplay& k, const std::vector<int64_t>& meta, int64_t n, bool* deferred) {
  const auto& compiled = static_cast<const CompiledKernel&>(*k.entry->kernel);
  int64_t rows = k.args.rows(), cols = k.args.sizes.back();
  KernelFn fn = compiled.fn;
  const int64_t* m = meta.data();
  void* const* ptrs = k.args.pointers.data();
  *deferred = false;
  if (cols == n) return [=](int64_t r0, int64_t r1) { fn(m, ptrs, r0, r1, 0, cols); };
  if (rows == 1) return [=](int64_t r0, int64_t r1) { fn(m, ptrs, 0, 1, r0 * n, r1 * n); };
  *deferred = true;
  return nullptr;
}

// The call for a flush plan: the GEMM and the epilogue (per row block, or after) over new
// addresses: A, B, C, then the epilogue's operands.
void record(backend::MatmulCall& call, const std::shared_ptr<rt::Storage>& c,
            const std::optional<backend::Prepared>& epilogue) {
  backend::RecordedCall& r = *call.record;
  if (epilogue && (!epilogue->entry->kernel || epilogue->low.error_storage)) return;  // not replayable
  r.outputs.emplace_back(call.product(), c);
  r.addresses = {call.problem.a.data, call.problem.b.data, c->data()};
  std::shared_ptr<backend::KernelReplay> kr;
  if (epilogue) {
    r.add_outputs(*epilogue);
    r.add_operands(*epilogue);
    kr = std::make_shared<backend::KernelReplay>(*epilogue);
  }
  std::vector<int64_t> meta;
  if (kr) meta = kir::pack_meta(kr->kernel, kr->args);
  r.replay = [problem = call.problem, kr, meta](void* const* p) mutable {
    problem.a.data = p[0];
    problem.b.data = p[1];
    problem.c = p[2];
    bool deferred = true;
    RowsDone done;
    if (kr) {
      kr->bind(p + 3);
      done = epilogue_by_rows(*kr, meta, problem.n, &deferred);
    }
    gemm(problem, done);
    if (kr && deferred) kr->launch();
  };
}

}  // namespace

void run_matmul(backend::MatmulCall& call) {
  ir::Node* mm = call.product();
  CacheStats& stats = call.run.stats;
  auto c = rt::Storage::allocate(mm->device, call.c_bytes);
  GemmProblem problem = call.problem;
  problem.c = c->data();
  backend::materialize(*mm, c, ir::Layout{ir::contiguous_strides(mm->shape), 0});
  // The epilogue, lowered while the product is a realized input of it.
  std::optional<backend::Prepared> epilogue;
  if (call.has_epilogue()) {
    fuse::Group e = call.epilogue_group();
    if (!e.outputs.empty()) epilogue = backend::prepare(call.run, e, {.keep_last_dim = true});
  }
  bool epilogue_pending = epilogue && epilogue->entry->kernel;

  std::vector<int64_t> meta;
  bool deferred = true;
  RowsDone done;
  std::optional<backend::KernelReplay> rows_kernel;  // what the row blocks launch
  if (epilogue_pending) {
    rows_kernel.emplace(*epilogue);
    meta = kir::pack_meta(epilogue->low.kernel, epilogue->low.args);
    done = epilogue_by_rows(*rows_kernel, meta, problem.n, &deferred);
  }
  gemm(problem, done);
  ++stats.kernels_launched;
  stats.bytes_moved += call.gemm_bytes;
  std::string how = std::string("cpu gemm (") + gemm_kernel_name(mm->dtype) + ")";
  if (epilogue && !epilogue->entry->kernel) {
    backend::run_fallback(*epilogue);
  } else if (epilogue_pending && !deferred) {
    ++stats.kernels_launched;
    stats.bytes_moved += static_cast<uint64_t>(epilogue->low.bytes);
    backend::materialize_outputs(*epilogue);
    how += ", epilogue fused per row block";
  } else if (epilogue_pending) {
    backend::launch(*epilogue, stats);
    backend::materialize_outputs(*epilogue);
    how += ", then the epilogue kernel";
  }
  if (call.record) record(call, c, epilogue);
  call.log(how);
}

}  // namespace lf::cpu
