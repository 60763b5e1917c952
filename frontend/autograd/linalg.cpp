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

// num / den, but 0 where num is 0: an unused cotangent arrives as zeros, not as PyTorch's
// undefined tensor, and 0 / 0 (repeated or zero singular values) must give what skipping its
// term gives, not NaN.
Tensor safe_div(const Tensor& num, const Tensor& den) { return where(num == 0.0, 0.0, num / den); }

// PyTorch's svd_backward for real A = U diag(S) Vh (reduced: U [m, k], Vh [k, n]), all three
// cotangents given (an unused one is zero, which gives what PyTorch's undefined one does: only S
// used is U diag(gS) Vh, finite for repeated and zero singular values). With gU or gVh used it
// assumes distinct singular values, and a full-rank A where it is not square, as PyTorch's.
Tensor svd_backward(const Tensor& gu, const Tensor& gs, const Tensor& gvh, const Tensor& u, const Tensor& s,
                    const Tensor& vh) {
  const int64_t m = u.size(-2), n = vh.size(-1), k = s.size(-1);
  auto skew = [](const Tensor& x) { return x - mT(x); };
  Tensor uhgu = skew(matmul(mT(u), gu)), vhgv = skew(matmul(vh, mT(gvh)));
  Tensor s2 = s * s;
  Tensor eye = lf::eye(k, s.dtype()).to(s.device());
  Tensor e = unsqueeze(s2, -2) - unsqueeze(s2, -1) + eye;  // ones on the diagonal: 0 / 1 there
  Tensor ga = safe_div(uhgu * unsqueeze(s, -2) + unsqueeze(s, -1) * vhgv, e) + diag_embed(gs);
  if (m > n) {
    Tensor gus = safe_div(gu, unsqueeze(s, -2));
    ga = matmul(u, ga) + gus - matmul(u, matmul(mT(u), gus));
    return matmul(ga, vh);
  }
  if (m < n) {
    Tensor sgvh = safe_div(gvh, unsqueeze(s, -1));
    ga = matmul(ga, vh) + sgvh - matmul(matmul(sgvh, mT(vh)), vh);
    return matmul(u, ga);
  }
  return matmul(u, matmul(ga, vh));
}

// PyTorch's pinv_backward: the cotangent of A given that of pinv(A).
Tensor pinv_backward(const Tensor& g, const Tensor& pa, const Tensor& a) {
  const int64_t m = a.size(-2), n = a.size(-1);
  Tensor pah = mT(pa), gh = mT(g);
  if (m <= n) {
    Tensor K = matmul(gh, pa), kpah = matmul(K, pah);
    return -mT(matmul(pa, K)) + kpah - matmul(matmul(a, pa), kpah) + matmul(matmul(pah, pa), gh - matmul(K, a));
  }
  Tensor K = matmul(pa, gh), pahk = matmul(pah, K);
  return -mT(matmul(K, pa)) + matmul(matmul(gh - matmul(a, K), pa), pah) + pahk - matmul(matmul(pahk, pa), a);
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
      Tensor inner = where(eye > 0.5, diag_embed(gw), safe_div(matmul(mT(v), gv), e + eye));
      grads[0] = matmul(matmul(v, inner), mT(v));
      return grads;
    }
    case LinalgOp::kQr: {
      // PyTorch's linalg_qr_backward. gA = gR R^T - Q^T gQ, then for m >= n:
      // (Q syminvadj(triu(gA)) + gQ) R^-T; for m < n through R's leading m x m block.
      if (!p.vectors)
        throw Error("lf::grad: The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                    "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.");
      if (p.full && m > n)
        throw Error("lf::grad: The QR decomposition (linalg.qr) is not differentiable when mode='complete' and nrows > ncols.");
      Tensor q = block(args.y, l.blocks[0]), r = block(args.y, l.blocks[1]);
      Tensor gq = block(args.g, l.blocks[0]), gr = block(args.g, l.blocks[1]);
      Tensor ga = matmul(gr, mT(r)) - matmul(mT(q), gq);
      if (m >= n) {
        Tensor sym = triu(ga);
        sym = sym + mT(sym);
        sym = sym - diag_embed(diagonal(sym, 0, -2, -1) * 0.5);
        grads[0] = linalg::solve_triangular(mT(r), matmul(q, sym) + gq, /*upper=*/false, /*left=*/false);
        return grads;
      }
      Tensor x = -ga;
      Tensor g = linalg::solve_triangular(mT(narrow(r, -1, 0, m)), matmul(q, tril(x - mT(x))), false, false);
      Shape pad = g.shape();
      pad.back() = n - m;
      grads[0] = cat({g, zeros(pad, g.dtype()).to(g.device())}, -1) + matmul(q, gr);
      return grads;
    }
    case LinalgOp::kSvd: {
      if (!p.vectors) {  // svdvals: U diag(gS) Vh, U and Vh recomputed
        Tensor gs = squeeze(block(args.g, l.blocks[0]), -2);
        linalg::SVD f = linalg::svd(a, false);
        grads[0] = matmul(f.U * unsqueeze(gs, -2), f.Vh);
        return grads;
      }
      const int64_t kk = std::min(m, n);
      // full_matrices: the extra columns of U and rows of Vh carry nothing of A (PyTorch narrows too).
      Tensor u = narrow(block(args.y, l.blocks[0]), -1, 0, kk), vh = narrow(block(args.y, l.blocks[2]), -2, 0, kk);
      Tensor gu = narrow(block(args.g, l.blocks[0]), -1, 0, kk), gvh = narrow(block(args.g, l.blocks[2]), -2, 0, kk);
      Tensor s = squeeze(block(args.y, l.blocks[1]), -2), gs = squeeze(block(args.g, l.blocks[1]), -2);
      grads[0] = svd_backward(gu, gs, gvh, u, s, vh);
      return grads;
    }
    case LinalgOp::kLstsq: {
      // PyTorch's linalg_lstsq_backward: through pinv(A) (X = pinv(A) B for the minimum-norm
      // solution): gA = pinv_backward(gX B^T), gB = pinv(A)^T gX. Residuals are a composite of X.
      const Tensor& b = args.in[1];
      Tensor gx = block(args.g, l.blocks[0]);
      Tensor pa = linalg::pinv(a);
      if (args.needed[0]) grads[0] = pinv_backward(matmul(gx, mT(b)), pa, a);
      if (args.needed[1]) grads[1] = matmul(mT(pa), gx);
      return grads;
    }
    case LinalgOp::kLuFactor: not_differentiable("linalg.lu_factor");
  }
  return grads;
}

}  // namespace lf::autograd
