// The CPU matmul: a cache-blocked, packed, multi-threaded GEMM (Goto/BLIS structure) with an
// AVX-512 or AVX2 register-tiled micro-kernel where the CPU has it, and a hook that runs the fused
// epilogue on each block of output rows right after the block is final, while it is still in
// cache. Operands are read through arbitrary strides (transposes, slices and broadcast batch dims
// cost nothing: packing reads them), in any dtype of the API.
#pragma once

#include <cstdint>
#include <functional>

#include "lazyfuse/types.h"

#include "codegen/kir/gemm_problem.h"

namespace lf::cpu {

using kir::GemmOperand;
using kir::GemmProblem;


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
