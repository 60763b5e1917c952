// Linear-algebra groups (ir::Op::Linalg): the inputs brought to the host as contiguous row-major
// copies (the reference executor evaluates what is not yet a buffer; a device buffer is copied
// over), a zeroed host output, the backend's linalg, and the packed output handed to the node on
// its device. Not replayed by flush plans: the copies are made for each call.
#include <cstring>

#include "codegen/backend/linalg_call.h"
#include "codegen/exec/groups.h"
#include "runtime/storage.h"

namespace lf::exec {

void run_linalg_group(const backend::GroupRun& run) {
  ir::Node* y = run.group.nodes[0];
  const ir::LinalgParams params = ir::LinalgParams::of(*y);
  backend::LinalgCall call{run};
  for (size_t i = 0; i < y->inputs.size(); ++i) {
    ir::Node* in = y->inputs[i].get();
    const bool pivots = params.op == ir::LinalgOp::kLuSolve && i == 1;
    call.inputs.push_back(ir::to_contiguous(ir::reference_eval(in), pivots ? DType::Int32 : y->dtype));
  }
  const size_t bytes = static_cast<size_t>(y->numel()) * dtype_size(y->dtype);
  call.out = rt::Storage::allocate(Device::cpu(), bytes);
  if (bytes) std::memset(call.out->data(), 0, bytes);
  call.problem = ir::LinalgProblem::of(*y, call.inputs);
  call.problem.out = call.out->data();
  backend::backend_for(y->device).linalg(call);
  backend::materialize_value(*y, ir::Value{call.out, y->dtype, y->shape, {ir::contiguous_strides(y->shape), 0}});
}

}  // namespace lf::exec
