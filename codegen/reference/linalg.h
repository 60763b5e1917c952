// The reference linear algebra (ir::Op::Linalg, codegen/ir/linalg.h): plain C++ textbook
// algorithms, one matrix at a time, in the node's dtype. It is the oracle of the tests and the
// host path where LAPACK is absent or switched off (LAZYFUSE_LINALG=reference).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "codegen/ir/linalg.h"
#include "codegen/reference/reference.h"

namespace lf::ir {

// One linalg node's work over contiguous row-major host arrays: `batch` problems, each input's
// matrices back to back, the output packed as linalg_layout says. Pivots are LAPACK's (1-based).
struct LinalgProblem {
  LinalgParams params;
  DType dtype = DType::Float64;  // Float32 or Float64
  int64_t batch = 1;
  int64_t m = 0, n = 0, k = 0;  // the first input [m, n], a right-hand side [n, k]
  LinalgLayout layout;
  const void* a = nullptr;          // [batch, m, n]
  const void* b = nullptr;          // [batch, n, k] (solves)
  const int32_t* pivots = nullptr;  // [batch, n] (kLuSolve)
  void* out = nullptr;              // [batch, layout.rows, layout.width], zero-filled by the caller

  // The problem of `node` over `in` (contiguous host values of the inputs' dtypes).
  static LinalgProblem of(const Node& node, const std::vector<Value>& in);
};

// Computes every problem of `p` by the reference algorithms and returns each one's info (0: done;
// > 0: LAPACK's info, the order of the minor that is not positive-definite or the 1-based index
// of the first zero pivot), with the info block of the _ex ops filled in.
std::vector<int64_t> reference_linalg_problems(const LinalgProblem& p);

// Whether `count` values at `a` are all finite (the paths that refuse a NaN or inf matrix: the
// SVDs, eigh on cuSOLVER).
template <typename T>
bool all_finite(const T* a, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    if (!std::isfinite(a[i])) return false;
  return true;
}

// Throws PyTorch's lf::Error for the first failed problem when the node checks (params.check) and
// its op can fail; stores the info block otherwise.
void finish_linalg(const LinalgProblem& p, const std::vector<int64_t>& info);

// The reference executor's row: inputs made contiguous, computed, checked.
Value reference_linalg(const Node& node, const std::vector<Value>& in);

}  // namespace lf::ir
