// Observability of a run (README, "Fusion and kernels"): the kernel profile (LAZYFUSE_PROFILE,
// lf::profile_begin/profile_report) and the Chrome/Perfetto trace file (LAZYFUSE_TRACE_FILE).
// Off, each costs the callers one relaxed load of one flag (obs::on()), a predictable branch.
// Knows no IR: callers hand it names, op lists and byte counts.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace lf::rt::obs {

namespace detail {
extern std::atomic<bool> g_profile, g_trace, g_any;
}
// Whether either is on: the one test on hot paths.
inline bool on() { return detail::g_any.load(std::memory_order_relaxed); }
inline bool profiling() { return detail::g_profile.load(std::memory_order_relaxed); }
inline bool tracing() { return detail::g_trace.load(std::memory_order_relaxed); }

// Reads LAZYFUSE_PROFILE and LAZYFUSE_TRACE_FILE (through rt::config()) once; called by the first
// flush. Registers the report and the trace file's writing at exit.
void init();

using Clock = std::chrono::steady_clock;
inline Clock::time_point now() { return Clock::now(); }
double ms_between(Clock::time_point a, Clock::time_point b);

// A device-side timing of one launch (GPU: a pair of CUDA events), read when the report is made.
struct DeviceTimer {
  virtual ~DeviceTimer() = default;
  virtual void stop() = 0;           // right after the launch was queued
  virtual double elapsed_ms() = 0;   // waits for the launch; < 0 when the timing failed
};

// One kernel launch: `name` (the kernel name, lf_<hash>), `ops` (called only the first time a
// name is seen), its bytes read and written, and its time: measured on the host (`host_ms`,
// exact for a synchronous launch) or, with `timer`, on the device.
void launch(const std::string& name, const std::function<std::string()>& ops, uint64_t bytes,
            Clock::time_point start, Clock::time_point end, std::unique_ptr<DeviceTimer> timer = nullptr);
// A library call (matmul, convolution, pooling, attention, scan, scatter, sort, nearest): one
// row of the profile per distinct `name` and `ops` (its shapes), with its calls, `bytes` and its
// time from construction to destruction (on the device with `timer`, as launch's) less that of
// the kernels it launches itself (an epilogue keeps its own row), so that nothing is counted twice
// and the profile's host time is the host's. On the trace a span of category "library".
class LibraryCall {
 public:
  LibraryCall(std::string name, std::string ops, uint64_t bytes, std::unique_ptr<DeviceTimer> timer);
  ~LibraryCall();
  LibraryCall(const LibraryCall&) = delete;
  LibraryCall& operator=(const LibraryCall&) = delete;

  // Internal (profile.cpp): the time of the kernels launched inside, to take out of this call's.
  struct Inner;

 private:
  std::string name_, ops_;
  uint64_t bytes_;
  std::unique_ptr<DeviceTimer> timer_;
  Clock::time_point start_;
  std::shared_ptr<Inner> inner_;
  std::shared_ptr<Inner>* outer_;  // the call this one runs inside (one library call's own), or null
};
// One flush: its wall time, and whether it replayed a flush plan.
void flush(Clock::time_point start, Clock::time_point end, bool replayed);
// A span on the trace's timeline (fusing, a compile): "ph":"X" on this thread. `args`: a JSON
// object's members ("\"key\": 1"), or empty.
void span(const char* category, const std::string& name, Clock::time_point start, Clock::time_point end,
          const std::string& args = "");

// Profile scopes (lazyfuse/runtime.h): begin clears the counts and turns profiling on; report
// returns the table (and turns it off again unless LAZYFUSE_PROFILE is set).
void profile_begin();
std::string profile_report(bool stop);
// Writes the trace file now (it is also written at exit); false when it cannot be written.
bool write_trace();

}  // namespace lf::rt::obs
