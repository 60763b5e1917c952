// The gradient checker of the autograd tests: lf::grad of sum(f(xs) * w) against float64 central
// differences, for tests of composite ops to share.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "frontend/test_util.h"

namespace lf::test {

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

struct Input {
  Shape shape;
  double lo = -2, hi = 2;  // uniform values in [lo, hi]
};

inline std::vector<double> uniform(int64_t n, double lo, double hi, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = u(rng);
  return v;
}

// sum(f(xs) * w) for fixed random weights w: a scalar whose gradient checks every output element.
inline double weighted(const Fn& f, const std::vector<Tensor>& xs, const Tensor& w) {
  return sum(cast(f(xs), DType::Float64) * w).item<double>();
}

// The analytic gradient of every input against central differences in float64.
inline void gradcheck(const std::string& name, const Fn& f, const std::vector<Input>& inputs, double tol = 1e-6,
                      const std::vector<std::vector<double>>& values = {}) {
  SCOPED_TRACE(name);
  std::mt19937 rng(1234);
  std::vector<std::vector<double>> data;
  std::vector<Tensor> xs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    data.push_back(i < values.size() && !values[i].empty()
                       ? values[i]
                       : uniform(shape_numel(inputs[i].shape), inputs[i].lo, inputs[i].hi, rng));
    xs.push_back(from_vector(data.back(), inputs[i].shape));
  }
  Tensor out = f(xs);
  Tensor w = from_vector(uniform(out.numel(), 0.5, 1.5, rng), out.shape());
  Tensor loss = sum(cast(out, DType::Float64) * w);
  std::vector<Tensor> grads = grad(loss, xs);
  ASSERT_EQ(grads.size(), xs.size());
  const double eps = 1e-6;
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_EQ(grads[i].shape(), xs[i].shape()) << "input " << i;
    std::vector<double> analytic = grads[i].to_vector<double>();
    for (size_t j = 0; j < data[i].size(); ++j) {
      std::vector<Tensor> moved = xs;
      std::vector<double> d = data[i];
      d[j] = data[i][j] + eps;
      moved[i] = from_vector(d, inputs[i].shape);
      double up = weighted(f, moved, w);
      d[j] = data[i][j] - eps;
      moved[i] = from_vector(d, inputs[i].shape);
      double down = weighted(f, moved, w);
      double numeric = (up - down) / (2 * eps);
      EXPECT_NEAR(analytic[j], numeric, tol * std::max(1.0, std::fabs(numeric))) << "input " << i << " element " << j;
    }
  }
}

}  // namespace lf::test
