// F.interpolate (nearest, nearest-exact, bilinear, linear, bicubic, area) against PyTorch's formulas
// written out on the host in the same accumulation type (aten/src/ATen/native/UpSample.h:
// nearest_idx, nearest_neighbor_exact_compute_source_index, area_pixel_compute_source_index,
// get_cubic_upsample_coefficients; adaptive pooling's windows for area), fused and unfused, sizes
// up and down, align_corners both ways, a scale factor, every float dtype, NaN passing through.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"

namespace {

using lf::DType;
using lf::Tensor;
using lf::test::FusionScope;

// PyTorch's source coordinate along one axis, in float as its CPU kernel computes it for float.
struct Src {
  int64_t i0, i1;
  float w0, w1;
};
Src source(int64_t dst, int64_t in, int64_t out, bool linear, bool align_corners, double scale_factor) {
  float scale = scale_factor > 0 ? static_cast<float>(1.0 / scale_factor)
                                 : static_cast<float>(in) / static_cast<float>(out);
  if (!linear) {
    int64_t i = std::min<int64_t>(static_cast<int64_t>(std::floor(static_cast<float>(dst) * scale)), in - 1);
    return {i, i, 1, 0};
  }
  float s = align_corners ? (out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.f) : scale;
  float src = align_corners ? s * static_cast<float>(dst) : std::max(0.f, s * (static_cast<float>(dst) + 0.5f) - 0.5f);
  int64_t i0 = std::min<int64_t>(static_cast<int64_t>(src), in - 1);
  int64_t i1 = std::min<int64_t>(i0 + 1, in - 1);
  float w1 = src - static_cast<float>(i0);
  return {i0, i1, 1.f - w1, w1};
}

// The other modes' source points along one axis, as PyTorch's CPU kernel computes them for float:
// nearest-exact's floor((dst + 0.5) * scale), and bicubic's 4 points around the floor of its
// (unclamped) source coordinate, clamped into the input, with the cubic convolution's weights.
enum class Mode { kNearestExact, kCubic };
struct Points {
  std::vector<int64_t> i;
  std::vector<float> w;
};
Points points(int64_t dst, int64_t in, int64_t out, Mode mode, bool align_corners, double scale_factor) {
  float scale = scale_factor > 0 ? static_cast<float>(1.0 / scale_factor)
                                 : static_cast<float>(in) / static_cast<float>(out);
  const float d = static_cast<float>(dst);
  if (mode == Mode::kNearestExact)
    return {{std::min<int64_t>(static_cast<int64_t>(std::floor((d + 0.5f) * scale)), in - 1)}, {1.f}};
  float s = align_corners ? (out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.f) : scale;
  float src = align_corners ? s * d : s * (d + 0.5f) - 0.5f;
  int64_t i0 = std::min<int64_t>(static_cast<int64_t>(std::floor(src)), in - 1);
  float t = std::min(std::max(src - static_cast<float>(i0), 0.f), 1.f);
  const float A = -0.75f;
  auto near = [&](float x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
  auto far = [&](float x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  Points p;
  p.w = {far(t + 1), near(t), near(1 - t), far(2 - t)};
  for (int64_t k = -1; k <= 2; ++k) p.i.push_back(std::min(std::max<int64_t>(i0 + k, 0), in - 1));
  return p;
}

std::vector<float> resize_points(const std::vector<float>& x, int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh,
                                 int64_t ow, Mode mode, bool align_corners, double scale_factor = 0) {
  std::vector<float> out;
  for (int64_t p = 0; p < n * c; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        Points ph = points(i, h, oh, mode, align_corners, scale_factor);
        Points pw = points(j, w, ow, mode, align_corners, scale_factor);
        if (h == 1 && oh == 1) ph = {{0}, {1.f}};  // [N, C, L]: no H axis
        float sum = 0;
        for (size_t r = 0; r < ph.i.size(); ++r) {
          float row = 0;
          for (size_t k = 0; k < pw.i.size(); ++k) row += pw.w[k] * x[static_cast<size_t>((p * h + ph.i[r]) * w + pw.i[k])];
          sum += ph.w[r] * row;
        }
        out.push_back(sum);
      }
  return out;
}

// "area": the mean of adaptive pooling's window [floor(i in / out), ceil((i + 1) in / out)) per axis.
std::vector<float> resize_area(const std::vector<float>& x, int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh,
                               int64_t ow) {
  std::vector<float> out;
  auto lo = [](int64_t i, int64_t in, int64_t o) { return i * in / o; };
  auto hi = [](int64_t i, int64_t in, int64_t o) { return ((i + 1) * in + o - 1) / o; };
  for (int64_t p = 0; p < n * c; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double sum = 0;
        int64_t count = 0;
        for (int64_t y = lo(i, h, oh); y < hi(i, h, oh); ++y)
          for (int64_t z = lo(j, w, ow); z < hi(j, w, ow); ++z, ++count) sum += x[static_cast<size_t>((p * h + y) * w + z)];
        out.push_back(static_cast<float>(sum / static_cast<double>(count)));
      }
  return out;
}

// The host result of resizing [n, c, h, w] `x` to [oh, ow].
std::vector<float> resize(const std::vector<float>& x, int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh,
                          int64_t ow, bool linear, bool align_corners, double scale_factor = 0) {
  std::vector<float> out;
  for (int64_t p = 0; p < n * c; ++p)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        Src sh = source(i, h, oh, linear, align_corners, scale_factor);
        Src sw = source(j, w, ow, linear, align_corners, scale_factor);
        auto at = [&](int64_t y, int64_t z) { return x[static_cast<size_t>((p * h + y) * w + z)]; };
        out.push_back(sh.w0 * (sw.w0 * at(sh.i0, sw.i0) + sw.w1 * at(sh.i0, sw.i1)) +
                      sh.w1 * (sw.w0 * at(sh.i1, sw.i0) + sw.w1 * at(sh.i1, sw.i1)));
      }
  return out;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;
      continue;
    }
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << what << " at " << i;
  }
}

class Interpolate : public ::testing::TestWithParam<bool> {};  // fusion on, off

TEST_P(Interpolate, MatchesPyTorchsFormulas) {
  FusionScope scope(GetParam());
  Tensor x = lf::rand({2, 3, 5, 7}) * 4 - 2;
  std::vector<float> hx = x.to_vector<float>();
  struct Case {
    int64_t oh, ow;
    bool linear, align;
  };
  for (Case k : {Case{10, 14, false, false}, Case{3, 4, false, false}, Case{10, 14, true, false}, Case{10, 14, true, true},
                 Case{3, 5, true, false}, Case{3, 5, true, true}, Case{1, 1, true, true}, Case{8, 7, true, false},
                 Case{16, 3, false, false}}) {
    std::string what = std::to_string(k.oh) + "x" + std::to_string(k.ow) + (k.linear ? " bilinear" : " nearest") +
                       (k.align ? " align_corners" : "");
    Tensor y = k.linear ? lf::interpolate(x * 1, {k.oh, k.ow}, "bilinear", k.align) : lf::interpolate(x * 1, {k.oh, k.ow});
    EXPECT_EQ(y.shape(), (lf::Shape{2, 3, k.oh, k.ow})) << what;
    expect_near(y.to_vector<float>(), resize(hx, 2, 3, 5, 7, k.oh, k.ow, k.linear, k.align), k.linear ? 1e-5f : 0, what);
  }
  // A scale factor: the output floor(in * s), coordinates from 1 / s.
  Tensor s = lf::interpolate(x, 2.5, "bilinear");
  EXPECT_EQ(s.shape(), (lf::Shape{2, 3, 12, 17}));
  expect_near(s.to_vector<float>(), resize(hx, 2, 3, 5, 7, 12, 17, true, false, 2.5), 1e-5f, "scale 2.5");
  expect_near(lf::interpolate(x, 0.5).to_vector<float>(), resize(hx, 2, 3, 5, 7, 2, 3, false, false, 0.5), 0,
              "nearest scale 0.5");
  // [N, C, L] with "linear" and "nearest".
  Tensor l = lf::rand({2, 2, 9});
  std::vector<float> hl = l.to_vector<float>();
  expect_near(lf::interpolate(l, {4}, "linear").to_vector<float>(), resize(hl, 2, 2, 1, 9, 1, 4, true, false), 1e-5f,
              "linear");
  expect_near(lf::interpolate(l, {20}).to_vector<float>(), resize(hl, 2, 2, 1, 9, 1, 20, false, false), 0, "nearest 1d");
  // NaN reaches the outputs that read it; the 16-bit floats and float64 against the reference.
  Tensor withnan = lf::where(lf::rand({1, 1, 4, 4}) < 0.2f, std::nan(""), lf::rand({1, 1, 4, 4}));
  std::vector<float> hn = withnan.to_vector<float>();
  expect_near(lf::interpolate(withnan, {7, 9}, "bilinear").to_vector<float>(), resize(hn, 1, 1, 4, 4, 7, 9, true, false),
              1e-5f, "NaN");
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float64}) {
    Tensor xd = lf::cast(x, dt);
    lf::test::expect_matches_reference(lf::interpolate(xd, {9, 4}, "bilinear", true), 4,
                                       std::string("bilinear ") + lf::dtype_name(dt));
    lf::test::expect_matches_reference(lf::interpolate(xd, {9, 4}), 1, std::string("nearest ") + lf::dtype_name(dt));
  }
}

TEST_P(Interpolate, NearestExactBicubicAndAreaMatchPyTorchsFormulas) {
  FusionScope scope(GetParam());
  Tensor x = lf::rand({2, 3, 5, 7}) * 4 - 2;
  std::vector<float> hx = x.to_vector<float>();
  struct Case {
    int64_t oh, ow;
  };
  for (Case k : {Case{10, 14}, Case{3, 4}, Case{1, 1}, Case{8, 7}, Case{16, 3}, Case{5, 7}}) {
    const std::string size = std::to_string(k.oh) + "x" + std::to_string(k.ow);
    expect_near(lf::interpolate(x * 1, {k.oh, k.ow}, "nearest-exact").to_vector<float>(),
                resize_points(hx, 2, 3, 5, 7, k.oh, k.ow, Mode::kNearestExact, false), 0, size + " nearest-exact");
    for (bool align : {false, true})
      expect_near(lf::interpolate(x * 1, {k.oh, k.ow}, "bicubic", align).to_vector<float>(),
                  resize_points(hx, 2, 3, 5, 7, k.oh, k.ow, Mode::kCubic, align), 1e-5f,
                  size + " bicubic" + (align ? " align_corners" : ""));
    expect_near(lf::interpolate(x * 1, {k.oh, k.ow}, "area").to_vector<float>(), resize_area(hx, 2, 3, 5, 7, k.oh, k.ow),
                1e-6f, size + " area");
  }
  // Scale factors: coordinates from 1 / s (area pools to floor(in * s) and ignores s).
  expect_near(lf::interpolate(x, 1.7, "bicubic").to_vector<float>(),
              resize_points(hx, 2, 3, 5, 7, 8, 11, Mode::kCubic, false, 1.7), 1e-5f, "bicubic scale 1.7");
  expect_near(lf::interpolate(x, 0.6, "nearest-exact").to_vector<float>(),
              resize_points(hx, 2, 3, 5, 7, 3, 4, Mode::kNearestExact, false, 0.6), 0, "nearest-exact scale 0.6");
  EXPECT_EQ(lf::interpolate(x, 0.5, "area").shape(), (lf::Shape{2, 3, 2, 3}));
  expect_near(lf::interpolate(x, 0.5, "area").to_vector<float>(), resize_area(hx, 2, 3, 5, 7, 2, 3), 1e-6f, "area 0.5");
  // [N, C, L].
  Tensor l = lf::rand({2, 2, 9});
  std::vector<float> hl = l.to_vector<float>();
  expect_near(lf::interpolate(l, {13}, "nearest-exact").to_vector<float>(),
              resize_points(hl, 2, 2, 1, 9, 1, 13, Mode::kNearestExact, false), 0, "nearest-exact 1d");
  expect_near(lf::interpolate(l, {4}, "area").to_vector<float>(), resize_area(hl, 2, 2, 1, 9, 1, 4), 1e-6f, "area 1d");
  // NaN reaches the 4 x 4 outputs around it; bicubic of a constant image is the constant (its
  // weights sum to 1) and a step overshoots, as PyTorch's does.
  Tensor withnan = lf::where(lf::rand({1, 1, 6, 6}) < 0.1f, std::nan(""), lf::rand({1, 1, 6, 6}));
  std::vector<float> hn = withnan.to_vector<float>();
  expect_near(lf::interpolate(withnan, {11, 9}, "bicubic").to_vector<float>(),
              resize_points(hn, 1, 1, 6, 6, 11, 9, Mode::kCubic, false), 1e-5f, "bicubic NaN");
  expect_near(lf::interpolate(lf::full({1, 1, 4, 4}, 3.0), {9, 7}, "bicubic").to_vector<float>(),
              std::vector<float>(63, 3.f), 1e-6f, "bicubic of a constant");
  Tensor step = lf::cast(lf::arange(0, 8, 1) >= 4.0, DType::Float32).reshape({1, 1, 1, 8}).expand({1, 1, 2, 8});
  std::vector<float> up = lf::interpolate(step, {2, 16}, "bicubic").to_vector<float>();
  EXPECT_LT(*std::min_element(up.begin(), up.end()), 0.f);
  EXPECT_GT(*std::max_element(up.begin(), up.end()), 1.f);
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float64}) {
    Tensor xd = lf::cast(x, dt);
    lf::test::expect_matches_reference(lf::interpolate(xd, {9, 4}, "bicubic", true), 16,
                                       std::string("bicubic ") + lf::dtype_name(dt));
    lf::test::expect_matches_reference(lf::interpolate(xd, {3, 11}, "nearest-exact"), 1,
                                       std::string("nearest-exact ") + lf::dtype_name(dt));
    lf::test::expect_matches_reference(lf::interpolate(xd, {2, 3}, "area"), 6, std::string("area ") + lf::dtype_name(dt));
  }
}

INSTANTIATE_TEST_SUITE_P(FusedAndUnfused, Interpolate, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fused" : "Unfused"; });

// Each point read is a gather of the plane in the output's shape: a resize is one kernel with
// the weighted sum and an elementwise consumer.
TEST(InterpolateFusion, OneKernel) {
  Tensor x = lf::rand({2, 3, 16, 16});
  lf::sync();
  for (const char* mode : {"nearest", "nearest-exact", "bilinear", "bicubic"}) {
    lf::test::StatsDelta d;
    (lf::interpolate(x, {33, 20}, mode) * 2).to_vector<float>();
    EXPECT_EQ(d.launched(), 1u) << mode;
  }
}

TEST(InterpolateErrors, NameTheOpAndShape) {
  Tensor x = lf::zeros({1, 2, 3, 4});
  std::string m = lf::test::error_message([&] { lf::interpolate(x, {2, 2}, "trilinear"); });
  EXPECT_NE(m.find("lf::interpolate: mode must be"), std::string::npos) << m;
  EXPECT_NE(m.find("float32[1, 2, 3, 4]"), std::string::npos) << m;
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(x, {2}); }).find("needs 2 output sizes"), std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(x, {2, 0}); }).find("must be positive"), std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(x, {2, 2}, "linear"); }).find("\"linear\" is for [N, C, L]"), std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(x, {2, 2}, "nearest", true); }).find("align_corners is for the linear"),
            std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(x, {2, 2}, "area", false); }).find("align_corners is for the linear"),
            std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(lf::zeros({1, 2, 3}), {2}, "bicubic"); })
                .find("\"bicubic\" for [N, C, H, W]"),
            std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(lf::zeros({2, 3}), {2}); }).find("[N, C, L] or [N, C, H, W]"), std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(x, -1.0); }).find("scale_factor must be positive"), std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(lf::zeros({1, 1, 2, 2}, DType::Int32), {4, 4}); }).find("floating-point"),
            std::string::npos);
}

}  // namespace
