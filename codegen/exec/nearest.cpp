// Nearest groups (ir::Op::Nearest, k-means' assignment made by fuse/nearest.h): the points and the
// centers resolved to storage and strides (a view of realized data as it is), then the group's
// backend computes the indices (Backend::nearest).
#include "codegen/exec/groups.h"

namespace lf::exec {

void run_nearest_group(const backend::GroupRun& run, backend::RecordedCall* record) {
  ir::Node* y = run.group.nodes[0];
  ir::Node* xn = y->inputs[0].get();
  ir::Node* cn = y->inputs[1].get();
  Operand x = operand(xn, y->device);
  Operand c = operand(cn, y->device);
  backend::NearestCall call{run};
  call.dtype = xn->dtype;
  call.n = xn->shape[0];
  call.d = xn->shape[1];
  call.k = cn->shape[0];
  call.x = x.view;
  call.c = c.view;
  call.x_storage = x.storage;
  call.c_storage = c.storage;
  if (!x.computed && !c.computed) call.record = record;  // else a replay would read stale operands
  backend::backend_for(y->device).nearest(call);
}

}  // namespace lf::exec
