// What the two halves of the cuDNN backend share: cudnn.cpp (the library, the legacy convolution API
// and the plans of problem shapes) and cudnn_graph.cpp (the graph API's scaled epilogue).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codegen/backend/kernel.h"
#include "codegen/cuda/cudnn_abi.h"
#include "runtime/status.h"
#include "runtime/storage.h"

namespace lf::cuda::cudnn_detail {

// An algorithm needing more scratch than this is passed over for the next one.
constexpr size_t kMaxWorkspaceBytes = size_t{1} << 30;

struct Loaded {
  dnn::Api api{};
  std::string name;
  std::string error;  // why cuDNN is unusable, when it is
};

// Defined in cudnn.cpp, as are the functions below (each says there what it does).
const Loaded& loaded();
lf::Status check(dnn::Status s, const char* call);
#define LF_DNN_RETURN_IF_ERROR(call)                                   \
  do {                                                                 \
    if (lf::Status s_ = check((call), #call); !s_.ok()) return s_;     \
  } while (0)
bool data_type(DType d, int* data, int* compute);

// An execution plan of the graph API, and the descriptors it was made from (kept with it, never
// destroyed, like a Plan's legacy descriptors); or why there is none.
struct ScaledPlan {
  // The epilogue's variant and its operands' dtypes (the scale's and the bias's: the call's dtype
  // or float32).
  static int key(bool relu, bool z, DType scale, DType bias) {
    return (relu ? 1 : 0) | (z ? 2 : 0) | (scale == DType::Float32 ? 4 : 0) | (bias == DType::Float32 ? 8 : 0);
  }
  struct Candidate {
    dnn::BackendDesc plan = nullptr;
    size_t workspace = 0;
    int64_t engine = -1;  // the engine's global index, for the log
    float ms = -1;        // timed on the first call, when there was a choice
  };
  std::vector<Candidate> candidates;  // after the first call, the chosen one alone
  std::vector<dnn::BackendDesc> descriptors;
  std::string timings;  // "engine 4 0.051 ms, engine 7 0.034 ms": the first call's, for the log
  bool tuned = false;   // the first call timed the candidates
  lf::Status declined;
};

// Descriptors and the chosen algorithm of one problem shape, made once and kept (a declined
// problem's descriptors are not destroyed either: one set per declined shape, remembered).
struct Plan {
  dnn::TensorDesc x = nullptr, y = nullptr;
  dnn::FilterDesc w = nullptr;
  dnn::ConvDesc conv = nullptr;
  int algo = 0, math = 0;
  size_t workspace = 0;
  bool timed = false;  // chosen by timing every algorithm (LAZYFUSE_CONV_BENCHMARK=1)
  // NHWC (cudnn.h): x, the filter (KRSC) and y channels-last. A filter given in the other layout
  // (OIHW for an NHWC plan; KRSC, as the batch-norm fold writes it, for an NCHW one) is transformed
  // into scratch each call (w_given -> w_read), and x too where an NHWC plan gets another layout
  // (x_given -> x); the scratch follows the workspace in one device buffer.
  bool nhwc = false;
  dnn::TensorDesc x_given = nullptr;  // x as it is, when it is transformed
  dnn::TensorDesc w_given = nullptr, w_read = nullptr;
  size_t x_bytes = 0, w_bytes = 0;  // scratch for the transformed x and filter (0: none)
  dnn::TensorDesc z_nchw = nullptr;  // a contiguous NCHW residual, transformed to NHWC (made on first use)
  // The fused convolution + bias + activation: the bias descriptor ([1, O, 1, 1]), made on first
  // use; the identity activation's workspace (it runs implicit precomputed GEMM only), SIZE_MAX
  // until asked; why cuDNN refused the fused call, once it did (not asked again).
  dnn::TensorDesc bias = nullptr;
  size_t identity_workspace = SIZE_MAX;
  lf::Status fused_declined;
  // The graph API's convolution + scale + bias [+ residual] [+ relu] (cudnn_conv2d_scale_bias_act),
  // one per epilogue variant (ScaledPlan::key), made on first use.
  std::map<int, ScaledPlan> scaled;
};

struct PerDevice {
  dnn::Handle handle = nullptr;
  dnn::Stream stream = nullptr;  // the handle's, followed when the device's stream changes (lf::set_stream)
  std::shared_ptr<rt::Storage> workspace;  // grown to the largest plan's need; one stream orders its uses
  std::vector<std::shared_ptr<rt::Storage>> retired;  // the smaller workspaces before it (grown_workspace)
  std::map<std::string, Plan> plans;
  std::map<std::string, lf::Status> declined;  // problems make_plan() failed on: asked once
  dnn::ActivationDesc relu = nullptr, identity = nullptr;
};

// The plan's operands as its kernels read them: x, or x transformed to NHWC, the filter (KRSC
// for an NHWC plan), and the workspace.
struct Operands {
  const void* x = nullptr;
  const void* w = nullptr;
  const void* z = nullptr;  // the residual, transformed to NHWC when it was given NCHW
  void* workspace = nullptr;
};

std::mutex& plans_mutex();
lf::Status find_plan(const backend::ConvCall& c, int device, PerDevice** dev_out, Plan** plan_out);
const void* at(const kir::GemmOperand& o, DType d);
lf::Status operands(const backend::ConvCall& c, PerDevice& dev, Plan& plan, size_t workspace, int device,
                    const void* z_nchw, Operands* out);

}  // namespace lf::cuda::cudnn_detail
