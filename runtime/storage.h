// Storage: one allocation of device memory (host memory for the CPU), shared by the tensors and
// views that use it and freed with the last of them; and the copies between storages.
#pragma once

#include <cstddef>
#include <memory>

#include "lazyfuse/types.h"
#include "runtime/cuda_driver.h"

namespace lf::rt {

inline constexpr size_t kCpuAlignment = 64;  // a cache line, and a full AVX-512 vector

class Storage {
 public:
  // Host memory (aligned to kCpuAlignment) for the CPU, device memory from the caching allocator
  // (runtime/cuda_allocator.h) for cuda:i. Throws lf::Error naming the device and the bytes
  // requested when memory cannot be had or the device is unavailable. Contents are undefined.
  static std::shared_ptr<Storage> allocate(Device device, size_t nbytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // The address of the first byte: a host pointer on the CPU; on CUDA the device address (a
  // CUdeviceptr value cast to void*), which the host must never dereference.
  void* data() const { return data_; }
  // The device address of a CUDA storage, as kernels take it; throws lf::Error on a CPU storage.
  cu::CUdeviceptr device_ptr() const;
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

 private:
  Storage(Device device, void* data, size_t nbytes) : device_(device), data_(data), nbytes_(nbytes) {}
  Device device_;
  void* data_;
  size_t nbytes_;
};

// Copies `bytes` from src[src_offset...] to dst[dst_offset...] (offsets in bytes), between any two
// devices. Work on a CUDA device is ordered on its stream (cu::device_context(i).stream), after
// every kernel queued there before. When the call returns, a host destination holds the data and a
// host source may be reused or freed; a device destination is written by the time later work on its
// stream runs. Throws lf::Error naming the devices and sizes when a range is out of bounds.
void copy(const Storage& src, size_t src_offset, Storage& dst, size_t dst_offset, size_t bytes);

// Waits until the work queued on `device`'s stream has finished (a no-op for the CPU).
void synchronize(Device device);

// Frees the cached free blocks of host memory; returns the bytes released.
size_t empty_host_cache();
size_t host_cache_bytes();

}  // namespace lf::rt
