// Scan and scatter groups (issue 23): operands resolved to storage and strides on the group's
// device, then the group's backend runs the op (Backend::scan, Backend::scatter).
#include <cstring>

#include "codegen/backend/scan_scatter.h"
#include "codegen/exec/groups.h"
#include "codegen/ir/view.h"

namespace lf::exec {
namespace {

// The stride of dims [lo, hi) merged into one dim, when they merge (each dim of size > 1 steps
// over the next whole); *size their element count.
bool merge(const Shape& shape, const Shape& strides, size_t lo, size_t hi, int64_t* size, int64_t* stride) {
  *size = 1;
  *stride = 0;
  int64_t expect = -1;
  for (size_t d = hi; d-- > lo;) {
    *size *= shape[d];
    if (shape[d] == 1) continue;
    if (expect >= 0 && strides[d] != expect) return false;
    if (expect < 0) *stride = strides[d];
    expect = strides[d] * shape[d];
  }
  return true;
}

// `op` as a contiguous copy on `device` (computed on the host by the reference executor).
Operand contiguous_operand(ir::Node* in, Device device) {
  ir::Value v = ir::to_contiguous(ir::reference_eval(in), in->dtype);
  auto storage = rt::placed_on(device, v.storage, static_cast<size_t>(in->numel()) * dtype_size(in->dtype));
  return {storage, {storage->data(), 0, ir::contiguous_strides(in->shape)}, /*computed=*/true};
}

bool is_contiguous(const Shape& shape, const Shape& strides) {
  Shape dense = ir::contiguous_strides(shape);
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] > 1 && strides[d] != dense[d]) return false;
  return true;
}

// A full() generator not yet computed (zeros, ones, bincount's weights of one).
bool is_pending_full(const ir::Node* n) { return !n->realized() && n->op == ir::Op::Full; }

}  // namespace

void run_scan_group(const backend::GroupRun& run, backend::RecordedCall* record) {
  ir::Node* y = run.group.nodes[0];
  ir::Node* in = y->inputs[0].get();
  const Shape& shape = in->shape;
  size_t axis = static_cast<size_t>(y->attrs.axis);
  Operand x = operand(in, y->device);
  backend::ScanCall call{run};
  if (!x.computed) call.record = record;
  call.op = y->op;
  call.dtype = y->dtype;
  call.in_dtype = in->dtype;
  bool ok = merge(shape, x.view.strides, 0, axis, &call.outer, &call.so) &&
            merge(shape, x.view.strides, axis + 1, shape.size(), &call.inner, &call.si);
  if (!ok) {  // a permuted view whose dims do not merge: read a contiguous copy
    x = contiguous_operand(in, y->device);
    call.record = nullptr;  // made for this call: a replay would read it stale
    merge(shape, x.view.strides, 0, axis, &call.outer, &call.so);
    merge(shape, x.view.strides, axis + 1, shape.size(), &call.inner, &call.si);
  }
  call.n = shape[axis];
  call.sn = x.view.strides[axis];
  call.data = x.view.data;
  call.offset = x.view.offset;
  call.storage = x.storage;
  backend::backend_for(y->device).scan(call);
}

void run_scatter_group(const backend::GroupRun& run, backend::RecordedCall* record) {
  ir::Node* y = run.group.nodes[0];
  Device device = y->device;
  ir::Node* self_node = y->inputs[0].get();
  ir::Node* index_node = y->inputs[1].get();
  ir::Node* src_node = y->inputs[2].get();
  backend::ScatterCall call{run};
  call.dtype = y->dtype;
  call.index_dtype = index_node->dtype;
  if (y->op == ir::Op::Scatter) {
    call.reduce = static_cast<ir::ScatterReduce>(y->attrs.start);
    call.include_self = y->attrs.keepdim;
    call.op_name = ir::scatter_op_name(y->attrs.step);
  } else {
    call.op_name = ir::scatter_op_name(y->attrs.step);  // scatter_add, or the composite it stands for
  }
  call.rank = static_cast<int>(index_node->shape.size());
  call.axis = y->attrs.axis;
  call.axis_size = y->shape[static_cast<size_t>(call.axis)];
  call.index_known = ir::scatter_indices_known_in_range(*y);
  call.count = index_node->numel();
  call.out_numel = y->numel();
  if (call.rank > backend::ScatterCall::kMaxRank) {
    backend::run_scatter_on_reference(call, "rank above " + std::to_string(backend::ScatterCall::kMaxRank));
    return;
  }
  // On a GPU a pending zeros() self is a clear of the output and a pending full() src a constant
  // in the kernel, where operand() would compute them on the host and copy them over (a CPU's host
  // evaluation is already a fill in its memory).
  const bool constants = backend::backend_for(device).scatter_takes_constants();
  call.self_zero =
      constants && is_pending_full(self_node) && self_node->attrs.value == 0 && self_node->attrs.ivalue == 0;
  call.src_full = constants && is_pending_full(src_node);
  // Both decide the call, and a full src is a constant of its kernel: a plan requires them to repeat.
  if (is_pending_full(self_node)) ir::note_number_use(*self_node);
  if (call.src_full) ir::note_number_use(*src_node);
  Operand self, src;
  if (!call.self_zero) {
    self = operand(self_node, device);
    if (!is_contiguous(self_node->shape, self.view.strides)) self = contiguous_operand(self_node, device);
  }
  Operand index = operand(index_node, device);
  if (call.src_full) {
    call.src_value = src_node->attrs.value;
    call.src_ivalue = src_node->attrs.ivalue;
  } else {
    src = operand(src_node, device);
  }
  // A replay rebinds the operands' buffers: one computed for this call would be read stale, but
  // for a full() self or src, the same every time.
  call.self_kept = self.computed && is_pending_full(self_node);
  call.src_kept = src.computed && is_pending_full(src_node);
  if ((!self.computed || call.self_kept) && !index.computed && (!src.computed || call.src_kept)) call.record = record;
  Shape out_strides = ir::contiguous_strides(y->shape);
  for (int d = 0; d < call.rank; ++d) {
    call.shape[d] = index_node->shape[static_cast<size_t>(d)];
    call.out_strides[d] = out_strides[static_cast<size_t>(d)];
    call.index_strides[d] = index.view.strides[static_cast<size_t>(d)];
    call.src_strides[d] = call.src_full ? 0 : src.view.strides[static_cast<size_t>(d)];
  }
  size_t es = dtype_size(call.dtype);
  if (!call.self_zero)
    call.self = static_cast<const char*>(self.view.data) + self.view.offset * static_cast<int64_t>(es);
  call.index = static_cast<const char*>(index.view.data) +
               index.view.offset * static_cast<int64_t>(dtype_size(call.index_dtype));
  if (!call.src_full) call.src = static_cast<const char*>(src.view.data) + src.view.offset * static_cast<int64_t>(es);
  call.self_storage = self.storage;
  call.index_storage = index.storage;
  call.src_storage = src.storage;
  backend::backend_for(device).scatter(call);
}

}  // namespace lf::exec
