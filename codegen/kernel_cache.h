// The in-memory kernel cache: canonical key string -> compiled kernel. The key's hash picks the
// bucket and the whole string is compared, so a collision can never run the wrong kernel.
// Single flight: when several threads need the same new kernel, one compiles and the rest wait.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <future>

#include "absl/status/statusor.h"
#include "codegen/compiled.h"

namespace lf::cache {

struct Entry {
  absl::Status status;  // not ok: compiling failed; the group runs unfused
  std::shared_ptr<CompiledKernel> kernel;  // the backend's subclass
};

class KernelCache {
 public:
  using Compile = std::function<absl::StatusOr<std::shared_ptr<CompiledKernel>>()>;

  // `hit` says whether the kernel was already there (or being compiled by another thread).
  std::shared_ptr<const Entry> get_or_compile(const std::string& key, const Compile& compile, bool* hit);
  size_t size() const;
  void clear();

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<const Entry>>> entries_;
};

KernelCache& global_cache();

}  // namespace lf::cache
