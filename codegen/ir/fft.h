// The FFT row (ir::Op::Fft, issue 49): which transform a node is, packed in attrs, and the shapes
// of its input and output, read by the frontend, the reference executor, the host FFT and autograd.
//
// Complex values are real tensors in PyTorch's view_as_real layout (the last dim holds re, im), so
// the transform is a node over real tensors and the elementwise work before and after it fuses as
// for any real op. The transform runs along one dim only: the second-to-last of a pair tensor, or the
// last of a real one (r2c's input, c2r's output); the frontend moves the user's dim there and pads or
// slices for `n`, so the node itself is one batched 1-d transform.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/ir/node.h"

namespace lf::ir {

enum class FftKind : int64_t {
  kForward = 0,  // c2c: [.., n, 2] -> [.., n, 2], X_k = sum_j x_j e^{-2 pi i jk / n}
  kInverse,      // c2c: [.., n, 2] -> [.., n, 2], the sign +
  kR2C,          // [.., n] real -> [.., n / 2 + 1, 2], the forward transform's first half
  kC2R,          // [.., n / 2 + 1, 2] -> [.., n] real: the inverse of a Hermitian spectrum (numpy's irfft:
                 // the imaginary parts of the zero and, for even n, the n / 2 bins are ignored)
};

struct FftParams {
  FftKind kind = FftKind::kForward;
  int64_t n = 1;       // the signal's length (c2r: the output's; the others: the input's)
  double scale = 1.0;  // multiplies every output (the norm: 1, 1 / n or 1 / sqrt(n))

  // attrs.dims = {kind, n}, attrs.value = scale.
  void pack(Attrs& attrs) const {
    attrs.dims = {static_cast<int64_t>(kind), n};
    attrs.value = scale;
  }
  static FftParams of_attrs(const Attrs& attrs) {
    return FftParams{static_cast<FftKind>(attrs.dims[0]), attrs.dims[1], attrs.value};
  }
  static FftParams of(const Node& node) { return of_attrs(node.attrs); }

  bool complex_input() const { return kind != FftKind::kR2C; }
  bool complex_output() const { return kind != FftKind::kC2R; }
  // The number of complex (or, for a real side, real) values along the transformed dim.
  int64_t in_length() const { return kind == FftKind::kC2R ? n / 2 + 1 : n; }
  int64_t out_length() const { return kind == FftKind::kR2C ? n / 2 + 1 : n; }
};

inline const char* fft_kind_name(FftKind k) {
  switch (k) {
    case FftKind::kForward: return "c2c forward";
    case FftKind::kInverse: return "c2c inverse";
    case FftKind::kR2C: return "r2c";
    case FftKind::kC2R: return "c2r";
  }
  return "?";
}

}  // namespace lf::ir
