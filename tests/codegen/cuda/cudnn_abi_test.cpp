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
namespace be = dnn::be;
static_assert(be::kPointwiseDesc == CUDNN_BACKEND_POINTWISE_DESCRIPTOR && be::kConvolutionDesc == CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR &&
              be::kEngineDesc == CUDNN_BACKEND_ENGINE_DESCRIPTOR && be::kEngineCfgDesc == CUDNN_BACKEND_ENGINECFG_DESCRIPTOR &&
              be::kEngineHeurDesc == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR &&
              be::kExecutionPlanDesc == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR &&
              be::kConvForwardOpDesc == CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR &&
              be::kPointwiseOpDesc == CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR &&
              be::kOperationGraphDesc == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR &&
              be::kVariantPackDesc == CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR && be::kTensorDesc == CUDNN_BACKEND_TENSOR_DESCRIPTOR);
static_assert(be::kTypeHandle == CUDNN_TYPE_HANDLE && be::kTypeDataType == CUDNN_TYPE_DATA_TYPE &&
              be::kTypeBoolean == CUDNN_TYPE_BOOLEAN && be::kTypeInt64 == CUDNN_TYPE_INT64 && be::kTypeFloat == CUDNN_TYPE_FLOAT &&
              be::kTypeVoidPtr == CUDNN_TYPE_VOID_PTR && be::kTypeConvolutionMode == CUDNN_TYPE_CONVOLUTION_MODE &&
              be::kTypeHeurMode == CUDNN_TYPE_HEUR_MODE && be::kTypeNumericalNote == CUDNN_TYPE_NUMERICAL_NOTE &&
              be::kTypePointwiseMode == CUDNN_TYPE_POINTWISE_MODE && be::kTypeBackendDesc == CUDNN_TYPE_BACKEND_DESCRIPTOR);
static_assert(be::kPointwiseMode == CUDNN_ATTR_POINTWISE_MODE && be::kPointwiseMathPrec == CUDNN_ATTR_POINTWISE_MATH_PREC);
static_assert(be::kConvCompType == CUDNN_ATTR_CONVOLUTION_COMP_TYPE && be::kConvMode == CUDNN_ATTR_CONVOLUTION_CONV_MODE &&
              be::kConvDilations == CUDNN_ATTR_CONVOLUTION_DILATIONS &&
              be::kConvFilterStrides == CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES &&
              be::kConvPostPaddings == CUDNN_ATTR_CONVOLUTION_POST_PADDINGS &&
              be::kConvPrePaddings == CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS &&
              be::kConvSpatialDims == CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS);
static_assert(be::kHeurMode == CUDNN_ATTR_ENGINEHEUR_MODE && be::kHeurOperationGraph == CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH &&
              be::kHeurResults == CUDNN_ATTR_ENGINEHEUR_RESULTS && be::kEngineCfgEngine == CUDNN_ATTR_ENGINECFG_ENGINE);
static_assert(be::kPlanHandle == CUDNN_ATTR_EXECUTION_PLAN_HANDLE &&
              be::kPlanEngineConfig == CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG &&
              be::kPlanWorkspaceSize == CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE);
static_assert(be::kConvFwdAlpha == CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA &&
              be::kConvFwdBeta == CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA &&
              be::kConvFwdConvDesc == CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC &&
              be::kConvFwdW == CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W &&
              be::kConvFwdX == CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X &&
              be::kConvFwdY == CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y);
static_assert(be::kPwOpDesc == CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR && be::kPwOpX == CUDNN_ATTR_OPERATION_POINTWISE_XDESC &&
              be::kPwOpB == CUDNN_ATTR_OPERATION_POINTWISE_BDESC && be::kPwOpY == CUDNN_ATTR_OPERATION_POINTWISE_YDESC &&
              be::kPwOpT == CUDNN_ATTR_OPERATION_POINTWISE_TDESC);
static_assert(be::kGraphHandle == CUDNN_ATTR_OPERATIONGRAPH_HANDLE && be::kGraphOps == CUDNN_ATTR_OPERATIONGRAPH_OPS);
static_assert(be::kTensorAlignment == CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT && be::kTensorDataType == CUDNN_ATTR_TENSOR_DATA_TYPE &&
              be::kTensorDims == CUDNN_ATTR_TENSOR_DIMENSIONS && be::kTensorStrides == CUDNN_ATTR_TENSOR_STRIDES &&
              be::kTensorUid == CUDNN_ATTR_TENSOR_UNIQUE_ID && be::kTensorVirtual == CUDNN_ATTR_TENSOR_IS_VIRTUAL);
static_assert(be::kPackUids == CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS && be::kPackPointers == CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS &&
              be::kPackWorkspace == CUDNN_ATTR_VARIANT_PACK_WORKSPACE);
static_assert(be::kEngineGlobalIndex == CUDNN_ATTR_ENGINE_GLOBAL_INDEX && be::kEngineNumericalNote == CUDNN_ATTR_ENGINE_NUMERICAL_NOTE);
static_assert(be::kAdd == CUDNN_POINTWISE_ADD && be::kMul == CUDNN_POINTWISE_MUL && be::kReluFwd == CUDNN_POINTWISE_RELU_FWD &&
              be::kCmpNeq == CUDNN_POINTWISE_CMP_NEQ && be::kBinarySelect == CUDNN_POINTWISE_BINARY_SELECT);
static_assert(be::kHeurModeA == CUDNN_HEUR_MODE_A);
static_assert(be::kNoteTensorCore == CUDNN_NUMERICAL_NOTE_TENSOR_CORE &&
              be::kNoteDownConvertInputs == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS &&
              be::kNoteReducedPrecisionReduction == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION &&
              be::kNoteFft == CUDNN_NUMERICAL_NOTE_FFT && be::kNoteNondeterministic == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC &&
              be::kNoteWinograd == CUDNN_NUMERICAL_NOTE_WINOGRAD &&
              be::kNoteWinograd4x4 == CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4 &&
              be::kNoteWinograd6x6 == CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6);
static_assert(be::kDataBoolean == CUDNN_DATA_BOOLEAN);
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
