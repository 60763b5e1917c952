// The reference linear algebra (linalg.h): Cholesky-Banachiewicz, substitution, LU with partial
// pivoting as LAPACK's unblocked getf2 does it (the first largest |pivot|, so that pivots match
// LAPACK's on all but ties made by rounding), cyclic Jacobi for eigh, Householder QR with geqrf's
// reflectors, one-sided Jacobi for the SVD and the least squares through it, each one matrix at a
// time in the dtype.
#include "codegen/reference/linalg.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "lazyfuse/types.h"
#include "runtime/storage.h"

namespace lf::ir {
namespace {

// A row-major matrix view.
template <typename T>
struct Mat {
  T* p;
  int64_t cols;
  T& operator()(int64_t i, int64_t j) const { return p[i * cols + j]; }
};

// A Jacobi rotation's tangent for the pair's ratio x (the smaller root of t^2 + 2 x t - 1 = 0),
// and its cosine and sine.
template <typename T>
std::pair<T, T> jacobi_rotation(T x) {
  const T t = (x >= 0 ? T(1) : T(-1)) / (std::abs(x) + std::sqrt(x * x + 1));
  const T c = 1 / std::sqrt(t * t + 1);
  return {c, t * c};
}

// Columns p and q of m's first `rows` rows rotated by (c, s): p <- c p - s q, q <- s p + c q.
template <typename T>
void rotate_columns(Mat<T> m, int64_t rows, int64_t p, int64_t q, T c, T s) {
  for (int64_t k = 0; k < rows; ++k) {
    const T x = m(k, p), y = m(k, q);
    m(k, p) = c * x - s * y;
    m(k, q) = s * x + c * y;
  }
}

// L (lower) of a's lower triangle into l; l's strict upper triangle stays 0. Returns potrf's info.
template <typename T>
int64_t cholesky(Mat<const T> a, Mat<T> l, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    T s = a(j, j);
    for (int64_t p = 0; p < j; ++p) s -= l(j, p) * l(j, p);
    if (s <= T(0)) return j + 1;  // NaN goes on as NaN (info 0), as LAPACK's potrf in PyTorch
    const T d = std::sqrt(s);
    l(j, j) = d;
    for (int64_t i = j + 1; i < n; ++i) {
      T t = a(i, j);
      for (int64_t p = 0; p < j; ++p) t -= l(i, p) * l(j, p);
      l(i, j) = t / d;
    }
  }
  return 0;
}

// x = A^-1 x in place for x [n, k], A's lower (or upper) triangle; `trans`: A^T instead.
template <typename T>
void triangular_solve(Mat<const T> a, Mat<T> x, int64_t n, int64_t k, bool upper, bool unit, bool trans) {
  // A^T of an upper A is lower: walk forward through the rows either way for an effective lower.
  const bool lower = upper == trans;
  auto at = [&](int64_t i, int64_t j) { return trans ? a(j, i) : a(i, j); };
  for (int64_t c = 0; c < k; ++c) {
    for (int64_t s = 0; s < n; ++s) {
      const int64_t i = lower ? s : n - 1 - s;
      T t = x(i, c);
      if (lower)
        for (int64_t p = 0; p < i; ++p) t -= at(i, p) * x(p, c);
      else
        for (int64_t p = i + 1; p < n; ++p) t -= at(i, p) * x(p, c);
      x(i, c) = unit ? t : t / at(i, i);
    }
  }
}

// LU of a [m, n] in place (unit-lower L below the diagonal, U on and above), pivots 1-based.
template <typename T>
int64_t lu(Mat<T> a, int64_t m, int64_t n, int32_t* piv) {
  int64_t info = 0;
  const int64_t r = std::min(m, n);
  for (int64_t j = 0; j < r; ++j) {
    int64_t p = j;
    T best = std::abs(a(j, j));
    for (int64_t i = j + 1; i < m; ++i)
      if (std::abs(a(i, j)) > best) best = std::abs(a(i, j)), p = i;
    piv[j] = static_cast<int32_t>(p + 1);
    if (a(p, j) != T(0)) {
      if (p != j)
        for (int64_t c = 0; c < n; ++c) std::swap(a(j, c), a(p, c));
      for (int64_t i = j + 1; i < m; ++i) a(i, j) /= a(j, j);
    } else if (info == 0) {
      info = j + 1;
    }
    for (int64_t i = j + 1; i < m; ++i)
      for (int64_t c = j + 1; c < n; ++c) a(i, c) -= a(i, j) * a(j, c);
  }
  return info;
}

// X = A^-1 B (or A^-T B) in place in x [n, k] from A's LU and pivots.
template <typename T>
void lu_solve(Mat<const T> lu, const int32_t* piv, Mat<T> x, int64_t n, int64_t k, bool adjoint) {
  auto swap_rows = [&](int64_t i) {
    const int64_t p = piv[i] - 1;
    if (p != i)
      for (int64_t c = 0; c < k; ++c) std::swap(x(i, c), x(p, c));
  };
  if (!adjoint) {  // A = P L U: X = U^-1 L^-1 P^T B
    for (int64_t i = 0; i < n; ++i) swap_rows(i);
    triangular_solve<T>(lu, x, n, k, /*upper=*/false, /*unit=*/true, false);
    triangular_solve<T>(lu, x, n, k, /*upper=*/true, /*unit=*/false, false);
  } else {  // A^T = U^T L^T P^T: X = P L^-T U^-T B
    triangular_solve<T>(lu, x, n, k, /*upper=*/true, /*unit=*/false, true);
    triangular_solve<T>(lu, x, n, k, /*upper=*/false, /*unit=*/true, true);
    for (int64_t i = n; i-- > 0;) swap_rows(i);
  }
}

// Eigenvalues (ascending, into w) and eigenvectors (columns of v, when given) of the symmetric
// matrix whose lower (or upper) triangle a holds, by cyclic Jacobi rotations: slow, simple and
// accurate (every rotation orthogonal). Returns 1 when it did not converge (NaN input).
template <typename T>
int64_t eigh(Mat<const T> a, int64_t n, bool upper, T* w, Mat<T>* v) {
  std::vector<T> s(static_cast<size_t>(n * n)), q(static_cast<size_t>(n * n), T(0));
  Mat<T> S{s.data(), n}, Q{q.data(), n};
  for (int64_t i = 0; i < n; ++i) {
    Q(i, i) = 1;
    for (int64_t j = 0; j <= i; ++j) S(i, j) = S(j, i) = upper ? a(j, i) : a(i, j);
  }
  T norm = 0;
  for (T x : s) norm += x * x;
  bool converged = false;
  for (int sweep = 0; sweep < 100 && !converged; ++sweep) {
    T off = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = i + 1; j < n; ++j) off += S(i, j) * S(i, j);
    const T eps = std::numeric_limits<T>::epsilon();
    if (off <= eps * eps * norm * T(1e-2) || off == T(0)) {
      converged = true;
      break;
    }
    for (int64_t p = 0; p < n; ++p)
      for (int64_t r = p + 1; r < n; ++r) {
        if (S(p, r) == T(0)) continue;
        const auto [c, sn] = jacobi_rotation((S(r, r) - S(p, p)) / (2 * S(p, r)));
        rotate_columns(S, n, p, r, c, sn);
        for (int64_t k = 0; k < n; ++k) {  // rows p, r
          const T pk = S(p, k), rk = S(r, k);
          S(p, k) = c * pk - sn * rk;
          S(r, k) = sn * pk + c * rk;
        }
        rotate_columns(Q, n, p, r, c, sn);
      }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return S(x, x) < S(y, y); });
  for (int64_t j = 0; j < n; ++j) {
    const int64_t from = order[static_cast<size_t>(j)];
    w[j] = S(from, from);
    if (v)
      for (int64_t i = 0; i < n; ++i) (*v)(i, j) = Q(i, from);
  }
  return converged ? 0 : 1;
}

// Householder QR of a [m, n] as LAPACK's geqrf chooses its reflectors (beta = -sign(alpha) |x|,
// none where the column below the diagonal is already 0), so Q and R match LAPACK's up to
// rounding. q [m, qc] (qc = min(m, n) or m) when given; r [rows, n] gets R's upper triangle.
template <typename T>
void qr(Mat<const T> a, int64_t m, int64_t n, Mat<T>* q, int64_t qc, Mat<T> r, int64_t rows) {
  const int64_t kk = std::min(m, n);
  std::vector<T> f(static_cast<size_t>(m * n)), tau(static_cast<size_t>(kk), T(0));
  Mat<T> F{f.data(), n};
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) F(i, j) = a(i, j);
  for (int64_t j = 0; j < kk; ++j) {
    T xnorm = 0;
    for (int64_t i = j + 1; i < m; ++i) xnorm = std::hypot(xnorm, F(i, j));
    if (xnorm == T(0)) continue;  // H = I (tau 0), as dlarfg
    const T alpha = F(j, j), beta = -std::copysign(std::hypot(alpha, xnorm), alpha);
    tau[static_cast<size_t>(j)] = (beta - alpha) / beta;
    const T scale = 1 / (alpha - beta);
    for (int64_t i = j + 1; i < m; ++i) F(i, j) *= scale;  // v below its leading 1
    F(j, j) = beta;
    for (int64_t c = j + 1; c < n; ++c) {
      T s = F(j, c);
      for (int64_t i = j + 1; i < m; ++i) s += F(i, j) * F(i, c);
      s *= tau[static_cast<size_t>(j)];
      F(j, c) -= s;
      for (int64_t i = j + 1; i < m; ++i) F(i, c) -= s * F(i, j);
    }
  }
  for (int64_t i = 0; i < std::min(rows, m); ++i)
    for (int64_t j = i; j < n; ++j) r(i, j) = F(i, j);
  if (!q) return;
  Mat<T>& Q = *q;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < qc; ++j) Q(i, j) = i == j ? T(1) : T(0);
  for (int64_t j = kk - 1; j >= 0; --j) {  // Q = H_0 H_1 ... H_{kk-1} I
    const T t = tau[static_cast<size_t>(j)];
    if (t == T(0)) continue;
    for (int64_t c = 0; c < qc; ++c) {
      T s = Q(j, c);
      for (int64_t i = j + 1; i < m; ++i) s += F(i, j) * Q(i, c);
      s *= t;
      Q(j, c) -= s;
      for (int64_t i = j + 1; i < m; ++i) Q(i, c) -= s * F(i, j);
    }
  }
}

// Fills columns `from`.. of u [rows, cols] (row-major, stride ld) with unit vectors orthogonal to
// every column before them and to each other: a column's own direction when it has one (a tiny
// singular value's) and keeps half its length, else the first unit vector e_i that keeps at least
// 1 / (2 sqrt(rows)) of its length after Gram-Schmidt (twice). One does: the squared lengths of
// all e_i's projections onto the space left add up to its dimension, at least 1.
template <typename T>
void complete_columns(T* u, int64_t ld, int64_t rows, int64_t cols, int64_t from, const std::vector<char>& has_dir) {
  std::vector<T> v(static_cast<size_t>(rows)), best(static_cast<size_t>(rows));
  const T need = T(0.5) / std::sqrt(static_cast<T>(std::max<int64_t>(rows, 1)));
  auto project = [&](int64_t c) {
    for (int pass = 0; pass < 2; ++pass)
      for (int64_t d = 0; d < c; ++d) {
        T s = 0;
        for (int64_t i = 0; i < rows; ++i) s += u[i * ld + d] * v[static_cast<size_t>(i)];
        for (int64_t i = 0; i < rows; ++i) v[static_cast<size_t>(i)] -= s * u[i * ld + d];
      }
    T norm = 0;
    for (T x : v) norm = std::hypot(norm, x);
    return norm;
  };
  for (int64_t c = from; c < cols; ++c) {
    T norm = 0, best_norm = -1;
    if (c < static_cast<int64_t>(has_dir.size()) && has_dir[static_cast<size_t>(c)]) {
      for (int64_t i = 0; i < rows; ++i) v[static_cast<size_t>(i)] = u[i * ld + c];
      norm = project(c);
      if (norm > T(0.5)) best = v, best_norm = norm;
    }
    for (int64_t e = 0; e < rows && best_norm < 0; ++e) {
      for (int64_t i = 0; i < rows; ++i) v[static_cast<size_t>(i)] = T(i == e);
      norm = project(c);
      if (norm >= need) best = v, best_norm = norm;
    }
    for (int64_t i = 0; i < rows; ++i) u[i * ld + c] = best[static_cast<size_t>(i)] / best_norm;
  }
}

// One-sided (Hestenes) Jacobi SVD of a [r, c] with r >= c: rotations of column pairs until every
// pair is orthogonal to working precision; then S (descending), U [r, uc] (uc = c, or r for the
// full basis) and V [c, c]. Accurate (every rotation orthogonal) and slow (O(r c^2) a sweep).
template <typename T>
void jacobi_svd(Mat<const T> a, int64_t r, int64_t c, bool transposed, T* s, T* u, int64_t uc, T* v) {
  std::vector<T> w(static_cast<size_t>(r * c)), vv(static_cast<size_t>(c * c), T(0));
  Mat<T> W{w.data(), c}, V{vv.data(), c};
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) W(i, j) = transposed ? a(j, i) : a(i, j);
  for (int64_t j = 0; j < c; ++j) V(j, j) = 1;
  const T eps = std::numeric_limits<T>::epsilon();
  for (int sweep = 0; sweep < 80; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < c; ++p)
      for (int64_t q = p + 1; q < c; ++q) {
        T alpha = 0, beta = 0, gamma = 0;
        for (int64_t i = 0; i < r; ++i) {
          alpha += W(i, p) * W(i, p);
          beta += W(i, q) * W(i, q);
          gamma += W(i, p) * W(i, q);
        }
        if (gamma == T(0) || std::abs(gamma) <= eps * std::sqrt(alpha) * std::sqrt(beta)) continue;
        rotated = true;
        const auto [cs, sn] = jacobi_rotation((beta - alpha) / (2 * gamma));
        rotate_columns(W, r, p, q, cs, sn);
        rotate_columns(V, c, p, q, cs, sn);
      }
    if (!rotated) break;
  }
  std::vector<T> norms(static_cast<size_t>(c));
  for (int64_t j = 0; j < c; ++j) {
    T nrm = 0;
    for (int64_t i = 0; i < r; ++i) nrm = std::hypot(nrm, W(i, j));
    norms[static_cast<size_t>(j)] = nrm;
  }
  std::vector<int64_t> order(static_cast<size_t>(c));
  for (int64_t j = 0; j < c; ++j) order[static_cast<size_t>(j)] = j;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return norms[static_cast<size_t>(x)] > norms[static_cast<size_t>(y)]; });
  const T smax = c ? norms[static_cast<size_t>(order[0])] : T(0);
  // A column whose norm is rounding noise of the largest has no reliable direction of its own to
  // normalize: it is re-orthogonalized against the ones before it (complete_columns).
  const T floor = smax * eps * static_cast<T>(std::max<int64_t>(r, 1));
  std::vector<char> has_dir(static_cast<size_t>(uc), 0);
  int64_t good = 0;
  for (int64_t j = 0; j < c; ++j) {
    const int64_t from = order[static_cast<size_t>(j)];
    const T nrm = norms[static_cast<size_t>(from)];
    s[j] = nrm;
    if (u)
      for (int64_t i = 0; i < r; ++i) u[i * uc + j] = nrm > T(0) ? W(i, from) / nrm : T(0);
    if (v)
      for (int64_t i = 0; i < c; ++i) v[i * c + j] = V(i, from);
    if (nrm > floor && good == j) ++good;
    has_dir[static_cast<size_t>(j)] = nrm > T(0);
  }
  if (u) complete_columns(u, uc, r, uc, good, has_dir);
}

// SVD of a [m, n]: S (descending), and when u is given U [m, uc] and Vh [vr, n] (uc = vr = k, or
// m and n with `full`). A wide matrix is factored through its transpose.
template <typename T>
void svd(Mat<const T> a, int64_t m, int64_t n, bool full, T* s, Mat<T>* u, Mat<T>* vh) {
  const int64_t kk = std::min(m, n);
  const bool tall = m >= n;
  const int64_t r = tall ? m : n, c = kk, uc = full ? r : c;
  std::vector<T> uu(static_cast<size_t>(std::max<int64_t>(1, r * uc))), vv(static_cast<size_t>(std::max<int64_t>(1, c * c)));
  jacobi_svd<T>(a, r, c, !tall, s, u ? uu.data() : nullptr, uc, u ? vv.data() : nullptr);
  if (!u) return;
  // Tall: U = W's basis [m, uc], Vh = V^T [c, c] (c = n). Wide: A^T = U' S V'^T, so U = V' [m, m]
  // and Vh = U'^T [uc, n].
  if (tall) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < uc; ++j) (*u)(i, j) = uu[static_cast<size_t>(i * uc + j)];
    for (int64_t i = 0; i < c; ++i)
      for (int64_t j = 0; j < n; ++j) (*vh)(i, j) = vv[static_cast<size_t>(j * c + i)];
  } else {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < m; ++j) (*u)(i, j) = vv[static_cast<size_t>(i * c + j)];
    for (int64_t i = 0; i < uc; ++i)
      for (int64_t j = 0; j < n; ++j) (*vh)(i, j) = uu[static_cast<size_t>(j * uc + i)];
  }
}

// The minimum-norm least-squares solution of A X = B through the SVD (as LAPACK's gelsd):
// singular values at most rcond * the largest (rcond < 0: machine epsilon) count as zero. x [n, k].
template <typename T>
int64_t lstsq(Mat<const T> a, const T* b, int64_t m, int64_t n, int64_t k, T rcond, Mat<T> x, T* s) {
  const int64_t kk = std::min(m, n);
  std::vector<T> uu(static_cast<size_t>(std::max<int64_t>(1, m * kk))), vh(static_cast<size_t>(std::max<int64_t>(1, kk * n)));
  Mat<T> U{uu.data(), kk}, Vh{vh.data(), n};
  svd<T>(a, m, n, false, s, &U, &Vh);
  if (rcond < 0) rcond = std::numeric_limits<T>::epsilon();
  int64_t rank = 0;
  while (rank < kk && s[rank] > rcond * s[0]) ++rank;
  std::vector<T> y(static_cast<size_t>(std::max<int64_t>(1, rank * k)), T(0));  // S^-1 U^T B
  for (int64_t j = 0; j < rank; ++j)
    for (int64_t c = 0; c < k; ++c) {
      T t = 0;
      for (int64_t i = 0; i < m; ++i) t += U(i, j) * b[i * k + c];
      y[static_cast<size_t>(j * k + c)] = t / s[j];
    }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < k; ++c) {
      T t = 0;
      for (int64_t j = 0; j < rank; ++j) t += Vh(j, i) * y[static_cast<size_t>(j * k + c)];
      x(i, c) = t;
    }
  return rank;
}

template <typename T>
int64_t solve_one(const LinalgProblem& p, int64_t e) {
  const LinalgParams& q = p.params;
  const int64_t m = p.m, n = p.n, k = p.k;
  const T* a = static_cast<const T*>(p.a) + e * m * n;
  T* out = static_cast<T*>(p.out) + e * p.layout.rows * p.layout.width;
  const int64_t w = p.layout.width;
  // The right-hand side copied into the output block (width w), solved there in place.
  auto load_b = [&] {
    const T* b = static_cast<const T*>(p.b) + e * n * k;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < k; ++c) out[i * w + c] = b[i * k + c];
    return Mat<T>{out, w};
  };
  switch (q.op) {
    case LinalgOp::kCholesky: return cholesky<T>({a, n}, {out, w}, n);
    case LinalgOp::kTriangularSolve: {
      Mat<T> x = load_b();
      triangular_solve<T>({a, n}, x, n, k, q.upper, q.unitriangular, false);
      return 0;
    }
    case LinalgOp::kSolve: {
      std::vector<T> f(a, a + n * n);
      std::vector<int32_t> piv(static_cast<size_t>(n));
      int64_t info = lu<T>({f.data(), n}, n, n, piv.data());
      Mat<T> x = load_b();
      if (info == 0) lu_solve<T>({f.data(), n}, piv.data(), x, n, k, false);
      return info;
    }
    case LinalgOp::kLuFactor: {
      for (int64_t i = 0; i < m; ++i)
        for (int64_t c = 0; c < n; ++c) out[i * w + c] = a[i * n + c];
      std::vector<int32_t> piv(static_cast<size_t>(std::min(m, n)));
      int64_t info = lu<T>({out, w}, m, n, piv.data());
      T* prow = out + p.layout.blocks[1].row * w;
      for (size_t i = 0; i < piv.size(); ++i) prow[i] = static_cast<T>(piv[i]);
      return info;
    }
    case LinalgOp::kLuSolve: {
      Mat<T> x = load_b();
      lu_solve<T>({a, n}, p.pivots + e * n, x, n, k, q.adjoint);
      return 0;
    }
    case LinalgOp::kSlogdet: {
      std::vector<T> f(a, a + n * n);
      std::vector<int32_t> piv(static_cast<size_t>(n));
      lu<T>({f.data(), n}, n, n, piv.data());
      T sign = 1, logabs = 0, det = 1;
      for (int64_t i = 0; i < n; ++i) {
        const T u = f[static_cast<size_t>(i * n + i)];
        if (piv[i] != i + 1) sign = -sign;
        if (u < T(0)) sign = -sign;
        logabs += std::log(std::abs(u));
        det *= u;
      }
      if (std::isnan(logabs)) sign = std::numeric_limits<T>::quiet_NaN();
      else if (det == T(0) && std::isinf(logabs)) sign = 0;  // a zero pivot: singular
      out[0] = sign;
      out[1] = logabs;
      bool flipped = false;
      for (int64_t i = 0; i < n; ++i) flipped ^= piv[i] != i + 1;
      out[2] = flipped ? -det : det;
      return 0;
    }
    case LinalgOp::kEigh: {
      Mat<T> v{out, w};
      return eigh<T>({a, n}, n, q.upper, out + p.layout.blocks.back().row * w, q.vectors ? &v : nullptr);
    }
    case LinalgOp::kQr: {
      const LinalgBlock& rb = p.layout.blocks.back();
      Mat<T> qm{out, w};
      qr<T>({a, n}, m, n, q.vectors ? &qm : nullptr, q.vectors ? p.layout.blocks[0].cols : 0,
            {out + rb.row * w, w}, rb.rows);
      return 0;
    }
    case LinalgOp::kSvd: {
      if (!all_finite(a, m * n)) return 1;
      const auto& bl = p.layout.blocks;
      T* s = out + bl[q.vectors ? 1 : 0].row * w;
      Mat<T> um{out, w}, vm{out + (q.vectors ? bl[2].row : 0) * w, w};
      svd<T>({a, n}, m, n, q.full, s, q.vectors ? &um : nullptr, q.vectors ? &vm : nullptr);
      if (q.vectors && q.full && std::min(m, n) == 0) {  // an empty A's full bases are identities
        for (int64_t i = 0; i < m; ++i) um(i, i) = 1;
        for (int64_t i = 0; i < n; ++i) vm(i, i) = 1;
      }
      return 0;
    }
    case LinalgOp::kLstsq: {
      if (!all_finite(a, m * n)) return 1;
      const auto& bl = p.layout.blocks;
      const T* b = static_cast<const T*>(p.b) + e * m * k;
      out[bl[2].row * w] = static_cast<T>(
          lstsq<T>({a, n}, b, m, n, k, static_cast<T>(q.rcond), {out, w}, out + bl[1].row * w));
      return 0;
    }
  }
  return 0;
}

// Input i as a contiguous host array of `dtype`.
Value contiguous(const std::vector<Value>& in, size_t i, DType dtype) { return to_contiguous(in[i], dtype); }

}  // namespace

LinalgProblem LinalgProblem::of(const Node& node, const std::vector<Value>& in) {
  LinalgProblem p;
  p.params = LinalgParams::of(node);
  p.dtype = node.dtype;
  const Shape& a = in[0].shape;
  const size_t r = a.size();
  p.m = a[r - 2];
  p.n = a[r - 1];
  p.batch = 1;
  for (size_t d = 0; d + 2 < r; ++d) p.batch *= a[d];
  const Value& rhs = in.back();
  if (in.size() > 1) p.k = rhs.shape.back();
  p.layout = linalg_layout(p.params, p.m, p.n, p.k);
  p.a = in[0].storage->data();
  if (in.size() > 1) p.b = rhs.storage->data();
  if (p.params.op == LinalgOp::kLuSolve) p.pivots = static_cast<const int32_t*>(in[1].storage->data());
  return p;
}

std::vector<int64_t> reference_linalg_problems(const LinalgProblem& p) {
  std::vector<int64_t> info(static_cast<size_t>(p.batch), 0);
  for (int64_t e = 0; e < p.batch; ++e)
    info[static_cast<size_t>(e)] = p.dtype == DType::Float32 ? solve_one<float>(p, e) : solve_one<double>(p, e);
  return info;
}

void finish_linalg(const LinalgProblem& p, const std::vector<int64_t>& info) {
  const LinalgOp op = p.params.op;
  const bool fails =
      op == LinalgOp::kCholesky || op == LinalgOp::kSolve || op == LinalgOp::kLuFactor || op == LinalgOp::kEigh ||
      op == LinalgOp::kSvd || op == LinalgOp::kLstsq;
  if (!fails) return;
  if (p.params.check) {
    for (size_t e = 0; e < info.size(); ++e)
      if (info[e] > 0)
        throw Error(linalg_failure(p.params.name, info[e], static_cast<int64_t>(e), p.params.batched));
    return;
  }
  const LinalgBlock& b = p.layout.blocks.back();  // the info block of the _ex ops
  const int64_t stride = p.layout.rows * p.layout.width;
  for (size_t e = 0; e < info.size(); ++e) {
    const int64_t at = static_cast<int64_t>(e) * stride + b.row * p.layout.width;
    if (p.dtype == DType::Float32) static_cast<float*>(p.out)[at] = static_cast<float>(info[e]);
    else static_cast<double*>(p.out)[at] = static_cast<double>(info[e]);
  }
}

Value reference_linalg(const Node& node, const std::vector<Value>& in) {
  std::vector<Value> dense;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool pivots = LinalgParams::of(node).op == LinalgOp::kLuSolve && i == 1;
    dense.push_back(contiguous(in, i, pivots ? DType::Int32 : node.dtype));
  }
  const size_t bytes = static_cast<size_t>(shape_numel(node.shape)) * dtype_size(node.dtype);
  auto storage = rt::Storage::allocate(Device::cpu(), bytes);
  if (bytes) std::memset(storage->data(), 0, bytes);
  LinalgProblem p = LinalgProblem::of(node, dense);
  p.out = storage->data();
  finish_linalg(p, reference_linalg_problems(p));
  return Value{std::move(storage), node.dtype, node.shape, Layout{contiguous_strides(node.shape), 0}};
}

}  // namespace lf::ir
