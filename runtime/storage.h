// Storage: one allocation of device memory (host memory for the CPU), shared by the tensors and
// views that use it and freed with the last of them; and the copies between storages.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

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
  // Memory the caller owns (lf::from_blob, DLPack, Eigen): never freed here. `keep_alive` (may be
  // null) is released when the storage dies, on whichever thread drops it last; a deleter in it
  // runs then. No copy and no allocation of the memory itself. While a borrowed storage of
  // `device` starting at `data` is alive, borrowing `data` again returns that same storage (grown
  // to `nbytes` if need be, holding both keep-alives): flush plans tell storages apart by object,
  // so two storages at one address would let a replay bind one buffer for the other.
  static std::shared_ptr<Storage> borrow(Device device, void* data, size_t nbytes, std::shared_ptr<void> keep_alive);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  // The address of the first byte: a host pointer on the CPU; on CUDA the device address (a
  // CUdeviceptr value cast to void*), which the host must never dereference.
  void* data() const { return data_; }
  // The device address of a CUDA storage, as kernels take it; throws lf::Error on a CPU storage.
  cu::CUdeviceptr device_ptr() const;
  size_t nbytes() const { return nbytes_.load(std::memory_order_relaxed); }
  Device device() const { return device_; }
  bool borrowed() const { return borrowed_; }

  // A bound on an integer storage's values that the host knows because it wrote them itself
  // (lf::from_vector, a .npy file, a copy of such a storage to another device): every element lies
  // in [lo, hi]. A gather whose indices are known in range needs no device check, so its flush
  // does not wait for the device to read an error word. Storages are written once (values are
  // immutable), so the bound holds for the storage's life; handing the memory out
  // (Tensor::data_ptr, DLPack export) forgets it, since a consumer could write there. Never set on
  // borrowed memory.
  struct ValueRange {
    int64_t lo = 0, hi = -1;
  };
  bool value_range(ValueRange* out) const {
    if (!range_known_.load(std::memory_order_acquire)) return false;
    *out = range_;
    return true;
  }
  // Before the storage is shared with another thread (it is published through a tensor after).
  void set_value_range(ValueRange r) {
    if (borrowed_) return;
    range_ = r;
    range_known_.store(true, std::memory_order_release);
  }
  void forget_value_range() { range_known_.store(false, std::memory_order_release); }

 private:
  Storage(Device device, void* data, size_t nbytes, bool borrowed = false)
      : device_(device), data_(data), nbytes_(nbytes), borrowed_(borrowed) {}
  Device device_;
  void* data_;
  std::atomic<size_t> nbytes_;  // grows only: a second borrow of the same address may cover more
  bool borrowed_;
  ValueRange range_;
  std::atomic<bool> range_known_{false};
  std::mutex owners_mu_;
  std::vector<std::shared_ptr<void>> owners_;  // borrowed: what keeps the memory alive
};

// Sets a host storage's value range (Storage::set_value_range) from its first `count` elements of
// `dtype` when they are Int32 or Int64; nothing for other dtypes or a device storage.
void note_value_range(Storage& s, DType dtype, int64_t count);

// Copies `bytes` from src[src_offset...] to dst[dst_offset...] (offsets in bytes), between any two
// devices. Work on a CUDA device is ordered on its stream (cu::device_context(i).stream), after
// every kernel queued there before. When the call returns, a host destination holds the data and a
// host source may be reused or freed; a device destination is written by the time later work on its
// stream runs. Throws lf::Error naming the devices and sizes when a range is out of bounds.
void copy(const Storage& src, size_t src_offset, Storage& dst, size_t dst_offset, size_t bytes);

// Whether kernels on `device` read host memory as it is (the CPU), so that a value computed on
// the host (by the reference executor) needs no copy there.
bool shares_host_memory(Device device);
// `host` (host memory) as storage on `device`: `host` itself where the device shares host
// memory, else a new device allocation holding its first `bytes` bytes.
std::shared_ptr<Storage> placed_on(Device device, std::shared_ptr<Storage> host, size_t bytes);
// `s` as host memory: itself where its device shares host memory, else a host copy of all of it.
std::shared_ptr<Storage> host_view(std::shared_ptr<Storage> s);
// Zeroes all of `s`, on any device.
void fill_zero(Storage& s);

// Reads `bytes` (at most kFlagBytes) at `offset` of `src` into `out`; on a GPU after the work
// queued before it (an error word that kernels set): through a pinned buffer of the calling thread
// where the driver gives one, whose copy is a DMA the stream orders (from pageable memory the
// driver stages it), then a wait for the stream.
inline constexpr size_t kFlagBytes = 64;
void read_flags(const Storage& src, size_t offset, void* out, size_t bytes);

// Waits until the work queued on `device`'s stream has finished (a no-op for the CPU).
void synchronize(Device device);

// Frees the cached free blocks of host memory; returns the bytes released.
size_t empty_host_cache();
size_t host_cache_bytes();

}  // namespace lf::rt
