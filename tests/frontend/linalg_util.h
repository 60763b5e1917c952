// What the lf::linalg tests share (linalg_test, linalg_svd_test, linalg_cusolver_test): seeded
// random matrices, symmetric positive-definite ones, the transpose of the last two dims, a
// float64 max-abs check, and a fixture that runs a test on the host path its parameter names.
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "runtime/config.h"

namespace lf::test {

// Uniform in [lo, hi), the same values for the same seed.
inline Tensor random(Shape shape, unsigned seed, DType dtype = DType::Float64, double lo = -1, double hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (double& x : v) x = u(rng);
  return cast(from_vector(v, shape), dtype);
}
inline Tensor mT(const Tensor& t) { return transpose(t, -2, -1); }
// Symmetric positive-definite: X X^T + n I.
inline Tensor spd(Shape shape, unsigned seed, DType dtype = DType::Float64) {
  Tensor x = random(shape, seed, dtype);
  const int64_t n = shape.back();
  return matmul(x, mT(x)) + eye(n, dtype) * static_cast<double>(n);
}
inline double max_abs(const Tensor& t) {
  if (t.numel() == 0) return 0;
  return max(abs(cast(t, DType::Float64))).item<double>();
}
inline void expect_small(const Tensor& t, double tol, const std::string& what) { EXPECT_LT(max_abs(t), tol) << what; }

// LAZYFUSE_LINALG set to the test's parameter ("auto", "reference") for its length.
class LinalgPaths : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    saved_ = rt::mutable_config().linalg;
    rt::mutable_config().linalg = GetParam();
  }
  void TearDown() override { rt::mutable_config().linalg = saved_; }
  std::string saved_;
};

}  // namespace lf::test
