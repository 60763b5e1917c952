// A small program for the observability tests (tests/tools/observe_test.sh, cache_tool_test.sh):
// x + y on contiguous inputs, then on a transposed y (a recompile whose explanation names the
// input and its layout), then a few equal flushes (the later ones replay a flush plan). Each value
// is checked against plain C++; exits non-zero if one is wrong. Prints the counters:
// "launched=N flushes=M replayed=R". Run it with LAZYFUSE_LOG, LAZYFUSE_PROFILE, LAZYFUSE_TRACE_FILE.
#include <cmath>
#include <cstdio>
#include <vector>

#include "lazyfuse/lazyfuse.h"

int main() {
  lf::set_default_device(lf::Device::cpu());
  constexpr int kRows = 24, kCols = 40;
  std::vector<float> xs(kRows * kCols), ys(kRows * kCols);
  for (int i = 0; i < kRows * kCols; ++i) {
    xs[i] = 0.25f * static_cast<float>(i % 17) - 1.0f;
    ys[i] = 0.5f * static_cast<float>(i % 11);
  }
  lf::Tensor x = lf::from_vector(xs, {kRows, kCols});
  lf::Tensor y = lf::from_vector(ys, {kRows, kCols});
  lf::Tensor yt = lf::from_vector(ys, {kCols, kRows}).transpose(0, 1);  // yt[r][c] = ys[c * kRows + r]
  int bad = 0;
  auto check = [&](const char* what, const std::vector<float>& got, auto want) {
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kCols; ++c)
        if (std::fabs(got[r * kCols + c] - want(r, c)) > 1e-5f * (1 + std::fabs(want(r, c)))) {
          std::fprintf(stderr, "%s[%d][%d] = %g, expected %g\n", what, r, c, got[r * kCols + c], want(r, c));
          ++bad;
          return;
        }
  };
  check("x+y", (x + y).to_vector<float>(), [&](int r, int c) { return xs[r * kCols + c] + ys[r * kCols + c]; });
  check("x+yt", (x + yt).to_vector<float>(), [&](int r, int c) { return xs[r * kCols + c] + ys[c * kRows + r]; });
  for (int i = 0; i < 4; ++i)
    check("relu(x*y+1)", lf::relu(x * y + 1.0).to_vector<float>(),
          [&](int r, int c) { return std::max(0.0f, xs[r * kCols + c] * ys[r * kCols + c] + 1.0f); });
  lf::CacheStats s = lf::cache_stats();
  std::printf("launched=%llu flushes=%llu replayed=%llu\n", static_cast<unsigned long long>(s.kernels_launched),
              static_cast<unsigned long long>(s.flushes), static_cast<unsigned long long>(s.plans_replayed));
  return bad ? 1 : 0;
}
