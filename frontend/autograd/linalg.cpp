// Derivatives of the linear-algebra row (ir::Op::Linalg; codegen/ir/linalg.h), PyTorch's formulas
// (FunctionsManual.cpp) for real matrices, recorded as lf::linalg ops and matmuls. The cotangent
// arrives packed as the node's output; each result's block is sliced out of it (an unused result's
// block is zero).
#include <string>

#include "codegen/ir/linalg.h"
#include "frontend/autograd/derivatives.h"
#include "lazyfuse/einsum.h"
#include "lazyfuse/linalg.h"
#include "lazyfuse/ops.h"

namespace lf::autograd {
namespace {

using ir::LinalgOp;

Tensor mT(const Tensor& t) { return transpose(t, -2, -1); }

Tensor block(const Tensor& packed, const ir::LinalgBlock& b) {
  return slice(slice(packed, -1, 0, b.cols), -2, b.row, b.row + b.rows);
}

[[noreturn]] void not_differentiable(const char* what) {
  throw Error(std::string("lf::grad: ") + what + " is not differentiable yet (docs/linalg.md)");
}

}  // namespace

std::vector<Tensor> vjp_linalg(const VjpArgs& args) {
  const ir::LinalgParams p = ir::LinalgParams::of_attrs(args.attrs);
  const Tensor& a = args.in[0];
  const int64_t m = a.size(-2), n = a.size(-1), k = args.in.size() > 1 ? args.in.back().size(-1) : 0;
  const ir::LinalgLayout l = ir::linalg_layout(p, m, n, k);
  std::vector<Tensor> grads(args.in.size());
  switch (p.op) {
    case LinalgOp::kCholesky: {
      // PyTorch's cholesky_backward: phi = tril(L^T gL) with its diagonal halved, symmetrized;
      // gA = L^-T phi L^-1.
      Tensor L = block(args.y, l.blocks[0]);
      Tensor gL = block(args.g, l.blocks[0]);
      Tensor ga = tril(matmul(mT(L), gL));
      ga = (ga + mT(tril(ga, -1))) * 0.5;
      ga = linalg::solve_triangular(mT(L), ga, /*upper=*/true, /*left=*/true);
      grads[0] = linalg::solve_triangular(L, ga, /*upper=*/false, /*left=*/false);
      return grads;
    }
    case LinalgOp::kTriangularSolve: {
      // X = A^-1 B: gB = A^-T gX, gA = -gB X^T on A's triangle (strict where unitriangular).
      Tensor gx = block(args.g, l.blocks[0]);
      Tensor gb = linalg::solve_triangular(mT(a), gx, !p.upper, true, p.unitriangular);
      if (args.needed[1]) grads[1] = gb;
      if (args.needed[0]) {
        Tensor ga = -matmul(gb, mT(args.y));
        grads[0] = p.upper ? triu(ga, p.unitriangular ? 1 : 0) : tril(ga, p.unitriangular ? -1 : 0);
      }
      return grads;
    }
    case LinalgOp::kSolve: {
      Tensor gx = block(args.g, l.blocks[0]);
      Tensor gb = linalg::solve(mT(a), gx);
      if (args.needed[1]) grads[1] = gb;
      if (args.needed[0]) grads[0] = -matmul(gb, mT(args.y));
      return grads;
    }
    case LinalgOp::kLuSolve: {
      if (args.needed[0]) not_differentiable("linalg.lu_solve with respect to LU");
      Tensor gx = block(args.g, l.blocks[0]);
      if (args.needed[2]) grads[2] = linalg::lu_solve(a, args.in[1], gx, true, !p.adjoint);
      return grads;
    }
    case LinalgOp::kSlogdet: {
      // d log|det A| = tr(A^-1 dA), d det A = det A tr(A^-1 dA): gA = (g_logabsdet + g_det det) A^-T.
      Tensor g = squeeze(args.g, -2), y = squeeze(args.y, -2);  // [..., 3]: sign, log|det|, det
      Tensor scale = slice(g, -1, 1, 2) + slice(g, -1, 2, 3) * slice(y, -1, 2, 3);  // [..., 1]
      grads[0] = mT(linalg::inv(a)) * unsqueeze(scale, -1);
      return grads;
    }
    case LinalgOp::kEigh: {
      // gA = V (diag(gw) + (V^T gV) / E) V^T with E_ij = w_j - w_i off the diagonal (PyTorch's
      // linalg_eig_backward for Hermitian input). eigvalsh's: V diag(gw) V^T, V recomputed.
      const std::string uplo = p.upper ? "U" : "L";
      Tensor gw = squeeze(block(args.g, l.blocks.back()), -2);
      if (!p.vectors) {
        Tensor v = linalg::eigh(a, uplo).eigenvectors;
        grads[0] = matmul(v * unsqueeze(gw, -2), mT(v));
        return grads;
      }
      Tensor v = block(args.y, l.blocks[0]), w = squeeze(block(args.y, l.blocks[1]), -2);
      Tensor gv = block(args.g, l.blocks[0]);
      Tensor e = unsqueeze(w, -2) - unsqueeze(w, -1);
      Tensor eye = lf::eye(n, a.dtype()).to(a.device());
      Tensor inner = where(eye > 0.5, diag_embed(gw), matmul(mT(v), gv) / (e + eye));
      grads[0] = matmul(matmul(v, inner), mT(v));
      return grads;
    }
    case LinalgOp::kLuFactor: not_differentiable("linalg.lu_factor");
  }
  return grads;
}

}  // namespace lf::autograd
