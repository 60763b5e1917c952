// Conv2d groups: the input read through its view (any strides), the weights as a contiguous OIHW
// array (a non-contiguous view is copied: weights are small) or, on a GPU, a KRSC one (the
// batch-norm fold writes the folded filter so for cuDNN: conv_fold.cpp), then the group's backend
// runs the convolution and its epilogue (Backend::conv). Pool2d groups likewise (Backend::pool).
#include "codegen/exec/groups.h"

#include "codegen/ir/view.h"

namespace lf::exec {

void run_conv_group(const backend::GroupRun& run, backend::RecordedCall* record) {
  ir::Node* y = run.group.nodes[0];
  Device device = y->device;
  ir::Node* xn = y->inputs[0].get();
  ir::Node* wn = y->inputs[1].get();
  Operand x = operand(xn, device);
  Operand w = operand(wn, device);
  Shape dense = ir::contiguous_strides(wn->shape), krsc = ir::channels_last_strides(wn->shape);
  bool contiguous = true, channels_last = backend::backend_for(device).conv_takes_krsc_filters();
  for (size_t d = 0; d < dense.size(); ++d) {
    contiguous &= wn->shape[d] <= 1 || w.view.strides[d] == dense[d];
    channels_last &= wn->shape[d] <= 1 || w.view.strides[d] == krsc[d];
  }
  bool w_krsc = channels_last && !contiguous;
  w.view.strides = w_krsc ? krsc : dense;  // what the backends assume; equal where it matters
  if (!contiguous && !w_krsc) {
    // Rows of the weight matrix ([O, C / groups * kh * kw]) must be contiguous for the GEMM's k.
    ir::Value v = ir::to_contiguous(ir::reference_eval(wn), wn->dtype);
    size_t bytes = static_cast<size_t>(wn->numel()) * dtype_size(wn->dtype);
    w.storage = rt::placed_on(device, v.storage, bytes);
    w.view = {w.storage->data(), 0, ir::contiguous_strides(wn->shape)};
  }
  backend::ConvCall call{run};
  call.dtype = y->dtype;
  call.batch = xn->shape[0];
  call.channels = xn->shape[1];
  call.height = xn->shape[2];
  call.width = xn->shape[3];
  call.out_channels = wn->shape[0];
  call.kernel_h = wn->shape[2];
  call.kernel_w = wn->shape[3];
  call.out_h = y->shape[2];
  call.out_w = y->shape[3];
  call.params = ir::ConvParams::of(*y);
  call.x = x.view;
  call.w = w.view;
  call.w_krsc = w_krsc;
  call.x_storage = x.storage;
  call.w_storage = w.storage;
  size_t esize = dtype_size(y->dtype);
  call.y_bytes = static_cast<size_t>(y->numel()) * esize;
  call.bytes = call.y_bytes + static_cast<uint64_t>(xn->numel() + wn->numel()) * esize;
  if ((contiguous || w_krsc) && !x.computed && !w.computed) call.record = record;  // else a replay would read stale operands
  backend::backend_for(device).conv(call);
}

void run_pool_group(const backend::GroupRun& run, backend::RecordedCall* record) {
  ir::Node* y = run.group.nodes[0];
  Operand x = operand(y->inputs[0].get(), y->device);
  backend::PoolCall call{run, x.view, x.storage, y->inputs[0]->shape};
  if (!x.computed) call.record = record;
  backend::backend_for(y->device).pool(call);
}

}  // namespace lf::exec
