// GPU benchmarks of issues 4 and 6, in one run: each workload fused and unfused, at a small
// (launch-bound) and a large (bandwidth-bound) size, as time per call (many calls queued back to
// back, divided; the device runs asynchronously), against the bandwidth floor (bytes that must move
// / the measured device-to-device copy bandwidth, passed in by bench/run_gpu.sh from PyTorch's copy
// in the same call). Prints a markdown table; --csv writes the lines bench/plot.py reads.
//
//   lazyfuse-bench-gpu [copy_GBps] [--csv FILE] [--trials]
//     --csv: one line per (workload, size, implementation): workload,size,impl,ms,floor_ms, with the
//            workload and size keys of cpu_bench.cpp and torch_baseline.py
//     --trials: print each timed trial (time a call, and the host's time to queue it) to stderr
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "runtime/config.h"  // LAZYFUSE_MATMUL's setting, switched to compare the matmul paths

namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds per call: warm up (first-sight compile, then 25 ms of calls, as Triton's do_bench
// warms up the PyTorch side in torch_baseline.py), then `reps` calls back to back. New kernels
// start as quick builds (tiered compiling): the timing waits for the optimized ones.
bool g_print_trials = false;  // --trials

double per_call_ms(const std::function<void()>& call, int reps) {
  for (int i = 0; i < 3; ++i) call();
  lf::finish_compiles();
  const auto warm_until = Clock::now() + std::chrono::milliseconds(25);
  do call();
  while (Clock::now() < warm_until);
  lf::device_synchronize();
  std::vector<double> trials;
  for (int t = 0; t < 5; ++t) {
    auto s = Clock::now();
    for (int i = 0; i < reps; ++i) call();
    auto queued = Clock::now();
    lf::device_synchronize();
    trials.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count() / reps);
    if (g_print_trials)
      std::fprintf(stderr, "    trial %d: %.4f ms a call, %.4f to queue it\n", t, trials.back(),
                   std::chrono::duration<double, std::milli>(queued - s).count() / reps);
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
  std::string workload, size, label;
  double bytes;
  double fused_ms, unfused_ms, first_ms;
  unsigned long long first_kernels;
  double compile_ms;  // of the kernels the first call compiled (NVRTC + module load)
  unsigned long long quick_builds;  // of those, quick builds (tiered compiling)
  double optimized_ms;  // their optimized builds, compiled on the background thread afterwards
};

}  // namespace

int main(int argc, char** argv) {
  double copy_gbps = 3020.0;
  FILE* csv = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
      csv = std::fopen(argv[++i], "w");
      if (!csv) {
        std::fprintf(stderr, "cannot write %s\n", argv[i]);
        return 1;
      }
    } else if (std::strcmp(argv[i], "--trials") == 0) {
      g_print_trials = true;
    } else if (std::atof(argv[i]) > 0) {
      copy_gbps = std::atof(argv[i]);
    } else {
      std::fprintf(stderr, "usage: %s [copy_GBps] [--csv FILE] [--trials]\n", argv[0]);
      return 2;
    }
  }
  if (!lf::cuda_available()) {
    std::fprintf(stderr, "no CUDA device: nothing to measure\n");
    if (csv) std::fclose(csv);
    return 0;
  }
  if (csv) std::fprintf(csv, "workload,size,impl,ms,floor_ms\n");
  lf::set_default_device(lf::Device::cuda(0));
  lf::manual_seed(7);
  std::vector<Row> rows;
  auto run = [&](const std::string& workload, const std::string& size, const std::string& label, double bytes,
                 const std::function<lf::Tensor()>& make, int reps) {
    lf::reset_stats();
    auto s = Clock::now();
    { lf::Tensor y = make(); lf::sync(); lf::device_synchronize(); }
    double first = std::chrono::duration<double, std::milli>(Clock::now() - s).count();
    unsigned long long kernels = lf::cache_stats().kernels_compiled;
    double compile_ms = lf::cache_stats().compile_ms;
    unsigned long long quick = lf::cache_stats().quick_builds;
    lf::finish_compiles();
    double optimized_ms = lf::cache_stats().upgrade_ms;
    auto call = [&] {
      lf::Tensor y = make();
      lf::sync();
    };
    double fused = per_call_ms(call, reps);
    lf::set_fusion_enabled(false);
    double unfused = per_call_ms(call, std::max(2, reps / 4));
    lf::set_fusion_enabled(true);
    rows.push_back({workload, size, label, bytes, fused, unfused, first, kernels, compile_ms, quick, optimized_ms});
    std::fprintf(stderr, "  measured %s %s\n", workload.c_str(), size.c_str());
  };
  const int kSmallReps = 2000;  // launch-bound rows: time per call over many queued calls

  // The workloads and sizes of torch_baseline.py. Small sizes are those of cpu_bench.cpp.
  for (int64_t n : {int64_t{4096}, int64_t{1} << 26}) {
    bool small = n < 100000;
    lf::Tensor x = ready(lf::randn({n}));
    run("chain", small ? "small" : "large", std::string("relu(x*2+1)*sigmoid(x)-tanh(x)/3, ") + (small ? "4096" : "2^26"),
        2.0 * 4 * n, [&] { return lf::relu(x * 2 + 1) * lf::sigmoid(x) - lf::tanh(x) / 3; }, small ? kSmallReps : 200);
  }
  struct RC {
    int64_t r, c;
    const char* size;
    const char* shape;
  };
  const RC kRowSizes[] = {{64, 256, "small", "64x256"}, {16384, 4096, "large", "16384x4096"}};
  for (const RC& s : kRowSizes) {
    bool small = s.r < 1000;
    int reps = small ? kSmallReps : 200;
    lf::Tensor x = ready(lf::randn({s.r, s.c})), b = ready(lf::randn({s.c})), r = ready(lf::randn({s.r, s.c}));
    run("bias_gelu", s.size, std::string("gelu(x + b), ") + s.shape, 4.0 * (2 * s.r * s.c + s.c),
        [&] { return lf::gelu(x + b); }, reps);
    run("layernorm_residual", s.size, std::string("layer_norm(x + r), ") + s.shape, 3.0 * 4 * s.r * s.c,
        [&] { return lf::layer_norm(x + r, 1); }, reps);
    run("softmax", s.size, std::string("softmax(x, -1), ") + s.shape, 2.0 * 4 * s.r * s.c,
        [&] { return lf::softmax(x, -1); }, reps);
    run("standardize", s.size, std::string("(x - mean) / (std + eps), ") + s.shape, 2.0 * 4 * s.r * s.c,
        [&] { return (x - x.mean({1}, true)) / (x.std({1}, true) + 1e-5); }, reps);
  }
  for (int64_t n : {int64_t{4096}, int64_t{1} << 26}) {
    bool small = n < 100000;
    lf::Tensor x = ready(lf::randn({n}));
    run("sum_squares", small ? "small" : "large", std::string("sum(x*x), ") + (small ? "4096" : "2^26"), 4.0 * n,
        [&] { return lf::sum(x * x); }, small ? kSmallReps : 200);
  }
  for (int64_t n : {int64_t{4096}, int64_t{1} << 25}) {
    bool small = n < 100000;
    lf::Tensor S = ready(lf::rand({n}) * 90 + 10), K = ready(lf::rand({n}) * 90 + 10), T = ready(lf::rand({n}) * 2 + 0.1);
    const double rate = 0.02, vol = 0.3;
    lf::Tensor put;
    run("black_scholes", small ? "small" : "large", std::string("Black-Scholes call+put, ") + (small ? "4096" : "2^25"),
        5.0 * 4 * n,
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
        small ? kSmallReps : 200);
  }
  for (int64_t n : {int64_t{4096}, int64_t{1} << 25}) {
    bool small = n < 100000;
    const lf::DType f64 = lf::DType::Float64;
    lf::Tensor t0 = ready(lf::rand({n}, f64)), p0 = ready(lf::rand({n}, f64));
    lf::Tensor t1 = ready(lf::rand({n}, f64)), p1 = ready(lf::rand({n}, f64));
    run("arc_distance", small ? "small" : "large", std::string("arc_distance f64, ") + (small ? "4096" : "2^25"),
        5.0 * 8 * n,
        [&] {
          lf::Tensor temp = lf::square(lf::sin((t1 - t0) / 2)) + lf::cos(t0) * lf::cos(t1) * lf::square(lf::sin((p1 - p0) / 2));
          return 2 * lf::atan2(lf::sqrt(temp), lf::sqrt(1 - temp));
        },
        small ? kSmallReps : 200);
  }
  for (const RC& s : {RC{64, 64, "small", "64x64"}, RC{8192, 8192, "large", "8192x8192"}}) {
    bool small = s.r < 1000;
    lf::Tensor a1 = ready(lf::cast(lf::rand({s.r, s.c}) * 1000, lf::DType::Int64));
    lf::Tensor a2 = ready(lf::cast(lf::rand({s.r, s.c}) * 1000, lf::DType::Int64));
    run("compute", s.size, std::string("compute i64 clip(a,2,10)*4+b*3+9, ") + s.shape, 3.0 * 8 * s.r * s.c,
        [&] { return lf::clamp(a1, 2, 10) * 4 + a2 * 3 + 9; }, small ? kSmallReps : 200);
  }
  // Jacobi 2-D, 50 steps, no sync inside the loop (cpu_bench.cpp says how the step is built). cat
  // runs on the host (reference executor) for now, with copies both ways each step: modest sizes.
  const int kSteps = 50;
  for (const RC& s : {RC{64, 64, "small", "64x64"}, RC{2048, 2048, "large", "2048x2048"}}) {
    bool small = s.r < 1000;
    const int64_t n = s.r;
    lf::Tensor a0 = ready(lf::randn({n, n}));
    auto step = [n](const lf::Tensor& a) {
      auto at = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) { return lf::slice(lf::slice(a, 0, r0, r1), 1, c0, c1); };
      lf::Tensor inner = 0.2 * (at(1, -1, 1, -1) + at(1, -1, 0, -2) + at(1, -1, 2, n) + at(2, n, 1, -1) + at(0, -2, 1, -1));
      lf::Tensor mid = lf::cat({at(1, -1, 0, 1), inner, at(1, -1, n - 1, n)}, 1);
      return lf::cat({at(0, 1, 0, n), mid, at(n - 1, n, 0, n)}, 0);
    };
    run("jacobi2d", s.size, std::string("jacobi2d 50 steps (slices + cat), ") + s.shape, double(kSteps) * 2 * 4 * n * n,
        [&] {
          lf::Tensor a = a0;
          for (int t = 0; t < kSteps; ++t) a = step(a);
          return a;
        },
        small ? 20 : 1);
  }
  // MLP forward; matmul runs on the reference executor for now (issue 7): modest sizes, slow rows.
  struct Mlp {
    int64_t batch, in, hidden, out;
    const char* size;
    const char* shape;
  };
  for (const Mlp& m : {Mlp{16, 64, 64, 16, "small", "16x64 -> 64 -> 64 -> 16"},
                       Mlp{256, 512, 512, 64, "large", "256x512 -> 512 -> 512 -> 64"}}) {
    bool small = m.batch < 100;
    lf::Tensor x = ready(lf::randn({m.batch, m.in}));
    lf::Tensor w1 = ready(lf::randn({m.in, m.hidden}) * 0.05), b1 = ready(lf::randn({m.hidden}) * 0.05);
    lf::Tensor w2 = ready(lf::randn({m.hidden, m.hidden}) * 0.05), b2 = ready(lf::randn({m.hidden}) * 0.05);
    lf::Tensor w3 = ready(lf::randn({m.hidden, m.out}) * 0.05), b3 = ready(lf::randn({m.out}) * 0.05);
    double bytes = 4.0 * (m.batch * m.in + m.in * m.hidden + m.hidden * m.hidden + m.hidden * m.out + 2 * m.hidden +
                          m.out + m.batch * m.out);
    run("mlp", m.size, std::string("MLP fwd, ") + m.shape, bytes,
        [&] { return lf::softmax(lf::matmul(lf::relu(lf::matmul(lf::relu(lf::matmul(x, w1) + b1), w2) + b2), w3) + b3, -1); },
        small ? 50 : 5);
  }
  // Matmul rows (issue 7), as in torch_baseline.py; their TFLOP/s is printed after the table.
  std::vector<std::pair<size_t, double>> flops;  // row index, flop per call
  for (int64_t n : {int64_t{64}, int64_t{4096}}) {
    bool small = n < 1000;
    lf::Tensor a = ready(lf::randn({n, n})), w = ready(lf::randn({n, n})), b = ready(lf::randn({n}));
    run("matmul_bias_relu", small ? "small" : "large", "relu(x@w+b) f32, " + std::to_string(n) + "^3",
        4.0 * (3 * n * n + n), [&] { return lf::relu(lf::matmul(a, w) + b); }, small ? kSmallReps : 50);
    flops.emplace_back(rows.size() - 1, 2.0 * n * n * n);
  }
  for (int64_t n : {int64_t{256}, int64_t{8192}}) {
    bool small = n < 1000;
    const lf::DType bf16 = lf::DType::BFloat16;
    lf::Tensor a = ready(lf::randn({n, n}, bf16)), w = ready(lf::randn({n, n}, bf16));
    run("matmul_bf16", small ? "small" : "large", "x@w bf16, " + std::to_string(n) + "^3", 2.0 * 3 * n * n,
        [&] { return lf::matmul(a, w); }, small ? kSmallReps : 50);
    flops.emplace_back(rows.size() - 1, 2.0 * n * n * n);
  }
  // An epilogue cuBLASLt has no form for: the cost rule's choice (the row), then each path forced
  // (LAZYFUSE_MATMUL's setting), to check the rule against what was measured.
  std::vector<std::string> path_lines;
  for (int64_t n : {int64_t{256}, int64_t{2048}}) {
    bool small = n < 1000;
    lf::Tensor a = ready(lf::randn({n, n})), w = ready(lf::randn({n, n})), b = ready(lf::randn({n}));
    lf::Tensor r = ready(lf::randn({n, n}));
    auto make = [&] { return lf::gelu(lf::matmul(a, w) + b) + r; };
    int reps = small ? kSmallReps : 50;
    run("matmul_gelu_residual", small ? "small" : "large", "gelu(x@w+b)+r f32, " + std::to_string(n) + "^3",
        4.0 * (4 * n * n + n), make, reps);
    flops.emplace_back(rows.size() - 1, 2.0 * n * n * n);
    for (const char* path : {"generated", "cublaslt"}) {
      lf::rt::mutable_config().matmul = path;
      double ms = per_call_ms([&] { lf::Tensor y = make(); lf::sync(); }, reps);
      char line[200];
      std::snprintf(line, sizeof line, "gelu(x@w+b)+r f32, %lld^3 with LAZYFUSE_MATMUL=%s: %.4f ms, %.1f TFLOP/s",
                    static_cast<long long>(n), path, ms, 2.0 * n * n * n / ms / 1e9);
      path_lines.push_back(line);
    }
    lf::rt::mutable_config().matmul = "auto";
  }

  // compile ms: what the first call's new kernels took before they could launch (quick builds
  // where tiered compiling made them); optimized ms: their optimized builds, on the background thread.
  std::printf("| workload | size | floor ms | fused ms | fused/floor | unfused ms | first call ms (kernels, quick) | compile ms | optimized ms |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const Row& r : rows) {
    double floor_ms = r.bytes / (copy_gbps * 1e6);
    std::printf("| %s | %s | %.4f | %.4f | %.2fx | %.4f | %.1f (%llu, %llu) | %.1f | %.1f |\n", r.label.c_str(),
                r.size.c_str(), floor_ms, r.fused_ms, r.fused_ms / floor_ms, r.unfused_ms, r.first_ms, r.first_kernels,
                r.quick_builds, r.compile_ms, r.optimized_ms);
    if (csv) {
      const char* w = r.workload.c_str();
      const char* z = r.size.c_str();
      std::fprintf(csv, "%s,%s,lazyfuse_fused,%.6f,%.6f\n", w, z, r.fused_ms, floor_ms);
      std::fprintf(csv, "%s,%s,lazyfuse_unfused,%.6f,%.6f\n", w, z, r.unfused_ms, floor_ms);
      std::fprintf(csv, "%s,%s,lazyfuse_first_call,%.6f,%.6f\n", w, z, r.first_ms, floor_ms);
    }
  }
  if (csv) std::fclose(csv);
  for (auto [i, flop] : flops)
    std::printf("%s: fused %.1f TFLOP/s, unfused %.1f TFLOP/s\n", rows[i].label.c_str(), flop / rows[i].fused_ms / 1e9,
                flop / rows[i].unfused_ms / 1e9);
  for (const std::string& line : path_lines) std::printf("%s\n", line.c_str());
  lf::CacheStats s = lf::cache_stats();
  std::printf("\nkernels compiled %llu in %.1f ms total (since the last row's reset)\n",
              static_cast<unsigned long long>(s.kernels_compiled), s.compile_ms);
  return 0;
}
