// The reference FFT (ir::Op::Fft, codegen/ir/fft.h): the plain O(n^2) DFT in float64, one line at a
// time. A different algorithm from the host FFT (codegen/backend/fft_host.h), so that the tests
// compare two implementations; also the path of LAZYFUSE_FFT=reference.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/ir/fft.h"
#include "codegen/reference/reference.h"

namespace lf::ir {

// One Fft node's work over host arrays of the node's dtype (Float32 or Float64): `batch` lines,
// each params.in_length() values in (pairs when complex), read through the input's strides (so a
// transposed view needs no copy), and params.out_length() values out, contiguous row-major.
struct FftProblem {
  FftParams params;
  DType dtype = DType::Float64;
  int64_t batch = 0;
  const void* in = nullptr;             // the input's first element
  Shape batch_shape, batch_strides;     // the input's dims before the line (and the pair dim)
  int64_t stride = 1, pair_stride = 1;  // along the line; from a real part to its imaginary part
  void* out = nullptr;

  // The problem of `node` over its input `in` (a host value of the node's dtype, any strides);
  // out is left for the caller.
  static FftProblem of(const Node& node, const Value& in);
  // Where line b starts in `in`, in elements.
  int64_t line_offset(int64_t b) const {
    int64_t off = 0;
    for (size_t d = batch_shape.size(); d-- > 0;) {
      off += (b % batch_shape[d]) * batch_strides[d];
      b /= batch_shape[d];
    }
    return off;
  }
  int64_t out_line() const { return params.out_length() * (params.complex_output() ? 2 : 1); }
};

// Computes every line of `p` by the direct sum, in float64.
void reference_fft_problem(const FftProblem& p);

// The reference executor's row: the input made contiguous, computed.
Value reference_fft(const Node& node, const std::vector<Value>& in);

}  // namespace lf::ir
