// oneDNN (the oneAPI Deep Neural Network Library, libdnnl.so.2), loaded at run time like the CUDA
// libraries: the CPU's convolution where it is present and takes the problem (issue 22: the same
// library PyTorch's CPU convolutions run on). Where it is absent, declines, or LAZYFUSE_CONV is
// `generated`, conv.cpp's im2col + packed GEMM runs instead; LAZYFUSE_LOG says which and why.
// Written against oneDNN 2.x's C API (Debian's libdnnl2, 2.6.3); 3.x changed that API and is
// reported unavailable.
#pragma once

#include <string>

#include "codegen/backend/kernel.h"
#include "runtime/status.h"

namespace lf::cpu::onednn {

// Why oneDNN cannot be used in this process ("libdnnl.so.2 not found", "oneDNN 3.1 ..."), or
// empty when it loaded.
const std::string& unavailable();

// Whether convolve() would try `call` (the library loaded, the dtype, the layout); it may still
// decline a geometry oneDNN itself refuses.
bool takes(const backend::ConvCall& call);

// y = conv2d(x, w) of `call` (no bias: the epilogue adds it) into `out`, contiguous NCHW of
// call.dtype (float32, or a 16-bit float widened to float32 and rounded once; float64 and the
// integers decline). Ok with *how naming oneDNN's implementation, or the reason it declined (the dtype,
// the layout, the library's own refusal) so that the caller takes its own path.
lf::Status convolve(const backend::ConvCall& call, void* out, std::string* how);

}  // namespace lf::cpu::onednn
