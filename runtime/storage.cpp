// Host allocation for the CPU device; the CUDA allocator plugs in here.
#include "runtime/storage.h"

#include <cstdlib>
#include <new>
#include <string>

namespace lf::rt {

std::shared_ptr<Storage> Storage::allocate(Device device, size_t nbytes) {
  if (!device.is_cpu()) throw Error("Storage::allocate: no backend for device " + device.str());
  // aligned_alloc wants a multiple of the alignment, and a distinct pointer even for 0 bytes.
  size_t rounded = (nbytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
  if (rounded == 0) rounded = kCpuAlignment;
  void* p = std::aligned_alloc(kCpuAlignment, rounded);
  if (p == nullptr) throw Error("out of host memory: could not allocate " + std::to_string(nbytes) + " bytes");
  return std::shared_ptr<Storage>(new Storage(device, p, nbytes));
}

Storage::~Storage() { std::free(data_); }

}  // namespace lf::rt
