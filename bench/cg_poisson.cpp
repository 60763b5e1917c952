// Issue 48's conjugate-gradient program as a new user writes it: the 2-D Poisson problem
// (5-point Laplacian with zero boundaries, by pad and slices) on an N x N grid in float64, alpha and
// beta kept as 0-d tensors, the residual read every tenth iteration (the loop's only sync point).
// Prints the steady-state time of `iters` iterations, fused and unfused, and the final residual;
// bench/cg_poisson_numpy.py is the numpy peer of the same loop.
//
//   lazyfuse-bench-cg [N] [iters] [--cuda]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <lazyfuse/lazyfuse.h>

namespace {

using lf::Tensor;

// A p: 4 p minus its four neighbours, zero outside the grid.
Tensor laplacian(const Tensor& p, int64_t n) {
  Tensor q = lf::pad(p, {1, 1, 1, 1});
  return p * 4 - q.slice(0, 0, n).slice(1, 1, n + 1) - q.slice(0, 2, n + 2).slice(1, 1, n + 1) -
         q.slice(0, 1, n + 1).slice(1, 0, n) - q.slice(0, 1, n + 1).slice(1, 2, n + 2);
}

struct Result {
  double seconds = 0, residual = 0;
  int iterations = 0;
};

Result solve(int64_t n, int iters) {
  std::vector<double> rhs(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      rhs[static_cast<size_t>(i * n + j)] = std::sin(0.05 * static_cast<double>(i)) * std::cos(0.03 * static_cast<double>(j));
  Tensor b = lf::from_vector(rhs, {n, n});
  Tensor x = lf::zeros({n, n}, lf::DType::Float64);
  Tensor r = b - laplacian(x, n);
  Tensor p = r;
  Tensor rs = lf::sum(r * r);
  auto start = std::chrono::steady_clock::now();
  double residual = 0;
  for (int k = 1; k <= iters; ++k) {
    Tensor ap = laplacian(p, n);
    Tensor alpha = rs / lf::sum(p * ap);
    x = x + alpha * p;
    r = r - alpha * ap;
    Tensor rs_new = lf::sum(r * r);
    Tensor beta = rs_new / rs;
    p = r + beta * p;
    rs = rs_new;
    if (k % 10 == 0 || k == iters) residual = std::sqrt(rs.item<double>());
  }
  lf::sync();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {s, residual, iters};
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = 256;
  int iters = 200;
  std::vector<const char*> rest;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cuda") == 0) lf::set_default_device(lf::Device::cuda(0));
    else rest.push_back(argv[i]);
  }
  if (!rest.empty()) n = std::atoll(rest[0]);
  if (rest.size() > 1) iters = std::atoi(rest[1]);
  for (bool fusion : {true, false}) {
    lf::set_fusion_enabled(fusion);
    solve(n, 20);  // compiles and records
    std::vector<double> times;
    Result r;
    for (int t = 0; t < 3; ++t) {
      r = solve(n, iters);
      times.push_back(r.seconds);
    }
    std::sort(times.begin(), times.end());
    std::printf("cg %lldx%lld float64, %d iterations, %s: %.3f s (median of 3; best %.3f), residual %.6e\n",
                static_cast<long long>(n), static_cast<long long>(n), iters, fusion ? "fused" : "unfused", times[1],
                times[0], r.residual);
  }
  return 0;
}
