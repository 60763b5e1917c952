// Type promotion of elementwise ops, per PyTorch's rules: tensor-tensor promotion by category then
// width; a C++ number lifts a tensor's category but never its width within the category.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

namespace {

using lf::DType;
using lf::Tensor;

Tensor ones_of(DType d) { return lf::ones({2}, d); }

TEST(Promotion, TensorWithTensorTable) {
  const DType B = DType::Bool, I32 = DType::Int32, I64 = DType::Int64, F16 = DType::Float16,
              BF16 = DType::BFloat16, F32 = DType::Float32, F64 = DType::Float64;
  // torch.promote_types, written out by hand. Bool with Bool is left out: + is an error (errors_test).
  struct Row {
    DType a, b, want;
  };
  const Row rows[] = {
      {I32, I64, I64},   {I64, I32, I64},   {I32, I32, I32},   {B, I32, I32},     {I64, B, I64},
      {B, F16, F16},     {I32, F16, F16},   {I64, F16, F16},   {I64, BF16, BF16}, {I32, F32, F32},
      {I64, F32, F32},   {I32, F64, F64},   {F16, BF16, F32},  {BF16, F16, F32},  {F16, F32, F32},
      {BF16, F32, F32},  {F16, F64, F64},   {F32, F64, F64},   {F16, F16, F16},   {BF16, BF16, BF16},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(std::string(lf::dtype_name(r.a)) + " with " + lf::dtype_name(r.b));
    Tensor a = ones_of(r.a), b = ones_of(r.b);
    EXPECT_EQ((a + b).dtype(), r.want);
    EXPECT_EQ((a - b).dtype(), r.want);
    EXPECT_EQ((a * b).dtype(), r.want);
    EXPECT_EQ(lf::maximum(a, b).dtype(), r.want);
    EXPECT_EQ(lf::minimum(a, b).dtype(), r.want);
    EXPECT_EQ(lf::pow(a, b).dtype(), r.want);
    EXPECT_EQ(lf::where(lf::ones({2}, B), a, b).dtype(), r.want);
    // The value is computed, not only typed: 1 + 1 is 2 in every pair.
    EXPECT_EQ((a + b).to_vector<double>(), (std::vector<double>{2, 2}));
    // Division and atan2 give a floating result; integers become float32.
    DType fl = lf::is_floating(r.want) ? r.want : F32;
    EXPECT_EQ((a / b).dtype(), fl);
    EXPECT_EQ(lf::atan2(a, b).dtype(), fl);
    EXPECT_EQ((a == b).dtype(), B);
    EXPECT_EQ((a < b).dtype(), B);
  }
}

TEST(Promotion, MixedIntegerWidthsComputeInInt64) {
  // 2^31 - 1 (int32) + 1 (int64) must not wrap in int32.
  Tensor a = lf::from_vector(std::vector<int32_t>{2147483647}, {1});
  Tensor b = lf::from_vector(std::vector<int64_t>{1}, {1});
  EXPECT_EQ((a + b).item<int64_t>(), int64_t{2147483648});
  EXPECT_EQ((b + a).item<int64_t>(), int64_t{2147483648});
}

TEST(Promotion, IntegerWithHalfGivesHalf) {
  Tensor i = lf::from_vector(std::vector<int32_t>{3, -4}, {2});
  Tensor h = lf::from_vector(std::vector<float>{0.5f, 0.25f}, {2}).to(DType::Float16);
  Tensor s = i + h;
  EXPECT_EQ(s.dtype(), DType::Float16);
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{3.5f, -3.75f}));
  // The integer is rounded to float16 first: 2049 is not a float16 (it rounds to even, 2048).
  Tensor big = lf::from_vector(std::vector<int32_t>{2049}, {1});
  EXPECT_EQ((big + lf::zeros({1}, DType::Float16)).item<float>(), 2048.0f);
}

TEST(Promotion, HalfWithBFloat16GivesFloat32) {
  // 1 + 2^-10 is exact in float16, not in bfloat16; 1 + 2^-7 is exact in both.
  Tensor h = lf::from_vector(std::vector<float>{1.0f + 1.0f / 1024}, {1}).to(DType::Float16);
  Tensor b = lf::from_vector(std::vector<float>{1.0f / 128}, {1}).to(DType::BFloat16);
  Tensor s = h + b;
  EXPECT_EQ(s.dtype(), DType::Float32);
  EXPECT_EQ(s.item<float>(), 1.0f + 1.0f / 1024 + 1.0f / 128);
}

TEST(Promotion, ScalarLiftsCategoryButNotWidth) {
  Tensor i32 = lf::from_vector(std::vector<int32_t>{1, 2}, {2});
  Tensor i64 = lf::from_vector(std::vector<int64_t>{1, 2}, {2});
  Tensor f16 = lf::from_vector(std::vector<float>{1, 2}, {2}).to(DType::Float16);
  Tensor bf16 = f16.to(DType::BFloat16);
  Tensor f64 = lf::from_vector(std::vector<double>{1, 2}, {2});
  Tensor b = lf::from_vector(std::vector<bool>{true, false}, {2});

  EXPECT_EQ((i32 + 2.5).dtype(), DType::Float32);
  EXPECT_EQ((i32 + 2.5).to_vector<float>(), (std::vector<float>{3.5f, 4.5f}));
  EXPECT_EQ((2.5 - i32).to_vector<float>(), (std::vector<float>{1.5f, 0.5f}));
  EXPECT_EQ((i64 * 0.5).dtype(), DType::Float32);
  EXPECT_EQ((f16 * 2.0).dtype(), DType::Float16);
  EXPECT_EQ((f16 * 2.0).to_vector<float>(), (std::vector<float>{2, 4}));
  EXPECT_EQ((bf16 + 1).dtype(), DType::BFloat16);
  EXPECT_EQ((f64 + 1.5f).dtype(), DType::Float64);
  EXPECT_EQ((i32 + 2).dtype(), DType::Int32);
  EXPECT_EQ((i32 + int64_t{2}).dtype(), DType::Int32);
  EXPECT_EQ((i32 * 3).to_vector<int32_t>(), (std::vector<int32_t>{3, 6}));
  EXPECT_EQ((i64 - 1).dtype(), DType::Int64);
  EXPECT_EQ((b + 1).dtype(), DType::Int64);
  EXPECT_EQ((b + 1).to_vector<int64_t>(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ((b * 2.5).dtype(), DType::Float32);
  EXPECT_EQ((b * 2.5).to_vector<float>(), (std::vector<float>{2.5f, 0}));
  EXPECT_EQ((i32 + true).dtype(), DType::Int32);
  EXPECT_EQ((i32 + true).to_vector<int32_t>(), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ((f16 + true).dtype(), DType::Float16);
  EXPECT_EQ(lf::pow(i32, 2).dtype(), DType::Int32);
  EXPECT_EQ(lf::pow(i32, 0.5).dtype(), DType::Float32);
  EXPECT_EQ(lf::pow(f16, 2).dtype(), DType::Float16);
}

TEST(Promotion, ScalarIsRoundedToTheTensorDType) {
  // float16 tensor * 0.1 stays float16; within one float16 ulp of the exact product.
  Tensor f16 = lf::from_vector(std::vector<float>{1, 3}, {2}).to(DType::Float16);
  std::vector<float> got = (f16 * 0.1).to_vector<float>();
  EXPECT_NEAR(got[0], 0.1f, 1e-4f);
  EXPECT_NEAR(got[1], 0.3f, 3e-4f);
  // 16777217 is not a float32; float32 tensor + 16777217 computes in float32.
  Tensor f32 = lf::zeros({1});
  EXPECT_EQ((f32 + 16777217).dtype(), DType::Float32);
  EXPECT_EQ((f32 + 16777217).item<double>(), 16777216.0);
  // An int64 tensor with a large int scalar stays exact.
  const int64_t big = (int64_t{1} << 60) + 3;
  Tensor i64 = lf::zeros({1}, DType::Int64);
  EXPECT_EQ((i64 + big).item<int64_t>(), big);
}

TEST(Promotion, IntegerDivisionGivesFloat32) {
  for (DType d : {DType::Int32, DType::Int64, DType::Bool}) {
    SCOPED_TRACE(lf::dtype_name(d));
    Tensor a = lf::ones({3}, d);
    EXPECT_EQ((a / a).dtype(), DType::Float32);
    EXPECT_EQ((a / 2).dtype(), DType::Float32);
    EXPECT_EQ((2 / a).dtype(), DType::Float32);
    EXPECT_EQ((a / 2).to_vector<float>(), (std::vector<float>{0.5f, 0.5f, 0.5f}));
  }
  EXPECT_EQ((lf::ones({1}, DType::Int32) / 2.0).dtype(), DType::Float32);
  EXPECT_EQ((lf::ones({1}, DType::Float16) / lf::ones({1}, DType::Int64)).dtype(), DType::Float16);
  EXPECT_EQ((lf::ones({1}, DType::Float64) / 3).dtype(), DType::Float64);
  // int32 / int64 tensors: promoted to int64 first, then the division is float32.
  Tensor q = lf::from_vector(std::vector<int32_t>{1}, {1}) / lf::from_vector(std::vector<int64_t>{4}, {1});
  EXPECT_EQ(q.dtype(), DType::Float32);
  EXPECT_EQ(q.item<float>(), 0.25f);
}

TEST(Promotion, ComparisonsGiveBool) {
  Tensor i = lf::from_vector(std::vector<int32_t>{1, 2, 3}, {3});
  Tensor f = lf::from_vector(std::vector<float>{1.5f, 2, 2.5f}, {3});
  EXPECT_EQ((i == f).dtype(), DType::Bool);
  EXPECT_EQ((i == f).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ((i < f).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  // int tensor vs float scalar compares in float32; truncating 2.5 to 2 would make 2 >= 2.5 true.
  EXPECT_EQ((i >= 2.5).dtype(), DType::Bool);
  EXPECT_EQ((i >= 2.5).to_vector<bool>(), (std::vector<bool>{false, false, true}));
  EXPECT_EQ((i == 2.0).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  Tensor h = lf::from_vector(std::vector<float>{0.5f}, {1}).to(DType::Float16);
  EXPECT_EQ((h != lf::from_vector(std::vector<float>{0.5f}, {1}).to(DType::BFloat16)).item<bool>(), false);
  Tensor b = lf::from_vector(std::vector<bool>{true, false}, {2});
  EXPECT_EQ((b == 1).dtype(), DType::Bool);
  EXPECT_EQ((b == 1).to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ((b > 0.5).to_vector<bool>(), (std::vector<bool>{true, false}));
}

TEST(Promotion, FloatFunctionsOfIntegersGiveFloat32) {
  for (DType d : {DType::Int32, DType::Int64}) {
    SCOPED_TRACE(lf::dtype_name(d));
    Tensor x = lf::ones({2}, d);
    for (const Tensor& y : {lf::exp(x), lf::log(x), lf::sqrt(x), lf::rsqrt(x), lf::sigmoid(x), lf::tanh(x),
                            lf::gelu(x), lf::silu(x), lf::erf(x), lf::reciprocal(x), lf::sin(x), lf::atan2(x, x)})
      EXPECT_EQ(y.dtype(), DType::Float32);
    for (const Tensor& y : {lf::abs(x), lf::neg(x), lf::relu(x), lf::sign(x), lf::square(x), lf::floor(x),
                            lf::round(x), lf::clamp(x, 0, 1)})
      EXPECT_EQ(y.dtype(), d);
    for (const Tensor& y : {lf::isnan(x), lf::isinf(x), lf::isfinite(x)}) EXPECT_EQ(y.dtype(), DType::Bool);
  }
  // Half-precision inputs keep their dtype.
  EXPECT_EQ(lf::exp(lf::ones({1}, DType::Float16)).dtype(), DType::Float16);
  EXPECT_EQ(lf::exp(lf::ones({1}, DType::BFloat16)).dtype(), DType::BFloat16);
  EXPECT_EQ(lf::exp(lf::ones({1}, DType::Float64)).dtype(), DType::Float64);
}

TEST(Promotion, CastsBetweenEveryPair) {
  // Values exact in every dtype; bool sees nonzero as true.
  const std::vector<double> v = {0, 1, -2, 3, 64};
  const DType all[] = {DType::Bool,     DType::Int32,   DType::Int64,  DType::Float16,
                       DType::BFloat16, DType::Float32, DType::Float64};
  for (DType from : all) {
    for (DType to : all) {
      SCOPED_TRACE(std::string(lf::dtype_name(from)) + " -> " + lf::dtype_name(to));
      Tensor x = lf::from_vector(v, {5}).to(from);
      Tensor y = lf::cast(x, to);
      EXPECT_EQ(y.dtype(), to);
      std::vector<double> want;
      for (double e : v) {
        double after_from = from == DType::Bool ? (e != 0) : e;
        want.push_back(to == DType::Bool ? (after_from != 0) : after_from);
      }
      EXPECT_EQ(y.to_vector<double>(), want);
    }
  }
}

TEST(Promotion, FloatToIntegerCastTruncatesAndSaturates) {
  Tensor x = lf::from_vector(std::vector<double>{2.7, -2.7, 1e20, -1e20, NAN, INFINITY}, {6});
  std::vector<int32_t> got = x.to(DType::Int32).to_vector<int32_t>();
  EXPECT_EQ(got[0], 2);
  EXPECT_EQ(got[1], -2);
  // Out-of-range values are undefined in C++; the library saturates (and maps NaN to 0).
  EXPECT_EQ(got[2], std::numeric_limits<int32_t>::max());
  EXPECT_EQ(got[3], std::numeric_limits<int32_t>::min());
  EXPECT_EQ(got[4], 0);
  EXPECT_EQ(got[5], std::numeric_limits<int32_t>::max());
  std::vector<int64_t> got64 = x.to(DType::Int64).to_vector<int64_t>();
  EXPECT_EQ(got64[2], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(got64[3], std::numeric_limits<int64_t>::min());
}

}  // namespace
