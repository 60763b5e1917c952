// Driver calls made off the recording thread: a worker thread submits GPU launches in order while
// the thread that flushed goes on recording. A replayed flush costs its CUDA graph launch, 1.2-1.9
// us of host time on the H100 hosts (bench/RESULTS.md), out of a 3-6 us call; when flushes come
// back to back, the worker pays it instead.
//
// The worker runs only while calls come in bursts. A submission that finds it asleep and nothing
// queued runs right there (no wake-up latency, as before), unless the previous one did too less
// than `burst_gap` ago: then the worker is woken and takes the calls from here on, spinning for
// `idle_spin` after its last one before it sleeps again.
//
// Ordering: calls run in submission order, each after the one before returns. Anything else that
// puts work on the same stream must call drain() first (cu::device_context() does), so that it
// lands after every call submitted before it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace lf::rt {

class LaunchQueue {
 public:
  // One driver call and its arguments; fn returns the driver's result (0: success).
  struct Call {
    int (*fn)(void* a, void* b, void* c) = nullptr;
    void* a = nullptr;
    void* b = nullptr;
    void* c = nullptr;
    const char* what = "";  // names the call in errors ("cuGraphLaunch")
  };
  struct Options {
    bool enabled = true;  // false: every call runs on the submitting thread
    std::chrono::microseconds burst_gap{100};
    std::chrono::microseconds idle_spin{200};
    // The lf::Error message for a call that failed (the driver's error text).
    std::string (*describe)(const char* what, int result) = nullptr;
  };

  explicit LaunchQueue(Options options);
  ~LaunchQueue();  // runs what is queued, then stops the worker
  LaunchQueue(const LaunchQueue&) = delete;
  LaunchQueue& operator=(const LaunchQueue&) = delete;

  // Runs `call` after every call submitted before it, on the worker (returns true: queued) or here
  // (false; always when may_queue is false). One submitting thread at a time (the executor's flush
  // lock). Throws lf::Error for a failed call: this one when it ran here, or an earlier one the
  // worker ran.
  bool submit(const Call& call, bool may_queue = true);

  // Returns once every call queued so far has returned (a call running on the submitting thread is
  // that thread's own business). Any thread; on the worker itself, at once. Throws lf::Error when
  // a call the worker ran failed: its outputs were handed out before it ran, so from then on every
  // drain and submit throws it (rethrow = false: wait only, for destructors).
  void drain(bool rethrow = true);
  // The same for the first `count` calls submitted (a count submitted() returned): a caller that
  // must not overtake one call of its own need not wait for the calls queued after it.
  void drain_to(uint64_t count, bool rethrow = true);
  // Calls submitted so far, queued or run (one submitting thread: read it right after submit()).
  uint64_t submitted() const { return tail_.load(std::memory_order_acquire); }

  // At process exit: runs what is queued and stops the worker; later calls run on the submitting
  // thread. Calls queued by other threads still flushing at that moment may be dropped.
  void shut_down();

  // Calls the worker ran, and calls run on the submitting thread.
  uint64_t offloaded() const { return offloaded_.load(std::memory_order_relaxed); }
  uint64_t inline_runs() const { return inline_runs_; }
  bool worker_awake() const { return state_.load(std::memory_order_acquire) == kAwake; }

 private:
  static constexpr uint64_t kCapacity = 256;
  static constexpr int kAsleep = 0, kAwake = 1;

  void run_here(const Call& call);
  bool start_worker();
  void enqueue(const Call& call);
  void worker_main();
  std::string failure_message(const char* what, int result) const;
  void note_failure(const char* what, int result);
  void stop_worker();

  const Options options_;
  Call ring_[kCapacity];
  // Submitted (written by the submitter), run and returned (by the worker): calls with index in
  // [done_, tail_) are queued or running. Kept on separate cache lines.
  alignas(64) std::atomic<uint64_t> tail_{0};
  alignas(64) std::atomic<uint64_t> done_{0};
  alignas(64) std::atomic<int> state_{kAsleep};
  std::atomic<bool> stop_{false};
  std::atomic<bool> inline_only_{false};  // shut down, or the worker could not start
  std::atomic<bool> worker_running_{false};
  std::atomic<bool> has_failure_{false};
  std::atomic<uint64_t> offloaded_{0};
  uint64_t inline_runs_ = 0;
  std::chrono::steady_clock::time_point last_inline_{};
  std::mutex failure_mu_;
  std::string failure_;  // the first failed call's message (the worker's calls)
  std::thread worker_;   // started at the first burst
};

}  // namespace lf::rt
