// Conv2d and pool2d groups on a GPU. Convolution: cuDNN (cudnn.h) where it is loaded and takes
// the problem, else the generated implicit-GEMM kernel (conv_kernels.h), as LAZYFUSE_CONV says;
// then the group's epilogue as a kernel over the output. An epilogue that is exactly
// act(conv + bias [+ residual]) (backend/conv_epilogue.h) runs inside cuDNN's fused call instead. Pooling: the generated kernel. The
// reference executor on the host is left only for when neither can run (no NVRTC).
// LAZYFUSE_LOG=1 says which path ran and why. Untested on a GPU.
#include "codegen/backend/conv_epilogue.h"
#include "codegen/backend/kernel.h"
#include "codegen/cuda/backend.h"
#include "codegen/cuda/conv_kernels.h"
#include "codegen/cuda/cudnn.h"
#include "runtime/config.h"
#include "codegen/ir/view.h"
#include "runtime/storage.h"

namespace lf::cuda {
namespace {

// The group's epilogue, lowered now that the convolution's output is a realized input of it.
// Appends to *how what ran.
void run_epilogue(backend::ConvCall& call, std::string* how) {
  if (!call.has_epilogue()) return;
  fuse::Group e = call.epilogue_group();
  if (e.outputs.empty()) return;
  backend::Prepared k = backend::prepare(call.run, e);
  if (!k.entry->kernel) {
    backend::run_fallback(k);
    *how += ", then the epilogue on the reference executor (its kernel did not compile)";
    return;
  }
  backend::launch(k, call.run.stats);
  backend::materialize_outputs(k);
  *how += ", then the epilogue kernel";
}

// The device address of a realized operand read through its views, when the views read it as
// `strides` (0 where a dim is broadcast); null otherwise (a pending value, another layout).
const void* buffer(ir::Node* n, const Shape& strides) {
  auto [src, chain] = ir::resolve_views(n);
  if (!src->realized() || src->dtype != n->dtype) return nullptr;
  auto v = ir::view_of_chain(*src, chain);
  if (!v) return nullptr;
  for (size_t d = 0; d < strides.size(); ++d)
    if (n->shape[d] != 1 && v->strides[d] != strides[d]) return nullptr;
  return static_cast<const char*>(src->storage->data()) + v->offset * static_cast<int64_t>(dtype_size(n->dtype));
}

// The group as one cuDNN convolution + bias + activation, when its epilogue is that form and its
// operands are buffers cuDNN reads; the output goes to the epilogue's node. False (and *why) when
// not: the caller runs the convolution and the epilogue kernel.
bool run_fused(backend::ConvCall& call, const std::shared_ptr<rt::Storage>& out, std::string* how, std::string* why) {
  backend::BiasActivation e;
  if (!backend::bias_activation(call.run.group, &e, why)) return false;
  ir::Node* y = call.product();
  const void* bias = buffer(e.bias, {0, 1, 0, 0});
  const void* z = e.z ? buffer(e.z, ir::contiguous_strides(y->shape)) : nullptr;
  if (!bias || (e.z && !z)) {
    *why = !bias ? "the bias is not a contiguous buffer" : "the residual is not a contiguous NCHW buffer";
    return false;
  }
  lf::Status s = cudnn_conv2d_bias_act(call, out->data(), bias, z, e.relu, y->device.index(), how);
  if (!s.ok()) {
    *why = std::string(s.message());
    return false;
  }
  ++call.run.stats.kernels_launched;
  call.run.stats.bytes_moved += call.bytes + (z ? call.y_bytes : 0);
  backend::materialize(*e.out, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  return true;
}

}  // namespace

void run_conv(backend::ConvCall& call) {
  ir::Node* y = call.product();
  int device = y->device.index();
  auto out = rt::Storage::allocate(y->device, call.y_bytes);
  const std::string& mode = rt::config().conv;  // LAZYFUSE_CONV
  std::string how, declined, not_fused;
  bool done = call.y_bytes == 0;
  if (done) {
    how = "nothing to compute (an empty output)";
  } else if (mode != "generated" && call.has_epilogue() && run_fused(call, out, &how, &not_fused)) {
    return call.log(how);
  } else if (mode != "generated") {
    lf::Status s = cudnn_conv2d(call, out->data(), device, &how);
    done = s.ok();
    if (!done) declined = "cuDNN declined: " + std::string(s.message());
  } else {
    declined = "LAZYFUSE_CONV=generated";
  }
  if (!done) {
    lf::Status s = generated_conv2d(call, out->data(), device, &how);
    if (!s.ok())
      return backend::run_conv_on_reference(call, declined + "; the generated kernel could not run: " + std::string(s.message()));
    how += " (" + declined + ")";
  }
  ++call.run.stats.kernels_launched;
  call.run.stats.bytes_moved += call.bytes;
  backend::materialize(*y, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  run_epilogue(call, &how);
  if (!not_fused.empty()) how += " (not cuDNN's fused bias + activation: " + not_fused + ")";
  call.log(how);
}

void run_pool(backend::PoolCall& call) {
  ir::Node* y = call.node();
  auto out = rt::Storage::allocate(y->device, static_cast<size_t>(y->numel()) * dtype_size(y->dtype));
  std::string how;
  lf::Status s = generated_pool2d(call, out->data(), y->device.index(), &how);
  if (!s.ok()) return backend::run_pool_on_reference(call, "the generated kernel could not run: " + std::string(s.message()));
  ++call.run.stats.kernels_launched;
  call.run.stats.bytes_moved += static_cast<uint64_t>(y->numel() + shape_numel(call.in_shape)) * dtype_size(y->dtype);
  backend::materialize(*y, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  call.log(how);
}

}  // namespace lf::cuda
