// conv_transpose2d against a direct scatter on the host (each input element times the kernel added
// into the output window it reaches: PyTorch's definition), for strides, paddings, output
// paddings, dilations and groups, fused and unfused, and the 16-bit floats against the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"

namespace {

using lf::DType;
using lf::Tensor;
using lf::test::FusionScope;

struct Geometry {
  int64_t n, cin, h, w, cout, kh, kw, sh, sw, ph, pw, oph, opw, groups, dh, dw;
};

std::vector<double> direct(const Geometry& g, const std::vector<float>& x, const std::vector<float>& wt,
                           const std::vector<float>& bias, int64_t oh, int64_t ow) {
  std::vector<double> out(static_cast<size_t>(g.n * g.cout * oh * ow), 0.0);
  const int64_t cin_g = g.cin / g.groups, cout_g = g.cout / g.groups;
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t c = 0; c < g.cin; ++c)
      for (int64_t i = 0; i < g.h; ++i)
        for (int64_t j = 0; j < g.w; ++j) {
          double v = x[static_cast<size_t>(((b * g.cin + c) * g.h + i) * g.w + j)];
          int64_t grp = c / cin_g;
          for (int64_t o = 0; o < cout_g; ++o)
            for (int64_t ki = 0; ki < g.kh; ++ki)
              for (int64_t kj = 0; kj < g.kw; ++kj) {
                int64_t y = i * g.sh - g.ph + ki * g.dh, z = j * g.sw - g.pw + kj * g.dw;
                if (y < 0 || y >= oh || z < 0 || z >= ow) continue;
                double k = wt[static_cast<size_t>(((c * cout_g + o) * g.kh + ki) * g.kw + kj)];
                out[static_cast<size_t>(((b * g.cout + grp * cout_g + o) * oh + y) * ow + z)] += v * k;
              }
        }
  if (!bias.empty())
    for (int64_t b = 0; b < g.n; ++b)
      for (int64_t o = 0; o < g.cout; ++o)
        for (int64_t p = 0; p < oh * ow; ++p) out[static_cast<size_t>((b * g.cout + o) * oh * ow + p)] += bias[static_cast<size_t>(o)];
  return out;
}

class ConvTranspose : public ::testing::TestWithParam<bool> {};  // fusion on, off

TEST_P(ConvTranspose, MatchesADirectScatter) {
  FusionScope scope(GetParam());
  for (const Geometry& g : {Geometry{2, 3, 5, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},
                            Geometry{1, 4, 3, 3, 6, 2, 2, 2, 2, 0, 0, 0, 0, 2, 1, 1},
                            Geometry{1, 2, 4, 5, 2, 3, 2, 1, 3, 0, 1, 0, 2, 1, 1, 1},
                            Geometry{2, 2, 3, 3, 2, 3, 3, 2, 1, 2, 0, 1, 0, 2, 2, 1},
                            Geometry{1, 3, 6, 6, 3, 1, 1, 3, 3, 0, 0, 2, 2, 3, 1, 1},
                            Geometry{1, 1, 1, 1, 1, 4, 4, 1, 1, 0, 0, 0, 0, 1, 1, 1}}) {
    Tensor x = lf::rand({g.n, g.cin, g.h, g.w}) * 2 - 1;
    Tensor w = lf::rand({g.cin, g.cout / g.groups, g.kh, g.kw}) - 0.5;
    Tensor b = lf::rand({g.cout});
    int64_t oh = (g.h - 1) * g.sh - 2 * g.ph + g.dh * (g.kh - 1) + g.oph + 1;
    int64_t ow = (g.w - 1) * g.sw - 2 * g.pw + g.dw * (g.kw - 1) + g.opw + 1;
    std::string what = "geometry cin " + std::to_string(g.cin) + " stride " + std::to_string(g.sh) + "x" +
                       std::to_string(g.sw) + " groups " + std::to_string(g.groups);
    Tensor y = lf::conv_transpose2d(x, w, b, {g.sh, g.sw}, {g.ph, g.pw}, {g.oph, g.opw}, g.groups, {g.dh, g.dw});
    ASSERT_EQ(y.shape(), (lf::Shape{g.n, g.cout, oh, ow})) << what;
    std::vector<double> want = direct(g, x.to_vector<float>(), w.to_vector<float>(), b.to_vector<float>(), oh, ow);
    std::vector<float> got = y.to_vector<float>();
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << what << " at " << i;
  }
  // The 16-bit floats and float64 against the reference; an unbatched input; a relu epilogue.
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float64}) {
    Tensor x = lf::cast(lf::rand({1, 4, 5, 5}) - 0.5, dt), w = lf::cast(lf::rand({4, 3, 3, 3}) - 0.5, dt);
    lf::test::expect_matches_reference(lf::relu(lf::conv_transpose2d(x, w, {}, 2, 1, 1)), 36,
                                       std::string("conv_transpose2d ") + lf::dtype_name(dt));
  }
  EXPECT_EQ(lf::conv_transpose2d(lf::rand({2, 3, 3}), lf::rand({2, 4, 2, 2}), {}, 2).shape(), (lf::Shape{4, 6, 6}));
}

INSTANTIATE_TEST_SUITE_P(FusedAndUnfused, ConvTranspose, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fused" : "Unfused"; });

TEST(ConvTransposeErrors, NameTheOpAndShapes) {
  Tensor x = lf::zeros({1, 2, 3, 3}), w = lf::zeros({2, 4, 3, 3});
  std::string m = lf::test::error_message([&] { lf::conv_transpose2d(x, lf::zeros({3, 4, 3, 3})); });
  EXPECT_NE(m.find("lf::conv_transpose2d: input has 2 channels, weight expects 3"), std::string::npos) << m;
  EXPECT_NE(m.find("float32[1, 2, 3, 3]"), std::string::npos) << m;
  EXPECT_NE(lf::test::error_message([&] { lf::conv_transpose2d(x, w, {}, 2, 0, 2); }).find("output_padding"), std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::conv_transpose2d(x, w, {}, 1, 5); }).find("padding is too large"), std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::conv_transpose2d(x, w, lf::zeros({3})); }).find("bias must have shape [4]"), std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::conv_transpose2d(x, w, {}, 1, 0, 0, 3); }).find("not divisible by groups"), std::string::npos);
  EXPECT_NE(lf::test::error_message([&] { lf::conv_transpose2d(lf::zeros({1, 2, 3, 3}, DType::Int32), w); }).find("floating-point"),
            std::string::npos);
}

}  // namespace
