// Creation ops of issue 23: *_like, eye, linspace, logspace, and random ops built on the
// counter-based rand/randn leaves (randint, bernoulli, dropout, normal). All are recorded as
// generators and elementwise ops, so they fuse into their consumers, and the random ones give the
// same numbers fused or unfused and on any device, as rand does.
#include <cmath>
#include <optional>
#include <string>

#include "frontend/random.h"
#include "frontend/record.h"
#include "lazyfuse/ops.h"
#include "lazyfuse/runtime.h"

namespace lf {
namespace {

using detail::fail;
using ir::Op;

Tensor constant_like(const char* op, const Tensor& x, double value, std::optional<DType> dtype) {
  detail::check_defined(op, {&x});
  DType d = dtype.value_or(x.dtype());
  if (!is_floating(d) && !(std::fabs(value) < 9.2e18))
    fail(op, "value " + std::to_string(value) + " does not fit dtype " + dtype_name(d), {&x});
  Scalar s = is_floating(d) ? Scalar(value) : d == DType::Bool ? Scalar(value != 0) : Scalar(static_cast<int64_t>(value));
  return detail::full_like_shape(x.shape(), s, d, x.device());
}

void check_finite(const char* op, double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b)) fail(op, "start and end must be finite");
}

// PyTorch's linspace: start + step * i in the first half, end - step * (steps - 1 - i) in the
// second (so both ends are exact), computed in the dtype (double for integers, then truncated).
Tensor linspace_in(double start, double end, int64_t steps, DType compute) {
  if (steps == 1) return full({1}, start, compute);
  Tensor i = arange(0, static_cast<double>(steps), 1, compute);
  double step = compute == DType::Float64
                    ? (end - start) / static_cast<double>(steps - 1)
                    : static_cast<double>((static_cast<float>(end) - static_cast<float>(start)) /
                                          static_cast<float>(steps - 1));
  return where(i < static_cast<double>(steps / 2), start + step * i,
               end - step * (static_cast<double>(steps - 1) - i));
}

// For integer outputs: the points as (start * (steps - 1 - i) + end * i) / (steps - 1) in float64,
// whose products and sum are exact for integral ends below 2^53 / steps and whose quotient is
// correctly rounded, so that a point that is an integer is exactly that integer on every device
// (start + step * i, contracted to a fused multiply-add in a GPU kernel, could land just below it
// and then truncate one lower).
Tensor exact_points(double start, double end, int64_t steps) {
  if (steps == 1) return full({1}, start, DType::Float64);
  Tensor i = arange(0, static_cast<double>(steps), 1, DType::Float64);
  double last = static_cast<double>(steps - 1);
  return (start * (last - i) + end * i) / last;
}

DType linspace_compute(DType d) { return d == DType::Float64 || !is_floating(d) ? DType::Float64 : DType::Float32; }

void check_steps(const char* op, int64_t steps, DType dtype) {
  if (steps < 0) fail(op, "steps must be non-negative, not " + std::to_string(steps));
  if (dtype == DType::Bool) fail(op, "needs a numeric dtype, not bool");
  detail::check_shape(op, {steps}, dtype);
}

void check_probability(const char* op, double p, const Tensor& x) {
  if (!(p >= 0 && p <= 1)) fail(op, "p must be in [0, 1], not " + std::to_string(p), {&x});
}

}  // namespace

Tensor zeros_like(const Tensor& x, std::optional<DType> dtype) { return constant_like("zeros_like", x, 0, dtype); }
Tensor ones_like(const Tensor& x, std::optional<DType> dtype) { return constant_like("ones_like", x, 1, dtype); }
Tensor full_like(const Tensor& x, double value, std::optional<DType> dtype) {
  return constant_like("full_like", x, value, dtype);
}
// No uninitialized memory in a lazy runtime: empty_like is zeros (a generator, never stored).
Tensor empty_like(const Tensor& x, std::optional<DType> dtype) { return constant_like("empty_like", x, 0, dtype); }
Tensor rand_like(const Tensor& x, std::optional<DType> dtype) {
  detail::check_defined("rand_like", {&x});
  return detail::random(Op::Rand, "rand_like", x.shape(), dtype.value_or(x.dtype()), x.device());
}
Tensor randn_like(const Tensor& x, std::optional<DType> dtype) {
  detail::check_defined("randn_like", {&x});
  return detail::random(Op::Randn, "randn_like", x.shape(), dtype.value_or(x.dtype()), x.device());
}

Tensor eye(int64_t n, DType dtype) { return eye(n, n, dtype); }
Tensor eye(int64_t n, int64_t m, DType dtype) {
  detail::UserOp user("eye");
  if (n < 0 || m < 0) fail("eye", "sizes must be non-negative, not " + std::to_string(n) + " x " + std::to_string(m));
  detail::check_shape("eye", {n, m}, dtype);
  Tensor rows = reshape(arange(0, static_cast<double>(n), 1, DType::Int64), {n, 1});
  return cast(rows == arange(0, static_cast<double>(m), 1, DType::Int64), dtype);
}

Tensor linspace(double start, double end, int64_t steps, DType dtype) {
  check_finite("linspace", start, end);
  check_steps("linspace", steps, dtype);
  if (steps == 0) return zeros({0}, dtype);
  if (!is_floating(dtype)) return cast(exact_points(start, end, steps), dtype);
  return cast(linspace_in(start, end, steps, linspace_compute(dtype)), dtype);
}

Tensor logspace(double start, double end, int64_t steps, double base, DType dtype) {
  check_finite("logspace", start, end);
  check_steps("logspace", steps, dtype);
  if (steps == 0) return zeros({0}, dtype);
  DType c = linspace_compute(dtype);
  if (is_floating(dtype)) return cast(pow(full({}, base, c), linspace_in(start, end, steps, c)), dtype);
  // Integers truncate, as PyTorch's. A power that is an integer must come out as that integer,
  // but a GPU's pow may miss it by an ulp (pow(3.0, 1.0) gave 2.9999999999999996 on the H100, then
  // 2): within a few ulps of an integer, it is that integer.
  Tensor p = pow(full({}, base, c), exact_points(start, end, steps));
  Tensor r = round(p);
  return cast(where(abs(p - r) <= abs(r) * 1e-15, r, p), dtype);
}

// floor(u * (high - low)) + low over a float64 uniform u (53 bits), limited to high - 1 against
// rounding up; ranges past 2^53 would skip values, so they are refused.
Tensor randint(int64_t low, int64_t high, Shape shape, DType dtype) {
  if (high <= low) fail("randint", "needs low < high (got " + std::to_string(low) + ", " + std::to_string(high) + ")");
  constexpr int64_t kExact = int64_t{1} << 53;
  if (low < -kExact || high > kExact) fail("randint", "low and high must be within +-2^53");
  if (dtype == DType::Bool) fail("randint", "needs a numeric dtype, not bool");
  // PyTorch's check_from_to_in_range: low and high - 1 must be values of the dtype (integers that
  // a float dtype holds exactly: +-2^11 for float16, 2^8 for bfloat16, 2^24 for float32).
  const int64_t lim = dtype == DType::Int32     ? int64_t{INT32_MAX}
                      : dtype == DType::Float16  ? int64_t{1} << 11
                      : dtype == DType::BFloat16 ? int64_t{1} << 8
                      : dtype == DType::Float32  ? int64_t{1} << 24
                                                 : kExact;
  const int64_t lo_lim = dtype == DType::Int32 ? int64_t{INT32_MIN} : -lim;
  if (low < lo_lim || high - 1 > lim)
    fail("randint", "the range [" + std::to_string(low) + ", " + std::to_string(high) + ") does not fit " +
                        dtype_name(dtype) + " (its values run from " + std::to_string(lo_lim) + " to " +
                        std::to_string(lim) + ")");
  detail::check_shape("randint", shape, dtype);
  double range = static_cast<double>(high - low);
  Tensor u = detail::random(Op::Rand, "randint", std::move(shape), DType::Float64, default_device());
  Tensor k = minimum(floor(u * range), full({}, range - 1, DType::Float64));
  return cast(k + static_cast<double>(low), dtype);
}

// 1 with probability p, else 0, in p's dtype (PyTorch's bernoulli(p)). p outside [0, 1] is data
// and is not checked: p <= 0 gives 0, p >= 1 gives 1.
Tensor bernoulli(const Tensor& p) {
  detail::check_defined("bernoulli", {&p});
  if (!is_floating(p.dtype())) fail("bernoulli", "needs a floating dtype", {&p});
  Tensor u = detail::random(Op::Rand, "bernoulli", p.shape(), p.dtype(), p.device());
  return cast(u < p, p.dtype());
}
Tensor bernoulli(const Tensor& x, double p) {
  detail::check_defined("bernoulli", {&x});
  if (!is_floating(x.dtype())) fail("bernoulli", "needs a floating dtype", {&x});
  check_probability("bernoulli", p, x);
  Tensor u = detail::random(Op::Rand, "bernoulli", x.shape(), x.dtype(), x.device());
  return cast(u < p, x.dtype());
}

// x * mask / (1 - p) with mask ~ bernoulli(1 - p), as PyTorch; p = 1 gives x * 0 (NaN stays NaN).
Tensor dropout(const Tensor& x, double p, bool training) {
  detail::UserOp user("dropout");
  detail::check_defined("dropout", {&x});
  if (!is_floating(x.dtype())) fail("dropout", "needs a floating dtype", {&x});
  check_probability("dropout", p, x);
  if (!training || p == 0) return x;
  if (p == 1) return x * 0.0;
  Tensor u = detail::random(Op::Rand, "dropout", x.shape(), x.dtype(), x.device());
  Tensor scale = cast(where(u < 1 - p, Scalar(1 / (1 - p)), Scalar(0.0)), x.dtype());
  return x * scale;
}

// mean + std * randn, over the broadcast shape of the tensor arguments.
Tensor normal(const Tensor& mean, const Tensor& std) {
  detail::check_defined("normal", {&mean, &std});
  detail::check_same_device("normal", {&mean, &std});
  if (!is_floating(mean.dtype()) || !is_floating(std.dtype()))
    fail("normal", "needs floating mean and std", {&mean, &std});
  Shape shape = detail::broadcast_shapes("normal", mean, std);
  DType d = detail::promote(mean.dtype(), std.dtype());
  Tensor z = detail::random(Op::Randn, "normal", shape, d, mean.device());
  return cast(mean, d) + cast(std, d) * z;
}
Tensor normal(const Tensor& mean, double std) {
  detail::check_defined("normal", {&mean});
  if (!is_floating(mean.dtype())) fail("normal", "needs a floating mean", {&mean});
  if (!(std >= 0)) fail("normal", "std must be non-negative, not " + std::to_string(std), {&mean});
  return mean + std * detail::random(Op::Randn, "normal", mean.shape(), mean.dtype(), mean.device());
}
Tensor normal(double mean, const Tensor& std) {
  detail::check_defined("normal", {&std});
  if (!is_floating(std.dtype())) fail("normal", "needs a floating std", {&std});
  return mean + std * detail::random(Op::Randn, "normal", std.shape(), std.dtype(), std.device());
}
Tensor normal(double mean, double std, Shape shape, DType dtype) {
  if (!(std >= 0)) fail("normal", "std must be non-negative, not " + std::to_string(std));
  return mean + std * detail::random(Op::Randn, "normal", std::move(shape), dtype, default_device());
}

}  // namespace lf
