// max_pool2d with dilation, max_pool2d_with_indices (PyTorch's return_indices), max_unpool2d and
// adaptive_max_pool2d
// against PyTorch's CPU loops written out on the host (aten/src/ATen/native/cpu/MaxPoolKernel.cpp:
// the window's elements inside the input in row-major order, a value taken where it is greater
// than the running maximum or NaN, the index starting at the first element inside the input),
// fused and unfused, with padding, strides, ceil_mode, NaN, -inf and ties, every float dtype.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"

namespace {

using lf::DType;
using lf::Tensor;
using lf::test::FusionScope;

struct Pooled {
  std::vector<float> values;
  std::vector<int64_t> indices;
};

int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  const int64_t span = in + 2 * p - d * (k - 1) - 1;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

Pooled host_pool(const std::vector<float>& x, int64_t planes, int64_t h, int64_t w, int64_t k, int64_t s, int64_t p,
                 int64_t d, bool ceil_mode) {
  const int64_t oh = out_size(h, k, s, p, d, ceil_mode), ow = out_size(w, k, s, p, d, ceil_mode);
  Pooled r;
  for (int64_t c = 0; c < planes; ++c)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        int64_t h0 = i * s - p, w0 = j * s - p;
        const int64_t h1 = std::min(h0 + (k - 1) * d + 1, h), w1 = std::min(w0 + (k - 1) * d + 1, w);
        while (h0 < 0) h0 += d;
        while (w0 < 0) w0 += d;
        int64_t index = h0 * w + w0;
        float best = -std::numeric_limits<float>::infinity();
        for (int64_t y = h0; y < h1; y += d)
          for (int64_t z = w0; z < w1; z += d) {
            const float v = x[static_cast<size_t>((c * h + y) * w + z)];
            if (v > best || std::isnan(v)) best = v, index = y * w + z;
          }
        r.values.push_back(best);
        r.indices.push_back(index);
      }
  return r;
}

void expect_same(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;
    } else {
      ASSERT_EQ(got[i], want[i]) << what << " at " << i;
    }
  }
}

class MaxPool : public ::testing::TestWithParam<bool> {};  // fusion on, off

TEST_P(MaxPool, IndicesAndDilationMatchPyTorchsLoops) {
  FusionScope scope(GetParam());
  // Values on a coarse grid: ties inside windows; some NaN, -inf and inf.
  Tensor x = lf::floor(lf::rand({2, 3, 9, 11}) * 6);
  Tensor u = lf::rand({2, 3, 9, 11});
  x = lf::where(u < 0.04f, std::nan(""), lf::where(u > 0.97f, -std::numeric_limits<double>::infinity(), x));
  x = lf::where((u > 0.5f) & (u < 0.52f), std::numeric_limits<double>::infinity(), x);
  const std::vector<float> hx = x.to_vector<float>();
  struct Case {
    int64_t k, s, p, d;
    bool ceil;
  };
  for (Case c : {Case{2, 2, 0, 1, false}, Case{3, 2, 1, 1, false}, Case{3, 1, 1, 2, false}, Case{2, 3, 1, 3, true},
                 Case{3, 2, 0, 2, true}, Case{1, 1, 0, 1, false}, Case{5, 1, 2, 1, false}, Case{3, 3, 1, 1, true}}) {
    const std::string what = "k" + std::to_string(c.k) + " s" + std::to_string(c.s) + " p" + std::to_string(c.p) + " d" +
                             std::to_string(c.d) + (c.ceil ? " ceil" : "");
    auto [values, indices] = lf::max_pool2d_with_indices(x * 1, c.k, c.s, c.p, c.ceil, c.d);
    const Pooled want = host_pool(hx, 6, 9, 11, c.k, c.s, c.p, c.d, c.ceil);
    EXPECT_EQ(indices.dtype(), DType::Int64) << what;
    expect_same(values.to_vector<float>(), want.values, what + " values");
    EXPECT_EQ(indices.to_vector<int64_t>(), want.indices) << what;
    // max_pool2d's values with dilation are the same.
    expect_same(lf::max_pool2d(x * 1, c.k, c.s, c.p, c.ceil, c.d).to_vector<float>(), want.values, what + " max_pool2d");
  }
  // A window longer than the input gives one output with ceil_mode, as PyTorch's (2 x 2, kernel 3,
  // stride 2): its elements inside the input; the same through max_pool2d's views and avg_pool2d.
  Tensor small = lf::from_vector(std::vector<float>{1, 4, 3, 2}, {1, 1, 2, 2});
  auto [sv, si] = lf::max_pool2d_with_indices(small, 3, 2, 0, true);
  EXPECT_EQ(sv.to_vector<float>(), std::vector<float>{4});
  EXPECT_EQ(si.to_vector<int64_t>(), std::vector<int64_t>{1});
  EXPECT_EQ(lf::max_pool2d(small, 3, 2, 0, true).to_vector<float>(), std::vector<float>{4});
  EXPECT_EQ(lf::avg_pool2d(small, 3, 2, 0, true).to_vector<float>(), std::vector<float>{2.5f});
  EXPECT_EQ(lf::max_pool2d(lf::rand({1, 1, 20, 20}), 17, 4, 0, true).shape(), (lf::Shape{1, 1, 2, 2}));  // a Pool2d node
  // A window of -inf only: the index of its first element inside the input.
  Tensor all_inf = lf::full({1, 1, 3, 3}, -std::numeric_limits<double>::infinity());
  auto [v, i] = lf::max_pool2d_with_indices(all_inf, 2, 1, 1);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 2, 0, 0, 1, 2, 3, 3, 4, 5, 6, 6, 7, 8}));
  // Unbatched [C, H, W], and the 16-bit floats and float64 against the reference.
  auto [vu, iu] = lf::max_pool2d_with_indices(lf::select(x, 0, 1), 3, 2, 1);
  EXPECT_EQ(iu.shape(), (lf::Shape{3, 5, 6}));
  EXPECT_EQ(iu.to_vector<int64_t>(), lf::select(lf::max_pool2d_with_indices(x, 3, 2, 1).second, 0, 1).to_vector<int64_t>());
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float64}) {
    auto [vd, id] = lf::max_pool2d_with_indices(lf::cast(x, dt), 3, 2, 1, true, 2);
    lf::test::expect_matches_reference(vd, 1, std::string("values ") + lf::dtype_name(dt));
    EXPECT_EQ(id.to_vector<int64_t>(), lf::max_pool2d_with_indices(x, 3, 2, 1, true, 2).second.to_vector<int64_t>())
        << lf::dtype_name(dt);  // the grid's values are exact in every dtype
  }
}

// max_unpool2d puts each value back at its index: pool then unpool keeps the maxima in place
// and zeros elsewhere (distinct values, so every window has one maximum).
TEST_P(MaxPool, UnpoolPutsTheMaximaBack) {
  FusionScope scope(GetParam());
  Tensor x = lf::rand({2, 2, 6, 8});
  const std::vector<float> hx = x.to_vector<float>();
  auto [values, indices] = lf::max_pool2d_with_indices(x, 2);
  Tensor y = lf::max_unpool2d(values, indices, 2);
  EXPECT_EQ(y.shape(), x.shape());
  const std::vector<float> hy = y.to_vector<float>();
  const std::vector<int64_t> hi = indices.to_vector<int64_t>();
  std::vector<float> want(hx.size(), 0.f);
  for (size_t e = 0; e < hi.size(); ++e) {
    const size_t plane = e / 12;  // 3 x 4 outputs a plane
    want[plane * 48 + static_cast<size_t>(hi[e])] = hx[plane * 48 + static_cast<size_t>(hi[e])];
  }
  EXPECT_EQ(hy, want);
  // An explicit output size (one more row and column) and stride/padding that change the default.
  EXPECT_EQ(lf::max_unpool2d(values, indices, 2, 2, 0, lf::Size2(7, 9)).shape(), (lf::Shape{2, 2, 7, 9}));
  auto [v3, i3] = lf::max_pool2d_with_indices(x, 3, 2, 1);
  EXPECT_EQ(lf::max_unpool2d(v3, i3, 3, 2, 1).shape(), (lf::Shape{2, 2, 5, 7}));
}

// adaptive_max_pool2d: PyTorch's loop over each window [floor(i H / oh), ceil((i + 1) H / oh)) x
// (the same along W), row-major, a value taken where it is greater or NaN.
Pooled host_adaptive(const std::vector<float>& x, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow) {
  Pooled r;
  for (int64_t c = 0; c < planes; ++c)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t h0 = i * h / oh, h1 = ((i + 1) * h + oh - 1) / oh, w0 = j * w / ow, w1 = ((j + 1) * w + ow - 1) / ow;
        int64_t index = h0 * w + w0;
        float best = -std::numeric_limits<float>::infinity();
        for (int64_t y = h0; y < h1; ++y)
          for (int64_t z = w0; z < w1; ++z) {
            const float v = x[static_cast<size_t>((c * h + y) * w + z)];
            if (v > best || std::isnan(v)) best = v, index = y * w + z;
          }
        r.values.push_back(best);
        r.indices.push_back(index);
      }
  return r;
}

TEST_P(MaxPool, AdaptiveMatchesPyTorchsLoop) {
  FusionScope scope(GetParam());
  Tensor x = lf::floor(lf::rand({2, 3, 9, 11}) * 6);
  Tensor u = lf::rand({2, 3, 9, 11});
  x = lf::where(u < 0.04f, std::nan(""), lf::where(u > 0.97f, -std::numeric_limits<double>::infinity(), x));
  const std::vector<float> hx = x.to_vector<float>();
  for (auto [oh, ow] : {std::pair<int64_t, int64_t>{1, 1}, {3, 4}, {4, 7}, {9, 11}, {5, 13}, {2, 1}}) {
    const std::string what = std::to_string(oh) + "x" + std::to_string(ow);
    auto [values, indices] = lf::adaptive_max_pool2d_with_indices(x * 1, lf::Size2(oh, ow));
    const Pooled want = host_adaptive(hx, 6, 9, 11, oh, ow);
    expect_same(values.to_vector<float>(), want.values, what + " values");
    EXPECT_EQ(indices.to_vector<int64_t>(), want.indices) << what;
    expect_same(lf::adaptive_max_pool2d(x * 1, lf::Size2(oh, ow)).to_vector<float>(), want.values, what);
  }
  auto [vu, iu] = lf::adaptive_max_pool2d_with_indices(lf::select(x, 0, 1), lf::Size2(2, 3));
  EXPECT_EQ(iu.shape(), (lf::Shape{3, 2, 3}));
  EXPECT_EQ(iu.to_vector<int64_t>(), lf::select(lf::adaptive_max_pool2d_with_indices(x, lf::Size2(2, 3)).second, 0, 1).to_vector<int64_t>());
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float64})
    lf::test::expect_matches_reference(lf::adaptive_max_pool2d(lf::cast(x, dt), lf::Size2(4, 3)), 1,
                                       std::string("adaptive max ") + lf::dtype_name(dt));
  EXPECT_NE(lf::test::error_message([&] { lf::adaptive_max_pool2d(x, lf::Size2(0, 2)); }).find("output_size must be positive"),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(FusedAndUnfused, MaxPool, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fused" : "Unfused"; });

// The values and the indices are one kernel (with an elementwise consumer).
TEST(MaxPoolFusion, ValuesAndIndicesAreOneKernel) {
  Tensor x = lf::rand({2, 4, 16, 16});
  lf::sync();
  lf::test::StatsDelta d;
  auto [v, i] = lf::max_pool2d_with_indices(x, 3, 2, 1, false, 2);
  Tensor y = v * 2;
  lf::sync();
  EXPECT_EQ(d.launched(), 1u);
  (void)y;
  (void)i;
}

TEST(MaxPoolErrors, NameTheOpAndShape) {
  Tensor x = lf::zeros({1, 2, 5, 5});
  auto msg = [](auto f) { return lf::test::error_message(f); };
  std::string m = msg([&] { lf::max_pool2d_with_indices(x, 2, 1, 0, false, 0); });
  EXPECT_NE(m.find("lf::max_pool2d_with_indices: dilation must be positive"), std::string::npos) << m;
  EXPECT_NE(m.find("float32[1, 2, 5, 5]"), std::string::npos) << m;
  EXPECT_NE(msg([&] { lf::max_pool2d(x, 3, 1, 2, false, 2); }).find("must be between 0 and half the kernel"), std::string::npos);
  EXPECT_NE(msg([&] { lf::max_pool2d(x, 3, 1, 0, false, 3); }).find("smaller than the window (7, 7)"), std::string::npos);
  auto [v, i] = lf::max_pool2d_with_indices(x, 2);
  EXPECT_NE(msg([&] { lf::max_unpool2d(v, lf::cast(i, DType::Int32), 2); }).find("indices must be int64"), std::string::npos);
  EXPECT_NE(msg([&] { lf::max_unpool2d(v, lf::slice(i, 3, 0, 1), 2); }).find("indices must have the shape of x"), std::string::npos);
  EXPECT_NE(msg([&] { lf::max_unpool2d(v, i, 2, 2, 0, lf::Size2(6, 4)); }).find("output_size (6, 4) must be within a stride of (4, 4)"),
            std::string::npos);
  // An index outside the output plane: an error at the sync point, naming the op.
  Tensor bad = lf::max_unpool2d(v, i + 100, 2);
  std::string s = msg([&] { bad.to_vector<float>(); });
  EXPECT_NE(s.find("lf::max_unpool2d: index"), std::string::npos) << s;
  // A negative index too (PyTorch raises; scatter alone would count it from the end of the plane).
  Tensor negative = lf::max_unpool2d(v, i - 1, 2);
  s = msg([&] { negative.to_vector<float>(); });
  EXPECT_NE(s.find("out of range"), std::string::npos) << s;
}

}  // namespace
