// The CPU matmul: a cache-blocked, packed, multi-threaded GEMM (Goto/BLIS structure) with an
// AVX-512 or AVX2 register-tiled micro-kernel where the CPU has it, and a hook that runs the fused
// epilogue on each block of output rows right after the block is final, while it is still in
// cache. Operands are read through arbitrary strides (transposes, slices and broadcast batch dims
// cost nothing: packing reads them), in any dtype of the API.
#pragma once

#include <cstdint>
#include <functional>

#include "lazyfuse/types.h"

namespace lf::cpu {

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

// Called with [row_begin, row_end) of the [batch * m] rows of C once those rows are final, on the
// thread that computed them; calls for different blocks may run concurrently.
using RowsDone = std::function<void(int64_t row_begin, int64_t row_end)>;

// The micro-kernels; kBest is the widest this CPU runs (the others exist so that tests can run
// each one the CPU supports, whatever the machine picks).
enum class GemmIsa { kBest, kPortable, kAvx2, kAvx512 };
bool gemm_isa_available(GemmIsa isa);

void gemm(const GemmProblem& problem, const RowsDone& rows_done, GemmIsa isa = GemmIsa::kBest);

// Which micro-kernel gemm() uses on this CPU for `dtype`, e.g. "avx512 12x32" (for logs).
const char* gemm_kernel_name(DType dtype);

}  // namespace lf::cpu
