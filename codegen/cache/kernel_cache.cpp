#include "codegen/cache/kernel_cache.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <system_error>
#include <tuple>
#include <utility>

#include "codegen/cache/disk_cache.h"

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
  if (record->version != disk::kFormatVersion) return nullptr;  // an older kernel name: compiled and replaced
  auto kernel = spec.load(record->name, record->binary);
  if (!kernel.ok()) {
    std::fprintf(stderr, "[lazyfuse] warning: cached kernel %s did not load (%s); recompiling it\n",
                 record->name.c_str(), std::string(kernel.status().message()).c_str());
    return nullptr;
  }
  (*kernel)->source = std::move(record->source);
  (*kernel)->log = std::move(record->log);
  (*kernel)->compile_ms = record->compile_ms;
  (*kernel)->quick = record->quick;
  (*kernel)->why = std::move(record->why);
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
  r.quick = kernel.quick;
  r.why = kernel.why;
  r.created = static_cast<int64_t>(std::time(nullptr));
  r.binary = std::move(kernel.binary);  // not needed in memory once stored
  kernel.binary.clear();
  disk::global_disk_cache().store(r);
}

// Whether `f` holds `entry`, without waiting: a future not ready yet is a compile in progress
// (after a clear()), which is not the entry.
bool holds(const std::shared_future<std::shared_ptr<const Entry>>& f, const std::shared_ptr<const Entry>& entry) {
  return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready && f.get() == entry;
}

}  // namespace

std::shared_ptr<const Entry> KernelCache::get_or_compile(const std::string& key, const Compile& compile, bool* hit,
                                                         const DiskSpec* disk, const MakeUpgrade& upgrade) {
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
  entry->key = key;
  bool use_disk = disk != nullptr && disk::global_disk_cache().enabled();
  std::optional<Job> job;
  try {
    if (use_disk) entry->kernel = load_from_disk(key, *disk);
    if (entry->kernel && entry->kernel->quick && !upgrade) entry->kernel.reset();  // wanted optimized now
    if (entry->kernel) {
      entry->from_disk = true;
    } else {
      auto compiled = compile();
      if (compiled.ok()) {
        entry->kernel = *std::move(compiled);
        // A quick build is stored too, so that a run that ends before its optimized build is in
        // still starts the next one without compiling; the optimized build replaces it on disk.
        if (use_disk && !entry->kernel->binary.empty()) store_on_disk(key, *disk, *entry->kernel);
      } else {
        entry->status = compiled.status();
      }
    }
  } catch (const std::exception& e) {
    entry->kernel.reset();
    entry->status = lf::InternalError(e.what());
  }
  // A quick build, compiled now or stored by an earlier run: its optimized build is queued. A
  // failure to set that up leaves the quick build, which works.
  if (entry->kernel && entry->kernel->quick && upgrade) {
    try {
      job.emplace();
      job->key = key;
      job->upgrade = upgrade();
      job->quick = entry;
      if (use_disk && disk->kernel) job->kernel = std::make_shared<kir::Kernel>(*disk->kernel);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "[lazyfuse] warning: kernel %s keeps its quick build: %s\n", entry->kernel->name.c_str(), e.what());
      job.reset();
    }
  }
  promise.set_value(entry);
  if (job) {
    std::lock_guard<std::mutex> lock(up_mu_);
    if (!stopped_) {
      try {
        if (!worker_.joinable()) worker_ = std::thread([this] { run_upgrades(); });
        queue_.push_back(*std::move(job));
        if (stop_at_exit_) stop_before_exit();
        up_cv_.notify_one();
      } catch (const std::system_error& e) {  // no thread: the quick build stays
        std::fprintf(stderr, "[lazyfuse] warning: no thread for optimized builds (%s)\n", e.what());
      }
    }
  }
  // After the waiting threads have their kernel: the bookkeeping takes a lock other processes share.
  if (use_disk && entry->kernel) disk::global_disk_cache().record_use(key, entry->from_disk);
  return entry;
}

// Exit must not tear down the compiler under a build in progress. glibc's exit() runs the exiting
// thread's thread_local destructors before any atexit handler or static destructor (NVRTC's
// included), so a guard in the main thread stops the background thread first. (Another thread's
// guard does nothing when that thread ends: the background thread keeps serving the process.)
void KernelCache::stop_before_exit() {
  struct ExitGuard {
    ~ExitGuard() {
      if (gettid() == getpid()) global_cache().stop_at_exit();
    }
  };
  static thread_local ExitGuard guard;
  (void)guard;
  // exit() from another thread (or a process whose flushes all ran on other threads): handlers,
  // one now and one after the first build (so after whatever the compiler set up lazily then,
  // which exit tears down before the handlers registered earlier). Whichever runs first stops it.
  static std::once_flag registered;
  std::call_once(registered, add_exit_handler);
}

void KernelCache::add_exit_handler() { std::atexit([] { global_cache().stop_at_exit(); }); }

// The background thread: compiles queued optimized builds, one at a time, and hands them to
// install_ready(). A build that fails is reported once and dropped: the quick build stays.
void KernelCache::run_upgrades() {
  std::unique_lock<std::mutex> lock(up_mu_);
  for (;;) {
    up_cv_.wait(lock, [&] { return stopped_ || !queue_.empty(); });
    if (stopped_) break;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    auto start = std::chrono::steady_clock::now();
    lf::StatusOr<std::shared_ptr<CompiledKernel>> built = lf::InternalError("no optimized build");
    try {
      built = job.upgrade.build();
    } catch (const std::exception& e) {
      built = lf::InternalError(e.what());
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    bool ok = built.ok() && *built;
    if (!ok) {
      std::fprintf(stderr, "[lazyfuse] warning: the optimized build of kernel %s failed (%s); it keeps its quick build\n",
                   job.quick->kernel->name.c_str(), built.ok() ? "no kernel" : std::string(built.status().message()).c_str());
    }
    if (stop_at_exit_) {
      static std::once_flag registered;  // the second handler (see stop_before_exit)
      std::call_once(registered, add_exit_handler);
    }
    lock.lock();
    busy_ = false;
    if (ok) {
      job.built = *std::move(built);
      up_stats_.compile_ms += ms;
      ready_.push_back(std::move(job));
      has_ready_.store(true, std::memory_order_release);
    } else {
      ++up_stats_.failed;
    }
    if (queue_.empty()) idle_cv_.notify_all();
  }
}

// On a flushing thread: loads each compiled optimized build and swaps it in, unless its quick entry
// has left the cache meanwhile (clear()).
void KernelCache::install_ready() {
  std::deque<Job> ready;
  {
    std::lock_guard<std::mutex> lock(up_mu_);
    ready.swap(ready_);
    has_ready_.store(false, std::memory_order_release);
  }
  for (Job& job : ready) {
    try {
      install(job);
    } catch (const std::exception& e) {  // this one stays quick; the others go on
      std::fprintf(stderr, "[lazyfuse] warning: the optimized build of kernel %s was not installed (%s)\n",
                   job.built->name.c_str(), e.what());
    }
  }
}

void KernelCache::install(Job& job) {
  auto current = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(job.key);
    return it != entries_.end() && holds(it->second, job.quick);
  };
  if (!current()) return;
  CompiledKernel& built = *job.built;
  built.quick = false;
  if (built.why.empty() && job.quick->kernel) built.why = job.quick->kernel->why;  // the same key: the same reason
  if (lf::Status loaded = job.upgrade.finish ? job.upgrade.finish(built) : lf::OkStatus(); !loaded.ok()) {
    std::fprintf(stderr, "[lazyfuse] warning: the optimized build of kernel %s did not load (%s); it keeps its quick build\n",
                 built.name.c_str(), std::string(loaded.message()).c_str());
    std::lock_guard<std::mutex> lock(up_mu_);
    ++up_stats_.failed;
    return;
  }
  // Stored before it is published: storing moves the binary out of the kernel.
  if (job.kernel && !built.binary.empty() && disk::global_disk_cache().enabled()) {
    DiskSpec spec;
    spec.kernel = job.kernel.get();
    store_on_disk(job.key, spec, built);
  }
  auto entry = std::make_shared<Entry>();
  entry->kernel = job.built;
  entry->key = job.key;
  std::promise<std::shared_ptr<const Entry>> promise;
  promise.set_value(entry);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(job.key);
    if (it == entries_.end() || !holds(it->second, job.quick)) return;  // cleared meanwhile
    it->second = promise.get_future().share();
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  std::lock_guard<std::mutex> lock(up_mu_);
  ++up_stats_.upgraded;
}

std::shared_ptr<const Entry> KernelCache::current(const std::shared_ptr<const Entry>& entry) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(entry->key);
  if (it == entries_.end() || it->second.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return nullptr;
  std::shared_ptr<const Entry> now = it->second.get();
  return now->kernel ? now : nullptr;
}

void KernelCache::wait_for_upgrades() {
  {
    std::unique_lock<std::mutex> lock(up_mu_);
    idle_cv_.wait(lock, [&] { return stopped_ || (queue_.empty() && !busy_); });
  }
  install_upgrades();
}

UpgradeStats KernelCache::upgrade_stats() const {
  std::lock_guard<std::mutex> lock(up_mu_);
  return up_stats_;
}

void KernelCache::reset_upgrade_stats() {
  std::lock_guard<std::mutex> lock(up_mu_);
  up_stats_ = UpgradeStats{};
}

void KernelCache::stop_upgrades() { stop(std::nullopt); }

// At exit: the build in progress is waited for, for a while (it only runs the compiler, which
// exit does not tear down before this handler); a thread still compiling after that ends with the
// process.
void KernelCache::stop_at_exit() { stop(std::chrono::seconds(5)); }

void KernelCache::stop(std::optional<std::chrono::seconds> limit) {
  std::unique_lock<std::mutex> lock(up_mu_);
  stopped_ = true;
  queue_.clear();
  up_cv_.notify_all();
  idle_cv_.notify_all();
  bool idle = !limit || idle_cv_.wait_for(lock, *limit, [&] { return !busy_; });
  std::thread worker = std::move(worker_);
  lock.unlock();
  if (!worker.joinable()) return;
  if (idle) worker.join();  // after the build it is compiling, if any
  else worker.detach();
}

KernelCache::~KernelCache() { stop_upgrades(); }

size_t KernelCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

void KernelCache::clear() {
  {
    std::lock_guard<std::mutex> lock(up_mu_);
    queue_.clear();
    ready_.clear();
    has_ready_.store(false, std::memory_order_release);
  }
  idle_cv_.notify_all();  // a waiter for the dropped jobs
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

KernelCache& global_cache() {
  static KernelCache* cache = [] {
    auto* c = new KernelCache();  // never destroyed: kernels may run at exit
    c->stop_at_exit_ = true;      // its background thread is stopped then instead
    return c;
  }();
  return *cache;
}

}  // namespace lf::cache
