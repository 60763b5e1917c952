// Conv2d and pool2d groups on a GPU. Convolution: cuDNN (cudnn.h) where it is loaded and takes
// the problem, else the generated implicit-GEMM kernel (conv_kernels.h), as LAZYFUSE_CONV says;
// then the group's epilogue as a kernel over the output. Pooling: the generated kernel. The
// reference executor on the host is left only for when neither can run (no NVRTC).
// LAZYFUSE_LOG=1 says which path ran and why. Untested on a GPU.
#include "codegen/backend/kernel.h"
#include "codegen/cuda/backend.h"
#include "codegen/cuda/conv_kernels.h"
#include "codegen/cuda/cudnn.h"
#include "runtime/config.h"
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

}  // namespace

void run_conv(backend::ConvCall& call) {
  ir::Node* y = call.product();
  int device = y->device.index();
  auto out = rt::Storage::allocate(y->device, call.y_bytes);
  const std::string& mode = rt::config().conv;  // LAZYFUSE_CONV
  std::string how, declined;
  bool done = call.y_bytes == 0;
  if (done) {
    how = "nothing to compute (an empty output)";
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
