// Views (reshape flatten transpose permute slice expand squeeze unsqueeze contiguous) and cat,
// against index arithmetic done in the test: negative dims, strided and chained views, views of
// pending and of materialized values, size-0 results, and the errors.
#include <gtest/gtest.h>

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


std::vector<float> iota(int n, float start = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}
// 0..n-1 as float32 of `shape`.
lf::Tensor range(const lf::Shape& shape) {
  return lf::from_vector(iota(static_cast<int>(lf::shape_numel(shape))), shape);
}

using F = std::vector<float>;

TEST(ViewReshape, Basic) {
  lf::Tensor x = range({6});
  lf::Tensor r = lf::reshape(x, {2, 3});
  EXPECT_EQ(r.shape(), (lf::Shape{2, 3}));
  EXPECT_EQ(r.to_vector<float>(), iota(6));
  EXPECT_EQ(lf::reshape(x, {-1, 2}).shape(), (lf::Shape{3, 2}));
  EXPECT_EQ(lf::reshape(x, {3, -1}).shape(), (lf::Shape{3, 2}));
  EXPECT_EQ(lf::reshape(x, {1, -1, 1}).shape(), (lf::Shape{1, 6, 1}));
  EXPECT_EQ(lf::reshape(x, {6}).shape(), lf::Shape{6});
  EXPECT_EQ(x.reshape({3, 2}).to_vector<float>(), iota(6));
  lf::Tensor one = lf::from_vector(F{4}, {1, 1});
  EXPECT_EQ(lf::reshape(one, {}).shape(), lf::Shape{});
  EXPECT_EQ(lf::reshape(one, {}).item<float>(), 4.0f);
  EXPECT_EQ(lf::reshape(lf::scalar(2), {1, 1, 1}).shape(), (lf::Shape{1, 1, 1}));
}

TEST(ViewReshape, NonContiguousInputIsReadInLogicalOrder) {
  lf::Tensor t = lf::transpose(range({2, 3}), 0, 1);  // [[0, 3], [1, 4], [2, 5]]
  EXPECT_EQ(lf::reshape(t, {6}).to_vector<float>(), (F{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(lf::reshape(t, {2, 3}).to_vector<float>(), (F{0, 3, 1, 4, 2, 5}));
  lf::Tensor s = lf::slice(range({4, 2}), 0, 1, 4, 2);  // rows 1 and 3
  EXPECT_EQ(lf::reshape(s, {-1}).to_vector<float>(), (F{2, 3, 6, 7}));
}

TEST(ViewReshape, Empty) {
  lf::Tensor e = lf::zeros({0, 3});
  EXPECT_EQ(lf::reshape(e, {3, 0}).shape(), (lf::Shape{3, 0}));
  EXPECT_EQ(lf::reshape(e, {3, -1}).shape(), (lf::Shape{3, 0}));
  EXPECT_EQ(lf::reshape(e, {-1}).shape(), lf::Shape{0});
  expect_error([&] { lf::reshape(e, {0, -1}); }, {"reshape", "-1", "[0, 3]"});
}

TEST(ViewReshape, Errors) {
  lf::Tensor x = range({2, 3});
  expect_error([&] { lf::reshape(x, {4, 2}); }, {"reshape", "[4, 2]", "6", "float32[2, 3]"});
  expect_error([&] { lf::reshape(x, {-1, -1}); }, {"reshape", "-1", "[2, 3]"});
  expect_error([&] { lf::reshape(x, {-1, 4}); }, {"reshape", "[-1, 4]", "[2, 3]"});
  expect_error([&] { lf::reshape(x, {-2, -3}); }, {"reshape", "negative", "[2, 3]"});
  expect_error([&] { lf::reshape(x, {3, -2}); }, {"reshape", "negative"});
  expect_error([&] { lf::reshape(lf::Tensor(), {1}); }, {"reshape"});
}

TEST(ViewFlatten, RowMajorOfTheView) {
  EXPECT_EQ(lf::flatten(range({2, 3})).shape(), lf::Shape{6});
  EXPECT_EQ(lf::flatten(lf::transpose(range({2, 3}), 0, 1)).to_vector<float>(), (F{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(range({2, 1, 2}).flatten().to_vector<float>(), (F{0, 1, 2, 3}));
  EXPECT_EQ(lf::flatten(lf::scalar(5)).shape(), lf::Shape{1});  // like torch.flatten
  EXPECT_EQ(lf::flatten(lf::zeros({2, 0})).shape(), lf::Shape{0});
}

TEST(ViewTranspose, Values) {
  lf::Tensor x = range({2, 3});
  lf::Tensor t = lf::transpose(x, 0, 1);
  EXPECT_EQ(t.shape(), (lf::Shape{3, 2}));
  EXPECT_EQ(t.to_vector<float>(), (F{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(lf::transpose(x, -1, -2).to_vector<float>(), (F{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(lf::transpose(x, 1, 1).to_vector<float>(), iota(6));
  EXPECT_EQ(x.transpose(1, 0).transpose(0, 1).to_vector<float>(), iota(6));
  EXPECT_EQ(lf::transpose(lf::scalar(3), 0, -1).item<float>(), 3.0f);
  // 3-D: swap the outer two dims of [2, 3, 2]; t[j, i, k] = x[i, j, k].
  lf::Tensor c = lf::transpose(range({2, 3, 2}), 0, 1);
  EXPECT_EQ(c.shape(), (lf::Shape{3, 2, 2}));
  F want;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 2; ++k) want.push_back(static_cast<float>(i * 6 + j * 2 + k));
  EXPECT_EQ(c.to_vector<float>(), want);
}

TEST(ViewTranspose, Errors) {
  lf::Tensor x = range({2, 3});
  expect_error([&] { lf::transpose(x, 0, 2); }, {"transpose", "dim 2", "[2, 3]"});
  expect_error([&] { lf::transpose(x, -3, 0); }, {"transpose", "dim -3"});
  expect_error([&] { lf::transpose(lf::scalar(1), 0, 1); }, {"transpose", "dim 1"});
}

TEST(ViewPermute, Values) {
  lf::Tensor x = range({2, 3, 4});
  lf::Tensor p = lf::permute(x, {2, 0, 1});
  EXPECT_EQ(p.shape(), (lf::Shape{4, 2, 3}));
  F want;
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) want.push_back(static_cast<float>(i * 12 + j * 4 + k));
  EXPECT_EQ(p.to_vector<float>(), want);
  EXPECT_EQ(lf::permute(x, {-1, 0, -2}).to_vector<float>(), want);
  EXPECT_EQ(x.permute({0, 1, 2}).to_vector<float>(), iota(24));
  // Permuting back gives the original order.
  EXPECT_EQ(lf::permute(p, {1, 2, 0}).to_vector<float>(), iota(24));
}

TEST(ViewPermute, Errors) {
  lf::Tensor x = range({2, 3, 4});
  expect_error([&] { lf::permute(x, {0, 1}); }, {"permute", "3 dims", "[2, 3, 4]"});
  expect_error([&] { lf::permute(x, {0, 1, 1}); }, {"permute", "more than once"});
  expect_error([&] { lf::permute(x, {0, -2, 1}); }, {"permute", "more than once"});
  expect_error([&] { lf::permute(x, {0, 1, 3}); }, {"permute", "dim 3"});
}

TEST(ViewSlice, PythonBounds) {
  lf::Tensor x = range({10});
  EXPECT_EQ(lf::slice(x, 0, 2, 5).to_vector<float>(), (F{2, 3, 4}));
  EXPECT_EQ(lf::slice(x, 0, -3, 10).to_vector<float>(), (F{7, 8, 9}));
  EXPECT_EQ(lf::slice(x, 0, 7, -1).to_vector<float>(), (F{7, 8}));
  EXPECT_EQ(lf::slice(x, 0, -100, 2).to_vector<float>(), (F{0, 1}));
  EXPECT_EQ(lf::slice(x, 0, 8, 100).to_vector<float>(), (F{8, 9}));
  EXPECT_EQ(lf::slice(x, -1, -100, 100).to_vector<float>(), iota(10));
  EXPECT_EQ(lf::slice(x, 0, 1, 10, 3).to_vector<float>(), (F{1, 4, 7}));
  EXPECT_EQ(lf::slice(x, 0, 0, -1, 2).to_vector<float>(), (F{0, 2, 4, 6, 8}));
  EXPECT_EQ(lf::slice(x, 0, 1, 100, 4).to_vector<float>(), (F{1, 5, 9}));
  EXPECT_EQ(lf::slice(x, 0, 9, 10, 5).to_vector<float>(), (F{9}));
  EXPECT_EQ(x.slice(0, 3, 4).to_vector<float>(), (F{3}));
}

TEST(ViewSlice, EmptyResults) {
  lf::Tensor x = range({10});
  EXPECT_EQ(lf::slice(x, 0, 5, 2).shape(), lf::Shape{0});
  EXPECT_EQ(lf::slice(x, 0, 5, 5).shape(), lf::Shape{0});
  EXPECT_EQ(lf::slice(x, 0, 20, 30).shape(), lf::Shape{0});
  EXPECT_EQ(lf::slice(x, 0, -1, -2).shape(), lf::Shape{0});
  EXPECT_TRUE(lf::slice(x, 0, 20, 30).to_vector<float>().empty());
  lf::Tensor m = lf::slice(range({3, 4}), 1, 4, 4);
  EXPECT_EQ(m.shape(), (lf::Shape{3, 0}));
  EXPECT_TRUE(m.to_vector<float>().empty());
  // An empty slice used in arithmetic and reductions.
  EXPECT_EQ((m + 1).shape(), (lf::Shape{3, 0}));
  EXPECT_EQ(lf::sum(m, {1}).to_vector<float>(), (F{0, 0, 0}));
}

TEST(ViewSlice, AlongEachDim) {
  lf::Tensor x = range({3, 4});
  EXPECT_EQ(lf::slice(x, 0, 1, 3).to_vector<float>(), (F{4, 5, 6, 7, 8, 9, 10, 11}));
  EXPECT_EQ(lf::slice(x, 1, 1, 3).to_vector<float>(), (F{1, 2, 5, 6, 9, 10}));
  EXPECT_EQ(lf::slice(x, -1, -1, 4).to_vector<float>(), (F{3, 7, 11}));
  EXPECT_EQ(lf::slice(x, -2, 0, 3, 2).to_vector<float>(), (F{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(lf::slice(x, 1, 0, 4, 3).shape(), (lf::Shape{3, 2}));
  EXPECT_EQ(lf::slice(x, 1, 0, 4, 3).to_vector<float>(), (F{0, 3, 4, 7, 8, 11}));
}

TEST(ViewSlice, OfSliceAndOfTranspose) {
  lf::Tensor x = range({10});
  lf::Tensor s = lf::slice(lf::slice(x, 0, 1, 10, 2), 0, 1, 4, 2);  // [1, 3, 5, 7, 9] -> [3, 7]
  EXPECT_EQ(s.to_vector<float>(), (F{3, 7}));
  lf::Tensor t = lf::transpose(range({3, 4}), 0, 1);  // [4, 3]: t[i, j] = 4 j + i
  EXPECT_EQ(lf::slice(t, 0, 1, 4, 2).to_vector<float>(), (F{1, 5, 9, 3, 7, 11}));
  EXPECT_EQ(lf::slice(t, 1, 2, 3).to_vector<float>(), (F{8, 9, 10, 11}));
}

TEST(ViewSlice, Errors) {
  lf::Tensor x = range({3, 4});
  expect_error([&] { lf::slice(x, 0, 0, 2, 0); }, {"slice", "step", "[3, 4]"});
  expect_error([&] { lf::slice(x, 0, 2, 0, -1); }, {"slice", "step"});
  expect_error([&] { lf::slice(x, 2, 0, 1); }, {"slice", "dim 2", "[3, 4]"});
  expect_error([&] { lf::slice(lf::scalar(1), 0, 0, 1); }, {"slice", "rank-0"});
}

TEST(ViewExpand, Values) {
  lf::Tensor row = lf::from_vector(F{1, 2, 3}, {3});
  lf::Tensor e = lf::expand(row, {2, 3});
  EXPECT_EQ(e.shape(), (lf::Shape{2, 3}));
  EXPECT_EQ(e.to_vector<float>(), (F{1, 2, 3, 1, 2, 3}));
  lf::Tensor col = lf::from_vector(F{1, 2, 3}, {3, 1});
  EXPECT_EQ(lf::expand(col, {3, 2}).to_vector<float>(), (F{1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(lf::expand(col, {-1, 2}).to_vector<float>(), (F{1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(lf::expand(col, {2, -1, 2}).shape(), (lf::Shape{2, 3, 2}));
  EXPECT_EQ(lf::expand(col, {2, -1, 2}).to_vector<float>(), (F{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(col.expand({3, 1}).to_vector<float>(), (F{1, 2, 3}));
  EXPECT_EQ(lf::expand(lf::scalar(7), {2, 2}).to_vector<float>(), (F{7, 7, 7, 7}));
  // A size-1 dim may expand to 0.
  lf::Tensor z = lf::expand(col, {3, 0});
  EXPECT_EQ(z.shape(), (lf::Shape{3, 0}));
  EXPECT_TRUE(z.to_vector<float>().empty());
  // Expand then arithmetic and a reduction.
  EXPECT_EQ(lf::sum(lf::expand(col, {3, 4}) * 2, {1}).to_vector<float>(), (F{8, 16, 24}));
}

TEST(ViewExpand, Errors) {
  lf::Tensor x = lf::from_vector(F{1, 2, 3}, {3});
  expect_error([&] { lf::expand(x, {2}); }, {"expand", "size 3", "float32[3]"});
  expect_error([&] { lf::expand(x, {2, 4}); }, {"expand", "[3]"});
  expect_error([&] { lf::expand(range({2, 3}), {3}); }, {"expand", "fewer dims", "[2, 3]"});
  expect_error([&] { lf::expand(x, {-1, 3}); }, {"expand", "-1", "[3]"});
  expect_error([&] { lf::expand(x, {-2, 3}); }, {"expand", "negative"});
}

TEST(ViewSqueezeUnsqueeze, Shapes) {
  lf::Tensor x = range({1, 3});
  EXPECT_EQ(lf::squeeze(x, 0).shape(), lf::Shape{3});
  EXPECT_EQ(lf::squeeze(x, -2).shape(), lf::Shape{3});
  EXPECT_EQ(lf::squeeze(x, 1).shape(), (lf::Shape{1, 3}));  // not size 1: no-op, like PyTorch
  EXPECT_EQ(lf::squeeze(x, 0).to_vector<float>(), (F{0, 1, 2}));
  EXPECT_EQ(lf::squeeze(range({3, 1}), -1).shape(), lf::Shape{3});
  EXPECT_EQ(lf::squeeze(lf::scalar(1), 0).shape(), lf::Shape{});
  EXPECT_EQ(lf::squeeze(lf::zeros({1, 0}), 0).shape(), lf::Shape{0});
  EXPECT_EQ(x.squeeze(0).unsqueeze(1).shape(), (lf::Shape{3, 1}));

  lf::Tensor v = range({3});
  EXPECT_EQ(lf::unsqueeze(v, 0).shape(), (lf::Shape{1, 3}));
  EXPECT_EQ(lf::unsqueeze(v, 1).shape(), (lf::Shape{3, 1}));
  EXPECT_EQ(lf::unsqueeze(v, -1).shape(), (lf::Shape{3, 1}));
  EXPECT_EQ(lf::unsqueeze(v, -2).shape(), (lf::Shape{1, 3}));
  EXPECT_EQ(lf::unsqueeze(lf::scalar(1), 0).shape(), lf::Shape{1});
  EXPECT_EQ(lf::unsqueeze(v, 1).to_vector<float>(), (F{0, 1, 2}));
  // Of a transposed view: values stay in logical order.
  lf::Tensor t = lf::transpose(range({2, 3}), 0, 1);
  EXPECT_EQ(lf::unsqueeze(t, 1).shape(), (lf::Shape{3, 1, 2}));
  EXPECT_EQ(lf::unsqueeze(t, 1).to_vector<float>(), (F{0, 3, 1, 4, 2, 5}));
}

TEST(ViewSqueezeUnsqueeze, Errors) {
  lf::Tensor v = range({3});
  expect_error([&] { lf::unsqueeze(v, 2); }, {"unsqueeze", "dim 2", "[3]"});
  expect_error([&] { lf::unsqueeze(v, -3); }, {"unsqueeze", "dim -3"});
  expect_error([&] { lf::squeeze(v, 1); }, {"squeeze", "dim 1", "[3]"});
}

TEST(ViewContiguous, Values) {
  lf::Tensor x = range({2, 3});
  lf::Tensor t = lf::transpose(x, 0, 1);
  lf::Tensor c = lf::contiguous(t);
  EXPECT_EQ(c.shape(), (lf::Shape{3, 2}));
  EXPECT_EQ(c.to_vector<float>(), (F{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(x.contiguous().to_vector<float>(), iota(6));
  // A materialized strided view made contiguous.
  lf::Tensor tm = lf::transpose(x * 1, 0, 1);
  lf::sync();
  EXPECT_EQ(lf::contiguous(tm).to_vector<float>(), (F{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(lf::contiguous(lf::slice(tm, 0, 1, 3)).to_vector<float>(), (F{1, 4, 2, 5}));
}

TEST(ViewChained, MatchesIndexArithmetic) {
  // reshape [24] -> [2, 3, 4], permute to [3, 2, 4], take every other element of the last dim
  // starting at 1, reshape to [3, 4], transpose to [4, 3].
  lf::Tensor y = range({24}).reshape({2, 3, 4}).permute({1, 0, 2}).slice(2, 1, 4, 2).reshape({3, 4}).transpose(0, 1);
  EXPECT_EQ(y.shape(), (lf::Shape{4, 3}));
  // Before the final transpose, element [j, i, k'] = i*12 + j*4 + (1 + 2k'), flattened as j, (i, k').
  std::vector<float> before;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 2; ++k) before.push_back(static_cast<float>(i * 12 + j * 4 + 1 + 2 * k));
  F want;
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 3; ++r) want.push_back(before[r * 4 + c]);
  EXPECT_EQ(y.to_vector<float>(), want);
  // The same chain of views feeding arithmetic.
  std::vector<float> want2 = want;
  for (float& w : want2) w = w * 2 - 1;
  EXPECT_EQ((y * 2 - 1).to_vector<float>(), want2);
}

TEST(ViewChained, OfPendingAndMaterializedValues) {
  lf::Tensor x = range({2, 3});
  lf::Tensor pending = x * 10;  // not computed yet
  ASSERT_FALSE(pending.is_materialized());
  lf::Tensor tp = lf::transpose(pending, 0, 1);
  EXPECT_EQ(tp.to_vector<float>(), (F{0, 30, 10, 40, 20, 50}));

  lf::Tensor done = x * 10;
  done.to_vector<float>();
  ASSERT_TRUE(done.is_materialized());
  EXPECT_EQ(lf::transpose(done, 0, 1).to_vector<float>(), (F{0, 30, 10, 40, 20, 50}));
  EXPECT_EQ(lf::slice(done, 1, 1, 3).to_vector<float>(), (F{10, 20, 40, 50}));
  EXPECT_EQ(lf::expand(lf::slice(done, 0, 1, 2), {3, 3}).to_vector<float>(),
            (F{30, 40, 50, 30, 40, 50, 30, 40, 50}));

  // A materialized row slice starts at an offset into its storage.
  lf::Tensor row = lf::slice(done, 0, 1, 2);
  row.to_vector<float>();
  EXPECT_EQ(lf::reshape(row, {3}).to_vector<float>(), (F{30, 40, 50}));
  EXPECT_EQ(lf::cat({row, row}, 0).to_vector<float>(), (F{30, 40, 50, 30, 40, 50}));

  // A view materialized on its own, then viewed again and used in arithmetic.
  lf::Tensor tv = lf::transpose(x, 0, 1);
  tv.to_vector<float>();
  EXPECT_EQ(lf::slice(tv, 0, 1, 3).to_vector<float>(), (F{1, 4, 2, 5}));
  EXPECT_EQ(lf::reshape(tv, {6}).to_vector<float>(), (F{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ((tv + lf::from_vector(F{100, 200}, {2})).to_vector<float>(), (F{100, 203, 101, 204, 102, 205}));
  // The original is unchanged by all of the above.
  EXPECT_EQ(x.to_vector<float>(), iota(6));
}

TEST(ViewCat, AlongEachDim) {
  lf::Tensor a = range({2, 2});                      // [[0, 1], [2, 3]]
  lf::Tensor b = lf::from_vector(F{10, 11}, {1, 2});  // [[10, 11]]
  lf::Tensor c0 = lf::cat({a, b}, 0);
  EXPECT_EQ(c0.shape(), (lf::Shape{3, 2}));
  EXPECT_EQ(c0.to_vector<float>(), (F{0, 1, 2, 3, 10, 11}));
  EXPECT_EQ(lf::cat({b, a}, -2).to_vector<float>(), (F{10, 11, 0, 1, 2, 3}));
  lf::Tensor col = lf::from_vector(F{10, 11}, {2, 1});
  lf::Tensor c1 = lf::cat({a, col}, 1);
  EXPECT_EQ(c1.shape(), (lf::Shape{2, 3}));
  EXPECT_EQ(c1.to_vector<float>(), (F{0, 1, 10, 2, 3, 11}));
  EXPECT_EQ(lf::cat({col, a, col}, -1).to_vector<float>(), (F{10, 0, 1, 10, 11, 2, 3, 11}));
  // 3-D, middle dim.
  lf::Tensor p = range({2, 1, 2});
  lf::Tensor q = lf::from_vector(F{-1, -2, -3, -4}, {2, 1, 2});
  EXPECT_EQ(lf::cat({p, q}, 1).to_vector<float>(), (F{0, 1, -1, -2, 2, 3, -3, -4}));
  EXPECT_EQ(lf::cat({p, q}, 1).shape(), (lf::Shape{2, 2, 2}));
  EXPECT_EQ(lf::cat({lf::from_vector(F{1}, {1}), lf::from_vector(F{2, 3}, {2})}, 0).to_vector<float>(), (F{1, 2, 3}));
}

TEST(ViewCat, PromotesDtypes) {
  lf::Tensor i = lf::from_vector(std::vector<int32_t>{1, 2}, {2});
  lf::Tensor f = lf::from_vector(F{0.5f}, {1});
  lf::Tensor l = lf::from_vector(std::vector<int64_t>{int64_t{1} << 40}, {1});
  lf::Tensor b = lf::from_vector(std::vector<bool>{true}, {1});
  lf::Tensor d = lf::from_vector(std::vector<double>{0.25}, {1});
  lf::Tensor if_ = lf::cat({i, f}, 0);
  EXPECT_EQ(if_.dtype(), lf::DType::Float32);
  EXPECT_EQ(if_.to_vector<float>(), (F{1, 2, 0.5f}));
  lf::Tensor il = lf::cat({i, l}, 0);
  EXPECT_EQ(il.dtype(), lf::DType::Int64);
  EXPECT_EQ(il.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, int64_t{1} << 40}));
  lf::Tensor bi = lf::cat({b, i}, 0);
  EXPECT_EQ(bi.dtype(), lf::DType::Int32);
  EXPECT_EQ(bi.to_vector<int32_t>(), (std::vector<int32_t>{1, 1, 2}));
  lf::Tensor fd = lf::cat({f, d}, 0);
  EXPECT_EQ(fd.dtype(), lf::DType::Float64);
  EXPECT_EQ(fd.to_vector<double>(), (std::vector<double>{0.5, 0.25}));
}

TEST(ViewCat, EmptyPiecesSingleTensorAndViews) {
  lf::Tensor a = range({2, 3});
  lf::Tensor e = lf::zeros({0, 3});
  EXPECT_EQ(lf::cat({e, a, e}, 0).to_vector<float>(), iota(6));
  EXPECT_EQ(lf::cat({e, e}, 0).shape(), (lf::Shape{0, 3}));
  EXPECT_EQ(lf::cat({a}, 1).to_vector<float>(), iota(6));
  // Non-contiguous inputs: a transpose and a strided slice.
  lf::Tensor t = lf::transpose(a, 0, 1);         // [[0, 3], [1, 4], [2, 5]]
  lf::Tensor s = lf::slice(range({3, 4}), 1, 0, 4, 3);  // [[0, 3], [4, 7], [8, 11]]
  EXPECT_EQ(lf::cat({t, s}, 1).to_vector<float>(), (F{0, 3, 0, 3, 1, 4, 4, 7, 2, 5, 8, 11}));
  EXPECT_EQ(lf::cat({t, s}, 0).to_vector<float>(), (F{0, 3, 1, 4, 2, 5, 0, 3, 4, 7, 8, 11}));
  // Of pending values.
  EXPECT_EQ(lf::cat({a * 2, a + 1}, 0).to_vector<float>(), (F{0, 2, 4, 6, 8, 10, 1, 2, 3, 4, 5, 6}));
}

TEST(ViewCat, Errors) {
  lf::Tensor a = range({2, 3});
  expect_error([] { lf::cat({}, 0); }, {"cat"});
  expect_error([&] { lf::cat({a, range({2, 4})}, 0); }, {"cat", "[2, 3]", "[2, 4]"});
  expect_error([&] { lf::cat({a, range({3})}, 0); }, {"cat", "[2, 3]", "[3]"});
  expect_error([&] { lf::cat({a, a}, 2); }, {"cat", "dim 2", "[2, 3]"});
  expect_error([&] { lf::cat({a, a}, -3); }, {"cat", "dim -3"});
  expect_error([] { lf::cat({lf::scalar(1), lf::scalar(2)}, 0); }, {"cat", "rank-0"});
  expect_error([&] { lf::cat({a, lf::Tensor()}, 0); }, {"cat"});
}

}  // namespace
