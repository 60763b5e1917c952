// Maps a runtime DType to its C++ storage type and compute type, for code that loops over values
// (the reference executor, host copies): dispatch(dtype, [&](auto tag) { using S = ...; }).
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "codegen/ir/half.h"
#include "lazyfuse/types.h"

namespace lf {

template <typename Storage, typename Compute, DType D>
struct DTypeTag {
  using storage_t = Storage;  // bytes in memory
  using compute_t = Compute;  // what arithmetic runs in (float for the 16-bit floats)
  static constexpr DType dtype = D;
};

using BoolTag = DTypeTag<bool, bool, DType::Bool>;
using Int32Tag = DTypeTag<int32_t, int32_t, DType::Int32>;
using Int64Tag = DTypeTag<int64_t, int64_t, DType::Int64>;
using Float16Tag = DTypeTag<Half, float, DType::Float16>;
using BFloat16Tag = DTypeTag<BFloat16, float, DType::BFloat16>;
using Float32Tag = DTypeTag<float, float, DType::Float32>;
using Float64Tag = DTypeTag<double, double, DType::Float64>;

template <typename F>
decltype(auto) dispatch(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Bool: return f(BoolTag{});
    case DType::Int32: return f(Int32Tag{});
    case DType::Int64: return f(Int64Tag{});
    case DType::Float16: return f(Float16Tag{});
    case DType::BFloat16: return f(BFloat16Tag{});
    case DType::Float32: return f(Float32Tag{});
    case DType::Float64: return f(Float64Tag{});
    case DType::Complex64:  // frontend types, never in the trace (lazyfuse/types.h)
    case DType::Complex128: break;
  }
  throw std::logic_error(std::string("internal: a ") + dtype_name(dtype) + " value reached the executor");
}

// Storage <-> compute conversions.
template <typename S>
inline auto to_compute(S s) {
  if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
    return static_cast<float>(s);
  } else {
    return s;
  }
}

// Converts any arithmetic value to storage type S with C++ cast semantics, except that float to
// integer casts of NaN, inf or out-of-range values (undefined behaviour in C++) saturate, with NaN
// going to 0, so every backend can agree on one answer.
template <typename S, typename V>
inline S from_value(V v) {
  if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
    return S(static_cast<float>(v));
  } else if constexpr (std::is_same_v<S, bool>) {
    return v != V(0);
  } else if constexpr (std::is_integral_v<S> && std::is_floating_point_v<V>) {
    if (v != v) return S(0);
    constexpr double lo = static_cast<double>(std::numeric_limits<S>::min());
    constexpr double hi = static_cast<double>(std::numeric_limits<S>::max());
    double d = static_cast<double>(v);
    if (d <= lo) return std::numeric_limits<S>::min();
    if (d >= hi) return std::numeric_limits<S>::max();
    return static_cast<S>(d);
  } else {
    return static_cast<S>(v);
  }
}

}  // namespace lf
