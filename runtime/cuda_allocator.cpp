// Caching allocator for CUDA device memory, one free list per device, keyed by size class.
//
// Why reusing a freed block at once is safe although kernels that use it may still be queued: all
// of LazyFuse's work on a device (kernels, copies) is ordered on that device's one stream
// (cu::device_context(i).stream). A block comes back here when its last Storage dies, which happens
// only after every launch that reads or writes it has been *queued*; the next owner's work is
// queued later on the same stream, so the stream runs it after the old work is done. Code that
// puts device work on any other stream must synchronize that stream before dropping its Storages.
#include "runtime/cuda_allocator.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "lazyfuse/types.h"

namespace lf::rt {
namespace {

struct DeviceHeap {
  // Size class -> free blocks. A class's list keeps its capacity when it empties, so that taking
  // and giving back a block (every output of every launch) allocates no host memory.
  std::map<size_t, std::vector<cu::CUdeviceptr>> free;
  CudaMemoryStats stats;
};

class CudaAllocator {
 public:
  // A cached block of exactly `rounded` bytes, or 0.
  cu::CUdeviceptr take(int device, size_t rounded) {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceHeap& h = heaps_[device];
    ++h.stats.allocs;
    auto it = h.free.find(rounded);
    if (it == h.free.end() || it->second.empty()) return 0;
    cu::CUdeviceptr p = it->second.back();
    it->second.pop_back();
    h.stats.cached -= rounded;
    ++h.stats.reuses;
    note_in_use(h, rounded);
    return p;
  }
  void fresh(int device, size_t rounded) {
    std::lock_guard<std::mutex> lock(mu_);
    note_in_use(heaps_[device], rounded);
  }
  void give(int device, cu::CUdeviceptr p, size_t rounded) {
    std::lock_guard<std::mutex> lock(mu_);
    DeviceHeap& h = heaps_[device];
    h.free[rounded].push_back(p);
    h.stats.in_use -= rounded;
    h.stats.cached += rounded;
  }
  // Removes and returns the free blocks of `device` (all of them for device -1).
  std::vector<std::pair<int, cu::CUdeviceptr>> take_all_free(int device, size_t* bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::pair<int, cu::CUdeviceptr>> out;
    *bytes = 0;
    for (auto& [d, h] : heaps_) {
      if (device >= 0 && d != device) continue;
      for (auto& [size, blocks] : h.free)
        for (cu::CUdeviceptr p : blocks) out.emplace_back(d, p);
      *bytes += h.stats.cached;
      h.free.clear();
      h.stats.cached = 0;
    }
    return out;
  }
  CudaMemoryStats stats(int device) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = heaps_.find(device);
    return it == heaps_.end() ? CudaMemoryStats{} : it->second.stats;
  }

 private:
  static void note_in_use(DeviceHeap& h, size_t rounded) {
    h.stats.in_use += rounded;
    if (h.stats.in_use > h.stats.peak_in_use) h.stats.peak_in_use = h.stats.in_use;
  }
  std::mutex mu_;
  std::map<int, DeviceHeap> heaps_;
};

CudaAllocator& allocator() {
  static CudaAllocator* a = new CudaAllocator();  // never destroyed: storages may die at exit
  return *a;
}

std::string device_name(int device) { return "cuda:" + std::to_string(device); }

std::string bytes_str(size_t n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%zu bytes (%.2f GiB)", n, static_cast<double>(n) / (1 << 30));
  return buf;
}

// Frees the cached blocks of `device` (-1: all devices) and returns the bytes released.
size_t release_cached(int device) {
  size_t bytes = 0;
  auto blocks = allocator().take_all_free(device, &bytes);
  if (blocks.empty()) return 0;
  const cu::Api& d = cu::api();
  int synced = -1;
  for (auto& [dev, p] : blocks) {
    cu::DeviceContext& ctx = cu::device_context(dev);
    // A cached block may still be read by work queued before its Storage died (see the top of the
    // file); cuMemFree waits for the device too, but say it here rather than rely on it.
    if (dev != synced) LF_CU_CHECK(d.cuStreamSynchronize(ctx.stream));
    synced = dev;
    LF_CU_CHECK(d.cuMemFree(p));
  }
  return bytes;
}

}  // namespace

size_t cuda_round_size(size_t nbytes) {
  if (nbytes < kCudaLargeFrom) {
    size_t r = (nbytes + kCudaSmallGranule - 1) / kCudaSmallGranule * kCudaSmallGranule;
    return r == 0 ? kCudaSmallGranule : r;
  }
  return (nbytes + kCudaLargeGranule - 1) / kCudaLargeGranule * kCudaLargeGranule;
}

cu::CUdeviceptr cuda_malloc(int device, size_t nbytes) {
  const CudaStatus& st = cuda_status();
  if (st.available && device >= 0 && device < static_cast<int>(st.devices.size())) {
    // The common case, once per output of every launch: a cached block, no driver call.
    if (cu::CUdeviceptr p = allocator().take(device, cuda_round_size(nbytes))) return p;
  }
  const std::string where = device_name(device);
  if (!st.available)
    throw Error("cannot allocate " + std::to_string(nbytes) + " bytes on " + where + ": CUDA is unavailable (" +
                st.reason + ")");
  if (device < 0 || device >= static_cast<int>(st.devices.size()))
    throw Error("cannot allocate " + std::to_string(nbytes) + " bytes on " + where + ": no such device (" +
                std::to_string(st.devices.size()) + " CUDA device(s))");
  const size_t rounded = cuda_round_size(nbytes);
  if (cu::CUdeviceptr p = allocator().take(device, rounded)) return p;

  const cu::Api& d = cu::api();
  cu::context_of(device);  // makes the device's context current on this thread
  cu::CUdeviceptr p = 0;
  cu::CUresult r = d.cuMemAlloc(&p, rounded);
  if (r == cu::kOutOfMemory && release_cached(device) > 0) {
    cu::context_of(device);
    r = d.cuMemAlloc(&p, rounded);
  }
  if (r == cu::kOutOfMemory) {
    size_t free_bytes = 0, total_bytes = 0;
    d.cuMemGetInfo(&free_bytes, &total_bytes);
    throw Error("out of CUDA memory on " + where + ": cannot allocate " + bytes_str(nbytes) + ", a block of " +
                bytes_str(rounded) + "; the device has " + bytes_str(free_bytes) + " free of " +
                bytes_str(total_bytes) + " total, and LazyFuse's live tensors hold " +
                bytes_str(allocator().stats(device).in_use) + " (its cache of free blocks was emptied and the "
                "allocation retried)");
  }
  cu::check(r, "cuMemAlloc(" + std::to_string(rounded) + " bytes) on " + where);
  allocator().fresh(device, rounded);
  return p;
}

void cuda_free(int device, cu::CUdeviceptr ptr, size_t nbytes) noexcept {
  try {
    allocator().give(device, ptr, cuda_round_size(nbytes));
  } catch (...) {
    // Out of host memory to grow the size class's list: the block leaks rather than calling the
    // driver from a destructor, which may run after it has shut down.
  }
}

size_t empty_cuda_cache() {
  if (!cuda_status().available) return 0;
  return release_cached(-1);
}

CudaMemoryStats cuda_memory_stats(int device) { return allocator().stats(device); }

}  // namespace lf::rt
