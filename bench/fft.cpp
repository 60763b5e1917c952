// lf::fft (issue 49 item 3) on the CPU: a 2^20-point complex FFT, an rfft2 of 1024^2 and the
// spectral filter irfft2(rfft2(x) * H) * s, float64 (numpy.fft computes in float64), the best of
// 5 calls each in ms. Complex values are real pairs (lf::fft::pairs) until complex dtypes land.
// bench/fft_numpy.py is the peer (numpy.fft, scipy.fft, torch.fft in the same run).
//
//   lazyfuse-bench-fft [n side]   (default: 1048576 1024)
#include <lazyfuse/lazyfuse.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

namespace pairs = lf::fft::pairs;

template <typename F>
double best_ms(F f) {
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best * 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : int64_t{1} << 20;
  const int64_t side = argc > 2 ? std::atoll(argv[2]) : 1024;
  lf::Tensor z = lf::randn({n, 2}, lf::DType::Float64);
  lf::Tensor x = lf::randn({side, side}, lf::DType::Float64);
  lf::Tensor H = lf::rand({side, side / 2 + 1, 1}, lf::DType::Float64);
  z.to_vector<double>();
  x.to_vector<double>();
  H.to_vector<double>();
  const std::vector<int64_t> dims{-2, -1};
  std::printf("fft %lld complex128  %.2f ms\n", static_cast<long long>(n),
              best_ms([&] { pairs::c2c(z).to_vector<double>(); }));
  std::printf("rfft2 %lldx%lld float64  %.2f ms\n", static_cast<long long>(side), static_cast<long long>(side),
              best_ms([&] { pairs::r2cn(x, std::nullopt, dims).to_vector<double>(); }));
  std::printf("irfft2(rfft2(x) * H) * 0.5 %lldx%lld  %.2f ms\n", static_cast<long long>(side),
              static_cast<long long>(side), best_ms([&] {
                lf::Tensor s = pairs::r2cn(x, std::nullopt, dims) * H;
                (pairs::c2rn(s, lf::Shape{side, side}, dims) * 0.5).to_vector<double>();
              }));
}
