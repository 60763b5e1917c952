// The in-memory kernel cache: canonical key string -> compiled kernel. The key's hash picks the
// bucket and the whole string is compared, so a collision can never run the wrong kernel.
// Single flight: when several threads need the same new kernel, one compiles and the rest wait.
// Below it sits the persistent cache (codegen/cache/disk_cache.h): a memory miss looks on disk first, and
// a kernel compiled here is stored there.
//
// Tiered compiling: a first-sight compile may return a quick build (CompiledKernel::quick, made
// for compile speed). The cache then compiles the caller's optimized build on its own background
// thread, which only compiles (NVRTC): loading the result on the device and swapping it in happen
// on a thread that flushes (install_upgrades(), at the start of every flush), so the background
// thread never calls the driver. Until then lookups get the quick build. The persistent cache
// stores the quick build at once, marked as one, and the optimized build over it when it is in:
// a run that loads a quick build queues its optimized build too (and a caller with no upgrade to
// offer compiles instead of loading it). A swap counts as a new generation, so whatever kept the
// old entry (flush plans) looks it up again.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "runtime/status.h"
#include "codegen/backend/compiled.h"
#include "codegen/kir/kernel_ir.h"

namespace lf::cache {

struct Entry {
  lf::Status status;  // not ok: compiling failed; the group runs unfused
  std::shared_ptr<CompiledKernel> kernel;  // the backend's subclass
  bool from_disk = false;                  // loaded from the persistent cache, not compiled
  std::string key;                         // the cache's key for it (KernelCache::current)
};

// What the persistent cache needs from the caller: the kernel (to describe the entry) and how to
// turn a stored binary back into a loaded kernel. The key starts
// "<backend>|<codegen fingerprint>|<target>|".
struct DiskSpec {
  const kir::Kernel* kernel = nullptr;
  std::function<lf::StatusOr<std::shared_ptr<CompiledKernel>>(const std::string& name, const std::string& binary)>
      load;
};

struct UpgradeStats {
  uint64_t upgraded = 0;  // quick builds replaced by their optimized build
  uint64_t failed = 0;    // optimized builds that did not compile or load (the quick build stays)
  double compile_ms = 0;  // the optimized builds' compile time, spent on the background thread
};

class KernelCache {
 public:
  using Compile = std::function<lf::StatusOr<std::shared_ptr<CompiledKernel>>()>;
  // The optimized build of a quick one. `build` runs on the background thread and must not touch
  // the device (it compiles); `finish` (loading it) runs in install_upgrades(). Both own whatever
  // they need: they run after get_or_compile has returned.
  struct Upgrade {
    Compile build;
    std::function<lf::Status(CompiledKernel&)> finish;
  };
  // Called only when the first compile returned a quick build.
  using MakeUpgrade = std::function<Upgrade()>;

  KernelCache() = default;
  KernelCache(const KernelCache&) = delete;
  KernelCache& operator=(const KernelCache&) = delete;
  ~KernelCache();  // stop_upgrades()

  // `hit` says whether the kernel was already there (or being compiled by another thread).
  // With `disk`, a memory miss tries the persistent cache before compiling, and a compiled kernel
  // with a binary is stored there; either way the miss is counted in the cache's bookkeeping.
  // With `upgrade`, a quick build is swapped for the optimized build once that is ready.
  std::shared_ptr<const Entry> get_or_compile(const std::string& key, const Compile& compile, bool* hit,
                                              const DiskSpec* disk = nullptr, const MakeUpgrade& upgrade = nullptr);
  size_t size() const;
  void clear();  // upgrades of the cleared entries are dropped
  // Counts clear()s and swaps: whatever kept entries of an older generation must look them up again.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }
  // What a lookup of `entry`'s key gets now, for a holder of an entry of an older generation:
  // `entry` itself, the optimized build swapped in for it, or null where the key was cleared, is
  // being compiled again, or failed to compile.
  std::shared_ptr<const Entry> current(const std::shared_ptr<const Entry>& entry) const;

  // Loads the optimized builds compiled so far and swaps them in. One atomic load when there are none.
  void install_upgrades() {
    if (has_ready_.load(std::memory_order_acquire)) install_ready();
  }
  // Waits until every queued optimized build is compiled, then installs them.
  void wait_for_upgrades();
  UpgradeStats upgrade_stats() const;
  void reset_upgrade_stats();
  // Drops queued builds, waits for the one compiling and ends the background thread; later quick
  // builds stay quick.
  void stop_upgrades();

 private:
  struct Job {
    std::string key;
    Upgrade upgrade;
    std::shared_ptr<const Entry> quick;    // the entry it replaces
    std::shared_ptr<kir::Kernel> kernel;   // for the persistent cache's record (null: not stored)
    std::shared_ptr<CompiledKernel> built;  // set by the background thread
  };
  void run_upgrades();
  void install_ready();
  void install(Job& job);
  void stop_at_exit();
  void stop_before_exit();  // arranges stop_at_exit() at process exit
  static void add_exit_handler();
  // stop_upgrades(), waiting at most `limit` for the build in progress (then leaving it to the process).
  void stop(std::optional<std::chrono::seconds> limit);

  mutable std::mutex mu_;
  std::atomic<uint64_t> generation_{0};
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<const Entry>>> entries_;

  // The background thread, started at the first quick build. Guarded by up_mu_.
  mutable std::mutex up_mu_;
  std::condition_variable up_cv_;    // work queued, or stopping
  std::condition_variable idle_cv_;  // the queue ran dry
  std::deque<Job> queue_;            // to compile
  std::deque<Job> ready_;            // compiled, to install
  std::atomic<bool> has_ready_{false};
  bool busy_ = false;
  bool stopped_ = false;
  UpgradeStats up_stats_;
  std::thread worker_;
  bool stop_at_exit_ = false;  // the global cache

  friend KernelCache& global_cache();
};

KernelCache& global_cache();

}  // namespace lf::cache
