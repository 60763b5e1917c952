// Scalar semantics of the elementwise ops, as the reference executor computes them: plain C++ and
// libm, one value at a time. Every backend is tested against these definitions.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace lf::ref {

// Integer arithmetic wraps (two's complement) instead of being undefined on overflow.
template <typename T>
T add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename T>
T sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <typename T>
T mul(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a && b;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}
template <typename T>
T neg(T x) {
  if constexpr (std::is_floating_point_v<T>) return -x;  // neg(0.0) is -0.0 (0 - 0.0 is +0.0)
  else return sub(T(0), x);                              // integers wrap
}

template <typename T>
T abs(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fabs(x);
  } else {
    return x < T(0) ? neg(x) : x;
  }
}

// log(e^a + e^b) without overflow (logcumsumexp's step, as PyTorch's _log_add_exp_helper): NaN
// propagates; two infinities of one sign give that infinity.
template <typename T>
T logaddexp(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  T hi = a < b ? b : a, lo = a < b ? a : b;
  if (std::isinf(hi)) return hi;
  return hi + std::log1p(std::exp(lo - hi));
}

template <typename T>
T maximum(T a, T b) {  // NaN propagates from either side
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return a < b ? b : a;
}
template <typename T>
T minimum(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return b < a ? b : a;
}

template <typename T>
T relu(T x) {
  return x < T(0) ? T(0) : x;  // NaN stays NaN
}

template <typename T>
T sign(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(x)) return x;
  }
  return static_cast<T>((T(0) < x) - (x < T(0)));
}

template <typename T>
T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}
template <typename T>
T silu(T x) {
  return x / (T(1) + std::exp(-x));
}
// x * relu6(x + 3) / 6, as PyTorch computes it (NaN stays NaN).
template <typename T>
T hardswish(T x) {
  T r6 = x + T(3);
  r6 = r6 < T(0) ? T(0) : r6 > T(6) ? T(6) : r6;
  return x * r6 / T(6);
}
template <typename T>
T gelu(T x) {
  return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
}
template <typename T>
T gelu_tanh(T x) {
  const T k = T(0.79788456080286535588);  // sqrt(2 / pi)
  return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
}

template <typename T>
bool isnan(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(x);
  return false;
}
template <typename T>
bool isinf(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::isinf(x);
  return false;
}
template <typename T>
bool isfinite(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::isfinite(x);
  return true;
}

// Integer powers by squaring, wrapping on overflow; negative exponents give 0 unless |base| is 1.
template <typename T>
T pow(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::pow(a, b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return a || !b;
  } else {
    if (b < 0) return a == 1 ? T(1) : a == -1 ? ((b & 1) ? T(-1) : T(1)) : T(0);
    T result = 1;
    while (b) {
      if (b & 1) result = mul(result, a);
      a = mul(a, a);
      b >>= 1;
    }
    return result;
  }
}

// ---- Division family and bitwise ops (issue 23). PyTorch's formulas; integer division by zero
// gives 0 (numpy's choice: PyTorch raises on the CPU and returns garbage on a GPU), and
// INT_MIN / -1 wraps to INT_MIN (remainder 0), so no integer input is undefined behaviour.
template <typename T>
T fmod(T a, T b) {  // sign of the dividend
  if constexpr (std::is_floating_point_v<T>) {
    return std::fmod(a, b);
  } else {
    if (b == 0 || b == -1) return T(0);
    return static_cast<T>(a % b);
  }
}
template <typename T>
T remainder(T a, T b) {  // sign of the divisor (Python's %)
  T r = fmod(a, b);
  if constexpr (std::is_floating_point_v<T>) {
    if (r != 0 && ((b < 0) != (r < 0))) r += b;
  } else {
    if (r != 0 && ((b < 0) != (r < 0))) r = add(r, b);
  }
  return r;
}
template <typename T>
T floor_divide(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    // PyTorch's div_floor_floating: exact for representable quotients, a / b for b == 0.
    if (b == 0) return a / b;
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= T(1);
    if (div == 0) return std::copysign(T(0), a / b);
    T fl = std::floor(div);
    if (div - fl > T(0.5)) fl += T(1);
    return fl;
  } else {
    if (b == 0) return T(0);
    if (b == -1) return neg(a);
    T q = static_cast<T>(a / b);
    T r = static_cast<T>(a % b);
    if (r != 0 && ((b < 0) != (r < 0))) q = static_cast<T>(q - 1);
    return q;
  }
}
template <typename T>
T bitwise_and(T a, T b) {
  return static_cast<T>(a & b);
}
template <typename T>
T bitwise_or(T a, T b) {
  return static_cast<T>(a | b);
}
template <typename T>
T bitwise_xor(T a, T b) {
  return static_cast<T>(a ^ b);
}
template <typename T>
T bitwise_not(T x) {
  if constexpr (std::is_same_v<T, bool>) {
    return !x;
  } else {
    return static_cast<T>(~x);
  }
}
// Shifts by a negative amount or by the width or more give 0 (left) or the sign fill (right), as
// PyTorch defines them; the left shift wraps (computed unsigned).
template <typename T>
T shift_left(T a, T b) {
  constexpr T kBits = static_cast<T>(sizeof(T) * 8);
  if (b < 0 || b >= kBits) return T(0);
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) << b));
}
template <typename T>
T shift_right(T a, T b) {
  constexpr T kBits = static_cast<T>(sizeof(T) * 8);
  if (b < 0 || b >= kBits) return static_cast<T>(a < 0 ? -1 : 0);
  return static_cast<T>(a >> b);
}

}  // namespace lf::ref
