// CPU benchmarks of issue 3: fused vs unfused vs Eigen 3, each against this machine's bandwidth
// floor (bytes that must move / measured copy bandwidth), plus host-side costs (recording an op,
// a small flush on a cached kernel, first-sight compile). Medians of repeated runs after warm-up.
//
//   lazyfuse-bench-cpu [--quick]     (--quick: fewer repetitions, for smoke runs)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <lazyfuse/lazyfuse.h>

// Internal headers, only to time the kernel cache's lookup on its own (a user never calls these).
#include "codegen/fuser.h"
#include "codegen/kernel_cache.h"
#include "codegen/lower.h"

#ifdef LAZYFUSE_HAVE_EIGEN
#include <Eigen/Dense>
#endif

namespace {

using Clock = std::chrono::steady_clock;
int g_reps = 15;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

double median_ms(const std::function<void()>& fn, int reps = g_reps) {
  fn();  // warm-up: compiles, faults pages in
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto s = Clock::now();
    fn();
    t.push_back(ms_since(s));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Copy bandwidth with every core, counting bytes read plus bytes written.
double copy_gbps() {
  const size_t n = size_t{1} << 28;  // 256 MiB each way, far past any cache
  std::vector<char> a(n, 1), b(n, 0);
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  double ms = median_ms([&] {
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t) {
      size_t lo = n * t / threads, hi = n * (t + 1) / threads;
      ts.emplace_back([&, lo, hi] { std::memcpy(b.data() + lo, a.data() + lo, hi - lo); });
    }
    for (auto& th : ts) th.join();
  }, 7);
  return 2.0 * static_cast<double>(n) / (ms * 1e6);
}

lf::Tensor materialized(lf::Tensor t) {
  lf::sync();
  return t;
}

struct Row {
  std::string name;
  double floor_ms;
  double fused, unfused, eigen;
  const char* target;
};

void print_row(const Row& r) {
  auto cell = [](double v) {
    char b[32];
    if (v <= 0) return std::string("-");
    std::snprintf(b, sizeof b, "%.3f", v);
    return std::string(b);
  };
  std::printf("| %-34s | %8.3f | %9s | %9s | %9s | %5.2fx | %6s | %s |\n", r.name.c_str(), r.floor_ms,
              cell(r.fused).c_str(), cell(r.unfused).c_str(), cell(r.eigen).c_str(), r.fused / r.floor_ms,
              r.eigen > 0 ? (std::to_string(r.eigen / r.fused).substr(0, 4) + "x").c_str() : "-", r.target);
}

// Times `make()` fused and unfused; each call records the expression and syncs.
std::pair<double, double> time_lazyfuse(const std::function<lf::Tensor()>& make) {
  auto run = [&] {
    lf::Tensor y = make();
    lf::sync();
  };
  lf::set_fusion_enabled(true);
  double fused = median_ms(run);
  lf::set_fusion_enabled(false);
  double unfused = median_ms(run, std::max(3, g_reps / 3));
  lf::set_fusion_enabled(true);
  return {fused, unfused};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--quick") == 0) g_reps = 3;
  lf::set_default_device(lf::Device::cpu());
  double bw = copy_gbps();
  std::printf("machine: %u threads, copy bandwidth %.1f GB/s (read + write)\n\n", std::thread::hardware_concurrency(), bw);
  auto floor_ms = [bw](double bytes) { return bytes / (bw * 1e6); };
  std::vector<Row> rows;

  // 1. The elementwise chain over 2^24 floats.
  {
    const int64_t n = int64_t{1} << 24;
    lf::manual_seed(1);
    lf::Tensor x = materialized(lf::randn({n}));
    auto [fused, unfused] = time_lazyfuse([&] { return lf::relu(x * 2 + 1) * lf::sigmoid(x) - lf::tanh(x) / 3; });
    double eigen = 0;
#ifdef LAZYFUSE_HAVE_EIGEN
    std::vector<float> xv = x.to_vector<float>();
    Eigen::Map<Eigen::ArrayXf> ex(xv.data(), n);
    Eigen::ArrayXf ey(n);
    eigen = median_ms([&] { ey = (ex * 2 + 1).max(0.0f) * (1 / (1 + (-ex).exp())) - ex.tanh() / 3; });
#endif
    rows.push_back({"relu(x*2+1)*sigmoid(x)-tanh(x)/3 2^24", floor_ms(2.0 * 4 * n), fused, unfused, eigen,
                    "<=1.5x floor, >=2x Eigen"});
  }
  // 2. softmax over 4096 x 4096 rows.
  {
    const int64_t r = 4096, c = 4096;
    lf::Tensor x = materialized(lf::randn({r, c}));
    auto [fused, unfused] = time_lazyfuse([&] { return lf::softmax(x, -1); });
    double eigen = 0;
#ifdef LAZYFUSE_HAVE_EIGEN
    std::vector<float> xv = x.to_vector<float>();
    Eigen::Map<Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> ex(xv.data(), r, c);
    Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> ey(r, c);
    eigen = median_ms([&] {
      ey = (ex.colwise() - ex.rowwise().maxCoeff()).exp();
      ey.colwise() /= ey.rowwise().sum();
    });
#endif
    rows.push_back({"softmax(x, -1) 4096x4096", floor_ms(2.0 * 4 * r * c), fused, unfused, eigen, ">=5x numpy (54.5 ms)"});
  }
  // 3. residual add + layer_norm over 4096 x 4096 rows.
  {
    const int64_t r = 4096, c = 4096;
    lf::Tensor x = materialized(lf::randn({r, c}));
    lf::Tensor res = materialized(lf::randn({r, c}));
    auto [fused, unfused] = time_lazyfuse([&] { return lf::layer_norm(x + res, 1); });
    double eigen = 0;
#ifdef LAZYFUSE_HAVE_EIGEN
    std::vector<float> xv = x.to_vector<float>(), rv = res.to_vector<float>();
    using A = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<A> ex(xv.data(), r, c), er(rv.data(), r, c);
    A ey(r, c);
    eigen = median_ms([&] {
      ey = ex + er;
      Eigen::ArrayXf mean = ey.rowwise().mean();
      ey.colwise() -= mean;
      Eigen::ArrayXf inv = ((ey.square().rowwise().sum() / float(c)) + 1e-5f).rsqrt();
      ey.colwise() *= inv;
    });
#endif
    rows.push_back({"layer_norm(x + r) 4096x4096", floor_ms(3.0 * 4 * r * c), fused, unfused, eigen, ">=5x numpy (96.3 ms)"});
  }
  // 4. sum of squares over 2^24 floats.
  {
    const int64_t n = int64_t{1} << 24;
    lf::Tensor x = materialized(lf::randn({n}));
    auto [fused, unfused] = time_lazyfuse([&] { return lf::sum(x * x); });
    double eigen = 0;
#ifdef LAZYFUSE_HAVE_EIGEN
    std::vector<float> xv = x.to_vector<float>();
    Eigen::Map<Eigen::ArrayXf> ex(xv.data(), n);
    volatile float sink = 0;
    eigen = median_ms([&] { sink = ex.square().sum(); });
    (void)sink;
#endif
    rows.push_back({"sum(x*x) 2^24", floor_ms(4.0 * n), fused, unfused, eigen, "<=1.2x floor"});
  }

  std::printf("| workload (float32) | floor ms | fused ms | unfused ms | Eigen ms | fused/floor | Eigen/fused | target |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) print_row(r);

  // Host costs.
  {
    lf::Tensor x = materialized(lf::zeros({16}));
    const int kOps = 1000000, kBatch = 4000;  // each op records 2 nodes; stay under the trace limit
    double total_ms = 0;
    for (int b = 0; b < kOps / kBatch; ++b) {
      auto s = Clock::now();
      {
        lf::Tensor y = x;
        for (int i = 0; i < kBatch; ++i) y = y + 1.0f;
      }  // dropped unread: never computed
      total_ms += ms_since(s);
    }
    std::printf("\nrecording an op: %.0f ns on average over %d ops (target < 200 ns)\n", total_ms * 1e6 / kOps, kOps);
  }
  {
    lf::Tensor x = materialized(lf::randn({4096}));
    auto small = [&] {
      lf::Tensor y = lf::relu(x * 2 + 1) * lf::sigmoid(x) - lf::tanh(x) / 3;
      lf::sync();
    };
    double us = median_ms(small, 2001) * 1e3;
    std::printf("small flush on a cached kernel (5-op chain, 4096 floats; record + fuse + lower + lookup + launch): %.1f us\n", us);
  }
  {
    // The kernel cache hit alone: build the canonical key of a lowered 5-op chain, hash it, find it.
    lf::Tensor x = materialized(lf::randn({4096}));
    lf::Tensor y = lf::relu(x * 2 + 1) * lf::sigmoid(x) - lf::tanh(x) / 3;
    std::vector<lf::ir::Node*> roots{y.node().get()};
    auto order = lf::ir::topo_order(roots);
    auto p = lf::fuse::partition(order, [&](const lf::ir::Node& n) { return &n == roots[0]; }, true);
    auto low = lf::lower::lower_group(p.groups[0], p, 0, lf::Device::cpu());
    lf::cache::KernelCache cache;
    bool hit = false;
    auto compile = []() -> absl::StatusOr<std::shared_ptr<lf::CompiledKernel>> {
      return std::make_shared<lf::CompiledKernel>();
    };
    cache.get_or_compile(low.kernel.key(), compile, &hit);
    const int kLookups = 200000;
    auto s = Clock::now();
    for (int i = 0; i < kLookups; ++i) cache.get_or_compile(low.kernel.key(), compile, &hit);
    std::printf("kernel cache hit (key of %zu chars built from the kernel IR, hashed, compared): %.2f us (target < 2 us)\n",
                low.kernel.key().size(), ms_since(s) * 1e3 / kLookups);
  }
  {
    lf::reset_stats();
    lf::Tensor x = materialized(lf::randn({1000, 3}));
    lf::Tensor y = lf::softmax(lf::exp(x) * 3 - 1, -1) + 0.25;
    lf::sync();
    lf::CacheStats s = lf::cache_stats();
    std::printf("first-sight compile: %llu kernels in %.1f ms (%.1f ms per kernel)\n",
                static_cast<unsigned long long>(s.kernels_compiled), s.compile_ms,
                s.kernels_compiled ? s.compile_ms / s.kernels_compiled : 0.0);
  }
  return 0;
}
