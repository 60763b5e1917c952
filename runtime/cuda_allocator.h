// The caching allocator for CUDA device memory: cuMemAlloc costs tens of microseconds and
// synchronizes the device, so freed blocks are kept in per-device free lists by size class and
// handed out again. Storage (runtime/storage.h) is its only client; everything here is thread-safe.
#pragma once

#include <cstddef>

#include "runtime/cuda_driver.h"

namespace lf::rt {

inline constexpr size_t kCudaSmallGranule = 512;               // small blocks: multiples of 512 B
inline constexpr size_t kCudaLargeFrom = size_t{1} << 20;      // from 1 MiB on ...
inline constexpr size_t kCudaLargeGranule = size_t{2} << 20;   // ... multiples of 2 MiB

// The size class `nbytes` is served from (never 0: a 0-byte tensor still gets a distinct address).
size_t cuda_round_size(size_t nbytes);

// A block of at least `nbytes` on cuda:`device`: a cached free block of the same class when there is
// one, else fresh memory. On out-of-memory the device's cache is released and the allocation tried
// once more; then lf::Error names the bytes requested and the device's free and total bytes.
// Throws lf::Error (naming the device) when CUDA is unavailable or the device does not exist.
cu::CUdeviceptr cuda_malloc(int device, size_t nbytes);

// Returns a block from cuda_malloc (with the same `nbytes`) to its free list. Never calls the driver
// and never throws, so it is safe in destructors and at process exit.
void cuda_free(int device, cu::CUdeviceptr ptr, size_t nbytes) noexcept;

// Frees the cached free blocks of every device (after their streams drain); returns the bytes
// released. A no-op where CUDA is unavailable.
size_t empty_cuda_cache();

struct CudaMemoryStats {
  size_t in_use = 0;    // bytes of blocks handed out (rounded to their size class)
  size_t cached = 0;    // bytes of free blocks kept for reuse
  size_t peak_in_use = 0;
  size_t allocs = 0;    // cuda_malloc calls
  size_t reuses = 0;    // ... of them served from the cache
};
CudaMemoryStats cuda_memory_stats(int device);

}  // namespace lf::rt
