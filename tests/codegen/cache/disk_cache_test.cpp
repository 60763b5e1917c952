// The persistent kernel cache: a second run loads instead of compiling; corrupt, truncated, stale
// and colliding entries are never used and get replaced; an unwritable directory or a full disk
// degrades to memory-only with one warning; several processes share one directory; LRU eviction;
// hits per entry and the programs' loads and compiles are counted. Every test uses its own temporary
// directory, never the user's cache.
#include "codegen/cache/disk_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "codegen/cpu/backend.h"
#include "codegen/cpu/loader.h"
#include "codegen/cache/disk_usage.h"
#include "codegen/exec/executor.h"
#include "codegen/cache/fingerprint.h"
#include "codegen/cache/kernel_cache.h"
#include "codegen/cache/cache_dir_fixture.h"
#include "codegen/test_util.h"

extern char** environ;

namespace {
namespace fs = std::filesystem;
using lf::cache::disk::decode;
using lf::cache::disk::encode;
using lf::cache::disk::read_file;

// The disk cache tests' fixture (cache_dir_fixture.h), with their readers of the cache's files.
class DiskCacheTest : public lf::test::CacheDirTest {
 protected:
  std::vector<fs::path> entries() const { return files(".lfk"); }

  // The hit count beside an entry; nullopt when there is no count file.
  std::optional<uint64_t> hits(const fs::path& entry) const {
    auto bytes = read_file(fs::path(entry).replace_extension(".hits").string());
    if (!bytes) return std::nullopt;
    std::string why;
    auto n = lf::cache::disk::decode_hits(*bytes, &why);
    EXPECT_TRUE(n) << "a hit count that does not decode: " << why;
    return n.value_or(0);
  }

  // The CPU line of the programs record (all zero when there is none).
  lf::cache::disk::BackendUse cpu_use() const {
    auto bytes = read_file(dir_ + "/programs.txt");
    if (!bytes) return {};
    std::string why;
    auto use = lf::cache::disk::decode_programs(*bytes, &why);
    EXPECT_TRUE(use) << why << ": " << *bytes;
    if (!use || !use->backends.count("cpu")) return {};
    return use->backends.at("cpu");
  }

  // Starts the filler program on this test's cache directory, its stdout going to `out`; -1 if it
  // could not be started.
  pid_t spawn_filler(const std::string& out, bool report_llvm = false) const {
    std::string env_dir = "LAZYFUSE_CACHE_DIR=" + dir_;
    std::vector<char*> env;
    env.push_back(env_dir.data());
    for (char** e = environ; *e; ++e)
      if (std::string(*e).rfind("LAZYFUSE_CACHE_DIR=", 0) != 0) env.push_back(*e);
    env.push_back(nullptr);
    char* argv[] = {const_cast<char*>(LF_CACHE_FILLER), const_cast<char*>(report_llvm ? "--report-llvm" : nullptr),
                    nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = -1;
    if (posix_spawn(&pid, LF_CACHE_FILLER, &actions, nullptr, argv, env.data()) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&actions);
    return pid;
  }
};

lf::Tensor input(float start) {
  return lf::from_vector(lf::test::iota_floats(6 * 70, start, 0.011f), {6, 70});
}

// Fused values of `make()` checked against the reference executor; returns compiles and disk hits.
struct Counts {
  uint64_t compiled, disk_hits;
};
Counts run_checked(const std::function<lf::Tensor()>& make) {
  lf::CacheStats before = lf::cache_stats();
  lf::Tensor t = make();
  lf::test::Values ref = lf::test::reference_values(t);
  lf::test::Values got = lf::test::fused_values(t);
  EXPECT_EQ(lf::test::compare(ref, got, lf::test::default_tolerance(lf::DType::Float32, 70)), "");
  lf::CacheStats after = lf::cache_stats();
  return {after.kernels_compiled - before.kernels_compiled, after.disk_hits - before.disk_hits};
}

lf::Tensor pointwise() { return lf::relu(input(-2) * input(1) + 0.5) - lf::sinh(input(0.3)); }
lf::Tensor reduction() { return lf::sum(lf::exp(input(-1)) * input(2), {-1}); }

TEST_F(DiskCacheTest, SecondRunCompilesNothing) {
  Counts first = run_checked(pointwise);
  Counts first_r = run_checked(reduction);
  EXPECT_EQ(first.compiled + first_r.compiled, 2u);
  EXPECT_EQ(first.disk_hits + first_r.disk_hits, 0u);
  ASSERT_EQ(entries().size(), 2u);
  for (const auto& p : entries()) {
    std::string why;
    auto r = decode(*read_file(p), &why);
    ASSERT_TRUE(r) << why;
    EXPECT_EQ(r->backend, "cpu");
    EXPECT_EQ(r->target, lf::cpu::target_id()) << "the CPU target, not the codegen fingerprint";
    EXPECT_EQ(r->key.rfind("cpu|" + std::string(lf::codegen_fingerprint()) + "|" + lf::cpu::target_id() + "|", 0), 0u);
    EXPECT_EQ(p.filename().string(), lf::cache::disk::file_name(r->key));
    EXPECT_FALSE(r->binary.empty());
    EXPECT_NE(r->source.find("define"), std::string::npos);
    EXPECT_FALSE(r->summary.empty());
  }
  // The "second run": a fresh in-memory cache, the same computations.
  lf::cache::global_cache().clear();
  Counts second = run_checked(pointwise);
  Counts second_r = run_checked(reduction);
  EXPECT_EQ(second.compiled + second_r.compiled, 0u);
  EXPECT_EQ(second.disk_hits + second_r.disk_hits, 2u);
}

// A bookkeeping file holds two slots; the newer intact one holds the value. A slot that is cut
// short or has a changed byte is passed over.
TEST(DiskUsageFormat, NewerIntactSlotWins) {
  using lf::cache::disk::Book;
  using lf::cache::disk::decode_hits;
  using lf::cache::disk::encode_slot;
  using lf::cache::disk::hits_payload;
  std::string older = encode_slot(Book::Hits, 7, hits_payload(41));
  std::string newer = encode_slot(Book::Hits, 8, hits_payload(42));
  ASSERT_EQ(older.size(), newer.size());
  EXPECT_EQ(decode_hits(older), 41u);
  EXPECT_EQ(decode_hits(older + newer), 42u);
  EXPECT_EQ(decode_hits(newer + older), 42u);
  EXPECT_EQ(decode_hits(older + newer.substr(0, newer.size() / 2)), 41u) << "the newer slot cut short";
  for (size_t i = 0; i < newer.size(); ++i) {
    std::string spoiled = newer;
    spoiled[i] ^= 0x04;
    EXPECT_EQ(decode_hits(older + spoiled), 41u) << "byte " << i << " changed";
  }
  std::string why;
  EXPECT_EQ(decode_hits(newer.substr(0, 20), &why), std::nullopt);
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(decode_hits("", &why), std::nullopt);
  EXPECT_EQ(decode_hits(older + newer + "x"), std::nullopt) << "longer than two slots";
  lf::cache::disk::ProgramUse use;
  use.since = 1795000000;
  use.backends["cpu"] = {3, 5, 4};
  use.backends["cuda"] = {1, 0, 2};
  std::string bytes = encode_slot(Book::Programs, 1, lf::cache::disk::programs_payload(use));
  auto back = lf::cache::disk::decode_programs(bytes, &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->since, use.since);
  EXPECT_EQ(back->backends.at("cpu").loaded, 5u);
  EXPECT_EQ(back->backends.at("cuda").compiled, 2u);
}

// Tiered compiling: the quick build is stored at once, marked as one, and its optimized build
// over it; a later run that loads the quick build queues its optimized build, and a caller that
// cannot upgrade compiles rather than use a quick build.
TEST_F(DiskCacheTest, QuickBuildIsStoredThenReplacedByTheOptimizedOne) {
  lf::kir::Kernel kernel;
  lf::cache::DiskSpec spec;
  spec.kernel = &kernel;
  std::string loaded;  // the binary the last load read
  spec.load = [&](const std::string& name, const std::string& binary) -> lf::StatusOr<std::shared_ptr<lf::CompiledKernel>> {
    auto k = std::make_shared<lf::CompiledKernel>();
    k->name = name;
    loaded = binary;
    return k;
  };
  using Built = lf::StatusOr<std::shared_ptr<lf::CompiledKernel>>;
  auto build = [](const char* binary, bool quick) {
    auto k = std::make_shared<lf::CompiledKernel>();
    k->name = "lf_tiered";
    k->binary = binary;
    k->quick = quick;
    return Built(k);
  };
  const std::string key = "cpu|test|test|tiered";
  bool hit = true;
  std::mutex gate;  // held: the optimized build cannot finish before the first check
  int upgrades = 0;
  auto upgrade = [&]() -> lf::cache::KernelCache::Upgrade {
    ++upgrades;
    return {[&] {
              std::lock_guard<std::mutex> wait(gate);
              return build("optimized bytes", false);
            },
            [](lf::CompiledKernel&) { return lf::OkStatus(); }};
  };
  {
    lf::cache::KernelCache cache;
    {
      std::lock_guard<std::mutex> hold(gate);
      cache.get_or_compile(key, [&] { return build("quick bytes", true); }, &hit, &spec, upgrade);
      auto record = lf::cache::disk::global_disk_cache().load(key);
      ASSERT_TRUE(record);
      EXPECT_EQ(record->binary, "quick bytes");
      EXPECT_TRUE(record->quick);
    }
    cache.wait_for_upgrades();
    auto record = lf::cache::disk::global_disk_cache().load(key);
    ASSERT_TRUE(record);
    EXPECT_EQ(record->binary, "optimized bytes");
    EXPECT_FALSE(record->quick);
  }
  // A run that stopped before its optimized build was in left the quick one: the next run loads
  // it, launches it, and compiles the optimized build in the background.
  lf::cache::disk::Record quick = *lf::cache::disk::global_disk_cache().load(key);
  quick.binary = "quick bytes";
  quick.quick = true;
  lf::cache::disk::global_disk_cache().store(quick);
  {
    lf::cache::KernelCache cache;
    int compiles = 0;
    auto e = cache.get_or_compile(key, [&] { ++compiles; return build("x", false); }, &hit, &spec, upgrade);
    EXPECT_EQ(compiles, 0);
    EXPECT_TRUE(e->from_disk);
    EXPECT_EQ(loaded, "quick bytes");
    EXPECT_TRUE(e->kernel->quick);
    EXPECT_EQ(upgrades, 2);
    cache.wait_for_upgrades();
    auto now = cache.get_or_compile(key, [&] { return build("x", false); }, &hit);
    EXPECT_TRUE(hit);
    EXPECT_FALSE(now->kernel->quick) << "the optimized build is in";
    EXPECT_EQ(cache.upgrade_stats().upgraded, 1u);
    EXPECT_FALSE(lf::cache::disk::global_disk_cache().load(key)->quick);
    EXPECT_EQ(lf::cache::disk::global_disk_cache().load(key)->binary, "optimized bytes");
  }
  lf::cache::disk::global_disk_cache().store(quick);
  {
    lf::cache::KernelCache cache;
    auto e = cache.get_or_compile(key, [&] { return build("optimized now", false); }, &hit, &spec);
    EXPECT_FALSE(e->from_disk) << "no upgrade offered: a quick build on disk is compiled over";
    EXPECT_EQ(lf::cache::disk::global_disk_cache().load(key)->binary, "optimized now");
  }
}

// Each load from disk counts a hit of its entry; the programs record counts this process once as a
// run, and every kernel it had to load or compile.
TEST_F(DiskCacheTest, HitsAndProgramUseAreCounted) {
  run_checked(pointwise);
  run_checked(reduction);
  ASSERT_EQ(entries().size(), 2u);
  for (const auto& p : entries()) EXPECT_EQ(hits(p), std::nullopt) << "compiled, never loaded";
  lf::cache::disk::BackendUse use = cpu_use();
  EXPECT_EQ(use.runs, 1u);
  EXPECT_EQ(use.loaded, 0u);
  EXPECT_EQ(use.compiled, 2u);
  for (int run = 1; run <= 2; ++run) {
    lf::cache::global_cache().clear();
    run_checked(pointwise);
    run_checked(reduction);
    run_checked(pointwise);  // in memory now: not a load, not counted
    for (const auto& p : entries()) EXPECT_EQ(hits(p), static_cast<uint64_t>(run)) << p;
  }
  use = cpu_use();
  EXPECT_EQ(use.runs, 1u) << "one process, one run";
  EXPECT_EQ(use.loaded, 4u);
  EXPECT_EQ(use.compiled, 2u);
}

// Threads of one process that count kernels at the same time count one run between them.
TEST_F(DiskCacheTest, ThreadsOfOneProcessAreOneRun) {
  fs::create_directories(dir_);
  constexpr int kThreads = 8;
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      ++ready;
      while (ready < kThreads) std::this_thread::yield();  // all start together
      lf::cache::disk::global_disk_cache().record_use("cpu|test|test|kernel " + std::to_string(i), false);
    });
  for (auto& t : threads) t.join();
  lf::cache::disk::BackendUse use = cpu_use();
  EXPECT_EQ(use.runs, 1u);
  EXPECT_EQ(use.compiled, static_cast<uint64_t>(kThreads));
}

// Two processes find no programs record and both make one: the one whose copy is not linked first
// reads the other's and still counts itself (it once took the other's entry for its own).
TEST_F(DiskCacheTest, ProcessThatLosesTheRaceToMakeTheRecordCountsItsRun) {
  fs::create_directories(dir_);
  lf::cache::disk::DiskCache first, second;  // the bookkeeping of two processes
  first.before_programs_create_for_testing([&] { second.record_use("cpu|test|test|kernel b", false); });
  first.record_use("cpu|test|test|kernel a", false);
  first.before_programs_create_for_testing({});
  lf::cache::disk::BackendUse use = cpu_use();
  EXPECT_EQ(use.runs, 2u);
  EXPECT_EQ(use.compiled, 2u);
  first.record_use("cpu|test|test|kernel c", true);  // counted already: no third run
  second.record_use("cpu|test|test|kernel d", false);
  use = cpu_use();
  EXPECT_EQ(use.runs, 2u);
  EXPECT_EQ(use.loaded + use.compiled, 4u);
}

// Hit counts and the programs record that do not parse count as empty and are rewritten whole,
// without a word on stderr (they are bookkeeping, not kernels).
TEST_F(DiskCacheTest, BadBookkeepingIsRewritten) {
  run_checked(pointwise);
  ASSERT_EQ(entries().size(), 1u);
  fs::path hit_file = fs::path(entries()[0]).replace_extension(".hits");
  std::ofstream(hit_file) << "12 and some";
  std::ofstream(dir_ + "/programs.txt") << std::string(3000, 'x');
  lf::cache::global_cache().clear();
  testing::internal::CaptureStderr();
  EXPECT_EQ(run_checked(pointwise).disk_hits, 1u);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(hits(entries()[0]), 1u);
  lf::cache::disk::BackendUse use = cpu_use();
  EXPECT_EQ(use.runs, 1u);
  EXPECT_EQ(use.loaded, 1u);
  EXPECT_EQ(use.compiled, 0u);
}

// A bookkeeping write cut short loses that one count; the next one goes on from the count before.
TEST_F(DiskCacheTest, TornBookkeepingWriteKeepsThePreviousCount) {
  run_checked(pointwise);
  for (int fault : {0, EIO, 0}) {
    lf::cache::global_cache().clear();
    lf::cache::disk::global_disk_cache().fail_writes_for_testing(fault);
    EXPECT_EQ(run_checked(pointwise).disk_hits, 1u);  // a load writes nothing else: storing stays on
  }
  lf::cache::disk::global_disk_cache().fail_writes_for_testing(0);
  ASSERT_EQ(entries().size(), 1u);
  EXPECT_EQ(hits(entries()[0]), 2u);
  lf::cache::disk::BackendUse use = cpu_use();
  EXPECT_EQ(use.runs, 1u);
  EXPECT_EQ(use.loaded, 2u);
  EXPECT_EQ(use.compiled, 1u);
}

TEST_F(DiskCacheTest, OffMeansNoFiles) {
  lf::rt::mutable_config().cache_dir = "";
  Counts c = run_checked(pointwise);
  EXPECT_EQ(c.compiled, 1u);
  EXPECT_FALSE(fs::exists(dir_));
}

// Damages the single entry, then checks that the next run reports it, compiles, and replaces it.
void expect_replaced(DiskCacheTest* t, const fs::path& entry, const std::function<lf::Tensor()>& make,
                     const char* message) {
  lf::cache::global_cache().clear();
  testing::internal::CaptureStderr();
  Counts c = run_checked(make);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(c.compiled, 1u);
  EXPECT_EQ(c.disk_hits, 0u);
  if (message) {
    EXPECT_NE(err.find(message), std::string::npos) << err;
  }
  std::string why;
  EXPECT_TRUE(decode(*read_file(entry), &why)) << "the entry was replaced: " << why;
  lf::cache::global_cache().clear();
  c = run_checked(make);
  EXPECT_EQ(c.disk_hits, 1u);
}

TEST_F(DiskCacheTest, FlippedByteIsDetectedAndReplaced) {
  run_checked(pointwise);
  ASSERT_EQ(entries().size(), 1u);
  fs::path entry = entries()[0];
  std::string bytes = *read_file(entry);
  bytes[bytes.size() / 2] ^= 0x40;
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << bytes;
  expect_replaced(this, entry, pointwise, "checksum mismatch");
}

TEST_F(DiskCacheTest, TruncatedEntryIsDetectedAndReplaced) {
  run_checked(reduction);
  ASSERT_EQ(entries().size(), 1u);
  fs::path entry = entries()[0];
  fs::resize_file(entry, fs::file_size(entry) / 3);
  expect_replaced(this, entry, reduction, "unusable");
  fs::resize_file(entry, 0);
  expect_replaced(this, entry, reduction, "unusable");
}

// A valid entry under our file name but for another key (a hash collision) or another compiler
// version is ignored and replaced, never loaded.
TEST_F(DiskCacheTest, CollidingOrStaleEntryIsNotUsed) {
  run_checked(pointwise);
  ASSERT_EQ(entries().size(), 1u);
  fs::path entry = entries()[0];
  std::string why;
  auto good = decode(*read_file(entry), &why);
  ASSERT_TRUE(good) << why;
  auto other = *good;
  other.key += "|something else";
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << encode(other);
  expect_replaced(this, entry, pointwise, nullptr);
  EXPECT_EQ(decode(*read_file(entry), &why)->key, good->key);
  auto stale = *good;
  stale.target = "llvm0.0/some-other-cpu";
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << encode(stale);
  expect_replaced(this, entry, pointwise, nullptr);
  EXPECT_EQ(decode(*read_file(entry), &why)->target, good->target);
}

// An intact entry whose object file the loader refuses (here: made for another machine) is
// reported, compiled again and replaced.
TEST_F(DiskCacheTest, ObjectThatDoesNotLoadIsReplaced) {
  run_checked(reduction);
  ASSERT_EQ(entries().size(), 1u);
  fs::path entry = entries()[0];
  std::string why;
  auto r = decode(*read_file(entry), &why);
  ASSERT_TRUE(r) << why;
  ASSERT_GT(r->binary.size(), 20u);
#if defined(__x86_64__)
  r->binary[18] = static_cast<char>(183);  // e_machine: EM_AARCH64
#else
  r->binary[18] = static_cast<char>(62);  // e_machine: EM_X86_64
#endif
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << encode(*r);
  const bool orc = lf::cpu::choose_loader()->loader == lf::cpu::Loader::Orc;
  expect_replaced(this, entry, reduction,
                  orc ? "did not load (object file (LLVM ORC): made for "
                      : "did not load (object file: machine 183, not x86-64); recompiling it");
}

// A program whose kernels are all in the persistent cache never loads LLVM (the plugin is loaded
// only to compile): the filler reports what /proc/self/maps says.
TEST_F(DiskCacheTest, LoadingFromDiskNeedsNoLlvm) {
  if (!std::filesystem::exists(LF_CACHE_FILLER)) GTEST_SKIP() << LF_CACHE_FILLER << " is not here";
  if (lf::cpu::choose_loader()->loader == lf::cpu::Loader::Orc) GTEST_SKIP() << "LLVM ORC's loader is in the plugin";
  for (const char* want : {"compiled=3 disk_hits=0 llvm=yes\n", "compiled=0 disk_hits=3 llvm=no\n"}) {
    std::string out = root_ + "/out";
    pid_t pid = spawn_filler(out, /*report_llvm=*/true);
    ASSERT_GT(pid, 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    EXPECT_EQ(*read_file(out), want);
  }
}

// An entry that exists but cannot be read (here: a directory in its place) is reported, and the
// kernel is compiled; the process goes on.
TEST_F(DiskCacheTest, UnreadableEntryIsReported) {
  run_checked(pointwise);
  ASSERT_EQ(entries().size(), 1u);
  fs::path entry = entries()[0];
  fs::remove(entry);
  fs::create_directory(entry);
  lf::cache::global_cache().clear();
  testing::internal::CaptureStderr();
  Counts c = run_checked(pointwise);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(c.compiled, 1u);
  EXPECT_NE(err.find("unusable"), std::string::npos) << err;
}

TEST_F(DiskCacheTest, UnwritableDirectoryIsMemoryOnlyWithOneWarning) {
  std::ofstream(root_ + "/file") << "not a directory";
  lf::rt::mutable_config().cache_dir = root_ + "/file/cache";
  testing::internal::CaptureStderr();
  Counts a = run_checked(pointwise);
  Counts b = run_checked(reduction);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(a.compiled + b.compiled, 2u);
  size_t first = err.find("cannot write the kernel cache");
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_EQ(err.find("cannot write the kernel cache", first + 1), std::string::npos) << "one warning: " << err;
  // Kernels stay cached in memory.
  Counts again = run_checked(pointwise);
  EXPECT_EQ(again.compiled, 0u);
}

TEST_F(DiskCacheTest, ReadOnlyDirectory) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes through read-only permissions";
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  testing::internal::CaptureStderr();
  Counts a = run_checked(pointwise);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(a.compiled, 1u);
  EXPECT_NE(err.find("cannot write the kernel cache"), std::string::npos) << err;
  EXPECT_TRUE(entries().empty());
}

// A write that fails (here ENOSPC after half the bytes, as on a full disk) turns storing off with
// one warning that says why; no partial entry or temporary file is left; bookkeeping writes that
// fail say nothing; kernels still load from disk, compile and run correctly, and stay in memory.
TEST_F(DiskCacheTest, FullDiskIsMemoryOnlyWithOneWarning) {
  auto third = [] { return lf::cos(input(0.1)) * input(1) - 2.0; };
  run_checked(pointwise);
  lf::cache::global_cache().clear();
  EXPECT_EQ(run_checked(pointwise).disk_hits, 1u);
  ASSERT_EQ(entries().size(), 1u);
  fs::path stored = entries()[0];
  ASSERT_EQ(hits(stored), 1u);
  lf::cache::disk::BackendUse before = cpu_use();
  lf::cache::global_cache().clear();
  lf::cache::disk::global_disk_cache().fail_writes_for_testing(ENOSPC);
  testing::internal::CaptureStderr();
  Counts loaded = run_checked(pointwise);  // its hit count cannot be written: silently lost
  Counts a = run_checked(reduction);       // its entry cannot be written: the warning
  Counts b = run_checked(third);           // storing is off: no second try, no second warning
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(loaded.disk_hits, 1u);
  EXPECT_EQ(a.compiled + b.compiled, 2u);
  size_t first = err.find("cannot write the kernel cache");
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_NE(err.find(std::strerror(ENOSPC), first), std::string::npos) << "says why: " << err;
  EXPECT_EQ(err.find("cannot write the kernel cache", first + 1), std::string::npos) << "one warning: " << err;
  EXPECT_EQ(err.find("[lazyfuse]", first + 1), std::string::npos) << "nothing else: " << err;
  ASSERT_EQ(entries(), std::vector<fs::path>{stored});
  std::string why;
  EXPECT_TRUE(decode(*read_file(stored), &why)) << why;
  // The torn bookkeeping writes spoiled only the slots they wrote: the counts before them stand.
  EXPECT_EQ(hits(stored), 1u);
  EXPECT_EQ(cpu_use().loaded, before.loaded);
  EXPECT_EQ(cpu_use().compiled, before.compiled);
  for (auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().rfind(".tmp-", 0), std::string::npos) << "left over: " << e.path();
  // Kernels stay cached in memory.
  EXPECT_EQ(run_checked(reduction).compiled + run_checked(third).compiled + run_checked(pointwise).compiled, 0u);
}

// Any write error does the same; here EIO (a failing disk).
TEST_F(DiskCacheTest, WriteErrorIsMemoryOnlyWithOneWarning) {
  lf::cache::disk::global_disk_cache().fail_writes_for_testing(EIO);
  testing::internal::CaptureStderr();
  Counts a = run_checked(pointwise);
  Counts b = run_checked(reduction);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(a.compiled + b.compiled, 2u);
  size_t first = err.find("cannot write the kernel cache");
  ASSERT_NE(first, std::string::npos) << err;
  EXPECT_NE(err.find(std::strerror(EIO), first), std::string::npos) << err;
  EXPECT_EQ(err.find("cannot write the kernel cache", first + 1), std::string::npos) << "one warning: " << err;
  EXPECT_TRUE(entries().empty());
  for (auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().rfind(".tmp-", 0), std::string::npos) << "left over: " << e.path();
}

TEST_F(DiskCacheTest, LeastRecentlyUsedEvicted) {
  auto a = [] { return lf::exp(input(-1)) * input(2); };
  auto b = [] { return lf::sin(input(-1)) * input(2); };
  auto c = [] { return lf::cos(input(-1)) * input(2); };
  run_checked(a);
  run_checked(b);
  ASSERT_EQ(entries().size(), 2u);
  uint64_t total = 0, largest = 0;
  for (const auto& p : entries()) {
    total += fs::file_size(p);
    largest = std::max<uint64_t>(largest, fs::file_size(p));
  }
  lf::rt::mutable_config().cache_max_bytes = total + largest / 2;  // two fit, three do not
  // Reloading a from disk marks it used: b is now the least recently used.
  lf::cache::global_cache().clear();
  usleep(20000);
  EXPECT_EQ(run_checked(a).disk_hits, 1u);
  usleep(20000);
  run_checked(c);
  auto after = entries();
  ASSERT_EQ(after.size(), 2u);
  uint64_t after_total = 0;
  for (const auto& p : after) after_total += fs::file_size(p);
  EXPECT_LE(after_total, lf::rt::config().cache_max_bytes);
  // a was used after b: b is the one evicted, so a still loads from disk and b compiles.
  lf::cache::global_cache().clear();
  EXPECT_EQ(run_checked(a).disk_hits, 1u);
  EXPECT_EQ(run_checked(c).disk_hits, 1u);
  lf::rt::mutable_config().cache_max_bytes = uint64_t{1} << 30;
  EXPECT_EQ(run_checked(b).compiled, 1u);
}

// An evicted entry's hit count goes with it, and a count whose entry is gone is removed.
TEST_F(DiskCacheTest, EvictionRemovesHitCounts) {
  auto a = [] { return lf::exp(input(-1)) * input(2); };
  auto b = [] { return lf::sin(input(-1)) * input(2); };
  run_checked(a);
  lf::cache::global_cache().clear();
  EXPECT_EQ(run_checked(a).disk_hits, 1u);
  ASSERT_EQ(entries().size(), 1u);
  fs::path old_entry = entries()[0];
  ASSERT_EQ(hits(old_entry), 1u);
  std::ofstream(dir_ + "/0123456789abcdef.hits") << "3\n";  // an entry removed by hand
  lf::rt::mutable_config().cache_max_bytes = 1;             // only the newest entry stays
  usleep(20000);
  run_checked(b);
  ASSERT_EQ(entries().size(), 1u);
  EXPECT_NE(entries()[0], old_entry);
  EXPECT_FALSE(fs::exists(fs::path(old_entry).replace_extension(".hits")));
  EXPECT_FALSE(fs::exists(dir_ + "/0123456789abcdef.hits"));
}

// Several processes fill one directory at once; every one succeeds and every entry verifies.
TEST_F(DiskCacheTest, ConcurrentProcesses) {
  // The filler program is found by its build-tree path (a binary carried elsewhere has none).
  if (!std::filesystem::exists(LF_CACHE_FILLER)) GTEST_SKIP() << LF_CACHE_FILLER << " is not here";
  for (int round = 0; round < 2; ++round) {
    std::vector<pid_t> pids;
    for (int i = 0; i < 6; ++i) {
      pid_t pid = spawn_filler(root_ + "/out" + std::to_string(i));
      ASSERT_GT(pid, 0);
      pids.push_back(pid);
    }
    for (size_t i = 0; i < pids.size(); ++i) {
      int status = 0;
      ASSERT_EQ(waitpid(pids[i], &status, 0), pids[i]);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round << " status " << status;
      // The second round finds every kernel on disk: nothing is compiled.
      if (round == 1) {
        EXPECT_EQ(*read_file(root_ + "/out" + std::to_string(i)), "compiled=0 disk_hits=3\n");
      }
    }
  }
  auto files = entries();
  EXPECT_EQ(files.size(), 3u);
  for (const auto& p : files) {
    std::string why;
    EXPECT_TRUE(decode(*read_file(p), &why)) << p << ": " << why;
  }
  // The bookkeeping, updated by 12 processes under one lock: each process one run; every kernel a
  // process needed, loaded or compiled; the second round's 18 loads; every load one hit.
  lf::cache::disk::BackendUse use = cpu_use();
  EXPECT_EQ(use.runs, 12u);
  EXPECT_EQ(use.loaded + use.compiled, 36u);
  EXPECT_GE(use.loaded, 18u);
  EXPECT_GE(use.compiled, 3u);
  uint64_t total_hits = 0;
  for (const auto& p : files) {
    EXPECT_GE(hits(p).value_or(0), 6u) << p;
    total_hits += hits(p).value_or(0);
  }
  EXPECT_EQ(total_hits, use.loaded);
  for (auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().filename().string().rfind(".tmp-", 0), std::string::npos) << "left over: " << e.path();
}

TEST_F(DiskCacheTest, CudaSecondRunCompilesNothing) {
  if (!lf::cuda_available()) GTEST_SKIP() << "no GPU";
  lf::set_default_device(lf::Device::cuda(0));
  auto make = [] { return lf::sum(lf::exp(input(-1)) * input(2) + 0.25, {-1}); };
  Counts first = run_checked(make);
  EXPECT_EQ(first.compiled, 1u);
  lf::finish_compiles();  // the optimized build, over the quick one stored first
  bool found = false;
  for (const auto& p : entries()) {
    std::string why;
    auto r = decode(*read_file(p), &why);
    ASSERT_TRUE(r) << why;
    if (r->backend == "cuda") found = !r->binary.empty();
  }
  EXPECT_TRUE(found) << "a cuda entry with a cubin";
  lf::cache::global_cache().clear();
  Counts second = run_checked(make);
  EXPECT_EQ(second.compiled, 0u);
  EXPECT_EQ(second.disk_hits, 1u);
}

}  // namespace
