#include "runtime/cuda_driver.h"


#include <atomic>
#include <cstdlib>

#include <memory>
#include <mutex>
#include <string>

#include "lazyfuse/types.h"
#include "runtime/config.h"
#include "runtime/launch_queue.h"
#include "runtime/shared_library.h"
#include "runtime/thread_pool.h"

namespace lf::rt {
namespace {

// CUdevice_attribute values (cuda.h).
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

struct Loaded {
  cu::Api api{};
  CudaStatus status;
};

Loaded load() {
  Loaded out;
  CudaStatus& st = out.status;
  cu::Api& d = out.api;
  SharedLibrary lib = SharedLibrary::open({"libcuda.so.1"});
  if (!lib.loaded()) {
    st.reason = "libcuda.so.1 not found (no NVIDIA driver on this machine)";
    return out;
  }
  auto need = [&](auto& fn, const char* name, const char* fallback = nullptr) { lib.bind(fn, name, fallback); };
  need(d.cuInit, "cuInit");
  need(d.cuDriverGetVersion, "cuDriverGetVersion");
  need(d.cuDeviceGetCount, "cuDeviceGetCount");
  need(d.cuDeviceGet, "cuDeviceGet");
  need(d.cuDeviceGetName, "cuDeviceGetName");
  need(d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  need(d.cuDeviceTotalMem, "cuDeviceTotalMem_v2");
  need(d.cuGetErrorString, "cuGetErrorString");
  need(d.cuGetErrorName, "cuGetErrorName");
  need(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  need(d.cuCtxSetCurrent, "cuCtxSetCurrent");
  need(d.cuCtxGetCurrent, "cuCtxGetCurrent");
  need(d.cuCtxSynchronize, "cuCtxSynchronize");
  need(d.cuMemAlloc, "cuMemAlloc_v2");
  need(d.cuMemFree, "cuMemFree_v2");
  need(d.cuMemGetInfo, "cuMemGetInfo_v2");
  need(d.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  need(d.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  need(d.cuMemcpyDtoD, "cuMemcpyDtoD_v2");
  need(d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  need(d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  need(d.cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2");
  need(d.cuMemsetD8Async, "cuMemsetD8Async");
  need(d.cuModuleLoadData, "cuModuleLoadData");
  need(d.cuModuleGetFunction, "cuModuleGetFunction");
  need(d.cuFuncSetAttribute, "cuFuncSetAttribute");
  need(d.cuLaunchKernel, "cuLaunchKernel");
  need(d.cuStreamCreate, "cuStreamCreate");
  need(d.cuStreamSynchronize, "cuStreamSynchronize");
  need(d.cuEventCreate, "cuEventCreate");
  need(d.cuEventRecord, "cuEventRecord");
  need(d.cuEventSynchronize, "cuEventSynchronize");
  need(d.cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
  need(d.cuEventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
  need(d.cuStreamWaitEvent, "cuStreamWaitEvent");
  if (!lib.missing().empty()) {
    st.reason = "libcuda.so.1 lacks Driver API entry points: " + lib.missing();
    return out;
  }
  // Optional: without graphs, replayed flush plans launch kernel by kernel. The unversioned names
  // on purpose: they take CUDA_KERNEL_NODE_PARAMS v1 (KernelNodeParams), where CUDA 12's cuda.h
  // maps the names to the _v2 entry points and their larger struct.
  d.graphs = lib.bind(d.cuGraphCreate, "cuGraphCreate") && lib.bind(d.cuGraphAddKernelNode, "cuGraphAddKernelNode") &&
             lib.bind(d.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags") &&
             lib.bind(d.cuGraphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams") &&
             lib.bind(d.cuGraphLaunch, "cuGraphLaunch") && lib.bind(d.cuGraphExecDestroy, "cuGraphExecDestroy") &&
             lib.bind(d.cuGraphDestroy, "cuGraphDestroy");
  if (!lib.bind(d.cuMemHostAlloc, "cuMemHostAlloc")) d.cuMemHostAlloc = nullptr;
  if (!lib.bind(d.cuStreamIsCapturing, "cuStreamIsCapturing")) d.cuStreamIsCapturing = nullptr;
  d.capture = d.graphs && lib.bind(d.cuStreamBeginCapture, "cuStreamBeginCapture_v2") &&
              lib.bind(d.cuStreamEndCapture, "cuStreamEndCapture");
  if (cu::CUresult r = d.cuInit(0); r != 0) {
    const char* s = nullptr;
    d.cuGetErrorString(r, &s);
    st.reason = std::string("cuInit failed: ") + (s ? s : std::to_string(r));
    return out;
  }
  d.cuDriverGetVersion(&st.driver_version);
  int count = 0;
  if (cu::CUresult r = d.cuDeviceGetCount(&count); r != 0 || count == 0) {
    st.reason = r != 0 ? "cuDeviceGetCount failed" : "no CUDA device";
    return out;
  }
  for (int i = 0; i < count; ++i) {
    CudaDeviceInfo info;
    info.index = i;
    cu::CUdevice dev;
    if (d.cuDeviceGet(&dev, i) != 0) continue;
    char name[256] = {};
    d.cuDeviceGetName(name, sizeof name, dev);
    info.name = name;
    d.cuDeviceGetAttribute(&info.sm_major, kAttrComputeCapabilityMajor, dev);
    d.cuDeviceGetAttribute(&info.sm_minor, kAttrComputeCapabilityMinor, dev);
    d.cuDeviceGetAttribute(&info.multiprocessors, kAttrMultiprocessorCount, dev);
    d.cuDeviceTotalMem(&info.total_memory, dev);
    st.devices.push_back(std::move(info));
  }
  st.available = !st.devices.empty();
  if (!st.available) st.reason = "no usable CUDA device";
  return out;  // the library stays loaded for the process's lifetime
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const CudaStatus& cuda_status() { return loaded().status; }

namespace cu {

const Api& api() {
  const Loaded& l = loaded();
  if (!l.status.available) throw Error("CUDA is unavailable: " + l.status.reason);
  return l.api;
}

std::string error_text(CUresult r) {
  const Loaded& l = loaded();
  const char* name = nullptr;
  const char* text = nullptr;
  if (l.api.cuGetErrorName) l.api.cuGetErrorName(r, &name);
  if (l.api.cuGetErrorString) l.api.cuGetErrorString(r, &text);
  return std::string(name ? name : "CUresult " + std::to_string(r)) + (text ? std::string(": ") + text : "");
}

namespace {

std::string describe_failure(const char* what, int result) {
  return std::string("CUDA driver call ") + what + " failed: " + error_text(result);
}

}  // namespace

void check(CUresult r, const std::string& call) {
  if (r != 0) throw Error(describe_failure(call.c_str(), r));
}

namespace {

// The launch thread's queue, made at the first graph launch; null until then. Never destroyed
// (a thread still flushing during exit may use it): an exit handler, registered after the driver
// was initialized and so run before the driver's own, submits what is queued and stops the thread.
std::atomic<LaunchQueue*> g_launches{nullptr};

void stop_launch_thread() {
  if (LaunchQueue* q = g_launches.load(std::memory_order_acquire)) q->shut_down();
}

LaunchQueue& launch_queue() {
  static LaunchQueue* queue = [] {
    LaunchQueue::Options o;
    o.describe = describe_failure;
    // On one core the worker would take turns with the thread it relieves, and spin in its turns
    // (the chain of bench/RESULTS.md took 4.4-6.6 us a call that way, against 5.2 without it).
    o.enabled = usable_cores() > 1;
    auto* q = new LaunchQueue(o);
    g_launches.store(q, std::memory_order_release);
    std::atexit(stop_launch_thread);
    return q;
  }();
  return *queue;
}

// The launch a queued call makes, with the context current on whichever thread runs it.
int graph_launch_call(void* exec, void* stream, void* ctx) {
  const Api& d = loaded().api;
  CUcontext current = nullptr;
  if (d.cuCtxGetCurrent(&current) != 0 || current != ctx) {
    if (CUresult r = d.cuCtxSetCurrent(static_cast<CUcontext>(ctx)); r != 0) return r;
  }
  return d.cuGraphLaunch(static_cast<CUgraphExec>(exec), static_cast<CUstream>(stream));
}

}  // namespace

void drain_launches(bool rethrow) {
  if (LaunchQueue* q = g_launches.load(std::memory_order_acquire)) q->drain(rethrow);
}

void drain_launches_to(uint64_t queued) {
  if (LaunchQueue* q = g_launches.load(std::memory_order_acquire)) q->drain_to(queued);
}

bool launch_graph(CUgraphExec exec, const DeviceContext& ctx, uint64_t* queued) {
  LaunchQueue::Call call;
  call.fn = graph_launch_call;
  call.a = exec;
  call.b = ctx.stream;
  call.c = ctx.ctx;
  call.what = "cuGraphLaunch";
  LaunchQueue& q = launch_queue();
  const bool on_worker = q.submit(call, /*may_queue=*/config().launch_thread);
  if (queued) *queued = on_worker ? q.submitted() : 0;
  return on_worker;
}

DeviceContext& device_context(int device) {
  DeviceContext& c = context_of(device);
  drain_launches();
  return c;
}

DeviceContext& context_of(int device) {
  const Api& d = api();
  const CudaStatus& st = cuda_status();
  const int count = static_cast<int>(st.devices.size());
  if (device < 0 || device >= count)
    throw Error("cuda:" + std::to_string(device) + " does not exist (" + std::to_string(count) + " CUDA device(s))");
  // Called several times a flush: a created context is found without a lock, and made current
  // only when this thread's current context is another (cuCtxGetCurrent reads thread-local state;
  // setting it costs a driver call).
  static std::mutex mu;
  static const std::unique_ptr<std::atomic<DeviceContext*>[]> contexts(new std::atomic<DeviceContext*>[count]());
  DeviceContext* c = contexts[device].load(std::memory_order_acquire);
  if (c == nullptr) {
    std::lock_guard<std::mutex> lock(mu);
    c = contexts[device].load(std::memory_order_relaxed);
    if (c == nullptr) {
      auto fresh = std::make_unique<DeviceContext>();
      CUdevice dev;
      LF_CU_CHECK(d.cuDeviceGet(&dev, device));
      LF_CU_CHECK(d.cuDevicePrimaryCtxRetain(&fresh->ctx, dev));
      LF_CU_CHECK(d.cuCtxSetCurrent(fresh->ctx));
      LF_CU_CHECK(d.cuStreamCreate(&fresh->own_stream, /*CU_STREAM_NON_BLOCKING=*/1));
      fresh->stream = fresh->own_stream;
      fresh->info = st.devices[device];
      c = fresh.release();  // lives as long as the process: kernels and blocks refer to it
      contexts[device].store(c, std::memory_order_release);
    }
  }
  CUcontext current = nullptr;
  if (d.cuCtxGetCurrent(&current) != 0 || current != c->ctx) LF_CU_CHECK(d.cuCtxSetCurrent(c->ctx));
  return *c;
}

void stream_wait(int device, CUstream waiter, CUstream signaler) {
  const Api& d = api();
  context_of(device);  // the device's context current on this thread
  CUevent event = nullptr;
  LF_CU_CHECK(d.cuEventCreate(&event, /*CU_EVENT_DISABLE_TIMING=*/2));
  CUresult r = d.cuEventRecord(event, signaler);
  if (r == 0) r = d.cuStreamWaitEvent(waiter, event, 0);
  d.cuEventDestroy(event);  // released by the driver once the wait is done
  check(r, "cuEventRecord + cuStreamWaitEvent (cuda:" + std::to_string(device) + ")");
}

void set_stream(int device, CUstream stream) {
  DeviceContext& c = device_context(device);  // the launches queued so far are submitted first
  CUstream next = stream != nullptr ? stream : c.own_stream;
  if (next == c.stream) return;
  stream_wait(device, next, c.stream);
  c.stream = next;
}

}  // namespace cu
}  // namespace lf::rt
