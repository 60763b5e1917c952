// lf::linalg's orthogonal factorizations (issue 49 item 2): qr, svd (reduced), svdvals and lstsq
// (gelsd) of float64 batches, the best of 5 calls each in ms, on the path LAZYFUSE_LINALG picks
// (LAPACK, or the reference with LAZYFUSE_LINALG=reference). bench/linalg_torch.py is the peer.
//
//   lazyfuse-bench-linalg [batch m n]...   (default: 100 8 8, 1 256 256, 10 200 50)
#include <lazyfuse/lazyfuse.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

namespace {

namespace la = lf::linalg;

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
  std::vector<int> sizes = {100, 8, 8, 1, 256, 256, 10, 200, 50};
  if (argc > 1) {
    sizes.clear();
    for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  }
  for (size_t i = 0; i + 3 <= sizes.size(); i += 3) {
    const int b = sizes[i], m = sizes[i + 1], n = sizes[i + 2];
    lf::Tensor a = lf::randn({b, m, n}, lf::DType::Float64), rhs = lf::randn({b, m, 2}, lf::DType::Float64);
    a.to_vector<double>();
    rhs.to_vector<double>();
    std::printf("B%d %dx%d  qr %.2f  svd %.2f  svdvals %.2f  lstsq %.2f ms\n", b, m, n,
                best_ms([&] { la::qr(a).R.to_vector<double>(); }),
                best_ms([&] { la::svd(a, false).S.to_vector<double>(); }),
                best_ms([&] { la::svdvals(a).to_vector<double>(); }),
                best_ms([&] { la::lstsq(a, rhs, std::nullopt, "gelsd").solution.to_vector<double>(); }));
  }
}
