// Scalar semantics of the scatter row's reduce modes (ir::ScatterReduce, issue 23), shared by the
// reference executor and the CPU backend so that both combine values the same way; the CUDA
// kernel's macros (cuda/scatter.cpp) follow the same definitions.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "codegen/ir/indexing.h"
#include "codegen/reference/math.h"

namespace lf::ref {

// What a destination starts from without include_self (PyTorch's scatter_reduce fills these).
template <typename C>
C scatter_identity(ir::ScatterReduce r) {
  switch (r) {
    case ir::ScatterReduce::Prod:
      return C(1);
    case ir::ScatterReduce::AMax:
      if constexpr (std::numeric_limits<C>::has_infinity)
        return -std::numeric_limits<C>::infinity();
      else
        return std::numeric_limits<C>::lowest();
    case ir::ScatterReduce::AMin:
      if constexpr (std::numeric_limits<C>::has_infinity)
        return std::numeric_limits<C>::infinity();
      else
        return std::numeric_limits<C>::max();
    default:
      return C(0);
  }
}

// The destination `a` after one more value `b`, in the compute type (the caller rounds to the dtype
// after each step, as every path does).
template <typename C>
C scatter_combine(ir::ScatterReduce r, C a, C b) {
  switch (r) {
    case ir::ScatterReduce::Assign:
      return b;
    case ir::ScatterReduce::Sum:
    case ir::ScatterReduce::Mean:
      return add(a, b);
    case ir::ScatterReduce::Prod:
      return mul(a, b);
    case ir::ScatterReduce::AMax:
      return maximum(a, b);  // NaN propagates
    case ir::ScatterReduce::AMin:
      return minimum(a, b);
  }
  return b;
}

// mean's last step: the sum divided by the count (> 0); integers floor, as PyTorch's
// div(count, rounding_mode="floor").
template <typename C>
C scatter_mean(C sum, int64_t count) {
  if constexpr (std::is_floating_point_v<C>) {
    return sum / static_cast<C>(count);
  } else if constexpr (std::is_same_v<C, bool>) {
    return sum;
  } else {
    C n = static_cast<C>(count);
    C q = sum / n;
    if (sum % n != 0 && sum < 0) --q;
    return q;
  }
}

}  // namespace lf::ref
