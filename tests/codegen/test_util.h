// Helpers shared by the fuser, fuzz and kernel-cache tests: reference values (the oracle), reads
// through the fused path, per-dtype comparison, counter deltas and a scoped fusion switch.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/reference/reference.h"
#include "lazyfuse/lazyfuse.h"
#include "runtime/config.h"

namespace lf::test {

// Values of a tensor widened for comparison: floats as double, bool and integers as int64 (exact).
struct Values {
  DType dtype = DType::Float32;
  Shape shape;
  std::vector<double> f;
  std::vector<int64_t> i;
};

inline bool compares_as_int(DType d) { return !is_floating(d); }

// The reference executor's value of `t`; changes no node. Call before any read of the fused path.
inline Values reference_values(const Tensor& t) {
  Values v;
  v.dtype = t.dtype();
  v.shape = t.shape();
  ir::Value r = ir::reference_eval(t.node().get());
  size_t n = static_cast<size_t>(t.numel());
  if (compares_as_int(v.dtype)) {
    ir::Value c = ir::to_contiguous(r, DType::Int64);
    v.i.resize(n);
    if (n) std::memcpy(v.i.data(), c.storage->data(), n * sizeof(int64_t));
  } else {
    ir::Value c = ir::to_contiguous(r, DType::Float64);
    v.f.resize(n);
    if (n) std::memcpy(v.f.data(), c.storage->data(), n * sizeof(double));
  }
  return v;
}

// The value of `t` through the normal (fused) path: a sync point.
inline Values fused_values(const Tensor& t) {
  Values v;
  v.dtype = t.dtype();
  v.shape = t.shape();
  if (compares_as_int(v.dtype)) v.i = t.to_vector<int64_t>();
  else v.f = t.to_vector<double>();
  return v;
}

// Unit roundoff of a dtype, as the comparison uses it.
inline double dtype_eps(DType d) {
  switch (d) {
    case DType::Float16: return 1.0 / 1024;
    case DType::BFloat16: return 1.0 / 128;
    case DType::Float32: return 1.2e-7;
    case DType::Float64: return 2.3e-16;
    default: return 0;
  }
}

struct Tolerance {
  double rtol = 0;  // relative to |reference|
  double atol = 0;  // absolute (callers scale it by the tensor's magnitude where that is meaningful)
  bool nan_exact = true;  // NaN / ±inf positions must match exactly
};

// The per-dtype defaults of the suite: exact for bool/int; float16 1e-2, bfloat16 2e-2, float32 1e-4
// relative (+ small absolute), float64 1e-9. `reduce_len` scales for long reductions.
inline Tolerance default_tolerance(DType d, int64_t reduce_len = 1) {
  double scale = std::max<double>(1.0, std::sqrt(static_cast<double>(std::max<int64_t>(reduce_len, 1))));
  switch (d) {
    case DType::Float16: return {1e-2 * scale, 1e-3 * scale, true};
    case DType::BFloat16: return {2e-2 * scale, 1e-2 * scale, true};
    case DType::Float32: return {1e-4 * scale, 1e-5 * scale, true};
    case DType::Float64: return {1e-9 * scale, 1e-12 * scale, true};
    default: return {0, 0, true};
  }
}

// Compares element by element; returns "" when they match, else a description of the first
// mismatches. Sign of zero may differ; NaN must meet NaN, and inf the same inf, when nan_exact.
inline std::string compare(const Values& ref, const Values& got, const Tolerance& tol) {
  std::ostringstream os;
  if (ref.shape != got.shape || ref.dtype != got.dtype) {
    os << "shape/dtype: reference " << dtype_name(ref.dtype) << shape_str(ref.shape) << ", got "
       << dtype_name(got.dtype) << shape_str(got.shape);
    return os.str();
  }
  int bad = 0;
  size_t n = compares_as_int(ref.dtype) ? ref.i.size() : ref.f.size();
  size_t n_got = compares_as_int(ref.dtype) ? got.i.size() : got.f.size();
  if (n != n_got) return "element count differs";
  os.precision(17);
  for (size_t k = 0; k < n && bad < 5; ++k) {
    if (compares_as_int(ref.dtype)) {
      if (ref.i[k] == got.i[k]) continue;
      os << "  [" << k << "] reference " << ref.i[k] << ", fused " << got.i[k] << "\n";
    } else {
      double r = ref.f[k], g = got.f[k];
      bool ok;
      if (std::isnan(r) || std::isnan(g)) {
        ok = (std::isnan(r) && std::isnan(g)) || !tol.nan_exact;
      } else if (std::isinf(r) || std::isinf(g)) {
        ok = r == g || !tol.nan_exact;
      } else {
        ok = std::fabs(r - g) <= tol.atol + tol.rtol * std::fabs(r);
      }
      if (ok) continue;
      os << "  [" << k << "] reference " << r << ", fused " << g << "\n";
    }
    ++bad;
  }
  return os.str();
}

// Counter deltas since construction.
class StatsDelta {
 public:
  StatsDelta() : start_(cache_stats()) {}
  uint64_t launched() const { return cache_stats().kernels_launched - start_.kernels_launched; }
  uint64_t compiled() const { return cache_stats().kernels_compiled - start_.kernels_compiled; }
  uint64_t hits() const { return cache_stats().hits - start_.hits; }
  uint64_t misses() const { return cache_stats().misses - start_.misses; }
  uint64_t flushes() const { return cache_stats().flushes - start_.flushes; }

 private:
  CacheStats start_;
};

// The whole configuration saved for a scope and restored at its end: a test changes
// rt::mutable_config() fields freely in between.
class ConfigScope {
 public:
  ConfigScope() : saved_(rt::config()) {}
  ~ConfigScope() { rt::mutable_config() = saved_; }
  ConfigScope(const ConfigScope&) = delete;
  ConfigScope& operator=(const ConfigScope&) = delete;

 private:
  rt::Config saved_;
};

// Sets in-process fusion on or off for a scope (LAZYFUSE_FUSION without the environment).
class FusionScope {
 public:
  explicit FusionScope(bool on) : saved_(rt::mutable_config().fusion) { rt::mutable_config().fusion = on; }
  ~FusionScope() { rt::mutable_config().fusion = saved_; }
  FusionScope(const FusionScope&) = delete;
  FusionScope& operator=(const FusionScope&) = delete;

 private:
  bool saved_;
};

// Deterministic float data in [lo, hi) (no <random> distributions: their output differs across
// standard libraries, and failures must reproduce from the seed alone).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 0x1234567ull) { next(); }
  uint64_t next() {  // splitmix64
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  int64_t range(int64_t lo, int64_t hi) {  // inclusive
    return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool chance(double p) { return uniform() < p; }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(next() % v.size())];
  }

 private:
  uint64_t s_;
};

inline std::vector<float> iota_floats(int64_t n, float start = 0, float step = 1) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) v[static_cast<size_t>(k)] = start + step * static_cast<float>(k);
  return v;
}

// Reference first, then the fused read; EXPECTs they match with the dtype's default tolerance.
inline void expect_matches_reference(const Tensor& t, int64_t reduce_len = 1, const std::string& what = "") {
  Values ref = reference_values(t);
  Values got = fused_values(t);
  std::string diff = compare(ref, got, default_tolerance(t.dtype(), reduce_len));
  EXPECT_TRUE(diff.empty()) << what << " " << dtype_name(t.dtype()) << shape_str(t.shape()) << ":\n" << diff;
}

// The lf::Error message `f` raises, or "no error".
template <typename F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const lf::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace lf::test
