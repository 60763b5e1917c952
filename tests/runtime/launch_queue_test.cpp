#include "runtime/launch_queue.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "lazyfuse/types.h"

namespace lf::rt {
namespace {

using std::chrono::microseconds;

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

TEST(LaunchQueue, CallsInABurstRunOnTheWorkerInOrder) {
  LaunchQueue q(options(std::chrono::seconds(10)));  // every call after the first is in the burst
  Log log;
  const uintptr_t n = 5000;  // many times the ring: the submitter waits when it is full
  for (uintptr_t i = 0; i < n; ++i) q.submit(append_call(&log, i));
  q.drain();
  EXPECT_EQ(log.ran, numbers(n));
  EXPECT_EQ(q.inline_runs(), 1u);  // the first one: nothing was running
  EXPECT_EQ(q.offloaded(), n - 1);
}

TEST(LaunchQueue, SparseCallsRunOnTheSubmittingThread) {
  LaunchQueue q(options(microseconds(0)));  // no two calls are close enough to make a burst
  Log log;
  for (uintptr_t i = 0; i < 100; ++i) EXPECT_FALSE(q.submit(append_call(&log, i)));
  EXPECT_EQ(log.ran, numbers(100));  // ran before submit returned: no drain needed
  EXPECT_EQ(q.offloaded(), 0u);
  EXPECT_FALSE(q.worker_awake());
}

TEST(LaunchQueue, DisabledRunsEverythingHere) {
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

TEST(LaunchQueue, DrainWaitsForTheCallInProgress) {
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

TEST(LaunchQueue, TheWorkerSleepsWhenIdleAndWakesForTheNextBurst) {
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

TEST(LaunchQueue, AFailureOnTheWorkerIsThrownByTheNextDrain) {
  LaunchQueue q(options(std::chrono::seconds(10)));
  Log log;
  q.submit(append_call(&log, 0));
  q.submit(append_call(&log, 1));
  LaunchQueue::Call bad;
  bad.fn = fail_with_7;
  bad.what = "cuGraphLaunch";
  EXPECT_TRUE(q.submit(bad));
  try {
    q.drain();
    FAIL() << "drain() did not report the failed call";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuGraphLaunch returned 7"), std::string::npos) << e.what();
  }
  q.drain();  // reported once
  EXPECT_EQ(log.ran, numbers(2));
}

TEST(LaunchQueue, AFailureHereIsThrownBySubmit) {
  LaunchQueue q(options(microseconds(0)));
  LaunchQueue::Call bad;
  bad.fn = fail_with_7;
  bad.what = "cuGraphLaunch";
  try {
    q.submit(bad);
    FAIL() << "submit() did not report the failed call";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuGraphLaunch returned 7"), std::string::npos) << e.what();
  }
}

int drain_from_worker(void* queue, void* done, void*) {
  static_cast<LaunchQueue*>(queue)->drain();  // would wait for itself
  *static_cast<bool*>(done) = true;
  return 0;
}

TEST(LaunchQueue, DrainOnTheWorkerReturnsAtOnce) {
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

TEST(LaunchQueue, DestroyingItRunsWhatIsQueued) {
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

TEST(LaunchQueue, OtherThreadsDrainWhileOneSubmits) {
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

}  // namespace
}  // namespace lf::rt
