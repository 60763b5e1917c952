// The generated GPU convolution and pooling kernels: CUDA C compiled by NVRTC on first use, one
// kernel per dtype (the geometry is a launch argument, so one compile serves every shape), kept
// loaded for the process's lifetime (not in the persistent kernel cache: four small kernels).
// - conv2d: an implicit GEMM per (image, group), C[o, p] = W[o, k] @ col[k, p], 64 x 64 output
//   tiles over 16-deep slices of k in shared memory, 256 threads of 4 x 4 accumulators (float32
//   for the float dtypes up to 32 bits, float64 for float64), the im2col index math done as the
//   slice is loaded (the input read through its strides, padding read as zeros as cuDNN and the
//   CPU's im2col do). Correct for every stride, padding, dilation, groups and float dtype; speed
//   secondary: cuDNN is the fast path (cudnn.h).
// - pool2d: one thread per output element over its window, the input read through its strides;
//   max in the compute type (NaN wins), averages summed in double and rounded once (as the CPU).
#pragma once

#include <functional>
#include <string>

#include "codegen/backend/kernel.h"
#include "runtime/status.h"

namespace lf::cuda {

// The kernels' CUDA C and names ("lf_conv2d_float32"), for a float dtype.
std::string conv_kernel_name(DType dtype);
std::string conv_kernel_source(DType dtype);
std::string pool_kernel_name(DType dtype);
std::string pool_kernel_source(DType dtype);

// Runs the generated convolution into `y` (contiguous NCHW, call.y_bytes, on `device`). A Status
// says why it could not (no NVRTC, a compile error, a grid too large); *how gets a line for the log.
lf::Status generated_conv2d(const backend::ConvCall& call, void* y, int device, std::string* how);
// The same for pooling: y contiguous [N, C, OH, OW] of the node's dtype. With `replay`, also the
// same launch over new buffers x (base address; the call's offset and strides) and y, for a flush
// plan.
lf::Status generated_pool2d(const backend::PoolCall& call, void* y, int device, std::string* how,
                            std::function<void(const void* x, void* y)>* replay = nullptr);

}  // namespace lf::cuda
