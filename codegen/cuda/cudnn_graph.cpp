// cuDNN 9's graph API for a 16-bit convolution's float32 scale, bias and activation epilogue
// (cudnn_conv2d_scale_bias_act in cudnn.h), on the legacy API's plans and operands (cudnn.cpp).
#include "codegen/cuda/cudnn.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "codegen/cuda/cudnn_abi.h"
#include "codegen/cuda/cudnn_internal.h"
#include "codegen/ir/node.h"
#include "runtime/config.h"
#include "runtime/cuda_driver.h"

namespace lf::cuda {
using namespace cudnn_detail;

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
