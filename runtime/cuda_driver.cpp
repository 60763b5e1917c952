#include "runtime/cuda_driver.h"

#include <dlfcn.h>

#include <string>

#include "lazyfuse/types.h"

namespace lf::rt {
namespace {

// The few Driver API entry points used so far, by their ABI names (cuda.h maps the public names
// to these versioned symbols). Types are spelled out so that no CUDA header is needed to build.
using CUresult = int;
using CUdevice = int;
struct Driver {
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t*, CUdevice) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
};

// CUdevice_attribute values (cuda.h).
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;

template <typename F>
bool bind(void* lib, F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

std::string error_text(const Driver& d, CUresult r) {
  const char* s = nullptr;
  if (d.cuGetErrorString && d.cuGetErrorString(r, &s) == 0 && s) return s;
  return "CUresult " + std::to_string(r);
}

CudaStatus probe() {
  CudaStatus st;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    st.reason = "libcuda.so.1 not found (no NVIDIA driver on this machine)";
    return st;
  }
  Driver d;
  bool ok = bind(lib, d.cuInit, "cuInit") && bind(lib, d.cuDriverGetVersion, "cuDriverGetVersion") &&
            bind(lib, d.cuDeviceGetCount, "cuDeviceGetCount") && bind(lib, d.cuDeviceGet, "cuDeviceGet") &&
            bind(lib, d.cuDeviceGetName, "cuDeviceGetName") &&
            bind(lib, d.cuDeviceGetAttribute, "cuDeviceGetAttribute") &&
            bind(lib, d.cuDeviceTotalMem, "cuDeviceTotalMem_v2") && bind(lib, d.cuGetErrorString, "cuGetErrorString");
  if (!ok) {
    st.reason = std::string("libcuda.so.1 lacks a Driver API entry point: ") + dlerror();
    return st;
  }
  if (CUresult r = d.cuInit(0); r != 0) {
    st.reason = "cuInit failed: " + error_text(d, r);
    return st;
  }
  d.cuDriverGetVersion(&st.driver_version);
  int count = 0;
  if (CUresult r = d.cuDeviceGetCount(&count); r != 0 || count == 0) {
    st.reason = r != 0 ? "cuDeviceGetCount failed: " + error_text(d, r) : "no CUDA device";
    return st;
  }
  for (int i = 0; i < count; ++i) {
    CudaDeviceInfo info;
    info.index = i;
    CUdevice dev;
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
  return st;  // the library stays loaded for the process's lifetime
}

}  // namespace

const CudaStatus& cuda_status() {
  static const CudaStatus status = probe();
  return status;
}

}  // namespace lf::rt
