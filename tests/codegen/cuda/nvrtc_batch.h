// NVRTC compile-only tests in bulk: every source of a test compiled once (duplicates, which many
// variant sweeps produce, share one compile) on as many threads as the machine has cores. NVRTC
// compiles separate programs concurrently; one of our tensor-core kernels takes it seconds.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <future>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "codegen/cuda/nvrtc.h"

namespace lf::test {

// Whether the compile tests should sweep every combination of their parameters rather than a
// covering set (LAZYFUSE_TEST_EVERY_VARIANT=1).
inline bool every_variant() {
  const char* e = std::getenv("LAZYFUSE_TEST_EVERY_VARIANT");
  return e != nullptr && std::string(e) == "1";
}

// A source to compile, the name of its kernel, what to print when it fails, and the target.
struct NvrtcJob {
  std::string source, kernel, what, arch = "sm_90";
};

// Compiles the jobs (each for its arch) and expects each to succeed.
inline void expect_all_compile(const std::vector<NvrtcJob>& jobs) {
  std::map<std::pair<std::string, std::string>, size_t> first;  // (source, kernel) -> its slot
  std::vector<size_t> slot(jobs.size());
  std::vector<const NvrtcJob*> unique;
  for (size_t i = 0; i < jobs.size(); ++i) {
    auto [it, added] = first.try_emplace({jobs[i].source + "\n// " + jobs[i].arch, jobs[i].kernel}, unique.size());
    if (added) unique.push_back(&jobs[i]);
    slot[i] = it->second;
  }
  std::vector<Status> status(unique.size());
  std::atomic<size_t> next{0};
  const size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), unique.size());
  std::vector<std::future<void>> workers;
  for (size_t w = 0; w < threads; ++w)
    workers.push_back(std::async(std::launch::async, [&] {
      for (size_t i; (i = next++) < unique.size();)
        status[i] = cuda::check_compiles(unique[i]->source, unique[i]->kernel, unique[i]->arch);
    }));
  for (auto& f : workers) f.get();
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Status& s = status[slot[i]];
    EXPECT_TRUE(s.ok()) << jobs[i].what << ":\n" << s.message() << "\n----- source -----\n" << jobs[i].source;
  }
}

}  // namespace lf::test
