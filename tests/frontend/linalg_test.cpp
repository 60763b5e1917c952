// lf::linalg against float64 residuals and known answers, on both host paths (LAPACK where it
// loads, and the reference: LAZYFUSE_LINALG=reference), with batches, broadcast batch dims, empty
// and size-1 dims, failures at the sync point, errors at the call, fusion around the op and
// gradients against finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "codegen/backend/lapack.h"
#include "frontend/autograd/gradcheck.h"
#include "frontend/linalg_util.h"
#include "frontend/test_util.h"
#include "runtime/config.h"

namespace {

using lf::DType;
using lf::Shape;
using lf::Tensor;
namespace la = lf::linalg;
using lf::test::expect_error;

using lf::test::expect_small;
using lf::test::max_abs;
using lf::test::mT;
using lf::test::random;
using lf::test::spd;

// Every test runs on both host paths.
class Linalg : public lf::test::LinalgPaths {};
INSTANTIATE_TEST_SUITE_P(Paths, Linalg, ::testing::Values("auto", "reference"));

TEST_P(Linalg, CholeskyResidualBatchedAndUpper) {
  for (DType dt : {DType::Float64, DType::Float32}) {
    const double tol = dt == DType::Float64 ? 1e-12 : 1e-4;
    Tensor a = spd({3, 5, 5}, 1, dt);
    Tensor l = la::cholesky(a);
    EXPECT_EQ(l.shape(), (Shape{3, 5, 5}));
    EXPECT_EQ(l.dtype(), dt);
    expect_small(lf::matmul(l, mT(l)) - a, tol * 10, "L L^T - A");
    expect_small(lf::triu(l, 1), 0.0 + 1e-300, "L's strict upper triangle");
    Tensor u = la::cholesky(a, /*upper=*/true);
    expect_small(lf::matmul(mT(u), u) - a, tol * 10, "U^T U - A");
    expect_small(lf::tril(u, -1), 1e-300, "U's strict lower triangle");
  }
  // Only the lower triangle is read: garbage above it changes nothing.
  Tensor a = spd({4, 4}, 2);
  Tensor noisy = lf::tril(a) + lf::triu(random({4, 4}, 3) * 100, 1);
  expect_small(la::cholesky(noisy) - la::cholesky(a), 1e-14, "upper triangle ignored");
}

TEST_P(Linalg, CholeskyKnownAnswer) {
  Tensor a = lf::from_vector(std::vector<double>{4, 12, -16, 12, 37, -43, -16, -43, 98}, {3, 3});
  lf::test::expect_close(la::cholesky(a), {2, 0, 0, 6, 1, 0, -8, 5, 3}, 1e-14);
}

TEST_P(Linalg, CholeskyNotPositiveDefinite) {
  Tensor good = spd({3, 3}, 4);
  Tensor bad = lf::from_vector(std::vector<double>{1, 2, 0, 2, 1, 0, 0, 0, 1}, {3, 3});  // minor of order 2 < 0
  Tensor batch = lf::stack({good, good, good, bad, good}, 0);
  expect_error([&] { la::cholesky(batch).to_vector<double>(); },
               {"linalg.cholesky: (Batch element 3): The factorization could not be completed because the input is "
                "not positive-definite (the leading minor of order 2 is not positive-definite)."});
  expect_error([&] { la::cholesky(bad).to_vector<double>(); },
               {"linalg.cholesky: The factorization could not be completed", "order 2"});
  auto [l, info] = la::cholesky_ex(batch);
  EXPECT_EQ(info.dtype(), DType::Int32);
  EXPECT_EQ(info.to_vector<int32_t>(), (std::vector<int32_t>{0, 0, 0, 2, 0}));
  expect_small(lf::slice(l, 0, 0, 1) - la::cholesky(lf::unsqueeze(good, 0)), 1e-14, "ex's L where info = 0");
  // NaN is not positive-definite either (LAPACK's rule).
  // NaN is no failure: it goes through as NaN with info 0 (PyTorch's, over LAPACK's potrf).
  Tensor nan = lf::full({2, 2}, std::nan(""), DType::Float64);
  auto [nl, ninfo] = la::cholesky_ex(nan);
  EXPECT_EQ(ninfo.item<int32_t>(), 0);
  EXPECT_TRUE(std::isnan(nl.to_vector<double>()[0]));
  expect_error([&] { la::cholesky_ex(bad, false, /*check_errors=*/true).L.to_vector<double>(); }, {"order 2"});
}

TEST_P(Linalg, SolveTriangularAllFlags) {
  Tensor a = random({2, 4, 4}, 5) + lf::eye(4, DType::Float64) * 4;  // a well-conditioned diagonal
  Tensor bl = random({2, 4, 3}, 6), br = random({2, 3, 4}, 7);
  for (bool upper : {false, true})
    for (bool unit : {false, true}) {
      Tensor t = upper ? lf::triu(a) : lf::tril(a);
      if (unit) t = t - lf::diag_embed(lf::diagonal(t, 0, -2, -1)) + lf::eye(4, DType::Float64);
      std::string what = std::string(upper ? "upper" : "lower") + (unit ? " unit" : "");
      Tensor x = la::solve_triangular(a, bl, upper, /*left=*/true, unit);  // a: the other triangle ignored
      expect_small(lf::matmul(t, x) - bl, 1e-12, what + " left");
      Tensor y = la::solve_triangular(a, br, upper, /*left=*/false, unit);
      expect_small(lf::matmul(y, t) - br, 1e-12, what + " right");
    }
  // Broadcast batch dims: A [3, 1, 4, 4] with B [2, 4, 1].
  Tensor a4 = lf::reshape(lf::cat({a, a, a}, 0), {3, 2, 4, 4});
  Tensor ab = lf::slice(a4, 1, 0, 1);
  Tensor b2 = random({2, 4, 1}, 8);
  Tensor x = la::solve_triangular(ab, b2, false);
  EXPECT_EQ(x.shape(), (Shape{3, 2, 4, 1}));
  expect_small(lf::matmul(lf::tril(ab), x) - b2, 1e-12, "broadcast");
  // A zero on the diagonal: inf / nan, no error (PyTorch's too).
  Tensor z = lf::zeros({2, 2}, DType::Float64);
  std::vector<double> v = la::solve_triangular(z, lf::ones({2, 1}, DType::Float64), false).to_vector<double>();
  EXPECT_TRUE(std::isinf(v[0]));
}

TEST_P(Linalg, CholeskySolve) {
  Tensor a = spd({2, 5, 5}, 9);
  Tensor b = random({2, 5, 3}, 10);
  for (bool upper : {false, true}) {
    Tensor f = la::cholesky(a, upper);
    Tensor x = la::cholesky_solve(b, f, upper);
    expect_small(lf::matmul(a, x) - b, 1e-12, upper ? "upper" : "lower");
  }
}

TEST_P(Linalg, SolveBroadcastAndVectors) {
  Tensor a = random({4, 1, 3, 3}, 11) + lf::eye(3, DType::Float64) * 3;
  Tensor b = random({2, 3, 5}, 12);
  Tensor x = la::solve(a, b);
  EXPECT_EQ(x.shape(), (Shape{4, 2, 3, 5}));
  expect_small(lf::matmul(a, x) - b, 1e-12, "broadcast batch dims");
  // Vectors: 1-D b, and b of a's shape without its last dim.
  Tensor a2 = lf::slice(lf::reshape(a, {4, 3, 3}), 0, 0, 2);
  Tensor v1 = random({3}, 13);
  Tensor x1 = la::solve(a2, v1);
  EXPECT_EQ(x1.shape(), (Shape{2, 3}));
  expect_small(lf::squeeze(lf::matmul(a2, lf::unsqueeze(x1, -1)), -1) - v1, 1e-12, "1-D b");
  Tensor v2 = random({2, 3}, 14);
  Tensor x2 = la::solve(a2, v2);
  EXPECT_EQ(x2.shape(), (Shape{2, 3}));
  expect_small(lf::squeeze(lf::matmul(a2, lf::unsqueeze(x2, -1)), -1) - v2, 1e-12, "batched vector b");
  // left = false: X A = B.
  Tensor br = random({2, 4, 3}, 15);
  Tensor xr = la::solve(a2, br, /*left=*/false);
  expect_small(lf::matmul(xr, a2) - br, 1e-12, "X A = B");
  // Float32.
  Tensor af = lf::cast(a2, DType::Float32), bf = lf::cast(lf::slice(b, 0, 0, 2), DType::Float32);
  Tensor xf = la::solve(af, bf);
  EXPECT_EQ(xf.dtype(), DType::Float32);
  expect_small(lf::matmul(af, xf) - bf, 1e-4, "float32");
}

TEST_P(Linalg, SolveAndInvSingular) {
  Tensor good = spd({3, 3}, 16);
  Tensor sing = lf::from_vector(std::vector<double>{1, 2, 3, 2, 4, 6, 1, 0, 1}, {3, 3});
  Tensor batch = lf::stack({good, sing}, 0);
  Tensor b = random({2, 3, 1}, 17);
  expect_error([&] { la::solve(batch, b).to_vector<double>(); },
               {"torch.linalg.solve: (Batch element 1): The solver failed because the input matrix is singular."});
  // A single matrix names no batch element, even against a batch of B (PyTorch's rule).
  for (const Tensor& rhs : {lf::select(b, 0, 0), lf::slice(b, 0, 0, 1)})
    expect_error([&] { la::solve(sing, rhs).to_vector<double>(); },
                 {"torch.linalg.solve: The solver failed because the input matrix is singular."});
  Tensor zero = lf::zeros({2, 3, 3}, DType::Float64);
  expect_error([&] { la::inv(zero).to_vector<double>(); },
               {"linalg.inv: (Batch element 0): The diagonal element 1 is zero, the inversion could not be completed "
                "because the input matrix is singular."});
}

TEST_P(Linalg, Inv) {
  Tensor a = random({3, 4, 4}, 18) + lf::eye(4, DType::Float64) * 2;
  Tensor i = la::inv(a);
  expect_small(lf::matmul(a, i) - lf::eye(4, DType::Float64), 1e-12, "A inv(A) - I");
  expect_small(lf::matmul(i, a) - lf::eye(4, DType::Float64), 1e-12, "inv(A) A - I");
  lf::test::expect_close(la::inv(lf::from_vector(std::vector<double>{4, 7, 2, 6}, {2, 2})), {0.6, -0.7, -0.2, 0.4},
                         1e-14);
}

TEST_P(Linalg, DetAndSlogdet) {
  Tensor a = lf::from_vector(std::vector<double>{1, 2, 3, 4}, {2, 2});
  EXPECT_NEAR(la::det(a).item<double>(), -2, 1e-14);
  auto [sign, logabs] = la::slogdet(a);
  EXPECT_EQ(sign.item<double>(), -1);
  EXPECT_NEAR(logabs.item<double>(), std::log(2.0), 1e-14);
  // 3x3 by the rule of Sarrus, batched.
  Tensor m = random({4, 3, 3}, 19, DType::Float64, -2, 2);
  std::vector<double> v = m.to_vector<double>(), d = la::det(m).to_vector<double>();
  auto [s, la_] = la::slogdet(m);
  std::vector<double> sv = s.to_vector<double>(), lv = la_.to_vector<double>();
  for (int e = 0; e < 4; ++e) {
    const double* x = v.data() + 9 * e;
    double want = x[0] * (x[4] * x[8] - x[5] * x[7]) - x[1] * (x[3] * x[8] - x[5] * x[6]) + x[2] * (x[3] * x[7] - x[4] * x[6]);
    EXPECT_NEAR(d[e], want, 1e-12) << e;
    EXPECT_EQ(sv[e], want < 0 ? -1 : 1) << e;
    EXPECT_NEAR(lv[e], std::log(std::fabs(want)), 1e-12) << e;
  }
  // Singular: det 0, sign 0, logabsdet -inf, no error (PyTorch's).
  Tensor z = lf::zeros({3, 3}, DType::Float64);
  EXPECT_EQ(la::det(z).item<double>(), 0);
  auto [zs, zl] = la::slogdet(z);
  EXPECT_EQ(zs.item<double>(), 0);
  EXPECT_EQ(zl.item<double>(), -std::numeric_limits<double>::infinity());
  // Empty matrices: det 1 (the empty product).
  EXPECT_EQ(la::det(lf::zeros({2, 0, 0}, DType::Float64)).to_vector<double>(), (std::vector<double>{1, 1}));
  EXPECT_NEAR(la::det(lf::cast(a, DType::Float32)).item<float>(), -2, 1e-6);
}

// P A = L U rebuilt from the packed LU and the 1-based pivots (row interchanges in order).
Tensor rebuild_lu(const Tensor& lu, const Tensor& piv, int64_t m, int64_t n) {
  std::vector<double> f = lu.to_vector<double>();
  std::vector<int32_t> p = piv.to_vector<int32_t>();
  const int64_t r = std::min(m, n);
  std::vector<double> L(static_cast<size_t>(m * r), 0), U(static_cast<size_t>(r * n), 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < r; ++j) L[i * r + j] = i == j ? 1 : (i > j ? f[i * n + j] : 0);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < n; ++j) U[i * n + j] = j >= i ? f[i * n + j] : 0;
  Tensor lu_prod = lf::matmul(lf::from_vector(L, {m, r}), lf::from_vector(U, {r, n}));
  std::vector<double> a = lu_prod.to_vector<double>();  // P A; undo the interchanges last to first
  for (int64_t i = r; i-- > 0;) {
    int64_t q = p[i] - 1;
    for (int64_t j = 0; j < n; ++j) std::swap(a[i * n + j], a[q * n + j]);
  }
  return lf::from_vector(a, {m, n});
}

TEST_P(Linalg, LuFactorKnownAnswerAndResidual) {
  // PyTorch: lu_factor([[1, 2], [3, 4], [5, 6]]) = LU [[5, 6], [0.2, 0.8], [0.6, 0.5]], pivots [3, 3].
  Tensor a = lf::from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {3, 2});
  auto [lu, piv] = la::lu_factor(a);
  lf::test::expect_close(lu, {5, 6, 0.2, 0.8, 0.6, 0.5}, 1e-14);
  EXPECT_EQ(piv.dtype(), DType::Int32);
  EXPECT_EQ(piv.to_vector<int32_t>(), (std::vector<int32_t>{3, 3}));
  for (auto [m, n] : {std::pair<int64_t, int64_t>{4, 4}, {5, 3}, {3, 5}}) {
    Tensor x = random({m, n}, static_cast<unsigned>(20 + m * n));
    auto [f, p] = la::lu_factor(x);
    expect_small(rebuild_lu(f, p, m, n) - x, 1e-13, std::to_string(m) + "x" + std::to_string(n));
  }
}

TEST_P(Linalg, LuFactorSingularAndEx) {
  Tensor z = lf::zeros({2, 3, 3}, DType::Float64);
  expect_error([&] { la::lu_factor(z).LU.to_vector<double>(); },
               {"torch.linalg.lu_factor: (Batch element 0): U[1,1] is zero and using it on lu_solve would result in a "
                "division by zero."});
  auto [lu, piv, info] = la::lu_factor_ex(z);
  EXPECT_EQ(info.to_vector<int32_t>(), (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(piv.to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 3, 1, 2, 3}));
  Tensor a = lf::from_vector(std::vector<double>{1, 2, 2, 4}, {2, 2});  // rank 1: U[2,2] = 0
  EXPECT_EQ(la::lu_factor_ex(a).info.item<int32_t>(), 2);
}

TEST_P(Linalg, LuSolve) {
  Tensor a = random({2, 4, 4}, 30) + lf::eye(4, DType::Float64) * 2;
  Tensor b = random({2, 4, 3}, 31);
  auto [lu, piv] = la::lu_factor(a);
  expect_small(lf::matmul(a, la::lu_solve(lu, piv, b)) - b, 1e-12, "A X = B");
  expect_small(lf::matmul(mT(a), la::lu_solve(lu, piv, b, true, /*adjoint=*/true)) - b, 1e-12, "A^T X = B");
  Tensor br = random({2, 3, 4}, 32);
  expect_small(lf::matmul(la::lu_solve(lu, piv, br, /*left=*/false), a) - br, 1e-12, "X A = B");
  expect_small(lf::matmul(la::lu_solve(lu, piv, br, false, true), mT(a)) - br, 1e-12, "X A^T = B");
}

TEST_P(Linalg, EighResidualOrthogonalityAndUplo) {
  for (DType dt : {DType::Float64, DType::Float32}) {
    const double tol = dt == DType::Float64 ? 1e-11 : 1e-4;
    Tensor x = random({3, 5, 5}, 60, dt);
    Tensor a = x + mT(x);
    auto [w, v] = la::eigh(a);
    EXPECT_EQ(w.shape(), (Shape{3, 5}));
    EXPECT_EQ(v.shape(), (Shape{3, 5, 5}));
    expect_small(lf::matmul(a, v) - v * lf::unsqueeze(w, -2), tol, "A V - V diag(w)");
    expect_small(lf::matmul(mT(v), v) - lf::eye(5, dt), tol, "V^T V - I");
    std::vector<double> wv = w.to_vector<double>();
    for (size_t i = 0; i + 1 < wv.size(); ++i)
      if ((i + 1) % 5) EXPECT_LE(wv[i], wv[i + 1]) << "ascending";
    expect_small(la::eigvalsh(a) - w, tol, "eigvalsh = eigh's values");
    // UPLO: only that triangle is read.
    Tensor lower_only = lf::tril(a) + lf::triu(random({3, 5, 5}, 61, dt) * 50, 1);
    Tensor upper_only = lf::triu(a) + lf::tril(random({3, 5, 5}, 62, dt) * 50, -1);
    expect_small(la::eigvalsh(lower_only) - w, tol * 10, "UPLO L");
    expect_small(la::eigvalsh(upper_only, "U") - w, tol * 10, "UPLO U");
  }
  // Known answer: [[2, 1], [1, 2]] has 1 and 3.
  lf::test::expect_close(la::eigvalsh(lf::from_vector(std::vector<double>{2, 1, 1, 2}, {2, 2})), {1, 3}, 1e-14);
  // Repeated eigenvalues (the identity): still orthonormal vectors.
  auto [wi, vi] = la::eigh(lf::eye(4, DType::Float64) * 2);
  lf::test::expect_close(wi, {2, 2, 2, 2}, 1e-14);
  expect_small(lf::matmul(mT(vi), vi) - lf::eye(4, DType::Float64), 1e-14, "identity's vectors");
  EXPECT_EQ(la::eigh(lf::zeros({2, 0, 0}, DType::Float64)).eigenvalues.shape(), (Shape{2, 0}));
  expect_error([&] { la::eigh(lf::eye(3, DType::Float64), "X"); }, {"linalg.eigh", "UPLO"});
}

TEST(LinalgNorm, MatrixNorm) {
  Tensor a = lf::from_vector(std::vector<double>{1, -2, 3, -4, 5, -6}, {2, 3});  // rows [1 -2 3], [-4 5 -6]
  lf::test::expect_close(la::matrix_norm(a), {std::sqrt(91.0)}, 1e-14);
  lf::test::expect_close(la::matrix_norm(a, 1), {9}, 1e-14);    // column sums 5, 7, 9
  lf::test::expect_close(la::matrix_norm(a, -1), {5}, 1e-14);
  lf::test::expect_close(la::matrix_norm(a, INFINITY), {15}, 1e-14);  // row sums 6, 15
  lf::test::expect_close(la::matrix_norm(a, -INFINITY), {6}, 1e-14);
  Tensor b = random({4, 2, 3}, 70);
  EXPECT_EQ(la::matrix_norm(b, 1, /*keepdim=*/true).shape(), (Shape{4, 1, 1}));
  EXPECT_EQ(la::matrix_norm(b).shape(), (Shape{4}));
  expect_error([&] { la::matrix_norm(a, 3); }, {"linalg.matrix_norm", "ord must be"});
  lf::test::gradcheck("matrix_norm fro", [](const std::vector<Tensor>& v) { return la::matrix_norm(v[0]); },
                      {lf::test::Input{{2, 3, 3}}});
}

TEST_P(Linalg, EmptyAndSizeOneDims) {
  EXPECT_EQ(la::cholesky(lf::zeros({0, 3, 3}, DType::Float64)).shape(), (Shape{0, 3, 3}));
  EXPECT_EQ(la::cholesky(lf::zeros({2, 0, 0}, DType::Float64)).to_vector<double>().size(), 0u);
  EXPECT_EQ(la::cholesky_ex(lf::zeros({2, 0, 0}, DType::Float64)).info.to_vector<int32_t>(),
            (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(la::solve(lf::eye(3, DType::Float64), lf::zeros({3, 0}, DType::Float64)).shape(), (Shape{3, 0}));
  EXPECT_EQ(la::inv(lf::zeros({0, 2, 2}, DType::Float64)).shape(), (Shape{0, 2, 2}));
  Tensor one = lf::full({1, 1, 1}, 4.0, DType::Float64);
  lf::test::expect_close(la::cholesky(one), {2});
  lf::test::expect_close(la::inv(one), {0.25});
  lf::test::expect_close(la::det(one), {4});
  lf::test::expect_close(la::solve(one, lf::full({1, 1, 2}, 2.0, DType::Float64)), {0.5, 0.5});
  auto [lu, piv] = la::lu_factor(lf::zeros({2, 0, 3}, DType::Float64));
  EXPECT_EQ(piv.shape(), (Shape{2, 0}));
}

TEST_P(Linalg, FusedAroundTheOp) {
  Tensor a = random({3, 4, 4}, 40), b = random({3, 4, 2}, 41);
  Tensor got = lf::sum(la::solve(a * 2 + 1 + lf::eye(4, DType::Float64) * 8, lf::exp(b)) * 3);
  // The same with every intermediate realized first.
  Tensor a2 = a * 2 + 1 + lf::eye(4, DType::Float64) * 8;
  Tensor e = lf::exp(b);
  std::vector<double> av = a2.to_vector<double>(), ev = e.to_vector<double>();
  Tensor x = la::solve(lf::from_vector(av, {3, 4, 4}), lf::from_vector(ev, {3, 4, 2}));
  std::vector<double> xv = x.to_vector<double>();
  double want = 0;
  for (double v : xv) want += v * 3;
  EXPECT_NEAR(got.item<double>(), want, 1e-12 * std::max(1.0, std::fabs(want)));
  // Results of one factorization read through their views in one expression.
  Tensor m = random({2, 3, 3}, 42) + lf::eye(3, DType::Float64) * 3;
  auto [s, l] = la::slogdet(m);
  expect_small(s * lf::exp(l) - la::det(m), 1e-12, "sign * exp(logabsdet) = det");
}

TEST_P(Linalg, LogSaysWhichPath) {
  struct Restore {
    lf::Device saved = lf::default_device();
    int level = lf::rt::mutable_config().log_level;
    ~Restore() {
      lf::set_default_device(saved);
      lf::rt::mutable_config().log_level = level;
    }
  } restore;
  lf::set_default_device(lf::Device::cpu());
  lf::rt::mutable_config().log_level = 1;
  Tensor a = spd({2, 3, 3}, 43);
  testing::internal::CaptureStderr();
  la::cholesky(a).to_vector<double>();
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("linalg.cholesky of 2 matrices [3 x 3] float64: "), std::string::npos) << log;
  const std::string& missing = lf::backend::lapack::unavailable();
  if (GetParam() == "reference")
    EXPECT_NE(log.find("the reference on the host (LAZYFUSE_LINALG=reference)"), std::string::npos) << log;
  else if (missing.empty())
    EXPECT_NE(log.find("LAPACK (" + lf::backend::lapack::library() + ")"), std::string::npos) << log;
  else
    EXPECT_NE(log.find("the reference on the host (" + missing + ")"), std::string::npos) << log;
}

TEST(LinalgErrors, AtTheCall) {
  Tensor a = lf::zeros({2, 3}, DType::Float64), s = lf::zeros({3, 3}, DType::Float64);
  expect_error([&] { la::cholesky(a); }, {"linalg.cholesky", "square", "2 by 3", "float64[2, 3]"});
  expect_error([&] { la::cholesky(lf::zeros({3}, DType::Float64)); }, {"linalg.cholesky", "at least 2 dimensions"});
  expect_error([&] { la::inv(lf::zeros({3, 3}, DType::Int64)); }, {"linalg.inv", "float32 or float64", "int64[3, 3]"});
  expect_error([&] { la::cholesky(lf::zeros({3, 3}, DType::Float16)); }, {"linalg.cholesky", "complex dtypes do not exist yet"});
  expect_error([&] { la::solve(s, lf::zeros({4}, DType::Float64)); },
               {"linalg.solve", "incompatible shapes", "[3, 3]", "[4]"});
  expect_error([&] { la::solve(s, lf::zeros({3, 1}, DType::Float32)); },
               {"linalg.solve", "same dtype", "float64", "float32"});
  expect_error([&] { la::solve(lf::zeros({2, 3, 3}, DType::Float64), lf::zeros({4, 3, 1}, DType::Float64)); },
               {"linalg.solve", "[2]", "[4]"});
  expect_error([&] { la::solve(s, lf::zeros({3}, DType::Float64), /*left=*/false); },
               {"linalg.solve", "vector broadcasting", "left=false"});
  expect_error([&] { la::solve_triangular(s, lf::zeros({2, 1}, DType::Float64), true); },
               {"linalg.solve_triangular", "incompatible shapes", "[3, 3]", "[2, 1]"});
  expect_error([&] { la::lu_solve(s, lf::zeros({3}, DType::Int64), lf::zeros({3, 1}, DType::Float64)); },
               {"linalg.lu_solve", "int32", "int64[3]"});
  expect_error([&] { la::cholesky_solve(lf::zeros({2, 1}, DType::Float64), s); },
               {"linalg.cholesky_solve", "[3, 3]", "[2, 1]"});
}

// Gradients against float64 central differences (through symmetric inputs where the op reads a
// triangle, as PyTorch's own gradchecks do).
TEST(LinalgGrad, CholeskyAndSolves) {
  using lf::test::gradcheck;
  using lf::test::Input;
  auto sym = [](const Tensor& x) { return lf::matmul(x, mT(x)) + lf::eye(x.size(-1), DType::Float64) * 3; };
  gradcheck("cholesky", [&](const std::vector<Tensor>& v) { return la::cholesky(sym(v[0])); }, {Input{{2, 3, 3}}});
  gradcheck("cholesky upper", [&](const std::vector<Tensor>& v) { return la::cholesky(sym(v[0]), true); },
            {Input{{3, 3}}});
  gradcheck("cholesky_ex", [&](const std::vector<Tensor>& v) { return la::cholesky_ex(sym(v[0])).L; }, {Input{{3, 3}}});
  auto well = [](const Tensor& x) { return x + lf::eye(x.size(-1), DType::Float64) * 4; };
  for (bool upper : {false, true})
    for (bool left : {false, true})
      for (bool unit : {false, true})
        gradcheck("solve_triangular", [&](const std::vector<Tensor>& v) {
          return la::solve_triangular(well(v[0]), v[1], upper, left, unit);
        }, {Input{{2, 3, 3}}, Input{left ? Shape{2, 3, 2} : Shape{2, 2, 3}}});
  gradcheck("solve", [&](const std::vector<Tensor>& v) { return la::solve(well(v[0]), v[1]); },
            {Input{{2, 3, 3}}, Input{{3, 2}}});
  gradcheck("solve vector", [&](const std::vector<Tensor>& v) { return la::solve(well(v[0]), v[1]); },
            {Input{{3, 3}}, Input{{3}}});
  gradcheck("solve right", [&](const std::vector<Tensor>& v) { return la::solve(well(v[0]), v[1], false); },
            {Input{{2, 3, 3}}, Input{{4, 3}}});
  gradcheck("inv", [&](const std::vector<Tensor>& v) { return la::inv(well(v[0])); }, {Input{{2, 3, 3}}});
  gradcheck("cholesky_solve", [&](const std::vector<Tensor>& v) {
    return la::cholesky_solve(v[1], la::cholesky(sym(v[0])));
  }, {Input{{3, 3}}, Input{{3, 2}}});
  gradcheck("det", [&](const std::vector<Tensor>& v) { return la::det(well(v[0])); }, {Input{{2, 3, 3}}});
  gradcheck("slogdet", [&](const std::vector<Tensor>& v) { return la::slogdet(v[0]).logabsdet; }, {Input{{2, 3, 3}}});
  auto sym2 = [](const Tensor& x) { return x + mT(x); };
  // Eigenvector signs are free: check sign-free functions of them.
  gradcheck("eigh", [&](const std::vector<Tensor>& v) {
    auto [w, vec] = la::eigh(sym2(v[0]));
    return lf::cat({lf::reshape(w, {-1}), lf::reshape(vec * vec, {-1})}, 0);
  }, {Input{{2, 3, 3}}});
  gradcheck("eigh U", [&](const std::vector<Tensor>& v) {
    auto [w, vec] = la::eigh(sym2(v[0]), "U");
    return lf::reshape(lf::matmul(vec * lf::unsqueeze(lf::exp(w), -2), mT(vec)), {-1});
  }, {Input{{3, 3}}});
  gradcheck("eigvalsh", [&](const std::vector<Tensor>& v) { return la::eigvalsh(sym2(v[0])); }, {Input{{2, 4, 4}}});
  gradcheck("lu_solve wrt B", [&](const std::vector<Tensor>& v) {
    auto [lu, piv] = la::lu_factor(well(random({3, 3}, 50)));
    return la::lu_solve(lu, piv, v[0]);
  }, {Input{{3, 2}}});
}

}  // namespace
