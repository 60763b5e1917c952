// lf::fft's complex-valued functions (lazyfuse/fft.h over lazyfuse/complex.h): the same answers as
// the pair transforms beneath them and numpy's, real and integer inputs taken as complex, dtypes,
// the n-dimensional defaults, complex inputs refused where torch refuses them, and gradients
// through complex values against finite differences.
#include <gtest/gtest.h>

#include <complex>
#include <vector>

#include "frontend/autograd/gradcheck.h"
#include "frontend/linalg_util.h"
#include "frontend/test_util.h"
#include "lazyfuse/complex.h"
#include "lazyfuse/fft.h"

namespace {

using lf::DType;
using lf::Shape;
using lf::Tensor;
namespace fft = lf::fft;
using lf::test::expect_close;
using lf::test::expect_error;
using lf::test::max_abs;
using lf::test::random;

Tensor random_complex(Shape shape, unsigned seed, DType part = DType::Float64) {
  return lf::complex(random(shape, seed, part), random(shape, seed + 100, part));
}
double max_diff(const Tensor& a, const Tensor& b) { return max_abs(lf::view_as_real(a) - lf::view_as_real(b)); }

TEST(FftComplex, KnownAnswerAndDtypes) {
  // numpy.fft.fft([1, 2j, -1, 3 - 1j])
  Tensor z = lf::from_vector(std::vector<std::complex<double>>{{1, 0}, {0, 2}, {-1, 0}, {3, -1}}, {4});
  Tensor f = fft::fft(z);
  EXPECT_EQ(f.dtype(), DType::Complex128);
  expect_close(lf::view_as_real(f), {3, 1, 5, 3, -3, -1, -1, -3}, 1e-13);
  EXPECT_LT(max_diff(fft::ifft(f), z), 1e-14);
  Tensor z32 = random_complex({6}, 1, DType::Float32);
  EXPECT_EQ(fft::fft(z32).dtype(), DType::Complex64);
  // Real and integer inputs are complex with zero imaginary parts (integers as float32).
  Tensor x = random({8}, 2);
  EXPECT_LT(max_diff(fft::fft(x), fft::fft(lf::complex(x, lf::zeros_like(x)))), 1e-14);
  Tensor i = lf::arange(0, 4, 1, DType::Int64);
  EXPECT_EQ(fft::fft(i).dtype(), DType::Complex64);
  expect_close(lf::view_as_real(fft::fft(i)), {6, 0, -2, 2, -2, 0, -2, -2}, 1e-6);
  EXPECT_EQ(fft::rfft(random({5}, 3)).dtype(), DType::Complex128);
  EXPECT_EQ(fft::irfft(fft::rfft(random({5}, 3))).dtype(), DType::Float64);
}

TEST(FftComplex, EveryFunctionAgainstItsPairForm) {
  Tensor z = random_complex({3, 6, 5}, 10);
  Tensor x = random({3, 6, 5}, 11);
  Tensor zr = lf::view_as_real(z);
  namespace pairs = lf::fft::pairs;
  EXPECT_LT(max_abs(lf::view_as_real(fft::fft(z, 7, 1, "ortho")) - pairs::c2c(zr, 7, 1, "ortho", true)), 1e-14);
  EXPECT_LT(max_abs(lf::view_as_real(fft::ifft(z, 4, 0)) - pairs::c2c(zr, 4, 0, "backward", false)), 1e-14);
  EXPECT_LT(max_abs(lf::view_as_real(fft::rfft(x, {}, 1)) - pairs::r2c(x, {}, 1)), 1e-14);
  EXPECT_LT(max_abs(fft::irfft(z, 9) - pairs::c2r(zr, 9)), 1e-14);
  EXPECT_LT(max_abs(fft::hfft(z, {}, 1, "forward") - pairs::c2r(zr, {}, 1, "forward", true)), 1e-14);
  EXPECT_LT(max_abs(lf::view_as_real(fft::ihfft(x)) - pairs::r2c(x, {}, -1, "backward", false)), 1e-14);
  // The n-dimensional defaults: fft2 the last two dims, fftn every dim.
  EXPECT_LT(max_diff(fft::fft2(z), fft::fft(fft::fft(z, {}, -1), {}, -2)), 1e-13);
  EXPECT_LT(max_diff(fft::fftn(z), fft::fft(fft::fft2(z), {}, 0)), 1e-13);
  EXPECT_LT(max_diff(fft::ifftn(fft::fftn(z)), z), 1e-14);
  EXPECT_LT(
      max_diff(fft::ifft2(fft::fft2(z, Shape{8, 8}), Shape{6, 5}), fft::ifft2(fft::fft2(z, Shape{8, 8}), Shape{6, 5})),
      1e-14);
  EXPECT_LT(max_abs(fft::irfft2(fft::rfft2(x), Shape{6, 5}) - x), 1e-14);
  EXPECT_LT(max_abs(fft::irfftn(fft::rfftn(x), Shape{3, 6, 5}) - x), 1e-14);
  EXPECT_EQ(fft::rfftn(x).shape(), (Shape{3, 6, 3}));
  EXPECT_EQ(fft::irfftn(fft::rfftn(x)).shape(), (Shape{3, 6, 4}));
  // fftshift of a complex tensor rolls its complex dims.
  Tensor c = lf::complex(lf::arange(0, 4, 1, DType::Float64), -lf::arange(0, 4, 1, DType::Float64));
  expect_close(lf::view_as_real(fft::fftshift(c)), {2, -2, 3, -3, 0, 0, 1, -1}, 0);
}

TEST(FftComplex, SpectralFilterOnComplexValues) {
  // irfft2(rfft2(x) * H) * s, H complex: a phase shift and a gain, fused around the transforms.
  Tensor x = random({16, 12}, 20);
  Tensor H = random_complex({16, 7}, 21);
  Tensor y = fft::irfft2(fft::rfft2(lf::relu(x) + 1.0) * H, Shape{16, 12}) * 0.5;
  Tensor by_pairs = lf::fft::pairs::c2rn(lf::view_as_real(fft::rfft2(lf::relu(x) + 1.0) * H), Shape{16, 12},
                                         std::vector<int64_t>{-2, -1}) *
                    0.5;
  EXPECT_EQ(y.shape(), (Shape{16, 12}));
  EXPECT_LT(max_abs(y - by_pairs), 1e-13);
}

TEST(FftComplex, ErrorsAsTorch) {
  Tensor z = random_complex({4}, 1);
  expect_error([&] { fft::rfft(z); }, {"fft::rfft", "real input", "complex128[4]"});
  expect_error([&] { fft::ihfft(z); }, {"fft::ihfft", "real input"});
  expect_error([&] { fft::fft(z, 0); }, {"fft::fft", "Invalid number of data points (0)"});
  expect_error([&] { fft::fft(z, {}, 1); }, {"fft::fft", "dim 1"});
  expect_error([&] { fft::ifft(z, {}, 0, "none"); }, {"fft::ifft", "Invalid normalization mode"});
  expect_error([&] { fft::fft(lf::full({}, 1.0, DType::Float64)); }, {"fft::fft", "at least one dimension"});
  expect_error([&] { lf::fft::pairs::c2c(z); }, {"not a complex tensor"});
}

TEST(FftComplex, GradientsThroughComplexValues) {
  using lf::test::gradcheck;
  using lf::test::Input;
  gradcheck("|fft(z)|^2 weighted",
            [](const std::vector<Tensor>& v) {
              Tensor f = fft::fft(lf::view_as_complex(v[0]), 6, 0, "ortho");
              return lf::view_as_real(f * lf::conj(f) + f);
            },
            {Input{{5, 2}}});
  gradcheck("irfft(rfft(x) * H)",
            [](const std::vector<Tensor>& v) { return fft::irfft(fft::rfft(v[0]) * lf::view_as_complex(v[1]), 8); },
            {Input{{8}}, Input{{5, 2}}});
  gradcheck("hfft, ihfft", [](const std::vector<Tensor>& v) { return fft::hfft(fft::ihfft(v[0]) * 2.0, 7); },
            {Input{{7}}});
  gradcheck("fft2",
            [](const std::vector<Tensor>& v) {
              return lf::view_as_real(fft::fft2(lf::view_as_complex(v[0]), Shape{3, 4}));
            },
            {Input{{2, 3, 2}}});
}

TEST(FftComplex, GradientsAsTorch) {
  // torch 1.13's autograd (torch.fft, float64; the values embedded from one run).
  Tensor j = lf::arange(0, 6, 1, DType::Float64), k = lf::arange(0, 4, 1, DType::Float64);
  Tensor x = lf::sin(j * 0.7) + j * 0.1;
  Tensor w = (lf::arange(0, 8, 1, DType::Float64) * 0.1 + 0.5).reshape({4, 2});
  Tensor gx = lf::grad(lf::sum(lf::view_as_real(fft::rfft(x, {}, -1, "ortho")) * w), {x})[0];
  expect_close(gx,
               {1.306394529484362, -0.9221699063925971, 0.3973093104897452, -0.16329931618554525, 0.2558879542524357,
                0.35062229974318865},
               1e-13);
  Tensor z = lf::complex(lf::sin(k * 0.7) + k * 0.1, lf::cos(k * 1.3));
  Tensor gz = lf::grad(lf::sum(fft::irfft(z, 6) * j), {z})[0];
  expect_close(lf::view_as_real(gz), {2.5, 0.0, -1.0, 1.7320508075688772, -1.0, 0.5773502691896257, -0.5, 0.0}, 1e-13);
  Tensor wf = lf::arange(0, 10, 1, DType::Float64).reshape({5, 2}) - 3.0;
  Tensor gf = lf::grad(lf::sum(lf::view_as_real(fft::fft(z, 5)) * wf), {z})[0];
  expect_close(lf::view_as_real(gf),
               {5.0, 10.0, 1.8819096023558668, -11.881909602355867, -3.375401518835468, -6.624598481164532,
                -6.624598481164532, -3.375401518835468},
               1e-13);
}

}  // namespace
