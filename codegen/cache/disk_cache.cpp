#include "codegen/cache/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <vector>

#include "codegen/cache/disk_usage.h"
#include "runtime/config.h"

namespace lf::cache::disk {
namespace fs = std::filesystem;

namespace {

// Temp files of a crashed writer are removed after this long.
constexpr auto kStaleTemp = std::chrono::hours(1);

// Returns 0 or the errno of the failed write. `fault` (tests) fails it after half the bytes.
int write_all(int fd, const std::string& data, int fault) {
  size_t done = 0, stop = fault ? data.size() / 2 : data.size();
  while (done < stop) {
    ssize_t n = ::write(fd, data.data() + done, stop - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    done += static_cast<size_t>(n);
  }
  return fault;
}

}  // namespace

bool DiskCache::enabled() const { return !rt::config().cache_dir.empty(); }

std::optional<Record> DiskCache::load(const std::string& key) {
  const std::string& dir = rt::config().cache_dir;
  if (dir.empty()) return std::nullopt;
  std::string path = dir + "/" + file_name(key);
  // Opened without following a symlink or blocking on a FIFO, and read with a bound: a special
  // file named like an entry is unusable, reported and replaced like a corrupt one.
  std::string why;
  auto bytes = read_file(path, &why);
  std::optional<Record> record;
  if (bytes) {
    record = decode(*bytes, &why);
  } else if (errno == ENOENT) {
    return std::nullopt;  // the usual miss
  }
  if (!record) {
    std::lock_guard<std::mutex> lock(mu_);
    if (reported_.insert(path).second)
      std::fprintf(stderr, "[lazyfuse] warning: cache entry %s is unusable (%s); recompiling it\n", path.c_str(),
                   why.c_str());
    return std::nullopt;
  }
  if (record->key != key) return std::nullopt;  // a hash collision: the string decides
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);  // last use, for eviction; fails harmlessly read-only
  return record;
}

void DiskCache::warn_unwritable(const std::string& dir, const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (unwritable_.insert(dir).second)
    std::fprintf(stderr,
                 "[lazyfuse] warning: cannot write the kernel cache in %s (%s); compiled kernels are kept in "
                 "memory only\n",
                 dir.c_str(), why.c_str());
}

void DiskCache::store(const Record& record) {
  std::string dir = rt::config().cache_dir;
  if (dir.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (unwritable_.count(dir)) return;
  }
  std::string path = dir + "/" + file_name(record.key);
  const std::string bytes = encode(record);
  // `lazyfuse-cache clear` (or rm -r) while this process runs may remove the directory, or the
  // temporary file between its write and its rename (ENOENT): that is no reason to stop storing,
  // so the directory is made again and the write tried once more.
  int err = 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return warn_unwritable(dir, ec.message());
    err = replace_file(dir, path, bytes, /*sync=*/true);
    if (err != ENOENT) break;
  }
  if (err) return warn_unwritable(dir, std::strerror(err));
  {
    std::lock_guard<std::mutex> lock(mu_);
    reported_.erase(path);  // a later fault in the new entry is news again
  }
  evict(dir, rt::config().cache_max_bytes, path);
}

int DiskCache::replace_file(const std::string& dir, const std::string& path, const std::string& data, bool sync) {
  static std::atomic<uint64_t> counter{0};
  std::string tmp = dir + "/.tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  int err = write_all(fd, data, write_fault_.load());
  if (!err && sync && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;  // NFS reports some write errors only here
  if (!err && before_rename_) before_rename_();
  if (!err && ::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err) ::unlink(tmp.c_str());
  return err;
}

void DiskCache::record_use(const std::string& key, bool loaded) {
  std::string dir = rt::config().cache_dir;
  if (dir.empty()) return;
  std::string backend = key.substr(0, key.find('|'));
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (unwritable_.count(dir) || lock_stuck_.count(dir)) return;
  }
  auto add_hit = [](const std::string& payload) -> std::optional<std::string> {
    return hits_payload(parse_hits(payload).value_or(0) + 1);
  };
  // This process is a run in a record that does not list it yet: one this process has not counted
  // itself in, or one started since (cleared, or unreadable). The decision is taken again from the
  // payload of every attempt (update_book may call `add_use` twice when another process made the
  // file first) and is final only once written; this process's own updates go one at a time so
  // that two of its threads cannot both count it.
  bool counted = false, new_run = false;
  auto add_use = [&](const std::string& payload) -> std::optional<std::string> {
    ProgramUse use = parse_programs(payload, nullptr).value_or(ProgramUse{});
    if (use.since == 0) use.since = static_cast<int64_t>(std::time(nullptr));
    new_run = !counted || !use.backends.count(backend);
    BackendUse& b = use.backends[backend];
    b.runs += new_run ? 1 : 0;
    ++(loaded ? b.loaded : b.compiled);
    return programs_payload(use);
  };
  int fault = write_fault_.load();
  int err = loaded ? update_book(dir + "/" + hits_name(key_hash(key)), Book::Hits, add_hit, fault) : 0;
  std::lock_guard<std::mutex> programs_lock(programs_mu_);
  if (!err) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      // A thread queued here behind one that timed out does not wait out the lock again.
      if (lock_stuck_.count(dir)) return;
      counted = counted_.count({dir, backend}) > 0;
    }
    err = update_book(dir + "/" + kProgramsFile, Book::Programs, add_use, fault, before_programs_create_);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (err == ETIMEDOUT) lock_stuck_.insert(dir);
  if (!err && new_run) counted_.insert({dir, backend});
}

// Oldest last use first, until the entries fit; other processes may be removing the same files.
// An entry's hit count goes with it, and counts whose entry is gone are removed.
void DiskCache::evict(const std::string& dir, uint64_t max_bytes, const std::string& keep) {
  struct File {
    fs::file_time_type used;
    uint64_t size;
    std::string path;
  };
  std::vector<File> files;
  std::set<std::string> entry_hashes;
  std::vector<fs::path> hit_files;
  uint64_t total = 0;
  std::error_code ec;
  auto now = fs::file_time_type::clock::now();
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::string name = it->path().filename().string();
    std::error_code e2;
    auto used = it->last_write_time(e2);
    if (e2) continue;
    if (name.rfind(".tmp-", 0) == 0) {
      if (now - used > kStaleTemp) fs::remove(it->path(), e2);
      continue;
    }
    if (name.ends_with(kHitsSuffix)) hit_files.push_back(it->path());
    if (!name.ends_with(kEntrySuffix)) continue;
    uint64_t size = it->file_size(e2);
    if (e2) continue;
    files.push_back({used, size, it->path().string()});
    entry_hashes.insert(it->path().stem().string());
    total += size;
  }
  for (const fs::path& p : hit_files) {
    std::error_code e2;
    if (!ec && !entry_hashes.count(p.stem().string())) fs::remove(p, e2);  // a partial listing proves nothing
  }
  if (total <= max_bytes) return;
  std::sort(files.begin(), files.end(), [](const File& a, const File& b) { return a.used < b.used; });
  for (const File& f : files) {
    if (total <= max_bytes) break;
    if (f.path == keep) continue;
    std::error_code e2;
    fs::remove(f.path, e2);
    fs::remove(fs::path(f.path).replace_extension(kHitsSuffix), e2);
    total -= f.size;
  }
}

DiskCache& global_disk_cache() {
  static DiskCache* cache = new DiskCache();
  return *cache;
}

std::string io_summary(const kir::Kernel& kernel) {
  std::string in, out;
  for (const kir::Operand& o : kernel.operands) {
    if (o.kind == kir::Operand::Kind::Index) continue;
    bool any = false, zero = false;
    for (kir::StrideClass c : o.strides) {
      any |= c == kir::StrideClass::Any;
      zero |= c == kir::StrideClass::Zero;
    }
    std::string s = std::string(dtype_name(o.dtype)) + ":" + (any ? "strided" : zero ? "bcast" : "contig");
    std::string& side = o.kind == kir::Operand::Kind::Output ? out : in;
    side += (side.empty() ? "" : ",") + s;
  }
  return (in.empty() ? "-" : in) + " -> " + out;
}

}  // namespace lf::cache::disk
