// Scans and scatters as backend library calls (Backend::scan, Backend::scatter; issue 23) against
// the reference executor: long lines (more than one GPU tile of 2048, and more than the CPU's
// two-pass threshold), many short lines, every dim, strided views, every dtype, NaN and inf, empty
// and size-1 dims; scatters with duplicates on both CPU paths (per-chunk bins, ordered buckets),
// Int32 and Int64 indices, and index errors at the sync point. On a GPU host the default device is
// CUDA, so the same tests run the CUDA kernels (look-back scan, column scan, atomic scatter).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "codegen/cuda/backend.h"
#include "codegen/cuda/ops.h"
#include "codegen/cuda/nvrtc_batch.h"
#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"
#include "runtime/config.h"

namespace {

using lf::DType;
using lf::Tensor;
using lf::test::FusionScope;

const DType kAll[] = {DType::Bool,     DType::Int32,   DType::Int64,  DType::Float16,
                      DType::BFloat16, DType::Float32, DType::Float64};

// Values in [lo, hi) of dtype dt, computed on the device and stored before the test reads them:
// the reference then starts from the same values. (Left pending, the reference would recompute
// them in its own arithmetic: a GPU kernel's contracted multiply-add can round a value that the
// cast to an integer then truncates one lower, and every later prefix of a scan differs by one.)
Tensor data(lf::Shape shape, DType dt, double lo, double hi) {
  Tensor t = lf::cast(lf::rand(std::move(shape)) * (hi - lo) + lo, dt);
  lf::sync();
  return t;
}

class ScanScatter : public ::testing::TestWithParam<bool> {};  // fusion on, off

TEST_P(ScanScatter, ScansMatchReferenceOnLongLines) {
  FusionScope scope(GetParam());
  for (int64_t n : {int64_t{1} << 20, (int64_t{1} << 20) + 7}) {
    for (DType dt : kAll) {
      // Small positive values: prefixes stay far from the 16-bit floats' overflow and from
      // cancellation, so the tolerance of a reduction of n values applies.
      Tensor x = is_floating(dt) ? data({n}, dt, 0, 1.0 / 64) : data({n}, dt, -50, 50);
      lf::test::expect_matches_reference(lf::cumsum(x, 0), n, "cumsum long line");
      // Signs only: a long product stays exact in every dtype.
      Tensor s = dt == DType::Bool ? x : lf::cast(lf::where(data({n}, DType::Float32, 0, 1) > 0.5f, lf::ones({n}), -1), dt);
      lf::test::expect_matches_reference(lf::cumprod(s, 0), 1, "cumprod long line");
    }
  }
  // A few long lines, along the last and along a leading dim (strided lines).
  Tensor x = data({3, (int64_t{1} << 17) + 5}, DType::Float32, 0, 1);
  lf::test::expect_matches_reference(lf::cumsum(x, 1), x.size(1), "cumsum 3 lines");
  lf::test::expect_matches_reference(lf::cumsum(x.transpose(0, 1), 0), x.size(1), "cumsum strided lines");
  Tensor y = data({(int64_t{1} << 15) + 3, 2}, DType::Float64, -1, 1);
  lf::test::expect_matches_reference(lf::cumsum(y, 0), y.size(0), "cumsum along dim 0");
}

TEST_P(ScanScatter, ScansMatchReferenceOnManyLinesEveryDim) {
  FusionScope scope(GetParam());
  for (DType dt : kAll) {
    Tensor a = is_floating(dt) ? data({7, 5, 9}, dt, -2, 2) : data({7, 5, 9}, dt, -9, 9);
    for (int64_t d = -3; d < 3; ++d) {
      lf::test::expect_matches_reference(lf::cumsum(a, d), 9, "cumsum every dim");
      lf::test::expect_matches_reference(lf::cumprod(a, d), 9, "cumprod every dim");
    }
    lf::test::expect_matches_reference(lf::cumsum(a.permute({2, 0, 1}), 1), 7, "cumsum of a permuted view");
    lf::test::expect_matches_reference(lf::cumsum(lf::slice(a, 2, 1, 9, 3), 2), 3, "cumsum of a stepped slice");
    Tensor many = is_floating(dt) ? data({4096, 100}, dt, -1, 1) : data({4096, 100}, dt, -9, 9);
    lf::test::expect_matches_reference(lf::cumsum(many, 1), 100, "cumsum 4096 lines of 100");
    lf::test::expect_matches_reference(lf::cumsum(many, 0), 4096, "cumsum 100 lines of 4096 along dim 0");
    Tensor shorts = data({20000, 5}, dt, 0, 2);
    lf::test::expect_matches_reference(lf::cumsum(shorts, 1), 5, "cumsum 20000 lines of 5");
    lf::test::expect_matches_reference(lf::cumsum(data({0, 5}, dt, 0, 1), 1), 1, "cumsum empty");
    lf::test::expect_matches_reference(lf::cumsum(data({5, 0}, dt, 0, 1), 1), 1, "cumsum empty lines");
    lf::test::expect_matches_reference(lf::cumprod(data({1, 1}, dt, 1, 3), 0), 1, "cumprod size 1");
    lf::test::expect_matches_reference(lf::cumsum(data({}, dt, 1, 3), 0), 1, "cumsum 0-d");
  }
}

// The GPU scan's paths at sizes that reach them (tiles of 4096: 16 items a thread): float32 lines
// read with 16-byte loads and lines that start unaligned (a slice at offset 1, lines of odd length
// after the first), lines of 17 tiles whose look-back windows of 32 reach into the line before,
// and many lines side by side along a leading dim (a thread per line, n above the short-line 64).
TEST_P(ScanScatter, ScansMatchReferenceOnGpuPathShapes) {
  FusionScope scope(GetParam());
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16, DType::Int64}) {
    const bool fl = is_floating(dt);
    int64_t n = (int64_t{1} << 21) + 3;
    Tensor x = fl ? data({n}, dt, 0, 1.0 / 64) : data({n}, dt, -50, 50);
    lf::test::expect_matches_reference(lf::cumsum(lf::slice(x, 0, 1, n, 1), 0), n, "cumsum unaligned long line");
    Tensor lines = fl ? data({40, 16 * 4096 + 1}, dt, 0, 1.0 / 64) : data({40, 16 * 4096 + 1}, dt, -50, 50);
    lf::test::expect_matches_reference(lf::cumsum(lines, 1), lines.size(1), "cumsum 40 lines of 17 tiles");
    lf::test::expect_matches_reference(lf::cumsum(lf::slice(lines, 1, 0, 4 * 4096, 1), 1), 4 * 4096,
                                       "cumsum 40 strided lines of 4 whole tiles");
    Tensor cols = fl ? data({80, 65536 + 32}, dt, -1, 1) : data({80, 65536 + 32}, dt, -50, 50);
    lf::test::expect_matches_reference(lf::cumsum(cols, 0), 80, "cumsum 65568 lines of 80 along dim 0");
    lf::test::expect_matches_reference(lf::cummax(cols, 0).second, 1, "cummax 65568 lines of 80 along dim 0");
  }
}

// Lines on either side of the GPU's long-line threshold (65536: float32 tiles of 8192, 32 items a
// thread), every float dtype: 65535 and 65536 elements, and 3 lines of 2^20 + 5 (2 unaligned,
// partial last tiles) with an inf and a NaN; float32 products, and lines side by side along dim 0
// (strided: the element-by-element path through shared memory). Positive values: no cancellation,
// so the tolerance of a sum of n values applies.
TEST_P(ScanScatter, ScansMatchReferenceAroundLongLineTiles) {
  FusionScope scope(GetParam());
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    for (int64_t n : {int64_t{65535}, int64_t{65536}}) {
      Tensor x = data({2, n}, dt, 0, 1.0 / 64);
      lf::test::expect_matches_reference(lf::cumsum(x, 1), n, "cumsum lines at the threshold");
    }
    const int64_t m = (int64_t{1} << 20) + 5;
    Tensor i = lf::arange(0, static_cast<double>(3 * m), 1, DType::Int64).reshape({3, m});
    Tensor lines = lf::where(i == m + 77, std::numeric_limits<float>::infinity(),
                             lf::where(i == 2 * m + 8193, std::numeric_limits<float>::quiet_NaN(),
                                       lf::cast(data({3, m}, dt, 0, 1.0 / 64), DType::Float32)));
    lines = lf::cast(lines, dt);
    lf::sync();
    lf::test::expect_matches_reference(lf::cumsum(lines, 1), m, "cumsum 3 long lines");
    lf::test::expect_matches_reference(lf::logcumsumexp(lines, 1), m, "logcumsumexp 3 long lines");
  }
  Tensor s = lf::cast(lf::where(data({70001}, DType::Float32, 0, 1) > 0.5f, lf::full({70001}, 1.0001), 0.9999), DType::Float32);
  lf::test::expect_matches_reference(lf::cumprod(s, 0), 70001, "cumprod of a long float32 line");
  Tensor side = data({70000, 4}, DType::Float32, 0, 1.0 / 64);
  lf::test::expect_matches_reference(lf::cumsum(side, 0), 70000, "cumsum of 4 long lines side by side");
}

TEST_P(ScanScatter, ScansPropagateNanAndInf) {
  FusionScope scope(GetParam());
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Tensor small = lf::from_vector(std::vector<float>{1, inf, 2, -inf, 3, nan, 4}, {7});
  EXPECT_EQ(lf::cumsum(small, 0).to_vector<float>()[1], inf);
  EXPECT_TRUE(std::isnan(lf::cumsum(small, 0).to_vector<float>()[3]));
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    lf::test::expect_matches_reference(lf::cumsum(lf::cast(small, dt), 0), 7, "cumsum nan/inf");
    lf::test::expect_matches_reference(lf::cumprod(lf::cast(small, dt), 0), 7, "cumprod nan/inf");
    // A long line: inf from the middle on, NaN in the last quarter (another tile, another chunk).
    int64_t n = (int64_t{1} << 20) + 7;
    Tensor i = lf::arange(0, static_cast<double>(n), 1, DType::Int64);
    Tensor x = lf::where(i == n / 2, inf, lf::where(i == 3 * n / 4, nan, lf::full({n}, 0.001)));
    lf::test::expect_matches_reference(lf::cumsum(lf::cast(x, dt), 0), n, "cumsum long nan/inf");
  }
}

TEST_P(ScanScatter, CumExtremesAndLogcumsumexpMatchReference) {
  FusionScope scope(GetParam());
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // Hand-computed: ties take the latest position, NaN wins and stays (the latest NaN), as PyTorch.
  Tensor v = lf::from_vector(std::vector<float>{1, 3, 3, 2, nan, 5, nan, 0}, {8});
  auto [mv, mi] = lf::cummax(v, 0);
  EXPECT_EQ(mi.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 2, 4, 4, 6, 6}));
  EXPECT_EQ(mv.to_vector<float>()[3], 3.0f);
  EXPECT_TRUE(std::isnan(mv.to_vector<float>()[5]));
  auto [nv, ni] = lf::cummin(lf::from_vector(std::vector<int64_t>{4, 2, 2, 7, 1}, {5}), 0);
  EXPECT_EQ(ni.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 2, 4}));
  EXPECT_EQ(nv.to_vector<int64_t>(), (std::vector<int64_t>{4, 2, 2, 2, 1}));
  Tensor l = lf::logcumsumexp(lf::from_vector(std::vector<float>{0, 0, -inf, 1000, inf}, {5}), 0);
  std::vector<float> lv = l.to_vector<float>();
  EXPECT_NEAR(lv[1], std::log(2.0f), 1e-6);
  EXPECT_NEAR(lv[2], std::log(2.0f), 1e-6);
  EXPECT_EQ(lv[3], 1000.0f);  // no overflow
  EXPECT_EQ(lv[4], inf);
  EXPECT_EQ(lf::logcumsumexp(lf::from_vector(std::vector<int64_t>{1, 2}, {2}), 0).dtype(), DType::Float32);
  for (DType dt : kAll) {
    Tensor a = is_floating(dt) ? data({7, 5, 9}, dt, -2, 2) : data({7, 5, 9}, dt, -4, 4);  // many ties
    for (int64_t d = 0; d < 3; ++d) {
      lf::test::expect_matches_reference(lf::cummax(a, d).second, 1, "cummax indices");
      lf::test::expect_matches_reference(lf::cummin(a, d).first, 1, "cummin values");
      if (dt != DType::Bool) lf::test::expect_matches_reference(lf::logcumsumexp(a, d), 9, "logcumsumexp");
    }
    for (int64_t n : {int64_t{1} << 20, (int64_t{1} << 20) + 7}) {
      Tensor x = is_floating(dt) ? data({n}, dt, -1000, 1000) : data({n}, dt, -1000000, 1000000);
      lf::test::expect_matches_reference(lf::cummax(x, 0).second, 1, "cummax long line");
      lf::test::expect_matches_reference(lf::cummin(x, 0).second, 1, "cummin long line");
      if (is_floating(dt))
        lf::test::expect_matches_reference(lf::logcumsumexp(data({n}, dt, -3, 3), 0), n, "logcumsumexp long line");
    }
    lf::test::expect_matches_reference(lf::cummax(data({20000, 3}, dt, -2, 2), 1).second, 1, "cummax short lines");
    lf::test::expect_matches_reference(lf::cummax(data({0, 3}, dt, -2, 2), 1).second, 1, "cummax empty");
  }
  // NaN in a long line: from there on the NaN's position (and the latest NaN's).
  int64_t n = (int64_t{1} << 20) + 7;
  Tensor i = lf::arange(0, static_cast<double>(n), 1, DType::Int64);
  Tensor x = lf::where((i == n / 3) || (i == n / 2), nan, data({n}, DType::Float32, -1, 1));
  lf::test::expect_matches_reference(lf::cummax(x, 0).second, 1, "cummax long nan");
  lf::test::expect_matches_reference(lf::cummin(x, 0).second, 1, "cummin long nan");
  lf::test::expect_matches_reference(lf::logcumsumexp(x, 0), n, "logcumsumexp long nan");
}

TEST_P(ScanScatter, ScatterAddMatchesReference) {
  FusionScope scope(GetParam());
  for (DType dt : kAll) {
    if (dt == DType::Bool) continue;  // refused at the call
    for (DType it : {DType::Int32, DType::Int64}) {
      // index_add into [K, D] from [N, D]: N / K duplicates per row (few: 16-bit adds round).
      Tensor idx = lf::cast(data({64}, DType::Float32, -8, 8), it);  // negative ones count from the end
      Tensor x = data({8, 33}, dt, -3, 3), src = data({64, 33}, dt, -3, 3);
      // A GPU's atomic adds land in any order, each rounded to the dtype: in the 16-bit floats a sum
      // of 9 values in [-3, 3] then differs by a few units of its largest partial sum's last place.
      const int64_t terms = dt == DType::Float16 || dt == DType::BFloat16 ? 64 : 8;
      lf::test::expect_matches_reference(lf::index_add(x, 0, idx, src), terms, "index_add dim 0");
      lf::test::expect_matches_reference(lf::index_add(x.transpose(0, 1), 1, idx, src.transpose(0, 1)), terms,
                                         "index_add dim 1 of views");
      // scatter_add along each dim of a 3-D tensor; index smaller than src (src is sliced).
      Tensor self = data({4, 6, 5}, dt, -3, 3);
      for (int64_t d = 0; d < 3; ++d) {
        lf::Shape ishape{3, 4, 5};
        Tensor sidx = lf::cast(data(ishape, DType::Float32, 0, static_cast<double>(self.size(d))), it);
        lf::test::expect_matches_reference(lf::scatter_add(self, d, sidx, data({4, 6, 5}, dt, -3, 3)), 4,
                                           "scatter_add 3-D");
      }
      // Empty index, empty self dims.
      Tensor none = lf::cast(lf::zeros({0, 33}), it);
      lf::test::expect_matches_reference(lf::scatter_add(x, 0, none, data({0, 33}, dt, 0, 1)), 1, "empty index");
    }
  }
  // Many values into a few bins (the CPU's per-chunk bins): counts exact, float weights within a
  // sum's tolerance; and into many bins (the CPU's ordered buckets: the reference bit for bit).
  int64_t n = int64_t{1} << 20;
  Tensor a = lf::cast(data({n}, DType::Float32, 0, 1000), DType::Int64);
  lf::test::expect_matches_reference(lf::bincount(a, {}, 1000), 1, "bincount");
  Tensor w = data({n}, DType::Float32, 0, 1);
  lf::test::expect_matches_reference(lf::bincount(a, w, 1000), n / 1000 * 4, "bincount weights");
  Tensor wide = lf::cast(data({n}, DType::Float32, 0, 200000), DType::Int32);
  lf::test::expect_matches_reference(lf::scatter_add(lf::zeros({200000}), 0, wide, w), 16, "scatter many bins");
  lf::test::expect_matches_reference(lf::scatter_add(lf::zeros({200000}, DType::Int64), 0, wide,
                                                     lf::cast(wide, DType::Int64)),
                                     1, "scatter many bins int64");
}

// The GPU scatter's paths at sizes that reach them: scatters of rank 1 and 2 with many values an
// output element run with the output in shared memory, 65541 bins in two slices (4-byte bins) or
// three (8-byte bins) of one block's shared memory, a strided src, negative indices, a zeros() self
// cleared on the device, a full() src (bincount without weights) as a constant; fewer values a
// bin: global atomics.
TEST_P(ScanScatter, ScatterAddMatchesReferenceOnGpuPathShapes) {
  FusionScope scope(GetParam());
  const int64_t n = (int64_t{1} << 20) + 3, bins = 65536 + 5;
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16, DType::Int32, DType::Int64}) {
    const bool fl = is_floating(dt);
    // Each bin gets about 16 values; a GPU's adds land in any order (the 16-bit floats' partial
    // sums round each add, in the shared bins in float32 only once).
    const int64_t terms = dt == DType::BFloat16 ? 256 : 32;
    for (DType it : {DType::Int32, DType::Int64}) {
      Tensor idx = lf::cast(data({n}, DType::Float32, -static_cast<double>(bins), static_cast<double>(bins)), it);
      Tensor src2 = fl ? data({2 * n}, dt, -1, 1) : data({2 * n}, dt, -50, 50);
      Tensor src = lf::slice(src2, 0, 0, 2 * n, 2);
      lf::test::expect_matches_reference(lf::scatter_add(lf::zeros({bins}, dt), 0, idx, src), terms,
                                         "scatter_add 65541 bins, zeros self");
      Tensor self = fl ? data({bins}, dt, -1, 1) : data({bins}, dt, -50, 50);
      lf::test::expect_matches_reference(lf::scatter_add(self, 0, idx, src), terms, "scatter_add 65541 bins");
      lf::test::expect_matches_reference(
          lf::scatter_add(self, 0, lf::slice(idx, 0, 0, 100000, 1), lf::slice(src, 0, 0, 100000, 1)), terms,
          "scatter_add 100000 values into 65541 bins (global atomics)");
    }
  }
  // Rank 2 in shared memory: k-means' per-cluster sums (index_add of rows: an index broadcast along
  // dim 1), and along dim 1 with an index shorter than self along dim 0.
  for (DType dt : {DType::Float32, DType::Int64}) {
    const bool fl = is_floating(dt);
    Tensor assign = lf::cast(data({1 << 17}, DType::Float32, 0, 64), DType::Int64);
    Tensor rows = fl ? data({1 << 17, 16}, dt, -1, 1) : data({1 << 17, 16}, dt, -50, 50);
    lf::test::expect_matches_reference(lf::index_add(lf::zeros({64, 16}, dt), 0, assign, rows), 4096,
                                       "index_add of 2^17 rows into 64");
    Tensor self = fl ? data({50, 100}, dt, -1, 1) : data({50, 100}, dt, -50, 50);
    Tensor idx1 = lf::cast(data({40, 4000}, DType::Float32, -100, 100), DType::Int32);
    Tensor src1 = fl ? data({45, 4001}, dt, -1, 1) : data({45, 4001}, dt, -50, 50);
    lf::test::expect_matches_reference(lf::scatter_add(self, 1, idx1, src1), 128, "scatter_add dim 1, 40 rows of 4000");
  }
  Tensor idx = lf::cast(data({n}, DType::Float32, 0, static_cast<double>(bins)), DType::Int64);
  lf::test::expect_matches_reference(lf::bincount(idx, {}, bins), 1, "bincount 65541 bins");
  lf::test::expect_matches_reference(lf::bincount(idx, data({n}, DType::Float32, 0, 1), bins), 32,
                                     "bincount float32 weights 65541 bins");
  // A bad index in the second slice's range, and a too-negative one.
  Tensor pos = lf::arange(0, static_cast<double>(n), 1, DType::Int64);
  for (int64_t bad : {bins + 70000, -bins - 1}) {
    try {
      lf::scatter_add(lf::zeros({bins}), 0, lf::where(pos == n - 5, bad, idx), lf::ones({n})).to_vector<float>();
      ADD_FAILURE() << "no error for index " << bad;
    } catch (const lf::Error& e) {
      EXPECT_NE(std::string(e.what()).find("index " + std::to_string(bad) + " is out of range"), std::string::npos)
          << e.what();
    }
  }
}

TEST_P(ScanScatter, ScatterIndexOutOfRangeIsAnErrorAtTheSyncPoint) {
  FusionScope scope(GetParam());
  auto expect_error = [](const Tensor& t, const std::string& what) {
    try {
      t.to_vector<double>();
      ADD_FAILURE() << "no error for " << what;
    } catch (const lf::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  for (DType it : {DType::Int32, DType::Int64}) {
    Tensor idx = lf::cast(lf::from_vector(std::vector<int64_t>{0, 1, 5, 2}, {4}), it);
    expect_error(lf::scatter_add(lf::zeros({3}), 0, idx, lf::ones({4})),
                 "lf::scatter_add: index 5 is out of range for dim 0 of size 3 (valid: -3 to 2)");
    Tensor neg = lf::cast(lf::from_vector(std::vector<int64_t>{-4}, {1}), it);
    expect_error(lf::scatter_add(lf::zeros({3}), 0, neg, lf::ones({1})), "lf::scatter_add: index -4");
    // One bad index among many values into few bins (the CPU's per-chunk bins), and into many bins.
    int64_t n = int64_t{1} << 19;
    Tensor pos = lf::arange(0, static_cast<double>(n), 1, DType::Int64);
    Tensor many = lf::cast(lf::where(pos == n - 3, 1000, lf::cast(data({n}, DType::Float32, 0, 100), DType::Int64)), it);
    expect_error(lf::scatter_add(lf::zeros({100}), 0, many, lf::ones({n})), "lf::scatter_add: index 1000");
    Tensor wide = lf::cast(lf::where(pos == 12345, -n - 1, pos), it);
    expect_error(lf::scatter_add(lf::zeros({n}), 0, wide, lf::ones({n})),
                 "lf::scatter_add: index " + std::to_string(-n - 1));
    expect_error(lf::scatter_add(lf::zeros({0, 2}), 0, lf::cast(lf::zeros({1, 2}), it), lf::ones({1, 2})),
                 "(the dim is empty)");
  }
  // The trace stays usable.
  EXPECT_EQ(lf::bincount(lf::from_vector(std::vector<int64_t>{2, 0, 2}, {3})).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 0, 2}));
}

// histc against a host count with PyTorch's rule (bin floor((x - min) * bins / (max - min)), max in
// the last bin, outside values and NaN not counted), for the float dtypes; the data's own range
// when min == max.
TEST_P(ScanScatter, HistcMatchesAHostCount) {
  FusionScope scope(GetParam());
  const float nan = std::nanf("");
  EXPECT_EQ(lf::histc(lf::from_vector(std::vector<float>{1, 2, 1}, {3}), 4, 0, 3).to_vector<float>(),
            (std::vector<float>{0, 2, 1, 0}));  // PyTorch's example
  EXPECT_EQ(lf::histc(lf::from_vector(std::vector<float>{0, 3, 3.5f, -1, nan, 1.5f}, {2, 3}), 3, 0, 3).to_vector<float>(),
            (std::vector<float>{1, 1, 1}));  // 3 is in the last bin; 3.5, -1 and NaN are not counted
  EXPECT_EQ(lf::histc(lf::from_vector(std::vector<float>{2, 4, 4, 3}, {4}), 2).to_vector<float>(),
            (std::vector<float>{1, 3}));  // the data's range [2, 4]
  EXPECT_EQ(lf::histc(lf::full({3}, 5), 2).to_vector<float>(), (std::vector<float>{0, 3}));  // [4, 6]
  EXPECT_EQ(lf::histc(lf::zeros({0}), 3).to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_THROW(lf::histc(lf::zeros({3}, DType::Int32), 3), lf::Error);
  EXPECT_THROW(lf::histc(lf::zeros({3}), 0), lf::Error);
  EXPECT_THROW(lf::histc(lf::zeros({3}), 3, 2, 1), lf::Error);
  // Values (2k + 1) / 128 in (-1, 1) (exact in every float dtype, as are x + 1 and its product by
  // 4, so the bins do not depend on rounding), the range's two ends, and values outside it.
  lf::test::Rng rng(5);
  std::vector<double> v;
  for (int i = 0; i < 300; ++i) v.push_back((static_cast<double>(rng.range(-64, 63)) + 0.5) / 64);
  for (double e : {-1.0, 1.0, 1.0, -1.25, 1.5, 0.0}) v.push_back(e);
  std::vector<double> want(8, 0);
  for (double e : v)
    if (e >= -1 && e <= 1) want[static_cast<size_t>(std::min<int64_t>(7, static_cast<int64_t>(std::floor((e + 1) * 4))))] += 1;
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    Tensor x = lf::cast(lf::from_vector(v, {static_cast<int64_t>(v.size())}), dt).reshape({2, -1});
    Tensor got = lf::histc(x * 1, 8, -1, 1);  // a computed input, fused into the bins' kernel
    EXPECT_EQ(got.dtype(), dt);
    EXPECT_EQ(lf::cast(got, DType::Float64).to_vector<double>(), want) << lf::dtype_name(dt);
    lf::test::expect_matches_reference(lf::histc(x * 2, 5, -1, 1), 1, "histc");
  }
}

// nonzero and masked_select against values computed on the host from the inputs.
TEST_P(ScanScatter, NonzeroAndMaskedSelect) {
  FusionScope scope(GetParam());
  Tensor x = lf::from_vector(std::vector<float>{0, 1.5f, 0, -2, 0, 0}, {2, 3});
  EXPECT_EQ(lf::nonzero(x).shape(), (lf::Shape{2, 2}));
  EXPECT_EQ(lf::nonzero(x).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 1, 0}));
  EXPECT_EQ(lf::masked_select(x, x < 0.5f).to_vector<float>(), (std::vector<float>{0, 0, -2, 0, 0}));
  EXPECT_EQ(lf::masked_select(lf::arange(0.0, 3), lf::from_vector(std::vector<bool>{true, false}, {2, 1})).to_vector<float>(),
            (std::vector<float>{0, 1, 2}));  // the mask broadcasts
  EXPECT_EQ(lf::nonzero(lf::zeros({3, 0})).shape(), (lf::Shape{0, 2}));
  EXPECT_EQ(lf::nonzero(lf::zeros({4})).shape(), (lf::Shape{0, 1}));
  // -0 keeps its sign (values are gathered, not added).
  EXPECT_TRUE(std::signbit(lf::masked_select(lf::full({1}, -0.0), lf::full({1}, 1) > 0).to_vector<float>()[0]));
  // Large and multi-block: 2^20 + 7 elements, about a third selected, every dtype.
  int64_t n = (int64_t{1} << 20) + 7;
  for (DType dt : kAll) {
    Tensor v = lf::cast(data({n}, DType::Float32, -1, 2), dt);
    Tensor m = data({n}, DType::Float32, 0, 1) < 0.3f;
    std::vector<double> values = lf::cast(v, DType::Float64).to_vector<double>();
    std::vector<uint8_t> keep;
    for (bool b : m.to_vector<bool>()) keep.push_back(b);
    std::vector<double> want;
    std::vector<int64_t> where_nonzero;
    for (int64_t i = 0; i < n; ++i) {
      if (keep[static_cast<size_t>(i)]) want.push_back(values[static_cast<size_t>(i)]);
      if (values[static_cast<size_t>(i)] != 0) where_nonzero.push_back(i);
    }
    EXPECT_EQ(lf::cast(lf::masked_select(v, m), DType::Float64).to_vector<double>(), want) << lf::dtype_name(dt);
    Tensor nz = lf::nonzero(v.reshape({1, n}));
    EXPECT_EQ(nz.shape(), (lf::Shape{static_cast<int64_t>(where_nonzero.size()), 2}));
    std::vector<int64_t> got = lf::slice(nz, 1, 1, 2).to_vector<int64_t>();
    EXPECT_EQ(got, where_nonzero) << lf::dtype_name(dt);
  }
  lf::test::StatsDelta d;
  Tensor r = lf::nonzero(x);  // one sync point: the count
  EXPECT_EQ(d.flushes(), 1u);
  EXPECT_EQ(r.numel(), 4);
  try {
    lf::masked_select(x, x);
    ADD_FAILURE() << "no error for a float mask";
  } catch (const lf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("lf::masked_select: mask must be bool"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(FusedAndUnfused, ScanScatter, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fused" : "Unfused"; });

// A float sum over a line of many GPU tiles: the look-back adds the tiles' totals in an order that
// varies from run to run (within the sum's tolerance, above). LAZYFUSE_DETERMINISTIC=1 runs it in
// order on the host: the reference's values bit for bit, the same every run, and the log says so.
// Short lines (one tile), integers and cummax keep the GPU kernels. On the CPU the scan is
// deterministic anyway: the setting changes nothing there.
TEST(ScanScatterCalls, DeterministicFloatScansOnTheGpu) {
  lf::test::ConfigScope scope;
  lf::rt::mutable_config().deterministic = true;
  lf::rt::mutable_config().log_level = 1;
  const int64_t n = (int64_t{1} << 18) + 3;
  Tensor x = data({2, n}, DType::Float32, -1, 1);
  lf::test::Values ref = lf::test::reference_values(lf::cumsum(x, 1));
  // The GPU's host path is the reference itself; the CPU's threads split a line their own
  // (fixed) way: within the sum's tolerance, and the same every run.
  const lf::test::Tolerance tol =
      lf::default_device().is_cuda() ? lf::test::Tolerance{0, 0} : lf::test::default_tolerance(DType::Float32, n);
  std::vector<lf::test::Values> runs;
  for (int run = 0; run < 2; ++run) {
    Tensor y = lf::cumsum(x, 1);
    testing::internal::CaptureStderr();
    lf::sync();
    const std::string log = testing::internal::GetCapturedStderr();
    runs.push_back(lf::test::fused_values(y));
    EXPECT_EQ(lf::test::compare(ref, runs.back(), tol), "") << "run " << run;
    if (lf::default_device().is_cuda()) EXPECT_NE(log.find("LAZYFUSE_DETERMINISTIC=1: a float scan"), std::string::npos) << log;
  }
  EXPECT_EQ(lf::test::compare(runs[0], runs[1], lf::test::Tolerance{0, 0}), "") << "two runs differ";
  if (lf::default_device().is_cuda()) {  // one tile a line, and int64: the GPU's kernels still
    Tensor s = lf::cumsum(data({4, 1000}, DType::Float32, -1, 1), 1);
    Tensor i = lf::cumsum(data({n}, DType::Int64, -50, 50), 0);
    testing::internal::CaptureStderr();
    lf::sync();
    const std::string log = testing::internal::GetCapturedStderr();
    EXPECT_EQ(log.find("reference executor"), std::string::npos) << log;
  }
}

// A scan and a scatter are one launch of their backend each, not the reference executor (which
// launches nothing).
TEST(ScanScatterCalls, RunAsBackendLaunches) {
  Tensor x = data({1000}, DType::Float32, 0, 10), src = data({3}, DType::Float32, 0, 1);
  Tensor idx = lf::from_vector(std::vector<int64_t>{1, 1, 0}, {3});
  lf::sync();
  lf::test::StatsDelta d;
  lf::cumsum(x, 0).to_vector<float>();
  EXPECT_EQ(d.launched(), 1u);
  lf::scatter_add(x, 0, idx, src).to_vector<float>();
  EXPECT_EQ(d.launched(), 2u);
}

// The GPU scan kernels' CUDA C compiles with NVRTC for sm_90 for every dtype and op, and with 32
// items a thread for float32, which long lines use (all a machine without a GPU can check of them).
TEST(ScanScatterCuda, KernelsCompile) {
  if (!lf::cuda::check_compiles("extern \"C\" __global__ void probe() {}", "probe", "sm_90").ok())
    GTEST_SKIP() << "NVRTC is not available here";
  std::vector<lf::test::NvrtcJob> jobs;
  for (DType dt : {DType::Int32, DType::Int64, DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    for (lf::ir::Op op : {lf::ir::Op::CumSum, lf::ir::Op::CumProd, lf::ir::Op::LogCumSumExp, lf::ir::Op::CumMax,
                          lf::ir::Op::CumMin}) {
      if (op == lf::ir::Op::LogCumSumExp && !is_floating(dt)) continue;
      jobs.push_back({std::string(lf::cuda::kPrelude) + lf::cuda::scan_source(dt, op), "scan",
                      std::string(lf::dtype_name(dt)) + " " + lf::ir::op_name(op)});
      const bool extreme = op == lf::ir::Op::CumMax || op == lf::ir::Op::CumMin;
      if (!extreme && dt == DType::Float32)
        jobs.push_back({std::string(lf::cuda::kPrelude) + lf::cuda::scan_source(dt, op, 32), "scan",
                        std::string(lf::dtype_name(dt)) + " " + lf::ir::op_name(op) + " 32 items"});
    }
  }
  lf::test::expect_all_compile(jobs);  // the scatter kernels: ScatterFamilyCuda.KernelsCompile
}

}  // namespace
