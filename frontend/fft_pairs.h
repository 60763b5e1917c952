// What the FFT's frontend and its derivative share (frontend/fft.cpp, frontend/autograd/fft.cpp):
// recording the node and conjugating pairs. The pair transforms are public: lazyfuse/fft.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/ir/fft.h"
#include "lazyfuse/fft.h"
#include "lazyfuse/tensor.h"

namespace lf::detail {

// One Fft node over x, already laid out as the node wants it (codegen/ir/fft.h): pairs [.., len, 2]
// (c2c, c2r) or real [.., n] (r2c), len the node's input length, of a float dtype.
Tensor record_fft(const Tensor& x, const ir::FftParams& p);

// The complex conjugate of pairs: the imaginary parts negated (elementwise, fused).
Tensor conj_pairs(const Tensor& z);

}  // namespace lf::detail
