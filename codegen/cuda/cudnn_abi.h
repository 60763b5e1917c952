// The ABI subset of cuDNN 9's cudnn_graph.h, cudnn_ops.h and cudnn_cnn.h that cudnn.cpp and
// cudnn_graph.cpp call, declared here so that no cuDNN header is needed to build (cuDNN is loaded at
// run time).
// tests/codegen/cuda/cudnn_abi_test.cpp compares every constant and the perf struct's layout with
// the real header where one is installed (cuDNN 9.19 on the build machine).
#pragma once

#include <cstddef>
#include <cstdint>

namespace lf::cuda::dnn {

using Status = int;  // cudnnStatus_t; 0 is CUDNN_STATUS_SUCCESS
using Handle = struct cudnnContext*;
using TensorDesc = struct cudnnTensorStruct*;
using FilterDesc = struct cudnnFilterStruct*;
using ConvDesc = struct cudnnConvolutionStruct*;
using ActivationDesc = struct cudnnActivationStruct*;
using Stream = struct CUstream_st*;  // cudaStream_t, the Driver API's CUstream

// cudnnDataType_t
constexpr int kFloat = 0, kDouble = 1, kHalf = 2, kBFloat16 = 9;
// cudnnMathType_t
constexpr int kDefaultMath = 0, kTensorOpMath = 1, kTensorOpMathAllowConversion = 2, kFmaMath = 3;
// cudnnTensorFormat_t, cudnnConvolutionMode_t
constexpr int kNchw = 0, kNhwc = 1, kCrossCorrelation = 1;
// cudnnConvolutionFwdAlgo_t
constexpr int kAlgoImplicitGemm = 0, kAlgoImplicitPrecompGemm = 1, kAlgoGemm = 2, kAlgoDirect = 3, kAlgoFft = 4,
              kAlgoFftTiling = 5, kAlgoWinograd = 6, kAlgoWinogradNonfused = 7, kAlgoCount = 8;

// cudnnActivationMode_t, cudnnNanPropagation_t
constexpr int kActivationRelu = 1, kActivationIdentity = 5;
constexpr int kNotPropagateNan = 0, kPropagateNan = 1;

// The graph (backend) API, for the convolution + per-channel scale + bias epilogue (cudnn.h):
// cudnnBackendDescriptorType_t, cudnnBackendAttributeType_t, cudnnBackendAttributeName_t,
// cudnnPointwiseMode_t, cudnnBackendHeurMode_t and cudnnBackendNumericalNote_t values.
using BackendDesc = void*;  // cudnnBackendDescriptor_t
namespace be {
constexpr int kPointwiseDesc = 0, kConvolutionDesc = 1, kEngineDesc = 2, kEngineCfgDesc = 3, kEngineHeurDesc = 4,
              kExecutionPlanDesc = 5, kConvForwardOpDesc = 10, kPointwiseOpDesc = 13, kOperationGraphDesc = 15,
              kVariantPackDesc = 16, kTensorDesc = 17;
constexpr int kTypeHandle = 0, kTypeDataType = 1, kTypeBoolean = 2, kTypeInt64 = 3, kTypeFloat = 4, kTypeVoidPtr = 6,
              kTypeConvolutionMode = 7, kTypeHeurMode = 8, kTypeNumericalNote = 11, kTypePointwiseMode = 14,
              kTypeBackendDesc = 15;
constexpr int kPointwiseMode = 0, kPointwiseMathPrec = 1;
constexpr int kConvCompType = 100, kConvMode = 101, kConvDilations = 102, kConvFilterStrides = 103,
              kConvPostPaddings = 104, kConvPrePaddings = 105, kConvSpatialDims = 106;
constexpr int kHeurMode = 200, kHeurOperationGraph = 201, kHeurResults = 202;
constexpr int kEngineCfgEngine = 300;
constexpr int kPlanHandle = 400, kPlanEngineConfig = 401, kPlanWorkspaceSize = 402;
constexpr int kConvFwdAlpha = 700, kConvFwdBeta = 701, kConvFwdConvDesc = 702, kConvFwdW = 703, kConvFwdX = 704,
              kConvFwdY = 705;
constexpr int kPwOpDesc = 750, kPwOpX = 751, kPwOpB = 752, kPwOpY = 753, kPwOpT = 758;
constexpr int kGraphHandle = 800, kGraphOps = 801;
constexpr int kTensorAlignment = 900, kTensorDataType = 901, kTensorDims = 902, kTensorStrides = 903,
              kTensorUid = 906, kTensorVirtual = 907;
constexpr int kPackUids = 1000, kPackPointers = 1001, kPackWorkspace = 1003;
constexpr int kEngineGlobalIndex = 1301, kEngineNumericalNote = 1303;
constexpr int kAdd = 0, kMul = 1, kReluFwd = 100, kCmpNeq = 301, kBinarySelect = 601;
constexpr int kHeurModeA = 3;
constexpr int kNoteTensorCore = 0, kNoteDownConvertInputs = 1, kNoteReducedPrecisionReduction = 2, kNoteFft = 3,
              kNoteNondeterministic = 4, kNoteWinograd = 5, kNoteWinograd4x4 = 6, kNoteWinograd6x6 = 7;
constexpr int kDataBoolean = 11;
}  // namespace be

// cudnnConvolutionFwdAlgoPerf_t
struct FwdAlgoPerf {
  int algo;
  Status status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};

struct Api {
  Status (*create)(Handle*);
  Status (*set_stream)(Handle, Stream);
  size_t (*version)();
  const char* (*error_string)(Status);
  Status (*create_tensor)(TensorDesc*);
  Status (*set_tensor_nd)(TensorDesc, int data_type, int nb_dims, const int dims[], const int strides[]);
  Status (*create_filter)(FilterDesc*);
  Status (*set_filter_4d)(FilterDesc, int data_type, int format, int k, int c, int h, int w);
  Status (*create_conv)(ConvDesc*);
  Status (*set_conv_2d)(ConvDesc, int pad_h, int pad_w, int u, int v, int dil_h, int dil_w, int mode, int compute_type);
  Status (*set_group_count)(ConvDesc, int groups);
  Status (*set_math_type)(ConvDesc, int math_type);
  Status (*output_dim)(ConvDesc, TensorDesc, FilterDesc, int* n, int* c, int* h, int* w);
  Status (*find_algo_v7)(Handle, TensorDesc, FilterDesc, ConvDesc, TensorDesc, int requested, int* returned,
                         FwdAlgoPerf* results);
  // cudnnFindConvolutionForwardAlgorithm: every algorithm run and timed, fastest first.
  Status (*find_algo_timed)(Handle, TensorDesc, FilterDesc, ConvDesc, TensorDesc, int requested, int* returned,
                            FwdAlgoPerf* results);
  Status (*workspace_size)(Handle, TensorDesc, FilterDesc, ConvDesc, TensorDesc, int algo, size_t* bytes);
  Status (*forward)(Handle, const void* alpha, TensorDesc, const void* x, FilterDesc, const void* w, ConvDesc,
                    int algo, void* workspace, size_t workspace_bytes, const void* beta, TensorDesc, void* y);
  // The fused convolution + bias + activation (issue 22): y = act(alpha1 * conv(x, w) + alpha2 * z + bias).
  Status (*create_activation)(ActivationDesc*);
  Status (*set_activation)(ActivationDesc, int mode, int nan_propagation, double coef);
  Status (*bias_act_forward)(Handle, const void* alpha1, TensorDesc, const void* x, FilterDesc, const void* w, ConvDesc,
                             int algo, void* workspace, size_t workspace_bytes, const void* alpha2, TensorDesc,
                             const void* z, TensorDesc bias_desc, const void* bias, ActivationDesc, TensorDesc,
                             void* y);
  // cudnnTransformTensor: y = alpha * x + beta * y between two layouts of one shape (NCHW <-> NHWC).
  Status (*transform)(Handle, const void* alpha, TensorDesc, const void* x, const void* beta, TensorDesc, void* y);
  // The graph API (cudnnBackend*): descriptors made, set attribute by attribute, finalized.
  Status (*be_create)(int type, BackendDesc*);
  Status (*be_destroy)(BackendDesc);
  Status (*be_finalize)(BackendDesc);
  Status (*be_set)(BackendDesc, int name, int type, int64_t count, const void* values);
  Status (*be_get)(BackendDesc, int name, int type, int64_t requested, int64_t* count, void* values);
  Status (*be_execute)(Handle, BackendDesc plan, BackendDesc variant_pack);
};

}  // namespace lf::cuda::dnn
