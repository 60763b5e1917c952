// Issue 49's complex numbers on the CPU: elementwise chains, a reduction and a matmul of complex64
// values, fused and unfused, medians after a warm-up; numpy's figures for the same programs in
// the same run come from bench/complex_numpy.py (bench/complex.sh runs both).
//
//   lazyfuse-bench-complex [--n ELEMENTS] [--reps N]   (defaults 2^22 and 15)
#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

namespace {

using Clock = std::chrono::steady_clock;

double median_ms(const std::function<void()>& f, int reps) {
  f();  // compiles
  f();  // records the flush plan
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto s = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - s).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

lf::Tensor random_complex(lf::Shape shape) {
  lf::Tensor z = lf::complex(lf::randn(shape), lf::randn(shape));
  lf::sync();
  return z;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = int64_t{1} << 22;
  int reps = 15;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--n")) n = std::atoll(argv[i + 1]);
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
  }
  lf::manual_seed(0);
  lf::Tensor z = random_complex({n}), w = random_complex({n});
  const int64_t m = 256;
  lf::Tensor a = random_complex({m, m}), b = random_complex({m, m});
  struct Program {
    const char* name;
    std::function<lf::Tensor()> run;
    double bytes;  // read + written once, the floor's traffic
  };
  const double c = 8.0 * static_cast<double>(n);  // bytes of one complex64 vector
  std::vector<Program> programs = {
      {"z * w + z", [&] { return z * w + z; }, 3 * c},
      {"exp(z) * conj(w)", [&] { return lf::exp(z * 0.1) * lf::conj(w); }, 3 * c},
      {"abs(z * w).sum()", [&] { return lf::abs(z * w).sum(); }, 2 * c},
      {"(z * w).sum()", [&] { return (z * w).sum(); }, 2 * c},
      {"matmul 256^3", [&] { return lf::matmul(a, b); }, 0},
  };
  std::printf("lazyfuse complex64, n = %lld (%.0f MB a vector), medians of %d\n", static_cast<long long>(n), c / 1e6, reps);
  std::printf("%-20s %10s %10s %8s\n", "program", "fused ms", "unfused ms", "GB/s");
  for (const Program& p : programs) {
    auto once = [&] {
      lf::Tensor y = p.run();
      lf::sync();
      (void)y.is_materialized();
    };
    lf::set_fusion_enabled(true);
    const double fused = median_ms(once, reps);
    lf::set_fusion_enabled(false);
    const double unfused = median_ms(once, reps);
    lf::set_fusion_enabled(true);
    if (p.bytes > 0)
      std::printf("%-20s %10.3f %10.3f %8.1f\n", p.name, fused, unfused, p.bytes / fused / 1e6);
    else
      std::printf("%-20s %10.3f %10.3f %8s\n", p.name, fused, unfused, "-");
  }
}
