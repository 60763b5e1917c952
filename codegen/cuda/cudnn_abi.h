// The ABI subset of cuDNN 9's cudnn_graph.h, cudnn_ops.h and cudnn_cnn.h that cudnn.cpp calls,
// declared here so that no cuDNN header is needed to build (cuDNN is loaded at run time).
// tests/codegen/cuda/cudnn_abi_test.cpp compares every constant and the perf struct's layout with
// the real header where one is installed (cuDNN 9.19 on the build machine).
#pragma once

#include <cstddef>

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
};

}  // namespace lf::cuda::dnn
