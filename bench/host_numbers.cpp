// Issue 48's first target: the host time of a replayed flush whose numbers change every step
// (a scalar, an arange's start, a random op's counter) against the same flush with fixed numbers,
// on the default device (or --cuda). Each row is the median host time of one step (record the
// ops, then lf::sync(): replay or fuse, launch; a GPU's kernels may still run when it returns)
// over many steps, with the share of flushes that replayed a plan. The peer row of each is the
// same loop with fixed numbers; "plans off" (LAZYFUSE_FLUSH_PLANS=0) is what a flush costs when
// it fuses and lowers afresh, as every step with a changing number did before numbers became plan
// parameters.
//
//   lazyfuse-bench-host-numbers [--cuda] [--steps N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "runtime/config.h"  // flush plans on and off (a user sets LAZYFUSE_FLUSH_PLANS)

namespace {

using Clock = std::chrono::steady_clock;

struct Timing {
  double median_us = 0;
  double replayed = 0;  // share of the timed flushes that replayed a plan
};

// `step(i)` records step i's ops and syncs; timed one by one after a warm-up.
Timing time_steps(int steps, const std::function<void(int)>& step) {
  for (int i = 0; i < 50; ++i) step(i);
  lf::CacheStats before = lf::cache_stats();
  std::vector<double> us(static_cast<size_t>(steps));
  for (int i = 0; i < steps; ++i) {
    auto start = Clock::now();
    step(50 + i);
    us[static_cast<size_t>(i)] = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  }
  lf::CacheStats after = lf::cache_stats();
  std::nth_element(us.begin(), us.begin() + steps / 2, us.end());
  double flushes = static_cast<double>(after.flushes - before.flushes);
  return {us[static_cast<size_t>(steps / 2)], flushes > 0 ? static_cast<double>(after.plans_replayed - before.plans_replayed) / flushes : 0};
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 2001;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cuda") == 0) {
      if (!lf::cuda_available()) {
        std::fprintf(stderr, "no CUDA device\n");
        return 0;
      }
      lf::set_default_device(lf::Device::cuda(0));
    } else if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      steps = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--cuda] [--steps N]\n", argv[0]);
      return 2;
    }
  }
  const int64_t n = 4096;
  lf::Tensor x = lf::randn({n});
  lf::sync();
  // Each loop: one flush per step, the same 5-op chain, new numbers or not.
  struct Loop {
    const char* name;
    std::function<void(int)> fixed, changing;
  };
  lf::Tensor keep;  // the step's result, held as a loop holds its state
  auto chain = [&](float s) { keep = lf::relu(x * s + 1) * lf::sigmoid(x) - lf::tanh(x) / 3; };
  std::vector<Loop> loops = {
      {"x * s (a scalar: a solver's alpha, a learning rate)", [&](int) { chain(2.0f); lf::sync(); },
       [&](int i) { chain(1.0f + 1e-3f * static_cast<float>(i % 997)); lf::sync(); }},
      {"x + arange(p, p + n) (a position)",
       [&](int) { keep = lf::relu(x + lf::arange(0, n, 1, lf::DType::Float32) * 0.5f) - x; lf::sync(); },
       [&](int i) { keep = lf::relu(x + lf::arange(i, i + n, 1, lf::DType::Float32) * 0.5f) - x; lf::sync(); }},
      {"where(rand(n) < 0.5, x * 2, 0) (dropout: a new draw every step)",
       [&](int) {  // the same draw every step: the seed set again
         lf::manual_seed(7);
         keep = lf::where(lf::rand({n}) < 0.5f, x * 2, lf::zeros({n}));
         lf::sync();
       },
       [&](int) { keep = lf::where(lf::rand({n}) < 0.5f, x * 2, lf::zeros({n})); lf::sync(); }},
  };
  const bool gpu = lf::default_device().is_cuda();
  std::printf("host time of one step (record 5 ops + lf::sync()), %s, 4096 floats, median of %d steps\n\n",
              gpu ? "CUDA" : "CPU", steps);
  std::printf("| loop | fixed numbers us (replayed) | changing numbers us (replayed) | changing / fixed | plans off, changing us |\n");
  std::printf("|---|---|---|---|---|\n");
  for (const Loop& l : loops) {
    Timing fixed = time_steps(steps, l.fixed);
    Timing changing = time_steps(steps, l.changing);
    lf::rt::mutable_config().flush_plans = false;
    Timing off = time_steps(steps / 4 + 1, l.changing);
    lf::rt::mutable_config().flush_plans = true;
    std::printf("| %s | %.2f (%.0f%%) | %.2f (%.0f%%) | %.2fx | %.2f |\n", l.name, fixed.median_us, 100 * fixed.replayed,
                changing.median_us, 100 * changing.replayed, changing.median_us / fixed.median_us, off.median_us);
  }
  std::printf("\ntarget (issue 48): changing / fixed <= 1.1x\n");
  return 0;
}
