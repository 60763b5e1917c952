// Creation ops of issue 23: *_like, eye, linspace, logspace, randint, bernoulli, dropout, normal.
// Values against PyTorch's definitions, the reference executor (fused and unfused), and the
// counter-based property: the same numbers fused or unfused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "frontend/breadth_util.h"

namespace {

using lf::DType;
using lf::Shape;
using lf::Tensor;
using lf::test::error_of;
using lf::test::expect_matches_reference;

TEST(CreationMore, LikeOpsTakeShapeDtypeAndDevice) {
  Tensor x = lf::ones({2, 3}, DType::Int32);
  EXPECT_EQ(lf::zeros_like(x).dtype(), DType::Int32);
  EXPECT_EQ(lf::ones_like(x, DType::Float64).to_vector<double>(), std::vector<double>(6, 1.0));
  EXPECT_EQ(lf::full_like(x, 7).to_vector<int32_t>(), std::vector<int32_t>(6, 7));
  EXPECT_EQ(lf::empty_like(x).shape(), (Shape{2, 3}));
  EXPECT_EQ(lf::rand_like(x, DType::Float32).shape(), (Shape{2, 3}));
  EXPECT_NE(error_of([&] { (void)lf::rand_like(x); }).find("rand_like"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)lf::full_like(x, 1e300); }).find("full_like"), std::string::npos);
}

TEST(CreationMore, EyeLinspaceLogspace) {
  EXPECT_EQ(lf::eye(2, 3).to_vector<float>(), (std::vector<float>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(lf::eye(0).shape(), (Shape{0, 0}));
  EXPECT_EQ(lf::eye(3, DType::Bool).to_vector<bool>()[4], true);
  EXPECT_EQ(lf::linspace(0, 1, 5).to_vector<float>(), (std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1}));
  EXPECT_EQ(lf::linspace(3, 3, 1).to_vector<float>(), (std::vector<float>{3}));
  EXPECT_EQ(lf::linspace(0, 1, 0).numel(), 0);
  EXPECT_EQ(lf::linspace(-1, 10, 4, DType::Int64).to_vector<int64_t>(), (std::vector<int64_t>{-1, 2, 6, 10}));
  std::vector<double> l = lf::linspace(-0.3, 1.7, 1001, DType::Float64).to_vector<double>();
  EXPECT_EQ(l.front(), -0.3);
  EXPECT_EQ(l.back(), 1.7);  // exact at both ends, as PyTorch's two-sided formula
  EXPECT_NEAR(l[500], 0.7, 1e-15);
  std::vector<double> g = lf::logspace(0, 3, 4, 10, DType::Float64).to_vector<double>();
  EXPECT_EQ(g, (std::vector<double>{1, 10, 100, 1000}));
  EXPECT_EQ(lf::logspace(0, 4, 3, 2).to_vector<float>(), (std::vector<float>{1, 4, 16}));
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::Int32}) {
    expect_matches_reference([&] { return lf::eye(70, 300, d) * 2; }, "eye");
    expect_matches_reference([&] { return lf::linspace(-5, 7, 100001, d) + 1; }, "linspace");
    expect_matches_reference([&] { return lf::logspace(-2, 2, 5001, 3, d); }, "logspace");
  }
  EXPECT_NE(error_of([] { (void)lf::linspace(0, 1, -1); }).find("linspace"), std::string::npos);
  EXPECT_NE(error_of([] { (void)lf::logspace(0, INFINITY, 3); }).find("logspace"), std::string::npos);
  EXPECT_NE(error_of([] { (void)lf::eye(-1); }).find("eye"), std::string::npos);
}

// A random op's values read fused, and read again with fusion off after re-seeding: the same draws.
// The arithmetic after a draw may round differently once fused (a GPU kernel contracts a multiply
// and an add into one rounding), so floats compare to a few units in the last place; a different
// draw would differ by far more.
void expect_same_fused_and_unfused(const std::function<Tensor()>& make, const std::string& what) {
  std::vector<double> fused, unfused;
  {
    lf::test::FusionScope on(true);
    lf::manual_seed(1234);
    fused = make().to_vector<double>();
  }
  {
    lf::test::FusionScope off(false);
    lf::manual_seed(1234);
    unfused = make().to_vector<double>();
  }
  ASSERT_EQ(fused.size(), unfused.size()) << what;
  for (size_t i = 0; i < fused.size(); ++i) {
    if (std::isnan(fused[i]) && std::isnan(unfused[i])) continue;
    ASSERT_NEAR(fused[i], unfused[i], 1e-6 * std::max(1.0, std::abs(unfused[i]))) << what << " element " << i;
  }
}

TEST(CreationMore, RandomOpsStatisticsAndCounterBased) {
  lf::manual_seed(7);
  const int64_t n = 1 << 18;  // many GPU blocks
  Tensor r = lf::randint(-3, 5, {n});
  EXPECT_EQ(r.dtype(), DType::Int64);
  EXPECT_EQ(lf::min(r).item<int64_t>(), -3);
  EXPECT_EQ(lf::max(r).item<int64_t>(), 4);
  EXPECT_NEAR(lf::mean(lf::cast(r, DType::Float64)).item<double>(), 0.5, 0.05);
  Tensor p = lf::full({n}, 0.25);
  EXPECT_NEAR(lf::mean(lf::bernoulli(p)).item<double>(), 0.25, 0.01);
  EXPECT_NEAR(lf::mean(lf::bernoulli(lf::ones({n}), 0.75)).item<double>(), 0.75, 0.01);
  Tensor x = lf::ones({n});
  Tensor dr = lf::dropout(x, 0.2);
  EXPECT_NEAR(lf::mean(dr).item<double>(), 1.0, 0.02);
  EXPECT_NEAR(lf::mean(lf::cast(dr == 0, DType::Float32)).item<double>(), 0.2, 0.01);
  EXPECT_NEAR(lf::max(dr).item<double>(), 1.25, 1e-6);
  EXPECT_EQ(lf::dropout(x, 0.2, false).to_vector<float>(), x.to_vector<float>());
  EXPECT_EQ(lf::sum(lf::dropout(x, 1.0)).item<float>(), 0);
  Tensor z = lf::normal(2.0, 3.0, {n});
  EXPECT_NEAR(lf::mean(z).item<double>(), 2.0, 0.05);
  EXPECT_NEAR(lf::std(z).item<double>(), 3.0, 0.05);
  Tensor zt = lf::normal(lf::full({n}, -1.0), lf::full({1}, 0.5));
  EXPECT_NEAR(lf::std(zt).item<double>(), 0.5, 0.01);

  expect_same_fused_and_unfused([] { return lf::randint(0, 1000, {3000}) * 2; }, "randint");
  expect_same_fused_and_unfused([] { return lf::bernoulli(lf::linspace(0, 1, 3000)) + 1; }, "bernoulli");
  expect_same_fused_and_unfused([] { return lf::dropout(lf::linspace(-1, 1, 3000), 0.3) * 3; }, "dropout");
  expect_same_fused_and_unfused([] { return lf::normal(lf::linspace(0, 1, 3000), 0.5) - 1; }, "normal");
  expect_same_fused_and_unfused([] { return lf::rand_like(lf::eye(50)) + lf::randn_like(lf::eye(50)); }, "like");
  for (DType d : {DType::Float32, DType::Float16, DType::Float64}) {
    expect_matches_reference([&] { return lf::dropout(lf::linspace(-1, 1, 70000, d), 0.5); }, "dropout ref");
    expect_matches_reference([&] { return lf::normal(lf::zeros({300, 257}, d), 2.0); }, "normal ref");
  }

  EXPECT_NE(error_of([] { (void)lf::randint(3, 3, {2}); }).find("randint"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)lf::dropout(x, 1.5); }).find("dropout"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)lf::dropout(lf::ones({2}, DType::Int32), 0.5); }).find("dropout"), std::string::npos);
  EXPECT_NE(error_of([&] { (void)lf::bernoulli(x, -0.1); }).find("bernoulli"), std::string::npos);
  EXPECT_NE(error_of([] { (void)lf::normal(0.0, -1.0, {2}); }).find("normal"), std::string::npos);
  EXPECT_NE(error_of([] { (void)lf::normal(lf::ones({2}), lf::ones({3})); }).find("normal: cannot broadcast"),
            std::string::npos);
}

}  // namespace

// PyTorch's rule: low and high - 1 must be values of the dtype (hostile input issue, item 2: an
// int32 range past 2^31 gave INT32_MAX, a float16 one past 65504 gave inf).
TEST(CreationMore, RandintRangeMustFitTheDtype) {
  EXPECT_NE(error_of([] { lf::randint(0, int64_t{1} << 40, {4}, DType::Int32); }).find("lf::randint: the range [0, 1099511627776) does not fit int32"), std::string::npos);
  EXPECT_NE(error_of([] { lf::randint(0, 1 << 20, {4}, DType::Float16); }).find("float16 (its values run from -2048 to 2048)"), std::string::npos);
  EXPECT_NE(error_of([] { lf::randint(-300, 0, {4}, DType::BFloat16); }).find("does not fit bfloat16"), std::string::npos);
  EXPECT_EQ(lf::max(lf::randint(0, 2049, {4096}, DType::Float16)).item<double>() <= 2048, true);
  EXPECT_EQ(lf::randint(INT32_MIN, int64_t{INT32_MAX} + 1, {8}, DType::Int32).dtype(), DType::Int32);
}
