// The scatter family beyond scatter_add (scatter, scatter_reduce, index_put with index tensors,
// index_copy, index_fill, index_reduce; issue 23) against the reference executor and against values written out
// by hand from PyTorch's semantics: duplicates (the last value wins for assignment), every reduce
// mode with and without self, every dtype, Int32 and Int64 indices, NaN, empty indices, size-0 and
// size-1 dims, negative and out-of-range indices, fused producers and consumers. On a GPU host the
// default device is CUDA: the large cases (2^20 values, many blocks, many duplicates per
// destination) run the CUDA kernels' every phase (last writer, identities, atomics, mean).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "codegen/cuda/backend.h"
#include "codegen/cuda/ops.h"
#include "codegen/cuda/nvrtc_batch.h"
#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"

namespace {

using lf::DType;
using lf::Tensor;
using lf::test::FusionScope;

const DType kAll[] = {DType::Bool,     DType::Int32,   DType::Int64,  DType::Float16,
                      DType::BFloat16, DType::Float32, DType::Float64};
const char* const kReduce[] = {"sum", "prod", "mean", "amax", "amin"};

// Values in [lo, hi) computed on the device and stored first (scan_scatter_test.cpp says why).
Tensor data(lf::Shape shape, DType dt, double lo, double hi) {
  Tensor t = lf::cast(lf::rand(std::move(shape)) * (hi - lo) + lo, dt);
  lf::sync();
  return t;
}

Tensor ints(std::vector<int64_t> v, DType dt = DType::Int64) {
  int64_t n = static_cast<int64_t>(v.size());
  return lf::cast(lf::from_vector(std::move(v), {n}), dt);
}
Tensor floats(std::vector<float> v) {
  int64_t n = static_cast<int64_t>(v.size());
  return lf::from_vector(std::move(v), {n});
}

// A sum's or a product's terms per destination in the tests below, as the tolerance's length; the
// 16-bit floats round each GPU atomic step in whatever order the steps land.
int64_t terms(const std::string& reduce, DType dt, int64_t n) {
  if (reduce == "amax" || reduce == "amin") return 1;
  return dt == DType::Float16 || dt == DType::BFloat16 ? 8 * n : n;
}

void expect_error(const std::function<Tensor()>& make, const std::string& what) {
  try {
    make().to_vector<double>();
    ADD_FAILURE() << "no error for " << what;
  } catch (const lf::Error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

// PyTorch's results, worked out by hand.
TEST(ScatterFamily, MatchesPyTorchOnSmallCases) {
  Tensor x = floats({10, 20, 30});
  Tensor idx = ints({0, 2, 0, -1});  // duplicates; -1 is the last
  Tensor src = floats({1, 2, 3, 4});
  EXPECT_EQ(lf::scatter(x, 0, idx, src).to_vector<float>(), (std::vector<float>{3, 20, 4}));  // the last wins
  EXPECT_EQ(lf::scatter(x, 0, idx, 7.5).to_vector<float>(), (std::vector<float>{7.5, 20, 7.5}));
  EXPECT_EQ(lf::scatter_reduce(x, 0, idx, src, "sum").to_vector<float>(), (std::vector<float>{14, 20, 36}));
  EXPECT_EQ(lf::scatter_reduce(x, 0, idx, src, "sum", false).to_vector<float>(), (std::vector<float>{4, 20, 6}));
  EXPECT_EQ(lf::scatter_reduce(x, 0, idx, src, "prod").to_vector<float>(), (std::vector<float>{30, 20, 240}));
  EXPECT_EQ(lf::scatter_reduce(x, 0, idx, src, "prod", false).to_vector<float>(), (std::vector<float>{3, 20, 8}));
  EXPECT_EQ(lf::scatter_reduce(x, 0, idx, src, "mean").to_vector<float>(), (std::vector<float>{14.f / 3, 20, 12}));
  EXPECT_EQ(lf::scatter_reduce(x, 0, idx, src, "mean", false).to_vector<float>(), (std::vector<float>{2, 20, 3}));
  EXPECT_EQ(lf::scatter_reduce(x, 0, idx, src, "amax").to_vector<float>(), (std::vector<float>{10, 20, 30}));
  EXPECT_EQ(lf::scatter_reduce(x, 0, idx, src, "amax", false).to_vector<float>(), (std::vector<float>{3, 20, 4}));
  EXPECT_EQ(lf::scatter_reduce(x, 0, idx, src, "amin").to_vector<float>(), (std::vector<float>{1, 20, 2}));
  EXPECT_EQ(lf::scatter_reduce(x, 0, idx, src, "amin", false).to_vector<float>(), (std::vector<float>{1, 20, 2}));
  // Integer mean floors (PyTorch: div with rounding_mode="floor").
  Tensor zi = lf::zeros({2}, DType::Int64);
  Tensor vi = lf::cast(floats({-3, -4, 5}), DType::Int64);
  EXPECT_EQ(lf::scatter_reduce(zi, 0, ints({0, 0, 1}), vi, "mean", false).to_vector<int64_t>(),
            (std::vector<int64_t>{-4, 5}));
  EXPECT_EQ(lf::scatter_reduce(zi, 0, ints({0, 0, 1}), vi, "mean").to_vector<int64_t>(), (std::vector<int64_t>{-3, 2}));
  // NaN propagates through amax / amin, from src and from self.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> m =
      lf::scatter_reduce(floats({nan, 0, 5}), 0, ints({1, 1, 2}), floats({1, nan, -1}), "amax").to_vector<float>();
  EXPECT_TRUE(std::isnan(m[0]) && std::isnan(m[1]));
  EXPECT_EQ(m[2], 5);
  // 2-D along dim 1; index smaller than src.
  Tensor x2 = lf::zeros({2, 3});
  Tensor i2 = lf::cast(lf::from_vector(std::vector<float>{2, 0, 1, 1}, {2, 2}), DType::Int64);
  Tensor s2 = lf::from_vector(std::vector<float>{1, 2, 9, 3, 4, 9}, {2, 3});
  EXPECT_EQ(lf::scatter(x2, 1, i2, s2).to_vector<float>(), (std::vector<float>{2, 0, 1, 0, 4, 0}));
  // index_copy / index_fill along dim 0 of [3, 2]; a duplicate keeps the last row.
  Tensor x3 = lf::zeros({3, 2});
  Tensor rows = lf::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_EQ(lf::index_copy(x3, 0, ints({2, 0, 2}), rows).to_vector<float>(), (std::vector<float>{3, 4, 0, 0, 5, 6}));
  EXPECT_EQ(lf::index_fill(x3, 1, ints({-1}), 8).to_vector<float>(), (std::vector<float>{0, 8, 0, 8, 0, 8}));
  // index_put: x[[0, 2], [1, -1]] = [5, 6] on [3, 3]; with accumulate, duplicates add up.
  Tensor x4 = lf::zeros({3, 3});
  EXPECT_EQ(lf::index_put(x4, {ints({0, 2}), ints({1, -1})}, floats({5, 6})).to_vector<float>(),
            (std::vector<float>{0, 5, 0, 0, 0, 0, 0, 0, 6}));
  // v [3] broadcasts to the indexed [3, 3]: each selected row receives [1, 2, 3].
  EXPECT_EQ(lf::index_put(x4, {ints({1, 1, 1})}, floats({1, 2, 3}), true).to_vector<float>(),
            (std::vector<float>{0, 0, 0, 3, 6, 9, 0, 0, 0}));
  Tensor col = lf::reshape(floats({1, 2, 3}), {3, 1});
  EXPECT_EQ(lf::index_put(x4, {ints({1, 0, 1})}, col).to_vector<float>(),
            (std::vector<float>{2, 2, 2, 3, 3, 3, 0, 0, 0}));
  EXPECT_EQ(lf::index_put(x4, {ints({1, 1, 1})}, col, true).to_vector<float>(),
            (std::vector<float>{0, 0, 0, 6, 6, 6, 0, 0, 0}));
  EXPECT_EQ(lf::index_put(x4, ints({2}, DType::Int32), floats({7})).to_vector<float>(),  // x[i] = v
            (std::vector<float>{0, 0, 0, 0, 0, 0, 7, 7, 7}));
  // Broadcast index tensors: rows [[0], [2]] with columns [0, 2] set the four corners.
  Tensor r = lf::reshape(ints({0, 2}), {2, 1});
  EXPECT_EQ(lf::index_put(x4, {r, ints({0, 2})}, floats({1})).to_vector<float>(),
            (std::vector<float>{1, 0, 1, 0, 0, 0, 1, 0, 1}));
  // index_reduce: PyTorch's documented example (rows 0 and 0 meet; 1 and 3 receive nothing).
  Tensor x5 = lf::full({5, 3}, 2);
  Tensor t5 = lf::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {4, 3});
  Tensor i5 = ints({0, 4, 2, 0});
  EXPECT_EQ(lf::index_reduce(x5, 0, i5, t5, "prod").to_vector<float>(),
            (std::vector<float>{20, 44, 72, 2, 2, 2, 14, 16, 18, 2, 2, 2, 8, 10, 12}));
  EXPECT_EQ(lf::index_reduce(x5, 0, i5, t5, "amax", false).to_vector<float>(),
            (std::vector<float>{10, 11, 12, 2, 2, 2, 7, 8, 9, 2, 2, 2, 4, 5, 6}));
  EXPECT_EQ(lf::index_reduce(x5, 0, i5, t5, "mean").to_vector<float>(),
            (std::vector<float>{13.0f / 3, 5, 17.0f / 3, 2, 2, 2, 4.5f, 5, 5.5f, 2, 2, 2, 3, 3.5f, 4}));
  EXPECT_EQ(lf::index_reduce(x5, 1, ints({2}), lf::full({5, 1}, -1), "amin").to_vector<float>()[2], -1);
  // bool x: scatter assigns.
  Tensor b = lf::zeros({3}, DType::Bool);
  EXPECT_EQ(lf::scatter(b, 0, ints({2}), true).to_vector<bool>(), (std::vector<bool>{false, false, true}));
}

// numpy's mixed indexing, x[...] = v with slices, integers and index tensors, each case checked
// against host loops over numpy's region: x[:, [1, 3]], x[[0, 2], :, [1, 4]] (separated: the
// broadcast block first), x[1, :, [0, 2]], x[:, 1, 2:4] (no tensor), and accumulate with
// duplicates.
TEST(ScatterFamily, MixedIndexingFollowsNumpysRegion) {
  const lf::Shape shape{3, 4, 5};
  Tensor x = lf::arange(0.0, 60).reshape(shape);
  std::vector<float> base = x.to_vector<float>();
  auto at3 = [](int64_t i, int64_t j, int64_t k) { return static_cast<size_t>((i * 4 + j) * 5 + k); };
  // x[:, [1, 3]] = v, v of the region [3, 2, 5].
  Tensor v1 = lf::arange(100.0, 130).reshape({3, 2, 5});
  std::vector<float> want = base, hv = v1.to_vector<float>();
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t k = 0; k < 5; ++k) want[at3(i, b == 0 ? 1 : 3, k)] = hv[static_cast<size_t>((i * 2 + b) * 5 + k)];
  EXPECT_EQ(lf::index_put(x, lf::index_list(lf::slice(0), ints({1, 3})), v1).to_vector<float>(), want);
  // x[[0, 2], :, [1, 4]] = v: the tensors are separated, the region is [2 (block), 4].
  Tensor v2 = lf::arange(200.0, 208).reshape({2, 4});
  want = base;
  hv = v2.to_vector<float>();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t j = 0; j < 4; ++j) want[at3(b == 0 ? 0 : 2, j, b == 0 ? 1 : 4)] = hv[static_cast<size_t>(b * 4 + j)];
  EXPECT_EQ(lf::index_put(x, lf::index_list(ints({0, 2}), lf::slice(0), ints({1, 4})), v2).to_vector<float>(), want);
  // x[1, :, [0, 2]] = v: an integer is an index too (separated from the tensor: block first).
  Tensor v3 = lf::arange(300.0, 308).reshape({2, 4});
  want = base;
  hv = v3.to_vector<float>();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t j = 0; j < 4; ++j) want[at3(1, j, b == 0 ? 0 : 2)] = hv[static_cast<size_t>(b * 4 + j)];
  EXPECT_EQ(lf::index_put(x, lf::index_list(int64_t{1}, lf::slice(0), ints({0, 2})), v3).to_vector<float>(), want);
  // x[:, -1, 2:4] = 7 (integers and slices only), and += with accumulate.
  want = base;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t k = 2; k < 4; ++k) want[at3(i, 3, k)] = 7;
  EXPECT_EQ(lf::index_put(x, lf::index_list(lf::slice(0), int64_t{-1}, lf::slice(2, 4)), 7).to_vector<float>(), want);
  want = base;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t k = 2; k < 4; ++k) want[at3(i, 3, k)] += 7;
  EXPECT_EQ(lf::index_put(x, lf::index_list(lf::slice(0), int64_t{-1}, lf::slice(2, 4)), 7, true).to_vector<float>(), want);
  // Duplicates add up with accumulate: x[::2, [1, 1]] += 1 (rows 0 and 2, column 1 twice).
  want = base;
  for (int64_t i : {0, 2})
    for (int64_t k = 0; k < 5; ++k) want[at3(i, 1, k)] += 2;
  EXPECT_EQ(lf::index_put(x, lf::index_list(lf::slice(0, 3, 2), ints({1, 1})), lf::ones({1}), true).to_vector<float>(), want);
  // Against the reference, fused and unfused, with a computed index and a broadcast v.
  for (bool fused : {true, false}) {
    FusionScope scope(fused);
    Tensor idx = lf::cast(lf::floor(data({2, 1}, DType::Float32, 0, 4)), DType::Int32);
    lf::test::expect_matches_reference(
        lf::index_put(x * 2, lf::index_list(lf::slice(1), idx, ints({0, 4})), data({2, 2, 1}, DType::Float32, -1, 1), true) + 1, 4,
        "mixed index_put");
  }
  // Errors at the call name index_put.
  EXPECT_THROW(lf::index_put(x, lf::index_list(lf::slice(0), lf::slice(0), lf::slice(0), lf::slice(0)), 1), lf::Error);
  EXPECT_THROW(lf::index_put(x, lf::index_list(ints({0, 1}), ints({0, 1, 2})), 1), lf::Error);
  EXPECT_THROW(lf::index_put(x, lf::index_list(lf::slice(0, 3, 0), ints({1})), 1), lf::Error);
  EXPECT_THROW(lf::index_put(x, lf::index_list(ints({1})), lf::ones({2, 5})), lf::Error);  // v does not broadcast
}

// numpy's mixed-index read: the region of index_put's rule, against host loops, and views when
// the index has no tensor.
TEST(ScatterFamily, MixedIndexReadFollowsNumpysRegion) {
  Tensor x = lf::arange(0.0, 60).reshape({3, 4, 5});
  auto flat = [](int64_t i, int64_t j, int64_t k) { return static_cast<float>((i * 4 + j) * 5 + k); };
  // x[:, [3, -4]]: [3, 2, 5].
  Tensor a = lf::index(x, lf::index_list(lf::slice(0), ints({3, -4})));
  EXPECT_EQ(a.shape(), (lf::Shape{3, 2, 5}));
  std::vector<float> want;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j : {3, 0})
      for (int64_t k = 0; k < 5; ++k) want.push_back(flat(i, j, k));
  EXPECT_EQ(a.to_vector<float>(), want);
  // x[[0, 2], :, [1, 4]]: separated tensors, the block first: [2, 4].
  Tensor b = lf::index(x, lf::index_list(ints({0, 2}), lf::slice(0), ints({1, 4})));
  EXPECT_EQ(b.shape(), (lf::Shape{2, 4}));
  want.clear();
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t j = 0; j < 4; ++j) want.push_back(flat(p == 0 ? 0 : 2, j, p == 0 ? 1 : 4));
  EXPECT_EQ(b.to_vector<float>(), want);
  // x[[[0], [2]], [1, 3]]: indices broadcast to [2, 2], x's last dim kept: [2, 2, 5].
  Tensor c = lf::index(x, lf::index_list(lf::reshape(ints({0, 2}), {2, 1}), ints({1, 3})));
  EXPECT_EQ(c.shape(), (lf::Shape{2, 2, 5}));
  EXPECT_EQ(c.to_vector<float>()[5 * 3 + 2], flat(2, 3, 2));
  // x[1, ::2, -1]: integers and a slice are a view.
  Tensor d = lf::index(x, lf::index_list(int64_t{1}, lf::slice(0, 4, 2), int64_t{-1}));
  EXPECT_EQ(d.shape(), (lf::Shape{2}));
  EXPECT_EQ(d.to_vector<float>(), (std::vector<float>{flat(1, 0, 4), flat(1, 2, 4)}));
  EXPECT_EQ(lf::index(x, lf::index_list(ints({}))).shape(), (lf::Shape{0, 4, 5}));
  // Against the reference, fused and unfused, with a computed index.
  for (bool fused : {true, false}) {
    FusionScope scope(fused);
    Tensor idx = lf::cast(lf::floor(data({2, 3}, DType::Float32, -4, 4)), DType::Int32);
    lf::test::expect_matches_reference(lf::index(x * 2, lf::index_list(lf::slice(1), idx)) + 1, 1, "mixed index");
  }
  // A bad index is an error at the sync point naming lf::index.
  try {
    lf::index(x, lf::index_list(lf::slice(0), ints({4}))).to_vector<float>();
    ADD_FAILURE() << "no error";
  } catch (const lf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("lf::index: index 4 is out of range for dim 1 of size 4"), std::string::npos)
        << e.what();
  }
}

// A bool tensor in a mixed index is numpy's x[mask]: nonzero(mask)'s columns over as many dims as
// it has, against host loops (read and write), mixed with slices and integers; a mask of the wrong
// shape is an error at the call naming the op and both shapes.
TEST(ScatterFamily, BoolMasksInMixedIndices) {
  Tensor x = lf::arange(0.0, 60).reshape({3, 4, 5});
  auto flat = [](int64_t i, int64_t j, int64_t k) { return static_cast<float>((i * 4 + j) * 5 + k); };
  std::vector<bool> m2(12);
  for (size_t p = 0; p < m2.size(); ++p) m2[p] = (p * 7) % 5 < 2;  // some true, some false
  Tensor mask2 = lf::from_vector(m2, {3, 4});
  // x[mask2]: [count, 5], rows in row-major order of the mask.
  std::vector<float> want;
  int64_t count = 0;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      if (m2[static_cast<size_t>(i * 4 + j)]) {
        ++count;
        for (int64_t k = 0; k < 5; ++k) want.push_back(flat(i, j, k));
      }
  Tensor a = lf::index(x, lf::index_list(mask2));
  EXPECT_EQ(a.shape(), (lf::Shape{count, 5}));
  EXPECT_EQ(a.to_vector<float>(), want);
  // x[:, :, mask1] with mask1 over the last dim: [3, 4, true count].
  std::vector<bool> m1 = {true, false, false, true, true};
  Tensor b = lf::index(x, lf::index_list(lf::slice(0), lf::slice(0), lf::from_vector(m1, {5})));
  EXPECT_EQ(b.shape(), (lf::Shape{3, 4, 3}));
  EXPECT_EQ(b.to_vector<float>()[(2 * 4 + 1) * 3 + 1], flat(2, 1, 3));
  // x[1, mask1 of dim 1]: an integer and a mask, adjacent: [true count, 5].
  Tensor c = lf::index(x, lf::index_list(int64_t{1}, lf::from_vector(std::vector<bool>{false, true, true, false}, {4})));
  EXPECT_EQ(c.shape(), (lf::Shape{2, 5}));
  EXPECT_EQ(c.to_vector<float>()[5 + 4], flat(1, 2, 4));
  // x[mask2] = 7 and x[mask2] += v (v broadcast over the selected rows).
  std::vector<float> put = x.to_vector<float>(), add = put;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      if (m2[static_cast<size_t>(i * 4 + j)])
        for (int64_t k = 0; k < 5; ++k) {
          put[static_cast<size_t>((i * 4 + j) * 5 + k)] = 7;
          add[static_cast<size_t>((i * 4 + j) * 5 + k)] += static_cast<float>(k);
        }
  EXPECT_EQ(lf::index_put(x, lf::index_list(mask2), 7).to_vector<float>(), put);
  EXPECT_EQ(lf::index_put(x, lf::index_list(mask2), lf::arange(0.0, 5), true).to_vector<float>(), add);
  // An all-false mask selects nothing.
  EXPECT_EQ(lf::index(x, lf::index_list(lf::zeros({3, 4}, DType::Bool))).shape(), (lf::Shape{0, 5}));
  // Against the reference, fused and unfused, with a computed mask.
  for (bool fused : {true, false}) {
    FusionScope scope(fused);
    Tensor mask = data({3, 4}, DType::Float32, -1, 1) > 0;
    lf::test::expect_matches_reference(lf::index(x * 2, lf::index_list(mask)) + 1, 1, "bool mask index");
  }
  try {
    lf::index(x, lf::index_list(lf::slice(0), lf::from_vector(std::vector<bool>{true, false}, {2})));
    ADD_FAILURE() << "no error";
  } catch (const lf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("lf::index: the bool index's shape [2] does not match x's dims 1 to 1"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("[3, 4, 5]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(lf::index_put(x, lf::index_list(lf::full({}, 1, DType::Bool)), 1), lf::Error);  // 0-d
}

class ScatterFamilyRef : public ::testing::TestWithParam<bool> {};  // fusion on, off

TEST_P(ScatterFamilyRef, ScatterAndReduceMatchReferenceEveryDtype) {
  FusionScope scope(GetParam());
  for (DType dt : kAll) {
    for (DType it : {DType::Int32, DType::Int64}) {
      Tensor self = data({4, 6, 5}, dt, -3, 3);
      for (int64_t d = 0; d < 3; ++d) {
        // Negative indices too: [-size, size).
        double n = static_cast<double>(self.size(d));
        Tensor idx = lf::cast(data({3, 4, 5}, DType::Float32, -n, n), it);
        Tensor src = data({4, 6, 5}, dt, -3, 3);
        lf::test::expect_matches_reference(lf::scatter(self, d, idx, src), 1, "scatter 3-D");
        lf::test::expect_matches_reference(lf::scatter(self, d, idx, 2), 1, "scatter value");
        if (dt == DType::Bool) continue;
        for (const char* r : kReduce)
          for (bool with_self : {true, false}) {
            // prod: values near 1 (few duplicates, so the product stays in range).
            Tensor s = std::string(r) == "prod" ? data({4, 6, 5}, dt, is_floating(dt) ? 0.5 : -2, 2) : src;
            lf::test::expect_matches_reference(lf::scatter_reduce(self, d, idx, s, r, with_self), terms(r, dt, 6),
                                               std::string("scatter_reduce 3-D ") + r);
          }
      }
      // Empty index; size-1 and size-0 dims.
      Tensor none = lf::cast(lf::zeros({0, 5}), it);
      lf::test::expect_matches_reference(lf::scatter(data({6, 5}, dt, -3, 3), 0, none, data({0, 5}, dt, 0, 1)), 1,
                                         "empty index");
      lf::test::expect_matches_reference(
          lf::scatter(data({1, 5}, dt, 0, 2), 0, lf::cast(lf::zeros({1, 5}), it), data({1, 5}, dt, 0, 2)), 1, "size 1");
      lf::test::expect_matches_reference(
          lf::scatter(data({3, 0}, dt, 0, 2), 0, lf::cast(lf::zeros({2, 0}), it), data({2, 0}, dt, 0, 2)), 1, "size 0");
      if (dt == DType::Bool) continue;
      for (const char* r : kReduce)
        lf::test::expect_matches_reference(
            lf::scatter_reduce(data({6, 5}, dt, -3, 3), 1, lf::cast(lf::zeros({6, 0}), it), data({6, 0}, dt, 0, 1), r,
                               false),
            1, "empty index reduce");
    }
  }
}

// Many values into few destinations (2^20 into 1000: multi-block on a GPU, ~1000 atomics or
// last-writer candidates per destination) and into many (the CPU's ordered buckets).
TEST_P(ScatterFamilyRef, LargeScattersMatchReference) {
  FusionScope scope(GetParam());
  int64_t n = int64_t{1} << 20;
  Tensor few = lf::cast(data({n}, DType::Float32, -1000, 1000), DType::Int64);
  Tensor many = lf::cast(data({n}, DType::Float32, 0, 200000), DType::Int32);
  for (DType dt : {DType::Int32, DType::Int64, DType::Float16, DType::Float32, DType::Float64}) {
    // 16-bit floats: small values, so that a running sum of ~1000 of them keeps their digits.
    Tensor src = dt == DType::Float16 ? data({n}, dt, -1.0 / 16, 1.0 / 16) : data({n}, dt, -4, 4);
    Tensor ones_ish = is_floating(dt) ? data({n}, dt, 0.999, 1.001) : lf::cast(lf::where(src > 3, -1, 1), dt);
    lf::sync();
    lf::test::expect_matches_reference(lf::scatter(data({1000}, dt, 0, 1), 0, few, src), 1, "scatter large");
    lf::test::expect_matches_reference(lf::scatter(data({200000}, dt, 0, 1), 0, many, src), 1, "scatter many");
    for (const char* r : kReduce)
      for (bool with_self : {true, false}) {
        std::string what = std::string("scatter_reduce large ") + r;
        Tensor s = std::string(r) == "prod" ? ones_ish : src;
        // A sum of ~1000 values: its tolerance; a 16-bit float rounds each of ~1000 steps (in
        // index order on the host, in any order on a GPU; the CPU's bins add in float32), hence
        // the wider one.
        int64_t len = std::string(r) == "prod" || std::string(r) == "sum" || std::string(r) == "mean"
                          ? (dt == DType::Float16 ? 1 << 16 : 1000)
                          : 1;
        lf::test::expect_matches_reference(lf::scatter_reduce(data({1000}, dt, -1, 1), 0, few, s, r, with_self), len,
                                           what);
        lf::test::expect_matches_reference(lf::scatter_reduce(data({200000}, dt, -1, 1), 0, many, s, r, with_self),
                                           terms(r, dt, 16), what + " many");
      }
  }
  // index_put over [512, 512, 4] rows with 2^18 index pairs (duplicates), with and without accumulate.
  Tensor x = data({512, 512, 4}, DType::Float32, -1, 1);
  int64_t m = int64_t{1} << 18;
  Tensor i0 = lf::cast(data({m}, DType::Float32, -512, 512), DType::Int64);
  Tensor i1 = lf::cast(data({m}, DType::Float32, 0, 512), DType::Int32);
  Tensor v = data({m, 4}, DType::Float32, -1, 1);
  lf::test::expect_matches_reference(lf::index_put(x, {i0, i1}, v), 1, "index_put large");
  lf::test::expect_matches_reference(lf::index_put(x, {i0, i1}, v, true), 16, "index_put accumulate large");
}

TEST_P(ScatterFamilyRef, NanAndInfMatchReference) {
  FusionScope scope(GetParam());
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  int64_t n = int64_t{1} << 16;
  Tensor pos = lf::arange(0, static_cast<double>(n), 1, DType::Int64);
  Tensor idx = lf::remainder(pos * 7, 100);
  // Quarters in [-1, 1]: about 655 values a bin, whose partial sums (within +-64) are exact in the
  // 16-bit floats too, so a GPU's atomic adds give the reference's sum in any order (random
  // values' bfloat16 sums depend on the order by whole units).
  Tensor quarters = lf::round(data({n}, DType::Float32, -1, 1) * 4) / 4;
  Tensor src = lf::where(pos == 1234, nan, lf::where(pos == 777, inf, lf::where(pos == 999, -inf, quarters)));
  // A product with inf depends on the order on a GPU (a running product that underflowed to 0
  // first gives NaN, inf first gives inf): prod sees NaN only.
  Tensor nan_only = lf::where(pos == 1234, nan, data({n}, DType::Float32, -1, 1));
  Tensor self = lf::where(lf::arange(0, 100, 1, DType::Int64) == 50, nan, lf::zeros({100}));
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64})
    for (const char* r : kReduce)
      for (bool with_self : {true, false})
        lf::test::expect_matches_reference(
            lf::scatter_reduce(lf::cast(self, dt), 0, idx, lf::cast(std::string(r) == "prod" ? nan_only : src, dt), r,
                               with_self),
            terms(r, dt, 700), std::string("nan/inf ") + r);
}

// Producers of every operand fuse into their own kernels; consumers read the scatter's output.
TEST_P(ScatterFamilyRef, FusedProducersAndConsumers) {
  FusionScope scope(GetParam());
  Tensor a = data({64, 33}, DType::Float32, -2, 2), b = data({256, 33}, DType::Float32, -2, 2);
  Tensor f = data({256, 33}, DType::Float32, 0, 64);
  Tensor idx = lf::cast(lf::floor(f * 0.5f), DType::Int64);  // a computed index
  for (const char* r : kReduce) {
    Tensor y = lf::scatter_reduce(lf::exp(a) * 2, 0, idx, lf::tanh(b) + 1, r, false);
    lf::test::expect_matches_reference(lf::sum(lf::relu(y - 1), {1}), 33 * 8, std::string("fused around ") + r);
  }
  Tensor y = lf::scatter(a * 3, 0, idx, b - 1);
  lf::test::expect_matches_reference(lf::softmax(y, 1), 33, "softmax of scatter");
  Tensor g = lf::index_put(a, {lf::cast(f, DType::Int32) - 64, lf::cast(f * 0.5f, DType::Int64)}, b * b, true);
  lf::test::expect_matches_reference(g + 1, 8, "index_put of computed indices");
  lf::test::expect_matches_reference(
      lf::index_copy(a.transpose(0, 1), 1, lf::cast(data({16}, DType::Float32, 0, 64), DType::Int64),
                     data({33, 16}, DType::Float32, 0, 1)) *
          2,
      1, "index_copy of a view");
  lf::test::expect_matches_reference(
      lf::index_fill(a, 0, lf::cast(data({8}, DType::Float32, -64, 64), DType::Int32), -0.5), 1, "index_fill");
  for (const char* r : {"prod", "mean", "amax", "amin"})
    for (bool with_self : {true, false})
      lf::test::expect_matches_reference(
          lf::index_reduce(a * 2, 0, lf::cast(data({40}, DType::Float32, -64, 64), DType::Int64),
                           lf::tanh(data({40, 33}, DType::Float32, -2, 2)), r, with_self) +
              1,
          41, std::string("index_reduce ") + r + (with_self ? "" : " without self"));
}

TEST_P(ScatterFamilyRef, IndexErrorsAtTheSyncPoint) {
  FusionScope scope(GetParam());
  for (DType it : {DType::Int32, DType::Int64}) {
    Tensor bad = ints({0, 1, 5, 2}, it);
    expect_error([&] { return lf::scatter(lf::zeros({3}), 0, bad, lf::ones({4})); },
                 "lf::scatter: index 5 is out of range for dim 0 of size 3 (valid: -3 to 2)");
    expect_error([&] { return lf::scatter(lf::zeros({3}), 0, ints({-4}, it), 1); }, "lf::scatter: index -4");
    for (const char* r : kReduce)
      expect_error([&] { return lf::scatter_reduce(lf::zeros({3}), 0, bad, lf::ones({4}), r, false); },
                   "lf::scatter_reduce: index 5 is out of range for dim 0 of size 3");
    expect_error(
        [&] {
          return lf::index_copy(lf::zeros({2, 3}), 1, ints({3}, it), lf::ones({2, 1}));
        },
        "lf::index_copy: index 3 is out of range for dim 1 of size 3");
    expect_error(
        [&] {
          return lf::index_fill(lf::zeros({2, 3}), 0, ints({-3}, it), 1);
        },
        "lf::index_fill: index -3 is out of range for dim 0 of size 2");
    expect_error(
        [&] {
          return lf::index_reduce(lf::zeros({2, 3}), 0, ints({2}, it), lf::ones({1, 3}), "amax");
        },
        "lf::index_reduce: index 2 is out of range for dim 0 of size 2");
    expect_error(
        [&] {
          return lf::index_put(lf::zeros({2, 3}), {ints({1}, it), ints({3}, it)}, lf::ones({1}));
        },
        "lf::index_put: index 3 is out of range for dim 1 of size 3");
    expect_error(
        [&] {
          return lf::index_put(lf::zeros({2, 3}), {ints({-3}, it)}, lf::ones({1}), true);
        },
        "lf::index_put: index -3 is out of range for dim 0 of size 2");
    // One bad index among 2^19 values (many GPU blocks).
    int64_t n = int64_t{1} << 19;
    Tensor pos = lf::arange(0, static_cast<double>(n), 1, DType::Int64);
    Tensor many = lf::cast(lf::where(pos == n - 3, 1000, lf::remainder(pos, 100)), it);
    expect_error([&] { return lf::scatter_reduce(lf::zeros({100}), 0, many, lf::ones({n}), "amax"); },
                 "lf::scatter_reduce: index 1000");
    expect_error([&] { return lf::scatter(lf::zeros({100}), 0, many, lf::ones({n})); }, "lf::scatter: index 1000");
    expect_error(
        [&] {
          return lf::scatter(lf::zeros({0, 2}), 0, lf::cast(lf::zeros({1, 2}), it), 1);
        },
        "(the dim is empty)");
  }
  // The trace stays usable.
  EXPECT_EQ(lf::scatter(lf::zeros({3}), 0, ints({1}), 4).to_vector<float>(), (std::vector<float>{0, 4, 0}));
}

INSTANTIATE_TEST_SUITE_P(FusedAndUnfused, ScatterFamilyRef, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fused" : "Unfused"; });

// Shape, dtype and argument errors at the call, naming the op, shapes and dtypes.
TEST(ScatterFamily, ArgumentErrorsAtTheCall) {
  auto expect_throw = [](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no error for " << what;
    } catch (const lf::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  Tensor x = lf::zeros({3, 4}), idx = lf::cast(lf::zeros({2, 4}), DType::Int64), src = lf::ones({2, 4});
  expect_throw([&] { lf::scatter_reduce(x, 0, idx, src, "max"); },
               "lf::scatter_reduce: reduce must be \"sum\", \"prod\", \"mean\", \"amax\" or \"amin\", not \"max\"");
  expect_throw([&] { lf::scatter_reduce(lf::zeros({3}, DType::Bool), 0, ints({0}), lf::ones({1}), "amax"); },
               "lf::scatter_reduce: reduce \"amax\" is not defined for bool");
  expect_throw(
      [&] {
        lf::scatter(x, 0, lf::zeros({2, 4}), src);
      },
      "lf::scatter: indices must be int32 or int64, not float32");
  expect_throw([&] { lf::scatter(x, 0, ints({0}), src); }, "lf::scatter: x, index and src must have one rank");
  expect_throw([&] { lf::scatter(x, 2, idx, src); }, "lf::scatter");
  expect_throw(
      [&] {
        lf::scatter(x, 0, lf::cast(lf::zeros({2, 5}), DType::Int64), lf::ones({2, 5}));
      },
      "lf::scatter: index is larger than src in dim 1, or than x off dim 0");
  expect_throw(
      [&] {
        lf::index_copy(x, 0, ints({0, 1}), lf::ones({3, 4}));
      },
      "lf::index_copy: source must have shape [2, 4]");
  expect_throw(
      [&] {
        lf::index_fill(x, 0, lf::cast(lf::zeros({1, 1}), DType::Int64), 1);
      },
      "lf::index_fill: index must be 1-D or 0-D");
  expect_throw(
      [&] {
        lf::index_put(x, {ints({0}), ints({0}), ints({0})}, src);
      },
      "lf::index_put: 3 index tensors for 2 dims");
  expect_throw([&] { lf::index_put(x, {ints({0, 1}), ints({0, 1, 2})}, src); }, "lf::index_put");
  expect_throw(
      [&] {
        lf::index_put(x, {ints({0, 1})}, lf::ones({3}));
      },
      "lf::index_put: cannot broadcast shapes [3] and [2, 4]");
  expect_throw([&] { lf::index_put(lf::zeros({3}, DType::Bool), {ints({0})}, lf::ones({1}), true); },
               "lf::index_put: accumulate is not defined for bool");
  expect_throw(
      [&] {
        lf::index_put(x, {lf::zeros({3}) > 0.f, ints({0})}, src);
      },
      "lf::index_put: a bool index goes alone");
  expect_throw([&] { lf::index_reduce(x, 0, ints({0, 1}), lf::ones({2, 4}), "sum"); },
               "lf::index_reduce: reduce must be \"prod\", \"mean\", \"amax\" or \"amin\", not \"sum\"");
  expect_throw([&] { lf::index_reduce(x, 0, ints({0, 1}), lf::ones({3, 4}), "amax"); },
               "lf::index_reduce: source must have shape [2, 4]");
}

// Assignment on a GPU is deterministic (the last writer per destination): two runs agree bit for
// bit, and with the reference (exactly: a value is stored, not computed).
TEST(ScatterFamily, AssignIsDeterministic) {
  int64_t n = int64_t{1} << 20;
  Tensor idx = lf::cast(data({n}, DType::Float32, 0, 64), DType::Int64);
  Tensor src = data({n}, DType::Float32, -1, 1);
  std::vector<float> a = lf::scatter(lf::zeros({64}), 0, idx, src).to_vector<float>();
  std::vector<float> b = lf::scatter(lf::zeros({64}), 0, idx, src).to_vector<float>();
  EXPECT_EQ(a, b);
  std::vector<int64_t> iv = idx.to_vector<int64_t>();
  std::vector<float> sv = src.to_vector<float>(), want(64, 0.f);
  for (size_t e = 0; e < iv.size(); ++e) want[static_cast<size_t>(iv[e])] = sv[e];
  EXPECT_EQ(a, want);
}

// The scatter kernels' CUDA C compiles with NVRTC for sm_90 for every dtype, index dtype and mode
// (all a machine without a GPU can check of them).
TEST(ScatterFamilyCuda, KernelsCompile) {
  if (!lf::cuda::check_compiles("extern \"C\" __global__ void probe() {}", "probe", "sm_90").ok())
    GTEST_SKIP() << "NVRTC is not available here";
  using lf::ir::ScatterReduce;
  std::vector<lf::test::NvrtcJob> jobs;
  for (DType dt : kAll)
    for (DType it : {DType::Int32, DType::Int64})
      for (ScatterReduce r : {ScatterReduce::Assign, ScatterReduce::Sum, ScatterReduce::Prod, ScatterReduce::Mean,
                              ScatterReduce::AMax, ScatterReduce::AMin}) {
        if (dt == DType::Bool && r != ScatterReduce::Assign) continue;
        jobs.push_back({std::string(lf::cuda::kPrelude) + lf::cuda::scatter_source(dt, it, r), "lf_scatter",
                        std::string(lf::dtype_name(dt)) + " " + lf::dtype_name(it) + " " +
                            lf::ir::scatter_reduce_name(r)});
      }
  lf::test::expect_all_compile(jobs);
}

}  // namespace
