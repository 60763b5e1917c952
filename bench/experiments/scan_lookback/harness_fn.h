// run_variant: times one scan variant's launch() on n float32 (2^26 by default) against a
// device-to-device copy of the same bytes, both with CUDA events, medians of 60, after checking its
// result against a double-precision prefix sum on the host.
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <string>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }
typedef void (*Launch)(const float*, float*, long long, char*, cudaStream_t);
static void run_variant(const char* kName, Launch launch, long long n) {
  std::vector<float> h(n);
  unsigned s = 12345;
  for (auto& v : h) { s = s * 1664525u + 1013904223u; v = (float)((s >> 8) & 0xffff) / 65536.0f - 0.5f; }
  float *x, *y, *z;
  char* scratch;
  size_t scratch_bytes = 64 << 20;
  CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4)); CK(cudaMalloc(&z, n * 4)); CK(cudaMalloc(&scratch, scratch_bytes));
  CK(cudaMemset(y, 0, n * 4));
  CK(cudaMemcpy(x, h.data(), n * 4, cudaMemcpyHostToDevice));
  cudaStream_t st; CK(cudaStreamCreate(&st));
  launch(x, y, n, scratch, st);
  CK(cudaStreamSynchronize(st));
  std::vector<float> out(n);
  CK(cudaMemcpy(out.data(), y, n * 4, cudaMemcpyDeviceToHost));
  double acc = 0, worst = 0; long long bad = -1;
  for (long long i = 0; i < n; ++i) {
    acc += h[i];
    double err = std::fabs(out[i] - acc);
    if (!(err <= 1e-2)) { if (bad < 0) bad = i; }
    worst = std::max(worst, err);
  }
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> ts, tc;
  for (int r = 0; r < 60; ++r) {
    CK(cudaEventRecord(a, st)); launch(x, y, n, scratch, st); CK(cudaEventRecord(b, st)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); ts.push_back(ms);
    CK(cudaEventRecord(a, st)); CK(cudaMemcpyAsync(z, x, n * 4, cudaMemcpyDeviceToDevice, st)); CK(cudaEventRecord(b, st)); CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms, a, b)); tc.push_back(ms);
  }
  CK(cudaGetLastError());
  float m = median(ts), c = median(tc);
  printf("%-28s n=%lld  scan %.4f ms  copy %.4f ms  ratio %.3f  %s (max err %.3g%s)\n", kName, n, m, c, m / c,
         bad < 0 ? "correct" : "WRONG", worst, bad < 0 ? "" : (" first bad " + std::to_string(bad)).c_str());
  cudaFree(x); cudaFree(y); cudaFree(z); cudaFree(scratch); cudaStreamDestroy(st);
}
