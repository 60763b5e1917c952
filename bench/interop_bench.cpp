// Costs of bringing existing memory in and handing it out (issue 24): lf::from_blob over 1 GiB,
// DLPack import and export (where dlpack.h is installed). Each figure is the median of many calls;
// it also checks that nothing was copied (cache_stats().bytes_moved and resident memory).
//   build/bench/lazyfuse-bench-interop
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <vector>

#include <lazyfuse/lazyfuse.h>
#if __has_include(<dlpack/dlpack.h>)
#include <lazyfuse/dlpack.h>
#define HAVE_DLPACK 1
#endif

namespace {

template <typename F>
double median_us(int reps, F&& f) {
  std::vector<double> t(static_cast<size_t>(reps));
  for (double& x : t) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    x = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  }
  std::nth_element(t.begin(), t.begin() + reps / 2, t.end());
  return t[static_cast<size_t>(reps / 2)];
}

size_t resident_bytes() {
  std::ifstream f("/proc/self/statm");
  size_t pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * 4096;
}

}  // namespace

int main() {
  const size_t bytes = size_t{1} << 30;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return 1;
  const int64_t n = static_cast<int64_t>(bytes / 4);
  lf::reset_stats();
  const size_t rss0 = resident_bytes();
  double wrap = median_us(2000, [&] { lf::Tensor t = lf::from_blob(p, {n}, lf::DType::Float32); });
  double wrap2d = median_us(2000, [&] {
    lf::Tensor t = lf::from_blob(p, {1 << 15, 1 << 13}, {1 << 13, 1}, lf::DType::Float32, lf::Device::cpu(), [](void*) {});
  });
  std::printf("from_blob, 1 GiB float32, borrowed:           %.2f us\n", wrap);
  std::printf("from_blob, 1 GiB float32 2-D, with a deleter:  %.2f us\n", wrap2d);
#ifdef HAVE_DLPACK
  lf::Tensor big = lf::from_blob(p, {n}, lf::DType::Float32);
  double out = median_us(2000, [&] {
    DLManagedTensor* m = lf::to_dlpack(big);
    m->deleter(m);
  });
  double in = median_us(2000, [&] {
    DLManagedTensor* m = lf::to_dlpack(big);
    lf::Tensor back = lf::from_dlpack(m);  // its deleter runs when `back` dies
  });
  std::printf("to_dlpack + deleter, 1 GiB:                    %.2f us\n", out);
  std::printf("to_dlpack + from_dlpack + release, 1 GiB:      %.2f us\n", in);
#endif
  std::printf("bytes_moved %llu, resident memory grew %.1f MiB\n",
              static_cast<unsigned long long>(lf::cache_stats().bytes_moved), (double(resident_bytes()) - double(rss0)) / (1 << 20));
  munmap(p, bytes);
  return 0;
}
