// A matrix product as every backend's matmul reads it: sizes, dtype, and operands as storage plus
// strides (transposes, slices and broadcast batch dims are strides, never copies).
#pragma once

#include <cstdint>

#include "lazyfuse/types.h"

namespace lf::kir {

struct GemmOperand {
  const void* data = nullptr;  // first element of the storage
  int64_t offset = 0;          // elements
  Shape strides;               // elements, over [batch..., rows, cols]
};

// C[batch..., m, n] = A[batch..., m, k] @ B[batch..., k, n], all of `dtype`; C is contiguous.
// Floats accumulate in their compute type (float for float32 and the 16-bit floats, double for
// float64), integers in int64 with two's-complement wrap-around; C is rounded to `dtype` once.
struct GemmProblem {
  DType dtype = DType::Float32;
  Shape batch;  // batch sizes (may be empty)
  int64_t m = 0, n = 0, k = 0;
  GemmOperand a, b;
  void* c = nullptr;
};

}  // namespace lf::kir
