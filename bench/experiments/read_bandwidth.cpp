// The machine's read bandwidth against its copy bandwidth: two threads each sum half of a 64 MB
// float array (AVX2, 4 accumulators), then two threads memcpy it. What sum(x*x) can reach at best.
//   g++ -O2 -std=c++17 -pthread bench/experiments/read_bandwidth.cpp -o /tmp/rd && /tmp/rd
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
#include <algorithm>
__attribute__((target("avx2"))) float sum_range(const float* p, size_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i + 32 <= n; i += 32) {
    a0 = _mm256_add_ps(a0, _mm256_loadu_ps(p + i));
    a1 = _mm256_add_ps(a1, _mm256_loadu_ps(p + i + 8));
    a2 = _mm256_add_ps(a2, _mm256_loadu_ps(p + i + 16));
    a3 = _mm256_add_ps(a3, _mm256_loadu_ps(p + i + 24));
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
  float out[8]; _mm256_storeu_ps(out, s); return out[0] + out[7];
}
int main() {
  size_t n = size_t{1} << 24;
  std::vector<float> v(n, 1.0f), w(n);
  std::vector<double> rd, cp;
  for (int r = 0; r < 15; ++r) {
    float res[2];
    auto s = std::chrono::steady_clock::now();
    std::thread t([&] { res[1] = sum_range(v.data() + n / 2, n / 2); });
    res[0] = sum_range(v.data(), n / 2);
    t.join();
    rd.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
    s = std::chrono::steady_clock::now();
    std::thread t2([&] { std::memcpy(w.data() + n / 2, v.data() + n / 2, n / 2 * 4); });
    std::memcpy(w.data(), v.data(), n / 2 * 4);
    t2.join();
    cp.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
    if (res[0] < 0) std::puts("");
  }
  std::sort(rd.begin(), rd.end()); std::sort(cp.begin(), cp.end());
  std::printf("read 64 MB on 2 threads: best %.2f ms median %.2f ms (%.1f GB/s); copy 64 MB: best %.2f ms (%.1f GB/s read+write)\n",
              rd[0], rd[7], 64 * 1.048576 / rd[0], cp[0], 128 * 1.048576 / cp[0]);
}
