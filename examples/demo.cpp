// The main demo (`./dev.sh demo`): a few realistic computations through the public API, each timed
// and checked against plain C++, with the counters that say what ran. Exits non-zero if a check fails.
// Each step runs twice: the first flush compiles its kernels, the second finds them in the cache.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

bool g_ok = true;

// One line per step: time to record the ops (lazy, nothing runs), time of the sync point that
// computes them, and what the runtime counted in between.
void report(const char* step, const lf::CacheStats& before, double record_ms, double sync_ms) {
  lf::CacheStats s = lf::cache_stats();
  std::printf("  %-18s record %7.3f ms | compute %7.1f ms | %llu nodes -> %llu kernels launched, %llu compiled "
              "(%.0f ms), %llu cache hits\n",
              step, record_ms, sync_ms, static_cast<unsigned long long>(s.nodes_executed - before.nodes_executed),
              static_cast<unsigned long long>(s.kernels_launched - before.kernels_launched),
              static_cast<unsigned long long>(s.kernels_compiled - before.kernels_compiled),
              s.compile_ms - before.compile_ms, static_cast<unsigned long long>(s.hits - before.hits));
}

void check(const char* what, double error, double tolerance) {
  bool ok = error <= tolerance;
  std::printf("    check %-40s %.3g (tolerance %.0e) %s\n", what, error, tolerance, ok ? "ok" : "FAILED");
  g_ok = g_ok && ok;
}

// relu(x*2+1)*sigmoid(x)-tanh(x)/3 on n floats: the elementwise chain that fusion is for.
void elementwise_chain(int64_t n) {
  lf::CacheStats before = lf::cache_stats();
  auto t0 = Clock::now();
  lf::Tensor x = lf::randn({n});
  lf::Tensor y = lf::relu(x * 2 + 1) * lf::sigmoid(x) - lf::tanh(x) / 3;
  double record_ms = ms_since(t0);
  t0 = Clock::now();
  lf::sync();  // computes x and y, the values still held
  report("elementwise chain", before, record_ms, ms_since(t0));

  std::vector<float> xv = x.to_vector<float>(), yv = y.to_vector<float>();
  double err = 0;
  for (size_t i = 0; i < xv.size(); ++i) {
    float v = xv[i];
    float want = std::max(v * 2.0f + 1.0f, 0.0f) * (1.0f / (1.0f + std::exp(-v))) - std::tanh(v) / 3.0f;
    err = std::max(err, static_cast<double>(std::fabs(yv[i] - want)));
  }
  std::printf("    y[0..2] = %.6f %.6f %.6f   (x[0..2] = %.6f %.6f %.6f)\n", yv[0], yv[1], yv[2], xv[0], xv[1], xv[2]);
  check("max |y - plain C++|", err, 1e-5);
}

// Softmax over the rows of a matrix; every row must sum to 1.
void softmax_rows(int64_t rows, int64_t cols) {
  lf::Tensor logits = lf::randn({rows, cols}) * 2;
  lf::sync();
  lf::CacheStats before = lf::cache_stats();
  auto t0 = Clock::now();
  lf::Tensor p = lf::softmax(logits, -1);
  double record_ms = ms_since(t0);
  t0 = Clock::now();
  lf::sync();
  report("softmax (rows)", before, record_ms, ms_since(t0));

  float worst = lf::max(lf::abs(lf::sum(p, {-1}) - 1)).item<float>();
  lf::Tensor row0 = p.slice(0, 0, 1);
  std::printf("    row 0: largest p = %.6f at column %lld\n", row0.max().item<float>(),
              static_cast<long long>(row0.argmax().item<int64_t>()));
  check("max |row sum - 1|", worst, 1e-5);
}

// layer_norm over the last dim, with a weight and a bias; undoing them must give rows of mean 0, std 1.
void layer_norm_rows(int64_t rows, int64_t cols) {
  lf::Tensor x = lf::rand({rows, cols}) * 10 + 5;
  lf::Tensor w = lf::full({cols}, 2.0), b = lf::full({cols}, 0.5);
  lf::sync();
  lf::CacheStats before = lf::cache_stats();
  auto t0 = Clock::now();
  lf::Tensor y = lf::layer_norm(x, 1, w, b);
  double record_ms = ms_since(t0);
  t0 = Clock::now();
  lf::sync();
  report("layer_norm (rows)", before, record_ms, ms_since(t0));

  std::vector<float> first = y.slice(0, 0, 1).slice(1, 0, 3).to_vector<float>();
  std::printf("    y[0][0..2] = %.6f %.6f %.6f\n", first[0], first[1], first[2]);
  lf::Tensor z = (y - 0.5) / 2;
  float mean_err = lf::max(lf::abs(lf::mean(z, {-1}))).item<float>();
  float std_err = lf::max(lf::abs(lf::std(z, {-1}, false, 0) - 1)).item<float>();
  check("max |row mean|", mean_err, 1e-4);
  check("max |row std - 1|", std_err, 1e-3);
}

// The short version of bench/RESULTS.md for this device: fused against unfused, median of 5 after
// a warm-up (device_synchronize so GPU time is counted).
void summary_table() {
  struct Work {
    const char* name;
    std::function<lf::Tensor()> make;
  };
  lf::Tensor x = lf::randn({int64_t{1} << 22});
  lf::Tensor m = lf::randn({1024, 1024});
  lf::Tensor r = lf::randn({1024, 1024});
  lf::sync();
  std::vector<Work> work = {
      {"relu(x*2+1)*sigmoid(x)-tanh(x)/3, 2^22", [&] { return lf::relu(x * 2 + 1) * lf::sigmoid(x) - lf::tanh(x) / 3; }},
      {"softmax(x, -1), 1024x1024", [&] { return lf::softmax(m, -1); }},
      {"layer_norm(x + r), 1024x1024", [&] { return lf::layer_norm(m + r, 1); }},
  };
  auto median_ms = [](const std::function<lf::Tensor()>& make) {
    std::vector<double> t;
    for (int i = 0; i < 6; ++i) {
      auto s = Clock::now();
      lf::Tensor y = make();
      lf::sync();
      lf::device_synchronize();
      if (i > 0) t.push_back(ms_since(s));  // the first call warms up (compiles)
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };
  std::printf("\n| workload (float32, %s) | fused ms | unfused ms | speedup |\n|---|---|---|---|\n",
              lf::default_device().str().c_str());
  for (const Work& w : work) {
    double fused = median_ms(w.make);
    lf::set_fusion_enabled(false);
    double unfused = median_ms(w.make);
    lf::set_fusion_enabled(true);
    std::printf("| %s | %.2f | %.2f | %.1fx |\n", w.name, fused, unfused, unfused / fused);
  }
}

}  // namespace

int main() try {
  lf::Device device = lf::default_device();
  std::printf("LazyFuse demo on device %s (CUDA %s)\n", device.str().c_str(),
              lf::cuda_available() ? "available" : "not available here");
  std::printf("Each computation runs twice: the first flush fuses the ops and compiles kernels (%s), the\n"
              "second reuses them from the cache. LAZYFUSE_LOG=1 shows the groups, LAZYFUSE_FUSION=0 runs unfused.\n\n",
              device.is_cuda() ? "CUDA C via NVRTC" : "LLVM IR via LLVM");
  lf::manual_seed(42);

  const int64_t n = int64_t{1} << 22;
  for (int pass = 1; pass <= 2; ++pass) {
    std::printf("-- pass %d\n", pass);
    std::printf("relu(x*2+1)*sigmoid(x)-tanh(x)/3 over %lld floats:\n", static_cast<long long>(n));
    elementwise_chain(n);
    std::printf("softmax over a 1024 x 1024 matrix:\n");
    softmax_rows(1024, 1024);
    std::printf("layer_norm over a 1024 x 1024 matrix:\n");
    layer_norm_rows(1024, 1024);
  }

  summary_table();

  lf::CacheStats s = lf::cache_stats();
  std::printf("\nin all: %llu flushes, %llu nodes executed, %llu kernels launched, %llu compiled in %.0f ms, %llu "
              "cache hits\n",
              static_cast<unsigned long long>(s.flushes), static_cast<unsigned long long>(s.nodes_executed),
              static_cast<unsigned long long>(s.kernels_launched), static_cast<unsigned long long>(s.kernels_compiled),
              s.compile_ms, static_cast<unsigned long long>(s.hits));
  std::printf("benchmarks against the bandwidth floor, Eigen and PyTorch: bench/RESULTS.md\n");
  std::printf("%s\n", g_ok ? "demo: all checks passed" : "demo: SOME CHECKS FAILED");
  return g_ok ? 0 : 1;
} catch (const lf::Error& e) {
  std::fprintf(stderr, "lazyfuse-demo: %s\n", e.what());
  return 1;
}
