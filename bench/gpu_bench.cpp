// GPU benchmarks of issue 4, in one run: each workload fused and unfused, as time per call
// (many calls queued back to back, divided; the device runs asynchronously), against the bandwidth
// floor (bytes that must move / the measured device-to-device copy bandwidth, passed in by
// bench/run_gpu.sh from PyTorch's copy in the same call). Prints a markdown table and a CSV.
//
//   lazyfuse-bench-gpu [copy_GBps]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds per call: warm up (first-sight compile), then `reps` calls back to back.
double per_call_ms(const std::function<void()>& call, int reps) {
  for (int i = 0; i < 3; ++i) call();
  lf::device_synchronize();
  std::vector<double> trials;
  for (int t = 0; t < 5; ++t) {
    auto s = Clock::now();
    for (int i = 0; i < reps; ++i) call();
    lf::device_synchronize();
    trials.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count() / reps);
  }
  std::sort(trials.begin(), trials.end());
  return trials[trials.size() / 2];
}

lf::Tensor ready(lf::Tensor t) {
  lf::sync();
  lf::device_synchronize();
  return t;
}

struct Row {
  std::string name;
  double bytes;
  double fused_ms, unfused_ms, first_ms;
};

}  // namespace

int main(int argc, char** argv) {
  if (!lf::cuda_available()) {
    std::fprintf(stderr, "no CUDA device: nothing to measure\n");
    return 0;
  }
  double copy_gbps = argc > 1 ? std::atof(argv[1]) : 3020.0;
  lf::set_default_device(lf::Device::cuda(0));
  lf::manual_seed(7);
  std::vector<Row> rows;
  auto run = [&](const std::string& name, double bytes, const std::function<lf::Tensor()>& make, int reps) {
    lf::reset_stats();
    auto s = Clock::now();
    { lf::Tensor y = make(); lf::sync(); lf::device_synchronize(); }
    double first = std::chrono::duration<double, std::milli>(Clock::now() - s).count();
    auto call = [&] {
      lf::Tensor y = make();
      lf::sync();
    };
    double fused = per_call_ms(call, reps);
    lf::set_fusion_enabled(false);
    double unfused = per_call_ms(call, std::max(2, reps / 4));
    lf::set_fusion_enabled(true);
    rows.push_back({name, bytes, fused, unfused, first});
  };

  const int64_t n26 = int64_t{1} << 26, R = 16384, C = 4096;
  {
    lf::Tensor x = ready(lf::randn({n26}));
    run("relu(x*2+1)*sigmoid(x)-tanh(x)/3, 2^26", 2.0 * 4 * n26,
        [&] { return lf::relu(x * 2 + 1) * lf::sigmoid(x) - lf::tanh(x) / 3; }, 200);
  }
  {
    lf::Tensor x = ready(lf::randn({R, C})), b = ready(lf::randn({C}));
    run("gelu(x + b), 16384x4096", 2.0 * 4 * R * C, [&] { return lf::gelu(x + b); }, 200);
  }
  {
    lf::Tensor x = ready(lf::randn({R, C})), r = ready(lf::randn({R, C}));
    run("layer_norm(x + r), 16384x4096", 3.0 * 4 * R * C, [&] { return lf::layer_norm(x + r, 1); }, 200);
  }
  {
    lf::Tensor x = ready(lf::randn({R, C}));
    run("softmax(x, -1), 16384x4096", 2.0 * 4 * R * C, [&] { return lf::softmax(x, -1); }, 200);
  }
  {
    lf::Tensor x = ready(lf::randn({R, C}));
    run("(x - mean) / (std + eps), 16384x4096", 2.0 * 4 * R * C,
        [&] { return (x - x.mean({1}, true)) / (x.std({1}, true) + 1e-5); }, 200);
  }
  {
    lf::Tensor x = ready(lf::randn({n26}));
    run("sum(x*x), 2^26", 4.0 * n26, [&] { return lf::sum(x * x); }, 200);
  }
  {
    const int64_t n = int64_t{1} << 25;
    lf::Tensor S = ready(lf::rand({n}) * 90 + 10), K = ready(lf::rand({n}) * 90 + 10), T = ready(lf::rand({n}) * 2 + 0.1);
    const double rate = 0.02, vol = 0.3;
    lf::Tensor put;
    run("Black-Scholes call+put, 2^25", 5.0 * 4 * n,
        [&] {
          lf::Tensor sqrt_t = lf::sqrt(T);
          lf::Tensor d1 = (lf::log(S / K) + (rate + 0.5 * vol * vol) * T) / (vol * sqrt_t);
          lf::Tensor d2 = d1 - vol * sqrt_t;
          auto cdf = [](const lf::Tensor& z) { return 0.5 * (1 + lf::erf(z * 0.70710678118654752)); };
          lf::Tensor disc = K * lf::exp(-rate * T);
          lf::Tensor call = S * cdf(d1) - disc * cdf(d2);
          put = disc * cdf(-d2) - S * cdf(-d1);
          return call;
        },
        200);
  }
  {
    lf::Tensor x = ready(lf::randn({4096}));
    run("chain on 4096 (launch-bound), per call", 2.0 * 4 * 4096,
        [&] { return lf::relu(x * 2 + 1) * lf::sigmoid(x) - lf::tanh(x) / 3; }, 5000);
  }

  std::printf("| workload (float32) | floor ms | fused ms | fused/floor | unfused ms | first call ms |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    double floor_ms = r.bytes / (copy_gbps * 1e6);
    std::printf("| %s | %.4f | %.4f | %.2fx | %.4f | %.1f |\n", r.name.c_str(), floor_ms, r.fused_ms,
                r.fused_ms / floor_ms, r.unfused_ms, r.first_ms);
  }
  std::printf("\ncsv,name,floor_ms,fused_ms,unfused_ms,first_ms\n");
  for (const Row& r : rows)
    std::printf("csv,%s,%.5f,%.5f,%.5f,%.2f\n", r.name.c_str(), r.bytes / (copy_gbps * 1e6), r.fused_ms, r.unfused_ms,
                r.first_ms);
  // Host cost of a cache hit: record + fuse + lower + lookup + launch of the small chain.
  lf::CacheStats s = lf::cache_stats();
  std::printf("\nkernels compiled %llu in %.1f ms total\n", static_cast<unsigned long long>(s.kernels_compiled), s.compile_ms);
  return 0;
}
