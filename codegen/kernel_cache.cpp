#include "codegen/kernel_cache.h"

namespace lf::cache {

std::shared_ptr<const Entry> KernelCache::get_or_compile(const std::string& key, const Compile& compile, bool* hit) {
  std::promise<std::shared_ptr<const Entry>> promise;
  std::shared_future<std::shared_ptr<const Entry>> existing;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end()) {
      existing = it->second;
    } else {
      entries_.emplace(key, promise.get_future().share());
    }
  }
  if (existing.valid()) {
    *hit = true;
    return existing.get();  // waits while another thread compiles it
  }
  *hit = false;
  auto entry = std::make_shared<Entry>();
  try {
    auto compiled = compile();
    if (compiled.ok()) {
      entry->kernel = *std::move(compiled);
    } else {
      entry->status = compiled.status();
    }
  } catch (const std::exception& e) {
    entry->status = absl::InternalError(e.what());
  }
  promise.set_value(entry);
  return entry;
}

size_t KernelCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

void KernelCache::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
}

KernelCache& global_cache() {
  static KernelCache* cache = new KernelCache();  // never destroyed: kernels may run at exit
  return *cache;
}

}  // namespace lf::cache
