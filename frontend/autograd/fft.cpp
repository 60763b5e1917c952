// The derivative of the FFT row (ir::Op::Fft; codegen/ir/fft.h), as PyTorch's fft_c2c_backward,
// fft_r2c_backward and fft_c2r_backward, on real pairs: the cotangent of a pair is (d/d re, d/d im),
// so a c2c transform's derivative is its adjoint, the opposite transform with the same scale.
#include "codegen/ir/fft.h"

#include "frontend/autograd/derivatives.h"
#include "frontend/fft_pairs.h"
#include "lazyfuse/ops.h"

namespace lf::autograd {

std::vector<Tensor> vjp_fft(const VjpArgs& args) {
  const ir::FftParams p = ir::FftParams::of_attrs(args.attrs);
  const Tensor& g = args.g;
  std::vector<Tensor> grads(1);
  switch (p.kind) {
    case ir::FftKind::kForward:
      grads[0] = detail::record_fft(g, {ir::FftKind::kInverse, p.n, p.scale});
      break;
    case ir::FftKind::kInverse:
      grads[0] = detail::record_fft(g, {ir::FftKind::kForward, p.n, p.scale});
      break;
    case ir::FftKind::kR2C: {
      // y = s (F x)[0, n / 2 + 1): the adjoint pads the half spectrum with zeros, transforms it back
      // unnormalized and keeps the real part (x is real).
      const int64_t m = g.size(-2);
      std::vector<int64_t> pads{0, 0, 0, p.n - m};
      Tensor full = pad(g, pads);
      grads[0] = select(detail::record_fft(full, {ir::FftKind::kInverse, p.n, p.scale}), -1, 0);
      break;
    }
    case ir::FftKind::kC2R: {
      // y = s Re(F^H of the Hermitian extension of X): each bin that stands for itself and its mirror
      // (1 .. n - m) counts twice; bins 0 and n / 2 once, their imaginary parts not at all (r2c of a
      // real signal gives them none).
      const int64_t m = p.in_length();
      Tensor gi = detail::record_fft(g, {ir::FftKind::kR2C, p.n, p.scale});
      Tensor k = arange(0, m, 1, DType::Int64).reshape({m, 1});
      Tensor w = where((k >= 1) & (k <= p.n - m), 2.0, 1.0).to(gi.dtype());
      grads[0] = gi * w;
      break;
    }
  }
  return grads;
}

}  // namespace lf::autograd
