// Row work over few long rows (the fuser's few-rows cost rule, issue 51's GPU side): a whole
// tensor normalized, `(x - x.mean()) / x.std()` with the result held, a softmax of one long row, and
// a solver's dot products (bench/cg_poisson.cpp's step without its stencil). Prints the steady-state
// ms of each, fused; run it with LAZYFUSE_FEW_ROWS=0 beside it for the rule off, and
// bench/few_rows_torch.py for PyTorch on the same programs.
//
//   lazyfuse-bench-few-rows [--cuda] [log2 size (24)]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include <lazyfuse/lazyfuse.h>

namespace {

using lf::Tensor;

double median_ms(const std::function<void()>& step, lf::Device device) {
  for (int i = 0; i < 3; ++i) step();
  lf::device_synchronize(device);
  std::vector<double> ms;
  for (int i = 0; i < 15; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    step();
    lf::device_synchronize(device);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  lf::Device device = lf::Device::cpu();
  int log2n = 24;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cuda") == 0) device = lf::Device::cuda(0);
    else log2n = std::atoi(argv[i]);
  }
  lf::set_default_device(device);
  const int64_t n = int64_t{1} << log2n;
  Tensor x = lf::randn({n});
  Tensor held;
  double normalize = median_ms([&] {
    held = (x - x.mean()) / x.std();
    lf::sync();
  }, device);
  double softmax = median_ms([&] {
    held = lf::softmax(x, 0);
    lf::sync();
  }, device);
  // CG's vector part: alpha = rs / p.ap; x += alpha p; r -= alpha ap; beta = r.r / rs; p = r + beta p.
  Tensor ap = lf::randn({n}), p = lf::randn({n}), r = lf::randn({n}), y = lf::zeros({n});
  Tensor rs = lf::sum(r * r);
  lf::sync();
  double cg = median_ms([&] {
    Tensor alpha = rs / lf::sum(p * ap);
    y = y + alpha * p;
    Tensor r2 = r - alpha * ap;
    Tensor rs2 = lf::sum(r2 * r2);
    p = r2 + rs2 / rs * p;
    lf::sync();
  }, device);
  const char* few = std::getenv("LAZYFUSE_FEW_ROWS");
  std::printf("few_rows n=2^%d %s LAZYFUSE_FEW_ROWS=%s: normalize %.3f ms, softmax %.3f ms, cg_vectors %.3f ms\n",
              log2n, device.str().c_str(), few ? few : "default", normalize, softmax, cg);
  return 0;
}
