#include "runtime/launch_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "lazyfuse/types.h"

namespace lf::rt {
namespace {

using std::chrono::microseconds;

// A lost wake-up or a drain that waits for itself hangs instead of failing: abort with a message
// if the test is still running after a minute.
class Watchdog {
 public:
  Watchdog()
      : thread_([this] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cv_.wait_for(lock, std::chrono::seconds(60), [this] { return done_; })) {
            std::fprintf(stderr, "LaunchQueue test hung for 60 s (a lost wake-up, or a drain that never returns)\n");
            std::abort();
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

class LaunchQueueTest : public ::testing::Test {
  Watchdog watchdog_;
};

// A call that appends its number to a log: the log shows what ran, in which order.
struct Log {
  std::vector<uintptr_t> ran;
};
int append(void* log, void* number, void*) {
  static_cast<Log*>(log)->ran.push_back(reinterpret_cast<uintptr_t>(number));
  return 0;
}
LaunchQueue::Call append_call(Log* log, uintptr_t number) {
  LaunchQueue::Call c;
  c.fn = append;
  c.a = log;
  c.b = reinterpret_cast<void*>(number);
  c.what = "append";
  return c;
}

LaunchQueue::Options options(microseconds burst_gap, microseconds idle_spin = microseconds(200)) {
  LaunchQueue::Options o;
  o.burst_gap = burst_gap;
  o.idle_spin = idle_spin;
  o.describe = [](const char* what, int result) { return std::string(what) + " returned " + std::to_string(result); };
  return o;
}

std::vector<uintptr_t> numbers(uintptr_t n) {
  std::vector<uintptr_t> v(n);
  for (uintptr_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

TEST_F(LaunchQueueTest, CallsInABurstRunOnTheWorkerInOrder) {
  LaunchQueue q(options(std::chrono::seconds(10)));  // every call after the first is in the burst
  Log log;
  const uintptr_t n = 5000;  // many times the ring: the submitter waits when it is full
  for (uintptr_t i = 0; i < n; ++i) q.submit(append_call(&log, i));
  q.drain();
  EXPECT_EQ(log.ran, numbers(n));
  EXPECT_EQ(q.inline_runs(), 1u);  // the first one: nothing was running
  EXPECT_EQ(q.offloaded(), n - 1);
}

TEST_F(LaunchQueueTest, SparseCallsRunOnTheSubmittingThread) {
  LaunchQueue q(options(microseconds(0)));  // no two calls are close enough to make a burst
  Log log;
  for (uintptr_t i = 0; i < 100; ++i) EXPECT_FALSE(q.submit(append_call(&log, i)));
  EXPECT_EQ(log.ran, numbers(100));  // ran before submit returned: no drain needed
  EXPECT_EQ(q.offloaded(), 0u);
  EXPECT_FALSE(q.worker_awake());
}

TEST_F(LaunchQueueTest, DisabledRunsEverythingHere) {
  LaunchQueue::Options o = options(std::chrono::seconds(10));
  o.enabled = false;
  LaunchQueue q(o);
  Log log;
  for (uintptr_t i = 0; i < 100; ++i) EXPECT_FALSE(q.submit(append_call(&log, i)));
  EXPECT_EQ(log.ran, numbers(100));
  EXPECT_EQ(q.offloaded(), 0u);
}

int slow_set(void* flag, void*, void*) {
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  *static_cast<bool*>(flag) = true;
  return 0;
}

TEST_F(LaunchQueueTest, DrainWaitsForTheCallInProgress) {
  LaunchQueue q(options(std::chrono::seconds(10)));
  Log log;
  q.submit(append_call(&log, 0));  // here
  bool done = false;
  LaunchQueue::Call slow;
  slow.fn = slow_set;
  slow.a = &done;
  slow.what = "slow";
  EXPECT_TRUE(q.submit(slow));  // on the worker, 30 ms
  q.drain();
  EXPECT_TRUE(done);
}

TEST_F(LaunchQueueTest, TheWorkerSleepsWhenIdleAndWakesForTheNextBurst) {
  LaunchQueue q(options(std::chrono::seconds(10), microseconds(500)));
  Log log;
  q.submit(append_call(&log, 0));
  EXPECT_TRUE(q.submit(append_call(&log, 1)));
  q.drain();
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (q.worker_awake() && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_FALSE(q.worker_awake()) << "the worker kept spinning with nothing to do";
  // Asleep, and the next call comes within the burst gap (10 s) of the last one run here: it wakes
  // the worker.
  EXPECT_TRUE(q.submit(append_call(&log, 2)));
  EXPECT_TRUE(q.submit(append_call(&log, 3)));
  q.drain();
  EXPECT_EQ(log.ran, numbers(4));
}

int fail_with_7(void*, void*, void*) { return 7; }

// Throws unless `fn` throws lf::Error saying `text`.
template <typename F>
void expect_error(F fn, const std::string& text) {
  try {
    fn();
    ADD_FAILURE() << "no lf::Error saying \"" << text << "\"";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST_F(LaunchQueueTest, AFailureOnTheWorkerIsThrownByEveryDrainAndSubmitAfter) {
  LaunchQueue q(options(std::chrono::seconds(10)));
  Log log;
  q.submit(append_call(&log, 0));
  q.submit(append_call(&log, 1));
  LaunchQueue::Call bad;
  bad.fn = fail_with_7;
  bad.what = "cuGraphLaunch";
  EXPECT_TRUE(q.submit(bad));
  // Another thread waiting for the device sees it...
  std::thread other([&] { expect_error([&] { q.drain(); }, "cuGraphLaunch returned 7"); });
  other.join();
  // ... and so does this one, however many times: the outputs of the failed launch were handed
  // out before it ran, so nothing read after it can be trusted.
  expect_error([&] { q.drain(); }, "cuGraphLaunch returned 7");
  expect_error([&] { q.drain(); }, "cuGraphLaunch returned 7");
  expect_error([&] { q.submit(append_call(&log, 2)); }, "cuGraphLaunch returned 7");
  q.drain(/*rethrow=*/false);  // destructors wait without throwing
  EXPECT_EQ(log.ran, numbers(2));
}

TEST_F(LaunchQueueTest, AFailureHereIsThrownBySubmit) {
  LaunchQueue q(options(microseconds(0)));
  LaunchQueue::Call bad;
  bad.fn = fail_with_7;
  bad.what = "cuGraphLaunch";
  expect_error([&] { q.submit(bad); }, "cuGraphLaunch returned 7");
  Log log;
  EXPECT_FALSE(q.submit(append_call(&log, 0)));  // the caller saw it: nothing left to report
  EXPECT_EQ(log.ran, numbers(1));
}

int drain_from_worker(void* queue, void* done, void*) {
  static_cast<LaunchQueue*>(queue)->drain();  // would wait for itself
  *static_cast<bool*>(done) = true;
  return 0;
}

TEST_F(LaunchQueueTest, DrainOnTheWorkerReturnsAtOnce) {
  LaunchQueue q(options(std::chrono::seconds(10)));
  Log log;
  q.submit(append_call(&log, 0));
  bool done = false;
  LaunchQueue::Call c;
  c.fn = drain_from_worker;
  c.a = &q;
  c.b = &done;
  c.what = "drain";
  EXPECT_TRUE(q.submit(c));
  q.drain();
  EXPECT_TRUE(done);
}

TEST_F(LaunchQueueTest, DestroyingItRunsWhatIsQueued) {
  Log log;
  bool done = false;
  {
    LaunchQueue q(options(std::chrono::seconds(10)));
    q.submit(append_call(&log, 0));
    LaunchQueue::Call slow;
    slow.fn = slow_set;
    slow.a = &done;
    slow.what = "slow";
    q.submit(slow);
    for (uintptr_t i = 1; i < 10; ++i) q.submit(append_call(&log, i));
  }
  EXPECT_TRUE(done);
  EXPECT_EQ(log.ran, numbers(10));
}

TEST_F(LaunchQueueTest, OtherThreadsDrainWhileOneSubmits) {
  LaunchQueue q(options(std::chrono::seconds(10)));
  Log log;
  const uintptr_t n = 20000;
  std::atomic<bool> stop{false};
  std::thread drainer([&] {
    while (!stop.load()) q.drain();
  });
  for (uintptr_t i = 0; i < n; ++i) q.submit(append_call(&log, i));
  q.drain();
  stop = true;
  drainer.join();
  EXPECT_EQ(log.ran, numbers(n));
}

// The worker falls asleep between calls (no spinning at all) while calls come at random gaps:
// every hand-over between sleeping and waking, in both orders.
TEST_F(LaunchQueueTest, WorkerSleepingBetweenCallsLosesNone) {
  LaunchQueue q(options(std::chrono::seconds(10), microseconds(0)));
  Log log;
  std::mt19937 rng(5);
  const uintptr_t n = 3000;
  for (uintptr_t i = 0; i < n; ++i) {
    q.submit(append_call(&log, i));
    auto until = std::chrono::steady_clock::now() + microseconds(rng() % 40);
    while (std::chrono::steady_clock::now() < until) {
    }
    if (i % 500 == 499) q.drain();
  }
  q.drain();
  EXPECT_EQ(log.ran, numbers(n));
  EXPECT_GT(q.offloaded(), 0u);
}

TEST_F(LaunchQueueTest, AfterShutDownCallsRunHere) {
  LaunchQueue q(options(std::chrono::seconds(10)));
  Log log;
  q.submit(append_call(&log, 0));
  q.submit(append_call(&log, 1));
  q.shut_down();  // runs what is queued
  EXPECT_EQ(log.ran, numbers(2));
  EXPECT_FALSE(q.submit(append_call(&log, 2)));
  EXPECT_EQ(log.ran, numbers(3));
  q.drain();
}

}  // namespace
}  // namespace lf::rt
