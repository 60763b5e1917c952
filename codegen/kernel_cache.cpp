#include "codegen/kernel_cache.h"

#include <cstdio>
#include <ctime>
#include <tuple>
#include <utility>

#include "codegen/disk_cache.h"

namespace lf::cache {

namespace {

// "cpu|<codegen fingerprint>|<target>|..." -> {"cpu", "<target>"}. The fingerprint is in the key
// (an entry from other generator code is never loaded); the record's target says what a user needs.
std::pair<std::string, std::string> backend_and_target(const std::string& key) {
  size_t a = key.find('|');
  size_t b = a == std::string::npos ? a : key.find('|', a + 1);
  size_t c = b == std::string::npos ? b : key.find('|', b + 1);
  if (c == std::string::npos) return {key.substr(0, a), ""};
  return {key.substr(0, a), key.substr(b + 1, c - b - 1)};
}

// A stored entry whose binary the backend can no longer load (a driver that rejects the cubin, say)
// is compiled again and replaced, never trusted.
std::shared_ptr<CompiledKernel> load_from_disk(const std::string& key, const DiskSpec& spec) {
  auto record = disk::global_disk_cache().load(key);
  auto [backend, target] = backend_and_target(key);
  if (!record || record->backend != backend || record->target != target) return nullptr;
  auto kernel = spec.load(record->name, record->binary);
  if (!kernel.ok()) {
    std::fprintf(stderr, "[lazyfuse] warning: cached kernel %s did not load (%s); recompiling it\n",
                 record->name.c_str(), std::string(kernel.status().message()).c_str());
    return nullptr;
  }
  (*kernel)->source = std::move(record->source);
  (*kernel)->log = std::move(record->log);
  (*kernel)->compile_ms = record->compile_ms;
  return *kernel;
}

void store_on_disk(const std::string& key, const DiskSpec& spec, CompiledKernel& kernel) {
  disk::Record r;
  r.key = key;
  std::tie(r.backend, r.target) = backend_and_target(key);
  r.name = kernel.name;
  if (spec.kernel) {
    r.summary = spec.kernel->summary();
    r.io = disk::io_summary(*spec.kernel);
  }
  r.source = kernel.source;
  r.log = kernel.log;
  r.compile_ms = kernel.compile_ms;
  r.created = static_cast<int64_t>(std::time(nullptr));
  r.binary = std::move(kernel.binary);  // not needed in memory once stored
  kernel.binary.clear();
  disk::global_disk_cache().store(r);
}

}  // namespace

std::shared_ptr<const Entry> KernelCache::get_or_compile(const std::string& key, const Compile& compile, bool* hit,
                                                         const DiskSpec* disk) {
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
  bool use_disk = disk != nullptr && disk::global_disk_cache().enabled();
  try {
    if (use_disk) entry->kernel = load_from_disk(key, *disk);
    if (entry->kernel) {
      entry->from_disk = true;
    } else {
      auto compiled = compile();
      if (compiled.ok()) {
        entry->kernel = *std::move(compiled);
        if (use_disk && !entry->kernel->binary.empty()) store_on_disk(key, *disk, *entry->kernel);
      } else {
        entry->status = compiled.status();
      }
    }
  } catch (const std::exception& e) {
    entry->kernel.reset();
    entry->status = lf::InternalError(e.what());
  }
  promise.set_value(entry);
  // After the waiting threads have their kernel: the bookkeeping takes a lock other processes share.
  if (use_disk && entry->kernel) disk::global_disk_cache().record_use(key, entry->from_disk);
  return entry;
}

size_t KernelCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

void KernelCache::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

KernelCache& global_cache() {
  static KernelCache* cache = new KernelCache();  // never destroyed: kernels may run at exit
  return *cache;
}

}  // namespace lf::cache
