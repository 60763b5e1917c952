// Storage: one allocation of device memory (host memory for the CPU), shared by the tensors and
// views that use it and freed with the last of them.
#pragma once

#include <cstddef>
#include <memory>

#include "lazyfuse/types.h"

namespace lf::rt {

inline constexpr size_t kCpuAlignment = 64;  // a cache line, and a full AVX-512 vector

class Storage {
 public:
  // Throws lf::Error naming the bytes requested when memory cannot be had.
  static std::shared_ptr<Storage> allocate(Device device, size_t nbytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

 private:
  Storage(Device device, void* data, size_t nbytes) : device_(device), data_(data), nbytes_(nbytes) {}
  Device device_;
  void* data_;
  size_t nbytes_;
};

// Frees the cached free blocks of host memory; returns the bytes released.
size_t empty_host_cache();
size_t host_cache_bytes();

}  // namespace lf::rt
