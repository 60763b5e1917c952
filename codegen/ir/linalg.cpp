// The linear-algebra row's names, output layouts and failure messages (linalg.h).
#include "codegen/ir/linalg.h"

#include <algorithm>

#include "runtime/checked.h"

namespace lf::ir {

const char* linalg_name(LinalgName name) {
  switch (name) {
    case LinalgName::kCholesky: return "linalg.cholesky";
    case LinalgName::kCholeskyEx: return "linalg.cholesky_ex";
    case LinalgName::kSolveTriangular: return "linalg.solve_triangular";
    case LinalgName::kSolve: return "torch.linalg.solve";
    case LinalgName::kInv: return "linalg.inv";
    case LinalgName::kLuFactor: return "torch.linalg.lu_factor";
    case LinalgName::kLuFactorEx: return "linalg.lu_factor_ex";
    case LinalgName::kLuSolve: return "linalg.lu_solve";
    case LinalgName::kDet: return "linalg.det";
    case LinalgName::kSlogdet: return "linalg.slogdet";
    case LinalgName::kEigh: return "linalg.eigh";
    case LinalgName::kEigvalsh: return "linalg.eigvalsh";
    case LinalgName::kQr: return "linalg.qr";
    case LinalgName::kSvd: return "linalg.svd";
    case LinalgName::kSvdvals: return "linalg.svdvals";
    case LinalgName::kLstsq: return "torch.linalg.lstsq";
  }
  return "linalg";
}

LinalgLayout linalg_layout(const LinalgParams& p, int64_t m, int64_t n, int64_t k) {
  LinalgLayout l;
  // Blocks of rows as large as the input's dims: m + n + 1 rows can pass int64 (svd of a
  // [2^62, 2^62]), an lf::Error naming the op (without PyTorch's "torch." of some names).
  std::string op = linalg_name(p.name);
  if (op.rfind("torch.", 0) == 0) op = op.substr(6);
  auto add = [&](int64_t rows, int64_t cols) {
    l.blocks.push_back({l.rows, rows, cols});
    l.rows = rt::checked_add(op.c_str(), "the packed result's rows", l.rows, rows);
    l.width = std::max(l.width, cols);
  };
  switch (p.op) {
    case LinalgOp::kCholesky:
      add(n, n);
      if (!p.check) add(1, 1);  // info
      break;
    case LinalgOp::kTriangularSolve:
    case LinalgOp::kSolve:
    case LinalgOp::kLuSolve: add(n, k); break;
    case LinalgOp::kLuFactor:
      add(m, n);
      add(1, std::min(m, n));  // pivots
      if (!p.check) add(1, 1);  // info
      break;
    case LinalgOp::kSlogdet: add(1, 3); break;  // sign, log|det|, det
    case LinalgOp::kEigh:
      if (p.vectors) add(n, n);
      add(1, n);  // eigenvalues
      break;
    case LinalgOp::kQr: {
      const int64_t r = p.full ? m : std::min(m, n);
      if (p.vectors) add(m, r);  // Q
      add(r, n);                 // R
      break;
    }
    case LinalgOp::kSvd: {
      const int64_t s = std::min(m, n);
      if (p.vectors) add(m, p.full ? m : s);  // U
      add(1, s);                              // S
      if (p.vectors) add(p.full ? n : s, n);  // Vh
      break;
    }
    case LinalgOp::kLstsq:
      add(n, k);               // X
      add(1, std::min(m, n));  // singular values
      add(1, 1);               // rank
      break;
  }
  return l;
}

std::string linalg_failure(LinalgName name, int64_t info, int64_t batch, bool batched) {
  std::string s = std::string(linalg_name(name)) + ": ";
  if (batched) s += "(Batch element " + std::to_string(batch) + "): ";
  const std::string i = std::to_string(info);
  switch (name) {
    case LinalgName::kCholesky:
    case LinalgName::kCholeskyEx:
      return s + "The factorization could not be completed because the input is not positive-definite (the leading minor of order " +
             i + " is not positive-definite).";
    case LinalgName::kInv:
      return s + "The diagonal element " + i +
             " is zero, the inversion could not be completed because the input matrix is singular.";
    case LinalgName::kLuFactor:
    case LinalgName::kLuFactorEx:
      return s + "U[" + i + "," + i +
             "] is zero and using it on lu_solve would result in a division by zero. If you still want to perform the "
             "factorization, consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)";
    case LinalgName::kEigh:
    case LinalgName::kEigvalsh:
      return s + "The algorithm failed to converge because the input matrix is ill-conditioned or has too many "
                 "repeated eigenvalues (error code: " + i + ").";
    // The only failure of either SVD path: a non-finite A, refused before LAPACK sees it (its
    // gesdd and gelsd print an xerbla message and return info < 0).
    case LinalgName::kSvd:
    case LinalgName::kSvdvals:
      return s + "The algorithm failed to converge because the input matrix contained non-finite values.";
    case LinalgName::kLstsq:
      return s + "The least squares solution could not be computed because the input matrix contained non-finite "
                 "values.";
    default: return s + "The solver failed because the input matrix is singular.";
  }
}

}  // namespace lf::ir
