// argsort and topk groups: the keys resolved to storage and viewed as [outer, n, inner] (a view
// whose dims around the axis do not collapse to one stride each is copied contiguous first), then
// the group's backend sorts (Backend::sort).
#include "codegen/backend/sort_call.h"
#include "codegen/exec/groups.h"
#include "codegen/ir/view.h"

namespace lf::exec {
namespace {

// The one stride of dims [begin, end) walked as a single dim, if they collapse to one.
bool collapse(const Shape& shape, const Shape& strides, size_t begin, size_t end, int64_t* stride) {
  int64_t next = -1;  // the stride the next non-trivial dim must have (row-major order, inner last)
  *stride = 0;
  for (size_t d = end; d-- > begin;) {
    if (shape[d] == 1) continue;
    if (next >= 0 && strides[d] != next) return false;
    if (next < 0) *stride = strides[d];
    next = strides[d] * shape[d];
  }
  return true;
}

}  // namespace

void run_sort_group(const backend::GroupRun& run, backend::RecordedCall* record) {
  ir::Node* y = run.group.nodes[0];
  ir::Node* xn = y->inputs[0].get();
  size_t axis = static_cast<size_t>(y->attrs.axis);
  const Shape& shape = xn->shape;
  ir::Node* values = run.group.nodes.size() > 1 ? run.group.nodes[1] : nullptr;  // sort's values
  const ir::Layout dense{ir::contiguous_strides(y->shape), 0};
  if (y->numel() == 0) {  // nothing to sort, or k = 0
    backend::materialize(*y, rt::Storage::allocate(y->device, 0), dense);
    if (values) backend::materialize(*values, rt::Storage::allocate(y->device, 0), dense);
    return;
  }
  Operand x = operand(xn, y->device);
  backend::SortCall call{run};
  if (!x.computed) call.record = record;
  if (values) call.values = rt::Storage::allocate(y->device, static_cast<size_t>(y->numel()) * dtype_size(xn->dtype));
  call.dtype = xn->dtype;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d < axis) call.outer *= shape[d];
    else if (d > axis) call.inner *= shape[d];
  }
  call.n = shape[axis];
  call.kept = y->shape[axis];
  call.descending = y->attrs.keepdim;
  const Shape& st = x.view.strides;
  if (!collapse(shape, st, 0, axis, &call.stride_outer) ||
      !collapse(shape, st, axis + 1, shape.size(), &call.stride_inner)) {
    ir::Value v = ir::to_contiguous(ir::reference_eval(xn), xn->dtype);
    size_t bytes = static_cast<size_t>(xn->numel()) * dtype_size(xn->dtype);
    x.storage = rt::placed_on(y->device, v.storage, bytes);
    x.view = {x.storage->data(), 0, ir::contiguous_strides(shape)};
    call.record = nullptr;  // made for this call: a replay would read it stale
    collapse(shape, x.view.strides, 0, axis, &call.stride_outer);
    collapse(shape, x.view.strides, axis + 1, shape.size(), &call.stride_inner);
  }
  call.stride_n = x.view.strides[axis];
  call.data = x.view.data;
  call.offset = x.view.offset;
  call.storage = x.storage;
  backend::backend_for(y->device).sort(call);
  if (values) backend::materialize(*values, call.values, dense);
}

}  // namespace lf::exec
