// Runtime controls: the default device, sync, and the counters a user can read.
#pragma once

#include <cstdint>
#include <string>

#include "lazyfuse/types.h"

namespace lf {

Device default_device();  // CUDA when a GPU, a driver and the CUDA backend are present, else CPU
void set_default_device(Device device);
bool cuda_available();

void sync();  // materializes every pending value still held by a Tensor (of this thread's trace)

// Waits until the work queued on `device` has finished. Kernels on a GPU run asynchronously: sync()
// queues them and returns; reads wait by themselves. For timing, and before handing device memory
// to other code.
void device_synchronize(Device device = default_device());

// Fusion on (the default) or off: off runs every op as its own kernel, for comparisons and
// debugging. Starts as LAZYFUSE_FUSION says.
void set_fusion_enabled(bool enabled);
bool fusion_enabled();

// Returns cached free device and host memory to the system (freed tensors' blocks are kept for
// reuse otherwise).
void empty_cache();

// Waits until the optimized builds of new GPU kernels are in place. A GPU kernel seen for the
// first time is compiled quickly (less optimized) and launched at once, while its optimized build
// compiles on a background thread and replaces it when ready (LAZYFUSE_TIERED_COMPILE). For
// benchmarks that time the steady state, and before exit when the persistent cache should have
// every optimized build.
void finish_compiles();

struct CacheStats {
  uint64_t flushes = 0;          // sync points that had work to do
  uint64_t nodes_executed = 0;   // trace nodes computed
  uint64_t kernels_compiled = 0;  // real compiles (not loads from the persistent cache)
  uint64_t disk_hits = 0;         // kernels loaded from the persistent cache instead of compiled
  uint64_t hits = 0;
  uint64_t misses = 0;
  double compile_ms = 0;
  uint64_t kernels_launched = 0;
  uint64_t bytes_moved = 0;      // bytes read and written by launched kernels
  uint64_t plans_replayed = 0;   // flushes replayed from a recorded flush plan (no fusing or lowering)
  uint64_t graph_launches = 0;   // of those, GPU ones launched as one CUDA graph (LAZYFUSE_CUDA_GRAPHS)
  uint64_t queued_launches = 0;  // of those, launches handed to the launch thread (LAZYFUSE_LAUNCH_THREAD)
  uint64_t quick_builds = 0;      // of kernels_compiled, quick builds (GPU tiered compiling)
  uint64_t kernels_upgraded = 0;  // quick builds replaced by their optimized build (background thread)
  double upgrade_ms = 0;          // the optimized builds' compile time, on the background thread
  // Index-error words read at sync points: one per kernel or GPU scatter whose indices are data
  // (a gather's indices the host wrote itself and knows in range need none). On a GPU each read
  // waits for the device's queued work, so a flush with one returns when the device is done.
  uint64_t index_checks = 0;
};
CacheStats cache_stats();
void reset_stats();

// Kernel profile (README, "Observability"): from profile_begin() on, every kernel launch (replayed
// flush plans included, per step) and every flush is timed (CPU: the host's steady clock around
// the launch; GPU: CUDA events). profile_report() returns the table: per kernel its name (as in
// logs and `lazyfuse-cache show`), ops, launches, total and mean time, bytes, GB/s and, with
// LAZYFUSE_PROFILE_FLOOR_GBS, the ratio to a copy's time; sorted by time; then the flushes' host
// time. It ends the scope (unless LAZYFUSE_PROFILE=1, which profiles the whole run and prints the
// table at exit). Profiling on makes replayed GPU plans launch kernel by kernel (no CUDA graph).
void profile_begin();
std::string profile_report();

// A profile scope: begins at construction; at destruction prints the table to stderr unless
// report() was called.
class Profile {
 public:
  Profile() { profile_begin(); }
  ~Profile();
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;
  std::string report();

 private:
  bool reported_ = false;
};

// LAZYFUSE_TRACE_FILE: writes the Chrome/Perfetto trace now (it is written at exit too); false
// when no trace file is set or it cannot be written.
bool write_trace();

}  // namespace lf
