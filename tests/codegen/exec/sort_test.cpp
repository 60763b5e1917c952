// Sorting and selection through Backend::sort (issue 23): argsort, sort, topk, kthvalue, median,
// msort and unique against the reference executor's stable sort, fused and unfused, for every
// dtype, rows of 1 to 2^20 + 3 elements along any dim and through views, with NaN, infinities,
// -0.0 and ties; hand-computed values check the oracle itself. On a GPU these run the CUDA sort:
// rows of 1, 2 and 50 the bitonic block sort, 1000, 2000 and 3000 the radix sort in shared memory
// (a tile of 1024, 2048 for 64-bit keys, 4096; 3000 of 64-bit keys the bitonic sort), 4097 and
// 2^20 + 3 the Onesweep radix sort, topk of k <= 64 the selection (1024 threads for rows of
// 16384 or more).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"

namespace {

using lf::DType;
using lf::Tensor;
using lf::test::expect_matches_reference;
using lf::test::FusionScope;

const std::vector<DType> kDTypes = {DType::Bool,     DType::Int32,   DType::Int64,  DType::Float16,
                                    DType::BFloat16, DType::Float32, DType::Float64};

// Keys of `shape` in dtype `dt`: mostly values of a few hundred distinct ones (ties), with NaN,
// +-inf, -0.0 and 0.0 sprinkled in (integers get the casts' saturated values), and a wide spread
// when `wide` so that every radix digit varies.
Tensor keys(DType dt, lf::Shape shape, uint64_t seed, bool wide = false) {
  lf::test::Rng rng(seed);
  std::vector<double> v(static_cast<size_t>(lf::shape_numel(shape)));
  const double inf = std::numeric_limits<double>::infinity();
  for (double& x : v) {
    int64_t r = rng.range(0, 24);
    x = r == 0   ? std::nan("")
        : r == 1 ? inf
        : r == 2 ? -inf
        : r == 3 ? -0.0
        : r == 4 ? 0.0
        : wide   ? rng.uniform(-1, 1) * std::ldexp(1.0, static_cast<int>(rng.range(-20, 40)))
                 : static_cast<double>(rng.range(-150, 150)) / 4;
  }
  if (dt == DType::Bool || dt == DType::Int32 || dt == DType::Int64)
    for (double& x : v) x = std::isnan(x) ? 7 : std::isinf(x) ? (x > 0 ? 2e9 : -2e9) : x * 4;
  return lf::cast(lf::from_vector(v, shape), dt);
}

class Sort : public ::testing::TestWithParam<bool> {};  // fusion on, off

TEST_P(Sort, SelectionMatchesHandComputedValues) {
  FusionScope scope(GetParam());
  const float nan = std::nanf("");
  Tensor x = lf::from_vector(std::vector<float>{3, 1, 2, 1, 5, -0.0f, 0, 4}, {2, 4});
  auto [kv, ki] = lf::kthvalue(x, 2, 1);
  EXPECT_EQ(kv.to_vector<float>(), (std::vector<float>{1, 0}));
  EXPECT_EQ(ki.to_vector<int64_t>(), (std::vector<int64_t>{3, 2}));  // ties: the 2nd by index (-0.0 == 0)
  auto [mv, mi] = lf::median(x, 1, true);
  EXPECT_EQ(mv.shape(), (lf::Shape{2, 1}));
  EXPECT_EQ(mv.to_vector<float>(), (std::vector<float>{1, 0}));  // lower median
  EXPECT_EQ(mi.to_vector<int64_t>(), (std::vector<int64_t>{3, 2}));
  Tensor withnan = lf::from_vector(std::vector<float>{2, nan, 1, nan, 0}, {5});
  auto [nv, ni] = lf::median(withnan, 0);
  EXPECT_TRUE(std::isnan(nv.item<float>()));
  EXPECT_EQ(ni.item<int64_t>(), 1);  // the first NaN, as PyTorch
  EXPECT_EQ(lf::kthvalue(withnan, 3).first.item<float>(), 2);  // NaN is largest
  EXPECT_EQ(lf::median(lf::from_vector(std::vector<int64_t>{5, 1, 4, 2}, {2, 2})).item<int64_t>(), 2);
  EXPECT_EQ(lf::msort(x).to_vector<float>(), (std::vector<float>{3, -0.0f, 0, 1, 5, 1, 2, 4}));
  auto [tv, ti] = lf::topk(x, 4, 1);  // k = n: the whole row, descending, ties by index
  EXPECT_EQ(ti.to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 1, 3, 0, 3, 1, 2}));
  EXPECT_EQ(lf::topk(x, 1, 0, false).second.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 0}));

  lf::Unique u = lf::unique(lf::from_vector(std::vector<float>{2, -0.0f, nan, 2, 0, nan, -1}, {7}));
  std::vector<float> values = u.values.to_vector<float>();
  ASSERT_EQ(values.size(), 5u);  // -1, 0, 2, NaN, NaN
  EXPECT_EQ(values[0], -1);
  EXPECT_EQ(values[1], 0);
  EXPECT_EQ(values[2], 2);
  EXPECT_TRUE(std::isnan(values[3]) && std::isnan(values[4]));
  EXPECT_EQ(u.counts.to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 2, 1, 1}));
  EXPECT_EQ(u.inverse.to_vector<int64_t>(), (std::vector<int64_t>{2, 1, 3, 2, 1, 4, 0}));
  lf::Unique ui = lf::unique(lf::from_vector(std::vector<int32_t>{3, 1, 3, 3}, {2, 2}));
  EXPECT_EQ(ui.values.dtype(), DType::Int32);
  EXPECT_EQ(ui.values.to_vector<int32_t>(), (std::vector<int32_t>{1, 3}));
  EXPECT_EQ(ui.inverse.shape(), (lf::Shape{2, 2}));
  EXPECT_EQ(ui.counts.to_vector<int64_t>(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(lf::unique(lf::zeros({0})).values.numel(), 0);
}

TEST_P(Sort, RowsMatchReferenceForEveryDtypeDimAndView) {
  FusionScope scope(GetParam());
  uint64_t seed = 1;
  for (DType dt : kDTypes)
    for (int64_t n : {1, 2, 50, 1000, 2000, 3000, 4097}) {
      std::string what = std::string(lf::dtype_name(dt)) + " n=" + std::to_string(n);
      for (bool desc : {false, true}) {
        Tensor rows = keys(dt, {3, n}, seed++);
        expect_matches_reference(lf::argsort(rows, -1, desc), 1, what + " argsort rows");
        expect_matches_reference(lf::sort(keys(dt, {3, n}, seed), 1, desc).first, 1, what + " sort values");
        // Along dim 0 (the row's stride is 3) and through a transposed view.
        expect_matches_reference(lf::argsort(keys(dt, {n, 3}, seed++), 0, desc), 1, what + " argsort dim 0");
        expect_matches_reference(lf::argsort(keys(dt, {n, 3}, seed++).transpose(0, 1), 1, desc), 1,
                                 what + " argsort view");
        for (int64_t k : {int64_t{1}, std::min<int64_t>(n, 5), std::min<int64_t>(n, 64), n}) {
          expect_matches_reference(lf::topk(keys(dt, {2, n}, seed), k, 1, !desc).second, 1,
                                   what + " topk " + std::to_string(k));
          expect_matches_reference(lf::topk(keys(dt, {n, 2}, seed), k, 0, !desc).first, 1,
                                   what + " topk values dim 0 " + std::to_string(k));
        }
      }
      expect_matches_reference(lf::kthvalue(keys(dt, {2, n}, seed), (n + 1) / 2, 1).second, 1, what + " kthvalue");
      expect_matches_reference(lf::median(keys(dt, {n, 2}, seed), 0).second, 1, what + " median");
      expect_matches_reference(lf::median(keys(dt, {n, 2}, seed), 0).first, 1, what + " median values");
    }
}

// sort's and topk's values as the sort group writes them (fuse::Builder::join_sort): the keys at
// the positions bit for bit (-0.0 keeps its sign, NaN stays NaN), as a gather at the positions
// gives, for every path (GPU: the block sort, the selection and the radix sort), fused and unfused.
void expect_values_are_keys_at(const Tensor& x, const Tensor& values, const Tensor& positions, int64_t dim,
                               const std::string& what) {
  std::vector<double> got = values.to_vector<double>();
  std::vector<double> want = lf::gather(x, dim, positions).to_vector<double>();
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool same = std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i] && std::signbit(got[i]) == std::signbit(want[i]);
    ASSERT_TRUE(same) << what << ": element " << i << " is " << got[i] << ", the key there " << want[i];
  }
}

TEST_P(Sort, ValuesAreTheKeysAtThePositionsBitForBit) {
  FusionScope scope(GetParam());
  uint64_t seed = 300;
  for (DType dt : kDTypes)
    for (int64_t n : {int64_t{7}, int64_t{1000}, int64_t{2000}, int64_t{3000}, int64_t{4097}, int64_t{20000}}) {
      const std::string what = std::string(lf::dtype_name(dt)) + " n=" + std::to_string(n);
      Tensor x = keys(dt, {2, n}, seed++, /*wide=*/true);
      lf::sync();
      for (bool desc : {false, true}) {
        auto [v, i] = lf::sort(x, 1, desc);
        expect_values_are_keys_at(x, v, i, 1, what + (desc ? " sort descending" : " sort"));
        auto [tv, ti] = lf::topk(x.transpose(0, 1), std::min<int64_t>(n, 100), 0, desc);  // the radix sort's kept < n
        expect_values_are_keys_at(x.transpose(0, 1), tv, ti, 0, what + " topk 100");
        auto [sv, si] = lf::topk(x, std::min<int64_t>(n, 3), 1, desc);  // the selection
        expect_values_are_keys_at(x, sv, si, 1, what + " topk 3");
      }
    }
}

// The values and the positions come from one sort, not a sort and a gather kernel.
TEST(SortFusion, SortsValuesComeFromTheSortItself) {
  FusionScope scope(true);
  Tensor x = keys(DType::Float32, {4, 100}, 7);
  lf::sync();
  lf::reset_stats();
  auto [v, i] = lf::sort(x, 1);
  lf::sync();
  EXPECT_EQ(lf::cache_stats().kernels_launched, 1u);
  expect_values_are_keys_at(x, v, i, 1, "sort");
  lf::reset_stats();
  Tensor twice = lf::sort(x, 1, true).first * 2;  // the values read by a kernel of their own
  lf::sync();
  EXPECT_EQ(lf::cache_stats().kernels_launched, 2u);
  expect_matches_reference(twice, 1, "sort values * 2");
}

// One and two rows of 2^20 + 3: the CPU sorts each over the thread pool (radix passes, or a
// selection per chunk for topk), a GPU runs the radix sort. Fused only: a sort group is the same
// group with fusion off, and the reference's sorts of 2^20 are slow.
TEST(SortLong, RowsMatchReference) {
  const int64_t n = (int64_t{1} << 20) + 3;
  uint64_t seed = 100;
  // Each dtype in one order (they alternate), to keep the reference's sorts of 2^20 short.
  bool desc = false;
  for (DType dt : kDTypes) {
    desc = !desc;
    std::string what = std::string(lf::dtype_name(dt)) + (desc ? " descending" : "");
    Tensor one = keys(dt, {n}, seed++, /*wide=*/true);
    expect_matches_reference(lf::argsort(one, 0, desc), 1, what + " argsort");
    auto [values, positions] = lf::sort(one, 0, desc);
    expect_values_are_keys_at(one, values, positions, 0, what + " sort");
    expect_matches_reference(lf::topk(one, 100, 0, desc).first, 1, what + " topk 100 values");
    expect_matches_reference(lf::topk(one, 16, 0, desc).second, 1, what + " topk 16");
    if (dt == DType::Float32 || dt == DType::Int64)
      expect_matches_reference(lf::argsort(keys(dt, {2, n}, seed++, true), 1, !desc), 1, what + " argsort 2 rows");
    if (dt == DType::Float64 || dt == DType::BFloat16) expect_matches_reference(lf::median(one, 0).second, 1, what + " median");
  }
}

// Many rows longer than a block sorts: on a GPU the Onesweep radix sort takes them side by side, as
// many a launch as hold 2^22 keys (1023 rows of 4097): 1100 rows are two launches of each pass,
// along the last dim and along the first (rows strided by one).
TEST(SortLong, ManyRowsSideBySide) {
  Tensor x = keys(DType::Float32, {1100, 4097}, 300, /*wide=*/true);
  expect_matches_reference(lf::argsort(x, 1), 1, "argsort 1100 rows of 4097");
  expect_matches_reference(lf::topk(x, 100, 1).second, 1, "topk 100 of 1100 rows of 4097");
  Tensor t = keys(DType::Int32, {4097, 1100}, 301, /*wide=*/true);
  expect_matches_reference(lf::argsort(t, 0, /*descending=*/true), 1, "argsort dim 0 of 4097 x 1100");
  auto [values, positions] = lf::sort(t, 0);
  expect_values_are_keys_at(t, values, positions, 0, "sort dim 0 of 4097 x 1100");
  // 64-bit keys (tiles of 2048): 64 MiB hold 559 rows of 5000, so 600 rows are two launches too.
  Tensor wide = keys(DType::Int64, {600, 5000}, 302, /*wide=*/true);
  expect_matches_reference(lf::argsort(wide, 1, /*descending=*/true), 1, "argsort 600 rows of 5000 int64");
  if (lf::default_device().is_cuda()) {  // the launches: 2 chunks x (the digit counts + 4 passes)
    const uint64_t before = lf::cache_stats().kernels_launched;
    Tensor p = lf::argsort(x, 1);
    lf::sync();
    EXPECT_EQ(lf::cache_stats().kernels_launched - before, 10u);
  }
}

// The CPU's threshold selection (a heap of the k best) on the orders that defeat it: a row that
// keeps beating the heap's top (ascending for the largest k, descending for the smallest) makes it
// give up for nth_element; both ways, and runs of ties, agree with the reference.
TEST_P(Sort, TopkOnSortedAndConstantRows) {
  FusionScope scope(GetParam());
  const int64_t n = 5000;
  Tensor up = lf::arange(0, static_cast<double>(n)).reshape({1, n});
  Tensor rows = lf::cat({up, lf::flip(up, {1}), lf::full({1, n}, 3.0), lf::remainder(up, 7.0)}, 0);
  lf::sync();
  for (int64_t k : {1, 20, 300})
    for (bool largest : {true, false}) {
      std::string what = "k=" + std::to_string(k) + (largest ? " largest" : " smallest");
      expect_matches_reference(lf::topk(rows, k, 1, largest).second, 1, what + " indices");
      expect_matches_reference(lf::topk(rows, k, 1, largest).first, 1, what + " values");
    }
}

TEST_P(Sort, EmptyInputsGiveEmptyResults) {
  FusionScope scope(GetParam());
  EXPECT_EQ(lf::argsort(lf::zeros({0, 5}), 1).shape(), (lf::Shape{0, 5}));
  EXPECT_EQ(lf::sort(lf::zeros({5, 0}), 1).second.to_vector<int64_t>().size(), 0u);
  EXPECT_EQ(lf::topk(lf::ones({3, 4}), 0, 1).second.shape(), (lf::Shape{3, 0}));
  EXPECT_EQ(lf::topk(lf::ones({3, 4}), 0, 1).first.to_vector<float>().size(), 0u);
  EXPECT_EQ(lf::kthvalue(lf::zeros({0, 4}), 2, 1).first.shape(), (lf::Shape{0}));
  EXPECT_EQ(lf::argsort(lf::scalar(3.0f)).item<int64_t>(), 0);
}

TEST_P(Sort, UniqueMatchesAHostCount) {
  FusionScope scope(GetParam());
  for (DType dt : {DType::Int32, DType::Int64, DType::Float32, DType::Float64, DType::Bool}) {
    Tensor x = keys(dt, {37, 29}, 7);
    std::vector<double> host = lf::cast(x, DType::Float64).to_vector<double>();
    std::map<double, int64_t> count;  // no NaN: the integer and bool keys have none
    lf::Unique u = lf::unique(x);
    std::vector<double> values = u.values.to_vector<double>();
    std::vector<int64_t> inverse = u.inverse.to_vector<int64_t>(), counts = u.counts.to_vector<int64_t>();
    ASSERT_EQ(inverse.size(), host.size());
    for (size_t i = 0; i < host.size(); ++i) {
      ASSERT_LT(static_cast<size_t>(inverse[i]), values.size());
      double v = values[static_cast<size_t>(inverse[i])];
      EXPECT_TRUE(v == host[i] || (std::isnan(v) && std::isnan(host[i]))) << i;
      if (!std::isnan(host[i])) ++count[host[i] == 0 ? 0.0 : host[i]];
    }
    for (size_t j = 1; j < values.size(); ++j)
      if (!std::isnan(values[j])) EXPECT_LT(values[j - 1], values[j]);
    for (size_t j = 0; j < values.size(); ++j)
      if (!std::isnan(values[j])) EXPECT_EQ(counts[j], count[values[j]]) << lf::dtype_name(dt) << " " << values[j];
  }
}

// The runs of equal neighbours, without a sort: NaN starts a run of its own, -0.0 joins 0.0.
TEST_P(Sort, UniqueConsecutiveMatchesHandComputedRuns) {
  FusionScope scope(GetParam());
  const float nan = std::nanf("");
  lf::Unique u = lf::unique_consecutive(
      lf::from_vector(std::vector<float>{2, 2, -0.0f, 0, nan, nan, 2, 1, 1}, {3, 3}));
  std::vector<float> values = u.values.to_vector<float>();
  ASSERT_EQ(values.size(), 6u);  // 2, -0, NaN, NaN, 2, 1
  EXPECT_EQ(values[0], 2);
  EXPECT_TRUE(values[1] == 0 && std::signbit(values[1]));  // the run's first element
  EXPECT_TRUE(std::isnan(values[2]) && std::isnan(values[3]));
  EXPECT_EQ(values[4], 2);
  EXPECT_EQ(values[5], 1);
  EXPECT_EQ(u.counts.to_vector<int64_t>(), (std::vector<int64_t>{2, 2, 1, 1, 1, 2}));
  EXPECT_EQ(u.inverse.shape(), (lf::Shape{3, 3}));
  EXPECT_EQ(u.inverse.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 1, 2, 3, 4, 5, 5}));
  lf::Unique b = lf::unique_consecutive(lf::from_vector(std::vector<bool>{true, true, false}, {3}));
  EXPECT_EQ(b.values.dtype(), DType::Bool);
  EXPECT_EQ(b.counts.to_vector<int64_t>(), (std::vector<int64_t>{2, 1}));
  lf::Unique e = lf::unique_consecutive(lf::zeros({2, 0}));
  EXPECT_EQ(e.values.numel(), 0);
  EXPECT_EQ(e.inverse.shape(), (lf::Shape{2, 0}));
  // Against a host walk, for every dtype, through a transposed view (the flattening copies).
  for (DType dt : kDTypes) {
    Tensor x = keys(dt, {40, 30}, 11).transpose(0, 1);
    std::vector<double> host = lf::cast(x, DType::Float64).to_vector<double>();
    std::vector<double> want_values;
    std::vector<int64_t> want_counts, want_inverse;
    for (size_t i = 0; i < host.size(); ++i) {
      if (i == 0 || !(host[i] == host[i - 1])) {
        want_values.push_back(host[i]);
        want_counts.push_back(0);
      }
      ++want_counts.back();
      want_inverse.push_back(static_cast<int64_t>(want_counts.size()) - 1);
    }
    lf::Unique r = lf::unique_consecutive(x);
    std::vector<double> got = lf::cast(r.values, DType::Float64).to_vector<double>();
    ASSERT_EQ(got.size(), want_values.size()) << lf::dtype_name(dt);
    for (size_t j = 0; j < got.size(); ++j)
      EXPECT_TRUE(got[j] == want_values[j] || (std::isnan(got[j]) && std::isnan(want_values[j]))) << j;
    EXPECT_EQ(r.counts.to_vector<int64_t>(), want_counts) << lf::dtype_name(dt);
    EXPECT_EQ(r.inverse.to_vector<int64_t>(), want_inverse) << lf::dtype_name(dt);
  }
}

// unique along a dim: the distinct slices, sorted lexicographically, against a host std::map of
// the slices for several dtypes and each dim (values of three kinds, so that slices repeat).
TEST_P(Sort, UniqueAlongADimMatchesAHostMapOfSlices) {
  FusionScope scope(GetParam());
  lf::Unique h = lf::unique(lf::from_vector(std::vector<int64_t>{1, 3, 2, 3, 1, 3}, {3, 2}), 0);
  EXPECT_EQ(h.values.shape(), (lf::Shape{2, 2}));
  EXPECT_EQ(h.values.to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 2, 3}));
  EXPECT_EQ(h.inverse.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(h.counts.to_vector<int64_t>(), (std::vector<int64_t>{2, 1}));
  lf::Unique c = lf::unique(lf::from_vector(std::vector<float>{2, 1, 2, 0, 5, 0}, {2, 3}), 1);
  EXPECT_EQ(c.values.shape(), (lf::Shape{2, 2}));
  EXPECT_EQ(c.values.to_vector<float>(), (std::vector<float>{1, 2, 5, 0}));  // columns [1, 5] < [2, 0]
  EXPECT_EQ(c.inverse.to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(lf::unique(lf::zeros({0, 3}), 0).values.shape(), (lf::Shape{0, 3}));
  EXPECT_THROW(lf::unique(lf::zeros({4, 0}), 0), lf::Error);  // PyTorch's rule: only the selected dim may be empty
  EXPECT_THROW(lf::unique(lf::zeros({0, 0}), 0), lf::Error);
  EXPECT_THROW(lf::unique(lf::scalar(1.0f), 0), lf::Error);
  EXPECT_THROW(lf::unique(lf::zeros({2, 2}), 2), lf::Error);
  for (DType dt : {DType::Bool, DType::Int32, DType::Float16, DType::Float32})
    for (int64_t d : {0, 1, 2}) {
      Tensor x = lf::cast(lf::floor(lf::rand({6, 4, 2}) * (dt == DType::Bool ? 2 : 3)), dt);
      lf::sync();
      std::vector<double> hx = lf::cast(x, DType::Float64).to_vector<double>();
      const int64_t sizes[3] = {6, 4, 2}, strides[3] = {8, 2, 1};
      int64_t n = sizes[d];
      std::map<std::vector<double>, int64_t> count;
      std::vector<std::vector<double>> slices;
      for (int64_t i = 0; i < n; ++i) {
        std::vector<double> sl;
        for (int64_t e = 0; e < 48; ++e)
          if ((e / strides[d]) % sizes[d] == i) sl.push_back(hx[static_cast<size_t>(e)]);
        slices.push_back(sl);
        ++count[sl];
      }
      lf::Unique u = lf::unique(x, d);
      std::string what = std::string(lf::dtype_name(dt)) + " dim " + std::to_string(d);
      ASSERT_EQ(u.values.size(d), static_cast<int64_t>(count.size())) << what;
      std::vector<int64_t> counts = u.counts.to_vector<int64_t>(), inverse = u.inverse.to_vector<int64_t>();
      Tensor values = lf::cast(u.values, DType::Float64);
      size_t j = 0;
      for (const auto& [sl, cnt] : count) {  // the map's order is the lexicographic one
        std::vector<double> got = lf::reshape(lf::contiguous(lf::select(values, d, static_cast<int64_t>(j))), {-1})
                                      .to_vector<double>();
        EXPECT_EQ(got, sl) << what << " slice " << j;
        EXPECT_EQ(counts[j], cnt) << what << " slice " << j;
        ++j;
      }
      for (int64_t i = 0; i < n; ++i) {
        auto it = count.find(slices[static_cast<size_t>(i)]);
        EXPECT_EQ(inverse[static_cast<size_t>(i)], std::distance(count.begin(), it)) << what << " inverse " << i;
      }
    }
}

// unique's size is its one sync point: the number of distinct values is read back, and values,
// inverse and counts are still lazy after it (they run in the consumer's flush).
TEST_P(Sort, UniqueReadsBackOnlyItsSize) {
  FusionScope scope(GetParam());
  Tensor x = keys(DType::Float32, {1000}, 21) * 2;
  lf::sync();
  lf::test::StatsDelta d;
  lf::Unique u = lf::unique(x);
  EXPECT_EQ(d.flushes(), 1u);
  EXPECT_FALSE(u.values.is_materialized());
  EXPECT_FALSE(u.inverse.is_materialized());
  EXPECT_FALSE(u.counts.is_materialized());
  // Every element is its value; the counts add up to n.
  std::vector<float> back = lf::take(u.values, u.inverse).to_vector<float>(), want = x.to_vector<float>();
  ASSERT_EQ(back.size(), want.size());
  for (size_t i = 0; i < back.size(); ++i)
    EXPECT_TRUE(back[i] == want[i] || (std::isnan(back[i]) && std::isnan(want[i]))) << i;
  EXPECT_EQ(lf::sum(u.counts).item<int64_t>(), 1000);
}

TEST_P(Sort, NanmedianSkipsNaN) {
  FusionScope scope(GetParam());
  const float nan = std::nanf("");
  Tensor x = lf::from_vector(std::vector<float>{nan, 3, 1, nan,  //
                                                2, 5, nan, 7,    //
                                                nan, nan, 4, nan,  //
                                                nan, nan, nan, nan},
                             {4, 4});
  auto [v, i] = lf::nanmedian(x, 1);
  std::vector<float> values = v.to_vector<float>();
  EXPECT_EQ(values[0], 1);  // the lower median of 3 and 1
  EXPECT_EQ(values[1], 5);
  EXPECT_EQ(values[2], 4);
  EXPECT_TRUE(std::isnan(values[3]));  // a row of NaN only
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{2, 1, 2, 0}));
  EXPECT_EQ(lf::nanmedian(x, 0, true).first.shape(), (lf::Shape{1, 4}));
  EXPECT_EQ(lf::nanmedian(x).item<float>(), 3);  // of 3 1 2 5 7 4
  EXPECT_TRUE(std::isnan(lf::nanmedian(lf::full({3}, nan)).item<float>()));
  Tensor ints = lf::from_vector(std::vector<int32_t>{5, 1, 4, 2}, {4});
  EXPECT_EQ(lf::nanmedian(ints).item<int32_t>(), 2);
  EXPECT_THROW(lf::nanmedian(lf::zeros({2, 0}), 1), lf::Error);
  EXPECT_THROW(lf::nanmedian(lf::zeros({0})), lf::Error);
  // Against a host oracle for every float dtype, along each dim, with a third of the values NaN.
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64})
    for (int64_t d : {0, 1}) {
      Tensor base = keys(dt, {9, 7}, 40 + d);
      Tensor r = lf::where(lf::rand({9, 7}) < 0.33f, lf::full_like(base, nan), base);
      if (d == 1) r = lf::index_put(r, {lf::slice(2, 3)}, nan);  // one row all NaN
      lf::sync();
      std::vector<double> h = lf::cast(r, DType::Float64).to_vector<double>();
      auto [mv, mi] = lf::nanmedian(r, d);
      std::vector<double> got_v = lf::cast(mv, DType::Float64).to_vector<double>();
      std::vector<int64_t> got_i = mi.to_vector<int64_t>();
      int64_t rows = d == 0 ? 7 : 9, len = d == 0 ? 9 : 7;
      for (int64_t row = 0; row < rows; ++row) {
        std::vector<std::pair<double, int64_t>> nums;
        for (int64_t k = 0; k < len; ++k) {
          double e = d == 0 ? h[static_cast<size_t>(k * 7 + row)] : h[static_cast<size_t>(row * 7 + k)];
          if (!std::isnan(e)) nums.push_back({e, k});
        }
        std::stable_sort(nums.begin(), nums.end(), [](auto& p, auto& q) { return p.first < q.first; });
        std::string what = std::string(lf::dtype_name(dt)) + " dim " + std::to_string(d) + " row " + std::to_string(row);
        if (nums.empty()) {
          EXPECT_TRUE(std::isnan(got_v[static_cast<size_t>(row)])) << what;
          EXPECT_EQ(got_i[static_cast<size_t>(row)], 0) << what;
        } else {
          auto want = nums[(nums.size() - 1) / 2];
          EXPECT_EQ(got_v[static_cast<size_t>(row)], want.first) << what;
          EXPECT_EQ(got_i[static_cast<size_t>(row)], want.second) << what;
        }
      }
      expect_matches_reference(lf::nanmedian(r, d).second, 1, "nanmedian indices");
    }
}

// The oracle: PyTorch's cus_lower_bound / cus_upper_bound (aten/src/ATen/native/Bucketization.cpp),
// in double: on an ascending row of numbers, the count of boundaries before v.
int64_t torch_search(const std::vector<double>& row, double v, bool right) {
  int64_t start = 0, end = static_cast<int64_t>(row.size());
  while (start < end) {
    int64_t mid = start + ((end - start) >> 1);
    double b = row[static_cast<size_t>(mid)];
    if (right ? !(b > v) : !(b >= v)) start = mid + 1;
    else end = mid;
  }
  return start;
}

TEST_P(Sort, SearchsortedMatchesHandComputedValues) {
  FusionScope scope(GetParam());
  const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  Tensor b = lf::from_vector(std::vector<float>{1, 3, 5, 7, 9}, {5});
  Tensor v = lf::from_vector(std::vector<float>{3, 6, 9, 0, 10, nan, -inf, inf}, {2, 4});
  EXPECT_EQ(lf::searchsorted(b, v).to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 4, 0, 5, 5, 0, 5}));
  EXPECT_EQ(lf::searchsorted(b, v, false, true).to_vector<int64_t>(), (std::vector<int64_t>{2, 3, 5, 0, 5, 5, 0, 5}));
  EXPECT_EQ(lf::searchsorted(b, v).shape(), (lf::Shape{2, 4}));
  EXPECT_EQ(lf::searchsorted(b, v, true).dtype(), DType::Int32);
  // Rows: each row of the sequence is searched for its own values (PyTorch's example).
  Tensor rows = lf::from_vector(std::vector<int64_t>{1, 3, 5, 7, 9, 2, 4, 6, 8, 10}, {2, 5});
  Tensor rv = lf::from_vector(std::vector<int64_t>{3, 6, 9, 3, 6, 9}, {2, 3});
  EXPECT_EQ(lf::searchsorted(rows, rv).to_vector<int64_t>(), (std::vector<int64_t>{1, 3, 4, 1, 2, 4}));
  EXPECT_EQ(lf::searchsorted(rows, rv, false, true).to_vector<int64_t>(), (std::vector<int64_t>{2, 3, 5, 1, 3, 4}));
  // A number; a NaN boundary is largest; an empty sequence; the sorter of an unsorted one.
  EXPECT_EQ(lf::searchsorted(b, 5).item<int64_t>(), 2);
  EXPECT_EQ(lf::searchsorted(b, 5, false, true).item<int64_t>(), 3);
  EXPECT_EQ(lf::searchsorted(b, nan).item<int64_t>(), 5);
  // NaN boundaries as PyTorch's search meets them: a probe of one goes right, so a value past every
  // number gives M, and [1, 2, NaN, NaN, NaN] gives 5 for 1.5 where counting would give 1.
  EXPECT_EQ(lf::searchsorted(lf::from_vector(std::vector<float>{1, 2, nan}, {3}), 5.0f).item<int64_t>(), 3);
  EXPECT_EQ(lf::searchsorted(lf::from_vector(std::vector<float>{1, 2, nan, nan, nan}, {5}), 1.5f).item<int64_t>(), 5);
  EXPECT_EQ(lf::searchsorted(lf::zeros({0}), v).to_vector<int64_t>(), std::vector<int64_t>(8, 0));
  Tensor unsorted = lf::from_vector(std::vector<float>{9, 1, 7, 3, 5}, {5});
  EXPECT_EQ(lf::searchsorted(unsorted, v, false, false, lf::argsort(unsorted)).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 3, 4, 0, 5, 5, 0, 5}));
  // bucketize: boundaries[i - 1] < x <= boundaries[i] (right: boundaries[i - 1] <= x < boundaries[i]).
  Tensor x = lf::from_vector(std::vector<float>{1, 3, 5, 6}, {4});
  EXPECT_EQ(lf::bucketize(x, b).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(lf::bucketize(x, b, false, true).to_vector<int64_t>(), (std::vector<int64_t>{1, 2, 3, 3}));
  EXPECT_EQ(lf::searchsorted(lf::zeros({0}), lf::zeros({0})).shape(), (lf::Shape{0}));
}

// Every dtype, sequences of 1 to 1500 boundaries (ties, NaN last, infinities), values of every
// kind through a transposed view, 1-D and rows, both sides: against PyTorch's search and against
// the reference executor.
TEST_P(Sort, SearchsortedMatchesPyTorchsSearch) {
  FusionScope scope(GetParam());
  uint64_t seed = 300;
  for (DType dt : kDTypes)
    for (int64_t m : {1, 7, 1500}) {
      std::string what = std::string(lf::dtype_name(dt)) + " m=" + std::to_string(m);
      Tensor seq = lf::sort(keys(dt, {3, m}, seed++), 1).first;
      Tensor vals = keys(dt, {40, 3}, seed++).transpose(0, 1);  // [3, 40], a view
      std::vector<double> hs = lf::cast(seq, DType::Float64).to_vector<double>();
      std::vector<double> hv = lf::cast(vals, DType::Float64).to_vector<double>();
      for (bool right : {false, true}) {
        Tensor flat = lf::searchsorted(lf::select(seq, 0, 1), vals, false, right);  // 1-D: every value in row 1
        Tensor per_row = lf::searchsorted(seq, vals, false, right);
        std::vector<int64_t> got_flat = flat.to_vector<int64_t>(), got_rows = per_row.to_vector<int64_t>();
        for (size_t r = 0; r < 3; ++r) {
          std::vector<double> row(hs.begin() + static_cast<int64_t>(r) * m, hs.begin() + static_cast<int64_t>(r + 1) * m);
          std::vector<double> row1(hs.begin() + m, hs.begin() + 2 * m);
          for (size_t i = 0; i < 40; ++i) {
            double value = hv[r * 40 + i];
            ASSERT_EQ(got_rows[r * 40 + i], torch_search(row, value, right)) << what << " row " << r << " " << value;
            ASSERT_EQ(got_flat[r * 40 + i], torch_search(row1, value, right)) << what << " 1-D " << value;
          }
        }
        expect_matches_reference(per_row, 1, what + " rows");
        expect_matches_reference(lf::bucketize(vals, lf::select(seq, 0, 2), true, right), 1, what + " bucketize");
      }
    }
}

// isin: against a host set, for every dtype, test elements with duplicates, NaN never found.
TEST_P(Sort, IsinMatchesAHostSet) {
  FusionScope scope(GetParam());
  const float nan = std::nanf("");
  Tensor e = lf::from_vector(std::vector<float>{1, 2, 3, nan, -0.0f, 7}, {2, 3});
  Tensor t = lf::from_vector(std::vector<float>{3, 0, nan, 1, 1}, {5});
  EXPECT_EQ(lf::isin(e, t).to_vector<bool>(), (std::vector<bool>{true, false, true, false, true, false}));
  EXPECT_EQ(lf::isin(e, t, true).to_vector<bool>(), (std::vector<bool>{false, true, false, true, false, true}));
  EXPECT_EQ(lf::isin(e, lf::zeros({0})).to_vector<bool>(), std::vector<bool>(6, false));
  EXPECT_TRUE(lf::isin(lf::full({1}, 1), lf::from_vector(std::vector<float>{1, nan}, {2})).item<bool>());
  EXPECT_EQ(lf::isin(e, t).shape(), (lf::Shape{2, 3}));
  for (DType dt : kDTypes) {
    Tensor x = keys(dt, {30, 7}, 61), test = keys(dt, {2, 40}, 62);
    std::vector<double> hx = lf::cast(x, DType::Float64).to_vector<double>();
    std::vector<double> ht = lf::cast(test, DType::Float64).to_vector<double>();
    std::vector<bool> got = lf::isin(x, test).to_vector<bool>();
    for (size_t i = 0; i < hx.size(); ++i) {
      bool want = std::find(ht.begin(), ht.end(), hx[i]) != ht.end();  // == : NaN never, -0.0 finds 0.0
      ASSERT_EQ(got[i], want) << lf::dtype_name(dt) << " " << hx[i];
    }
  }
}

// The search is one kernel with its producers and consumers: log2(M) + 1 gathers fused.
TEST(SearchsortedFusion, TheWholeSearchIsOneKernel) {
  Tensor seq = lf::sort(keys(DType::Float32, {1000}, 5), 0).first;
  Tensor x = keys(DType::Float32, {4096}, 6);
  lf::sync();
  lf::test::StatsDelta d;
  Tensor bins = lf::searchsorted(seq, x * 2 + 1);
  Tensor hist = lf::cast(bins, DType::Float32) * 0.5f;
  hist.to_vector<float>();
  EXPECT_EQ(d.launched(), 1u);
}

TEST(SearchsortedErrors, BadArgumentsFailAtTheCall) {
  std::string m = lf::test::error_message([] { lf::searchsorted(lf::ones({2, 5}), lf::ones({3, 4})); });
  EXPECT_NE(m.find("lf::searchsorted: a sorted sequence of more than one dim needs values with the same leading dims"),
            std::string::npos) << m;
  EXPECT_NE(m.find("[2, 5]"), std::string::npos) << m;
  EXPECT_NE(m.find("[3, 4]"), std::string::npos) << m;
  m = lf::test::error_message([] { lf::searchsorted(lf::scalar(1.0f), lf::ones({3})); });
  EXPECT_NE(m.find("one dim at least"), std::string::npos) << m;
  m = lf::test::error_message([] { lf::searchsorted(lf::ones({2, 5}), 1.0); });
  EXPECT_NE(m.find("one dim only"), std::string::npos) << m;
  m = lf::test::error_message([] { lf::searchsorted(lf::ones({5}), lf::ones({3}), false, false, lf::zeros({5}, DType::Int32)); });
  EXPECT_NE(m.find("sorter must be int64"), std::string::npos) << m;
  m = lf::test::error_message([] {
    lf::searchsorted(lf::ones({5}), lf::ones({3}), false, false, lf::full({5}, 9, DType::Int64)).to_vector<int64_t>();
  });
  EXPECT_NE(m.find("lf::searchsorted: index 9 is out of range for dim 0 of size 5"), std::string::npos) << m;
  m = lf::test::error_message([] { lf::bucketize(lf::ones({3}), lf::ones({2, 2})); });
  EXPECT_NE(m.find("lf::bucketize: boundaries must have one dim"), std::string::npos) << m;
}

INSTANTIATE_TEST_SUITE_P(FusedAndUnfused, Sort, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fused" : "Unfused"; });

TEST(SortErrors, BadArgumentsFailAtTheCall) {
  Tensor x = lf::ones({2, 3});
  EXPECT_THROW(lf::kthvalue(x, 0), lf::Error);
  EXPECT_THROW(lf::kthvalue(x, 4), lf::Error);
  EXPECT_THROW(lf::kthvalue(x, 1, 2), lf::Error);
  EXPECT_THROW(lf::median(lf::zeros({2, 0}), 1), lf::Error);
  EXPECT_THROW(lf::median(lf::zeros({0})), lf::Error);
  try {
    lf::kthvalue(x, 5, 1);
    FAIL() << "no error";
  } catch (const lf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("kthvalue"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[2, 3]"), std::string::npos) << e.what();
  }
}

}  // namespace
