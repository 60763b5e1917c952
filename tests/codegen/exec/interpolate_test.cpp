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

// The host result of resizing `planes` planes (or volumes) of sizes `in` to `out` (D, H, W; D = 1
// for images), each output the weighted sum of its points along each axis (`along(axis, dst)`):
// along W first, then H, then D, as PyTorch's separable kernels.
template <typename Along>
std::vector<float> resize_axes(const std::vector<float>& x, int64_t planes, const int64_t (&in)[3],
                               const int64_t (&out)[3], Along along) {
  std::vector<float> y;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t i = 0; i < out[0]; ++i)
      for (int64_t j = 0; j < out[1]; ++j)
        for (int64_t l = 0; l < out[2]; ++l) {
          Points pd = along(0, i), ph = along(1, j), pw = along(2, l);
          float sum = 0;
          for (size_t a = 0; a < pd.i.size(); ++a) {
            float plane = 0;
            for (size_t b = 0; b < ph.i.size(); ++b) {
              float row = 0;
              for (size_t e = 0; e < pw.i.size(); ++e)
                row += pw.w[e] * x[static_cast<size_t>(((p * in[0] + pd.i[a]) * in[1] + ph.i[b]) * in[2] + pw.i[e])];
              plane += ph.w[b] * row;
            }
            sum += pd.w[a] * plane;
          }
          y.push_back(sum);
        }
  return y;
}

std::vector<float> resize_points(const std::vector<float>& x, int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh,
                                 int64_t ow, Mode mode, bool align_corners, double scale_factor = 0) {
  const int64_t in[3] = {1, h, w}, out[3] = {1, oh, ow};
  return resize_axes(x, n * c, in, out, [&](int a, int64_t dst) -> Points {
    if (in[a] == 1 && out[a] == 1) return {{0}, {1.f}};  // no such axis ([N, C, L], or an image's D)
    return points(dst, in[a], out[a], mode, align_corners, scale_factor);
  });
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

// The host result of resizing [n, c, h, w] `x` to [oh, ow], nearest or (bi)linear.
Points linear_points(int64_t dst, int64_t in, int64_t out, bool linear, bool align_corners, double scale_factor) {
  Src s = source(dst, in, out, linear, align_corners, scale_factor);
  return linear ? Points{{s.i0, s.i1}, {s.w0, s.w1}} : Points{{s.i0}, {1.f}};
}
std::vector<float> resize(const std::vector<float>& x, int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh,
                          int64_t ow, bool linear, bool align_corners, double scale_factor = 0) {
  const int64_t in[3] = {1, h, w}, out[3] = {1, oh, ow};
  return resize_axes(x, n * c, in, out, [&](int a, int64_t dst) -> Points {
    if (a == 0) return {{0}, {1.f}};
    return linear_points(dst, in[a], out[a], linear, align_corners, scale_factor);
  });
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

// [N, C, D, H, W]: nearest, nearest-exact, trilinear (align_corners both ways) and area, up and
// down per axis, against the per-axis formulas above applied along D, H and W.
std::vector<float> resize3(const std::vector<float>& x, int64_t nc, const int64_t (&in)[3], const int64_t (&out)[3],
                           const std::string& mode, bool align_corners, double scale_factor = 0) {
  return resize_axes(x, nc, in, out, [&](int a, int64_t dst) -> Points {
    if (mode == "nearest-exact") return points(dst, in[a], out[a], Mode::kNearestExact, false, scale_factor);
    return linear_points(dst, in[a], out[a], mode == "trilinear", align_corners, scale_factor);
  });
}

TEST_P(Interpolate, VolumesMatchPyTorchsFormulas) {
  FusionScope scope(GetParam());
  Tensor x = lf::rand({2, 2, 3, 4, 5}) * 4 - 2;
  std::vector<float> hx = x.to_vector<float>();
  const int64_t in[3] = {3, 4, 5};
  for (auto out : {std::vector<int64_t>{5, 7, 9}, {2, 3, 2}, {1, 1, 1}, {3, 8, 4}}) {
    const int64_t o[3] = {out[0], out[1], out[2]};
    const std::string size = lf::shape_str(out);
    for (const char* mode : {"nearest", "nearest-exact"}) {
      Tensor y = lf::interpolate(x * 1, out, mode);
      EXPECT_EQ(y.shape(), (lf::Shape{2, 2, o[0], o[1], o[2]}));
      expect_near(y.to_vector<float>(), resize3(hx, 4, in, o, mode, false), 0, size + " " + mode);
    }
    for (bool align : {false, true})
      expect_near(lf::interpolate(x * 1, out, "trilinear", align).to_vector<float>(),
                  resize3(hx, 4, in, o, "trilinear", align), 1e-5f, size + " trilinear" + (align ? " align_corners" : ""));
    // area: the separable means agree with one box mean to float32's rounding.
    // (the planes' window means [4 x 3][oh][ow], then their means over depth windows: the plane
    // means as [4][3][oh * ow] resized to [4][od][oh * ow]).
    std::vector<float> planes = resize_area(hx, 4, 3, 4, 5, o[1], o[2]);
    std::vector<float> box = resize_area(planes, 4, 1, 3, o[1] * o[2], o[0], o[1] * o[2]);
    expect_near(lf::interpolate(x * 1, out, "area").to_vector<float>(), box, 1e-6f, size + " area");
  }
  expect_near(lf::interpolate(x, 1.5, "trilinear").to_vector<float>(),
              resize3(hx, 4, in, {4, 6, 7}, "trilinear", false, 1.5), 1e-5f, "trilinear scale 1.5");
  Tensor withnan = lf::where(lf::rand({1, 1, 3, 4, 4}) < 0.1f, std::nan(""), lf::rand({1, 1, 3, 4, 4}));
  const int64_t nin[3] = {3, 4, 4}, nout[3] = {5, 6, 3};
  expect_near(lf::interpolate(withnan, {5, 6, 3}, "trilinear").to_vector<float>(),
              resize3(withnan.to_vector<float>(), 1, nin, nout, "trilinear", false), 1e-5f, "trilinear NaN");
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float64}) {
    Tensor xd = lf::cast(x, dt);
    lf::test::expect_matches_reference(lf::interpolate(xd, {4, 3, 7}, "trilinear", true), 8,
                                       std::string("trilinear ") + lf::dtype_name(dt));
    lf::test::expect_matches_reference(lf::interpolate(xd, {2, 2, 2}, "area"), 30, std::string("area 3d ") + lf::dtype_name(dt));
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
  Tensor vol = lf::rand({1, 2, 4, 8, 8});
  lf::sync();
  lf::test::StatsDelta d;
  (lf::interpolate(vol, {7, 9, 16}, "trilinear") * 2).to_vector<float>();
  EXPECT_EQ(d.launched(), 1u) << "trilinear";
}

TEST(InterpolateErrors, NameTheOpAndShape) {
  Tensor x = lf::zeros({1, 2, 3, 4});
  std::string m = lf::test::error_message([&] { lf::interpolate(x, {2, 2}, "cubic"); });
  EXPECT_NE(m.find("lf::interpolate: mode must be"), std::string::npos) << m;
  EXPECT_NE(m.find("float32[1, 2, 3, 4]"), std::string::npos) << m;
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(x, {2}); }).find("needs 2 output sizes"), std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(x, {2, 0}); }).find("must be positive"), std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(x, {2, 2}, "linear"); }).find("\"linear\" is for [N, C, L]"), std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(x, {2, 2}, "nearest", true); }).find("align_corners is for the linear"),
            std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(x, {2, 2}, "area", false); }).find("align_corners is for the linear"),
            std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(lf::zeros({1, 1, 2, 2, 2}), {3, 3}, "trilinear"); })
                .find("needs 3 output sizes"),
            std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(lf::zeros({1, 1, 2, 2, 2}), {3, 3, 3}, "bilinear"); })
                .find("\"trilinear\" for [N, C, D, H, W]"),
            std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(lf::zeros({1, 2, 3}), {2}, "bicubic"); })
                .find("\"bicubic\" for [N, C, H, W]"),
            std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(lf::zeros({2, 3}), {2}); }).find("[N, C, L], [N, C, H, W] or [N, C, D, H, W]"), std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(x, -1.0); }).find("scale_factor must be positive"), std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::interpolate(lf::zeros({1, 1, 2, 2}, DType::Int32), {4, 4}); }).find("floating-point"),
            std::string::npos);
}

}  // namespace
