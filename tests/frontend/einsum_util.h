// Helpers of the einsum and products tests: float64 arrays, einsum by loops over every label, and
// loops over multi-indices.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "frontend/test_util.h"

namespace lf::test {

// A float64 array with its shape, row-major: the references' operand and result.
struct Array {
  Shape shape;
  std::vector<double> v;
};

inline Array random_array(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-2, 2);
  Array a{shape, std::vector<double>(static_cast<size_t>(shape_numel(shape)))};
  for (double& x : a.v) x = u(rng);
  return a;
}

inline Array integer_array(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  Array a{shape, std::vector<double>(static_cast<size_t>(shape_numel(shape)))};
  for (double& x : a.v) x = static_cast<double>(static_cast<int>(rng() % 11) - 5);
  return a;
}

inline Tensor tensor_of(const Array& a) { return from_vector(a.v, a.shape); }

inline int64_t flat_index(const Shape& shape, const std::vector<int64_t>& idx) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + (shape[d] == 1 ? 0 : idx[d]);
  return f;
}

// einsum by loops over every label's values: operands' labels (letters only, no ellipsis) and the
// output's. A dim of size 1 broadcasts to its label's size.
inline Array naive_einsum(const std::vector<std::string>& terms, const std::string& output,
                          const std::vector<Array>& ops) {
  std::map<char, int64_t> size;
  for (size_t i = 0; i < terms.size(); ++i)
    for (size_t d = 0; d < terms[i].size(); ++d) {
      int64_t& s = size[terms[i][d]];
      s = std::max(s, ops[i].shape[d]);
      if (ops[i].shape[d] == 0) s = -1;  // 0 wins over 1
    }
  for (auto& [c, s] : size) s = std::max<int64_t>(s, 0);
  std::vector<char> labels;
  for (auto& [c, s] : size) labels.push_back(c);
  Array out;
  for (char c : output) out.shape.push_back(size[c]);
  out.v.assign(static_cast<size_t>(shape_numel(out.shape)), 0);
  std::vector<int64_t> at(labels.size(), 0);
  auto value = [&](char c) {
    return at[static_cast<size_t>(std::find(labels.begin(), labels.end(), c) - labels.begin())];
  };
  for (char c : labels)
    if (size[c] == 0) return out;
  for (;;) {
    double p = 1;
    for (size_t i = 0; i < terms.size(); ++i) {
      std::vector<int64_t> idx;
      for (char c : terms[i]) idx.push_back(value(c));
      p *= ops[i].v[static_cast<size_t>(flat_index(ops[i].shape, idx))];
    }
    std::vector<int64_t> oidx;
    for (char c : output) oidx.push_back(value(c));
    out.v[static_cast<size_t>(flat_index(out.shape, oidx))] += p;
    size_t k = labels.size();
    while (k > 0 && ++at[k - 1] == size[labels[k - 1]]) at[--k] = 0;
    if (k == 0) return out;
  }
}

inline void expect_array(const Tensor& got, const Array& want, double tol = 1e-12) {
  ASSERT_EQ(got.shape(), want.shape);
  expect_close(got, want.v, tol);
}

// Calls f with every multi-index of `shape`, row-major.
inline void for_each_index(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& f) {
  if (shape_numel(shape) == 0) return;
  std::vector<int64_t> at(shape.size(), 0);
  for (;;) {
    f(at);
    size_t k = shape.size();
    while (k > 0 && ++at[k - 1] == shape[k - 1]) at[--k] = 0;
    if (k == 0) return;
  }
}

inline double at_index(const Array& a, const std::vector<int64_t>& idx) {
  return a.v[static_cast<size_t>(flat_index(a.shape, idx))];
}

}  // namespace lf::test
