#include "runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "runtime/config.h"

TEST(ThreadPool, RunsEveryChunkOnce) {
  for (int64_t chunks : {0, 1, 2, 7, 1000}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(chunks));
    lf::rt::parallel_for(chunks, [&](int64_t c) { hits[c].fetch_add(1); });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
}

// Jobs back to back whose chunk counts grow and shrink: each returns with every chunk run exactly
// once. A worker that took an index from the previous job's counter after the next job had set
// its chunk count (but not yet its counter) ran a chunk twice, and the job's pending count could
// step over 0 and never be seen at 0 (a hang, seen once with column sums on the loaded 2-core
// machine).
TEST(ThreadPool, BackToBackJobsOfOtherSizesRunEachChunkOnce) {
  std::vector<std::atomic<int>> hits(64);
  for (int round = 0; round < 20000; ++round) {
    const int64_t chunks = 1 + (round * 7) % 33;
    for (int64_t c = 0; c < chunks; ++c) hits[static_cast<size_t>(c)].store(0);
    lf::rt::parallel_for(chunks, [&](int64_t c) { hits[static_cast<size_t>(c)].fetch_add(1); });
    for (int64_t c = 0; c < chunks; ++c) ASSERT_EQ(hits[static_cast<size_t>(c)].load(), 1) << "round " << round << " chunk " << c;
  }
}

TEST(ThreadPool, RethrowsTheFirstError) {
  std::atomic<int> ran{0};
  EXPECT_THROW(lf::rt::parallel_for(64,
                                    [&](int64_t c) {
                                      ran.fetch_add(1);
                                      if (c == 5) throw std::runtime_error("chunk 5 failed");
                                    }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 64) << "the other chunks still run";
  // The pool still works afterwards.
  std::atomic<int> after{0};
  lf::rt::parallel_for(10, [&](int64_t) { after.fetch_add(1); });
  EXPECT_EQ(after.load(), 10);
}

TEST(ThreadPool, NestedCallsRunInline) {
  std::atomic<int> inner{0};
  lf::rt::parallel_for(4, [&](int64_t) { lf::rt::parallel_for(3, [&](int64_t) { inner.fetch_add(1); }); });
  EXPECT_EQ(inner.load(), 12);
}

namespace lf::rt {
namespace {

TEST(ThreadPool, UsableCoresFollowTheProcessesAffinity) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  // Under `taskset -c 0` this is 1, not the machine's core count.
  EXPECT_EQ(usable_cores(), CPU_COUNT(&set));
  EXPECT_LE(usable_cores(), static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace
}  // namespace lf::rt

// Issue 50 item 7: when threads cannot be created (ulimit -u, ulimit -v: std::thread throws), the
// pool runs on those it got, never hangs and lets no std::system_error escape. In a child started
// afresh (the "threadsafe" death-test style re-runs this test alone, so its pool is new) under an
// address-space limit a few thread stacks above what it uses now, asking for 200 threads.
namespace {

[[noreturn]] void run_starved() {
  long pages = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld", &pages) != 1) pages = 0;
    std::fclose(f);
  }
  const rlim_t now = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE));
  rlimit as{now + (rlim_t{48} << 20), now + (rlim_t{48} << 20)};  // a few 8 MiB stacks
  setrlimit(RLIMIT_AS, &as);
  rlimit nproc{64, 64};  // also ulimit -u where it holds (not for root)
  setrlimit(RLIMIT_NPROC, &nproc);
  lf::rt::mutable_config().num_threads = 200;
  try {
    std::vector<int> hits(1000, 0);
    lf::rt::parallel_for(1000, [&](int64_t c) { hits[static_cast<size_t>(c)] += 1; });
    lf::rt::parallel_for(1000, [&](int64_t c) { hits[static_cast<size_t>(c)] += 1; });
    for (int h : hits)
      if (h != 2) std::_Exit(3);
    const int got = lf::rt::pool_threads();
    std::fprintf(stderr, "ran on %d threads\n", got);
    std::_Exit(got >= 1 && got < 200 ? 0 : 4);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "escaped: %s\n", e.what());
    std::_Exit(2);
  }
}

}  // namespace

TEST(ThreadPool, RunsOnTheThreadsItGetsWhenStartsFail) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_starved(), ::testing::ExitedWithCode(0), "ran on [0-9]+ threads");
}
