// The counter-based generator behind lf::rand and lf::randn: element i of a call is a pure function
// of (seed, counter + i), so numbers do not depend on fusion, evaluation order or device. Every
// backend implements exactly these integer steps.
#pragma once

#include <cmath>
#include <cstdint>

namespace lf::rng {

// splitmix64 at position `index` of the stream started at `seed`.
inline uint64_t hash(uint64_t seed, uint64_t index) {
  uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [0, 1) with `bits` bits of resolution (24 for float32, 53 for float64, 11 for
// float16, 8 for bfloat16), so rounding to the dtype can never produce 1.
inline double uniform(uint64_t h, int bits) { return std::ldexp(static_cast<double>(h >> (64 - bits)), -bits); }

// Standard normal by Box-Muller from the two 32-bit halves of h, computed in float32.
inline float normal_f32(uint64_t h) {
  float u1 = static_cast<float>((h >> 40) + 1) * 5.9604644775390625e-8f;  // (0, 1]
  float u2 = static_cast<float>(h & 0xffffffu) * 5.9604644775390625e-8f;  // [0, 1)
  return std::sqrt(-2.0f * std::log(u1)) * std::cos(6.28318530717958647692f * u2);
}
inline double normal_f64(uint64_t h) {
  double u1 = static_cast<double>((h >> 32) + 1) * 2.3283064365386962890625e-10;
  double u2 = static_cast<double>(h & 0xffffffffu) * 2.3283064365386962890625e-10;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.28318530717958647692 * u2);
}

}  // namespace lf::rng
