// Reductions (sum mean prod max min argmax argmin var std logsumexp) against values computed by hand
// or in double in the test: all dims, some dims, negative dims, keepdim, strided inputs, empty
// inputs, NaN and inf, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "frontend/test_util.h"
#include "runtime/config.h"

namespace {

using lf::test::expect_error;
using lf::test::expect_close;
using lf::test::kNaN;
using lf::test::kInf;




// [[1, 2, 3], [4, 5, 6]]
lf::Tensor two_by_three() { return lf::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3}); }

// 0, 1, ..., 23 as [2, 3, 4], and the same values as a host array for computing expectations.
std::vector<double> iota24() {
  std::vector<double> v(24);
  for (int i = 0; i < 24; ++i) v[i] = i;
  return v;
}
lf::Tensor cube() { return lf::from_vector(std::vector<double>(iota24()), {2, 3, 4}); }

TEST(ReduceSum, AllDims) {
  lf::Tensor s = lf::sum(two_by_three());
  EXPECT_EQ(s.shape(), lf::Shape{});
  EXPECT_EQ(s.dtype(), lf::DType::Float32);
  EXPECT_EQ(s.item<float>(), 21.0f);
}

TEST(ReduceSum, OneDimPositiveAndNegative) {
  lf::Tensor x = two_by_three();
  expect_close(lf::sum(x, {0}), {5, 7, 9});
  expect_close(lf::sum(x, {1}), {6, 15});
  expect_close(lf::sum(x, {-1}), {6, 15});
  expect_close(lf::sum(x, {-2}), {5, 7, 9});
  EXPECT_EQ(lf::sum(x, {-1}).shape(), lf::Shape{2});
}

TEST(ReduceSum, Keepdim) {
  lf::Tensor x = two_by_three();
  lf::Tensor r = lf::sum(x, {1}, true);
  EXPECT_EQ(r.shape(), (lf::Shape{2, 1}));
  expect_close(r, {6, 15});
  lf::Tensor all = lf::sum(x, {}, true);
  EXPECT_EQ(all.shape(), (lf::Shape{1, 1}));
  expect_close(all, {21});
  EXPECT_EQ(lf::sum(x, {0}, true).shape(), (lf::Shape{1, 3}));
}

TEST(ReduceSum, SeveralDimsInAnyOrder) {
  std::vector<double> v = iota24();
  // Over dims 0 and 2 of [2, 3, 4]: one value per j.
  std::vector<double> want(3, 0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) want[j] += v[i * 12 + j * 4 + k];
  expect_close(lf::sum(cube(), {0, 2}), want);
  expect_close(lf::sum(cube(), {2, 0}), want);
  expect_close(lf::sum(cube(), {-1, -3}), want);
  EXPECT_EQ(lf::sum(cube(), {0, 2}, true).shape(), (lf::Shape{1, 3, 1}));
  // Over dims 0 and 1: one value per k.
  std::vector<double> want2(4, 0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) want2[k] += v[i * 12 + j * 4 + k];
  expect_close(lf::sum(cube(), {1, 0}), want2);
  expect_close(lf::sum(cube(), {0, 1, 2}), {276});
}

TEST(ReduceSum, NonContiguousInputs) {
  lf::Tensor x = two_by_three();
  lf::Tensor t = lf::transpose(x, 0, 1);  // [[1, 4], [2, 5], [3, 6]]
  expect_close(lf::sum(t, {0}), {6, 15});
  expect_close(lf::sum(t, {1}), {5, 7, 9});
  lf::Tensor s = lf::slice(x, 1, 0, 3, 2);  // [[1, 3], [4, 6]]
  expect_close(lf::sum(s, {1}), {4, 10});
  expect_close(lf::sum(s, {0}), {5, 9});
  // The same on a view that has been materialized (a strided buffer).
  lf::Tensor tm = lf::transpose(x * 1, 0, 1);
  lf::sync();
  ASSERT_TRUE(tm.is_materialized());
  expect_close(lf::sum(tm, {1}), {5, 7, 9});
  // Reduction over a permuted 3-D tensor, against a loop over the original.
  std::vector<double> v = iota24();
  lf::Tensor p = lf::permute(cube(), {2, 0, 1});  // [4, 2, 3], p[k, i, j] = v[i, j, k]
  std::vector<double> want(4 * 3, 0);          // sum over i: [k, j]
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) want[k * 3 + j] += v[i * 12 + j * 4 + k];
  expect_close(lf::sum(p, {1}), want);
}

TEST(ReduceSum, BroadcastInput) {
  lf::Tensor row = lf::from_vector(std::vector<float>{1, 2, 3}, {1, 3});
  lf::Tensor e = lf::expand(row, {4, 3});
  expect_close(lf::sum(e, {0}), {4, 8, 12});
  expect_close(lf::sum(e), {24});
}

TEST(ReduceSum, MaterializedBroadcastAndSlice) {
  // Views that were computed on their own: an expand (stride 0) and a row slice (an offset).
  lf::Tensor e = lf::expand(lf::from_vector(std::vector<float>{1, 2, 3}, {3, 1}), {3, 4});
  lf::Tensor s = lf::slice(cube(), 0, 1, 2);
  lf::sync();
  ASSERT_TRUE(e.is_materialized());
  expect_close(lf::sum(e, {1}), {4, 8, 12});
  expect_close(lf::sum(e, {0}), {6, 6, 6, 6});
  std::vector<double> v = iota24();
  std::vector<double> want(4, 0);
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 4; ++k) want[k] += v[12 + j * 4 + k];
  expect_close(lf::sum(s, {0, 1}), want);
}

TEST(ReduceSum, HalfPrecisionKeepsDtype) {
  lf::Tensor h = lf::from_vector(std::vector<float>{0.5, 1.5, 2, 4}, {4}).to(lf::DType::Float16);
  EXPECT_EQ(lf::sum(h).dtype(), lf::DType::Float16);
  EXPECT_EQ(lf::sum(h).item<float>(), 8.0f);
  EXPECT_EQ(lf::mean(h).dtype(), lf::DType::Float16);
  EXPECT_EQ(lf::mean(h).item<float>(), 2.0f);
  EXPECT_EQ(lf::max(h).item<float>(), 4.0f);
}

TEST(ReduceSum, PendingExpression) {
  lf::Tensor x = two_by_three();
  expect_close(lf::sum(x * 2 + 1, {1}), {15, 33});
}

TEST(ReduceSum, Empty) {
  lf::Tensor e = lf::zeros({0});
  EXPECT_EQ(lf::sum(e).item<float>(), 0.0f);
  lf::Tensor e2 = lf::zeros({2, 0});
  lf::Tensor r = lf::sum(e2, {1});
  EXPECT_EQ(r.shape(), lf::Shape{2});
  expect_close(r, {0, 0});
  lf::Tensor r0 = lf::sum(e2, {0});  // nothing left to produce
  EXPECT_EQ(r0.shape(), lf::Shape{0});
  EXPECT_TRUE(r0.to_vector<float>().empty());
  lf::Tensor e3 = lf::zeros({0, 3});
  expect_close(lf::sum(e3, {0}), {0, 0, 0});
  EXPECT_EQ(lf::sum(lf::zeros({0}, lf::DType::Int32)).dtype(), lf::DType::Int64);
  EXPECT_EQ(lf::sum(lf::zeros({0}, lf::DType::Int32)).item<int64_t>(), 0);
}

TEST(ReduceSum, IntegerSumsAreInt64) {
  lf::Tensor i32 = lf::from_vector(std::vector<int32_t>{2000000000, 2000000000, 1}, {3});
  lf::Tensor s = lf::sum(i32);
  EXPECT_EQ(s.dtype(), lf::DType::Int64);
  EXPECT_EQ(s.item<int64_t>(), 4000000001LL);  // overflows int32
  // Exact beyond 2^53, where a double accumulator would round.
  int64_t big = (int64_t{1} << 53) + 1;
  lf::Tensor i64 = lf::from_vector(std::vector<int64_t>{big, 1, 0}, {3});
  EXPECT_EQ(lf::sum(i64).item<int64_t>(), big + 1);
  lf::Tensor b = lf::from_vector(std::vector<bool>{true, false, true, true}, {2, 2});
  lf::Tensor bs = lf::sum(b, {1});
  EXPECT_EQ(bs.dtype(), lf::DType::Int64);
  EXPECT_EQ(bs.to_vector<int64_t>(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(lf::prod(i32.slice(0, 0, 2) - 1999999998).dtype(), lf::DType::Int64);
  EXPECT_EQ(lf::prod(lf::from_vector(std::vector<int32_t>{100000, 100000, 3}, {3})).item<int64_t>(),
            30000000000LL);
}

TEST(ReduceSum, Float64KeepsDtype) {
  lf::Tensor x = lf::from_vector(std::vector<double>{0.1, 0.2, 0.3}, {3});
  lf::Tensor s = lf::sum(x);
  EXPECT_EQ(s.dtype(), lf::DType::Float64);
  EXPECT_NEAR(s.item<double>(), 0.6, 1e-15);
}

TEST(ReduceSum, Rank0) {
  lf::Tensor x = lf::scalar(3.5);
  EXPECT_EQ(lf::sum(x).shape(), lf::Shape{});
  EXPECT_EQ(lf::sum(x).item<float>(), 3.5f);
  EXPECT_EQ(lf::sum(x, {0}).item<float>(), 3.5f);
  EXPECT_EQ(lf::sum(x, {-1}, true).shape(), lf::Shape{});
  expect_error([&] { lf::sum(x, {1}); }, {"sum", "dim 1"});
}

TEST(ReduceSum, NaNAndInf) {
  expect_close(lf::sum(lf::from_vector(std::vector<float>{1, NAN, 2}, {3})), {kNaN});
  expect_close(lf::sum(lf::from_vector(std::vector<float>{1, INFINITY, 2}, {3})), {kInf});
  expect_close(lf::sum(lf::from_vector(std::vector<float>{INFINITY, -INFINITY}, {2})), {kNaN});
}

TEST(ReduceSum, Errors) {
  lf::Tensor x = two_by_three();
  expect_error([&] { lf::sum(x, {2}); }, {"sum", "dim 2", "float32[2, 3]"});
  expect_error([&] { lf::sum(x, {-3}); }, {"sum", "dim -3", "[2, 3]"});
  expect_error([&] { lf::sum(x, {0, -2}); }, {"sum", "more than once", "[2, 3]"});
  expect_error([&] { lf::mean(x, {5}); }, {"mean", "dim 5"});
  expect_error([&] { lf::sum(lf::Tensor()); }, {"sum", "empty"});
}

TEST(ReduceProd, Values) {
  lf::Tensor x = lf::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(lf::prod(x).item<float>(), 24.0f);
  expect_close(lf::prod(x, {1}), {2, 12});
  expect_close(lf::prod(x, {0}), {3, 8});
  expect_close(lf::prod(x, {-1}, true), {2, 12});
  EXPECT_EQ(lf::prod(x, {-1}, true).shape(), (lf::Shape{2, 1}));
  expect_close(lf::prod(lf::transpose(x, 0, 1), {1}), {3, 8});
}

// A row with a 0 among values whose partial products overflow the dtype: the product is 0 (the
// reference accumulates in double), whichever lanes the partial products fall on; a real inf
// times the 0 is NaN.
TEST(ReduceProd, ZeroAmongOverflowingValuesIsZero) {
  for (lf::DType d : {lf::DType::Float32, lf::DType::BFloat16, lf::DType::Float16}) {
    for (int64_t zero_at : {0, 1, 5, 63}) {
      std::vector<float> v(64, 100.0f);  // 100^63 overflows float32, not double
      v[static_cast<size_t>(zero_at)] = 0;
      lf::Tensor x = lf::from_vector(v, {2, 32}).to(d);
      EXPECT_EQ(lf::prod(x).item<double>(), 0.0) << lf::dtype_name(d) << " zero at " << zero_at;
      EXPECT_EQ(lf::prod(lf::reshape(x, {64}), {0}).item<double>(), 0.0) << lf::dtype_name(d);
    }
    std::vector<float> w(64, 2.0f);
    w[3] = 0;
    w[40] = kInf;
    EXPECT_TRUE(std::isnan(lf::prod(lf::from_vector(w, {64}).to(d)).item<double>())) << lf::dtype_name(d);
  }
}

TEST(ReduceProd, EmptyIsOne) {
  EXPECT_EQ(lf::prod(lf::zeros({0})).item<float>(), 1.0f);
  expect_close(lf::prod(lf::zeros({3, 0}), {1}), {1, 1, 1});
  EXPECT_EQ(lf::prod(lf::zeros({0}, lf::DType::Int64)).item<int64_t>(), 1);
}

TEST(ReduceMean, Values) {
  lf::Tensor x = lf::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(lf::mean(x).item<float>(), 2.5f);
  expect_close(lf::mean(x, {0}), {2, 3});
  expect_close(lf::mean(x, {-1}), {1.5, 3.5});
  EXPECT_EQ(lf::mean(x, {-1}, true).shape(), (lf::Shape{2, 1}));
  std::vector<double> v = iota24();
  std::vector<double> want(3, 0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) want[j] += v[i * 12 + j * 4 + k] / 8;
  expect_close(lf::mean(cube(), {0, -1}), want, 1e-12);
  EXPECT_EQ(lf::mean(cube()).dtype(), lf::DType::Float64);
}

// A 16-bit mean sums and divides in float32 and rounds once, as PyTorch's: a float16 row whose sum
// passes 65504 (rounding the sum to float16 first gave inf), and bfloat16 sums beyond its 8 bits
// (257 ones sum to 256 in bfloat16: the mean was 0.996). Alone, fused with a producer and a
// consumer, and as a whole-tensor mean.
TEST(ReduceMean, SixteenBitMeansAccumulateInFloat32) {
  lf::Tensor h = lf::full({2, 100}, 1000.0, lf::DType::Float16);
  lf::Tensor b = lf::full({3, 257}, 1.0, lf::DType::BFloat16);
  EXPECT_EQ(lf::mean(h, {1}).dtype(), lf::DType::Float16);
  expect_close(lf::mean(h, {1}), {1000, 1000});
  expect_close(lf::mean(h * 2.0, {1}) - 1.0, {1999, 1999});
  EXPECT_EQ(lf::mean(h).item<float>(), 1000.0f);
  EXPECT_EQ(lf::mean(b, {1}).dtype(), lf::DType::BFloat16);
  expect_close(lf::mean(b, {1}), {1, 1, 1});
  expect_close(lf::mean(b - 0.5, {-1}, true) * 4.0, {2, 2, 2});
  EXPECT_EQ(lf::mean(b).item<float>(), 1.0f);
}

TEST(ReduceMean, EmptyIsNaN) {
  EXPECT_TRUE(std::isnan(lf::mean(lf::zeros({0})).item<float>()));
  expect_close(lf::mean(lf::zeros({2, 0}), {1}), {kNaN, kNaN});
  EXPECT_EQ(lf::mean(lf::zeros({0, 2}), {1}).shape(), lf::Shape{0});
}

TEST(ReduceMaxMin, Values) {
  lf::Tensor x = lf::from_vector(std::vector<float>{3, -1, 7, 2, 9, -5}, {2, 3});
  EXPECT_EQ(lf::max(x).item<float>(), 9.0f);
  EXPECT_EQ(lf::min(x).item<float>(), -5.0f);
  expect_close(lf::max(x, {0}), {3, 9, 7});
  expect_close(lf::min(x, {0}), {2, -1, -5});
  expect_close(lf::max(x, {-1}), {7, 9});
  expect_close(lf::min(x, {1}, true), {-1, -5});
  EXPECT_EQ(lf::min(x, {1}, true).shape(), (lf::Shape{2, 1}));
  // Over a transposed view.
  expect_close(lf::max(lf::transpose(x, 0, 1), {1}), {3, 9, 7});
  // Integers keep their dtype.
  lf::Tensor i = lf::from_vector(std::vector<int32_t>{4, -8, 6}, {3});
  EXPECT_EQ(lf::max(i).dtype(), lf::DType::Int32);
  EXPECT_EQ(lf::max(i).item<int32_t>(), 6);
  EXPECT_EQ(lf::min(i).item<int32_t>(), -8);
  lf::Tensor b = lf::from_vector(std::vector<bool>{false, true, false}, {3});
  EXPECT_EQ(lf::max(b).item<bool>(), true);
  EXPECT_EQ(lf::min(b).item<bool>(), false);
}

TEST(ReduceMaxMin, NaNPropagatesAndInf) {
  lf::Tensor x = lf::from_vector(std::vector<float>{1, NAN, 3, 4, 5, 6}, {2, 3});
  EXPECT_TRUE(std::isnan(lf::max(x).item<float>()));
  EXPECT_TRUE(std::isnan(lf::min(x).item<float>()));
  expect_close(lf::max(x, {1}), {kNaN, 6});
  expect_close(lf::min(x, {1}), {kNaN, 4});
  expect_close(lf::max(x, {0}), {4, kNaN, 6});
  // NaN first or last in the row.
  expect_close(lf::max(lf::from_vector(std::vector<float>{NAN, 1}, {2})), {kNaN});
  expect_close(lf::min(lf::from_vector(std::vector<float>{1, NAN}, {2})), {kNaN});
  lf::Tensor inf = lf::from_vector(std::vector<float>{-INFINITY, 1, INFINITY}, {3});
  expect_close(lf::max(inf), {kInf});
  expect_close(lf::min(inf), {-kInf});
  expect_close(lf::max(lf::from_vector(std::vector<float>{-INFINITY, -INFINITY}, {2})), {-kInf});
}

TEST(ReduceMaxMin, EmptyThrows) {
  expect_error([] { lf::max(lf::zeros({0})); }, {"max", "empty", "float32[0]"});
  expect_error([] { lf::min(lf::zeros({0})); }, {"min", "float32[0]"});
  expect_error([] { lf::max(lf::zeros({0, 3}), {0}); }, {"max", "[0, 3]"});
  expect_error([] { lf::min(lf::zeros({3, 0}), {-1}); }, {"min", "[3, 0]"});
  expect_error([] { lf::argmax(lf::zeros({0})); }, {"argmax", "[0]"});
  expect_error([] { lf::argmin(lf::zeros({2, 0}), {1}); }, {"argmin", "[2, 0]"});
  // Reducing a non-empty dim of an empty tensor is fine: the result is empty.
  lf::Tensor r = lf::max(lf::zeros({0, 3}), {1});
  EXPECT_EQ(r.shape(), lf::Shape{0});
  EXPECT_TRUE(r.to_vector<float>().empty());
}

TEST(ReduceArg, FirstOfTies) {
  lf::Tensor x = lf::from_vector(std::vector<float>{1, 3, 3, 2, 0, 0}, {6});
  lf::Tensor am = lf::argmax(x);
  EXPECT_EQ(am.dtype(), lf::DType::Int64);
  EXPECT_EQ(am.shape(), lf::Shape{});
  EXPECT_EQ(am.item<int64_t>(), 1);
  EXPECT_EQ(lf::argmin(x).item<int64_t>(), 4);
}

TEST(ReduceArg, AlongDims) {
  lf::Tensor x = lf::from_vector(std::vector<float>{1, 5, 2, 7, 0, 7}, {2, 3});
  EXPECT_EQ(lf::argmax(x, {1}).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(lf::argmax(x, {-1}).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(lf::argmax(x, {0}).to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(lf::argmin(x, {1}).to_vector<int64_t>(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(lf::argmin(x, {0}).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 0}));
  lf::Tensor k = lf::argmax(x, {1}, true);
  EXPECT_EQ(k.shape(), (lf::Shape{2, 1}));
  EXPECT_EQ(k.to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  // Over a transposed view: the index is along the view's dim.
  EXPECT_EQ(lf::argmax(lf::transpose(x, 0, 1), {0}).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  // Integer input.
  lf::Tensor i = lf::from_vector(std::vector<int64_t>{5, 9, 9, -1}, {2, 2});
  EXPECT_EQ(lf::argmax(i, {1}).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
}

TEST(ReduceArg, NoDimIsFlatIndex) {
  lf::Tensor x = lf::from_vector(std::vector<float>{1, 5, 2, 7, 0, 7}, {2, 3});
  EXPECT_EQ(lf::argmax(x).shape(), lf::Shape{});
  EXPECT_EQ(lf::argmax(x).item<int64_t>(), 3);
  EXPECT_EQ(lf::argmin(x).item<int64_t>(), 4);
  lf::Tensor k = lf::argmax(x, {}, true);
  EXPECT_EQ(k.shape(), (lf::Shape{1, 1}));  // PyTorch 2: keepdim with no dim keeps every dim as 1
  EXPECT_EQ(k.item<int64_t>(), 3);
  // The flat index is in the logical (row-major) order of a transposed view.
  lf::Tensor t = lf::transpose(x, 0, 1);  // [[1, 7], [5, 0], [2, 7]]
  EXPECT_EQ(lf::argmax(t).item<int64_t>(), 1);
  EXPECT_EQ(lf::argmin(t).item<int64_t>(), 3);
  EXPECT_EQ(lf::argmax(lf::scalar(2.0)).item<int64_t>(), 0);
}

TEST(ReduceArg, NaNWinsFirst) {
  lf::Tensor x = lf::from_vector(std::vector<float>{1, NAN, 5, NAN}, {4});
  EXPECT_EQ(lf::argmax(x).item<int64_t>(), 1);
  EXPECT_EQ(lf::argmin(x).item<int64_t>(), 1);
  lf::Tensor y = lf::from_vector(std::vector<float>{9, 1, 2, NAN, 3, 4}, {2, 3});
  EXPECT_EQ(lf::argmax(y, {1}).to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(lf::argmin(y, {1}).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  lf::Tensor inf = lf::from_vector(std::vector<float>{0, INFINITY, -INFINITY}, {3});
  EXPECT_EQ(lf::argmax(inf).item<int64_t>(), 1);
  EXPECT_EQ(lf::argmin(inf).item<int64_t>(), 2);
}

TEST(ReduceArg, Errors) {
  lf::Tensor x = two_by_three();
  expect_error([&] { lf::argmax(x, {0, 1}); }, {"argmax", "one dim", "[2, 3]"});
  expect_error([&] { lf::argmin(x, {2}); }, {"argmin", "dim 2", "[2, 3]"});
}

// var and std against a two-pass computation in double.
std::vector<double> var_rows(const std::vector<double>& v, int rows, int cols, int correction) {
  std::vector<double> out;
  for (int r = 0; r < rows; ++r) {
    double m = 0;
    for (int c = 0; c < cols; ++c) m += v[r * cols + c] / cols;
    double ss = 0;
    for (int c = 0; c < cols; ++c) ss += (v[r * cols + c] - m) * (v[r * cols + c] - m);
    out.push_back(ss / (cols - correction));
  }
  return out;
}

TEST(ReduceVar, Values) {
  lf::Tensor x = lf::from_vector(std::vector<float>{1, 2, 3, 4}, {4});
  EXPECT_NEAR(lf::var(x).item<float>(), 5.0 / 3, 1e-6);
  EXPECT_NEAR(lf::var(x, {}, false, 0).item<float>(), 1.25, 1e-6);
  EXPECT_NEAR(lf::var(x, {}, false, 2).item<float>(), 2.5, 1e-6);
  EXPECT_NEAR(lf::std(x).item<float>(), std::sqrt(5.0 / 3), 1e-6);
  EXPECT_NEAR(lf::std(x, {0}, false, 0).item<float>(), std::sqrt(1.25), 1e-6);
  std::vector<double> v = {2, 9, -3, 4.5, 0.25, 7, 1, 1, 1, 8, -8, 0};
  lf::Tensor m = lf::from_vector(std::vector<double>(v), {3, 4});
  expect_close(lf::var(m, {1}), var_rows(v, 3, 4, 1), 1e-12);
  expect_close(lf::var(m, {-1}, true, 0), var_rows(v, 3, 4, 0), 1e-12);
  EXPECT_EQ(lf::var(m, {-1}, true).shape(), (lf::Shape{3, 1}));
  // Along dim 0: the rows of the transpose.
  std::vector<double> vt(12);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) vt[c * 3 + r] = v[r * 4 + c];
  expect_close(lf::var(m, {0}), var_rows(vt, 4, 3, 1), 1e-12);
  std::vector<double> sd = var_rows(vt, 4, 3, 1);
  for (double& s : sd) s = std::sqrt(s);
  expect_close(lf::std(m, {0}), sd, 1e-12);
  expect_close(lf::var(lf::transpose(m, 0, 1), {1}), var_rows(vt, 4, 3, 1), 1e-12);
}

TEST(ReduceVar, CorrectionAboveCount) {
  // PyTorch divides by max(0, n - correction): a positive sum over 0 is inf.
  EXPECT_EQ(lf::var(lf::from_vector(std::vector<float>{1, 3}, {2}), {}, false, 3).item<float>(), INFINITY);
}

TEST(ReduceVar, StableForLargeOffset) {
  lf::Tensor x = lf::from_vector(std::vector<float>{10001, 10002, 10003}, {3});
  EXPECT_NEAR(lf::var(x).item<float>(), 1.0, 1e-3);
}

TEST(ReduceVar, TooFewValues) {
  EXPECT_TRUE(std::isnan(lf::var(lf::from_vector(std::vector<float>{3}, {1})).item<float>()));  // 0 / 0
  EXPECT_EQ(lf::var(lf::from_vector(std::vector<float>{3}, {1}), {}, false, 0).item<float>(), 0.0f);
  EXPECT_TRUE(std::isnan(lf::var(lf::zeros({0})).item<float>()));
  EXPECT_TRUE(std::isnan(lf::std(lf::zeros({2, 0}), {1}).to_vector<float>()[1]));
  expect_error([] { lf::var(lf::zeros({3}), {}, false, -1); }, {"var", "correction"});
}

TEST(ReduceLogsumexp, Values) {
  lf::Tensor x = lf::from_vector(std::vector<float>{1, 2, 3, -1, 0, 0.5f}, {2, 3});
  double r0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  double r1 = std::log(std::exp(-1.0) + std::exp(0.0) + std::exp(0.5));
  expect_close(lf::logsumexp(x, {1}), {r0, r1}, 1e-6);
  expect_close(lf::logsumexp(x, {-1}, true), {r0, r1}, 1e-6);
  EXPECT_EQ(lf::logsumexp(x, {-1}, true).shape(), (lf::Shape{2, 1}));
  double c0 = std::log(std::exp(1.0) + std::exp(-1.0));
  double c1 = std::log(std::exp(2.0) + std::exp(0.0));
  double c2 = std::log(std::exp(3.0) + std::exp(0.5));
  expect_close(lf::logsumexp(x, {0}), {c0, c1, c2}, 1e-6);
  double all = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0) + std::exp(-1.0) + 1 + std::exp(0.5));
  expect_close(lf::logsumexp(x), {all}, 1e-6);
  EXPECT_EQ(lf::logsumexp(x).shape(), lf::Shape{});
}

TEST(ReduceLogsumexp, LargeValuesDoNotOverflow) {
  lf::Tensor x = lf::from_vector(std::vector<float>{1000, 1000, -1000, -1000}, {2, 2});
  expect_close(lf::logsumexp(x, {1}), {1000 + std::log(2.0), -1000 + std::log(2.0)}, 1e-6);
}

TEST(ReduceLogsumexp, Infinities) {
  lf::Tensor x = lf::from_vector(std::vector<float>{-INFINITY, -INFINITY,  // all -inf: -inf
                                                     -INFINITY, 0,           // log(1) = 0
                                                     INFINITY, 1,            // inf
                                                     INFINITY, -INFINITY,    // inf
                                                     NAN, 1},                // nan
                                 {5, 2});
  expect_close(lf::logsumexp(x, {1}), {-kInf, 0, kInf, kInf, kNaN});
  // Empty: log(0).
  expect_close(lf::logsumexp(lf::zeros({0})), {-kInf});
  expect_close(lf::logsumexp(lf::zeros({2, 0}), {1}), {-kInf, -kInf});
}

TEST(ReduceMembers, ForwardToFreeFunctions) {
  lf::Tensor x = lf::from_vector(std::vector<float>{3, -1, 7, 2, 9, -5}, {2, 3});
  expect_close(x.sum({1}), {9, 6});
  expect_close(x.sum(), {15});
  EXPECT_EQ(x.sum({0}, true).shape(), (lf::Shape{1, 3}));
  expect_close(x.mean({0}), {2.5, 4, 1});
  expect_close(x.prod({1}), {-21, -90});
  expect_close(x.max({0}, true), {3, 9, 7});
  expect_close(x.min(), {-5});
  EXPECT_EQ(x.argmax({1}).to_vector<int64_t>(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(x.argmin().item<int64_t>(), 5);
  expect_close(x.var({0}, false, 0), {0.25, 25, 36});
  expect_close(x.std({0}, false, 0), {0.5, 5, 6});
  expect_close(x.logsumexp({0}), {std::log(std::exp(3.0) + std::exp(2.0)), std::log(std::exp(-1.0) + std::exp(9.0)),
                                   std::log(std::exp(7.0) + std::exp(-5.0))});
}


// A read stores every pending value a handle holds. The Tensor&& forms release a temporary
// argument's handle, so `lf::sum(x * x).item<float>()` reads x once and stores nothing but the
// sum, while a named product is still stored.
TEST(ReduceSemantics, ATemporaryArgumentIsNotStoredByARead) {
  if (!lf::rt::config().fusion) GTEST_SKIP() << "fusion is off";
  // Below fuse::kFewRowsMinElements: a GPU splits a longer single row over blocks, and the split
  // stores a multi-reduction's element work for its reductions to read (a cost of the few-rows
  // rule, measured in bench/few_rows.cpp), which is not what this test is about.
  const int64_t n = 1 << 12;
  lf::Tensor x = lf::randn({n});
  lf::sync();
  const uint64_t input_bytes = 4 * n;

  lf::reset_stats();
  float free_form = lf::sum(x * x).item<float>();
  EXPECT_LT(lf::cache_stats().bytes_moved, input_bytes + 1024) << "the product was stored";

  lf::reset_stats();
  float member_form = (x * x).sum().item<float>();
  EXPECT_LT(lf::cache_stats().bytes_moved, input_bytes + 1024) << "the product was stored";

  for (auto reduce : std::vector<std::function<lf::Tensor(lf::Tensor&&)>>{
           [](lf::Tensor&& t) { return lf::mean(std::move(t)); }, [](lf::Tensor&& t) { return lf::max(std::move(t)); },
           [](lf::Tensor&& t) { return lf::var(std::move(t)); }, [](lf::Tensor&& t) { return lf::logsumexp(std::move(t)); },
           [](lf::Tensor&& t) { return std::move(t).std(); }, [](lf::Tensor&& t) { return std::move(t).argmin(); }}) {
    lf::reset_stats();
    (void)reduce(x * 2).item<double>();  // the read is in the temporary's full expression
    EXPECT_LT(lf::cache_stats().bytes_moved, 2 * input_bytes + 1024) << "the product was stored";
  }

  lf::reset_stats();
  lf::Tensor product = x * x;  // named: held, so the read stores it
  float named = lf::sum(product).item<float>();
  EXPECT_TRUE(product.is_materialized());
  EXPECT_GE(lf::cache_stats().bytes_moved, 2 * input_bytes);
  EXPECT_FLOAT_EQ(free_form, named);
  EXPECT_FLOAT_EQ(member_form, named);
}

}  // namespace
