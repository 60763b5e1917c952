// cuDNN 9's legacy convolution API through dlopen (see cudnn.h), and what its graph API (cudnn_graph.cpp)
// shares with it (cudnn_internal.h). Written against cuDNN 9.19's headers; run on the H100 and H200 (cuDNN 9.14 there).
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
#include "codegen/cuda/cudnn_internal.h"
#include "codegen/ir/node.h"
#include "runtime/config.h"
#include "runtime/cuda_driver.h"
#include "runtime/shared_library.h"
#include "runtime/storage.h"

namespace lf::cuda {
using namespace cudnn_detail;

namespace cudnn_detail {

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

}  // namespace cudnn_detail

namespace {

// Float16 convolutions of fewer input channels than this run NCHW (find_plan says why).
constexpr int64_t kFloat16NhwcMinChannels = 16;

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

constexpr size_t align_up(size_t n) { return (n + 255) & ~size_t{255}; }

}  // namespace

namespace cudnn_detail {

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

const void* at(const kir::GemmOperand& o, DType d) {
  return static_cast<const char*>(o.data) + o.offset * static_cast<int64_t>(dtype_size(d));
}

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

}  // namespace cudnn_detail

namespace {

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

}  // namespace lf::cuda
