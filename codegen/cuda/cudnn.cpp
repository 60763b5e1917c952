// cuDNN 9's legacy convolution API, and its graph API for the scaled epilogue, through dlopen (see
// cudnn.h). Written against cuDNN 9.19's headers; run on the H100 and H200 (cuDNN 9.14 there).
#include "codegen/cuda/cudnn.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "codegen/cuda/cudnn_abi.h"
#include "codegen/ir/node.h"
#include "runtime/config.h"
#include "runtime/cuda_driver.h"
#include "runtime/shared_library.h"
#include "runtime/storage.h"

namespace lf::cuda {
namespace {

// An algorithm needing more scratch than this is passed over for the next one.
constexpr size_t kMaxWorkspaceBytes = size_t{1} << 30;
// Float16 convolutions of fewer input channels than this run NCHW (find_plan says why).
constexpr int64_t kFloat16NhwcMinChannels = 16;

struct Loaded {
  dnn::Api api{};
  std::string name;
  std::string error;  // why cuDNN is unusable, when it is
};

const Loaded& loaded() {
  static const Loaded l = [] {
    Loaded l;
    // libcudnn.so.9 from the toolkit, a system package or PyTorch's nvidia-cudnn wheel (bench/run_gpu.sh
    // puts the wheel's folder on LD_LIBRARY_PATH).
    auto lib = rt::SharedLibrary::open({"libcudnn.so.9", "libcudnn.so", "/usr/local/cuda/lib64/libcudnn.so.9",
                                        "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"});
    if (!lib.loaded()) {
      l.error = "libcudnn.so.9 not found (install cuDNN 9, or put its directory on LD_LIBRARY_PATH)";
      return l;
    }
    l.name = lib.name();
    dnn::Api& a = l.api;
    lib.bind(a.create, "cudnnCreate");
    lib.bind(a.set_stream, "cudnnSetStream");
    lib.bind(a.version, "cudnnGetVersion");
    lib.bind(a.error_string, "cudnnGetErrorString");
    lib.bind(a.create_tensor, "cudnnCreateTensorDescriptor");
    lib.bind(a.set_tensor_nd, "cudnnSetTensorNdDescriptor");
    lib.bind(a.create_filter, "cudnnCreateFilterDescriptor");
    lib.bind(a.set_filter_4d, "cudnnSetFilter4dDescriptor");
    lib.bind(a.create_conv, "cudnnCreateConvolutionDescriptor");
    lib.bind(a.set_conv_2d, "cudnnSetConvolution2dDescriptor");
    lib.bind(a.set_group_count, "cudnnSetConvolutionGroupCount");
    lib.bind(a.set_math_type, "cudnnSetConvolutionMathType");
    lib.bind(a.output_dim, "cudnnGetConvolution2dForwardOutputDim");
    lib.bind(a.find_algo_v7, "cudnnGetConvolutionForwardAlgorithm_v7");
    lib.bind(a.find_algo_timed, "cudnnFindConvolutionForwardAlgorithm");
    lib.bind(a.workspace_size, "cudnnGetConvolutionForwardWorkspaceSize");
    lib.bind(a.forward, "cudnnConvolutionForward");
    lib.bind(a.create_activation, "cudnnCreateActivationDescriptor");
    lib.bind(a.set_activation, "cudnnSetActivationDescriptor");
    lib.bind(a.bias_act_forward, "cudnnConvolutionBiasActivationForward");
    lib.bind(a.transform, "cudnnTransformTensor");
    lib.bind(a.be_create, "cudnnBackendCreateDescriptor");
    lib.bind(a.be_destroy, "cudnnBackendDestroyDescriptor");
    lib.bind(a.be_finalize, "cudnnBackendFinalize");
    lib.bind(a.be_set, "cudnnBackendSetAttribute");
    lib.bind(a.be_get, "cudnnBackendGetAttribute");
    lib.bind(a.be_execute, "cudnnBackendExecute");
    if (!lib.missing().empty()) l.error = l.name + " lacks entry points: " + lib.missing();
    else if (a.version() < 90000) l.error = l.name + " is cuDNN " + std::to_string(a.version()) + ", not 9";
    return l;
  }();
  return l;
}

lf::Status check(dnn::Status s, const char* call) {
  if (s == 0) return lf::OkStatus();
  const char* text = loaded().api.error_string ? loaded().api.error_string(s) : "";
  return lf::InternalError(std::string(call) + " failed: " + (text ? text : "") + " (" + std::to_string(s) + ")");
}
#define LF_DNN_RETURN_IF_ERROR(call)                                   \
  do {                                                                 \
    if (lf::Status s_ = check((call), #call); !s_.ok()) return s_;     \
  } while (0)

bool data_type(DType d, int* data, int* compute) {
  switch (d) {
    case DType::Float32: *data = dnn::kFloat; *compute = dnn::kFloat; return true;
    case DType::Float64: *data = dnn::kDouble; *compute = dnn::kDouble; return true;
    // float32 accumulation, as the CPU and the generated kernel do (cuDNN's PSEUDO_HALF_CONFIG).
    case DType::Float16: *data = dnn::kHalf; *compute = dnn::kFloat; return true;
    case DType::BFloat16: *data = dnn::kBFloat16; *compute = dnn::kFloat; return true;
    default: return false;
  }
}

const char* algo_name(int a) {
  static const char* kNames[] = {"implicit GEMM", "implicit precomputed GEMM", "GEMM", "direct",
                                 "FFT", "FFT tiling", "Winograd", "Winograd nonfused"};
  return a >= 0 && a < dnn::kAlgoCount ? kNames[a] : "?";
}
const char* math_name(int m) {
  switch (m) {
    case dnn::kDefaultMath: return "default math";
    case dnn::kTensorOpMath: return "tensor ops";
    case dnn::kTensorOpMathAllowConversion: return "tensor ops with conversion";
    case dnn::kFmaMath: return "FMA math";
  }
  return "?";
}

// x's strides with size-1 dims given the stride a packed tensor would have there (cuDNN checks
// strides against sizes; a size-1 dim's stride is arbitrary in a view), as PyTorch does.
void x_strides(const backend::ConvCall& c, int64_t out[4]) {
  int64_t sizes[4] = {c.batch, c.channels, c.height, c.width};
  int64_t z = 1;
  for (int d = 3; d >= 0; --d) {
    out[d] = sizes[d] == 1 ? z : c.x.strides[static_cast<size_t>(d)];
    z = std::max(z, out[d] * sizes[d]);
  }
}

// Whether x is stored NHWC (dense, channels innermost), where its size-1 dims allow any stride.
bool x_is_nhwc(const backend::ConvCall& c) {
  Shape sizes{c.batch, c.channels, c.height, c.width};
  Shape want = ir::channels_last_strides(sizes);
  for (size_t d = 0; d < 4; ++d)
    if (sizes[d] != 1 && c.x.strides[d] != want[d]) return false;
  return true;
}

bool set_4d(const dnn::Api& a, dnn::TensorDesc* desc, int data, const Shape& sizes, const Shape& strides) {
  int d[4], st[4];
  for (size_t i = 0; i < 4; ++i) {
    d[i] = static_cast<int>(sizes[i]);
    st[i] = static_cast<int>(strides[i]);
  }
  return a.create_tensor(desc) == 0 && a.set_tensor_nd(*desc, data, 4, d, st) == 0;
}

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

lf::Status make_plan(const backend::ConvCall& c, dnn::Handle handle, bool tf32, bool benchmark, bool nhwc, Plan* plan) {
  const dnn::Api& a = loaded().api;
  int data = 0, compute = 0;
  data_type(c.dtype, &data, &compute);
  int64_t xs[4];
  x_strides(c, xs);
  const auto& p = c.params;
  Shape xd{c.batch, c.channels, c.height, c.width}, yd{c.batch, c.out_channels, c.out_h, c.out_w};
  Shape wd{c.out_channels, c.channels / p.groups, c.kernel_h, c.kernel_w};
  Shape given{xs[0], xs[1], xs[2], xs[3]};
  size_t esize = dtype_size(c.dtype);
  plan->nhwc = nhwc;
  if (nhwc && !x_is_nhwc(c)) {
    if (!set_4d(a, &plan->x_given, data, xd, given)) return lf::InternalError("cuDNN: x's descriptor");
    plan->x_bytes = static_cast<size_t>(shape_numel(xd)) * esize;
  }
  if (nhwc != c.w_krsc) {
    auto layout = [&](bool krsc) { return krsc ? ir::channels_last_strides(wd) : ir::contiguous_strides(wd); };
    if (!set_4d(a, &plan->w_given, data, wd, layout(c.w_krsc)) || !set_4d(a, &plan->w_read, data, wd, layout(nhwc)))
      return lf::InternalError("cuDNN: the filter's transform descriptors");
    plan->w_bytes = static_cast<size_t>(shape_numel(wd)) * esize;
  }
  if (!set_4d(a, &plan->x, data, xd, nhwc ? ir::channels_last_strides(xd) : given) ||
      !set_4d(a, &plan->y, data, yd, nhwc ? ir::channels_last_strides(yd) : ir::contiguous_strides(yd)))
    return lf::InternalError("cuDNN: the tensor descriptors");
  LF_DNN_RETURN_IF_ERROR(a.create_filter(&plan->w));
  LF_DNN_RETURN_IF_ERROR(a.create_conv(&plan->conv));
  LF_DNN_RETURN_IF_ERROR(a.set_filter_4d(plan->w, data, nhwc ? dnn::kNhwc : dnn::kNchw, static_cast<int>(wd[0]),
                                         static_cast<int>(wd[1]), static_cast<int>(wd[2]), static_cast<int>(wd[3])));
  LF_DNN_RETURN_IF_ERROR(a.set_conv_2d(plan->conv, static_cast<int>(p.pad_top), static_cast<int>(p.pad_left),
                                       static_cast<int>(p.stride_h), static_cast<int>(p.stride_w),
                                       static_cast<int>(p.dil_h), static_cast<int>(p.dil_w), dnn::kCrossCorrelation, compute));
  LF_DNN_RETURN_IF_ERROR(a.set_group_count(plan->conv, static_cast<int>(p.groups)));
  // The math asked for: tensor cores for the 16-bit floats; for float32 TF32 tensor cores unless
  // LAZYFUSE_CONV_TF32=0 (FMA math: full float32), as PyTorch's allow_tf32; float64 has none.
  bool f32 = c.dtype == DType::Float32;
  int want = dtype_size(c.dtype) == 2 ? dnn::kTensorOpMath : f32 && !tf32 ? dnn::kFmaMath : dnn::kDefaultMath;
  LF_DNN_RETURN_IF_ERROR(a.set_math_type(plan->conv, want));
  int n = 0, oc = 0, oh = 0, ow = 0;
  LF_DNN_RETURN_IF_ERROR(a.output_dim(plan->conv, plan->x, plan->w, &n, &oc, &oh, &ow));
  if (n != yd[0] || oc != yd[1] || oh != yd[2] || ow != yd[3])
    return lf::UnimplementedError("cuDNN computes another output shape for this geometry");
  dnn::FwdAlgoPerf perf[2 * dnn::kAlgoCount];
  int found = 0;
  // The heuristic's ranking, or with LAZYFUSE_CONV_BENCHMARK=1 every algorithm run and timed on
  // this shape, fastest first (once a shape in the process: the plan is kept).
  // A timing run that fails (it allocates its own buffers, outside the device allocator) falls back
  // to the heuristic's ranking rather than declining the shape.
  plan->timed = benchmark &&
                a.find_algo_timed(handle, plan->x, plan->w, plan->conv, plan->y, 2 * dnn::kAlgoCount, &found, perf) == 0;
  if (!plan->timed)
    LF_DNN_RETURN_IF_ERROR(a.find_algo_v7(handle, plan->x, plan->w, plan->conv, plan->y, 2 * dnn::kAlgoCount, &found, perf));
  // The ranking's first GEMM-like algorithm: FFT and Winograd mix the inputs of a
  // tile, so one inf would turn neighbouring outputs into NaN (inf - inf) where the direct sum is
  // finite; and in full float32 only FMA math.
  for (int i = 0; i < found; ++i) {
    const dnn::FwdAlgoPerf& r = perf[i];
    if (r.status != 0 || r.algo > dnn::kAlgoDirect || r.memory > kMaxWorkspaceBytes) continue;
    int math = r.math_type;
    if (f32 && !tf32) {  // no tensor-op result, and FMA math set whatever the result says (DEFAULT allows TF32)
      if (math == dnn::kTensorOpMath || math == dnn::kTensorOpMathAllowConversion) continue;
      math = dnn::kFmaMath;
    }
    LF_DNN_RETURN_IF_ERROR(a.set_math_type(plan->conv, math));
    size_t ws = 0;
    if (a.workspace_size(handle, plan->x, plan->w, plan->conv, plan->y, r.algo, &ws) != 0 || ws > kMaxWorkspaceBytes) continue;
    plan->algo = r.algo;
    plan->math = math;
    plan->workspace = ws;
    return lf::OkStatus();
  }
  return lf::UnimplementedError("cuDNN offers no GEMM-like algorithm for this problem (" + std::to_string(found) +
                                " candidates)");
}

}  // namespace

std::string cudnn_status() {
  const Loaded& l = loaded();
  if (!l.error.empty()) return l.error;
  return "cuDNN " + std::to_string(l.api.version()) + " (" + l.name + ")";
}

lf::Status cudnn_supports(const backend::ConvCall& c) {
  int data = 0, compute = 0;
  if (!data_type(c.dtype, &data, &compute)) return lf::UnimplementedError(std::string("cuDNN: no ") + dtype_name(c.dtype));
  const auto& p = c.params;
  if (p.pad_top != p.pad_bottom || p.pad_left != p.pad_right)
    return lf::UnimplementedError("cuDNN: asymmetric padding (\"same\" with an even dilated kernel)");
  // A grouped convolution that is not depthwise: NaN and inf of one group's input reached the other
  // groups' outputs on the H100 (ConvFold.GeometriesAndSizes, groups 3 of 2 channels, 2026-11-24),
  // as a product with zero weights would; the generated kernel sums each group alone.
  if (p.groups > 1 && p.groups != c.channels)
    return lf::UnimplementedError("cuDNN: a grouped convolution that is not depthwise (NaN would cross groups)");
  int64_t sizes[4] = {c.batch, c.channels, c.height, c.width};
  int64_t reach = 0;
  for (size_t d = 0; d < 4; ++d) {
    if (sizes[d] > 1 && c.x.strides[d] <= 0) return lf::UnimplementedError("cuDNN: a broadcast or reversed input dim");
    reach += (sizes[d] - 1) * std::max<int64_t>(c.x.strides[d], 0);
  }
  int64_t y_numel = c.batch * c.out_channels * c.out_h * c.out_w;
  int64_t w_numel = c.out_channels * (c.channels / std::max<int64_t>(p.groups, 1)) * c.kernel_h * c.kernel_w;
  if (reach >= INT32_MAX || y_numel >= INT32_MAX || w_numel >= INT32_MAX)
    return lf::UnimplementedError("cuDNN: a tensor past 2^31 elements");
  if (!loaded().error.empty()) return lf::UnavailableError(loaded().error);
  return lf::OkStatus();
}

namespace {

std::mutex& plans_mutex() {
  static std::mutex mu;
  return mu;
}

// The device's handle (on its current stream) and the plan of the call's problem shape, made on
// first sight: NHWC where LAZYFUSE_CONV_NHWC allows it and the type is not float64 (cuDNN's NHWC
// kernels are the tensor-core ones), else or where cuDNN declines NHWC, NCHW. The caller holds
// plans_mutex().
lf::Status find_plan(const backend::ConvCall& c, int device, PerDevice** dev_out, Plan** plan_out) {
  if (lf::Status s = cudnn_supports(c); !s.ok()) return s;
  const dnn::Api& a = loaded().api;
  bool tf32 = rt::config().conv_tf32, benchmark = rt::config().conv_benchmark;
  int64_t xs[4];
  x_strides(c, xs);
  const auto& p = c.params;
  static std::map<int, PerDevice> devices;
  rt::cu::DeviceContext& ctx = rt::cu::device_context(device);
  PerDevice& dev = devices[device];
  if (!dev.handle) LF_DNN_RETURN_IF_ERROR(a.create(&dev.handle));
  if (auto stream = reinterpret_cast<dnn::Stream>(ctx.stream); dev.stream != stream) {
    LF_DNN_RETURN_IF_ERROR(a.set_stream(dev.handle, stream));
    dev.stream = stream;
  }
  lf::Status status;
  // cuDNN 9.14's NHWC float16 engine (implicit precomputed GEMM with tensor ops) turned -inf into
  // 0 at 3, 4 and 8 input channels on the H200 (2026-11-28; 1, 16 and 32 kept it; PyTorch's
  // channels_last float16 convolution lost -inf at 3 and 8 in the same call, its NCHW one did
  // not): those run NCHW. bfloat16 and float32 kept every inf and NaN there.
  const bool f16_few_channels = c.dtype == DType::Float16 && c.channels < kFloat16NhwcMinChannels;
  for (bool nhwc : {true, false}) {
    if (c.nhwc >= 0 ? nhwc != (c.nhwc == 1)
                    : nhwc && (!rt::config().conv_nhwc || c.dtype == DType::Float64 || f16_few_channels))
      continue;
    char key[512];
    std::snprintf(key, sizeof key, "%d|%d|%d|%d|%d|%lld,%lld,%lld,%lld|%lld,%lld,%lld,%lld|%lld,%lld,%lld|%lld,%lld,%lld,%lld,%lld,%lld,%lld",
                  nhwc ? 1 : 0, c.w_krsc ? 1 : 0, static_cast<int>(c.dtype), tf32 ? 1 : 0, benchmark ? 1 : 0, (long long)c.batch, (long long)c.channels, (long long)c.height,
                (long long)c.width, (long long)xs[0], (long long)xs[1], (long long)xs[2], (long long)xs[3],
                (long long)c.out_channels, (long long)c.kernel_h, (long long)c.kernel_w, (long long)p.stride_h,
                  (long long)p.stride_w, (long long)p.pad_top, (long long)p.pad_left, (long long)p.dil_h, (long long)p.dil_w,
                  (long long)p.groups);
    auto it = dev.plans.find(key);
    if (it == dev.plans.end()) {
      if (auto d = dev.declined.find(key); d != dev.declined.end()) {
        status = d->second;
        continue;
      }
      Plan plan;
      if (lf::Status s = make_plan(c, dev.handle, tf32, benchmark, nhwc, &plan); !s.ok()) {
        dev.declined.emplace(key, s);
        status = s;
        continue;
      }
      it = dev.plans.emplace(key, plan).first;
    }
    *dev_out = &dev;
    *plan_out = &it->second;
    return lf::OkStatus();
  }
  return status;
}


void* grown_workspace(PerDevice& dev, size_t bytes, int device) {
  if (bytes == 0) return nullptr;
  if (!dev.workspace || dev.workspace->nbytes() < bytes) {
    // A flush plan's captured CUDA graph holds the address it was captured with: the smaller
    // buffer is kept (never handed back to the allocator, where a tensor could get it), and the
    // new one at least doubles, so the kept ones add up to less than the newest.
    size_t size = bytes;
    if (dev.workspace) {
      size = std::max(bytes, 2 * dev.workspace->nbytes());
      dev.retired.push_back(std::move(dev.workspace));
    }
    dev.workspace = rt::Storage::allocate(Device::cuda(device), size);
  }
  return dev.workspace->data();
}

const void* at(const kir::GemmOperand& o, DType d) {
  return static_cast<const char*>(o.data) + o.offset * static_cast<int64_t>(dtype_size(d));
}

constexpr size_t align_up(size_t n) { return (n + 255) & ~size_t{255}; }

// The plan's operands as its kernels read them: x, or x transformed to NHWC, the filter (KRSC
// for an NHWC plan), and the workspace.
struct Operands {
  const void* x = nullptr;
  const void* w = nullptr;
  const void* z = nullptr;  // the residual, transformed to NHWC when it was given NCHW
  void* workspace = nullptr;
};

// Transforms the operands the plan needs in another layout into the scratch after `workspace` bytes
// of it: the filter (Plan::w_bytes), and for an NHWC plan x where it is not NHWC and `z_nchw`, a
// contiguous NCHW residual, when given.
lf::Status operands(const backend::ConvCall& c, PerDevice& dev, Plan& plan, size_t workspace, int device,
                    const void* z_nchw, Operands* out) {
  const dnn::Api& a = loaded().api;
  size_t ws = align_up(workspace), xb = align_up(plan.x_bytes), wb = align_up(plan.w_bytes);
  size_t zb = z_nchw ? c.y_bytes : 0;
  char* base = static_cast<char*>(grown_workspace(dev, ws + xb + wb + zb, device));
  out->workspace = workspace ? base : nullptr;
  out->x = at(c.x, c.dtype);
  out->w = at(c.w, c.dtype);
  out->z = z_nchw;
  float one32 = 1, zero32 = 0;
  double one64 = 1, zero64 = 0;
  const bool f64 = c.dtype == DType::Float64;
  const void* one = f64 ? static_cast<const void*>(&one64) : &one32;
  const void* zero = f64 ? static_cast<const void*>(&zero64) : &zero32;
  if (plan.w_bytes) {
    LF_DNN_RETURN_IF_ERROR(a.transform(dev.handle, one, plan.w_given, out->w, zero, plan.w_read, base + ws + xb));
    out->w = base + ws + xb;
  }
  if (!plan.nhwc) return lf::OkStatus();
  if (z_nchw) {
    if (!plan.z_nchw) {
      Shape yd{c.batch, c.out_channels, c.out_h, c.out_w};
      int data = 0, compute = 0;
      data_type(c.dtype, &data, &compute);
      if (!set_4d(a, &plan.z_nchw, data, yd, ir::contiguous_strides(yd)))
        return lf::InternalError("cuDNN: the residual's descriptor");
    }
    LF_DNN_RETURN_IF_ERROR(a.transform(dev.handle, one, plan.z_nchw, z_nchw, zero, plan.y, base + ws + xb + wb));
    out->z = base + ws + xb + wb;
  }
  if (plan.x_bytes) {
    LF_DNN_RETURN_IF_ERROR(a.transform(dev.handle, one, plan.x_given, out->x, zero, plan.x, base + ws));
    out->x = base + ws;
  }
  return lf::OkStatus();
}

std::string describe(const Plan& plan, int algo, size_t workspace) {
  return std::string(algo_name(algo)) + ", " + math_name(plan.math) +
         (plan.nhwc ? plan.x_bytes ? ", NHWC (x transformed)" : ", NHWC" : ", NCHW") +
         (plan.w_bytes ? plan.nhwc ? ", the filter transformed to KRSC" : ", the filter transformed to OIHW" : "") +
         (workspace ? ", " + std::to_string(workspace >> 10) + " KiB workspace" : "") +
         (plan.timed && algo == plan.algo ? ", the fastest of every algorithm timed (LAZYFUSE_CONV_BENCHMARK=1)" : "") + " (" +
         cudnn_status() + ")";
}

}  // namespace

lf::Status cudnn_output_nhwc(const backend::ConvCall& c, int device, bool* nhwc) {
  std::lock_guard<std::mutex> lock(plans_mutex());
  PerDevice* dev = nullptr;
  Plan* plan = nullptr;
  if (lf::Status s = find_plan(c, device, &dev, &plan); !s.ok()) return s;
  *nhwc = plan->nhwc;
  return lf::OkStatus();
}

lf::Status cudnn_conv2d(const backend::ConvCall& c, void* y, int device, std::string* how) {
  std::lock_guard<std::mutex> lock(plans_mutex());
  PerDevice* dev = nullptr;
  Plan* plan = nullptr;
  if (lf::Status s = find_plan(c, device, &dev, &plan); !s.ok()) return s;
  const dnn::Api& a = loaded().api;
  Operands o;
  if (lf::Status s = operands(c, *dev, *plan, plan->workspace, device, nullptr, &o); !s.ok()) return s;
  float one32 = 1, zero32 = 0;
  double one64 = 1, zero64 = 0;
  bool f64 = c.dtype == DType::Float64;
  const void* alpha = f64 ? static_cast<const void*>(&one64) : &one32;
  const void* beta = f64 ? static_cast<const void*>(&zero64) : &zero32;
  LF_DNN_RETURN_IF_ERROR(a.forward(dev->handle, alpha, plan->x, o.x, plan->w, o.w, plan->conv, plan->algo, o.workspace,
                                   plan->workspace, beta, plan->y, y));
  *how = "cuDNN " + describe(*plan, plan->algo, plan->workspace);
  return lf::OkStatus();
}

lf::Status cudnn_conv2d_bias_act(const backend::ConvCall& c, void* y, const void* bias, const void* z, bool z_nchw,
                                 bool relu, int device, std::string* how) {
  std::lock_guard<std::mutex> lock(plans_mutex());
  PerDevice* dev = nullptr;
  Plan* plan = nullptr;
  if (lf::Status s = find_plan(c, device, &dev, &plan); !s.ok()) return s;
  if (!plan->fused_declined.ok()) return plan->fused_declined;
  const dnn::Api& a = loaded().api;
  // A refusal is remembered: the next call of this shape goes straight to the unfused path.
  auto declined = [&](lf::Status s) {
    plan->fused_declined = s;
    return s;
  };
  int data = 0, compute = 0;
  data_type(c.dtype, &data, &compute);
  if (!plan->bias) {
    int bd[4] = {1, static_cast<int>(c.out_channels), 1, 1};
    int bs[4] = {bd[1], 1, 1, 1};
    if (lf::Status s = check(a.create_tensor(&plan->bias), "cudnnCreateTensorDescriptor"); !s.ok()) return declined(s);
    if (lf::Status s = check(a.set_tensor_nd(plan->bias, data, 4, bd, bs), "cudnnSetTensorNdDescriptor(bias)"); !s.ok())
      return declined(s);
  }
  dnn::ActivationDesc& act = relu ? dev->relu : dev->identity;
  if (!act) {
    // NaN propagates through the ReLU, as relu(NaN) = NaN in LazyFuse and PyTorch.
    if (lf::Status s = check(a.create_activation(&act), "cudnnCreateActivationDescriptor"); !s.ok()) return s;
    if (lf::Status s = check(a.set_activation(act, relu ? dnn::kActivationRelu : dnn::kActivationIdentity,
                                              dnn::kPropagateNan, 0.0), "cudnnSetActivationDescriptor");
        !s.ok()) {
      act = nullptr;
      return s;
    }
  }
  int algo = plan->algo;
  size_t workspace = plan->workspace;
  if (!relu) {
    // cuDNN runs the identity activation with implicit precomputed GEMM only.
    algo = dnn::kAlgoImplicitPrecompGemm;
    if (plan->identity_workspace == SIZE_MAX) {
      size_t bytes = 0;
      if (lf::Status s = check(a.workspace_size(dev->handle, plan->x, plan->w, plan->conv, plan->y, algo, &bytes),
                               "cudnnGetConvolutionForwardWorkspaceSize(implicit precomputed GEMM)");
          !s.ok())
        return declined(s);
      plan->identity_workspace = bytes;
    }
    workspace = plan->identity_workspace;
  }
  Operands o;
  if (z_nchw && !plan->nhwc) z_nchw = false;  // z is in y's layout
  if (lf::Status s = operands(c, *dev, *plan, workspace, device, z_nchw ? z : nullptr, &o); !s.ok()) return s;
  z = z_nchw ? o.z : z;
  float one32 = 1, zero32 = 0;
  double one64 = 1, zero64 = 0;
  bool f64 = c.dtype == DType::Float64;
  const void* alpha1 = f64 ? static_cast<const void*>(&one64) : &one32;
  const void* alpha2 = z ? alpha1 : f64 ? static_cast<const void*>(&zero64) : &zero32;
  // Without a residual, alpha2 = 0 and z is y (as PyTorch passes them).
  if (lf::Status s = check(a.bias_act_forward(dev->handle, alpha1, plan->x, o.x, plan->w, o.w, plan->conv, algo,
                                              o.workspace, workspace, alpha2, plan->y, z ? z : y, plan->bias,
                                              bias, act, plan->y, y),
                           "cudnnConvolutionBiasActivationForward");
      !s.ok())
    return declined(s);
  *how = std::string("cuDNN fused convolution + bias") + (z ? " + residual" : "") + (relu ? " + relu" : "") + ", " +
         describe(*plan, algo, workspace) + (z_nchw ? ", the residual transformed from NCHW" : "");
  return lf::OkStatus();
}

namespace {

// Builds graph-API descriptors, each kept in `keep`; after the first failing call every call does
// nothing, and `status` says which call failed.
struct GraphBuilder {
  const dnn::Api& a;
  std::vector<dnn::BackendDesc>* keep;
  lf::Status status;

  dnn::BackendDesc make(int type, const char* what) {
    dnn::BackendDesc d = nullptr;
    if (status.ok()) status = check(a.be_create(type, &d), what);
    if (status.ok()) keep->push_back(d);
    return status.ok() ? d : nullptr;
  }
  void set(dnn::BackendDesc d, int name, int type, int64_t count, const void* values, const char* what) {
    if (status.ok()) status = check(a.be_set(d, name, type, count, values), what);
  }
  void set_desc(dnn::BackendDesc d, int name, dnn::BackendDesc value, const char* what) {
    set(d, name, dnn::be::kTypeBackendDesc, 1, &value, what);
  }
  void finalize(dnn::BackendDesc d, const char* what) {
    if (status.ok()) status = check(a.be_finalize(d), what);
  }
  // A 4-D tensor; a virtual one is an intermediate no memory holds.
  dnn::BackendDesc tensor(int64_t uid, int data, const Shape& dims, const Shape& strides, bool is_virtual) {
    dnn::BackendDesc t = make(dnn::be::kTensorDesc, "the graph's tensor");
    int64_t alignment = 16;
    set(t, dnn::be::kTensorDataType, dnn::be::kTypeDataType, 1, &data, "the tensor's type");
    set(t, dnn::be::kTensorDims, dnn::be::kTypeInt64, 4, dims.data(), "the tensor's dims");
    set(t, dnn::be::kTensorStrides, dnn::be::kTypeInt64, 4, strides.data(), "the tensor's strides");
    set(t, dnn::be::kTensorUid, dnn::be::kTypeInt64, 1, &uid, "the tensor's id");
    set(t, dnn::be::kTensorAlignment, dnn::be::kTypeInt64, 1, &alignment, "the tensor's alignment");
    set(t, dnn::be::kTensorVirtual, dnn::be::kTypeBoolean, 1, &is_virtual, "the tensor's virtual flag");
    finalize(t, "the graph's tensor");
    return t;
  }
  // y = mode(x[, b][, t]) in float32.
  dnn::BackendDesc pointwise(int mode, dnn::BackendDesc x, dnn::BackendDesc b, dnn::BackendDesc t, dnn::BackendDesc y) {
    dnn::BackendDesc pw = make(dnn::be::kPointwiseDesc, "a pointwise descriptor");
    int prec = dnn::kFloat;
    set(pw, dnn::be::kPointwiseMode, dnn::be::kTypePointwiseMode, 1, &mode, "the pointwise mode");
    set(pw, dnn::be::kPointwiseMathPrec, dnn::be::kTypeDataType, 1, &prec, "the pointwise precision");
    finalize(pw, "a pointwise descriptor");
    dnn::BackendDesc op = make(dnn::be::kPointwiseOpDesc, "a pointwise operation");
    set_desc(op, dnn::be::kPwOpDesc, pw, "the operation's pointwise descriptor");
    set_desc(op, dnn::be::kPwOpX, x, "the pointwise x");
    if (b) set_desc(op, dnn::be::kPwOpB, b, "the pointwise b");
    if (t) set_desc(op, dnn::be::kPwOpT, t, "the pointwise mask");
    set_desc(op, dnn::be::kPwOpY, y, "the pointwise y");
    finalize(op, "a pointwise operation");
    return op;
  }
};

// The variant pack's tensor ids.
enum : int64_t { kUidX = 1, kUidW, kUidScale, kUidBias, kUidZ, kUidY, kUidVirtual = 100 };

// Whether an engine's numerical notes allow it: not FFT or Winograd (they mix a tile's inputs, so
// one inf would make NaN of finite outputs: make_plan's rule), nor a reduced-precision sum.
bool engine_allowed(const dnn::Api& a, dnn::BackendDesc cfg, std::vector<dnn::BackendDesc>* keep, int64_t* index) {
  dnn::BackendDesc engine = nullptr;
  if (a.be_create(dnn::be::kEngineDesc, &engine) != 0) return false;
  keep->push_back(engine);
  int64_t n = 0;
  if (a.be_get(cfg, dnn::be::kEngineCfgEngine, dnn::be::kTypeBackendDesc, 1, &n, &engine) != 0) return false;
  int notes[16];
  if (a.be_get(engine, dnn::be::kEngineNumericalNote, dnn::be::kTypeNumericalNote, 16, &n, notes) != 0) return false;
  for (int64_t i = 0; i < n; ++i)
    if (notes[i] == dnn::be::kNoteFft || notes[i] == dnn::be::kNoteWinograd || notes[i] == dnn::be::kNoteWinograd4x4 ||
        notes[i] == dnn::be::kNoteWinograd6x6 || notes[i] == dnn::be::kNoteReducedPrecisionReduction ||
        notes[i] == dnn::be::kNoteDownConvertInputs)
      return false;
  a.be_get(engine, dnn::be::kEngineGlobalIndex, dnn::be::kTypeInt64, 1, &n, index);
  return true;
}

// conv (float32 accumulation) -> * scale -> + bias [-> + z] [-> relu] -> y in the call's dtype,
// every step in float32 on virtual tensors; relu keeps NaN: select(v != v, v, relu(v)), as
// cuDNN's relu is max(v, 0), which drops it.
lf::Status make_scaled_plan(const backend::ConvCall& c, dnn::Handle handle, bool relu, bool with_z, DType scale_dtype,
                            DType bias_dtype, ScaledPlan* out) {
  const dnn::Api& a = loaded().api;
  GraphBuilder g{a, &out->descriptors, lf::OkStatus()};
  int data = 0, compute = 0;
  data_type(c.dtype, &data, &compute);
  const auto& p = c.params;
  Shape xd{c.batch, c.channels, c.height, c.width}, yd{c.batch, c.out_channels, c.out_h, c.out_w};
  Shape wd{c.out_channels, c.channels, c.kernel_h, c.kernel_w}, cd{1, c.out_channels, 1, 1};
  Shape ys = ir::channels_last_strides(yd), cs{c.out_channels, 1, c.out_channels, c.out_channels};
  dnn::BackendDesc x = g.tensor(kUidX, data, xd, ir::channels_last_strides(xd), false);
  // The filter KRSC (transformed each call where it is OIHW: operands()). Described with OIHW
  // strides, engine 4 finalized but computed wrong values, and more slowly (H200, cuDNN 9.14,
  // 2026-11-28: ConvFold.* failed, ResNet-18's 3x3 convolutions took up to 1.6x as long).
  dnn::BackendDesc w = g.tensor(kUidW, data, wd, ir::channels_last_strides(wd), false);
  auto type_of = [&](DType d) { return d == DType::Float32 ? static_cast<int>(dnn::kFloat) : data; };
  dnn::BackendDesc scale = g.tensor(kUidScale, type_of(scale_dtype), cd, cs, false);
  dnn::BackendDesc bias = g.tensor(kUidBias, type_of(bias_dtype), cd, cs, false);
  dnn::BackendDesc z = with_z ? g.tensor(kUidZ, data, yd, ys, false) : nullptr;
  dnn::BackendDesc y = g.tensor(kUidY, data, yd, ys, false);
  int64_t next = kUidVirtual;
  auto temp = [&](int type) { return g.tensor(next++, type, yd, ys, true); };

  dnn::BackendDesc conv = g.make(dnn::be::kConvolutionDesc, "the convolution descriptor");
  int64_t dims = 2, mode = dnn::kCrossCorrelation;
  int64_t dil[2] = {p.dil_h, p.dil_w}, stride[2] = {p.stride_h, p.stride_w};
  int64_t pre[2] = {p.pad_top, p.pad_left}, post[2] = {p.pad_bottom, p.pad_right};
  g.set(conv, dnn::be::kConvCompType, dnn::be::kTypeDataType, 1, &compute, "the convolution's compute type");
  g.set(conv, dnn::be::kConvMode, dnn::be::kTypeConvolutionMode, 1, &mode, "the convolution's mode");
  g.set(conv, dnn::be::kConvSpatialDims, dnn::be::kTypeInt64, 1, &dims, "the convolution's dims");
  g.set(conv, dnn::be::kConvDilations, dnn::be::kTypeInt64, 2, dil, "the convolution's dilations");
  g.set(conv, dnn::be::kConvFilterStrides, dnn::be::kTypeInt64, 2, stride, "the convolution's strides");
  g.set(conv, dnn::be::kConvPrePaddings, dnn::be::kTypeInt64, 2, pre, "the convolution's paddings");
  g.set(conv, dnn::be::kConvPostPaddings, dnn::be::kTypeInt64, 2, post, "the convolution's paddings");
  g.finalize(conv, "the convolution descriptor");

  std::vector<dnn::BackendDesc> ops;
  dnn::BackendDesc acc = temp(dnn::kFloat);
  dnn::BackendDesc fwd = g.make(dnn::be::kConvForwardOpDesc, "the convolution operation");
  float one = 1, zero = 0;
  g.set(fwd, dnn::be::kConvFwdAlpha, dnn::be::kTypeFloat, 1, &one, "the convolution's alpha");
  g.set(fwd, dnn::be::kConvFwdBeta, dnn::be::kTypeFloat, 1, &zero, "the convolution's beta");
  g.set_desc(fwd, dnn::be::kConvFwdConvDesc, conv, "the convolution operation's descriptor");
  g.set_desc(fwd, dnn::be::kConvFwdX, x, "the convolution's x");
  g.set_desc(fwd, dnn::be::kConvFwdW, w, "the convolution's filter");
  g.set_desc(fwd, dnn::be::kConvFwdY, acc, "the convolution's output");
  g.finalize(fwd, "the convolution operation");
  ops.push_back(fwd);
  // Each step writes a new virtual tensor, the last one y.
  dnn::BackendDesc v = acc;
  auto step = [&](int op_mode, dnn::BackendDesc b, dnn::BackendDesc t, bool last) {
    dnn::BackendDesc r = last ? y : temp(dnn::kFloat);
    ops.push_back(g.pointwise(op_mode, v, b, t, r));
    v = r;
  };
  step(dnn::be::kMul, scale, nullptr, false);
  step(dnn::be::kAdd, bias, nullptr, !with_z && !relu);
  if (with_z) step(dnn::be::kAdd, z, nullptr, !relu);
  if (relu) {
    dnn::BackendDesc nan = temp(dnn::be::kDataBoolean), r = temp(dnn::kFloat);
    ops.push_back(g.pointwise(dnn::be::kCmpNeq, v, v, nullptr, nan));
    ops.push_back(g.pointwise(dnn::be::kReluFwd, v, nullptr, nullptr, r));
    ops.push_back(g.pointwise(dnn::be::kBinarySelect, v, r, nan, y));  // select(mask, x, b) is mask ? x : b
  }

  dnn::BackendDesc graph = g.make(dnn::be::kOperationGraphDesc, "the operation graph");
  g.set(graph, dnn::be::kGraphHandle, dnn::be::kTypeHandle, 1, &handle, "the graph's handle");
  g.set(graph, dnn::be::kGraphOps, dnn::be::kTypeBackendDesc, static_cast<int64_t>(ops.size()), ops.data(),
        "the graph's operations");
  g.finalize(graph, "the operation graph");
  dnn::BackendDesc heur = g.make(dnn::be::kEngineHeurDesc, "the engine heuristic");
  int64_t heur_mode = dnn::be::kHeurModeA;
  g.set_desc(heur, dnn::be::kHeurOperationGraph, graph, "the heuristic's graph");
  g.set(heur, dnn::be::kHeurMode, dnn::be::kTypeHeurMode, 1, &heur_mode, "the heuristic's mode");
  g.finalize(heur, "the engine heuristic");
  if (!g.status.ok()) return g.status;
  int64_t count = 0;
  LF_DNN_RETURN_IF_ERROR(a.be_get(heur, dnn::be::kHeurResults, dnn::be::kTypeBackendDesc, 0, &count, nullptr));
  count = std::min<int64_t>(count, 16);
  std::vector<dnn::BackendDesc> cfgs;
  for (int64_t i = 0; i < count; ++i) cfgs.push_back(g.make(dnn::be::kEngineCfgDesc, "an engine configuration"));
  if (!g.status.ok()) return g.status;
  int64_t got = 0;
  if (count > 0)
    LF_DNN_RETURN_IF_ERROR(a.be_get(heur, dnn::be::kHeurResults, dnn::be::kTypeBackendDesc, count, &got, cfgs.data()));
  // The heuristic's first configuration that is allowed and finalizes (runtime-compiled engines
  // compile here, once a shape: about 0.4 s each on the H200 without the driver's cache), or with
  // LAZYFUSE_CONV_BENCHMARK=1 its first 4, which the first call times. Over ResNet-18 bfloat16 the
  // fastest of 4 was up to 2.3x faster than the first in a shape, but the first call took 33 s.
  const size_t candidates = rt::config().conv_benchmark ? 4 : 1;
  int tried = 0;
  for (int64_t i = 0; i < got && out->candidates.size() < candidates; ++i) {
    int64_t index = -1;
    if (!engine_allowed(a, cfgs[static_cast<size_t>(i)], &out->descriptors, &index)) continue;
    ++tried;
    dnn::BackendDesc plan = nullptr;
    if (a.be_create(dnn::be::kExecutionPlanDesc, &plan) != 0) continue;
    out->descriptors.push_back(plan);
    int64_t ws = 0, n = 0;
    if (a.be_set(plan, dnn::be::kPlanHandle, dnn::be::kTypeHandle, 1, &handle) != 0 ||
        a.be_set(plan, dnn::be::kPlanEngineConfig, dnn::be::kTypeBackendDesc, 1, &cfgs[static_cast<size_t>(i)]) != 0 ||
        a.be_finalize(plan) != 0 ||
        a.be_get(plan, dnn::be::kPlanWorkspaceSize, dnn::be::kTypeInt64, 1, &n, &ws) != 0 || ws < 0 ||
        static_cast<size_t>(ws) > kMaxWorkspaceBytes)
      continue;
    out->candidates.push_back({plan, static_cast<size_t>(ws), index});
  }
  if (!out->candidates.empty()) return lf::OkStatus();
  return lf::UnimplementedError("cuDNN's graph API has no engine for the convolution + scale + bias" +
                                std::string(with_z ? " + residual" : "") + (relu ? " + relu" : "") + " (" +
                                std::to_string(got) + " configurations, " + std::to_string(tried) +
                                " without FFT, Winograd or reduced precision)");
}

bool aligned16(const void* p) { return p == nullptr || reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

bool cudnn_scale_epilogue_available() {
  return loaded().error.empty();
}

lf::Status cudnn_conv2d_scale_bias_act(const backend::ConvCall& c, void* y, const void* scale, DType scale_dtype,
                                       const void* bias, DType bias_dtype, const void* z, bool z_nchw, bool relu,
                                       int device, std::string* how) {
  if (dtype_size(c.dtype) != 2) return lf::UnimplementedError("cuDNN's scaled epilogue: 16-bit floats only");
  if (c.params.groups != 1) return lf::UnimplementedError("cuDNN's scaled epilogue: a grouped convolution");
  // A network's stem (3 channels) ran 0.44-0.46 ms in the graph against 0.37 for the convolution
  // alone and an epilogue pass of about 0.05 (ResNet-18 B32 bfloat16, H200): too close for the
  // timing below to decide the same way every run, while the network measured 1.14 ms with the
  // stem declined and 1.28-1.30 with it in the graph (4 runs each).
  if (c.channels < 8) return lf::UnimplementedError("cuDNN's scaled epilogue: fewer than 8 input channels (measured slower)");
  for (DType d : {scale_dtype, bias_dtype})
    if (d != c.dtype && d != DType::Float32)
      return lf::UnimplementedError(std::string("cuDNN's scaled epilogue: a ") + dtype_name(d) + " scale or bias");
  std::lock_guard<std::mutex> lock(plans_mutex());
  PerDevice* dev = nullptr;
  Plan* plan = nullptr;
  if (lf::Status s = find_plan(c, device, &dev, &plan); !s.ok()) return s;
  if (!plan->nhwc) return lf::UnimplementedError("cuDNN's scaled epilogue: an NCHW plan");
  // The operands cuDNN reads where they are (a transformed one is in aligned scratch), before a
  // plan is made for nothing (not remembered: an offset's alignment is not the shape's).
  const void* in_place[] = {plan->x_bytes ? nullptr : at(c.x, c.dtype), plan->w_bytes ? nullptr : at(c.w, c.dtype),
                            scale, bias, z_nchw ? nullptr : z, y};
  for (const void* ptr : in_place)
    if (!aligned16(ptr)) return lf::UnimplementedError("cuDNN's scaled epilogue: an operand not 16-byte aligned");
  ScaledPlan& sp = plan->scaled[ScaledPlan::key(relu, z != nullptr, scale_dtype, bias_dtype)];
  if (sp.candidates.empty() && sp.declined.ok())
    sp.declined = make_scaled_plan(c, dev->handle, relu, z != nullptr, scale_dtype, bias_dtype, &sp);
  if (!sp.declined.ok()) return sp.declined;
  const dnn::Api& a = loaded().api;
  size_t workspace = sp.tuned ? 0 : plan->workspace;  // the first call times the legacy convolution too
  for (const ScaledPlan::Candidate& k : sp.candidates) workspace = std::max(workspace, k.workspace);
  Operands o;
  if (lf::Status s = operands(c, *dev, *plan, workspace, device, z_nchw ? z : nullptr, &o); !s.ok()) return s;
  z = z_nchw ? o.z : z;
  std::vector<int64_t> uids{kUidX, kUidW, kUidScale, kUidBias, kUidY};
  std::vector<void*> ptrs{const_cast<void*>(o.x), const_cast<void*>(o.w), const_cast<void*>(scale),
                          const_cast<void*>(bias), y};
  if (z) {
    uids.push_back(kUidZ);
    ptrs.push_back(const_cast<void*>(z));
  }
  // The variant pack binds this call's addresses: made and destroyed each call.
  dnn::BackendDesc pack = nullptr;
  LF_DNN_RETURN_IF_ERROR(a.be_create(dnn::be::kVariantPackDesc, &pack));
  struct Destroy {
    const dnn::Api& a;
    dnn::BackendDesc d;
    ~Destroy() { a.be_destroy(d); }
  } destroy{a, pack};
  void* ws = workspace ? o.workspace : nullptr;
  LF_DNN_RETURN_IF_ERROR(a.be_set(pack, dnn::be::kPackUids, dnn::be::kTypeInt64, static_cast<int64_t>(uids.size()), uids.data()));
  LF_DNN_RETURN_IF_ERROR(a.be_set(pack, dnn::be::kPackPointers, dnn::be::kTypeVoidPtr, static_cast<int64_t>(ptrs.size()), ptrs.data()));
  LF_DNN_RETURN_IF_ERROR(a.be_set(pack, dnn::be::kPackWorkspace, dnn::be::kTypeVoidPtr, 1, &ws));
  LF_DNN_RETURN_IF_ERROR(a.be_finalize(pack));
  if (!sp.tuned) {
    // The first call times each candidate on its own operands, and the legacy convolution alone:
    // where the fastest candidate takes longer than that convolution and a pass of the epilogue
    // over its output would (the stem of ResNet-18, 3 input channels: 0.45 ms on the H200), the
    // shape declines and the caller runs those two. Not inside a stream capture, where no event
    // can be waited for (the heuristic's first then).
    const rt::cu::Api& cu = rt::cu::api();
    rt::cu::CUstream stream = rt::cu::device_context(device).stream;
    // Without cuStreamIsCapturing (an old driver), not capturing: a shape's first call is an eager
    // one (a flush plan is recorded on its signature's second sighting), and a capture broken by
    // the timing falls back to replaying step by step.
    int capturing = 0;
    if (cu.cuStreamIsCapturing && cu.cuStreamIsCapturing(stream, &capturing) != 0) capturing = 1;
    sp.tuned = !capturing;  // else the next call outside a capture times it
    rt::cu::CUevent start = nullptr, stop = nullptr;
    bool events = !capturing && cu.cuEventCreate(&start, 0) == 0 && cu.cuEventCreate(&stop, 0) == 0;
    // The best of two runs after a warm-up; -1 when a run failed.
    auto time = [&](auto&& run) {
      float best_ms = -1;
      for (int rep = 0; rep < 3; ++rep) {
        float ms = 0;
        if (cu.cuEventRecord(start, stream) != 0 || run() != 0 || cu.cuEventRecord(stop, stream) != 0 ||
            cu.cuEventSynchronize(stop) != 0 || cu.cuEventElapsedTime(&ms, start, stop) != 0)
          return -1.0f;
        if (rep > 0 && (best_ms < 0 || ms < best_ms)) best_ms = ms;
      }
      return best_ms;
    };
    size_t best = 0;
    for (size_t i = 0; events && i < sp.candidates.size(); ++i) {
      ScaledPlan::Candidate& k = sp.candidates[i];
      k.ms = time([&] { return a.be_execute(dev->handle, k.plan, pack); });
      if (k.ms >= 0 && (sp.candidates[best].ms < 0 || k.ms < sp.candidates[best].ms)) best = i;
      char line[64];
      std::snprintf(line, sizeof line, "%sengine %lld %.3f ms", sp.timings.empty() ? "" : ", ",
                    static_cast<long long>(k.engine), static_cast<double>(k.ms));
      sp.timings += line;
    }
    float legacy = -1;
    if (events && plan->workspace <= workspace) {
      float one = 1, zero = 0;
      legacy = time([&] {
        return a.forward(dev->handle, &one, plan->x, o.x, plan->w, o.w, plan->conv, plan->algo, o.workspace,
                         plan->workspace, &zero, plan->y, y);
      });
    }
    if (start) cu.cuEventDestroy(start);
    if (stop) cu.cuEventDestroy(stop);
    if (events) sp.candidates = {sp.candidates[best]};
    // The epilogue kernel reads the output (and the residual) and writes it: at 2 TB/s (two thirds
    // of the H100's copy rate), plus a launch. (With a margin of a fifth of the convolution's time
    // against noise, ResNet-18's stem stayed in the graph, 0.44 ms, and the network took 1.28 ms
    // instead of 1.14 on the H200.)
    const double pass_ms = static_cast<double>(c.y_bytes * (z ? 3 : 2)) / 2e9 + 0.003;
    const float graph = sp.candidates.front().ms;
    if (legacy >= 0 && graph >= 0 && graph > legacy + pass_ms) {
      char line[160];
      std::snprintf(line, sizeof line, "the graph's fastest engine takes %.3f ms, the convolution alone %.3f ms and its epilogue about %.3f",
                    static_cast<double>(graph), static_cast<double>(legacy), pass_ms);
      sp.declined = lf::UnimplementedError(line);
      return sp.declined;
    }
  }
  const ScaledPlan::Candidate& k = sp.candidates.front();
  LF_DNN_RETURN_IF_ERROR(a.be_execute(dev->handle, k.plan, pack));
  *how = std::string("cuDNN graph: convolution * scale + bias") + (z ? " + residual" : "") + (relu ? " + relu" : "") +
         " in float32, engine " + std::to_string(k.engine) +
         (sp.timings.empty() ? "" : " (timed: " + sp.timings + ")") + (plan->x_bytes ? ", x transformed to NHWC" : "") +
         (plan->w_bytes ? ", the filter transformed to KRSC" : "") + (z_nchw ? ", the residual transformed from NCHW" : "") +
         (k.workspace ? ", " + std::to_string(k.workspace >> 10) + " KiB workspace" : "") + " (" + cudnn_status() + ")";
  sp.timings.clear();  // said once
  return lf::OkStatus();
}

}  // namespace lf::cuda
