// Host allocation for the CPU device, with a cache of freed large blocks: fresh pages from the OS
// cost a page fault each (tens of milliseconds for a 64 MB tensor), so a program that computes
// tensors of the same sizes in a loop should reuse blocks instead. The CUDA allocator plugs in here.
#include "runtime/storage.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <string>

namespace lf::rt {
namespace {

constexpr size_t kCacheFrom = size_t{1} << 20;      // blocks below 1 MiB go straight to malloc
constexpr size_t kCacheLimit = size_t{2} << 30;     // at most 2 GiB of free blocks kept

class HostBlockCache {
 public:
  void* take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(bytes);
    if (it == free_.end()) return nullptr;
    void* p = it->second;
    free_.erase(it);
    cached_ -= bytes;
    return p;
  }
  // Keeps `p` for reuse, or returns false when the cache is full.
  bool give(void* p, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (cached_ + bytes > kCacheLimit) return false;
    free_.emplace(bytes, p);
    cached_ += bytes;
    return true;
  }
  size_t release_all() {
    std::lock_guard<std::mutex> lock(mu_);
    size_t released = cached_;
    for (auto& [bytes, p] : free_) std::free(p);
    free_.clear();
    cached_ = 0;
    return released;
  }
  size_t cached() {
    std::lock_guard<std::mutex> lock(mu_);
    return cached_;
  }

 private:
  std::mutex mu_;
  std::multimap<size_t, void*> free_;
  size_t cached_ = 0;
};

HostBlockCache& host_cache() {
  static HostBlockCache* cache = new HostBlockCache();  // never destroyed: storages may die at exit
  return *cache;
}

// Large blocks round up to 2 MiB, so that nearby sizes share blocks.
size_t round_size(size_t nbytes) {
  if (nbytes < kCacheFrom) {
    size_t r = (nbytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
    return r == 0 ? kCpuAlignment : r;
  }
  constexpr size_t kHuge = size_t{2} << 20;
  return (nbytes + kHuge - 1) / kHuge * kHuge;
}

}  // namespace

std::shared_ptr<Storage> Storage::allocate(Device device, size_t nbytes) {
  if (!device.is_cpu()) throw Error("Storage::allocate: no backend for device " + device.str());
  size_t rounded = round_size(nbytes);
  void* p = rounded >= kCacheFrom ? host_cache().take(rounded) : nullptr;
  if (p == nullptr) p = std::aligned_alloc(kCpuAlignment, rounded);
  if (p == nullptr && host_cache().release_all() > 0) p = std::aligned_alloc(kCpuAlignment, rounded);
  if (p == nullptr) throw Error("out of host memory: could not allocate " + std::to_string(nbytes) + " bytes");
  return std::shared_ptr<Storage>(new Storage(device, p, nbytes));
}

Storage::~Storage() {
  size_t rounded = round_size(nbytes_);
  if (rounded < kCacheFrom || !host_cache().give(data_, rounded)) std::free(data_);
}

size_t empty_host_cache() { return host_cache().release_all(); }
size_t host_cache_bytes() { return host_cache().cached(); }

}  // namespace lf::rt
