// cudnn_abi.h (the cuDNN ABI subset declared by hand, so that building needs no cuDNN) against the
// real cudnn.h, where the build machine has it (tests/CMakeLists.txt adds its folder for this file
// alone): every constant and the perf struct's layout.
#include <gtest/gtest.h>

#include <cstddef>

#include "codegen/cuda/cudnn_abi.h"

#ifdef LF_HAVE_CUDNN_H
#include <cudnn.h>

namespace dnn = lf::cuda::dnn;
static_assert(CUDNN_MAJOR == 9, "the ABI subset is cuDNN 9's");
static_assert(dnn::kFloat == CUDNN_DATA_FLOAT && dnn::kDouble == CUDNN_DATA_DOUBLE && dnn::kHalf == CUDNN_DATA_HALF &&
              dnn::kBFloat16 == CUDNN_DATA_BFLOAT16);
static_assert(dnn::kDefaultMath == CUDNN_DEFAULT_MATH && dnn::kTensorOpMath == CUDNN_TENSOR_OP_MATH &&
              dnn::kTensorOpMathAllowConversion == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION && dnn::kFmaMath == CUDNN_FMA_MATH);
static_assert(dnn::kNchw == CUDNN_TENSOR_NCHW && dnn::kNhwc == CUDNN_TENSOR_NHWC &&
              dnn::kCrossCorrelation == CUDNN_CROSS_CORRELATION);
static_assert(dnn::kAlgoImplicitGemm == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM &&
              dnn::kAlgoImplicitPrecompGemm == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM &&
              dnn::kAlgoGemm == CUDNN_CONVOLUTION_FWD_ALGO_GEMM && dnn::kAlgoDirect == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT &&
              dnn::kAlgoFft == CUDNN_CONVOLUTION_FWD_ALGO_FFT && dnn::kAlgoFftTiling == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING &&
              dnn::kAlgoWinograd == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD &&
              dnn::kAlgoWinogradNonfused == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED &&
              dnn::kAlgoCount == CUDNN_CONVOLUTION_FWD_ALGO_COUNT);
static_assert(dnn::kActivationRelu == CUDNN_ACTIVATION_RELU && dnn::kActivationIdentity == CUDNN_ACTIVATION_IDENTITY);
static_assert(dnn::kNotPropagateNan == CUDNN_NOT_PROPAGATE_NAN && dnn::kPropagateNan == CUDNN_PROPAGATE_NAN);
static_assert(CUDNN_STATUS_SUCCESS == 0);
static_assert(sizeof(dnn::FwdAlgoPerf) == sizeof(cudnnConvolutionFwdAlgoPerf_t));
static_assert(offsetof(dnn::FwdAlgoPerf, status) == offsetof(cudnnConvolutionFwdAlgoPerf_t, status));
static_assert(offsetof(dnn::FwdAlgoPerf, memory) == offsetof(cudnnConvolutionFwdAlgoPerf_t, memory));
static_assert(offsetof(dnn::FwdAlgoPerf, math_type) == offsetof(cudnnConvolutionFwdAlgoPerf_t, mathType));
#endif

TEST(CudnnAbi, MatchesTheHeader) {
#ifdef LF_HAVE_CUDNN_H
  SUCCEED() << "checked at compile time against cuDNN " << CUDNN_MAJOR << "." << CUDNN_MINOR;
#else
  GTEST_SKIP() << "no cudnn.h on this machine: the ABI subset is unchecked";
#endif
}
