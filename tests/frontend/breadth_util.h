// Helpers of the breadth tests (issue 23): random inputs of every dtype (NaN/inf for floats, 0 for
// integers), and a check of an expression against the reference executor, fused and unfused.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "codegen/test_util.h"

namespace lf::test {

inline const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> d = {DType::Bool,    DType::Int32,    DType::Int64,  DType::Float16,
                                       DType::BFloat16, DType::Float32, DType::Float64};
  return d;
}

// Values exact in every dtype of their category: integers in [-lim, lim]; floats multiples of 1/8
// in [-lim, lim] with NaN, +-inf and +-0 sprinkled in when `specials`.
inline Tensor random_input(Shape shape, DType dtype, uint32_t seed, int lim = 9, bool specials = true) {
  std::mt19937 gen(seed);
  int64_t n = shape_numel(shape);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) {
    if (dtype == DType::Bool) x = static_cast<double>(gen() % 2);
    else if (!is_floating(dtype)) x = static_cast<double>(static_cast<int>(gen() % (2 * lim + 1)) - lim);
    else x = static_cast<double>(static_cast<int>(gen() % (16 * lim + 1)) - 8 * lim) / 8;
    if (specials && is_floating(dtype) && gen() % 10 == 0) {
      static const double kSpecial[] = {std::numeric_limits<double>::quiet_NaN(), INFINITY, -INFINITY, 0.0, -0.0};
      x = kSpecial[gen() % 5];
    }
  }
  return cast(from_vector(v, std::move(shape)), dtype);
}

// `build` over `inputs`, fused and unfused, against the reference executor with the suite's
// per-dtype tolerance (exact for bool and integers).
inline void expect_matches_reference(const std::function<Tensor()>& build, const std::string& what,
                                     double extra_rtol = 0) {
  for (bool fused : {true, false}) {
    FusionScope scope(fused);
    Tensor t = build();
    Values want = reference_values(t);
    Values got = fused_values(t);
    Tolerance tol = default_tolerance(t.dtype());
    tol.rtol += extra_rtol;
    EXPECT_EQ(compare(want, got, tol), "") << what << (fused ? " (fused)" : " (unfused)") << " "
                                            << dtype_name(t.dtype()) << shape_str(t.shape());
  }
}

// The message of the lf::Error `f` throws ("" when it throws none).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace lf::test
