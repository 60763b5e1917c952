// Creation ops (from_vector zeros ones full arange scalar rand randn), item() and to(DType).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "frontend/test_util.h"

namespace {

using lf::test::expect_error;
using lf::test::expect_close;
using lf::test::kNaN;
using lf::test::kInf;


TEST(CreationFromVector, EachDtype) {
  lf::Tensor b = lf::from_vector(std::vector<bool>{true, false, true}, {3});
  EXPECT_EQ(b.dtype(), lf::DType::Bool);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true}));
  lf::Tensor i = lf::from_vector(std::vector<int32_t>{-7, 0, 2147483647, -2147483647 - 1}, {2, 2});
  EXPECT_EQ(i.dtype(), lf::DType::Int32);
  EXPECT_EQ(i.shape(), (lf::Shape{2, 2}));
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{-7, 0, 2147483647, -2147483647 - 1}));
  int64_t big = (int64_t{1} << 62) + 3;
  lf::Tensor l = lf::from_vector(std::vector<int64_t>{big, -big}, {2, 1});
  EXPECT_EQ(l.dtype(), lf::DType::Int64);
  EXPECT_EQ(l.to_vector<int64_t>(), (std::vector<int64_t>{big, -big}));
  lf::Tensor f = lf::from_vector(std::vector<float>{1.5f, -0.25f, NAN, INFINITY}, {4});
  EXPECT_EQ(f.dtype(), lf::DType::Float32);
  std::vector<float> fv = f.to_vector<float>();
  EXPECT_EQ(fv[0], 1.5f);
  EXPECT_EQ(fv[1], -0.25f);
  EXPECT_TRUE(std::isnan(fv[2]));
  EXPECT_EQ(fv[3], INFINITY);
  lf::Tensor d = lf::from_vector(std::vector<double>{0.1, 1e300}, {1, 2});
  EXPECT_EQ(d.dtype(), lf::DType::Float64);
  EXPECT_EQ(d.to_vector<double>(), (std::vector<double>{0.1, 1e300}));
  EXPECT_TRUE(d.is_materialized());
}

TEST(CreationFromVector, ScalarAndEmptyShapes) {
  lf::Tensor s = lf::from_vector(std::vector<float>{2.5f}, {});
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<float>(), 2.5f);
  lf::Tensor e = lf::from_vector(std::vector<float>{}, {2, 0, 3});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(e.shape(), (lf::Shape{2, 0, 3}));
  EXPECT_TRUE(e.to_vector<float>().empty());
}

TEST(CreationFromVector, Errors) {
  expect_error([] { lf::from_vector(std::vector<float>{1, 2, 3}, {2, 2}); }, {"from_vector", "3", "[2, 2]"});
  expect_error([] { lf::from_vector(std::vector<int32_t>{1, 2}, {}); }, {"from_vector", "[]"});
  expect_error([] { lf::from_vector(std::vector<int64_t>{}, {1}); }, {"from_vector", "[1]"});
  expect_error([] { lf::from_vector(std::vector<double>{1, 2}, {-1, -2}); }, {"from_vector", "negative", "[-1, -2]"});
  expect_error([] { lf::from_vector(std::vector<bool>{}, {0, -1}); }, {"from_vector", "negative"});
}

TEST(CreationConstants, ZerosOnesFull) {
  lf::Tensor z = lf::zeros({2, 3});
  EXPECT_EQ(z.dtype(), lf::DType::Float32);
  EXPECT_EQ(z.shape(), (lf::Shape{2, 3}));
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(6, 0.0f));
  lf::Tensor o = lf::ones({4}, lf::DType::Int32);
  EXPECT_EQ(o.dtype(), lf::DType::Int32);
  EXPECT_EQ(o.to_vector<int32_t>(), std::vector<int32_t>(4, 1));
  EXPECT_EQ(lf::ones({2}, lf::DType::Bool).to_vector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_EQ(lf::zeros({2}, lf::DType::Float64).to_vector<double>(), (std::vector<double>{0, 0}));
  lf::Tensor f = lf::full({2, 2}, 3.25);
  EXPECT_EQ(f.to_vector<float>(), std::vector<float>(4, 3.25f));
  EXPECT_EQ(lf::full({3}, -7, lf::DType::Int64).to_vector<int64_t>(), std::vector<int64_t>(3, -7));
  EXPECT_EQ(lf::full({1}, 4e15 + 1, lf::DType::Int64).item<int64_t>(), 4000000000000001LL);
  EXPECT_EQ(lf::full({2}, 0.5, lf::DType::Bool).to_vector<bool>(), (std::vector<bool>{true, true}));
  EXPECT_TRUE(std::isnan(lf::full({1}, NAN).item<float>()));
  EXPECT_EQ(lf::full({1}, -INFINITY, lf::DType::Float64).item<double>(), -INFINITY);
  EXPECT_EQ(lf::full({}, 2).dim(), 0);
  lf::Tensor e = lf::zeros({0, 4});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.to_vector<float>().empty());
}

TEST(CreationConstants, Errors) {
  expect_error([] { lf::zeros({2, -1}); }, {"zeros", "negative", "[2, -1]"});
  expect_error([] { lf::ones({-3}); }, {"ones", "negative", "[-3]"});
  expect_error([] { lf::full({-1}, 1.0); }, {"full", "negative"});
  expect_error([] { lf::full({1}, NAN, lf::DType::Int32); }, {"full", "int32"});
  expect_error([] { lf::full({1}, 1e30, lf::DType::Int64); }, {"full", "int64"});
}

TEST(CreationScalar, Values) {
  lf::Tensor s = lf::scalar(2.5);
  EXPECT_EQ(s.shape(), lf::Shape{});
  EXPECT_EQ(s.dtype(), lf::DType::Float32);
  EXPECT_EQ(s.item<float>(), 2.5f);
  lf::Tensor i = lf::scalar(3, lf::DType::Int32);
  EXPECT_EQ(i.dtype(), lf::DType::Int32);
  EXPECT_EQ(i.item<int32_t>(), 3);
  EXPECT_EQ(lf::scalar(0.1, lf::DType::Float64).item<double>(), 0.1);
}

// torch.arange's rule (issue 52): integer bounds and step give int64; float32 was the old default.
TEST(CreationArange, IntegerSteps) {
  lf::Tensor a = lf::arange(0, 5);
  EXPECT_EQ(a.dtype(), lf::DType::Int64);
  EXPECT_EQ(a.shape(), lf::Shape{5});
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  lf::Tensor f = lf::arange(0.0, 5);
  EXPECT_EQ(f.dtype(), lf::DType::Float32);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4}));
  EXPECT_EQ(lf::arange(2, 9, 3).dtype(), lf::DType::Int64);
  EXPECT_EQ(lf::arange(2, 9, 3).to_vector<float>(), (std::vector<float>{2, 5, 8}));
  EXPECT_EQ(lf::arange(-2, 2, 1, lf::DType::Int64).to_vector<int64_t>(), (std::vector<int64_t>{-2, -1, 0, 1}));
  EXPECT_EQ(lf::arange(0, 3, 1, lf::DType::Int32).dtype(), lf::DType::Int32);
  EXPECT_EQ(lf::arange(0, 3, 1, lf::DType::Int32).to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2}));
}

TEST(CreationArange, NegativeAndFloatSteps) {
  EXPECT_EQ(lf::arange(5, 0, -1).to_vector<float>(), (std::vector<float>{5, 4, 3, 2, 1}));
  EXPECT_EQ(lf::arange(1, -1, -0.5).dtype(), lf::DType::Float32);  // a floating step: float32
  EXPECT_EQ(lf::arange(1, -1, -0.5).to_vector<float>(), (std::vector<float>{1, 0.5, 0, -0.5}));
  EXPECT_EQ(lf::arange(1, 2.5, 0.5).to_vector<float>(), (std::vector<float>{1, 1.5, 2}));
  EXPECT_EQ(lf::arange(1, 2.6, 0.5).to_vector<float>(), (std::vector<float>{1, 1.5, 2, 2.5}));
  // ceil((1 - 0) / 0.1) = 10 elements, start + i * step.
  std::vector<double> tenths = lf::arange(0, 1, 0.1, lf::DType::Float64).to_vector<double>();
  ASSERT_EQ(tenths.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_DOUBLE_EQ(tenths[i], i * 0.1);
}

TEST(CreationArange, Empty) {
  EXPECT_EQ(lf::arange(3, 3).shape(), lf::Shape{0});
  EXPECT_EQ(lf::arange(0, 0, -1).shape(), lf::Shape{0});
  EXPECT_TRUE(lf::arange(3, 3).to_vector<float>().empty());
}

TEST(CreationArange, Errors) {
  expect_error([] { lf::arange(0, 5, 0); }, {"arange", "step"});
  expect_error([] { lf::arange(0, INFINITY); }, {"arange", "finite"});
  expect_error([] { lf::arange(0, NAN); }, {"arange", "finite"});
  expect_error([] { lf::arange(0, 3, 1, lf::DType::Bool); }, {"arange", "bool"});
  // PyTorch: "upper bound and larger bound inconsistent with step sign".
  expect_error([] { lf::arange(5, 0); }, {"arange", "step"});
  expect_error([] { lf::arange(0, 5, -1); }, {"arange", "step"});
}

TEST(CreationRandom, UniformInRange) {
  lf::manual_seed(7);
  for (lf::DType d : {lf::DType::Float32, lf::DType::Float64, lf::DType::Float16, lf::DType::BFloat16}) {
    lf::Tensor r = lf::rand({4096}, d);
    EXPECT_EQ(r.dtype(), d);
    EXPECT_EQ(r.shape(), lf::Shape{4096});
    for (double v : r.to_vector<double>()) {
      ASSERT_GE(v, 0.0) << lf::dtype_name(d);
      ASSERT_LT(v, 1.0) << lf::dtype_name(d);
    }
  }
}

TEST(CreationRandom, ReproducibleAfterManualSeed) {
  lf::manual_seed(1234);
  std::vector<float> a1 = lf::rand({100}).to_vector<float>();
  std::vector<float> n1 = lf::randn({3, 7}).to_vector<float>();
  lf::manual_seed(1234);
  std::vector<float> a2 = lf::rand({100}).to_vector<float>();
  std::vector<float> n2 = lf::randn({3, 7}).to_vector<float>();
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(n1, n2);
  // Evaluation order does not matter: create both, read in the other order.
  lf::manual_seed(1234);
  lf::Tensor ta = lf::rand({100});
  lf::Tensor tn = lf::randn({3, 7});
  EXPECT_EQ(tn.to_vector<float>(), n1);
  EXPECT_EQ(ta.to_vector<float>(), a1);
  lf::manual_seed(99);
  EXPECT_NE(lf::rand({100}).to_vector<float>(), a1);
}

TEST(CreationRandom, SuccessiveCallsDiffer) {
  lf::manual_seed(5);
  std::vector<float> a = lf::rand({64}).to_vector<float>();
  std::vector<float> b = lf::rand({64}).to_vector<float>();
  EXPECT_NE(a, b);
  std::vector<float> c = lf::randn({64}).to_vector<float>();
  std::vector<float> d = lf::randn({64}).to_vector<float>();
  EXPECT_NE(c, d);
  // Not one value repeated: the numbers within a call vary.
  int distinct = 0;
  for (size_t i = 1; i < a.size(); ++i) distinct += a[i] != a[0];
  EXPECT_GT(distinct, 60);
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}
double std_of(const std::vector<double>& v) {
  double m = mean_of(v), s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

TEST(CreationRandom, Moments) {
  lf::manual_seed(2024);
  const int n = 200000;
  for (lf::DType d : {lf::DType::Float32, lf::DType::Float64}) {
    std::vector<double> u = lf::rand({n}, d).to_vector<double>();
    // Uniform: mean 1/2, std 1/sqrt(12); the standard error of the mean is ~0.0006.
    EXPECT_NEAR(mean_of(u), 0.5, 0.005) << lf::dtype_name(d);
    EXPECT_NEAR(std_of(u), 1 / std::sqrt(12.0), 0.005) << lf::dtype_name(d);
    std::vector<double> g = lf::randn({n}, d).to_vector<double>();
    EXPECT_NEAR(mean_of(g), 0.0, 0.01) << lf::dtype_name(d);
    EXPECT_NEAR(std_of(g), 1.0, 0.01) << lf::dtype_name(d);
    // About 68.3% within one standard deviation.
    int within = 0;
    for (double x : g) within += std::fabs(x) < 1;
    EXPECT_NEAR(within / static_cast<double>(n), 0.6827, 0.01) << lf::dtype_name(d);
    for (double x : g) ASSERT_TRUE(std::isfinite(x));
  }
}

TEST(CreationRandom, Errors) {
  expect_error([] { lf::rand({2}, lf::DType::Int32); }, {"rand", "int32"});
  expect_error([] { lf::rand({2}, lf::DType::Int64); }, {"rand", "int64"});
  expect_error([] { lf::randn({2}, lf::DType::Bool); }, {"randn", "bool"});
  expect_error([] { lf::rand({-2}); }, {"rand", "negative"});
  EXPECT_EQ(lf::rand({0, 5}).numel(), 0);
}

TEST(CreationItem, Values) {
  EXPECT_EQ(lf::from_vector(std::vector<float>{2.75f}, {1, 1}).item<float>(), 2.75f);
  EXPECT_EQ(lf::from_vector(std::vector<float>{2.75f}, {1}).item<int64_t>(), 2);
  EXPECT_EQ(lf::from_vector(std::vector<int32_t>{-3}, {1}).item<double>(), -3.0);
  EXPECT_EQ(lf::from_vector(std::vector<float>{0.5f}, {1}).item<bool>(), true);
  expect_error([] { lf::from_vector(std::vector<float>{1, 2}, {2}).item<float>(); }, {"item", "2", "float32[2]"});
  expect_error([] { lf::zeros({0}).item<float>(); }, {"item", "0"});
  expect_error([] { lf::Tensor().item<float>(); }, {"empty"});
}

TEST(CreationTo, DType) {
  lf::Tensor x = lf::from_vector(std::vector<float>{1.7f, -1.7f, 0.0f, 3.0f}, {4});
  lf::Tensor i = x.to(lf::DType::Int32);
  EXPECT_EQ(i.dtype(), lf::DType::Int32);
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{1, -1, 0, 3}));  // truncation toward 0
  lf::Tensor b = x.to(lf::DType::Bool);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, true, false, true}));
  lf::Tensor d = x.to(lf::DType::Float64);
  EXPECT_EQ(d.dtype(), lf::DType::Float64);
  EXPECT_EQ(d.to_vector<double>()[0], static_cast<double>(1.7f));
  lf::Tensor back = lf::from_vector(std::vector<int64_t>{5, -2}, {2}).to(lf::DType::Float32);
  EXPECT_EQ(back.to_vector<float>(), (std::vector<float>{5, -2}));
  EXPECT_EQ(x.to(lf::DType::Float32).to_vector<float>(), x.to_vector<float>());
  lf::Tensor h = lf::from_vector(std::vector<float>{1.0f / 3}, {1}).to(lf::DType::Float16);
  EXPECT_EQ(h.dtype(), lf::DType::Float16);
  EXPECT_NEAR(h.item<float>(), 1.0 / 3, 1e-3);
  EXPECT_NE(h.item<float>(), 1.0f / 3);  // rounded to 11 bits
}

}  // namespace
