// lf::linalg's orthogonal factorizations and what is built on them (qr, svd, svdvals, lstsq,
// pinv, matrix_rank, cond, matrix_norm's "nuc" / 2 / -2) on both host paths (LAPACK and the
// reference: LAZYFUSE_LINALG=reference): residuals and orthogonality (signs are free, so Q, U and
// Vh are never compared directly), singular values against numpy's, batches, broadcasting, empty
// and size-1 dims, rank-deficient and ill-conditioned inputs, fusion around the op, errors at the
// call and at the sync point, and gradients against float64 central differences.
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

Tensor I(int64_t n, DType dt = DType::Float64) { return lf::eye(n, dt); }
Tensor f64(std::vector<double> v, Shape s) { return lf::from_vector(v, s); }

class LinalgOrth : public lf::test::LinalgPaths {};
INSTANTIATE_TEST_SUITE_P(Paths, LinalgOrth, ::testing::Values("auto", "reference"));

TEST_P(LinalgOrth, QrModesShapesResidualOrthogonality) {
  for (DType dt : {DType::Float64, DType::Float32}) {
    const double tol = dt == DType::Float64 ? 1e-12 : 2e-5;
    for (Shape s : {Shape{3, 5, 3}, Shape{2, 3, 5}, Shape{4, 4}, Shape{1, 6, 1}}) {
      SCOPED_TRACE(::testing::Message() << "shape " << s.size() << " " << s[s.size() - 2] << "x" << s.back());
      Tensor a = random(s, 1, dt);
      const int64_t m = s[s.size() - 2], n = s.back(), k = std::min(m, n);
      auto [q, r] = la::qr(a);
      EXPECT_EQ(q.shape().back(), k);
      EXPECT_EQ(r.shape()[r.dim() - 2], k);
      EXPECT_EQ(q.dtype(), dt);
      expect_small(lf::matmul(q, r) - a, tol, "A - QR");
      expect_small(lf::matmul(mT(q), q) - I(k, dt), tol, "Q^T Q - I");
      expect_small(lf::tril(r, -1), 1e-300, "R upper triangular");
      auto [qc, rc] = la::qr(a, "complete");
      EXPECT_EQ(qc.shape().back(), m);
      EXPECT_EQ(rc.shape()[rc.dim() - 2], m);
      expect_small(lf::matmul(qc, rc) - a, tol, "A - QR complete");
      expect_small(lf::matmul(mT(qc), qc) - I(m, dt), tol, "Q^T Q - I complete");
      expect_small(lf::tril(rc, -1), 1e-300, "R complete upper triangular");
      auto [q0, r0] = la::qr(a, "r");
      EXPECT_EQ(q0.shape(), (Shape{0}));
      expect_small(lf::abs(r0) - lf::abs(r), tol, "mode r's |R| = reduced's");
    }
  }
  // Known answer up to signs: the Householder R of [[3], [4]] is -5 (LAPACK's sign).
  auto [q, r] = la::qr(f64({3, 4}, {2, 1}));
  lf::test::expect_close(lf::abs(r), {5}, 1e-14);
  // Rank-deficient columns: still orthonormal Q and A = QR.
  Tensor c = random({5, 1}, 2);
  Tensor def = lf::cat({c, c * 2, random({5, 1}, 3)}, 1);
  auto [qd, rd] = la::qr(def);
  expect_small(lf::matmul(qd, rd) - def, 1e-13, "rank-deficient A - QR");
  expect_small(lf::matmul(mT(qd), qd) - I(3), 1e-13, "rank-deficient Q^T Q");
}

TEST_P(LinalgOrth, SvdResidualOrthogonalityAndValues) {
  for (DType dt : {DType::Float64, DType::Float32}) {
    const double tol = dt == DType::Float64 ? 1e-12 : 3e-5;
    for (Shape s : {Shape{3, 5, 3}, Shape{2, 3, 5}, Shape{4, 4}, Shape{1, 1, 6}}) {
      Tensor a = random(s, 4, dt);
      const int64_t m = s[s.size() - 2], n = s.back(), k = std::min(m, n);
      auto [u, sv, vh] = la::svd(a, false);
      EXPECT_EQ(sv.shape().back(), k);
      expect_small(lf::matmul(u * lf::unsqueeze(sv, -2), vh) - a, tol, "U S Vh - A");
      expect_small(lf::matmul(mT(u), u) - I(k, dt), tol, "U^T U");
      expect_small(lf::matmul(vh, mT(vh)) - I(k, dt), tol, "Vh Vh^T");
      expect_small(la::svdvals(a) - sv, tol, "svdvals = svd's S");
      std::vector<double> v = lf::cast(sv, DType::Float64).to_vector<double>();
      for (size_t i = 0; i + 1 < v.size(); ++i)
        if ((i + 1) % static_cast<size_t>(k)) EXPECT_GE(v[i], v[i + 1]) << "descending";
      auto [uf, sf, vhf] = la::svd(a);  // full_matrices
      EXPECT_EQ(uf.shape().back(), m);
      EXPECT_EQ(vhf.shape()[vhf.dim() - 2], n);
      expect_small(lf::matmul(mT(uf), uf) - I(m, dt), tol, "full U^T U");
      expect_small(lf::matmul(vhf, mT(vhf)) - I(n, dt), tol, "full Vh Vh^T");
      expect_small(lf::matmul(lf::narrow(uf, -1, 0, k) * lf::unsqueeze(sf, -2), lf::narrow(vhf, -2, 0, k)) - a, tol,
                   "full U S Vh - A");
    }
  }
  // numpy.linalg.svd(np.arange(1., 13.).reshape(3, 4), compute_uv=False)
  lf::test::expect_close(la::svdvals(lf::reshape(lf::arange(1.0, 13.0, 1.0, DType::Float64), {3, 4})),
                         {25.436835633480243, 1.7226122475210632, 0}, 1e-12);
  // Rank 1: one nonzero value; the full bases still orthonormal.
  Tensor x = random({4, 1}, 5), y = random({1, 3}, 6);
  auto [u1, s1, vh1] = la::svd(lf::matmul(x, y));
  std::vector<double> s1v = s1.to_vector<double>();
  EXPECT_NEAR(s1v[0], std::sqrt(max_abs(lf::sum(x * x))) * std::sqrt(max_abs(lf::sum(y * y))), 1e-13);
  EXPECT_LT(std::fabs(s1v[1]) + std::fabs(s1v[2]), 1e-14);
  expect_small(lf::matmul(mT(u1), u1) - I(4), 1e-13, "rank-1 U^T U");
  expect_small(lf::matmul(vh1, mT(vh1)) - I(3), 1e-13, "rank-1 Vh Vh^T");
  // The zero matrix: S = 0, orthonormal bases.
  auto [uz, sz, vhz] = la::svd(lf::zeros({3, 2}, DType::Float64));
  expect_small(sz, 1e-300, "zero matrix's S");
  expect_small(lf::matmul(mT(uz), uz) - I(3), 1e-14, "zero matrix's U");
  // Ill-conditioned (Hilbert 6, cond ~1.5e7): the values against numpy's, relative to the largest.
  std::vector<double> h(36);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j) h[static_cast<size_t>(i * 6 + j)] = 1.0 / (i + j + 1);
  lf::test::expect_close(la::svdvals(f64(h, {6, 6})),
                         {1.6188998589243393, 0.2423608705752095, 0.016321521319875819, 6.1574835418264475e-04,
                          1.2570757122632472e-05, 1.0827994844462713e-07},
                         1e-14);
  lf::test::expect_close(la::cond(f64(h, {6, 6})), {14951058.64177819}, 0.5);
}

TEST_P(LinalgOrth, SvdHardInputs) {
  // Repeated singular values: an orthogonal matrix (all 1) and the identity.
  Tensor q = la::qr(random({6, 6}, 60)).Q;
  for (Tensor a : {q, I(5), I(5) * -3}) {
    auto [u, s, vh] = la::svd(a);
    const int64_t n = a.size(-1);
    expect_small(lf::matmul(mT(u), u) - I(n), 1e-13, "U^T U");
    expect_small(lf::matmul(vh, mT(vh)) - I(n), 1e-13, "Vh Vh^T");
    expect_small(lf::matmul(u * lf::unsqueeze(s, -2), vh) - a, 1e-13, "U S Vh - A");
  }
  // Larger float32 and float64, tall, rank-deficient (two equal columns): S against the other
  // precision, the factors by residual.
  Tensor x = random({40, 25}, 61);
  Tensor dup = lf::cat({x, lf::narrow(x, 1, 0, 5)}, 1);  // 40 x 30, rank 25
  for (Tensor a : {x, dup, mT(dup)}) {
    Tensor s64 = la::svdvals(a);
    auto [u, s, vh] = la::svd(lf::cast(a, DType::Float32), false);
    expect_small(lf::cast(s, DType::Float64) - s64, 2e-5, "float32 S against float64's");
    expect_small(lf::matmul(u * lf::unsqueeze(s, -2), vh) - lf::cast(a, DType::Float32), 3e-5, "float32 U S Vh - A");
    const int64_t k = s.size(-1);
    expect_small(lf::matmul(mT(u), u) - I(k, DType::Float32), 3e-5, "float32 U^T U");
    auto [uf, sf, vhf] = la::svd(a);
    expect_small(lf::matmul(mT(uf), uf) - I(a.size(0)), 1e-12, "full U^T U, rank-deficient");
    expect_small(lf::matmul(vhf, mT(vhf)) - I(a.size(1)), 1e-12, "full Vh Vh^T, rank-deficient");
  }
  EXPECT_EQ(la::matrix_rank(dup).item<int64_t>(), 25);
  // Ill-conditioned least squares: a Vandermonde system of degree 7 (cond ~ 1e6) recovers its
  // polynomial's coefficients.
  std::vector<double> v, y;
  const std::vector<double> coef = {1, -2, 0.5, 3, -1, 0.25, 2, -0.75};
  for (int i = 0; i < 20; ++i) {
    const double t = -1 + 2.0 * i / 19;
    double p = 1, sum = 0;
    for (double c : coef) {
      v.push_back(p);
      sum += c * p;
      p *= t;
    }
    y.push_back(sum);
  }
  lf::test::expect_close(la::lstsq(f64(v, {20, 8}), f64(y, {20, 1}), std::nullopt, "gelsd").solution, coef, 1e-9);
}

TEST_P(LinalgOrth, LstsqDriversShapesAndSolutions) {
  for (DType dt : {DType::Float64, DType::Float32}) {
    const double tol = dt == DType::Float64 ? 1e-11 : 1e-4;
    Tensor a = random({2, 6, 3}, 7, dt), b = random({2, 6, 2}, 8, dt);
    la::Lstsq r = la::lstsq(a, b, std::nullopt, "gelsd");
    EXPECT_EQ(r.solution.shape(), (Shape{2, 3, 2}));
    EXPECT_EQ(r.residuals.shape(), (Shape{2, 2}));
    EXPECT_EQ(r.rank.dtype(), DType::Int64);
    EXPECT_EQ(r.rank.to_vector<int64_t>(), (std::vector<int64_t>{3, 3}));
    EXPECT_EQ(r.singular_values.shape(), (Shape{2, 3}));
    expect_small(r.singular_values - la::svdvals(a), tol, "singular values");
    // The normal equations: A^T (A X - B) = 0; residuals = |A X - B|^2 per column.
    Tensor res = lf::matmul(a, r.solution) - b;
    expect_small(lf::matmul(mT(a), res), tol, "A^T (AX - B)");
    expect_small(r.residuals - lf::sum(res * res, {-2}), tol, "residuals");
    la::Lstsq d = la::lstsq(a, b);  // gelsy: no residuals, no singular values
    EXPECT_EQ(d.residuals.shape(), (Shape{0}));
    EXPECT_EQ(d.singular_values.shape(), (Shape{0}));
    EXPECT_EQ(d.rank.shape(), (Shape{2}));
    expect_small(d.solution - r.solution, tol, "gelsy's solution = gelsd's");
    la::Lstsq g = la::lstsq(a, b, std::nullopt, "gels");
    EXPECT_EQ(g.rank.shape(), (Shape{0}));
    EXPECT_EQ(g.residuals.shape(), (Shape{2, 2}));
  }
  // Wide: the minimum-norm solution, the rows of pinv(A) B; no residuals.
  Tensor w = random({3, 5}, 9), bw = random({3, 2}, 10);
  la::Lstsq rw = la::lstsq(w, bw, std::nullopt, "gelss");
  expect_small(lf::matmul(w, rw.solution) - bw, 1e-12, "wide A X = B");
  expect_small(rw.solution - lf::matmul(la::pinv(w), bw), 1e-12, "minimum norm");
  EXPECT_EQ(rw.residuals.shape(), (Shape{0}));
  // Rank-deficient: rank 2 of 3, the minimum-norm solution.
  Tensor c = random({6, 1}, 11);
  Tensor def = lf::cat({c, c * 2, random({6, 1}, 12)}, 1);
  Tensor bd = random({6, 1}, 13);
  la::Lstsq rd = la::lstsq(def, bd, std::nullopt, "gelsd");
  EXPECT_EQ(rd.rank.item<int64_t>(), 2);
  expect_small(rd.solution - lf::matmul(la::pinv(def), bd), 1e-12, "rank-deficient minimum norm");
  // Its residuals are still returned (PyTorch's would be empty: a shape that depends on the rank).
  Tensor rr = lf::matmul(def, rd.solution) - bd;
  expect_small(rd.residuals - lf::sum(rr * rr, {-2}), 1e-12, "rank-deficient residuals");
  // rcond: a cut above the second singular value leaves rank 1.
  EXPECT_EQ(la::lstsq(f64({1, 0, 0, 1e-3}, {2, 2}), f64({1, 1}, {2}), 1e-2, "gelsd").rank.item<int64_t>(), 1);
  // A vector B (one dim fewer than A), and broadcast batch dims: rank has A's own batch dims.
  Tensor av = random({2, 5, 3}, 14);
  la::Lstsq v = la::lstsq(av, random({2, 5}, 15));
  EXPECT_EQ(v.solution.shape(), (Shape{2, 3}));
  EXPECT_EQ(la::lstsq(av, random({2, 5}, 15), std::nullopt, "gelsd").residuals.shape(), (Shape{2, 1}));  // PyTorch's
  la::Lstsq bc = la::lstsq(random({1, 5, 3}, 16), random({4, 5, 2}, 17), std::nullopt, "gelsd");
  EXPECT_EQ(bc.solution.shape(), (Shape{4, 3, 2}));
  EXPECT_EQ(bc.rank.shape(), (Shape{1}));
  EXPECT_EQ(bc.singular_values.shape(), (Shape{1, 3}));
  EXPECT_EQ(bc.residuals.shape(), (Shape{4, 2}));
}

TEST_P(LinalgOrth, PinvRankCondAndNorms) {
  Tensor a = random({3, 5, 4}, 20);
  Tensor p = la::pinv(a);
  EXPECT_EQ(p.shape(), (Shape{3, 4, 5}));
  expect_small(lf::matmul(lf::matmul(a, p), a) - a, 1e-12, "A A+ A = A");
  expect_small(lf::matmul(lf::matmul(p, a), p) - p, 1e-12, "A+ A A+ = A+");
  expect_small(lf::matmul(p, a) - I(4), 1e-12, "full column rank: A+ A = I");
  Tensor s = random({4, 4}, 21);
  Tensor sym = s + mT(s);
  expect_small(la::pinv(sym, std::nullopt, std::nullopt, true) - la::inv(sym), 1e-10, "hermitian pinv = inv");
  // Rank: a rank-2 product, hermitian or not; tolerances.
  Tensor low = lf::matmul(random({2, 5, 2}, 22), random({2, 2, 5}, 23));
  EXPECT_EQ(la::matrix_rank(low).to_vector<int64_t>(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(la::matrix_rank(low + mT(low), std::nullopt, std::nullopt, true).to_vector<int64_t>(),
            (std::vector<int64_t>{4, 4}));
  Tensor d = f64({1, 0, 0, 0, 1e-3, 0, 0, 0, 1e-9}, {3, 3});
  EXPECT_EQ(la::matrix_rank(d).item<int64_t>(), 3);
  EXPECT_EQ(la::matrix_rank(d, 1e-6).item<int64_t>(), 2);                // atol
  EXPECT_EQ(la::matrix_rank(d, std::nullopt, 1e-2).item<int64_t>(), 1);  // rtol
  EXPECT_EQ(la::matrix_rank(d, 1e-6, 1e-2).item<int64_t>(), 1);          // the larger
  EXPECT_EQ(la::matrix_rank(lf::zeros({2, 0, 3}, DType::Float64)).to_vector<int64_t>(), (std::vector<int64_t>{0, 0}));
  // cond: p 2 / -2 from S, the others through the inverse; singular: inf.
  Tensor c = f64({2, 0, 0, 0.5}, {2, 2});
  lf::test::expect_close(la::cond(c), {4}, 1e-14);
  lf::test::expect_close(la::cond(c, -2.0), {0.25}, 1e-14);
  lf::test::expect_close(la::cond(c, 1.0), {4}, 1e-14);
  lf::test::expect_close(la::cond(c, INFINITY), {4}, 1e-14);
  lf::test::expect_close(la::cond(c, "fro"), {std::sqrt(4.25) * std::sqrt(4.25)}, 1e-13);
  lf::test::expect_close(la::cond(c, "nuc"), {2.5 * 2.5}, 1e-13);
  EXPECT_TRUE(std::isinf(la::cond(f64({1, 0, 0, 0}, {2, 2}), 1.0).item<double>()));
  EXPECT_TRUE(std::isinf(la::cond(f64({1, 0, 0, 0}, {2, 2})).item<double>()));
  EXPECT_EQ(la::cond(lf::zeros({2, 0, 3}, DType::Float64)).to_vector<double>(), (std::vector<double>{0, 0}));
  // matrix_norm's orders through the singular values.
  Tensor m = f64({3, 0, 0, -4, 0, 0}, {3, 2});  // singular values 4, 3
  lf::test::expect_close(la::matrix_norm(m, "nuc"), {7}, 1e-14);
  lf::test::expect_close(la::matrix_norm(m, 2), {4}, 1e-14);
  lf::test::expect_close(la::matrix_norm(m, -2), {3}, 1e-14);
  EXPECT_EQ(la::matrix_norm(a, 2, /*keepdim=*/true).shape(), (Shape{3, 1, 1}));
  EXPECT_EQ(la::matrix_norm(a, "nuc", /*keepdim=*/true).shape(), (Shape{3, 1, 1}));
}

TEST_P(LinalgOrth, EmptyAndSizeOneDims) {
  for (Shape s : {Shape{0, 3, 2}, Shape{2, 0, 3}, Shape{2, 3, 0}, Shape{0, 0}}) {
    Tensor a = lf::zeros(s, DType::Float64);
    const int64_t m = s[s.size() - 2], n = s.back(), k = std::min(m, n);
    Shape batch(s.begin(), s.end() - 2);
    auto [q, r] = la::qr(a);
    EXPECT_EQ(q.shape().back(), k);
    EXPECT_EQ(r.shape()[r.dim() - 2], k);
    auto [u, sv, vh] = la::svd(a);
    EXPECT_EQ(u.shape().back(), m);
    EXPECT_EQ(vh.shape().back(), n);
    EXPECT_EQ(sv.shape().back(), k);
    // A full basis of an empty matrix's other side is the identity (PyTorch's).
    if (lf::shape_numel(batch) > 0 && k == 0) {
      expect_small(lf::matmul(mT(u), u) - I(m), 1e-300, "U = I");
      expect_small(lf::matmul(vh, mT(vh)) - I(n), 1e-300, "Vh = I");
    }
    EXPECT_EQ(la::svdvals(a).shape().back(), k);
    Shape ps = batch;
    ps.push_back(n);
    ps.push_back(m);
    EXPECT_EQ(la::pinv(a).shape(), ps);
    Tensor b = lf::zeros(s, DType::Float64);
    la::Lstsq l = la::lstsq(a, b, std::nullopt, "gelsd");
    EXPECT_EQ(l.solution.shape()[l.solution.dim() - 2], n);
    expect_small(l.solution, 1e-300, "empty lstsq");
  }
  // A B of no columns: an empty solution, A's rank and singular values all the same.
  la::Lstsq nb = la::lstsq(random({5, 3}, 70), lf::zeros({5, 0}, DType::Float64), std::nullopt, "gelsd");
  EXPECT_EQ(nb.solution.shape(), (Shape{3, 0}));
  EXPECT_EQ(nb.residuals.shape(), (Shape{0}));
  EXPECT_EQ(nb.rank.item<int64_t>(), 3);
  expect_small(nb.singular_values - la::svdvals(random({5, 3}, 70)), 1e-13, "singular values with k = 0");
  // The complete Q of an m x 0 matrix is the identity (PyTorch's; orgqr of no reflectors).
  expect_small(la::qr(lf::zeros({3, 0}, DType::Float64), "complete").Q - I(3), 1e-300, "complete Q of 3 x 0");
  auto [q1, r1] = la::qr(lf::full({1, 1}, -2.0, DType::Float64));
  lf::test::expect_close(lf::abs(r1), {2}, 1e-15);
  lf::test::expect_close(la::svdvals(lf::full({3, 1, 1}, -2.0, DType::Float64)), {2, 2, 2}, 1e-15);
  lf::test::expect_close(la::pinv(lf::full({1, 1}, 4.0, DType::Float64)), {0.25}, 1e-15);
}

TEST_P(LinalgOrth, FusedAroundTheOp) {
  Tensor a = random({2, 4, 3}, 30);
  // The same expression with its input realized first.
  std::vector<double> av = (a * 2 + 1).to_vector<double>();
  Tensor a2 = f64(av, {2, 4, 3});
  auto [q, r] = la::qr(a * 2 + 1);
  Tensor got = lf::sum(lf::abs(r) * 3 + 1);
  Tensor want = lf::sum(lf::abs(la::qr(a2).R) * 3 + 1);
  EXPECT_NEAR(got.item<double>(), want.item<double>(), 1e-12);
  expect_small(la::svdvals(lf::exp(a)) * 2 - la::svdvals(f64(lf::exp(a).to_vector<double>(), {2, 4, 3})) * 2, 1e-12,
               "svdvals(exp(a))");
  // Results of one factorization together in one expression.
  auto [u, s, vh] = la::svd(a * 2 + 1, false);
  expect_small(lf::matmul(u * lf::unsqueeze(s, -2), vh) - a2, 1e-12, "U S Vh of a fused input");
}

TEST_P(LinalgOrth, LogSaysWhichPath) {
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
  Tensor a = random({2, 4, 3}, 50);
  testing::internal::CaptureStderr();
  la::qr(a).R.to_vector<double>();
  la::svdvals(a).to_vector<double>();
  la::lstsq(a, random({2, 4, 1}, 51)).solution.to_vector<double>();
  std::string log = testing::internal::GetCapturedStderr();
  const std::string how = GetParam() == "reference"                    ? "the reference on the host"
                          : lf::backend::lapack::unavailable().empty() ? "LAPACK ("
                                                                       : "the reference on the host";
  for (const char* op : {"linalg.qr", "linalg.svdvals", "torch.linalg.lstsq"}) {
    const size_t at = log.find(std::string(op) + " of 2 matrices [4 x 3] float64: " + how);
    EXPECT_NE(at, std::string::npos) << op << "\n" << log;
  }
}

TEST_P(LinalgOrth, NonFiniteInputFailsAtTheSyncPoint) {
  Tensor a = f64({1, NAN, 0, 1}, {2, 2});
  expect_error([&] { la::svdvals(a).to_vector<double>(); }, {"linalg.svdvals", "failed to converge", "non-finite"});
  expect_error(
      [&] {
        la::svd(lf::stack({I(2), a}, 0)).S.to_vector<double>();
      },
      {"linalg.svd", "(Batch element 1)", "failed to converge"});
  expect_error([&] { la::lstsq(a, I(2)).solution.to_vector<double>(); }, {"torch.linalg.lstsq", "non-finite"});
  // A NaN in B goes through to the solution, as PyTorch's (rank and S are A's).
  la::Lstsq nb = la::lstsq(random({4, 3}, 80), f64({1, NAN, 1, 1}, {4, 1}), std::nullopt, "gelsd");
  for (double x : nb.solution.to_vector<double>()) EXPECT_TRUE(std::isnan(x));
  EXPECT_EQ(nb.rank.item<int64_t>(), 3);
  // QR lets NaN through, as PyTorch's.
  EXPECT_TRUE(std::isnan(la::qr(a).R.to_vector<double>()[1]));
}

TEST(LinalgOrthErrors, AtTheCall) {
  Tensor v = lf::zeros({3}, DType::Float64), a = lf::zeros({3, 2}, DType::Float64);
  expect_error([&] { la::qr(v); }, {"linalg.qr", "at least 2 dimensions", "float64[3]"});
  expect_error([&] { la::qr(a, "full"); }, {"linalg.qr", "unrecognized mode 'full'"});
  expect_error([&] { la::svd(lf::zeros({3, 3}, DType::Int64)); }, {"linalg.svd", "float32 or float64", "int64[3, 3]"});
  expect_error([&] { la::svdvals(lf::zeros({3, 3}, DType::Float16)); }, {"linalg.svdvals", "float32 or float64"});
  expect_error(
      [&] {
        la::lstsq(a, lf::zeros({4, 1}, DType::Float64));
      },
      {"lf::linalg.lstsq", "input.size(-2) should match other.size(-2)", "[3, 2]", "[4, 1]"});
  expect_error(
      [&] {
        la::lstsq(a, lf::zeros({3, 1}, DType::Float32));
      },
      {"lf::linalg.lstsq", "same dtype", "float64", "float32"});
  expect_error(
      [&] {
        la::lstsq(a, lf::zeros({3, 1}, DType::Float64), std::nullopt, "gelsx");
      },
      {"lf::linalg.lstsq", "driver", "gelsx"});
  expect_error(
      [&] {
        la::lstsq(lf::zeros({2, 3, 2}, DType::Float64), lf::zeros({4, 3, 1}, DType::Float64));
      },
      {"lf::linalg.lstsq", "[2]", "[4]"});
  expect_error([&] { la::pinv(a, std::nullopt, std::nullopt, true); }, {"linalg.pinv", "square", "3 by 2"});
  expect_error([&] { la::matrix_rank(lf::zeros({3, 3}, DType::Int32)); }, {"linalg.matrix_rank", "int32"});
  expect_error([&] { la::cond(a, 1.0); }, {"linalg.cond(ord=1)", "square"});
  expect_error([&] { la::cond(a, 3.0); }, {"linalg.cond", "ord must be"});
  expect_error([&] { la::cond(a, "max"); }, {"linalg.cond", "ord must be"});
  expect_error([&] { la::matrix_norm(lf::zeros({0, 3}, DType::Float64), 2); }, {"linalg.matrix_norm", "empty"});
  // Not differentiable: mode "r", complete of a tall matrix.
  Tensor x = random({4, 3}, 40);
  expect_error([&] { lf::grad(lf::sum(la::qr(x, "r").R), {x}); }, {"linalg.qr", "mode='r'"});
  expect_error([&] { lf::grad(lf::sum(la::qr(x, "complete").R), {x}); }, {"linalg.qr", "complete"});
}

// Only S of svd used: U diag(gS) Vh, finite where singular values repeat or are 0 (the unused
// cotangents of U and Vh arrive as zeros; 0 / 0 must not turn into NaN).
TEST(LinalgOrthGrad, SvdOfSOnlyWithRepeatedAndZeroValues) {
  Tensor a = f64({3, 0, 0, 3, 0, 0}, {3, 2});  // S = 3, 3: d sum(S) / dA = U Vh
  lf::test::expect_close(lf::grad(lf::sum(la::svd(a).S), {a})[0], {1, 0, 0, 1, 0, 0}, 1e-12);
  Tensor w = f64({3, 0, 0, 0, 3, 0}, {2, 3});  // the wide case
  lf::test::expect_close(lf::grad(lf::sum(la::svd(w, false).S), {w})[0], {1, 0, 0, 0, 1, 0}, 1e-12);
  // The same for eigh's eigenvalues alone with a repeated eigenvalue: d sum(w) / dA = I.
  Tensor e = I(3) * 2;
  lf::test::expect_close(lf::grad(lf::sum(la::eigh(e).eigenvalues), {e})[0], {1, 0, 0, 0, 1, 0, 0, 0, 1}, 1e-12);
  Tensor z = f64({2, 0, 0, 0, 0, 0}, {3, 2});  // a zero singular value: d S_0 / dA = u_0 v_0^T
  std::vector<double> g = lf::grad(lf::sum(la::svd(z, false).S * f64({1, 0}, {2})), {z})[0].to_vector<double>();
  for (double x : g) EXPECT_TRUE(std::isfinite(x));
  EXPECT_NEAR(std::fabs(g[0]), 1, 1e-12);
}

// Sign-free functions of the factors (Q * Q and R * R flip with each column / row's sign; so do
// U * U and Vh * Vh with each singular pair's).
TEST(LinalgOrthGrad, AgainstCentralDifferences) {
  using lf::test::gradcheck;
  using lf::test::Input;
  auto flat = [](const Tensor& t) { return lf::reshape(t, {-1}); };
  for (Shape s : {Shape{2, 4, 3}, Shape{3, 3}, Shape{2, 3, 5}}) {
    gradcheck("qr",
              [&](const std::vector<Tensor>& v) {
                auto [q, r] = la::qr(v[0]);
                return lf::cat({flat(q * q), flat(r * r)}, 0);
              },
              {Input{s}});
    gradcheck("svd",
              [&](const std::vector<Tensor>& v) {
                auto [u, sv, vh] = la::svd(v[0], false);
                return lf::cat({flat(u * u), flat(sv), flat(vh * vh)}, 0);
              },
              {Input{s}});
    gradcheck("svdvals", [&](const std::vector<Tensor>& v) { return la::svdvals(v[0]); }, {Input{s}});
    gradcheck("pinv", [&](const std::vector<Tensor>& v) { return la::pinv(v[0]); }, {Input{s}});
  }
  gradcheck("qr complete wide",
            [&](const std::vector<Tensor>& v) {
              auto [q, r] = la::qr(v[0], "complete");
              return lf::cat({flat(q * q), flat(r * r)}, 0);
            },
            {Input{{2, 4}}});
  gradcheck("svd full",
            [&](const std::vector<Tensor>& v) {
              auto [u, sv, vh] = la::svd(v[0]);
              return lf::cat({flat(lf::narrow(u, -1, 0, 3) * lf::narrow(u, -1, 0, 3)), flat(sv)}, 0);
            },
            {Input{{4, 3}}});
  gradcheck("lstsq tall",
            [&](const std::vector<Tensor>& v) {
              la::Lstsq r = la::lstsq(v[0], v[1], std::nullopt, "gelsd");
              return lf::cat({flat(r.solution), flat(r.residuals)}, 0);
            },
            {Input{{2, 5, 3}}, Input{{2, 5, 2}}});
  gradcheck("lstsq wide", [&](const std::vector<Tensor>& v) { return la::lstsq(v[0], v[1]).solution; },
            {Input{{3, 5}}, Input{{3, 2}}});
  gradcheck("pinv hermitian",
            [&](const std::vector<Tensor>& v) { return la::pinv(v[0] + mT(v[0]), std::nullopt, std::nullopt, true); },
            {Input{{3, 3}}});
  gradcheck("matrix_norm nuc, 2, -2",
            [&](const std::vector<Tensor>& v) {
              return lf::cat({la::matrix_norm(v[0], "nuc"), la::matrix_norm(v[0], 2), la::matrix_norm(v[0], -2)}, 0);
            },
            {Input{{2, 3, 4}}});
  gradcheck("cond",
            [&](const std::vector<Tensor>& v) {
              return lf::cat({la::cond(v[0] + I(3) * 3), la::cond(v[0] + I(3) * 3, 1.0)}, 0);
            },
            {Input{{2, 3, 3}}});
}

}  // namespace
