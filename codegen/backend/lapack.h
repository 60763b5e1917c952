// LAPACK on the host through dlopen (Debian's liblapack.so.3, or OpenBLAS's libopenblas.so.0 that
// carries LAPACK too), optional: the linear-algebra row's fast path on the CPU (linalg_call.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/reference/linalg.h"

namespace lf::backend::lapack {

// Empty when LAPACK is loaded with every routine we call; else why not, in words.
const std::string& unavailable();
// The library that loaded ("liblapack.so.3").
const std::string& library();

// Computes every problem of `p` as reference_linalg_problems does (same outputs, same info).
std::vector<int64_t> solve(const ir::LinalgProblem& p);

}  // namespace lf::backend::lapack
