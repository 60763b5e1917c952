// The linear-algebra row (ir::Op::Linalg, issue 49): which factorization or solve a node is, packed
// in attrs.dims, and the layout of its output, read by the frontend, the reference executor, the
// backends and autograd.
//
// Why one packed output: the IR has no multi-output nodes, and qr, eigh, svd, lu_factor, slogdet
// and the _ex variants give several results of one factorization. A node per result would factor
// the same matrix once per result (or need the executor to share work between nodes); instead the
// node writes every result of one factorization into one buffer [batch..., rows, width] of the
// input's dtype, the results stacked as blocks of rows, and the frontend returns views (slices) of
// it. Views fuse into their consumers, so this costs no copy; autograd differentiates the packed
// node once, its cotangent assembled by the slices' own derivatives (zero for an unused result).
// Integer results (pivots, info) are stored as exact small whole numbers and cast by the frontend.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/ir/node.h"

namespace lf::ir {

enum class LinalgOp : int64_t {
  kCholesky = 0,      // A [.., n, n] -> L (lower; reads A's lower triangle)
  kTriangularSolve,   // A [.., n, n], B [.., n, k] -> X with A X = B (A's upper or lower triangle)
  kSolve,             // A [.., n, n], B [.., n, k] -> X with A X = B (LU with partial pivoting)
  kLuFactor,          // A [.., m, n] -> LU [m, n], pivots [1, min(m, n)] (1-based, LAPACK's)
  kLuSolve,           // LU [.., n, n], pivots (Int32) [.., n], B [.., n, k] -> X (A X = B, or A^T X = B)
  kSlogdet,           // A [.., n, n] -> [1, 3]: sign, log|det|, det
  kEigh,              // A [.., n, n] symmetric -> V [n, n] (columns; when `vectors`), w [1, n] ascending
  kQr,                // A [.., m, n] -> Q [m, k or m] (when `vectors`), R [k or m, n]; k = min(m, n), `full`: m
  kSvd,               // A [.., m, n] -> U [m, k or m], S [1, k] descending, Vh [k or n, n]; U, Vh when `vectors`
  kLstsq,             // A [.., m, n], B [.., m, k] -> X [n, k] (minimum norm), S [1, min(m, n)], rank [1, 1]
};

// The user-facing op a node stands for: what its errors name (linalg.inv is a solve against I).
enum class LinalgName : int64_t { kCholesky = 0, kCholeskyEx, kSolveTriangular, kSolve, kInv, kLuFactor, kLuFactorEx, kLuSolve, kDet, kSlogdet, kEigh, kEigvalsh, kQr, kSvd, kSvdvals, kLstsq };

struct LinalgParams {
  LinalgOp op = LinalgOp::kCholesky;
  LinalgName name = LinalgName::kCholesky;
  bool upper = false;          // kTriangularSolve: A is upper triangular; kEigh: read A's upper triangle
  bool vectors = true;         // kEigh: eigenvectors too (eigvalsh: only the values); kQr: Q; kSvd: U, Vh
  bool full = false;           // kQr: mode "complete"; kSvd: full_matrices
  double rcond = 0;            // kLstsq: singular values at most rcond * the largest count as zero
  bool unitriangular = false;  // kTriangularSolve: A's diagonal taken as ones
  bool adjoint = false;        // kLuSolve: solve A^T X = B
  // Whether a failure (not positive-definite, singular) throws lf::Error at the sync point; else
  // the info is stored as a block of the output (the _ex ops).
  bool check = true;
  // Whether the user's A had batch dims (before broadcasting against B): PyTorch's failure
  // messages name the batch element only then.
  bool batched = false;

  std::vector<int64_t> pack() const {
    return {static_cast<int64_t>(op), static_cast<int64_t>(name), upper, unitriangular, adjoint, check, batched,
            vectors, full, std::bit_cast<int64_t>(rcond)};
  }
  static LinalgParams of(const Node& n) { return of_attrs(n.attrs); }
  static LinalgParams of_attrs(const Attrs& attrs) {
    const auto& d = attrs.dims;
    LinalgParams p;
    p.op = static_cast<LinalgOp>(d[0]);
    p.name = static_cast<LinalgName>(d[1]);
    p.upper = d[2] != 0;
    p.unitriangular = d[3] != 0;
    p.adjoint = d[4] != 0;
    p.check = d[5] != 0;
    p.batched = d[6] != 0;
    p.vectors = d[7] != 0;
    p.full = d[8] != 0;
    p.rcond = std::bit_cast<double>(d[9]);
    return p;
  }
};

// "linalg.cholesky", "torch.linalg.solve" ...: PyTorch's own prefix for each, so that an error
// reads as PyTorch's does.
const char* linalg_name(LinalgName name);

// One result inside the packed output: rows [row, row + rows) and columns [0, cols) of the last
// two dims.
struct LinalgBlock {
  int64_t row = 0, rows = 0, cols = 0;
};

// The packed output's blocks in order, for a node of `p` whose matrix inputs have these last two
// dims (m x n for the first input, n x k for a right-hand side).
struct LinalgLayout {
  std::vector<LinalgBlock> blocks;
  int64_t rows = 0, width = 0;  // the packed output's last two dims
};
// m, n: the first input's last two dims; k: the right-hand side's columns (solves).
LinalgLayout linalg_layout(const LinalgParams& p, int64_t m, int64_t n, int64_t k);

// PyTorch's message for a failed factorization of batch element `batch` (omitted when the input
// is a single matrix, as PyTorch omits it) with LAPACK's info > 0.
std::string linalg_failure(LinalgName name, int64_t info, int64_t batch, bool batched);

}  // namespace lf::ir
