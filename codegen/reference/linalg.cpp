// The reference linear algebra (linalg.h): Cholesky-Banachiewicz, substitution, LU with partial
// pivoting as LAPACK's unblocked getf2 does it (the first largest |pivot|, so that pivots match
// LAPACK's on all but ties made by rounding), each one matrix at a time in the dtype.
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
        const T theta = (S(r, r) - S(p, p)) / (2 * S(p, r));
        const T t = (theta >= 0 ? T(1) : T(-1)) / (std::abs(theta) + std::sqrt(theta * theta + 1));
        const T c = 1 / std::sqrt(t * t + 1), sn = t * c;
        for (int64_t k = 0; k < n; ++k) {  // columns p, r
          const T kp = S(k, p), kr = S(k, r);
          S(k, p) = c * kp - sn * kr;
          S(k, r) = sn * kp + c * kr;
        }
        for (int64_t k = 0; k < n; ++k) {  // rows p, r
          const T pk = S(p, k), rk = S(r, k);
          S(p, k) = c * pk - sn * rk;
          S(r, k) = sn * pk + c * rk;
        }
        for (int64_t k = 0; k < n; ++k) {
          const T kp = Q(k, p), kr = Q(k, r);
          Q(k, p) = c * kp - sn * kr;
          Q(k, r) = sn * kp + c * kr;
        }
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
      op == LinalgOp::kCholesky || op == LinalgOp::kSolve || op == LinalgOp::kLuFactor || op == LinalgOp::kEigh;
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
