// CPU benchmarks of issues 3 and 6: each workload fused, unfused (lf::set_fusion_enabled(false))
// and in Eigen 3, at a small (launch-bound) and a large (bandwidth-bound) size, against this
// machine's bandwidth floor (bytes that must move / measured copy bandwidth); the first call
// (record + first-sight compile + run) reported apart; then host-side costs (recording an op, a
// small flush on a cached kernel, a cache hit, first-sight compile). Medians after a warm-up.
//
//   lazyfuse-bench-cpu [--quick] [--csv FILE]
//     --quick: fewer repetitions, for smoke runs
//     --csv:   one line per (workload, size, implementation): workload,size,impl,ms,floor_ms, with
//              the workload and size keys that gpu_bench.cpp and torch_baseline.py use (bench/plot.py)
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
#include "codegen/fuse/fuser.h"
#include "codegen/cache/kernel_cache.h"
#include "codegen/fuse/lower.h"

#ifdef LAZYFUSE_HAVE_EIGEN
#include <Eigen/Dense>
#include <unsupported/Eigen/SpecialFunctions>  // Array::erf
#endif

namespace {

using Clock = std::chrono::steady_clock;
int g_reps = 15;
FILE* g_csv = nullptr;

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

// Copy bandwidth with every core, counting bytes read plus bytes written: the fastest of 11 copies,
// since another process on the machine can only slow a copy down (and make the floor look easy).
double copy_gbps() {
  const size_t n = size_t{1} << 28;  // 256 MiB each way, far past any cache
  std::vector<char> a(n, 1), b(n, 0);
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  double ms = 1e30;
  for (int rep = 0; rep < 12; ++rep) {  // the first copy faults pages in and is not counted
    auto s = Clock::now();
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t) {
      size_t lo = n * t / threads, hi = n * (t + 1) / threads;
      ts.emplace_back([&, lo, hi] { std::memcpy(b.data() + lo, a.data() + lo, hi - lo); });
    }
    for (auto& th : ts) th.join();
    if (rep > 0) ms = std::min(ms, ms_since(s));
  }
  return 2.0 * static_cast<double>(n) / (ms * 1e6);
}

lf::Tensor materialized(lf::Tensor t) {
  lf::sync();
  return t;
}

#ifdef LAZYFUSE_HAVE_EIGEN
using RowArrayXXf = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMatrixXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ArrayXl = Eigen::Array<int64_t, Eigen::Dynamic, 1>;

// A float32 [r, c] tensor's values as an Eigen row-major matrix.
RowMatrixXf mat(const lf::Tensor& t, int64_t r, int64_t c) {
  std::vector<float> v = t.to_vector<float>();
  return RowMatrixXf(Eigen::Map<RowMatrixXf>(v.data(), r, c));
}
#endif

struct Row {
  std::string workload;  // CSV key, the same in gpu_bench.cpp and torch_baseline.py
  std::string size;      // "small" (launch-bound) or "large" (bandwidth-bound)
  std::string label;     // printed: expression and shape
  double floor_ms = 0;
  double fused = 0, unfused = 0, eigen = 0;
  double eigen_separate = 0;  // matmul rows: Eigen's product, then the epilogue as a second pass
  double first_ms = 0;  // first call: record + first-sight compile + run
  unsigned long long first_kernels = 0, first_hits = 0, first_misses = 0;
  std::string target;
};

std::vector<Row> g_rows;
std::string g_only;  // --only WORKLOAD: measure that workload's rows and skip the host costs (--only host: only them)
double g_bw = 0;  // GB/s

std::string cell(double v, const char* fmt = "%.3f") {
  if (v <= 0) return "-";
  char b[32];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

void print_row(const Row& r) {
  std::string first = cell(r.first_ms, "%.1f") + " (" + std::to_string(r.first_kernels) + ")";
  std::printf("| %-44s | %-5s | %8.4f | %9s | %9s | %9s | %7.2fx | %6s | %-13s | %s |\n", r.label.c_str(),
              r.size.c_str(), r.floor_ms, cell(r.fused).c_str(), cell(r.unfused).c_str(), cell(r.eigen).c_str(),
              r.fused / r.floor_ms, r.eigen > 0 ? cell(r.eigen / r.fused, "%.2fx").c_str() : "-", first.c_str(),
              r.target.c_str());
}

void write_csv(const Row& r) {
  if (!g_csv) return;
  auto line = [&](const char* impl, double ms) {
    if (ms > 0) std::fprintf(g_csv, "%s,%s,%s,%.6f,%.6f\n", r.workload.c_str(), r.size.c_str(), impl, ms, r.floor_ms);
  };
  line("lazyfuse_fused", r.fused);
  line("lazyfuse_unfused", r.unfused);
  line("eigen", r.eigen);
  line("eigen_separate_pass", r.eigen_separate);
  line("lazyfuse_first_call", r.first_ms);
}

// One row: `make()` records the workload and returns a result (it may keep more results alive in
// captured handles; lf::sync() computes them all); `eigen` runs the Eigen version (may be empty).
// The first call is timed on its own, then fused and unfused medians (unfused with fewer reps).
void measure(const std::string& workload, const std::string& size, const std::string& label, double bytes,
             const std::function<lf::Tensor()>& make, const std::function<void()>& eigen, const std::string& target,
             int reps = g_reps, const std::function<void()>& eigen_separate = nullptr) {
  if (!g_only.empty() && g_only != workload) return;
  Row r{workload, size, label, bytes / (g_bw * 1e6)};
  r.target = target;
  auto run = [&] {
    lf::Tensor y = make();
    lf::sync();
  };
  lf::set_fusion_enabled(true);
  lf::reset_stats();
  auto s = Clock::now();
  run();
  r.first_ms = ms_since(s);
  lf::CacheStats st = lf::cache_stats();
  r.first_kernels = st.kernels_compiled;
  r.first_hits = st.hits;
  r.first_misses = st.misses;
  r.fused = median_ms(run, reps);
  lf::set_fusion_enabled(false);
  r.unfused = median_ms(run, std::max(3, reps / 3));
  lf::set_fusion_enabled(true);
  if (eigen) r.eigen = median_ms(eigen, reps);
  if (eigen_separate) r.eigen_separate = median_ms(eigen_separate, reps);
  g_rows.push_back(r);
  write_csv(r);
  std::fprintf(stderr, "  measured %s %s\n", workload.c_str(), size.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      g_reps = 3;
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      g_only = argv[++i];
    } else if (std::strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
      g_csv = std::fopen(argv[++i], "w");
      if (!g_csv) {
        std::fprintf(stderr, "cannot write %s\n", argv[i]);
        return 1;
      }
      std::fprintf(g_csv, "workload,size,impl,ms,floor_ms\n");
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--csv FILE] [--only WORKLOAD]\n", argv[0]);
      return 2;
    }
  }
  lf::set_default_device(lf::Device::cpu());
  g_bw = copy_gbps();
  std::printf("machine: %u threads, copy bandwidth %.1f GB/s (read + write)\n\n", std::thread::hardware_concurrency(), g_bw);
  const int kSmallReps = 301;  // small rows take microseconds: many more repetitions, same cost
  auto reps_for = [&](bool small, int large_reps) { return small ? std::max(g_reps, kSmallReps) : large_reps; };
  lf::manual_seed(1);
  std::vector<std::string> notes;  // printed after the table

  // 1. The elementwise chain.
  for (int64_t n : {int64_t{4096}, int64_t{1} << 24}) {
    bool small = n < 100000;
    lf::Tensor x = materialized(lf::randn({n}));
    std::function<void()> eigen;
#ifdef LAZYFUSE_HAVE_EIGEN
    std::vector<float> xv = x.to_vector<float>();
    Eigen::Map<Eigen::ArrayXf> ex(xv.data(), n);
    Eigen::ArrayXf ey(n);
    eigen = [&] { ey = (ex * 2 + 1).max(0.0f) * (1 / (1 + (-ex).exp())) - ex.tanh() / 3; };
#endif
    measure("chain", small ? "small" : "large",
            std::string("relu(x*2+1)*sigmoid(x)-tanh(x)/3 ") + (small ? "4096" : "2^24"), 2.0 * 4 * n,
            [&] { return lf::relu(x * 2 + 1) * lf::sigmoid(x) - lf::tanh(x) / 3; }, eigen,
            small ? "-" : "<=1.5x floor, >=2x Eigen", reps_for(small, g_reps));
  }
  // Row-wise workloads over R x C float32: small 64x256, large 4096x4096.
  struct RC {
    int64_t r, c;
    const char* size;
    const char* shape;
  };
  const RC kRowSizes[] = {{64, 256, "small", "64x256"}, {4096, 4096, "large", "4096x4096"}};
  // 2. bias + GELU (erf form), b broadcast over rows.
  for (const RC& s : kRowSizes) {
    bool small = s.r < 1000;
    lf::Tensor x = materialized(lf::randn({s.r, s.c})), b = materialized(lf::randn({s.c}));
    std::function<void()> eigen;
#ifdef LAZYFUSE_HAVE_EIGEN
    std::vector<float> xv = x.to_vector<float>(), bv = b.to_vector<float>();
    Eigen::Map<RowArrayXXf> ex(xv.data(), s.r, s.c);
    Eigen::Map<Eigen::Array<float, 1, Eigen::Dynamic>> eb(bv.data(), s.c);
    RowArrayXXf ey(s.r, s.c);
    eigen = [&] {
      auto t = ex.rowwise() + eb;
      ey = 0.5f * t * (1 + (t * float(M_SQRT1_2)).erf());
    };
#endif
    measure("bias_gelu", s.size, std::string("gelu(x + b) ") + s.shape, 4.0 * (2 * s.r * s.c + s.c),
            [&] { return lf::gelu(x + b); }, eigen, "-", reps_for(small, g_reps));
  }
  // 3. residual add + layer_norm.
  for (const RC& s : kRowSizes) {
    bool small = s.r < 1000;
    lf::Tensor x = materialized(lf::randn({s.r, s.c})), res = materialized(lf::randn({s.r, s.c}));
    std::function<void()> eigen;
#ifdef LAZYFUSE_HAVE_EIGEN
    std::vector<float> xv = x.to_vector<float>(), rv = res.to_vector<float>();
    Eigen::Map<RowArrayXXf> ex(xv.data(), s.r, s.c), er(rv.data(), s.r, s.c);
    RowArrayXXf ey(s.r, s.c);
    const float c = float(s.c);
    eigen = [&] {
      ey = ex + er;
      Eigen::ArrayXf mean = ey.rowwise().mean();
      ey.colwise() -= mean;
      Eigen::ArrayXf inv = ((ey.square().rowwise().sum() / c) + 1e-5f).rsqrt();
      ey.colwise() *= inv;
    };
#endif
    measure("layernorm_residual", s.size, std::string("layer_norm(x + r) ") + s.shape, 3.0 * 4 * s.r * s.c,
            [&] { return lf::layer_norm(x + res, 1); }, eigen, small ? "-" : ">=5x numpy (96.3 ms)",
            reps_for(small, g_reps));
  }
  // 4. softmax.
  for (const RC& s : kRowSizes) {
    bool small = s.r < 1000;
    lf::Tensor x = materialized(lf::randn({s.r, s.c}));
    std::function<void()> eigen;
#ifdef LAZYFUSE_HAVE_EIGEN
    std::vector<float> xv = x.to_vector<float>();
    Eigen::Map<RowArrayXXf> ex(xv.data(), s.r, s.c);
    RowArrayXXf ey(s.r, s.c);
    eigen = [&] {
      ey = (ex.colwise() - ex.rowwise().maxCoeff()).exp();
      ey.colwise() /= ey.rowwise().sum();
    };
#endif
    measure("softmax", s.size, std::string("softmax(x, -1) ") + s.shape, 2.0 * 4 * s.r * s.c,
            [&] { return lf::softmax(x, -1); }, eigen, small ? "-" : ">=5x numpy (54.5 ms)", reps_for(small, g_reps));
  }
  // 5. row standardization (std with correction 1, like torch.std).
  for (const RC& s : kRowSizes) {
    bool small = s.r < 1000;
    lf::Tensor x = materialized(lf::randn({s.r, s.c}));
    std::function<void()> eigen;
#ifdef LAZYFUSE_HAVE_EIGEN
    std::vector<float> xv = x.to_vector<float>();
    Eigen::Map<RowArrayXXf> ex(xv.data(), s.r, s.c);
    RowArrayXXf ey(s.r, s.c);
    const float c = float(s.c);
    eigen = [&] {
      ey = ex.colwise() - ex.rowwise().mean();
      Eigen::ArrayXf denom = (ey.square().rowwise().sum() / (c - 1)).sqrt() + 1e-5f;
      ey.colwise() /= denom;
    };
#endif
    measure("standardize", s.size, std::string("(x - mean) / (std + eps) ") + s.shape, 2.0 * 4 * s.r * s.c,
            [&] { return (x - x.mean({1}, true)) / (x.std({1}, true) + 1e-5); }, eigen, "-", reps_for(small, g_reps));
  }
  // 6. sum of squares.
  for (int64_t n : {int64_t{4096}, int64_t{1} << 24}) {
    bool small = n < 100000;
    lf::Tensor x = materialized(lf::randn({n}));
    std::function<void()> eigen;
    volatile float sink = 0;
#ifdef LAZYFUSE_HAVE_EIGEN
    std::vector<float> xv = x.to_vector<float>();
    Eigen::Map<Eigen::ArrayXf> ex(xv.data(), n);
    eigen = [&] { sink = ex.square().sum(); };
#endif
    measure("sum_squares", small ? "small" : "large", std::string("sum(x*x) ") + (small ? "4096" : "2^24"), 4.0 * n,
            [&] { return lf::sum(x * x); }, eigen, small ? "-" : "<=1.2x floor", reps_for(small, g_reps));
    (void)sink;
  }
  // 7. Black-Scholes, call and put from one call (the put is kept in a captured handle).
  for (int64_t n : {int64_t{4096}, int64_t{1} << 22}) {
    bool small = n < 100000;
    lf::Tensor S = materialized(lf::rand({n}) * 90 + 10), K = materialized(lf::rand({n}) * 90 + 10);
    lf::Tensor T = materialized(lf::rand({n}) * 2 + 0.1);
    const float rate = 0.02f, vol = 0.3f;
    lf::Tensor put;
    std::function<void()> eigen;
#ifdef LAZYFUSE_HAVE_EIGEN
    std::vector<float> sv = S.to_vector<float>(), kv = K.to_vector<float>(), tv = T.to_vector<float>();
    Eigen::Map<Eigen::ArrayXf> eS(sv.data(), n), eK(kv.data(), n), eT(tv.data(), n);
    Eigen::ArrayXf ecall(n), eput(n);
    eigen = [&] {
      Eigen::ArrayXf sqrt_t = eT.sqrt();
      Eigen::ArrayXf d1 = ((eS / eK).log() + (rate + 0.5f * vol * vol) * eT) / (vol * sqrt_t);
      Eigen::ArrayXf d2 = d1 - vol * sqrt_t;
      Eigen::ArrayXf disc = eK * (-rate * eT).exp();
      const float k = float(M_SQRT1_2);
      ecall = eS * 0.5f * (1 + (d1 * k).erf()) - disc * 0.5f * (1 + (d2 * k).erf());
      eput = disc * 0.5f * (1 + (-d2 * k).erf()) - eS * 0.5f * (1 + (-d1 * k).erf());
    };
#endif
    measure("black_scholes", small ? "small" : "large",
            std::string("Black-Scholes call+put ") + (small ? "4096" : "2^22"), 5.0 * 4 * n,
            [&] {
              lf::Tensor sqrt_t = lf::sqrt(T);
              lf::Tensor d1 = (lf::log(S / K) + (rate + 0.5 * vol * vol) * T) / (vol * sqrt_t);
              lf::Tensor d2 = d1 - vol * sqrt_t;
              auto cdf = [](const lf::Tensor& z) { return 0.5 * (1 + lf::erf(z * 0.70710678118654752)); };
              lf::Tensor disc = K * lf::exp(-rate * T);
              put = disc * cdf(-d2) - S * cdf(-d1);
              return S * cdf(d1) - disc * cdf(d2);
            },
            eigen, "-", reps_for(small, g_reps));
  }
  // 8. NPBench arc_distance (float64): 2 atan2(sqrt(t), sqrt(1 - t)), t the haversine term.
  for (int64_t n : {int64_t{4096}, int64_t{1} << 22}) {
    bool small = n < 100000;
    lf::Tensor t0 = materialized(lf::rand({n}, lf::DType::Float64)), p0 = materialized(lf::rand({n}, lf::DType::Float64));
    lf::Tensor t1 = materialized(lf::rand({n}, lf::DType::Float64)), p1 = materialized(lf::rand({n}, lf::DType::Float64));
    std::function<void()> eigen;
#ifdef LAZYFUSE_HAVE_EIGEN
    std::vector<double> a = t0.to_vector<double>(), b = p0.to_vector<double>(), c = t1.to_vector<double>(),
                        d = p1.to_vector<double>();
    Eigen::Map<Eigen::ArrayXd> et0(a.data(), n), ep0(b.data(), n), et1(c.data(), n), ep1(d.data(), n);
    Eigen::ArrayXd ey(n);
    eigen = [&] {
      Eigen::ArrayXd temp = ((et1 - et0) / 2).sin().square() + et0.cos() * et1.cos() * ((ep1 - ep0) / 2).sin().square();
      ey = 2 * temp.sqrt().binaryExpr((1 - temp).sqrt(), [](double y, double x) { return std::atan2(y, x); });
    };
#endif
    measure("arc_distance", small ? "small" : "large", std::string("arc_distance f64 ") + (small ? "4096" : "2^22"),
            5.0 * 8 * n,
            [&] {
              lf::Tensor temp = lf::square(lf::sin((t1 - t0) / 2)) + lf::cos(t0) * lf::cos(t1) * lf::square(lf::sin((p1 - p0) / 2));
              return 2 * lf::atan2(lf::sqrt(temp), lf::sqrt(1 - temp));
            },
            eigen, "-", reps_for(small, g_reps));
  }
  // 9. NPBench compute (int64): clip(a1, 2, 10) * 4 + a2 * 3 + 9.
  for (const RC& s : {RC{64, 64, "small", "64x64"}, RC{2048, 2048, "large", "2048x2048"}}) {
    bool small = s.r < 1000;
    lf::Tensor a1 = materialized(lf::cast(lf::rand({s.r, s.c}) * 1000, lf::DType::Int64));
    lf::Tensor a2 = materialized(lf::cast(lf::rand({s.r, s.c}) * 1000, lf::DType::Int64));
    std::function<void()> eigen;
#ifdef LAZYFUSE_HAVE_EIGEN
    std::vector<int64_t> v1 = a1.to_vector<int64_t>(), v2 = a2.to_vector<int64_t>();
    Eigen::Map<ArrayXl> e1(v1.data(), s.r * s.c), e2(v2.data(), s.r * s.c);
    ArrayXl ey(s.r * s.c);
    eigen = [&] { ey = e1.max(int64_t{2}).min(int64_t{10}) * int64_t{4} + e2 * int64_t{3} + int64_t{9}; };
#endif
    measure("compute", s.size, std::string("compute i64 clip(a,2,10)*4+b*3+9 ") + s.shape, 3.0 * 8 * s.r * s.c,
            [&] { return lf::clamp(a1, 2, 10) * 4 + a2 * 3 + 9; }, eigen, "-", reps_for(small, g_reps));
  }
  // 10. Jacobi 2-D, 50 steps. No in-place assignment: each step builds the new grid from the old
  // boundary and the stencil of the interior with lf::cat. Nothing syncs inside the loop.
  const int kSteps = 50;
  for (const RC& s : {RC{64, 64, "small", "64x64"}, RC{2048, 2048, "large", "2048x2048"}}) {
    bool small = s.r < 1000;
    const int64_t n = s.r;
    lf::Tensor a0 = materialized(lf::randn({n, n}));
    auto step = [n](const lf::Tensor& a) {
      auto at = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) { return lf::slice(lf::slice(a, 0, r0, r1), 1, c0, c1); };
      lf::Tensor inner = 0.2 * (at(1, -1, 1, -1) + at(1, -1, 0, -2) + at(1, -1, 2, n) + at(2, n, 1, -1) + at(0, -2, 1, -1));
      lf::Tensor mid = lf::cat({at(1, -1, 0, 1), inner, at(1, -1, n - 1, n)}, 1);
      return lf::cat({at(0, 1, 0, n), mid, at(n - 1, n, 0, n)}, 0);
    };
    auto make = [&] {
      lf::Tensor a = a0;
      for (int t = 0; t < kSteps; ++t) a = step(a);
      return a;
    };
    std::function<void()> eigen;
#ifdef LAZYFUSE_HAVE_EIGEN
    std::vector<float> av = a0.to_vector<float>();
    RowArrayXXf A = Eigen::Map<RowArrayXXf>(av.data(), n, n), B = A;
    eigen = [&] {  // keeps iterating from where the last repetition stopped: the cost is the same
      for (int t = 0; t < kSteps; ++t) {
        B.block(1, 1, n - 2, n - 2) = 0.2f * (A.block(1, 1, n - 2, n - 2) + A.block(1, 0, n - 2, n - 2) +
                                              A.block(1, 2, n - 2, n - 2) + A.block(2, 1, n - 2, n - 2) +
                                              A.block(0, 1, n - 2, n - 2));
        A.swap(B);
      }
    };
#endif
    measure("jacobi2d", s.size, std::string("jacobi2d 50 steps (slices + cat) ") + s.shape,
            double(kSteps) * 2 * 4 * n * n, make, eigen, "-", small ? 31 : std::min(g_reps, 5));
    // Kernels compiled and cache hits over the whole loop: on the first call, and on a repeat.
    if (g_rows.empty() || g_rows.back().workload != "jacobi2d") continue;
    const Row& r = g_rows.back();
    lf::reset_stats();
    { lf::Tensor y = make(); lf::sync(); }
    lf::CacheStats again = lf::cache_stats();
    char line[320];
    std::snprintf(line, sizeof line,
                  "jacobi2d %s, %d steps in one trace: first call %llu kernels compiled, %llu cache hits / %llu misses; "
                  "a repeat %llu compiled, %llu hits, %llu kernels launched",
                  s.shape, kSteps, r.first_kernels, r.first_hits, r.first_misses,
                  (unsigned long long)again.kernels_compiled, (unsigned long long)again.hits,
                  (unsigned long long)again.kernels_launched);
    notes.push_back(line);
  }
  // 11. Matmul with its bias + relu epilogue fused (issue 7), float32 n x n x n. Eigen (with
  // OpenMP on the same cores) as one expression, and as its product then a separate pass.
  for (int64_t n : {int64_t{64}, int64_t{1024}}) {
    bool small = n < 100;
    lf::Tensor a = materialized(lf::randn({n, n})), w = materialized(lf::randn({n, n})), b = materialized(lf::randn({n}));
    std::function<void()> eigen, eigen_separate;
#ifdef LAZYFUSE_HAVE_EIGEN
    RowMatrixXf ea = mat(a, n, n), ew = mat(w, n, n), prod(n, n), ey(n, n);
    std::vector<float> bv = b.to_vector<float>();
    Eigen::RowVectorXf eb = Eigen::Map<Eigen::RowVectorXf>(bv.data(), n);
    eigen = [&] { ey = ((ea * ew).rowwise() + eb).cwiseMax(0.0f); };
    eigen_separate = [&] {
      prod.noalias() = ea * ew;
      ey = (prod.rowwise() + eb).cwiseMax(0.0f);
    };
#endif
    double bytes = 4.0 * 4 * n * n;
    measure("matmul_bias_relu", small ? "small" : "large", "relu(a@w+b) " + std::to_string(n) + "^3", bytes,
            [&] { return lf::relu(lf::matmul(a, w) + b); }, eigen, small ? "-" : "<=1.3x Eigen, < Eigen+pass",
            small ? 301 : g_reps, eigen_separate);
  }
  // 11b. The GEMM on every operand layout (issue 21): the same product with transposed views, and
  // attention's batched q @ k^T with heads made by permuting [B, T, H, d] buffers, each against its
  // contiguous twin (packing reads the strides: the rows should match).
  {
    const int64_t n = 1024;
    lf::Tensor a = materialized(lf::randn({n, n})), w = materialized(lf::randn({n, n}));
    double bytes = 4.0 * 3 * n * n;
    measure("matmul_layouts", "large", "a@w 1024^3 contiguous", bytes, [&] { return lf::matmul(a, w); }, nullptr, "-");
    measure("matmul_layouts", "large", "a^T@w (views)", bytes,
            [&] { return lf::matmul(lf::transpose(a, 0, 1), w); }, nullptr, "= contiguous");
    measure("matmul_layouts", "large", "a@w^T (views)", bytes,
            [&] { return lf::matmul(a, lf::transpose(w, 0, 1)); }, nullptr, "= contiguous");
    const int64_t B = 4, T = 256, H = 8, d = 64;
    lf::Tensor q = materialized(lf::randn({B, T, H, d})), k = materialized(lf::randn({B, T, H, d}));
    lf::Tensor qc = materialized(lf::contiguous(lf::permute(q, {0, 2, 1, 3})));
    lf::Tensor kc = materialized(lf::contiguous(lf::permute(k, {0, 2, 3, 1})));
    double qk_bytes = 4.0 * (2 * B * H * T * d + B * H * T * T);
    measure("matmul_layouts", "large", "q@k^T [4,8]x256x256x64 contiguous", qk_bytes,
            [&] { return lf::matmul(qc, kc); }, nullptr, "-");
    measure("matmul_layouts", "large", "q@k^T heads by permute (views)", qk_bytes,
            [&] { return lf::matmul(lf::permute(q, {0, 2, 1, 3}), lf::permute(k, {0, 2, 3, 1})); }, nullptr,
            "= contiguous");
  }
  // 12. MLP forward, softmax(relu(relu(x@w1+b1)@w2+b2)@w3+b3): three GEMMs with fused epilogues.
  struct Mlp {
    int64_t batch, in, hidden, out;
    const char* size;
    const char* shape;
  };
  for (const Mlp& m : {Mlp{16, 64, 64, 16, "small", "16x64 -> 64 -> 64 -> 16"},
                       Mlp{256, 512, 512, 64, "large", "256x512 -> 512 -> 512 -> 64"}}) {
    bool small = m.batch < 100;
    lf::Tensor x = materialized(lf::randn({m.batch, m.in}));
    lf::Tensor w1 = materialized(lf::randn({m.in, m.hidden}) * 0.05), b1 = materialized(lf::randn({m.hidden}) * 0.05);
    lf::Tensor w2 = materialized(lf::randn({m.hidden, m.hidden}) * 0.05), b2 = materialized(lf::randn({m.hidden}) * 0.05);
    lf::Tensor w3 = materialized(lf::randn({m.hidden, m.out}) * 0.05), b3 = materialized(lf::randn({m.out}) * 0.05);
    std::function<void()> eigen;
#ifdef LAZYFUSE_HAVE_EIGEN
    auto rowv = [](const lf::Tensor& t) {
      std::vector<float> v = t.to_vector<float>();
      return Eigen::RowVectorXf(Eigen::Map<Eigen::RowVectorXf>(v.data(), Eigen::Index(v.size())));
    };
    RowMatrixXf ex = mat(x, m.batch, m.in), ew1 = mat(w1, m.in, m.hidden), ew2 = mat(w2, m.hidden, m.hidden),
                ew3 = mat(w3, m.hidden, m.out);
    Eigen::RowVectorXf eb1 = rowv(b1), eb2 = rowv(b2), eb3 = rowv(b3);
    RowMatrixXf h1, h2, logits;
    RowArrayXXf ey;
    eigen = [&] {
      h1.noalias() = ex * ew1;
      h1 = (h1.rowwise() + eb1).cwiseMax(0.0f);
      h2.noalias() = h1 * ew2;
      h2 = (h2.rowwise() + eb2).cwiseMax(0.0f);
      logits.noalias() = h2 * ew3;
      logits.rowwise() += eb3;
      ey = (logits.array().colwise() - logits.array().rowwise().maxCoeff()).exp();
      ey.colwise() /= ey.rowwise().sum();
    };
#endif
    double bytes = 4.0 * (m.batch * m.in + m.in * m.hidden + m.hidden * m.hidden + m.hidden * m.out + 2 * m.hidden +
                          m.out + m.batch * m.out);
    measure("mlp", m.size, std::string("MLP fwd ") + m.shape, bytes,
            [&] { return lf::softmax(lf::matmul(lf::relu(lf::matmul(lf::relu(lf::matmul(x, w1) + b1), w2) + b2), w3) + b3, -1); },
            eigen, "-", small ? 101 : std::min(g_reps, 7));
  }

  std::printf("\n");
  for (const std::string& n : notes) std::printf("%s\n", n.c_str());
  std::printf("Matmul rows: the Eigen column is one expression, ((a*w).rowwise()+b).cwiseMax(0); Eigen then a\n"
              "separate pass: %s (Eigen's GEMM uses OpenMP threads: %s).\n",
              [&] {
                static std::string v;
                for (const Row& r : g_rows)
                  if (r.eigen_separate > 0) v += r.size + " " + cell(r.eigen_separate) + " ms; ";
                return v.c_str();
              }(),
#ifdef _OPENMP
              "yes"
#else
              "no"
#endif
  );
  std::printf("First call = record + first-sight compile + run (kernels compiled); a large row reuses the kernels\n"
              "its small row compiled (sizes are kernel arguments), so it shows 0.\n\n");
  std::printf("| workload | size | floor ms | fused ms | unfused ms | Eigen ms | fused/floor | Eigen/fused | first call ms (kernels) | target |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : g_rows) print_row(r);

  if (!g_only.empty() && g_only != "host") {
    if (g_csv) std::fclose(g_csv);
    return 0;
  }
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
    auto compile = []() -> lf::StatusOr<std::shared_ptr<lf::CompiledKernel>> {
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
  if (g_csv) std::fclose(g_csv);
  return 0;
}
