// The CUDA Driver API, loaded with dlopen at first use (libcuda.so.1), so one binary runs on a
// machine with no GPU and reports CUDA as unavailable there instead of failing to load. No CUDA
// header is needed to build: the few types used are declared here with the driver's ABI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lf::rt {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  int sm_major = 0, sm_minor = 0;  // compute capability
  int multiprocessors = 0;
  size_t total_memory = 0;
};

struct CudaStatus {
  bool available = false;
  std::string reason;  // why not, when not ("libcuda.so.1 not found", "no CUDA device", ...)
  int driver_version = 0;
  std::vector<CudaDeviceInfo> devices;
};

// Loads the driver and queries the devices once; later calls return the same answer.
const CudaStatus& cuda_status();

namespace cu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgraph = struct CUgraph_st*;
using CUgraphExec = struct CUgraphExec_st*;
using CUgraphNode = struct CUgraphNode_st*;

// CUDA_KERNEL_NODE_PARAMS as the unversioned (v1) graph entry points take it.
struct KernelNodeParams {
  CUfunction func;
  unsigned grid_x, grid_y, grid_z;
  unsigned block_x, block_y, block_z;
  unsigned shared_bytes;
  void** params;
  void** extra;
};

// Entry points by their ABI names (cuda.h maps cuMemAlloc to cuMemAlloc_v2, and so on).
struct Api {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice);
  CUresult (*cuGetErrorString)(CUresult, const char**);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxGetCurrent)(CUcontext*);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemGetInfo)(size_t*, size_t*);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuMemcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuModuleLoadData)(CUmodule*, const void*);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void**, void**);
  CUresult (*cuStreamCreate)(CUstream*, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  // CUDA graphs (driver 11.4 and later): all of them or none (`graphs` says which).
  bool graphs;
  CUresult (*cuGraphCreate)(CUgraph*, unsigned);
  CUresult (*cuGraphAddKernelNode)(CUgraphNode*, CUgraph, const CUgraphNode*, size_t, const KernelNodeParams*);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec*, CUgraph, unsigned long long);
  CUresult (*cuGraphExecKernelNodeSetParams)(CUgraphExec, CUgraphNode, const KernelNodeParams*);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
  // Pinned host memory (optional: null where the driver lacks it): the host's reads of a few flag
  // bytes after launches (rt::read_flags).
  CUresult (*cuMemHostAlloc)(void**, size_t, unsigned);
  // Stream capture (flush plans with library calls): both or neither (`capture`); only with graphs.
  bool capture;
  CUresult (*cuStreamBeginCapture)(CUstream, int mode);  // mode: kCaptureThreadLocal
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph*);
  // Whether a stream is being captured (status 0: no); optional, null where the driver lacks it.
  CUresult (*cuStreamIsCapturing)(CUstream, int* status);
};
inline constexpr int kCaptureThreadLocal = 1;  // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL

// The loaded driver; throws lf::Error saying why when CUDA is unavailable.
const Api& api();

// Throws lf::Error naming the call and the driver's error ("cuMemAlloc(1048576 bytes):
// CUDA_ERROR_OUT_OF_MEMORY: out of memory") when r is not CUDA_SUCCESS.
void check(CUresult r, const std::string& call);
std::string error_text(CUresult r);
inline constexpr CUresult kOutOfMemory = 2;

// Device attribute numbers (cuda.h's CUdevice_attribute).
inline constexpr int kAttrMaxSharedPerBlockOptin = 97;

// The primary context of `device`, made current on the calling thread, and the stream all of
// LazyFuse's work on that device is ordered on.
struct DeviceContext {
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;      // own_stream, or the caller's (set_stream)
  CUstream own_stream = nullptr;  // the non-blocking stream LazyFuse made
  CudaDeviceInfo info;
};
// Every caller that puts work on the stream gets it here, and this first waits for the launches
// queued on the launch thread (launch_queue.h) to be submitted, so that the work lands after them;
// it throws lf::Error when one of them failed.
DeviceContext& device_context(int device);
// The same without waiting for queued launches: for work off the stream (loading a module,
// allocating, reading the device's facts), on any thread.
DeviceContext& context_of(int device);

// Puts LazyFuse's later work on `device` on `stream` (nullptr: own_stream again); that stream first
// waits (on the device) for the work queued on the one used so far. Not synchronized with other
// threads using the device: call it between flushes. Untested on a GPU.
void set_stream(int device, CUstream stream);
// `waiter` waits on the device, not the host, for the work queued on `signaler` so far (an event).
void stream_wait(int device, CUstream waiter, CUstream signaler);

// Launches a CUDA graph on `ctx`'s stream: on the launch thread when flushes come back to back
// (returns true: queued), else here. LAZYFUSE_LAUNCH_THREAD=0 always launches here. Throws
// lf::Error when the launch fails (or when a launch queued earlier failed).
// `queued`, when given: the launch's place in the queue when it was queued (for
// drain_launches_to), else 0.
bool launch_graph(CUgraphExec exec, const DeviceContext& ctx, uint64_t* queued = nullptr);
// Waits for the launches queued so far to be submitted (device_context() calls it). Does not
// throw when `rethrow` is false: a failure is then reported later.
void drain_launches(bool rethrow = true);
// Waits for the queued launch whose place launch_graph gave (and those before it) only.
void drain_launches_to(uint64_t queued);

}  // namespace cu
}  // namespace lf::rt

#define LF_CU_CHECK(call) ::lf::rt::cu::check((call), #call)
