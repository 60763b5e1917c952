#include "runtime/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/config.h"

namespace lf::rt {
namespace {

class ThreadPool {
 public:
  // Starts up to threads - 1 workers (the caller is the other). Where the system refuses one
  // (ulimit -u, an address-space limit: std::thread throws std::system_error), the pool runs on
  // those it got, at the least the caller alone, and says so once: a failed start must neither
  // escape into the user's read nor leave started workers behind to hang the exit.
  explicit ThreadPool(int threads) {
    try {
      workers_.reserve(static_cast<size_t>(std::max(threads - 1, 0)));
      for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
    } catch (const std::exception& e) {
      std::fprintf(stderr, "[lazyfuse] started %zu of %d CPU worker threads (%s); running on %zu\n", workers_.size(),
                   threads - 1, e.what(), workers_.size() + 1);
    }
  }
  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
  }

  void run(int64_t chunks, const std::function<void(int64_t)>& fn) {
    std::unique_lock<std::mutex> job_lock(job_mu_);  // one job at a time
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn_ = &fn;
      chunks_.store(chunks);
      next_.store(0);
      pending_ = chunks;
      error_ = nullptr;
      ++generation_;
    }
    cv_.notify_all();
    drain();
    std::unique_lock<std::mutex> lock(mu_);
    // Every chunk done, and every worker out of drain(): a worker still there could take an index
    // from this job's counter after the next job has set chunks_ but not yet next_, and run a
    // chunk of the next job twice (its count then reaching 0 while a chunk still runs).
    done_cv_.wait(lock, [this] { return pending_ == 0 && draining_ == 0; });
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void drain() {
    for (;;) {
      int64_t i = next_.fetch_add(1);
      if (i >= chunks_) return;
      try {
        (*fn_)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu_);
        if (!error_) error_ = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_cv_.notify_all();
    }
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return stop_ || (generation_ != seen && fn_ != nullptr); });
        if (stop_) return;
        seen = generation_;
        ++draining_;
      }
      drain();
      std::lock_guard<std::mutex> lock(mu_);
      if (--draining_ == 0 && pending_ == 0) done_cv_.notify_all();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex job_mu_, mu_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int64_t)>* fn_ = nullptr;
  std::atomic<int64_t> chunks_{0};
  std::atomic<int64_t> next_{0};
  int64_t pending_ = 0;
  int draining_ = 0;  // workers inside drain()
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

thread_local bool t_in_pool = false;

ThreadPool& pool() {
  static ThreadPool p(num_cpu_threads());
  return p;
}

}  // namespace

int usable_cores() {
  // Asked once: hardware_concurrency() reads /sys on every call (glibc's get_nprocs), and counts
  // cores this process may not run on.
  static const int cores = [] {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return cores;
}

int pool_threads() { return pool().threads(); }

int num_cpu_threads() {
  int n = config().num_threads;
  return n > 0 ? n : usable_cores();
}

void parallel_for(int64_t chunks, const std::function<void(int64_t)>& fn) {
  if (chunks <= 0) return;
  if (chunks == 1 || t_in_pool || num_cpu_threads() == 1) {
    // As the pool does: every chunk runs, and the first exception is rethrown at the end.
    std::exception_ptr first;
    for (int64_t i = 0; i < chunks; ++i) {
      try {
        fn(i);
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
    return;
  }
  t_in_pool = true;
  auto wrapped = [&fn](int64_t i) {
    bool was = t_in_pool;
    t_in_pool = true;
    fn(i);
    t_in_pool = was;
  };
  try {
    pool().run(chunks, wrapped);
  } catch (...) {
    t_in_pool = false;
    throw;
  }
  t_in_pool = false;
}

}  // namespace lf::rt
