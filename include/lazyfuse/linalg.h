// lf::linalg: torch.linalg's names and semantics (issue 49), batched over leading dims, Float32
// and Float64 (complex dtypes do not exist yet, so neither do complex results such as eig's).
// Each op records one factorization node (LAPACK on the host where it loads, else a plain C++
// reference; docs/linalg.md) plus views of its results, so the elementwise work around it fuses
// into its neighbours and lf::grad differentiates it. A failed factorization (not
// positive-definite, singular) is an lf::Error at the sync point naming the op and the batch
// element, as PyTorch's; the _ex ops return the info instead.
#pragma once

#include <string>

#include "lazyfuse/tensor.h"

namespace lf::linalg {

// A = L L^T for symmetric positive-definite A [..., n, n], reading its lower triangle; `upper`:
// U = L^T instead.
Tensor cholesky(const Tensor& a, bool upper = false);
struct CholeskyEx {
  Tensor L;     // as cholesky's (partial where info > 0)
  Tensor info;  // int32 [...]: 0, or the order of the leading minor that is not positive-definite
};
CholeskyEx cholesky_ex(const Tensor& a, bool upper = false, bool check_errors = false);

// X with A X = B (left) or X A = B, A [..., n, n] triangular (only its upper or lower triangle
// read; `unitriangular`: its diagonal taken as ones), B [..., n, k] (left) or [..., k, n]; batch
// dims broadcast. No singularity check (a zero on the diagonal gives inf / nan, as PyTorch).
Tensor solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left = true, bool unitriangular = false);

// torch.cholesky_solve(B, L, upper): X with A X = B where A = L L^T (or U^T U).
Tensor cholesky_solve(const Tensor& b, const Tensor& l, bool upper = false);

// X with A X = B (left) or X A = B; B [..., n, k], or a vector [..., n] (B 1-D, or of A's shape
// without its last dim); batch dims broadcast. Singular A: an lf::Error at the sync point.
Tensor solve(const Tensor& a, const Tensor& b, bool left = true);
Tensor inv(const Tensor& a);

Tensor det(const Tensor& a);
struct Slogdet {
  Tensor sign;       // -1, 0 (singular) or 1
  Tensor logabsdet;  // log |det A| (-inf when singular)
};
Slogdet slogdet(const Tensor& a);

// P A = L U with partial pivoting, A [..., m, n]: LU holds L (unit diagonal, below) and U;
// pivots int32 [..., min(m, n)], 1-based row interchanges as LAPACK's (and PyTorch's).
struct LuFactor {
  Tensor LU, pivots;
};
LuFactor lu_factor(const Tensor& a);
struct LuFactorEx {
  Tensor LU, pivots;
  Tensor info;  // int32 [...]: 0, or the 1-based index of the first zero on U's diagonal
};
LuFactorEx lu_factor_ex(const Tensor& a, bool check_errors = false);
// X with A X = B (left) or X A = B, or with A^T (adjoint), from lu_factor's LU [..., n, n] and
// pivots; batch dims broadcast.
Tensor lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool left = true, bool adjoint = false);

// The eigenvalues (ascending) and orthonormal eigenvectors (columns; each one's sign is free) of
// symmetric A [..., n, n], reading its lower ("L") or upper ("U") triangle only. No convergence
// (a NaN input): an lf::Error at the sync point, as PyTorch's.
struct Eigh {
  Tensor eigenvalues;   // [..., n]
  Tensor eigenvectors;  // [..., n, n]
};
Eigh eigh(const Tensor& a, const std::string& uplo = "L");
Tensor eigvalsh(const Tensor& a, const std::string& uplo = "L");

// torch.linalg.matrix_norm over the last two dims: "fro" (the square root of the sum of squares),
// or ord 1 / -1 (the largest / smallest column sum of |a|), inf / -inf (the same over rows), a
// composite of reductions. "nuc", 2 and -2 need singular values (svdvals), not yet: an lf::Error.
Tensor matrix_norm(const Tensor& a, const std::string& ord = "fro", bool keepdim = false);
Tensor matrix_norm(const Tensor& a, double ord, bool keepdim = false);

}  // namespace lf::linalg
