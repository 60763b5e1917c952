// The CUDA Driver API, loaded with dlopen at first use (libcuda.so.1), so one binary runs on a
// machine with no GPU and reports CUDA as unavailable there instead of failing to load.
#pragma once

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

}  // namespace lf::rt
