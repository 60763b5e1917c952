// The persistent kernel cache: entries (codegen/cache/disk_entry.h) in one directory, named by the hash
// of the full key. Written atomically (temp file, fsync, rename) so that concurrent processes never
// see half a file; a corrupt entry is reported once and ignored (the caller compiles and replaces
// it); an unwritable directory or a failed write (a full disk) turns storing off with one warning;
// least-recently-used entries are evicted past the size limit. Beside the entries it keeps the
// bookkeeping of codegen/cache/disk_usage.h (hits per entry, loads and compiles per backend). The
// directory and the limit come from rt::config() at each call.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "codegen/cache/disk_entry.h"
#include "codegen/kir/kernel_ir.h"

namespace lf::cache::disk {

class DiskCache {
 public:
  bool enabled() const;  // a cache directory is configured
  // The entry stored for exactly `key`, or nullopt (absent, corrupt, another key, unreadable).
  // A hit marks the entry as used now (its mtime).
  std::optional<Record> load(const std::string& key);
  // Best effort: failures are reported once and leave the cache memory-only.
  void store(const Record& record);
  // After a memory miss, the kernel for `key` was `loaded` from disk or else compiled: counts one
  // more hit of its entry (when loaded) and one more load or compile, and this process as a run,
  // in the programs record. Silent and best effort: a read-only or full directory, or a lock that
  // another process keeps too long, loses the count and never corrupts a file.
  void record_use(const std::string& key, bool loaded);

  // Tests: from now on every write into a cache directory fails with `error` (ENOSPC: a full disk)
  // after half of its bytes; 0 ends it.
  void fail_writes_for_testing(int error) { write_fault_ = error; }
  // Tests: runs `f` between writing a file's temporary copy and renaming it into place (to remove
  // it there, as a concurrent `lazyfuse-cache clear` may); an empty function ends it. Not
  // thread-safe: set it while no store runs.
  void before_rename_for_testing(std::function<void()> f) { before_rename_ = std::move(f); }
  // Tests: runs `f` when the programs record is absent, between this process's new copy and its
  // link into place (where another process may make it first). Set it while no record_use runs.
  void before_programs_create_for_testing(std::function<void()> f) { before_programs_create_ = std::move(f); }

 private:
  void warn_unwritable(const std::string& dir, const std::string& why);
  void evict(const std::string& dir, uint64_t max_bytes, const std::string& keep);
  // Writes `data` to `path` through a temporary file in `dir` and a rename; `sync`: fsync first.
  // Returns 0 or the errno of the step that failed (the temporary file is removed then).
  int replace_file(const std::string& dir, const std::string& path, const std::string& data, bool sync);

  std::mutex mu_;
  std::mutex programs_mu_;  // this process's updates of a programs record, one at a time
  std::set<std::string> reported_;    // corrupt entry paths already reported
  std::set<std::string> unwritable_;  // directories where storing failed
  std::set<std::pair<std::string, std::string>> counted_;  // (directory, backend): this run is counted there
  std::set<std::string> lock_stuck_;  // directories where another process kept a bookkeeping lock too long
  std::atomic<int> write_fault_{0};
  std::function<void()> before_rename_;
  std::function<void()> before_programs_create_;
};

DiskCache& global_disk_cache();

// "float32:contig,float32:bcast -> float32:contig": what a user reading `lazyfuse-cache list`
// wants to know about the operands.
std::string io_summary(const kir::Kernel& kernel);

}  // namespace lf::cache::disk
