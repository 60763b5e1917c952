// The GPU convolution through NVIDIA's cuDNN 9 (its legacy convolution API; its graph API for a
// 16-bit convolution's float32 epilogue), loaded with dlopen
// like cuBLASLt (libcudnn.so.9, which forwards to libcudnn_cnn/libcudnn_graph): no cuDNN header or
// library is needed to build. The ABI subset is declared in cudnn_abi.h; tests/codegen/cuda/
// cudnn_abi_test.cpp checks it against cudnn.h where the header is installed.
#pragma once

#include <string>

#include "codegen/backend/kernel.h"
#include "runtime/status.h"

namespace lf::cuda {

// Whether cudnn_conv2d can take the call's layout and geometry, without calling the library:
// kUnimplemented saying why not (asymmetric padding, a broadcast or reversed input stride, sizes
// past int32), kUnavailable when cuDNN is not loaded.
lf::Status cudnn_supports(const backend::ConvCall& call);

// The layout cuDNN writes the call's output in, its plan made on first sight: NHWC (*nhwc true:
// channels-last strides over [N, O, OH, OW]) for float16, bfloat16 and float32 unless
// LAZYFUSE_CONV_NHWC=0, the filter transformed to KRSC and x to NHWC (where it is not already) in
// scratch before each call; NCHW for float64 or where cuDNN declines NHWC. With NCHW operands cuDNN
// transposes x and y around its NHWC tensor-core kernels itself (H100, 2026-11-27: PyTorch's
// conv3x3 64->64 56x56 B32 bfloat16 0.058 ms NCHW, 0.030 channels-last). A Status when cuDNN
// cannot run the problem.
lf::Status cudnn_output_nhwc(const backend::ConvCall& call, int device, bool* nhwc);

// y = conv2d(call.x, call.w) on `device`'s stream, y a device buffer of call.y_bytes in the
// layout cudnn_output_nhwc says. The algorithm (cudnnGetConvolutionForwardAlgorithm_v7, restricted to the GEMM-like
// ones so that NaN and inf land where the direct sum puts them) and its workspace are chosen once
// per problem shape. *how gets the algorithm and math for the log. A Status says why cuDNN did
// not run it (the caller then runs the generated kernel); y is then untouched or to be rewritten.
lf::Status cudnn_conv2d(const backend::ConvCall& call, void* y, int device, std::string* how);

// y = act(conv2d(call.x, call.w) + z + bias) in one cuDNN call (cudnnConvolutionBiasActivationForward),
// act relu (NaN propagated) or identity (which cuDNN runs with implicit precomputed GEMM only);
// bias: O contiguous values of the call's dtype; z: a residual of the output's shape in its layout,
// or (z_nchw) a contiguous NCHW residual that an NHWC plan transforms first, or null. A Status says why not (the caller then runs cudnn_conv2d and the epilogue
// kernel); a refusal of a problem shape is remembered.
lf::Status cudnn_conv2d_bias_act(const backend::ConvCall& call, void* y, const void* bias, const void* z, bool z_nchw,
                                 bool relu, int device, std::string* how);

// y = act(conv2d(call.x, call.w) * scale + bias [+ z]) for float16 and bfloat16, through cuDNN's
// graph API (a convolution operation and pointwise operations, one fused kernel of an engine its
// heuristic picks): the convolution's float32 sum is scaled, biased and rectified in float32 and
// rounded once, which the legacy call cannot do (its scale is one number). This is how a 16-bit
// inference batch norm, which computes in float32 as PyTorch's does (frontend/ops_conv.cpp), runs
// after a convolution without a pass of its own. scale, bias: O contiguous values of the
// call's dtype or float32; z as for cudnn_conv2d_bias_act; relu keeps NaN. NHWC plans only,
// groups 1, at least 8 input channels, operands 16-byte aligned; no FFT, Winograd or reduced-precision engine. The first call
// of a shape and epilogue variant outside a stream capture times the heuristic's first
// configuration (with LAZYFUSE_CONV_BENCHMARK=1 its first 4, keeping the fastest; the log gives
// the times) against cudnn_conv2d alone: where the graph is slower than that plus a pass of the
// epilogue, the shape declines. A Status says why not (the caller then runs cudnn_conv2d and
// the epilogue kernel); a refusal is remembered per shape and variant, except a misaligned operand's.
lf::Status cudnn_conv2d_scale_bias_act(const backend::ConvCall& call, void* y, const void* scale, DType scale_dtype,
                                       const void* bias, DType bias_dtype, const void* z, bool z_nchw, bool relu,
                                       int device, std::string* how);

// Whether cuDNN is loaded (the graph API comes with it), for the batch-norm fold's choice.
bool cudnn_scale_epilogue_available();

// "cuDNN 91900 (libcudnn.so.9)" when loaded, else why not (logs).
std::string cudnn_status();

}  // namespace lf::cuda
