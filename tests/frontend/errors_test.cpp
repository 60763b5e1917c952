// User errors: each throws lf::Error at the call that made it (not at a later sync point), and the
// message names the op, the shapes and the dtypes involved.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

namespace {

using lf::DType;
using lf::Tensor;

// Runs `f`, which must throw lf::Error whose message contains every one of `parts`.
void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
  } catch (const lf::Error& e) {
    std::string msg = e.what();
    for (const std::string& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "missing \"" << p << "\" in: " << msg;
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-lf::Error: " << e.what();
    return;
  }
  ADD_FAILURE() << "did not throw; expected an lf::Error mentioning \"" << (parts.empty() ? "" : parts[0]) << "\"";
}

#define EXPECT_LF_ERROR(stmt, ...) \
  do {                             \
    SCOPED_TRACE(#stmt);           \
    expect_error([&] { (void)(stmt); }, {__VA_ARGS__}); \
  } while (0)

Tensor f32(lf::Shape s) { return lf::zeros(std::move(s)); }

TEST(Errors, IncompatibleBroadcast) {
  Tensor a = f32({2, 3}), b = lf::zeros({4}, DType::Int64);
  EXPECT_LF_ERROR(a + b, "lf::add", "cannot broadcast", "[2, 3]", "[4]", "float32[2, 3]", "int64[4]");
  EXPECT_LF_ERROR(a - b, "lf::sub", "[2, 3]", "[4]");
  EXPECT_LF_ERROR(a * b, "lf::mul", "[2, 3]", "[4]");
  EXPECT_LF_ERROR(a / b, "lf::div", "[2, 3]", "[4]");
  EXPECT_LF_ERROR(a < b, "lf::lt", "[2, 3]", "[4]");
  EXPECT_LF_ERROR(a == b, "lf::eq", "[2, 3]", "[4]");
  EXPECT_LF_ERROR(lf::pow(a, b), "lf::pow", "[2, 3]", "[4]");
  EXPECT_LF_ERROR(lf::maximum(a, b), "lf::maximum", "[2, 3]", "[4]");
  EXPECT_LF_ERROR(lf::atan2(a, b), "lf::atan2", "[2, 3]", "[4]");
  Tensor ba = lf::zeros({2, 3}, DType::Bool), bb = lf::zeros({4}, DType::Bool);
  EXPECT_LF_ERROR(ba && bb, "lf::logical_and", "[2, 3]", "[4]");
  EXPECT_LF_ERROR(ba || bb, "lf::logical_or", "[2, 3]", "[4]");
  // Size 0 broadcasts only against 0 or 1.
  EXPECT_LF_ERROR(f32({0, 3}) + f32({2, 3}), "lf::add", "[0, 3]", "[2, 3]");
  // where: each of the three operands.
  EXPECT_LF_ERROR(lf::where(lf::zeros({4}, DType::Bool), a, 1.0), "lf::where", "[4]", "[2, 3]", "bool[4]");
  EXPECT_LF_ERROR(lf::where(lf::zeros({3}, DType::Bool), f32({3}), f32({2})), "lf::where", "[3]", "[2]");
}

TEST(Errors, BadDtypeForOp) {
  Tensor b = lf::zeros({3}, DType::Bool);
  EXPECT_LF_ERROR(lf::sqrt(b), "lf::sqrt", "bool", "bool[3]");
  EXPECT_LF_ERROR(lf::exp(b), "lf::exp", "bool[3]");
  EXPECT_LF_ERROR(lf::sin(b), "lf::sin", "bool[3]");
  EXPECT_LF_ERROR(lf::neg(b), "lf::neg", "bool[3]");
  EXPECT_LF_ERROR(-b, "lf::neg", "bool[3]");
  EXPECT_LF_ERROR(lf::abs(b), "lf::abs", "bool[3]");
  EXPECT_LF_ERROR(lf::relu(b), "lf::relu", "bool[3]");
  EXPECT_LF_ERROR(lf::floor(b), "lf::floor", "bool[3]");
  EXPECT_LF_ERROR(lf::round(b), "lf::round", "bool[3]");
  EXPECT_LF_ERROR(lf::sign(b), "lf::sign", "bool[3]");
  EXPECT_LF_ERROR(lf::square(b), "lf::square", "bool[3]");
  EXPECT_LF_ERROR(lf::gelu(b), "lf::gelu", "bool[3]");
  EXPECT_LF_ERROR(lf::clamp(b, 0, 1), "lf::clamp", "bool[3]");
  // Arithmetic on two bools (PyTorch allows + and * as or/and; LazyFuse asks for || and &&).
  EXPECT_LF_ERROR(b + b, "lf::add", "bool", "bool[3]");
  EXPECT_LF_ERROR(b - b, "lf::sub", "bool[3]");
  EXPECT_LF_ERROR(b * true, "lf::mul", "bool[3]");
  EXPECT_LF_ERROR(lf::maximum(b, b), "lf::maximum", "bool[3]");
  // Logical ops need bools.
  Tensor f = lf::zeros({3});
  EXPECT_LF_ERROR(!f, "lf::logical_not", "float32[3]");
  EXPECT_LF_ERROR(f && b, "lf::logical_and", "float32[3]", "bool[3]");
  EXPECT_LF_ERROR(b || lf::zeros({3}, DType::Int32), "lf::logical_or", "int32[3]");
  // where's condition must be bool.
  EXPECT_LF_ERROR(lf::where(f, f, f), "lf::where", "condition", "float32[3]");
  EXPECT_LF_ERROR(lf::where(lf::zeros({3}, DType::Int32), f, 0.0), "lf::where", "int32[3]");
  // matmul of bools.
  EXPECT_LF_ERROR(lf::matmul(lf::zeros({2, 2}, DType::Bool), lf::zeros({2, 2}, DType::Bool)), "lf::matmul",
                  "bool[2, 2]");
}

TEST(Errors, NumberDoesNotFitTheTensorDType) {
  // int32 tensor + 2^40 stays int32 (PyTorch's scalar rule), so the number cannot be represented.
  Tensor i = lf::zeros({2}, DType::Int32);
  const int64_t big = int64_t{1} << 40;
  EXPECT_LF_ERROR(i + big, "lf::add", "1099511627776", "int32", "int32[2]");
  EXPECT_LF_ERROR(big * i, "lf::mul", "1099511627776", "int32[2]");
  EXPECT_LF_ERROR(i < big, "lf::lt", "int32[2]");
  EXPECT_LF_ERROR(lf::clamp(i, -big, 0), "int32[2]");
  EXPECT_LF_ERROR(lf::where(i > 0, i, big), "lf::where", "int32[2]");
  // The edges of int32 are fine; int64 holds it.
  EXPECT_EQ((i + int64_t{2147483647}).to_vector<int32_t>(), (std::vector<int32_t>{2147483647, 2147483647}));
  EXPECT_EQ((i + int64_t{-2147483648}).to_vector<int32_t>(), (std::vector<int32_t>{-2147483647 - 1, -2147483647 - 1}));
  EXPECT_LF_ERROR(i - int64_t{2147483648}, "lf::sub", "2147483648");
  EXPECT_EQ((lf::zeros({1}, DType::Int64) + big).item<int64_t>(), big);
}

TEST(Errors, IntegerToNegativeIntegerPower) {
  // PyTorch: "Integers to negative integer powers are not allowed" (a tensor exponent is defined).
  Tensor i = lf::from_vector(std::vector<int32_t>{1, 2}, {2});
  EXPECT_LF_ERROR(lf::pow(i, -1), "lf::pow", "negative", "int32[2]");
  EXPECT_LF_ERROR(lf::pow(lf::zeros({2}, DType::Int64), -2), "lf::pow", "int64[2]");
  EXPECT_EQ(lf::pow(i, 0).to_vector<int32_t>(), (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(lf::pow(i, -1.0).dtype(), DType::Float32);  // a float exponent makes it float
  EXPECT_EQ(lf::pow(i, -1.0).to_vector<float>(), (std::vector<float>{1, 0.5f}));
}

TEST(Errors, ClampWithNaNBound) {
  EXPECT_LF_ERROR(lf::clamp(f32({2}), NAN, 1), "lf::clamp", "NaN", "float32[2]");
  EXPECT_LF_ERROR(lf::clamp(f32({2}), 0, NAN), "lf::clamp", "NaN");
}

TEST(Errors, BadDim) {
  Tensor x = f32({2, 3});
  EXPECT_LF_ERROR(x.transpose(0, 2), "lf::transpose", "dim 2", "rank 2", "float32[2, 3]");
  EXPECT_LF_ERROR(x.transpose(-3, 0), "lf::transpose", "dim -3", "[-2, 1]");
  EXPECT_LF_ERROR(x.permute({0, 0}), "lf::permute", "more than once", "float32[2, 3]");
  EXPECT_LF_ERROR(x.permute({0}), "lf::permute", "float32[2, 3]");
  EXPECT_LF_ERROR(x.slice(2, 0, 1), "lf::slice", "dim 2", "float32[2, 3]");
  EXPECT_LF_ERROR(x.unsqueeze(4), "lf::unsqueeze", "dim 4", "float32[2, 3]");
  EXPECT_LF_ERROR(x.squeeze(-3), "lf::squeeze", "dim -3", "float32[2, 3]");
  EXPECT_LF_ERROR(x.size(2), "lf::size", "dim 2", "float32[2, 3]");
  EXPECT_LF_ERROR(lf::sum(x, {2}), "lf::sum", "dim 2", "float32[2, 3]");
  EXPECT_LF_ERROR(lf::softmax(x, -3), "lf::softmax", "dim -3", "float32[2, 3]");
}

TEST(Errors, BadReshape) {
  Tensor x = f32({2, 3});
  EXPECT_LF_ERROR(x.reshape({4, 2}), "lf::reshape", "[4, 2]", "8", "6", "float32[2, 3]");
  EXPECT_LF_ERROR(x.reshape({-1, 4}), "lf::reshape", "[-1, 4]", "float32[2, 3]");
  EXPECT_LF_ERROR(x.reshape({-1, -1}), "lf::reshape", "[-1, -1]");
  EXPECT_LF_ERROR(x.expand({4, 3}), "lf::expand", "dim 0", "size 2", "to 4", "float32[2, 3]");
}

TEST(Errors, MatmulSizeMismatch) {
  EXPECT_LF_ERROR(lf::matmul(f32({2, 3}), f32({4, 5})), "lf::matmul", "[2, 3]", "[4, 5]", "float32[2, 3]",
                  "float32[4, 5]");
  EXPECT_LF_ERROR(lf::matmul(f32({3}), lf::zeros({4}, DType::Float64)), "lf::matmul", "[3]", "[4]", "float64[4]");
  EXPECT_LF_ERROR(lf::matmul(f32({2, 2, 3}), f32({3, 3, 4})), "lf::matmul", "[2, 2, 3]", "[3, 3, 4]");
  EXPECT_LF_ERROR(lf::matmul(lf::scalar(1), f32({2})), "lf::matmul", "float32[]");
}

TEST(Errors, ItemOfManyElements) {
  Tensor x = f32({2, 3});
  EXPECT_LF_ERROR(x.item<float>(), "lf::item", "6", "float32[2, 3]");
  EXPECT_LF_ERROR((x + 1).item<double>(), "lf::item", "float32[2, 3]");
  EXPECT_LF_ERROR(f32({0}).item<float>(), "lf::item", "0", "float32[0]");
  // One element of any rank is fine.
  EXPECT_EQ(lf::ones({1, 1, 1}).item<float>(), 1.0f);
}

TEST(Errors, NegativeSizeInShape) {
  EXPECT_LF_ERROR(lf::zeros({2, -3}), "negative", "[2, -3]");
  EXPECT_LF_ERROR(lf::ones({-1}), "negative", "[-1]");
  EXPECT_LF_ERROR(lf::full({-2, 2}, 1.0), "lf::full", "negative", "[-2, 2]");
  EXPECT_LF_ERROR(lf::rand({3, -1}), "lf::rand", "negative", "[3, -1]");
  EXPECT_LF_ERROR(lf::from_vector(std::vector<float>{}, {-1, 0}), "lf::from_vector", "negative", "[-1, 0]");
  EXPECT_LF_ERROR(f32({2, 3}).reshape({-2, -3}), "lf::reshape", "negative");
  EXPECT_LF_ERROR(f32({1, 3}).expand({-2, 3}), "lf::expand", "negative", "[-2, 3]");
}

TEST(Errors, EmptyHandle) {
  Tensor empty;
  Tensor x = f32({2});
  EXPECT_LF_ERROR(empty + x, "lf::add", "empty Tensor");
  EXPECT_LF_ERROR(x * empty, "lf::mul", "empty Tensor");
  EXPECT_LF_ERROR(empty + 1, "lf::add", "empty Tensor");
  EXPECT_LF_ERROR(lf::exp(empty), "lf::exp", "empty Tensor");
  EXPECT_LF_ERROR(lf::where(empty, x, x), "lf::where", "empty Tensor");
  EXPECT_LF_ERROR(lf::where(x > 0, empty, 1), "lf::where", "empty Tensor");
  EXPECT_LF_ERROR(lf::clamp(empty, 0, 1), "lf::clamp", "empty Tensor");
  EXPECT_LF_ERROR(empty.shape(), "empty Tensor");
}

TEST(Errors, ThrownAtTheCallAndNothingIsLost) {
  // The error comes from the op call itself: no read is needed, and pending work survives it.
  lf::sync();
  Tensor a = lf::from_vector(std::vector<float>{1, 2, 3}, {3});
  Tensor pending = a * 2;
  lf::reset_stats();
  EXPECT_THROW((void)(pending + f32({2})), lf::Error);
  EXPECT_THROW((void)lf::sqrt(pending > 1), lf::Error);
  EXPECT_EQ(lf::cache_stats().nodes_executed, 0u);  // nothing ran to find the errors
  EXPECT_FALSE(pending.is_materialized());
  EXPECT_EQ((pending + 1).to_vector<float>(), (std::vector<float>{3, 5, 7}));
}

}  // namespace
