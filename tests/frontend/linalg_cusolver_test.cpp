// lf::linalg through cuSOLVER (codegen/cuda/cusolver.cpp) against the reference and the host path,
// on the GPU only (skipped where the default device is not CUDA): random, batched (the batched
// routines' sizes and the one-by-one ones), empty and failing (singular, not positive-definite)
// inputs; the LAZYFUSE_LOG line; infos and error messages equal to the host path's.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "codegen/cuda/cusolver.h"
#include "frontend/linalg_util.h"
#include "frontend/test_util.h"
#include "runtime/config.h"

namespace {

using lf::DType;
using lf::Shape;
using lf::Tensor;
namespace la = lf::linalg;

using lf::test::mT;
using lf::test::random;
using lf::test::spd;
std::vector<double> values(const Tensor& t) { return lf::cast(t, DType::Float64).to_vector<double>(); }
double tol(DType dt) { return dt == DType::Float64 ? 1e-9 : 2e-3; }

class LinalgCusolver : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!lf::default_device().is_cuda()) GTEST_SKIP() << "the default device is not CUDA";
    saved_ = lf::rt::mutable_config().linalg;
  }
  void TearDown() override { lf::rt::mutable_config().linalg = saved_; }

  // f's results on the path `path` (cusolver, host, reference), as float64 host vectors, or
  // the lf::Error message f raised.
  struct Run {
    std::vector<std::vector<double>> out;
    std::string error;
  };
  Run on(const std::string& path, const std::function<std::vector<Tensor>()>& f) {
    lf::rt::mutable_config().linalg = path;
    Run r;
    try {
      for (const Tensor& t : f()) r.out.push_back(values(t));
    } catch (const lf::Error& e) {
      r.error = e.what();
    }
    return r;
  }
  // cuSOLVER's results against the reference's (and its errors against the host path's).
  void expect_same(const std::function<std::vector<Tensor>()>& f, double eps, const std::string& what) {
    Run got = on("cusolver", f), want = on("reference", f), host = on("host", f);
    EXPECT_EQ(got.error, host.error) << what;
    EXPECT_EQ(got.error, want.error) << what;
    ASSERT_EQ(got.out.size(), want.out.size()) << what;
    for (size_t i = 0; i < got.out.size(); ++i) {
      ASSERT_EQ(got.out[i].size(), want.out[i].size()) << what << ": result " << i;
      for (size_t j = 0; j < got.out[i].size(); ++j) {
        const double g = got.out[i][j], w = want.out[i][j];
        if (std::isnan(w))
          EXPECT_TRUE(std::isnan(g)) << what << ": result " << i << " [" << j << "]";
        else
          EXPECT_NEAR(g, w, eps * std::max(1.0, std::fabs(w))) << what << ": result " << i << " [" << j << "]";
      }
    }
  }
  std::string saved_;
};

// Batch sizes and orders: one matrix, a batch of small ones (potrfBatched, syevjBatched), a batch
// of larger ones (one by one) and one large.
const std::vector<Shape> kShapes = {{5, 5}, {8, 4, 4}, {3, 40, 40}, {2, 1, 1}, {130, 130}};

TEST_F(LinalgCusolver, LogSaysCusolver) {
  lf::rt::mutable_config().linalg = "cusolver";
  int level = lf::rt::mutable_config().log_level;
  lf::rt::mutable_config().log_level = 1;
  Tensor a = spd({2, 3, 3}, 1, DType::Float64);
  testing::internal::CaptureStderr();
  la::cholesky(a).to_vector<double>();
  std::string log = testing::internal::GetCapturedStderr();
  lf::rt::mutable_config().linalg = "host";
  testing::internal::CaptureStderr();
  la::cholesky(a).to_vector<double>();
  std::string host_log = testing::internal::GetCapturedStderr();
  lf::rt::mutable_config().log_level = level;
  EXPECT_EQ(lf::cuda::cusolver_unavailable(), "") << "cuSOLVER did not load on this GPU machine";
  const size_t at = log.find("linalg.cholesky of 2 matrices [3 x 3] float64: cuSOLVER (");
  EXPECT_NE(at, std::string::npos) << log;
  EXPECT_NE(log.find("libcusolver.so", at), std::string::npos) << log;
  EXPECT_NE(host_log.find("host LAPACK: LAZYFUSE_LINALG=host"), std::string::npos) << host_log;
}

TEST_F(LinalgCusolver, CholeskyAndEx) {
  for (DType dt : {DType::Float64, DType::Float32})
    for (const Shape& s : kShapes) {
      Tensor a = spd(s, 2, dt);
      expect_same(
          [&] {
            return std::vector<Tensor>{la::cholesky(a), la::cholesky(a, /*upper=*/true)};
          },
          tol(dt), "cholesky " + lf::shape_str(s));
    }
  // Not positive-definite: element 1 fails at its minor 2 (batched and one by one), element 3 at 1.
  for (int64_t n : {4, 40}) {
    Tensor a = spd({4, n, n}, 3, DType::Float64);
    std::vector<double> v = values(a);
    v[static_cast<size_t>(1 * n * n + 1 * n + 1)] = -1e3;
    v[static_cast<size_t>(3 * n * n)] = -1;
    Tensor broken = lf::from_vector(v, {4, n, n});
    expect_same([&] { return std::vector<Tensor>{la::cholesky_ex(broken).info}; }, 0, "cholesky_ex info");
    expect_same([&] { return std::vector<Tensor>{la::cholesky(broken)}; }, 0, "cholesky's error");
  }
}

// NaN goes through cholesky with info 0, as on the host (which takes such a matrix).
TEST_F(LinalgCusolver, CholeskyOfNan) {
  Tensor nan = lf::full({3, 2, 2}, std::nan(""), DType::Float64);
  expect_same(
      [&] {
        auto r = la::cholesky_ex(nan);
        return std::vector<Tensor>{r.L, r.info};
      },
      0, "cholesky_ex of NaN");
}

TEST_F(LinalgCusolver, SolveLuFactorLuSolveSlogdet) {
  for (DType dt : {DType::Float64, DType::Float32})
    for (const Shape& s : kShapes) {
      // Large ones diagonally dominant: no pivot is a near tie, which float32's rounding could
      // break either way (a different LU, both right).
      const int64_t n = s.back();
      Tensor a = random(s, 4, dt) + lf::eye(n, dt) * (n > 8 ? static_cast<double>(n) : 2.0);
      Shape bs = s;
      bs.back() = 3;
      Tensor b = random(bs, 5, dt);
      const std::string what = lf::shape_str(s);
      expect_same([&] { return std::vector<Tensor>{la::solve(a, b)}; }, tol(dt), "solve " + what);
      expect_same(
          [&] {
            auto f = la::lu_factor(a);
            return std::vector<Tensor>{f.LU, f.pivots};
          },
          tol(dt), "lu_factor " + what);
      expect_same(
          [&] {
            auto f = la::lu_factor(a);
            return std::vector<Tensor>{la::lu_solve(f.LU, f.pivots, b),
                                       la::lu_solve(f.LU, f.pivots, b, true, /*adjoint=*/true)};
          },
          tol(dt), "lu_solve " + what);
      expect_same(
          [&] {
            auto d = la::slogdet(a);
            return std::vector<Tensor>{d.sign, d.logabsdet};
          },
          tol(dt), "slogdet " + what);
    }
  // Rectangular LU, and B of no columns.
  Tensor wide = random({3, 4, 6}, 6, DType::Float64), tall = random({2, 7, 3}, 7, DType::Float64);
  expect_same(
      [&] {
        auto f = la::lu_factor(wide);
        return std::vector<Tensor>{f.LU, f.pivots};
      },
      1e-9, "lu_factor wide");
  expect_same(
      [&] {
        auto f = la::lu_factor(tall);
        return std::vector<Tensor>{f.LU, f.pivots};
      },
      1e-9, "lu_factor tall");
  Tensor a = random({2, 4, 4}, 8, DType::Float64);
  expect_same(
      [&] {
        return std::vector<Tensor>{la::solve(a, lf::zeros({2, 4, 0}, DType::Float64))};
      },
      0, "solve, 0 columns");
  // Singular: column 2 of element 1 is zero, so U[2, 2] = 0 there (info 2 with or without pivoting).
  std::vector<double> v = values(a);
  for (int64_t i = 0; i < 4; ++i) v[static_cast<size_t>(16 + i * 4 + 1)] = 0;
  Tensor singular = lf::from_vector(v, {2, 4, 4});
  Tensor b = random({2, 4, 2}, 9, DType::Float64);
  expect_same([&] { return std::vector<Tensor>{la::lu_factor_ex(singular).info}; }, 0, "lu_factor_ex info");
  expect_same([&] { return std::vector<Tensor>{la::lu_factor(singular).LU}; }, 0, "lu_factor's error");
  expect_same([&] { return std::vector<Tensor>{la::solve(singular, b)}; }, 0, "solve's error");
  expect_same([&] { return std::vector<Tensor>{la::inv(singular)}; }, 0, "inv's error");
  expect_same([&] { return std::vector<Tensor>{la::det(singular)}; }, 1e-9, "det of a singular matrix");
}

// Eigenvectors and Q are unique up to signs (and syevj's rotations are not syevd's): compared
// through what they reconstruct, the eigenvalues and |R| directly.
TEST_F(LinalgCusolver, EighAndQr) {
  for (DType dt : {DType::Float64, DType::Float32})
    for (const Shape& s : kShapes) {
      const std::string what = lf::shape_str(s);
      Tensor a = random(s, 10, dt);
      Tensor sym = a + mT(a);
      for (const char* uplo : {"L", "U"})
        expect_same(
            [&] {
              auto e = la::eigh(sym, uplo);
              Tensor v = e.eigenvectors;
              return std::vector<Tensor>{e.eigenvalues, la::eigvalsh(sym, uplo),
                                         lf::matmul(v * lf::unsqueeze(e.eigenvalues, -2), mT(v)), lf::matmul(mT(v), v)};
            },
            tol(dt) * 10, std::string("eigh ") + uplo + " " + what);
      for (const char* mode : {"reduced", "complete", "r"})
        expect_same(
            [&] {
              auto f = la::qr(a, mode);
              std::vector<Tensor> r{lf::abs(f.R)};
              if (std::string(mode) != "r") r.push_back(lf::matmul(f.Q, f.R)), r.push_back(lf::matmul(mT(f.Q), f.Q));
              return r;
            },
            tol(dt) * 10, std::string("qr ") + mode + " " + what);
    }
  Tensor tall = random({3, 7, 4}, 11, DType::Float64), wide = random({2, 3, 6}, 12, DType::Float64);
  for (const Tensor& t : {tall, wide})
    for (const char* mode : {"reduced", "complete"})
      expect_same(
          [&] {
            auto f = la::qr(t, mode);
            return std::vector<Tensor>{lf::abs(f.R), lf::matmul(f.Q, f.R), lf::matmul(mT(f.Q), f.Q)};
          },
          1e-9, std::string("qr rectangular ") + mode);
  // A NaN in the triangle read: not converged, the reference's error (LAPACK's syevd may differ).
  std::vector<double> v = values(random({2, 4, 4}, 13, DType::Float64) + lf::eye(4, DType::Float64));
  v[16 + 2 * 4 + 1] = std::nan("");
  Tensor bad = lf::from_vector(v, {2, 4, 4});
  Run got = on("cusolver", [&] { return std::vector<Tensor>{la::eigh(bad).eigenvalues}; });
  Run want = on("reference", [&] { return std::vector<Tensor>{la::eigh(bad).eigenvalues}; });
  EXPECT_NE(want.error, "");
  EXPECT_EQ(got.error, want.error);
}

// U and Vh are unique up to signs: compared through U diag(S) Vh, U^T U and Vh Vh^T; S directly.
TEST_F(LinalgCusolver, Svd) {
  const std::vector<Shape> shapes = {{5, 3}, {8, 4, 4}, {3, 5, 7}, {2, 40, 30}, {30, 45}, {70, 70}};
  for (DType dt : {DType::Float64, DType::Float32})
    for (const Shape& s : shapes)
      for (bool full : {false, true}) {
        Tensor a = random(s, 17, dt);
        expect_same(
            [&] {
              auto f = la::svd(a, full);
              const int64_t k = std::min(s[s.size() - 2], s.back());
              Tensor uk = lf::narrow(f.U, -1, 0, k), vk = lf::narrow(f.Vh, -2, 0, k);
              return std::vector<Tensor>{f.S, la::svdvals(a), lf::matmul(uk * lf::unsqueeze(f.S, -2), vk),
                                         lf::matmul(mT(f.U), f.U), lf::matmul(f.Vh, mT(f.Vh))};
            },
            tol(dt) * 10, std::string("svd ") + (full ? "full " : "") + lf::shape_str(s));
      }
  // A non-finite A: svd's error on every path, batched and one by one.
  for (int64_t n : {4, 40}) {
    std::vector<double> v = values(random({3, n, n}, 18, DType::Float64));
    v[static_cast<size_t>(2 * n * n + 3)] = INFINITY;
    Tensor bad = lf::from_vector(v, {3, n, n});
    expect_same([&] { return std::vector<Tensor>{la::svdvals(bad)}; }, 0, "svdvals of inf");
  }
}

// Empty batches and 0 x 0 matrices (the host path, logged as such), and the ops cuSOLVER does not
// take (solve_triangular, lstsq), which must still agree.
TEST_F(LinalgCusolver, EmptyAndHostOps) {
  for (Shape s : {Shape{0, 3, 3}, Shape{2, 0, 0}}) {
    Tensor a = lf::zeros(s, DType::Float64);
    expect_same(
        [&] {
          return std::vector<Tensor>{la::cholesky(a), la::det(a), la::eigh(a).eigenvalues, la::qr(a).R, la::svd(a).U};
        },
        0, "empty " + lf::shape_str(s));
  }
  Tensor a = random({2, 5, 3}, 14, DType::Float64);
  expect_same(
      [&] {
        return std::vector<Tensor>{la::lstsq(a, random({2, 5, 2}, 19, DType::Float64)).solution};
      },
      1e-9, "lstsq");
  Tensor l = lf::tril(random({2, 4, 4}, 15, DType::Float64)) + lf::eye(4, DType::Float64) * 3.0;
  expect_same(
      [&] {
        return std::vector<Tensor>{la::solve_triangular(l, random({2, 4, 2}, 16, DType::Float64), false)};
      },
      1e-9, "solve_triangular");
}

}  // namespace
