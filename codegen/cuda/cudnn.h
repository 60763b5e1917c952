// The GPU convolution through NVIDIA's cuDNN 9 (its legacy convolution API), loaded with dlopen
// like cuBLASLt (libcudnn.so.9, which forwards to libcudnn_cnn/libcudnn_graph): no cuDNN header or
// library is needed to build. The ABI subset is declared in cudnn.cpp; tests/codegen/cuda/
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

// y = conv2d(call.x, call.w) on `device`'s stream, y a contiguous NCHW device buffer of
// call.y_bytes. The algorithm (cudnnGetConvolutionForwardAlgorithm_v7, restricted to the GEMM-like
// ones so that NaN and inf land where the direct sum puts them) and its workspace are chosen once
// per problem shape. *how gets the algorithm and math for the log. A Status says why cuDNN did
// not run it (the caller then runs the generated kernel); y is then untouched or to be rewritten.
lf::Status cudnn_conv2d(const backend::ConvCall& call, void* y, int device, std::string* how);

// y = act(conv2d(call.x, call.w) + z + bias) in one cuDNN call (cudnnConvolutionBiasActivationForward),
// act relu (NaN propagated) or identity (which cuDNN runs with implicit precomputed GEMM only);
// bias: O contiguous values of the call's dtype; z: a contiguous NCHW residual of the output's
// shape, or null. A Status says why not (the caller then runs cudnn_conv2d and the epilogue
// kernel); a refusal of a problem shape is remembered.
lf::Status cudnn_conv2d_bias_act(const backend::ConvCall& call, void* y, const void* bias, const void* z, bool relu,
                                 int device, std::string* how);

// "cuDNN 91900 (libcudnn.so.9)" when loaded, else why not (logs).
std::string cudnn_status();

}  // namespace lf::cuda
