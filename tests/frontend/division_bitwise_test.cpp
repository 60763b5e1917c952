// remainder, fmod, floor_divide and the bitwise ops (issue 23): PyTorch's values on hand-picked
// cases, then every dtype, broadcasts, views, size-0/1 dims and NaN/inf against the reference
// executor, fused and unfused, at sizes that take several GPU blocks.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "frontend/breadth_util.h"

namespace {

using lf::DType;
using lf::Shape;
using lf::Tensor;
using lf::test::error_of;
using lf::test::expect_matches_reference;
using lf::test::random_input;

TEST(Division, IntegerSignsFollowPyTorch) {
  Tensor a = lf::from_vector(std::vector<int64_t>{-7, 7, -7, 7, 5, 0}, {6});
  Tensor b = lf::from_vector(std::vector<int64_t>{3, 3, -3, -3, 5, 4}, {6});
  EXPECT_EQ(lf::remainder(a, b).to_vector<int64_t>(), (std::vector<int64_t>{2, 1, -1, -2, 0, 0}));
  EXPECT_EQ(lf::fmod(a, b).to_vector<int64_t>(), (std::vector<int64_t>{-1, 1, -1, 1, 0, 0}));
  EXPECT_EQ(lf::floor_divide(a, b).to_vector<int64_t>(), (std::vector<int64_t>{-3, 2, 2, -3, 1, 0}));
  EXPECT_EQ((a % 3).to_vector<int64_t>(), (std::vector<int64_t>{2, 1, 2, 1, 2, 0}));
  EXPECT_EQ(lf::remainder(10, b).to_vector<int64_t>(), (std::vector<int64_t>{1, 1, -2, -2, 0, 2}));
}

TEST(Division, IntegerDivisionByZeroGivesZeroAndMinByMinusOneWraps) {
  for (bool fused : {true, false}) {
    lf::test::FusionScope scope(fused);
    Tensor a = lf::from_vector(std::vector<int32_t>{5, -5, 0, INT32_MIN, INT32_MIN}, {5});
    Tensor b = lf::from_vector(std::vector<int32_t>{0, 0, 0, -1, 1}, {5});
    EXPECT_EQ(lf::floor_divide(a, b).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0, INT32_MIN, INT32_MIN}));
    EXPECT_EQ(lf::remainder(a, b).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0, 0, 0}));
    EXPECT_EQ(lf::fmod(a, b).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0, 0, 0}));
    EXPECT_EQ(lf::floor_divide(a, 0).to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0, 0, 0}));
  }
}

TEST(Division, FloatsFollowPyTorch) {
  Tensor a = lf::from_vector(std::vector<double>{-7.5, 7.5, 1.0, -1.0, 5.0, -0.5, 0.5}, {7});
  Tensor b = lf::from_vector(std::vector<double>{2.0, -2.0, 0.0, 0.0, 0.0, 4.0, -4.0}, {7});
  std::vector<double> rem = lf::remainder(a, b).to_vector<double>();
  EXPECT_EQ(rem[0], 0.5);
  EXPECT_EQ(rem[1], -0.5);
  EXPECT_TRUE(std::isnan(rem[2]));
  EXPECT_EQ(rem[5], 3.5);
  std::vector<double> fm = lf::fmod(a, b).to_vector<double>();
  EXPECT_EQ(fm[0], -1.5);
  EXPECT_EQ(fm[1], 1.5);
  std::vector<double> fd = lf::floor_divide(a, b).to_vector<double>();
  EXPECT_EQ(fd[0], -4.0);
  EXPECT_EQ(fd[1], -4.0);
  EXPECT_EQ(fd[2], INFINITY);
  EXPECT_EQ(fd[3], -INFINITY);
  EXPECT_EQ(fd[5], -1.0);
  EXPECT_EQ(fd[6], -1.0);
  // int32 with a float number lifts to float32, as in PyTorch.
  EXPECT_EQ(lf::remainder(lf::from_vector(std::vector<int32_t>{-3}, {1}), 2.5).dtype(), DType::Float32);
}

TEST(Bitwise, ValuesAndShiftsPastTheWidth) {
  Tensor a = lf::from_vector(std::vector<int64_t>{12, 12, -16, 1, -1, 1, 5}, {7});
  Tensor b = lf::from_vector(std::vector<int64_t>{10, 3, 2, 64, 70, -1, 0}, {7});
  EXPECT_EQ((a & b).to_vector<int64_t>()[0], 8);
  EXPECT_EQ((a | b).to_vector<int64_t>()[0], 14);
  EXPECT_EQ((a ^ b).to_vector<int64_t>()[0], 6);
  EXPECT_EQ((~a).to_vector<int64_t>()[0], -13);
  EXPECT_EQ((a << b).to_vector<int64_t>(), (std::vector<int64_t>{12 << 10, 96, -64, 0, 0, 0, 5}));
  EXPECT_EQ((a >> b).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, -4, 0, -1, 0, 5}));
  Tensor i32 = lf::from_vector(std::vector<int32_t>{1, -8}, {2});
  EXPECT_EQ((i32 << 31).to_vector<int32_t>(), (std::vector<int32_t>{INT32_MIN, 0}));
  EXPECT_EQ((i32 >> 32).to_vector<int32_t>(), (std::vector<int32_t>{0, -1}));
  Tensor t = lf::from_vector(std::vector<bool>{true, true, false}, {3});
  Tensor f = lf::from_vector(std::vector<bool>{true, false, false}, {3});
  EXPECT_EQ((t & f).dtype(), DType::Bool);
  EXPECT_EQ((t ^ f).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ((~t).to_vector<bool>(), (std::vector<bool>{false, false, true}));
  EXPECT_EQ((t | 2).dtype(), DType::Int64);  // a bool tensor with an integer lifts to int64
}

TEST(Bitwise, FloatsAndBoolShiftsAreErrorsNamingTheOp) {
  Tensor x = lf::ones({2, 3});
  Tensor i = lf::ones({3}, DType::Int32);
  Tensor b = lf::ones({3}, DType::Bool);
  std::string e = error_of([&] { (void)(x & i); });
  EXPECT_NE(e.find("bitwise_and"), std::string::npos) << e;
  EXPECT_NE(e.find("float32[2, 3]"), std::string::npos) << e;
  EXPECT_NE(e.find("int32[3]"), std::string::npos) << e;
  e = error_of([&] { (void)~x; });
  EXPECT_NE(e.find("bitwise_not"), std::string::npos) << e;
  e = error_of([&] { (void)(b << b); });
  EXPECT_NE(e.find("bitwise_left_shift"), std::string::npos) << e;
  e = error_of([&] { (void)(x >> 1); });
  EXPECT_NE(e.find("bitwise_right_shift"), std::string::npos) << e;
  e = error_of([&] { (void)lf::remainder(b, b); });
  EXPECT_NE(e.find("remainder"), std::string::npos) << e;
  e = error_of([&] { (void)lf::floor_divide(lf::ones({2}), lf::ones({3})); });
  EXPECT_NE(e.find("floor_divide: cannot broadcast"), std::string::npos) << e;
}

// Shape pairs: equal, broadcast, size 0, size 1, rank 0, and one long enough for many GPU blocks.
const std::vector<std::pair<Shape, Shape>> kShapes = {
    {{4, 5}, {4, 5}}, {{3, 1, 5}, {4, 5}}, {{0, 5}, {5}}, {{1}, {1}}, {{}, {6}}, {{300, 257}, {257}}};

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
struct NamedBinary {
  const char* name;
  BinaryFn fn;
  bool floats;  // defined on floats
  bool bools;   // defined on two bools
};
const NamedBinary kBinary[] = {
    {"remainder", [](const Tensor& a, const Tensor& b) { return lf::remainder(a, b); }, true, false},
    {"fmod", [](const Tensor& a, const Tensor& b) { return lf::fmod(a, b); }, true, false},
    {"floor_divide", [](const Tensor& a, const Tensor& b) { return lf::floor_divide(a, b); }, true, false},
    {"bitwise_and", [](const Tensor& a, const Tensor& b) { return a & b; }, false, true},
    {"bitwise_or", [](const Tensor& a, const Tensor& b) { return a | b; }, false, true},
    {"bitwise_xor", [](const Tensor& a, const Tensor& b) { return a ^ b; }, false, true},
    {"bitwise_left_shift", [](const Tensor& a, const Tensor& b) { return a << b; }, false, false},
    {"bitwise_right_shift", [](const Tensor& a, const Tensor& b) { return a >> b; }, false, false},
};

TEST(DivisionBitwise, EveryDtypeShapeAndViewMatchesTheReference) {
  uint32_t seed = 1;
  for (const NamedBinary& op : kBinary) {
    for (DType d : lf::test::all_dtypes()) {
      if (is_floating(d) && !op.floats) continue;
      if (d == DType::Bool && !op.bools) continue;
      for (const auto& [sa, sb] : kShapes) {
        // Shift amounts span past the width (-3..70); divisors include 0.
        int lim = std::string(op.name).find("shift") != std::string::npos ? 70 : 9;
        Tensor a = random_input(sa, d, seed++);
        Tensor b = random_input(sb, d, seed++, lim);
        expect_matches_reference([&] { return op.fn(a, b); }, std::string(op.name) + " " + lf::dtype_name(d));
        // Fused with its neighbours, over a transposed view.
        if (sa.size() == 2 && sa == sb) {
          Tensor at = lf::transpose(random_input({sa[1], sa[0]}, d, seed++), 0, 1);
          expect_matches_reference([&] { return op.fn(at, b); }, std::string(op.name) + " of a transpose");
        }
      }
      Tensor s = random_input({7, 3}, d, seed++);
      if (d != DType::Bool) {
        expect_matches_reference([&] { return op.fn(s, lf::full({}, 3, d)); }, std::string(op.name) + " by 3");
      }
    }
  }
  // Mixed dtypes promote first.
  Tensor i32 = random_input({6, 4}, DType::Int32, 90);
  Tensor i64 = random_input({4}, DType::Int64, 91);
  Tensor f16 = random_input({6, 4}, DType::Float16, 92);
  expect_matches_reference([&] { return lf::remainder(i32, i64) + lf::floor_divide(f16, i32); }, "mixed");
  expect_matches_reference([&] { return (i32 << 2) ^ (i64 & 6) | ~i32; }, "bitwise chain");
  expect_matches_reference([&] { return lf::fmod(f16, 1.5) * lf::remainder(-2, i32); }, "scalars");
}

}  // namespace
