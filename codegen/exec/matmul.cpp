// Matmul groups: operands as storage plus strides (views of realized data are read as they are),
// then the group's backend runs the product and its epilogue (Backend::matmul).
#include "codegen/exec/groups.h"

#include "codegen/ir/view.h"
#include "codegen/reference/reference.h"

namespace lf::exec {

Operand operand(ir::Node* in, Device device) {
  auto [source, chain] = ir::resolve_views(in);
  if (source->realized()) {
    if (auto v = ir::view_of_chain(*source, chain))
      return {source->storage, {source->storage->data(), v->offset, v->strides}};
  }
  ir::Value v = ir::to_contiguous(ir::reference_eval(in), in->dtype);
  auto storage = rt::placed_on(device, v.storage, static_cast<size_t>(in->numel()) * dtype_size(in->dtype));
  return {storage, {storage->data(), 0, ir::contiguous_strides(in->shape)}, /*computed=*/true};
}

// x @ w with x [B, T, K] and a weight shared by the batch ([K, N], broadcast): the batch dims over
// which B is broadcast and A's rows run on at one stride are rows of one product ([B*T, K] @ [K,
// N]). C, contiguous, is laid out the same; the backends see one 2-D product instead of a batch
// (cuBLASLt takes a bias epilogue only unbatched, and a batch of small products runs slower).
void fold_batch_into_rows(kir::GemmProblem* p) {
  while (!p->batch.empty()) {
    const size_t d = p->batch.size() - 1, row = d + 1;
    std::vector<int64_t>& as = p->a.strides;
    std::vector<int64_t>& bs = p->b.strides;
    const int64_t size = p->batch[d];
    if (size != 1) {
      if (bs[d] != 0) return;  // B differs across the dim: a true batch
      if (p->m == 1) as[row] = as[d];
      else if (as[d] != p->m * as[row]) return;  // A's rows do not run on across the dim
    }
    p->m *= size;
    p->batch.pop_back();
    as.erase(as.begin() + static_cast<std::ptrdiff_t>(d));
    bs.erase(bs.begin() + static_cast<std::ptrdiff_t>(d));
  }
}

void run_matmul_group(const backend::GroupRun& run, backend::RecordedCall* record) {
  ir::Node* mm = run.group.nodes[0];
  Device device = mm->device;
  size_t rank = mm->shape.size();
  Operand a = operand(mm->inputs[0].get(), device);
  Operand b = operand(mm->inputs[1].get(), device);
  backend::MatmulCall call{run};
  kir::GemmProblem& problem = call.problem;
  problem.dtype = mm->dtype;
  problem.batch.assign(mm->shape.begin(), mm->shape.end() - 2);
  problem.m = mm->shape[rank - 2];
  problem.n = mm->shape[rank - 1];
  problem.k = mm->inputs[0]->shape[rank - 1];
  problem.a = a.view;
  problem.b = b.view;
  fold_batch_into_rows(&problem);
  call.a = a.storage;
  call.b = b.storage;
  size_t esize = dtype_size(mm->dtype);
  call.c_bytes = static_cast<size_t>(mm->numel()) * esize;
  call.gemm_bytes = call.c_bytes + (mm->inputs[0]->numel() + mm->inputs[1]->numel()) * esize;
  if (!a.computed && !b.computed) call.record = record;  // else a replay would read stale operands
  backend::backend_for(device).matmul(call);
}

}  // namespace lf::exec
