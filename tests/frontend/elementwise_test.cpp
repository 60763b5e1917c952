// Elementwise ops against values computed independently here (in double, with <cmath>), for every
// dtype where the op is defined, with NaN/inf inputs, broadcasting, size-0 dims and strided views.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "codegen/ir/node.h"
#include "runtime/config.h"

namespace {

using lf::DType;
using lf::Tensor;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

const DType kFloatDTypes[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16};

// Tensor of `dtype` holding `values` (which the tests pick exactly representable in every dtype).
Tensor make(const std::vector<double>& values, lf::Shape shape, DType dtype) {
  return lf::from_vector(values, std::move(shape)).to(dtype);
}

// Tolerance relative to max(|want|, 1): the result is rounded to its dtype (half an ulp) and computed
// in float (a few float ulps, more where a formula cancels, as in gelu of negative numbers).
double tolerance(DType d) {
  switch (d) {
    case DType::Float64: return 1e-12;
    case DType::Float32: return 4e-6;
    case DType::Float16: return 1.0 / 1024;
    case DType::BFloat16: return 1.0 / 128;
    default: return 0;
  }
}

// NaN must match NaN, inf must match inf of the same sign, the rest within `tol`.
void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol,
                  const std::vector<double>& inputs = {}) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    std::string where = "element " + std::to_string(i);
    if (i < inputs.size()) where += " (input " + std::to_string(inputs[i]) + ")";
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << where << ": got " << got[i] << ", want NaN";
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << where;
    } else {
      EXPECT_NEAR(got[i], want[i], tol * std::max(1.0, std::fabs(want[i]))) << where;
    }
  }
}

std::vector<double> map(const std::vector<double>& v, const std::function<double(double)>& f) {
  std::vector<double> out;
  for (double x : v) out.push_back(f(x));
  return out;
}

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Round half to even, written without nearbyint so it does not share the library's definition.
double round_half_even_ref(double x) {
  if (!std::isfinite(x)) return x;
  double r = std::floor(x);
  double frac = x - r;
  if (frac > 0.5 || (frac == 0.5 && std::fmod(r, 2.0) != 0)) r += 1;
  return r;
}

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::function<double(double)> ref;
  bool skip_nan = false;  // the result for a NaN input is a library choice, not checked here
};

std::vector<UnaryCase> unary_cases() {
  return {
      {"abs", [](const Tensor& x) { return lf::abs(x); }, [](double x) { return std::fabs(x); }},
      {"neg", [](const Tensor& x) { return lf::neg(x); }, [](double x) { return -x; }},
      {"unary minus", [](const Tensor& x) { return -x; }, [](double x) { return -x; }},
      {"exp", [](const Tensor& x) { return lf::exp(x); }, [](double x) { return std::exp(x); }},
      {"exp2", [](const Tensor& x) { return lf::exp2(x); }, [](double x) { return std::pow(2.0, x); }},
      {"log", [](const Tensor& x) { return lf::log(x); }, [](double x) { return std::log(x); }},
      {"log2", [](const Tensor& x) { return lf::log2(x); }, [](double x) { return std::log(x) / std::log(2.0); }},
      {"log1p", [](const Tensor& x) { return lf::log1p(x); }, [](double x) { return std::log1p(x); }},
      {"expm1", [](const Tensor& x) { return lf::expm1(x); }, [](double x) { return std::expm1(x); }},
      {"sqrt", [](const Tensor& x) { return lf::sqrt(x); }, [](double x) { return std::sqrt(x); }},
      {"rsqrt", [](const Tensor& x) { return lf::rsqrt(x); }, [](double x) { return 1.0 / std::sqrt(x); }},
      {"sin", [](const Tensor& x) { return lf::sin(x); }, [](double x) { return std::sin(x); }},
      {"cos", [](const Tensor& x) { return lf::cos(x); }, [](double x) { return std::cos(x); }},
      {"tan", [](const Tensor& x) { return lf::tan(x); }, [](double x) { return std::tan(x); }},
      {"asin", [](const Tensor& x) { return lf::asin(x); }, [](double x) { return std::asin(x); }},
      {"acos", [](const Tensor& x) { return lf::acos(x); }, [](double x) { return std::acos(x); }},
      {"atan", [](const Tensor& x) { return lf::atan(x); }, [](double x) { return std::atan(x); }},
      {"sinh", [](const Tensor& x) { return lf::sinh(x); }, [](double x) { return std::sinh(x); }},
      {"cosh", [](const Tensor& x) { return lf::cosh(x); }, [](double x) { return std::cosh(x); }},
      {"tanh", [](const Tensor& x) { return lf::tanh(x); }, [](double x) { return std::tanh(x); }},
      {"sigmoid", [](const Tensor& x) { return lf::sigmoid(x); }, sigmoid_ref},
      {"relu", [](const Tensor& x) { return lf::relu(x); },
       [](double x) { return std::isnan(x) ? x : (x > 0 ? x : 0.0); }},
      {"gelu", [](const Tensor& x) { return lf::gelu(x); },
       [](double x) { return x * 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))); }},
      {"gelu tanh", [](const Tensor& x) { return lf::gelu(x, /*tanh_approx=*/true); },
       [](double x) {
         return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * std::pow(x, 3))));
       }},
      {"silu", [](const Tensor& x) { return lf::silu(x); }, [](double x) { return x * sigmoid_ref(x); }},
      {"hardswish", [](const Tensor& x) { return lf::hardswish(x); },
       [](double x) { return std::isnan(x) ? x : x * std::clamp(x + 3.0, 0.0, 6.0) / 6.0; }},
      {"logit", [](const Tensor& x) { return lf::logit(x); }, [](double x) { return std::log(x / (1.0 - x)); }},
      {"erf", [](const Tensor& x) { return lf::erf(x); }, [](double x) { return std::erf(x); }},
      {"floor", [](const Tensor& x) { return lf::floor(x); }, [](double x) { return std::floor(x); }},
      {"ceil", [](const Tensor& x) { return lf::ceil(x); }, [](double x) { return std::ceil(x); }},
      {"round", [](const Tensor& x) { return lf::round(x); }, round_half_even_ref},
      {"sign", [](const Tensor& x) { return lf::sign(x); },
       [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }, /*skip_nan=*/true},
      {"reciprocal", [](const Tensor& x) { return lf::reciprocal(x); }, [](double x) { return 1.0 / x; }},
      {"square", [](const Tensor& x) { return lf::square(x); }, [](double x) { return x * x; }},
  };
}

// Exactly representable in float16 and bfloat16; results of every op stay in float16's range.
const std::vector<double> kUnaryInputs = {-kInf, -10, -3.5, -2.5, -1, -0.5, -0.0, 0,   0.25,
                                          0.5,   1,   1.5,  2.5,  3,  10,   kInf, kNaN, -0.75};

TEST(ElementwiseUnary, EveryFloatDTypeMatchesDoubleReference) {
  for (const UnaryCase& c : unary_cases()) {
    for (DType d : kFloatDTypes) {
      SCOPED_TRACE(std::string(c.name) + " " + lf::dtype_name(d));
      std::vector<double> in;
      for (double v : kUnaryInputs)
        if (!(c.skip_nan && std::isnan(v))) in.push_back(v);
      Tensor x = make(in, {static_cast<int64_t>(in.size())}, d);
      ASSERT_EQ(x.to_vector<double>().size(), in.size());
      Tensor y = c.op(x);
      EXPECT_EQ(y.dtype(), d);
      EXPECT_EQ(y.shape(), x.shape());
      expect_close(y.to_vector<double>(), map(in, c.ref), tolerance(d), in);
    }
  }
}

TEST(ElementwiseUnary, FloatFunctionsOfIntegersComputeInFloat32) {
  const std::vector<int32_t> ints = {-3, -1, 0, 1, 2, 7};
  std::vector<double> as_double(ints.begin(), ints.end());
  for (DType d : {DType::Int32, DType::Int64}) {
    Tensor x = lf::from_vector(ints, {2, 3}).to(d);
    for (const UnaryCase& c : unary_cases()) {
      std::string name = c.name;
      // The ops that keep integers integral are tested below.
      if (name == "abs" || name == "neg" || name == "unary minus" || name == "relu" || name == "sign" ||
          name == "square" || name == "floor" || name == "ceil" || name == "round")
        continue;
      SCOPED_TRACE(name + " of " + lf::dtype_name(d));
      Tensor y = c.op(x);
      EXPECT_EQ(y.dtype(), DType::Float32);
      EXPECT_EQ(y.shape(), (lf::Shape{2, 3}));
      expect_close(y.to_vector<double>(), map(as_double, c.ref), tolerance(DType::Float32), as_double);
    }
  }
}

TEST(ElementwiseUnary, IntegerOpsStayIntegralAndWrap) {
  const int32_t kMin32 = std::numeric_limits<int32_t>::min();
  Tensor x = lf::from_vector(std::vector<int32_t>{-7, -1, 0, 3, kMin32}, {5});
  EXPECT_EQ(lf::abs(x).dtype(), DType::Int32);
  EXPECT_EQ(lf::abs(x).to_vector<int32_t>(), (std::vector<int32_t>{7, 1, 0, 3, kMin32}));  // wraps like PyTorch
  EXPECT_EQ((-x).to_vector<int32_t>(), (std::vector<int32_t>{7, 1, 0, -3, kMin32}));
  EXPECT_EQ(lf::relu(x).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0, 3, 0}));
  EXPECT_EQ(lf::sign(x).to_vector<int32_t>(), (std::vector<int32_t>{-1, -1, 0, 1, -1}));
  EXPECT_EQ(lf::square(x).to_vector<int32_t>(), (std::vector<int32_t>{49, 1, 0, 9, 0}));  // (-2^31)^2 wraps to 0
  for (auto f : {&lf::floor, &lf::ceil, &lf::round}) {
    Tensor y = f(x);
    EXPECT_EQ(y.dtype(), DType::Int32);
    EXPECT_EQ(y.to_vector<int32_t>(), x.to_vector<int32_t>());
  }

  const int64_t big = (int64_t{1} << 53) + 1;  // not representable in double
  Tensor z = lf::from_vector(std::vector<int64_t>{-big, big, std::numeric_limits<int64_t>::max()}, {3});
  EXPECT_EQ(lf::abs(z).to_vector<int64_t>(), (std::vector<int64_t>{big, big, std::numeric_limits<int64_t>::max()}));
  EXPECT_EQ((-z).to_vector<int64_t>(), (std::vector<int64_t>{big, -big, -std::numeric_limits<int64_t>::max()}));
  EXPECT_EQ(lf::sign(z).to_vector<int64_t>(), (std::vector<int64_t>{-1, 1, 1}));
  EXPECT_EQ(lf::relu(z).to_vector<int64_t>(), (std::vector<int64_t>{0, big, std::numeric_limits<int64_t>::max()}));
}

TEST(ElementwiseUnary, RoundIsHalfToEven) {
  std::vector<double> in = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, -3.5, 2.4999, 2.5001, -0.4};
  std::vector<double> want = {-2, -2, 0, 0, 2, 2, 4, -4, 2, 3, 0};  // by hand
  for (DType d : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(lf::dtype_name(d));
    EXPECT_EQ(lf::round(make(in, {11}, d)).to_vector<double>(), want);
  }
}

TEST(ElementwiseUnary, AccurateNearZero) {
  // The naive formulas lose everything here: log(1 + 1e-10) and exp(1e-10) - 1 in double.
  Tensor x = lf::from_vector(std::vector<double>{1e-10, -1e-12}, {2});
  expect_close(lf::log1p(x).to_vector<double>(), {std::log1p(1e-10), std::log1p(-1e-12)}, 1e-14);
  std::vector<double> e = lf::expm1(x).to_vector<double>();
  EXPECT_NEAR(e[0] / 1e-10, 1.0, 1e-9);
  EXPECT_NEAR(e[1] / -1e-12, 1.0, 1e-9);
}

TEST(ElementwiseUnary, Predicates) {
  std::vector<double> in = {0, -kInf, kInf, kNaN, 1.5, -0.0};
  for (DType d : kFloatDTypes) {
    SCOPED_TRACE(lf::dtype_name(d));
    Tensor x = make(in, {2, 3}, d);
    EXPECT_EQ(lf::isnan(x).dtype(), DType::Bool);
    EXPECT_EQ(lf::isnan(x).shape(), (lf::Shape{2, 3}));
    EXPECT_EQ(lf::isnan(x).to_vector<bool>(), (std::vector<bool>{false, false, false, true, false, false}));
    EXPECT_EQ(lf::isinf(x).to_vector<bool>(), (std::vector<bool>{false, true, true, false, false, false}));
    EXPECT_EQ(lf::isfinite(x).to_vector<bool>(), (std::vector<bool>{true, false, false, false, true, true}));
  }
  for (DType d : {DType::Int32, DType::Int64, DType::Bool}) {
    SCOPED_TRACE(lf::dtype_name(d));
    Tensor x = lf::from_vector(std::vector<int32_t>{0, 1, -5}, {3}).to(d);
    EXPECT_EQ(lf::isnan(x).dtype(), DType::Bool);
    EXPECT_EQ(lf::isnan(x).to_vector<bool>(), (std::vector<bool>{false, false, false}));
    EXPECT_EQ(lf::isinf(x).to_vector<bool>(), (std::vector<bool>{false, false, false}));
    EXPECT_EQ(lf::isfinite(x).to_vector<bool>(), (std::vector<bool>{true, true, true}));
  }
}

TEST(ElementwiseUnary, LogicalNot) {
  Tensor b = lf::from_vector(std::vector<bool>{true, false, true}, {3});
  Tensor n = !b;
  EXPECT_EQ(n.dtype(), DType::Bool);
  EXPECT_EQ(n.to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ((!(!b)).to_vector<bool>(), b.to_vector<bool>());
}

// ---- binary ops

struct BinaryCase {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  std::function<double(double, double)> ref;
};

double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b); }
double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNaN : std::min(a, b); }

std::vector<BinaryCase> binary_cases() {
  return {
      {"add", [](const Tensor& a, const Tensor& b) { return a + b; }, [](double a, double b) { return a + b; }},
      {"sub", [](const Tensor& a, const Tensor& b) { return a - b; }, [](double a, double b) { return a - b; }},
      {"mul", [](const Tensor& a, const Tensor& b) { return a * b; }, [](double a, double b) { return a * b; }},
      {"div", [](const Tensor& a, const Tensor& b) { return a / b; }, [](double a, double b) { return a / b; }},
      {"pow", [](const Tensor& a, const Tensor& b) { return lf::pow(a, b); },
       [](double a, double b) { return std::pow(a, b); }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return lf::maximum(a, b); }, nan_max},
      {"minimum", [](const Tensor& a, const Tensor& b) { return lf::minimum(a, b); }, nan_min},
      {"atan2", [](const Tensor& a, const Tensor& b) { return lf::atan2(a, b); },
       [](double a, double b) { return std::atan2(a, b); }},
  };
}

const std::vector<double> kLhs = {-kInf, -3.5, -1, -0.5, 0, 0.5, 1, 2, 3, kInf, kNaN, 2, 0, -0.0, 1.5, kInf, -2, 5};
const std::vector<double> kRhs = {2, 1.5, 0, -2, 0, 0.25, kNaN, 3, -1, kInf, 1, kNaN, -0.0, 3, 10, -kInf, 3, -0.5};

TEST(ElementwiseBinary, EveryFloatDTypeMatchesDoubleReference) {
  std::vector<double> want;
  for (const BinaryCase& c : binary_cases()) {
    for (DType d : kFloatDTypes) {
      SCOPED_TRACE(std::string(c.name) + " " + lf::dtype_name(d));
      Tensor a = make(kLhs, {3, 6}, d), b = make(kRhs, {3, 6}, d);
      Tensor y = c.op(a, b);
      EXPECT_EQ(y.dtype(), d);
      want.clear();
      for (size_t i = 0; i < kLhs.size(); ++i) want.push_back(c.ref(kLhs[i], kRhs[i]));
      expect_close(y.to_vector<double>(), want, tolerance(d), kLhs);
    }
  }
}

TEST(ElementwiseBinary, Comparisons) {
  struct Cmp {
    const char* name;
    std::function<Tensor(const Tensor&, const Tensor&)> op;
    std::function<Tensor(const Tensor&, double)> op_scalar;
    std::function<bool(double, double)> ref;
  };
  std::vector<Cmp> cmps = {
      {"==", [](auto& a, auto& b) { return a == b; }, [](auto& a, double s) { return a == s; },
       [](double a, double b) { return a == b; }},
      {"!=", [](auto& a, auto& b) { return a != b; }, [](auto& a, double s) { return a != s; },
       [](double a, double b) { return a != b; }},
      {"<", [](auto& a, auto& b) { return a < b; }, [](auto& a, double s) { return a < s; },
       [](double a, double b) { return a < b; }},
      {"<=", [](auto& a, auto& b) { return a <= b; }, [](auto& a, double s) { return a <= s; },
       [](double a, double b) { return a <= b; }},
      {">", [](auto& a, auto& b) { return a > b; }, [](auto& a, double s) { return a > s; },
       [](double a, double b) { return a > b; }},
      {">=", [](auto& a, auto& b) { return a >= b; }, [](auto& a, double s) { return a >= s; },
       [](double a, double b) { return a >= b; }},
  };
  for (const Cmp& c : cmps) {
    for (DType d : kFloatDTypes) {
      SCOPED_TRACE(std::string(c.name) + " " + lf::dtype_name(d));
      Tensor a = make(kLhs, {18}, d), b = make(kRhs, {18}, d);
      Tensor y = c.op(a, b);
      EXPECT_EQ(y.dtype(), DType::Bool);
      std::vector<bool> want, want_scalar;
      for (size_t i = 0; i < kLhs.size(); ++i) {
        want.push_back(c.ref(kLhs[i], kRhs[i]));
        want_scalar.push_back(c.ref(kLhs[i], 1.5));
      }
      EXPECT_EQ(y.to_vector<bool>(), want);
      EXPECT_EQ(c.op_scalar(a, 1.5).to_vector<bool>(), want_scalar);
    }
    SCOPED_TRACE(std::string(c.name) + " int64 beyond 2^53");
    const int64_t big = int64_t{1} << 53;
    Tensor a = lf::from_vector(std::vector<int64_t>{big + 1, big, -big - 1}, {3});
    Tensor b = lf::from_vector(std::vector<int64_t>{big, big + 1, -big}, {3});
    std::vector<bool> got = c.op(a, b).to_vector<bool>();
    // Exact integer comparison: rounding through double would make the first pair equal.
    std::vector<int64_t> av = {big + 1, big, -big - 1}, bv = {big, big + 1, -big};
    for (size_t i = 0; i < 3; ++i) {
      bool want = c.name == std::string("==")   ? av[i] == bv[i]
                  : c.name == std::string("!=") ? av[i] != bv[i]
                  : c.name == std::string("<")  ? av[i] < bv[i]
                  : c.name == std::string("<=") ? av[i] <= bv[i]
                  : c.name == std::string(">")  ? av[i] > bv[i]
                                                : av[i] >= bv[i];
      EXPECT_EQ(got[i], want) << "element " << i;
    }
  }
}

TEST(ElementwiseBinary, ScalarOperandsOnEitherSide) {
  Tensor x = lf::from_vector(std::vector<float>{1, -2, 4}, {3});
  EXPECT_EQ((x + 2).to_vector<float>(), (std::vector<float>{3, 0, 6}));
  EXPECT_EQ((2 + x).to_vector<float>(), (std::vector<float>{3, 0, 6}));
  EXPECT_EQ((x - 2).to_vector<float>(), (std::vector<float>{-1, -4, 2}));
  EXPECT_EQ((2 - x).to_vector<float>(), (std::vector<float>{1, 4, -2}));
  EXPECT_EQ((x * 0.5).to_vector<float>(), (std::vector<float>{0.5f, -1, 2}));
  EXPECT_EQ((0.5 * x).to_vector<float>(), (std::vector<float>{0.5f, -1, 2}));
  EXPECT_EQ((x / 4).to_vector<float>(), (std::vector<float>{0.25f, -0.5f, 1}));
  EXPECT_EQ((4 / x).to_vector<float>(), (std::vector<float>{4, -2, 1}));
  EXPECT_EQ((x / 0).to_vector<float>(),
            (std::vector<float>{INFINITY, -INFINITY, INFINITY}));
  EXPECT_EQ((x + kInf).to_vector<float>(), (std::vector<float>{INFINITY, INFINITY, INFINITY}));
  EXPECT_TRUE(std::isnan((x * kNaN).to_vector<float>()[1]));
  EXPECT_EQ((x > 0).to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ((x == -2).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ((x != 1.0).to_vector<bool>(), (std::vector<bool>{false, true, true}));
  EXPECT_EQ((x <= 1).to_vector<bool>(), (std::vector<bool>{true, true, false}));
}

TEST(ElementwiseBinary, HalfTensorWithNumberComputesInFloat32) {
  // Like PyTorch, a float16/bfloat16 tensor and a C++ number compute in float32 and round once:
  // the number itself is not first rounded to the 16-bit type (in float16, 1e-8 would flush to 0
  // and 1e5 would overflow to inf).
  for (DType d : {DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(lf::dtype_name(d));
    Tensor x = make({1000, 0.5, -3}, {3}, d);
    Tensor scaled = x * 1e-8;
    EXPECT_EQ(scaled.dtype(), d);
    // Results this small are float16 subnormals (spacing 6e-8).
    expect_close(scaled.to_vector<double>(), {1e-5, 0.5e-8, -3e-8}, 1e-7);
    expect_close((1e-8 * x).to_vector<double>(), {1e-5, 0.5e-8, -3e-8}, 1e-7);
    expect_close((x / 1e5).to_vector<double>(), {1e-2, 0.5e-5, -3e-5}, tolerance(d) * 1e-2);
    Tensor q = 1e5 / x;
    EXPECT_EQ(q.dtype(), d);
    if (d == DType::Float16) {
      // 2e5 overflows; -33333.3 rounds to a multiple of 32 (the float16 spacing in [2^15, 2^16)).
      expect_close(q.to_vector<double>(), {100, kInf, -33344}, 0);
    } else {
      expect_close(q.to_vector<double>(), {100, 2e5, -1e5 / 3}, tolerance(d));
    }
  }
  // float16(1.0004) is 1, but 1000 * 1.0004 = 1000.4 rounds to 1000.5 (spacing 0.5 in [512, 1024)).
  Tensor h = make({1000, 1}, {2}, DType::Float16);
  expect_close((h * 1.0004).to_vector<double>(), {1000.5, 1}, 0);
  expect_close((1.0004 * h).to_vector<double>(), {1000.5, 1}, 0);
  EXPECT_EQ((h * 1.0004).dtype(), DType::Float16);
}

TEST(ElementwiseBinary, IntegerArithmeticIsExactAndWraps) {
  const int32_t kMax = std::numeric_limits<int32_t>::max(), kMin = std::numeric_limits<int32_t>::min();
  Tensor a = lf::from_vector(std::vector<int32_t>{kMax, kMin, 7, -7, 65536}, {5});
  Tensor b = lf::from_vector(std::vector<int32_t>{1, 1, 2, 2, 65536}, {5});
  EXPECT_EQ((a + b).dtype(), DType::Int32);
  EXPECT_EQ((a + b).to_vector<int32_t>(), (std::vector<int32_t>{kMin, kMin + 1, 9, -5, 131072}));
  EXPECT_EQ((a - b).to_vector<int32_t>(), (std::vector<int32_t>{kMax - 1, kMax, 5, -9, 0}));
  EXPECT_EQ((a * b).to_vector<int32_t>(), (std::vector<int32_t>{kMax, kMin, 14, -14, 0}));  // 2^32 wraps
  EXPECT_EQ(lf::maximum(a, b).to_vector<int32_t>(), (std::vector<int32_t>{kMax, 1, 7, 2, 65536}));
  EXPECT_EQ(lf::minimum(a, b).to_vector<int32_t>(), (std::vector<int32_t>{1, kMin, 2, -7, 65536}));

  const int64_t big = (int64_t{1} << 62) + 1;
  Tensor c = lf::from_vector(std::vector<int64_t>{big, -big, 3}, {3});
  EXPECT_EQ((c + 1).to_vector<int64_t>(), (std::vector<int64_t>{big + 1, -big + 1, 4}));
  EXPECT_EQ((c * 2).to_vector<int64_t>(),
            (std::vector<int64_t>{static_cast<int64_t>(uint64_t(big) * 2), static_cast<int64_t>(uint64_t(-big) * 2), 6}));
  EXPECT_EQ((c - c).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(lf::maximum(c, c * -1).to_vector<int64_t>(), (std::vector<int64_t>{big, big, 3}));
  EXPECT_EQ((c + (int64_t{1} << 40)).to_vector<int64_t>(),
            (std::vector<int64_t>{big + (int64_t{1} << 40), -big + (int64_t{1} << 40), 3 + (int64_t{1} << 40)}));
}

TEST(ElementwiseBinary, IntegerDivisionIsTrueDivision) {
  for (DType d : {DType::Int32, DType::Int64, DType::Bool}) {
    SCOPED_TRACE(lf::dtype_name(d));
    Tensor a = lf::from_vector(std::vector<int32_t>{7, -7, 1, -1, 0, 6}, {6}).to(d);
    Tensor b = lf::from_vector(std::vector<int32_t>{2, 2, 0, 0, 0, 3}, {6}).to(d);
    Tensor q = a / b;
    EXPECT_EQ(q.dtype(), DType::Float32);
    std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>(), want;
    for (size_t i = 0; i < av.size(); ++i) want.push_back(av[i] / bv[i]);
    expect_close(q.to_vector<double>(), want, 0);
  }
  Tensor i = lf::from_vector(std::vector<int32_t>{7, -3}, {2});
  EXPECT_EQ((i / 2).dtype(), DType::Float32);
  EXPECT_EQ((i / 2).to_vector<float>(), (std::vector<float>{3.5f, -1.5f}));
  EXPECT_EQ((3 / i).to_vector<float>(), (std::vector<float>{3.0f / 7, -1.0f}));
}

TEST(ElementwiseBinary, IntegerPow) {
  Tensor base = lf::from_vector(std::vector<int32_t>{2, -3, 0, 5, 1, -1, -1, 2, 3}, {9});
  Tensor ex = lf::from_vector(std::vector<int32_t>{10, 3, 0, 0, -3, -3, -2, -1, 20}, {9});
  Tensor p = lf::pow(base, ex);
  EXPECT_EQ(p.dtype(), DType::Int32);
  // 3^20 = 3486784401 wraps to 3486784401 - 2^32.
  EXPECT_EQ(p.to_vector<int32_t>(),
            (std::vector<int32_t>{1024, -27, 1, 1, 1, -1, 1, 0, static_cast<int32_t>(3486784401LL - 4294967296LL)}));
  Tensor l = lf::from_vector(std::vector<int64_t>{3, -2, 7}, {3});
  EXPECT_EQ(lf::pow(l, 3).dtype(), DType::Int64);
  EXPECT_EQ(lf::pow(l, 3).to_vector<int64_t>(), (std::vector<int64_t>{27, -8, 343}));
  EXPECT_EQ(lf::pow(l, 39).to_vector<int64_t>()[0], 4052555153018976267LL);  // 3^39 < 2^63
  EXPECT_EQ(lf::pow(base, 2).dtype(), DType::Int32);
  EXPECT_EQ(lf::pow(base, 2).to_vector<int32_t>()[1], 9);
  Tensor half_power = lf::pow(base, 0.5);
  EXPECT_EQ(half_power.dtype(), DType::Float32);
  expect_close({half_power.to_vector<double>()[0], half_power.to_vector<double>()[3]}, {std::sqrt(2.0), std::sqrt(5.0)},
               tolerance(DType::Float32));
}

TEST(ElementwiseBinary, PowWithScalarExponent) {
  for (DType d : kFloatDTypes) {
    SCOPED_TRACE(lf::dtype_name(d));
    std::vector<double> in = {-2, -0.5, 0, 0.25, 3, kInf, kNaN};
    Tensor x = make(in, {7}, d);
    for (double e : {2.0, 0.5, -1.0, 3.0, 0.0}) {
      SCOPED_TRACE("exponent " + std::to_string(e));
      Tensor y = lf::pow(x, e);
      EXPECT_EQ(y.dtype(), d);
      expect_close(y.to_vector<double>(), map(in, [e](double v) { return std::pow(v, e); }), tolerance(d), in);
    }
  }
}

TEST(ElementwiseBinary, MaximumMinimumPropagateNaNFromEitherSide) {
  for (DType d : kFloatDTypes) {
    SCOPED_TRACE(lf::dtype_name(d));
    Tensor a = make({kNaN, 1, kNaN, -kInf, 2}, {5}, d);
    Tensor b = make({1, kNaN, kNaN, 3, kInf}, {5}, d);
    for (const Tensor& y : {lf::maximum(a, b), lf::minimum(a, b), lf::maximum(b, a), lf::minimum(b, a)}) {
      std::vector<double> v = y.to_vector<double>();
      EXPECT_TRUE(std::isnan(v[0]) && std::isnan(v[1]) && std::isnan(v[2]));
    }
    EXPECT_EQ(lf::maximum(a, b).to_vector<double>()[3], 3);
    EXPECT_EQ(lf::minimum(a, b).to_vector<double>()[3], -kInf);
    EXPECT_EQ(lf::maximum(a, b).to_vector<double>()[4], kInf);
  }
}

// A zero against NaN, over rows long enough to vectorize, in both orders: LLVM 19 lowered
// float16's llvm.maximum (what InstCombine made of maximum(fpext a, fpext b) in float32) to
// maximum(+0, NaN) = +0 on x86 (the fuzzer, seed 778462). The CPU kernels now compare and select.
TEST(ElementwiseBinary, MaximumMinimumOfZeroAndNaNInLongRows) {
  for (DType d : kFloatDTypes) {
    SCOPED_TRACE(lf::dtype_name(d));
    std::vector<double> v(100, 0.5);
    v[5] = v[40] = v[77] = kNaN;
    v[9] = -kInf;
    Tensor x = make(v, {100}, d);
    for (double z : {0.0, -0.0, 1.0, -1.0}) {
      Tensor s = lf::full({}, z, d);
      for (const Tensor& y : {lf::maximum(s, x), lf::maximum(x, s), lf::minimum(s, x), lf::minimum(x, s)}) {
        std::vector<double> r = y.to_vector<double>();
        for (size_t i : {size_t{5}, size_t{40}, size_t{77}}) EXPECT_TRUE(std::isnan(r[i])) << "zero " << z << " at " << i;
        EXPECT_FALSE(std::isnan(r[0]));
      }
      EXPECT_EQ(lf::maximum(s, x).to_vector<double>()[9], z);
      EXPECT_EQ(lf::minimum(x, s).to_vector<double>()[9], -kInf);
    }
    // Integer zero against a float row (promoted), as the fuzzer wrote it.
    Tensor iz = lf::zeros({}, DType::Int64);
    EXPECT_TRUE(std::isnan(lf::maximum(iz, x).to_vector<double>()[40]));
  }
}

TEST(ElementwiseBinary, Clamp) {
  for (DType d : kFloatDTypes) {
    SCOPED_TRACE(lf::dtype_name(d));
    Tensor x = make({-kInf, -3, -1, 0, 0.5, 2, 7, kInf, kNaN}, {9}, d);
    Tensor y = lf::clamp(x, -1, 2.5);
    EXPECT_EQ(y.dtype(), d);
    expect_close(y.to_vector<double>(), {-1, -1, -1, 0, 0.5, 2, 2.5, 2.5, kNaN}, 0);
    // lo > hi: every value becomes hi, like PyTorch (min(max(x, lo), hi)).
    expect_close(lf::clamp(x, 3, 1).to_vector<double>(), {1, 1, 1, 1, 1, 1, 1, 1, kNaN}, 0);
  }
  Tensor i = lf::from_vector(std::vector<int32_t>{-5, 0, 5}, {3});
  EXPECT_EQ(lf::clamp(i, -1, 2).dtype(), DType::Int32);
  EXPECT_EQ(lf::clamp(i, -1, 2).to_vector<int32_t>(), (std::vector<int32_t>{-1, 0, 2}));
  EXPECT_EQ(lf::clamp(i, -0.5, 2.5).dtype(), DType::Float32);
  EXPECT_EQ(lf::clamp(i, -0.5, 2.5).to_vector<float>(), (std::vector<float>{-0.5f, 0, 2.5f}));
}

TEST(ElementwiseBinary, LogicalAndOr) {
  Tensor a = lf::from_vector(std::vector<bool>{false, false, true, true}, {4});
  Tensor b = lf::from_vector(std::vector<bool>{false, true, false, true}, {4});
  EXPECT_EQ((a && b).dtype(), DType::Bool);
  EXPECT_EQ((a && b).to_vector<bool>(), (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ((a || b).to_vector<bool>(), (std::vector<bool>{false, true, true, true}));
  // Broadcast: [4, 1] with [4].
  Tensor outer = a.reshape({4, 1}) && b;
  EXPECT_EQ(outer.shape(), (lf::Shape{4, 4}));
  std::vector<bool> got = outer.to_vector<bool>(), av = a.to_vector<bool>(), bv = b.to_vector<bool>();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(got[i * 4 + j], av[i] && bv[j]);
  // Comparisons of bools are defined.
  EXPECT_EQ((a == b).to_vector<bool>(), (std::vector<bool>{true, false, false, true}));
  EXPECT_EQ((a < b).to_vector<bool>(), (std::vector<bool>{false, true, false, false}));
}

TEST(ElementwiseWhere, TensorAndScalarForms) {
  Tensor cond = lf::from_vector(std::vector<bool>{true, false, true}, {3, 1});
  Tensor a = lf::from_vector(std::vector<float>{1, 2, 3, 4}, {1, 4});
  Tensor b = lf::scalar(-1);
  Tensor w = lf::where(cond, a, b);
  EXPECT_EQ(w.shape(), (lf::Shape{3, 4}));
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, -1, -1, -1, -1, 1, 2, 3, 4}));
  EXPECT_EQ(lf::where(cond, a, 7.5).to_vector<float>(),
            (std::vector<float>{1, 2, 3, 4, 7.5, 7.5, 7.5, 7.5, 1, 2, 3, 4}));
  EXPECT_EQ(lf::where(cond, 0, a).to_vector<float>(), (std::vector<float>{0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 0}));

  // NaN and inf pass through untouched.
  Tensor c2 = lf::from_vector(std::vector<bool>{true, false}, {2});
  std::vector<double> v = lf::where(c2, make({kNaN, 1}, {2}, DType::Float16), make({0, kInf}, {2}, DType::Float16))
                              .to_vector<double>();
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], kInf);

  // Promotion of the value operands.
  Tensor i32 = lf::from_vector(std::vector<int32_t>{1, 2}, {2});
  EXPECT_EQ(lf::where(c2, i32, 2.5).dtype(), DType::Float32);
  EXPECT_EQ(lf::where(c2, i32, 2.5).to_vector<float>(), (std::vector<float>{1, 2.5f}));
  EXPECT_EQ(lf::where(c2, i32, 9).dtype(), DType::Int32);
  EXPECT_EQ(lf::where(c2, i32, 9).to_vector<int32_t>(), (std::vector<int32_t>{1, 9}));
  EXPECT_EQ(lf::where(c2, -4, i32).to_vector<int32_t>(), (std::vector<int32_t>{-4, 2}));
  EXPECT_EQ(lf::where(c2, i32, i32.to(DType::Float16)).dtype(), DType::Float16);
  const int64_t big = (int64_t{1} << 53) + 1;
  Tensor i64 = lf::from_vector(std::vector<int64_t>{big, -big}, {2});
  EXPECT_EQ(lf::where(c2, i64, i64 * 0).to_vector<int64_t>(), (std::vector<int64_t>{big, 0}));
}

// ---- broadcasting and sizes

TEST(ElementwiseBroadcast, ColumnWithRow) {
  Tensor col = lf::from_vector(std::vector<float>{1, 2, 3}, {3, 1});
  Tensor row = lf::from_vector(std::vector<float>{10, 20, 30, 40}, {1, 4});
  Tensor s = col + row;
  EXPECT_EQ(s.shape(), (lf::Shape{3, 4}));
  std::vector<float> want;
  for (float c : {1, 2, 3})
    for (float r : {10, 20, 30, 40}) want.push_back(c + r);
  EXPECT_EQ(s.to_vector<float>(), want);
  // Rank is padded on the left: [2, 1, 3] with [4, 1] gives [2, 4, 3].
  Tensor a = lf::arange(0.0, 6).reshape({2, 1, 3});
  Tensor b = lf::arange(0.0, 4).reshape({4, 1}) * 100;
  Tensor c = a - b;
  EXPECT_EQ(c.shape(), (lf::Shape{2, 4, 3}));
  std::vector<float> got = c.to_vector<float>();
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) EXPECT_EQ(got[(i * 4 + j) * 3 + k], float(i * 3 + k - j * 100));
}

TEST(ElementwiseBroadcast, RankZeroWithMatrix) {
  Tensor s = lf::scalar(2.5);
  EXPECT_EQ(s.shape(), lf::Shape{});
  Tensor m = lf::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ((s * m).shape(), (lf::Shape{2, 3}));
  EXPECT_EQ((s * m).to_vector<float>(), (std::vector<float>{2.5, 5, 7.5, 10, 12.5, 15}));
  EXPECT_EQ((m - s).to_vector<float>(), (std::vector<float>{-1.5, -0.5, 0.5, 1.5, 2.5, 3.5}));
  // Rank-0 with rank-0 stays rank-0.
  Tensor r = lf::exp(s) + s;
  EXPECT_EQ(r.shape(), lf::Shape{});
  EXPECT_NEAR(r.item<double>(), std::exp(2.5) + 2.5, 1e-5);
}

TEST(ElementwiseBroadcast, SizeZeroDims) {
  Tensor empty = lf::zeros({0, 3});
  Tensor row = lf::from_vector(std::vector<float>{1, 2, 3}, {1, 3});
  Tensor s = empty + row;
  EXPECT_EQ(s.shape(), (lf::Shape{0, 3}));
  EXPECT_EQ(s.numel(), 0);
  EXPECT_TRUE(s.to_vector<float>().empty());
  EXPECT_EQ((row * empty).shape(), (lf::Shape{0, 3}));
  EXPECT_EQ((empty + lf::from_vector(std::vector<float>{1, 2, 3}, {3})).shape(), (lf::Shape{0, 3}));
  Tensor cmp = empty < 1;
  EXPECT_EQ(cmp.shape(), (lf::Shape{0, 3}));
  EXPECT_EQ(cmp.dtype(), DType::Bool);
  EXPECT_TRUE(cmp.to_vector<bool>().empty());
  EXPECT_TRUE(lf::exp(empty).to_vector<float>().empty());
  // [2, 0] with [2, 1] and [1]: the 0 wins over 1.
  Tensor e2 = lf::zeros({2, 0}, DType::Int32) * lf::ones({2, 1}, DType::Int32);
  EXPECT_EQ(e2.shape(), (lf::Shape{2, 0}));
  EXPECT_TRUE(e2.to_vector<int32_t>().empty());
  Tensor w = lf::where(lf::zeros({0, 1}, DType::Bool), lf::ones({1, 4}), 0.0);
  EXPECT_EQ(w.shape(), (lf::Shape{0, 4}));
  EXPECT_TRUE(w.to_vector<float>().empty());
}

TEST(ElementwiseBroadcast, SizeOneDims) {
  Tensor one = lf::from_vector(std::vector<double>{4}, {1, 1, 1});
  Tensor v = lf::from_vector(std::vector<double>{1, 2}, {2});
  Tensor r = lf::sqrt(one) / v;
  EXPECT_EQ(r.shape(), (lf::Shape{1, 1, 2}));
  EXPECT_EQ(r.to_vector<double>(), (std::vector<double>{2, 1}));
  EXPECT_EQ(one.item<double>(), 4);
}

// ---- strided inputs

TEST(ElementwiseViews, TransposedInputs) {
  Tensor a = lf::arange(0.0, 6).reshape({2, 3});    // [[0 1 2] [3 4 5]]
  Tensor b = lf::arange(0.0, 6).reshape({3, 2}) * 10;  // [[0 10] [20 30] [40 50]]
  Tensor t = lf::transpose(a, -1, -2);               // negative dims: [3, 2]
  Tensor s = t + b;
  EXPECT_EQ(s.shape(), (lf::Shape{3, 2}));
  std::vector<float> got = s.to_vector<float>();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) EXPECT_EQ(got[i * 2 + j], float(j * 3 + i) + float((i * 2 + j) * 10)) << i << "," << j;
  // Both operands strided, and a 3-D permutation.
  Tensor x = lf::arange(0, 24, 1, DType::Float64).reshape({2, 3, 4});
  Tensor p = x.permute({2, 0, 1});  // [4, 2, 3]
  Tensor q = lf::exp(p * 0.1) - p.transpose(0, 0);
  EXPECT_EQ(q.shape(), (lf::Shape{4, 2, 3}));
  std::vector<double> qv = q.to_vector<double>();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) {
        double v = j * 12 + k * 4 + i;
        EXPECT_NEAR(qv[(i * 2 + j) * 3 + k], std::exp(v * 0.1) - v, 1e-12);
      }
}

TEST(ElementwiseViews, SlicedWithStep) {
  Tensor x = lf::arange(0, 20, 1, DType::Int64).reshape({4, 5});
  Tensor s = x.slice(1, 1, 5, 2).slice(0, 0, 4, 3);  // rows 0, 3; columns 1, 3
  EXPECT_EQ(s.shape(), (lf::Shape{2, 2}));
  EXPECT_EQ((s * 2).to_vector<int64_t>(), (std::vector<int64_t>{2, 6, 32, 36}));
  Tensor neg = x.slice(-1, -3, 100);  // columns 2..4
  EXPECT_EQ((neg - 1).to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3, 6, 7, 8, 11, 12, 13, 16, 17, 18}));
  Tensor f = lf::sqrt(s);  // int64 strided input to a float function
  EXPECT_EQ(f.dtype(), DType::Float32);
  expect_close(f.to_vector<double>(), {1, std::sqrt(3.0), 4, std::sqrt(18.0)}, tolerance(DType::Float32));
}

TEST(ElementwiseViews, ExpandedInputs) {
  Tensor row = lf::from_vector(std::vector<float>{1, 2, 3}, {1, 3}).expand({4, 3});
  Tensor col = lf::from_vector(std::vector<float>{0, 10, 20, 30}, {4, 1});
  Tensor s = row * col;
  EXPECT_EQ(s.shape(), (lf::Shape{4, 3}));
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{0, 0, 0, 10, 20, 30, 20, 40, 60, 30, 60, 90}));
  Tensor e = lf::scalar(3, DType::Int32).expand({2, 2});
  EXPECT_EQ((e + lf::from_vector(std::vector<int32_t>{1, 2, 3, 4}, {2, 2})).to_vector<int32_t>(),
            (std::vector<int32_t>{4, 5, 6, 7}));
}

TEST(ElementwiseViews, MaterializedStridedInputs) {
  // Reading a view materializes it with its strides; later ops must honour them.
  Tensor a = lf::arange(0, 6, 1, DType::Float64).reshape({2, 3});
  Tensor t = a.transpose(0, 1);
  Tensor sl = a.slice(1, 0, 3, 2);
  Tensor ex = lf::from_vector(std::vector<double>{5, 6}, {2, 1}).expand({2, 3});
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(sl.to_vector<double>(), (std::vector<double>{0, 2, 3, 5}));
  EXPECT_EQ(ex.to_vector<double>(), (std::vector<double>{5, 5, 5, 6, 6, 6}));
  EXPECT_EQ((t * 2).to_vector<double>(), (std::vector<double>{0, 6, 2, 8, 4, 10}));
  EXPECT_EQ((sl + 1).to_vector<double>(), (std::vector<double>{1, 3, 4, 6}));
  EXPECT_EQ((ex - a).to_vector<double>(), (std::vector<double>{5, 4, 3, 3, 2, 1}));
  EXPECT_EQ(lf::where(t > 2, t, -t).to_vector<double>(), (std::vector<double>{-0.0, 3, -1, 4, -2, 5}));
  // A half-precision strided input.
  Tensor h = a.to(DType::Float16).transpose(0, 1);
  EXPECT_EQ(h.to_vector<double>(), (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ((h + 0.5).dtype(), DType::Float16);
  EXPECT_EQ((h + 0.5).to_vector<double>(), (std::vector<double>{0.5, 3.5, 1.5, 4.5, 2.5, 5.5}));
}

TEST(ElementwiseViews, LargeOddSizedChainsMatchDoubleReference) {
  // Sizes that are not multiples of any vector width or thread chunk, strided and broadcast inputs,
  // and the chain from DESIGN.md: relu(x*2+1)*sigmoid(x)-tanh(x)/3.
  const int64_t rows = 131, cols = 257;
  std::vector<double> xs(static_cast<size_t>(rows * cols)), bs(static_cast<size_t>(rows));
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(0.37 * double(i)) * 6;
  for (size_t i = 0; i < bs.size(); ++i) bs[i] = double(i % 7) - 3;
  for (DType d : {DType::Float32, DType::Float64, DType::Float16}) {
    SCOPED_TRACE(lf::dtype_name(d));
    // Read back the inputs as the dtype holds them; the reference starts from the same values.
    Tensor x = lf::from_vector(xs, {cols, rows}).to(d).transpose(0, 1);  // [rows, cols], strided
    Tensor b = lf::from_vector(bs, {rows, 1}).to(d);                    // broadcast along cols
    std::vector<double> xv = x.to_vector<double>(), bv = b.to_vector<double>();
    Tensor y = lf::relu(x * 2 + 1) * lf::sigmoid(x) - lf::tanh(x) / 3 + b;
    std::vector<double> got = y.to_vector<double>();
    ASSERT_EQ(got.size(), xv.size());
    double tol = d == DType::Float16 ? 8e-3 : tolerance(d) * 4;  // several roundings in float16
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        double v = xv[r * cols + c];
        double want = std::max(v * 2 + 1, 0.0) * sigmoid_ref(v) - std::tanh(v) / 3 + bv[r];
        ASSERT_NEAR(got[r * cols + c], want, tol * std::max(1.0, std::fabs(want))) << r << "," << c;
      }
  }
}

// ---- value semantics, laziness, sync

TEST(ElementwiseSemantics, CompoundAssignmentRebinds) {
  Tensor x = lf::from_vector(std::vector<float>{1, 2}, {2});
  Tensor old = x;
  Tensor y = lf::from_vector(std::vector<float>{10, 20}, {2});
  x += y;
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{11, 22}));
  EXPECT_EQ(old.to_vector<float>(), (std::vector<float>{1, 2}));
  x -= 1;
  x *= y;
  x /= 2;
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{50, 210}));
  Tensor z = old;
  z *= 3;
  z -= old;
  z /= old;
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{2, 2}));
  EXPECT_EQ(old.to_vector<float>(), (std::vector<float>{1, 2}));
  // A pending value too: the old handle keeps the old value.
  Tensor p = old * 5;
  Tensor q = p;
  p += 1;
  EXPECT_EQ(q.to_vector<float>(), (std::vector<float>{5, 10}));
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{6, 11}));
}

TEST(ElementwiseSemantics, LongChainsCrossTheTraceLimit) {
  // 20,000 steps record far more nodes than the trace limit; the flushes it forces must not change
  // the values (nor the handles still holding earlier values).
  Tensor x = lf::zeros({3}, DType::Int64);
  Tensor h = lf::zeros({2}, DType::Float16);
  Tensor early;
  for (int i = 0; i < 20000; ++i) {
    x = x + 1;
    if (i % 32 == 0) h = h + 0.125;  // 625 exact float16 steps (the spacing below 128 is 1/16)
    if (i == 99) early = x;
  }
  EXPECT_EQ(x.to_vector<int64_t>(), (std::vector<int64_t>{20000, 20000, 20000}));
  EXPECT_EQ(early.to_vector<int64_t>(), (std::vector<int64_t>{100, 100, 100}));
  EXPECT_EQ(h.to_vector<double>(), (std::vector<double>{78.125, 78.125}));
}

TEST(ElementwiseSemantics, NothingRunsUntilRead) {
  lf::sync();
  Tensor a = lf::from_vector(std::vector<float>{1, 2, 3}, {3});
  lf::reset_stats();
  Tensor b = lf::exp(a) * 2 + 1;
  EXPECT_FALSE(b.is_materialized());
  EXPECT_EQ(lf::cache_stats().nodes_executed, 0u);
  lf::sync();
  EXPECT_TRUE(b.is_materialized());
  EXPECT_GT(lf::cache_stats().nodes_executed, 0u);
  expect_close(b.to_vector<double>(), {std::exp(1.0) * 2 + 1, std::exp(2.0) * 2 + 1, std::exp(3.0) * 2 + 1},
               tolerance(DType::Float32));
}

TEST(ElementwiseSemantics, SyncMaterializesEveryHeldTensor) {
  lf::sync();
  Tensor a = lf::from_vector(std::vector<float>{1, -2}, {2});
  Tensor b = lf::relu(a);
  Tensor c = b + a;
  Tensor d = lf::abs(c) > 1;
  EXPECT_FALSE(b.is_materialized());
  EXPECT_FALSE(c.is_materialized());
  EXPECT_FALSE(d.is_materialized());
  lf::sync();
  EXPECT_TRUE(b.is_materialized());
  EXPECT_TRUE(c.is_materialized());
  EXPECT_TRUE(d.is_materialized());
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{2, -2}));
  EXPECT_EQ(d.to_vector<bool>(), (std::vector<bool>{true, true}));
}

TEST(ElementwiseSemantics, DroppedTensorsAreNeverComputed) {
  lf::sync();
  Tensor a = lf::from_vector(std::vector<float>{1, 2, 3}, {3});
  // Baseline: what reading `a + 1` executes on its own.
  lf::reset_stats();
  Tensor base = a + 1;
  base.to_vector<float>();
  uint64_t baseline = lf::cache_stats().nodes_executed;
  ASSERT_GT(baseline, 0u);

  lf::reset_stats();
  { Tensor dead = lf::exp(lf::sin(a)) * 7; }  // made and dropped
  Tensor live = a + 1;
  { Tensor dead_on_live = live * 3 - 2; }
  lf::sync();
  EXPECT_TRUE(live.is_materialized());
  EXPECT_EQ(lf::cache_stats().nodes_executed, baseline);
  EXPECT_EQ(live.to_vector<float>(), (std::vector<float>{2, 3, 4}));

  // Nothing held at all: sync has nothing to do.
  lf::reset_stats();
  { Tensor dead = a * a; }
  lf::sync();
  EXPECT_EQ(lf::cache_stats().nodes_executed, 0u);
}

TEST(ElementwiseSemantics, UnheldIntermediatesAreNotStored) {
  // Unfused (LAZYFUSE_FUSION=0), every op is its own kernel and writes its result by design.
  if (!lf::rt::config().fusion) GTEST_SKIP() << "fusion is off";
  lf::sync();
  Tensor a = lf::from_vector(std::vector<float>{1, 2, 3}, {3});
  Tensor held = a * 2;
  Tensor out = lf::exp(held) + 1;  // exp(held) is an intermediate nobody holds
  std::shared_ptr<lf::ir::Node> intermediate = out.node()->inputs[0];
  while (intermediate->inputs.size() == 1 && intermediate->op != lf::ir::Op::Exp) intermediate = intermediate->inputs[0];
  ASSERT_EQ(intermediate->op, lf::ir::Op::Exp);
  out.to_vector<float>();
  EXPECT_TRUE(out.is_materialized());
  EXPECT_TRUE(held.is_materialized());  // held by the user: stored
  EXPECT_FALSE(intermediate->realized());
}

}  // namespace

// logit with eps clamps first, as PyTorch's logit(x, eps); hardswish's kinks at -3 and 3, fused
// into a chain and alone (fusion off) on the same values.
TEST(ElementwiseUnary, LogitEpsAndHardswishFusedAndUnfused) {
  const std::vector<double> in = {-1.0, 0.0, 1e-9, 0.25, 0.5, 0.999, 1.0, 2.0, kNaN};
  Tensor x = make(in, {static_cast<int64_t>(in.size())}, DType::Float32);
  const double eps = 1e-6;
  auto logit_eps = [&](double v) {
    // The bounds as float32 has them (1 - 1e-6 is not a float32).
    double c = std::isnan(v) ? v : std::clamp(v, double(float(eps)), double(float(1.0 - eps)));
    return std::log(c / (1.0 - c));
  };
  const std::vector<double> hs_in = {-4.0, -3.0, -2.0, -0.0, 1.0, 3.0, 4.0, kInf, -kInf, kNaN};
  Tensor h = make(hs_in, {static_cast<int64_t>(hs_in.size())}, DType::Float32);
  auto hardswish_ref = [](double v) { return std::isnan(v) ? v : v * std::clamp(v + 3.0, 0.0, 6.0) / 6.0; };
  for (bool fusion : {true, false}) {
    SCOPED_TRACE(fusion ? "fused" : "unfused");
    lf::set_fusion_enabled(fusion);
    expect_close(lf::logit(x, eps).to_vector<double>(), map(in, logit_eps), tolerance(DType::Float32), in);
    std::vector<double> want;
    for (double v : hs_in) want.push_back(hardswish_ref(v) * 2 + 1);
    expect_close((lf::hardswish(h) * 2 + 1).to_vector<double>(), want, tolerance(DType::Float32), hs_in);
  }
  lf::set_fusion_enabled(true);
}
