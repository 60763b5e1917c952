// A fixed pool of CPU worker threads for running kernel chunks. The calling thread works too, so a
// pool of N threads uses N cores; nested calls run inline.
#pragma once

#include <cstdint>
#include <functional>

namespace lf::rt {

// The cores this process may run on (its CPU affinity: taskset, a container's cpuset), at least 1.
int usable_cores();
int num_cpu_threads();  // LAZYFUSE_NUM_THREADS, else usable_cores()
// The threads the pool runs on (its workers and the caller), which is num_cpu_threads() unless
// the system refused to start some (ulimit -u, an address-space limit); starts the pool.
int pool_threads();

// Runs fn(chunk) for chunk in [0, chunks), spread over the pool; returns when all are done.
// The first exception thrown by a chunk is rethrown here.
void parallel_for(int64_t chunks, const std::function<void(int64_t)>& fn);

}  // namespace lf::rt
