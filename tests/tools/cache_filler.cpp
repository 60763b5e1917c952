// A small program that fills the persistent kernel cache as a user's program would: a few fused
// computations on the CPU, each checked against plain C++ loops. Prints the counters, e.g.
// "compiled=3 disk_hits=0", and exits non-zero if a value is wrong. The tests run it with
// LAZYFUSE_CACHE_DIR pointing at a temporary directory. With --report-llvm it adds whether LLVM
// was loaded into the process (" llvm=yes" / " llvm=no", from /proc/self/maps).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "lazyfuse/lazyfuse.h"

namespace {

bool llvm_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libLLVM") != std::string::npos || line.find("liblazyfuse-llvm") != std::string::npos) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  bool report_llvm = argc > 1 && std::strcmp(argv[1], "--report-llvm") == 0;
  lf::set_default_device(lf::Device::cpu());
  constexpr int kRows = 8, kCols = 100;
  std::vector<float> xs(kRows * kCols), ys(kRows * kCols);
  for (int i = 0; i < kRows * kCols; ++i) {
    xs[i] = -2.0f + 0.005f * static_cast<float>(i);
    ys[i] = 1.0f + 0.001f * static_cast<float>(i % 37);
  }
  lf::Tensor x = lf::from_vector(xs, {kRows, kCols});
  lf::Tensor y = lf::from_vector(ys, {kRows, kCols});
  int bad = 0;
  auto check = [&](const char* what, const std::vector<float>& got, const std::vector<double>& want) {
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::fabs(got[i] - want[i]) > 1e-4 * (1 + std::fabs(want[i]))) {
        std::fprintf(stderr, "%s[%zu] = %g, expected %g\n", what, i, got[i], want[i]);
        ++bad;
        return;
      }
    }
  };
  {
    std::vector<double> want(xs.size());
    for (size_t i = 0; i < xs.size(); ++i) want[i] = std::max(0.0, double(xs[i]) * ys[i] + 1.0);
    check("relu(x*y+1)", lf::relu(x * y + 1.0).to_vector<float>(), want);
  }
  {
    std::vector<double> want(kRows, 0.0);
    for (int r = 0; r < kRows; ++r)
      for (int c = 0; c < kCols; ++c) want[r] += std::exp(double(xs[r * kCols + c])) - ys[r * kCols + c];
    check("sum(exp(x)-y)", lf::sum(lf::exp(x) - y, {-1}).to_vector<float>(), want);
  }
  {
    std::vector<double> want(xs.size());
    for (size_t i = 0; i < xs.size(); ++i) want[i] = std::tanh(double(xs[i])) / ys[i];
    check("tanh(x)/y", (lf::tanh(x) / y).to_vector<float>(), want);
  }
  lf::CacheStats s = lf::cache_stats();
  std::printf("compiled=%llu disk_hits=%llu", static_cast<unsigned long long>(s.kernels_compiled),
              static_cast<unsigned long long>(s.disk_hits));
  if (report_llvm) std::printf(" llvm=%s", llvm_mapped() ? "yes" : "no");
  std::printf("\n");
  return bad == 0 ? 0 : 1;
}
