// The tolerance of a convolution against the reference executor (README, "Tolerances"), shared by
// conv_test.cpp and conv_gpu_test.cpp.
#pragma once

#include <algorithm>
#include <cmath>

#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"
#include "runtime/config.h"

namespace lf::test {

// The GEMM accumulates in float (double for float64) in another order than the reference's double
// sum: about k * eps * sum|x||w| apart (values in [-1, 1]), plus the output's rounding. A float32
// convolution in cuDNN on a GPU may run on TF32 tensor cores (LAZYFUSE_CONV_TF32, on by default as
// in PyTorch): operands rounded to 10 mantissa bits, about 1e-3 sqrt(k) apart more.
inline Tolerance conv_tolerance(DType d, int64_t k) {
  double acc_eps = d == DType::Float64 ? 2.3e-16 : 1.2e-7;
  Tolerance t = default_tolerance(d);
  double kk = static_cast<double>(std::max<int64_t>(k, 1));
  t.atol += 4.0 * acc_eps * kk * 4.0;
  if (d == DType::Float16 || d == DType::BFloat16) t.atol += t.rtol * std::sqrt(kk);
  const rt::Config& c = rt::config();
  if (d == DType::Float32 && default_device().is_cuda() && c.conv_tf32 && c.conv != "generated") t.atol += 1e-3 * std::sqrt(kk);
  return t;
}

}  // namespace lf::test
