// The in-memory kernel cache: canonical key string -> compiled kernel. The key's hash picks the
// bucket and the whole string is compared, so a collision can never run the wrong kernel.
// Single flight: when several threads need the same new kernel, one compiles and the rest wait.
// Below it sits the persistent cache (codegen/disk_cache.h): a memory miss looks on disk first, and
// a kernel compiled here is stored there.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <future>

#include "runtime/status.h"
#include "codegen/compiled.h"
#include "codegen/kernel_ir.h"

namespace lf::cache {

struct Entry {
  lf::Status status;  // not ok: compiling failed; the group runs unfused
  std::shared_ptr<CompiledKernel> kernel;  // the backend's subclass
  bool from_disk = false;                  // loaded from the persistent cache, not compiled
};

// What the persistent cache needs from the caller: the kernel (to describe the entry) and how to
// turn a stored binary back into a loaded kernel. The key starts
// "<backend>|<codegen fingerprint>|<target>|".
struct DiskSpec {
  const kir::Kernel* kernel = nullptr;
  std::function<lf::StatusOr<std::shared_ptr<CompiledKernel>>(const std::string& name, const std::string& binary)>
      load;
};

class KernelCache {
 public:
  using Compile = std::function<lf::StatusOr<std::shared_ptr<CompiledKernel>>()>;

  // `hit` says whether the kernel was already there (or being compiled by another thread).
  // With `disk`, a memory miss tries the persistent cache before compiling, and a compiled kernel
  // with a binary is stored there; either way the miss is counted in the cache's bookkeeping.
  std::shared_ptr<const Entry> get_or_compile(const std::string& key, const Compile& compile, bool* hit,
                                              const DiskSpec* disk = nullptr);
  size_t size() const;
  void clear();
  // Counts clear()s: whatever kept entries of an older generation must look them up again.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mu_;
  std::atomic<uint64_t> generation_{0};
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<const Entry>>> entries_;
};

KernelCache& global_cache();

}  // namespace lf::cache
