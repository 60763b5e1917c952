// Host allocation for the CPU device, with a cache of freed large blocks: fresh pages from the OS
// cost a page fault each (tens of milliseconds for a 64 MB tensor), so a program that computes
// tensors of the same sizes in a loop should reuse blocks instead. CUDA storage comes from the
// caching allocator (runtime/cuda_allocator.cpp); copies between devices go through the driver.
#include "runtime/storage.h"


#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>

#include "runtime/config.h"
#include "runtime/cuda_allocator.h"

namespace lf::rt {
namespace {

constexpr size_t kCacheFrom = size_t{1} << 20;      // blocks below 1 MiB go straight to malloc
constexpr size_t kCacheLimit = size_t{2} << 30;     // at most 2 GiB of free blocks kept

class HostBlockCache {
 public:
  // The block of `bytes` freed last (a GPU's caching allocator's order), or null.
  void* take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.upper_bound(bytes);
    if (it == free_.begin() || (--it)->first != bytes) return nullptr;
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

// Whether a freed block of `rounded` bytes is kept for reuse (and an allocation looks there
// first): from 1 MiB, or every size under LAZYFUSE_HOST_CACHE_ALL.
bool goes_through_cache(size_t rounded) { return rounded >= kCacheFrom || config().host_cache_all; }

// Live borrowed storages by device and address (Storage::borrow).
struct BorrowKey {
  int device;  // -1: the CPU, else the CUDA device
  uintptr_t address;
  bool operator==(const BorrowKey&) const = default;
};
struct BorrowKeyHash {
  size_t operator()(const BorrowKey& k) const { return std::hash<uintptr_t>()(k.address) ^ static_cast<size_t>(k.device); }
};
struct BorrowRegistry {
  std::mutex mu;
  std::unordered_map<BorrowKey, std::weak_ptr<Storage>, BorrowKeyHash> live;
};
BorrowRegistry& borrow_registry() {
  static BorrowRegistry* r = new BorrowRegistry();  // never destroyed: storages may die at exit
  return *r;
}
BorrowKey borrow_key(Device device, const void* data) {
  return {device.is_cuda() ? device.index() : -1, reinterpret_cast<uintptr_t>(data)};
}

cu::CUdeviceptr device_ptr_of(void* p) { return static_cast<cu::CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

}  // namespace

std::shared_ptr<Storage> Storage::allocate(Device device, size_t nbytes) {
  if (device.is_cuda()) {
    void* p = reinterpret_cast<void*>(static_cast<uintptr_t>(cuda_malloc(device.index(), nbytes)));
    return std::shared_ptr<Storage>(new Storage(device, p, nbytes));
  }
  if (!device.is_cpu()) throw Error("Storage::allocate: no backend for device " + device.str());
  size_t rounded = round_size(nbytes);
  void* p = goes_through_cache(rounded) ? host_cache().take(rounded) : nullptr;
  if (p == nullptr) p = std::aligned_alloc(kCpuAlignment, rounded);
  if (p == nullptr && host_cache().release_all() > 0) p = std::aligned_alloc(kCpuAlignment, rounded);
  if (p == nullptr) throw Error("out of host memory: could not allocate " + std::to_string(nbytes) + " bytes");
  return std::shared_ptr<Storage>(new Storage(device, p, nbytes));
}

std::shared_ptr<Storage> Storage::borrow(Device device, void* data, size_t nbytes, std::shared_ptr<void> keep_alive) {
  if (!device.is_cpu() && !device.is_cuda()) throw Error("Storage::borrow: no backend for device " + device.str());
  BorrowRegistry& r = borrow_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::weak_ptr<Storage>& slot = r.live[borrow_key(device, data)];
  if (std::shared_ptr<Storage> s = slot.lock()) {
    size_t have = s->nbytes_.load(std::memory_order_relaxed);
    while (have < nbytes && !s->nbytes_.compare_exchange_weak(have, nbytes, std::memory_order_relaxed)) {
    }
    if (keep_alive.use_count() != 0) {  // a deleter may come with a null pointer
      std::lock_guard<std::mutex> owners(s->owners_mu_);
      s->owners_.push_back(std::move(keep_alive));
    }
    return s;
  }
  std::shared_ptr<Storage> s(new Storage(device, data, nbytes, /*borrowed=*/true));
  if (keep_alive.use_count() != 0) s->owners_.push_back(std::move(keep_alive));
  slot = s;
  return s;
}

Storage::~Storage() {
  if (borrowed_) {
    {
      BorrowRegistry& r = borrow_registry();
      std::lock_guard<std::mutex> lock(r.mu);
      // A borrow of the same address may already have put a live storage in the slot (ours
      // expired before this destructor ran): leave that one.
      auto it = r.live.find(borrow_key(device_, data_));
      if (it != r.live.end() && it->second.expired()) r.live.erase(it);
    }
    owners_.clear();  // outside the registry's lock: a deleter may borrow again
    return;
  }
  if (device_.is_cuda()) {
    cuda_free(device_.index(), device_ptr_of(data_), nbytes());
    return;
  }
  size_t rounded = round_size(nbytes());
  if (!goes_through_cache(rounded) || !host_cache().give(data_, rounded)) std::free(data_);
}

cu::CUdeviceptr Storage::device_ptr() const {
  if (!device_.is_cuda()) throw Error("Storage::device_ptr: the storage is on " + device_.str() + ", not a CUDA device");
  return device_ptr_of(data_);
}

namespace {

std::string range_str(const Storage& s, size_t offset, size_t bytes) {
  return s.device().str() + " bytes [" + std::to_string(offset) + ", " + std::to_string(offset + bytes) + ") of " +
         std::to_string(s.nbytes());
}

void copy_device_to_device(const Storage& src, size_t src_offset, Storage& dst, size_t dst_offset, size_t bytes,
                           const std::string& what) {
  const cu::Api& d = cu::api();
  if (src.device() != dst.device()) {
    // Between two GPUs: through the host (peer access is not set up; such copies are rare).
    auto staging = Storage::allocate(Device::cpu(), bytes);
    copy(src, src_offset, *staging, 0, bytes);
    copy(*staging, 0, dst, dst_offset, bytes);
    return;
  }
  cu::DeviceContext& ctx = cu::device_context(dst.device().index());
  cu::CUdeviceptr s = src.device_ptr() + src_offset, t = dst.device_ptr() + dst_offset;
  cu::check(d.cuMemcpyDtoDAsync(t, s, bytes, ctx.stream), "cuMemcpyDtoDAsync(" + what + ")");
}

}  // namespace

bool shares_host_memory(Device device) { return device.is_cpu(); }

std::shared_ptr<Storage> placed_on(Device device, std::shared_ptr<Storage> host, size_t bytes) {
  if (shares_host_memory(device)) return host;
  auto placed = Storage::allocate(device, bytes);
  if (bytes) copy(*host, 0, *placed, 0, bytes);
  return placed;
}

std::shared_ptr<Storage> host_view(std::shared_ptr<Storage> s) {
  if (shares_host_memory(s->device())) return s;
  auto host = Storage::allocate(Device::cpu(), s->nbytes());
  if (s->nbytes()) copy(*s, 0, *host, 0, s->nbytes());
  return host;
}

void fill_zero(Storage& s) {
  if (shares_host_memory(s.device())) {
    if (s.nbytes()) std::memset(s.data(), 0, s.nbytes());
    return;
  }
  auto host = Storage::allocate(Device::cpu(), s.nbytes());
  if (s.nbytes()) std::memset(host->data(), 0, s.nbytes());
  if (s.nbytes()) copy(*host, 0, s, 0, s.nbytes());
}

void copy(const Storage& src, size_t src_offset, Storage& dst, size_t dst_offset, size_t bytes) {
  const std::string what = "copy of " + std::to_string(bytes) + " bytes from " + range_str(src, src_offset, bytes) +
                           " to " + range_str(dst, dst_offset, bytes);
  if (src_offset > src.nbytes() || bytes > src.nbytes() - src_offset || dst_offset > dst.nbytes() ||
      bytes > dst.nbytes() - dst_offset)
    throw Error("lf::rt::copy: out of bounds: " + what);
  if (bytes == 0) return;
  const bool from_host = src.device().is_cpu(), to_host = dst.device().is_cpu();
  if (from_host && to_host) {
    std::memmove(static_cast<char*>(dst.data()) + dst_offset, static_cast<const char*>(src.data()) + src_offset,
                 bytes);
    return;
  }
  if (!from_host && !to_host) return copy_device_to_device(src, src_offset, dst, dst_offset, bytes, what);
  const cu::Api& d = cu::api();
  if (from_host) {
    cu::DeviceContext& ctx = cu::device_context(dst.device().index());
    cu::check(d.cuMemcpyHtoDAsync(dst.device_ptr() + dst_offset, static_cast<const char*>(src.data()) + src_offset,
                                  bytes, ctx.stream),
              "cuMemcpyHtoDAsync(" + what + ")");
    // From pageable memory the driver only promises that the copy "might be" synchronous, so wait:
    // the caller may free or overwrite the host source as soon as we return. (Pinned staging
    // buffers would let uploads overlap; uploads are rare in a lazy runtime.)
    cu::check(d.cuStreamSynchronize(ctx.stream), "cuStreamSynchronize after " + what);
    return;
  }
  cu::DeviceContext& ctx = cu::device_context(src.device().index());
  cu::check(d.cuMemcpyDtoHAsync(static_cast<char*>(dst.data()) + dst_offset, src.device_ptr() + src_offset, bytes,
                                ctx.stream),
            "cuMemcpyDtoHAsync(" + what + ")");
  cu::check(d.cuStreamSynchronize(ctx.stream), "cuStreamSynchronize after " + what);  // the host reads next
}

namespace {
template <typename T>
Storage::ValueRange bound(const T* p, int64_t count) {
  Storage::ValueRange r{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  for (int64_t i = 0; i < count; ++i) {
    r.lo = std::min<int64_t>(r.lo, p[i]);
    r.hi = std::max<int64_t>(r.hi, p[i]);
  }
  return r;
}
}  // namespace

void note_value_range(Storage& s, DType dtype, int64_t count) {
  if (!s.device().is_cpu() || count <= 0) return;
  if (dtype == DType::Int64) s.set_value_range(bound(static_cast<const int64_t*>(s.data()), count));
  if (dtype == DType::Int32) s.set_value_range(bound(static_cast<const int32_t*>(s.data()), count));
}

void read_flags(const Storage& src, size_t offset, void* out, size_t bytes) {
  if (bytes > kFlagBytes || offset > src.nbytes() || bytes > src.nbytes() - offset)
    throw Error("lf::rt::read_flags: " + std::to_string(bytes) + " bytes at " + std::to_string(offset) + " of " +
                std::to_string(src.nbytes()) + " (internal error)");
  if (src.device().is_cpu()) {
    std::memcpy(out, static_cast<const char*>(src.data()) + offset, bytes);
    return;
  }
  const cu::Api& d = cu::api();
  cu::DeviceContext& ctx = cu::device_context(src.device().index());  // current on this thread
  // Never freed: a thread's buffer may be used until the process ends (64 bytes a thread).
  // Portable (CU_MEMHOSTALLOC_PORTABLE): pinned for every context, so any device's reads use it.
  thread_local void* pinned = [&d]() -> void* {
    void* p = nullptr;
    return d.cuMemHostAlloc && d.cuMemHostAlloc(&p, kFlagBytes, /*CU_MEMHOSTALLOC_PORTABLE=*/1) == 0 ? p : nullptr;
  }();
  if (!pinned) {
    auto host = Storage::allocate(Device::cpu(), bytes);
    copy(src, offset, *host, 0, bytes);
    std::memcpy(out, host->data(), bytes);
    return;
  }
  cu::check(d.cuMemcpyDtoHAsync(pinned, src.device_ptr() + offset, bytes, ctx.stream), "cuMemcpyDtoHAsync (flags)");
  cu::check(d.cuStreamSynchronize(ctx.stream), "cuStreamSynchronize (flags)");
  std::memcpy(out, pinned, bytes);
}

void synchronize(Device device) {
  if (!device.is_cuda()) return;
  cu::DeviceContext& ctx = cu::device_context(device.index());
  cu::check(cu::api().cuStreamSynchronize(ctx.stream), "cuStreamSynchronize(" + device.str() + ")");
}

size_t empty_host_cache() { return host_cache().release_all(); }
size_t host_cache_bytes() { return host_cache().cached(); }

}  // namespace lf::rt
