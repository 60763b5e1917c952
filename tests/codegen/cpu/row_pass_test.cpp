// Row kernels' output pass on the CPU (codegen/cpu/llvm/emit.cpp, llvm_row_plan.cpp): an element value
// kept from a reduction pass in an output instead of computed again (softmax's e^(x - max)), and
// divisions by a row value through one reciprocal per row and a remainder step (softmax's e / sum).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <random>
#include <vector>

#include "codegen/test_util.h"

namespace {

using lf::DType;
using lf::Tensor;

// Floats in the order of their values (-0 just below +0): the difference counts ulps between them.
template <class T>
int64_t ordered(T f) {
  using I = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  I i = std::bit_cast<I>(f);
  return i < 0 ? -static_cast<int64_t>(i & std::numeric_limits<I>::max()) - 1 : i;
}

// A float of random sign, exponent and mantissa over the whole range, subnormals included.
float any_float(std::mt19937& rng) {
  uint32_t sign = rng() & 1u, exp = rng() % 255u, mant = rng() & 0x7fffffu;
  return std::bit_cast<float>(sign << 31 | exp << 23 | mant);
}
double any_double(std::mt19937_64& rng) {
  uint64_t sign = rng() & 1u, exp = rng() % 2047u, mant = rng() & 0xfffffffffffffull;
  return std::bit_cast<double>(sign << 63 | exp << 52 | mant);
}

// x / sum(w) per row, where each row of w holds one value (so the sum is that value exactly):
// the fused kernel against the host's division of each element.
template <class T>
void check_row_division(const std::vector<T>& x, const std::vector<T>& divisors, int64_t cols) {
  int64_t rows = static_cast<int64_t>(divisors.size());
  std::vector<T> w(x.size(), T(0));
  for (int64_t r = 0; r < rows; ++r) w[static_cast<size_t>(r * cols + r % cols)] = divisors[static_cast<size_t>(r)];
  Tensor xt = lf::from_vector(x, {rows, cols}), wt = lf::from_vector(w, {rows, cols});
  lf::sync();
  lf::test::StatsDelta stats;
  Tensor s = lf::sum(wt, {1}, true);
  Tensor y = xt / s;
  lf::sync();
  EXPECT_EQ(stats.launched(), 1u) << "sum and division are one row kernel";
  std::vector<T> sv = s.template to_vector<T>(), got = y.template to_vector<T>();
  int reported = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      T a = x[static_cast<size_t>(r * cols + c)], d = sv[static_cast<size_t>(r)], want = a / d;
      T g = got[static_cast<size_t>(r * cols + c)];
      bool ok;
      if (std::isnan(want) || std::isinf(want) || want == T(0) || std::isnan(g)) {
        ok = ordered(g) == ordered(want) || (std::isnan(want) && std::isnan(g));
      } else if (std::fabs(want) >= std::numeric_limits<T>::min()) {
        ok = g == want;  // correctly rounded
      } else {
        ok = std::llabs(ordered(g) - ordered(want)) <= 1;  // a subnormal quotient, rounded twice
      }
      if (!ok && reported++ < 5) {
        ADD_FAILURE() << std::hexfloat << a << " / " << d << ": fused " << g << ", division " << want;
      }
    }
  }
}

TEST(RowDivision, MatchesTheDivisionOverTheWholeFloatRange) {
  std::mt19937 rng(11);
  const int64_t rows = 600, cols = 512;
  std::vector<float> divisors(rows);
  const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1.fffffep-65f, 0x1.000002p64f, 0x1p-140f, 3e38f, -1e-31f};
  for (int64_t r = 0; r < rows; ++r) {
    if (r < 10) {
      divisors[r] = specials[r];  // outside the fast path's range: the plain division
    } else {
      // In the fast range [2^-64, 2^64], either sign, every mantissa.
      float m = 1.0f + static_cast<float>(rng() & 0x7fffffu) * 0x1p-23f;
      divisors[r] = std::ldexp(m, static_cast<int>(rng() % 129) - 64) * ((rng() & 1) ? -1.0f : 1.0f);
    }
  }
  divisors[10] = 1.0f;
  divisors[11] = 0x1.fffffep+0f;  // mantissa all ones
  divisors[12] = 3.0f;
  divisors[13] = 0x1p-64f;
  divisors[14] = 0x1p64f;
  std::vector<float> x(static_cast<size_t>(rows * cols));
  for (float& v : x) v = any_float(rng);
  const float edge[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, std::numeric_limits<float>::max(),
                        -std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
                        std::numeric_limits<float>::denorm_min(), 0x1p-100f, 0x1.fffffep-101f, 1.0f};
  for (int64_t r = 0; r < rows; ++r)
    for (size_t e = 0; e < std::size(edge); ++e) x[static_cast<size_t>(r * cols) + e * 7] = edge[e];
  check_row_division(x, divisors, cols);
}

TEST(RowDivision, MatchesTheDivisionInFloat64) {
  std::mt19937_64 rng(13);
  const int64_t rows = 300, cols = 256;
  std::vector<double> divisors(rows);
  for (int64_t r = 0; r < rows; ++r) {
    double m = 1.0 + static_cast<double>(rng() & 0xfffffffffffffull) * 0x1p-52;
    divisors[static_cast<size_t>(r)] = std::ldexp(m, static_cast<int>(rng() % 1201) - 600) * ((rng() & 1) ? -1.0 : 1.0);
  }
  const double outside[] = {0.0, INFINITY, NAN, 0x1p-601, 0x1.0000000000001p600, 0x1p-1060};
  for (size_t i = 0; i < std::size(outside); ++i) divisors[i] = outside[i];
  std::vector<double> x(static_cast<size_t>(rows * cols));
  for (double& v : x) v = any_double(rng);
  check_row_division(x, divisors, cols);
}

// Quotients at the overflow threshold: inf exactly where the division overflows.
TEST(RowDivision, OverflowsExactlyWhereTheDivisionDoes) {
  const int64_t cols = 256;
  std::vector<float> divisors = {0.75f, 0x1.fffffep-1f, 0.5f, 0x1.000002p-1f, -0.75f};
  std::vector<float> x;
  for (float d : divisors) {
    float edge = std::numeric_limits<float>::max() * std::fabs(d);  // near a / d = FLT_MAX
    float v = edge;
    for (int i = 0; i < 64; ++i) v = std::nextafter(v, 0.0f);
    for (int64_t c = 0; c < cols; ++c) {
      x.push_back(c % 2 ? -v : v);
      if (c % 2) v = std::nextafter(v, INFINITY);
    }
  }
  check_row_division(x, divisors, cols);
}

// softmax keeps e^(x - max) in its output between the sum and the division; special rows
// (infinities, NaN, a huge spread whose exps are subnormal or 0) and 16-bit dtypes.
TEST(RowPass, SoftmaxMatchesReference) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  const int64_t rows = 12, cols = 300;
  std::vector<float> x(static_cast<size_t>(rows * cols));
  for (float& v : x) v = normal(rng);
  auto row = [&](int64_t r) { return x.begin() + r * cols; };
  row(1)[5] = INFINITY;
  row(2)[7] = -INFINITY;
  std::fill(row(3), row(4), -INFINITY);
  row(4)[0] = NAN;
  for (int64_t c = 0; c < cols; ++c) row(5)[c] = -0.7f * static_cast<float>(c);  // spread 210: subnormal exps
  row(6)[9] = 80.0f;
  std::fill(row(7), row(8), 0.0f);
  for (DType dt : {DType::Float32, DType::Float16, DType::BFloat16}) {
    Tensor xt = lf::from_vector(x, {rows, cols}).to(dt);
    lf::sync();
    Tensor y = lf::softmax(xt, -1);
    auto ref = lf::test::reference_values(y);
    EXPECT_EQ(lf::test::compare(ref, lf::test::fused_values(y), lf::test::default_tolerance(dt, cols)), "")
        << lf::dtype_name(dt);
  }
}

// The kept value is an output of its own too (both stored), and a kernel with two divisions by
// the same row value.
TEST(RowPass, KeptValueThatIsAlsoAnOutput) {
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> x(64 * 100);
  for (float& v : x) v = normal(rng);
  Tensor xt = lf::from_vector(x, {64, 100});
  lf::sync();
  Tensor e = lf::exp(xt - lf::max(xt, {1}, true));
  Tensor s = lf::sum(e, {1}, true);
  Tensor y = e / s;
  Tensor z = (xt * e) / s;
  auto re = lf::test::reference_values(e), ry = lf::test::reference_values(y), rz = lf::test::reference_values(z);
  lf::test::StatsDelta stats;
  lf::sync();
  EXPECT_EQ(stats.launched(), 1u);
  auto tol = lf::test::default_tolerance(DType::Float32, 100);
  EXPECT_EQ(lf::test::compare(re, lf::test::fused_values(e), tol), "");
  EXPECT_EQ(lf::test::compare(ry, lf::test::fused_values(y), tol), "");
  EXPECT_EQ(lf::test::compare(rz, lf::test::fused_values(z), tol), "");
}

}  // namespace
