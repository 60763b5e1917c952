#include "runtime/launch_queue.h"

#include <system_error>
#include <utility>

#include "lazyfuse/types.h"

namespace lf::rt {
namespace {

thread_local bool t_on_worker = false;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Waits for `done` to reach `target` while `running`: spins a while (the worker takes a call in
// microseconds), then yields the core.
void wait_until(const std::atomic<uint64_t>& done, uint64_t target, const std::atomic<bool>& running) {
  for (int spins = 0; done.load(std::memory_order_acquire) < target && running.load(std::memory_order_acquire);
       ++spins) {
    if (spins < 4096)
      cpu_relax();
    else
      std::this_thread::yield();
  }
}

}  // namespace

LaunchQueue::LaunchQueue(Options options) : options_(options) {}

LaunchQueue::~LaunchQueue() { stop_worker(); }

void LaunchQueue::stop_worker() {
  if (!worker_.joinable()) return;
  stop_.store(true, std::memory_order_seq_cst);
  state_.store(kAwake, std::memory_order_seq_cst);
  state_.notify_one();
  worker_.join();  // it runs what is queued first
}

void LaunchQueue::shut_down() {
  inline_only_.store(true, std::memory_order_seq_cst);
  stop_worker();
}

bool LaunchQueue::submit(const Call& call, bool may_queue) {
  if (has_failure_.load(std::memory_order_acquire)) drain();  // throws the worker's failure
  if (!may_queue || !options_.enabled || inline_only_.load(std::memory_order_relaxed)) {
    drain();  // calls queued before (queueing may have been allowed then) go first
    run_here(call);
    return false;
  }
  const uint64_t tail = tail_.load(std::memory_order_relaxed);  // only submitters write it
  const bool idle = state_.load(std::memory_order_acquire) == kAsleep && done_.load(std::memory_order_acquire) == tail;
  if (idle) {
    // Everything submitted before has returned, so running here keeps the order.
    const auto now = std::chrono::steady_clock::now();
    const bool burst = inline_runs_ > 0 && now - last_inline_ < options_.burst_gap;
    last_inline_ = now;
    // With no worker yet, nothing is queued: idle is true, and a failed start runs the call here.
    if (!burst || (!worker_.joinable() && !start_worker())) {
      run_here(call);
      return false;
    }
  }
  enqueue(call);
  return true;
}

void LaunchQueue::run_here(const Call& call) {
  ++inline_runs_;
  if (int r = call.fn(call.a, call.b, call.c); r != 0) throw Error(failure_message(call.what, r));
}

std::string LaunchQueue::failure_message(const char* what, int result) const {
  return options_.describe ? options_.describe(what, result)
                           : std::string(what) + " failed with result " + std::to_string(result);
}

bool LaunchQueue::start_worker() {
  // Awake before it exists: the first enqueue needs no wake-up, and the worker spins at once.
  state_.store(kAwake, std::memory_order_seq_cst);
  worker_running_.store(true, std::memory_order_seq_cst);
  try {
    worker_ = std::thread([this] { worker_main(); });
    return true;
  } catch (const std::system_error&) {  // no thread to be had: every call runs here from now on
    worker_running_.store(false, std::memory_order_seq_cst);
    state_.store(kAsleep, std::memory_order_seq_cst);
    inline_only_.store(true, std::memory_order_relaxed);
    return false;
  }
}

void LaunchQueue::enqueue(const Call& call) {
  const uint64_t tail = tail_.load(std::memory_order_relaxed);
  wait_until(done_, tail + 1 > kCapacity ? tail + 1 - kCapacity : 0, worker_running_);  // full: it is awake
  ring_[tail % kCapacity] = call;
  // seq_cst with the load below and the worker's going to sleep (store state, then load tail):
  // either it sees this call, or this sees it asleep and wakes it.
  tail_.store(tail + 1, std::memory_order_seq_cst);
  if (state_.load(std::memory_order_seq_cst) == kAsleep) {
    state_.store(kAwake, std::memory_order_seq_cst);
    state_.notify_one();
  }
}

void LaunchQueue::worker_main() {
  t_on_worker = true;
  uint64_t head = done_.load(std::memory_order_relaxed);
  int spins = 0;
  bool idle_timing = false;
  std::chrono::steady_clock::time_point idle_since;
  for (;;) {
    if (head != tail_.load(std::memory_order_acquire)) {
      const Call call = ring_[head % kCapacity];
      if (int r = call.fn(call.a, call.b, call.c); r != 0) note_failure(call.what, r);
      offloaded_.store(offloaded_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      done_.store(++head, std::memory_order_release);
      spins = 0;
      idle_timing = false;
      continue;
    }
    if (stop_.load(std::memory_order_acquire)) {
      worker_running_.store(false, std::memory_order_release);
      return;
    }
    // Idle: spin for options_.idle_spin (reading the clock every 64 turns), then sleep.
    if (++spins < 64) {
      cpu_relax();
      continue;
    }
    spins = 0;
    const auto now = std::chrono::steady_clock::now();
    if (!idle_timing) {
      idle_timing = true;
      idle_since = now;
    }
    if (now - idle_since < options_.idle_spin) continue;
    state_.store(kAsleep, std::memory_order_seq_cst);
    if (head == tail_.load(std::memory_order_seq_cst) && !stop_.load(std::memory_order_seq_cst))
      state_.wait(kAsleep, std::memory_order_seq_cst);
    state_.store(kAwake, std::memory_order_seq_cst);
    idle_timing = false;
  }
}

void LaunchQueue::drain(bool rethrow) { drain_to(tail_.load(std::memory_order_acquire), rethrow); }

void LaunchQueue::drain_to(uint64_t count, bool rethrow) {
  if (t_on_worker) return;
  // (A worker that stopped at exit leaves nothing to wait for: calls queued after it are dropped.)
  wait_until(done_, count, worker_running_);
  if (!rethrow || !has_failure_.load(std::memory_order_acquire)) return;
  std::string message;
  {
    std::lock_guard<std::mutex> lock(failure_mu_);
    message = failure_;
  }
  throw Error(message + " (on LazyFuse's launch thread, before the work queued after it; every later use of the "
              "device reports it)");
}

void LaunchQueue::note_failure(const char* what, int result) {
  std::lock_guard<std::mutex> lock(failure_mu_);
  if (has_failure_.load(std::memory_order_relaxed)) return;  // the first one is the one to report
  failure_ = failure_message(what, result);
  has_failure_.store(true, std::memory_order_release);
}

}  // namespace lf::rt
