// lf::linalg: torch.linalg's names and semantics (issue 49), batched over leading dims, Float32
// and Float64 (complex dtypes do not exist yet, so neither do complex results such as eig's).
// Each op records one factorization node (LAPACK on the host where it loads, else a plain C++
// reference; docs/linalg.md) plus views of its results, so the elementwise work around it fuses
// into its neighbours and lf::grad differentiates it. A failed factorization (not
// positive-definite, singular) is an lf::Error at the sync point naming the op and the batch
// element, as PyTorch's; the _ex ops return the info instead.
#pragma once

#include <optional>
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

// A = Q R for A [..., m, n], k = min(m, n): mode "reduced" Q [..., m, k], R [..., k, n];
// "complete" Q [..., m, m], R [..., m, n]; "r" R only (Q is an empty [0] tensor, as PyTorch's).
// Householder reflectors as LAPACK's geqrf (R's diagonal may be negative; signs are free).
struct QR {
  Tensor Q, R;
};
QR qr(const Tensor& a, const std::string& mode = "reduced");

// A = U diag(S) Vh, S descending [..., k]; full_matrices: U [..., m, m], Vh [..., n, n], else
// [..., m, k] and [..., k, n]. Each singular pair's sign is free. A non-finite A: an lf::Error at
// the sync point, as PyTorch's.
struct SVD {
  Tensor U, S, Vh;
};
SVD svd(const Tensor& a, bool full_matrices = true);
Tensor svdvals(const Tensor& a);

// The minimum-norm least-squares solution of A X = B (A [..., m, n], B [..., m, k] or a vector
// [..., m] when B has one dim fewer than A; batch dims broadcast), through the SVD (LAPACK's
// gelsd) whatever the driver; `driver` ("gelsy" when empty, "gelsd", "gelss", "gels") decides
// which results are returned, as PyTorch's CPU lstsq: rank (int64, A's batch dims) except for
// gels, singular_values for gelsd and gelss, residuals (the squared residual norms, [..., k])
// when m > n and the driver is not gelsy; the others are empty [0] tensors. Singular values at
// most rcond * the largest count as zero (default: eps * max(m, n)). Unlike PyTorch, residuals
// are returned for a rank-deficient A too (PyTorch's are then empty: a shape that depends on the
// values, which a lazy trace cannot have).
struct Lstsq {
  Tensor solution, residuals, rank, singular_values;
};
Lstsq lstsq(const Tensor& a, const Tensor& b, std::optional<double> rcond = std::nullopt,
            const std::string& driver = "");

// Composites of svd / svdvals (or eigh / eigvalsh when `hermitian`). Singular values at most
// max(atol, rtol * the largest) count as zero; rtol's default is eps * max(m, n), or 0 when an
// atol > 0 is given (PyTorch's rule).
Tensor pinv(const Tensor& a, std::optional<double> atol = std::nullopt, std::optional<double> rtol = std::nullopt,
            bool hermitian = false);
Tensor matrix_rank(const Tensor& a, std::optional<double> atol = std::nullopt,
                   std::optional<double> rtol = std::nullopt, bool hermitian = false);  // int64 [...]
// torch.linalg.cond: p 2 (nullopt) / -2 from the singular values (any m x n); 1, -1, inf, -inf,
// "fro", "nuc" as norm(A) norm(A^-1) of square A (a singular A gives inf). An empty A gives 0.
Tensor cond(const Tensor& a, std::optional<double> p = std::nullopt);
Tensor cond(const Tensor& a, const std::string& p);

// torch.linalg.matrix_norm over the last two dims: "fro" (the square root of the sum of squares),
// "nuc" (the sum of the singular values), or ord 1 / -1 (the largest / smallest column sum of
// |a|), inf / -inf (the same over rows), 2 / -2 (the largest / smallest singular value).
Tensor matrix_norm(const Tensor& a, const std::string& ord = "fro", bool keepdim = false);
Tensor matrix_norm(const Tensor& a, double ord, bool keepdim = false);

}  // namespace lf::linalg
