// Composite elementwise ops and reductions of issue 23 (lerp, clamp with tensor bounds, isclose,
// allclose, where of two numbers, any, all, count_nonzero, norm): recorded as primitives, so they
// fuse with their neighbours and need no backend code. Each checks its arguments first, so that an
// error names the op the user called rather than a primitive inside it.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "frontend/record.h"
#include "lazyfuse/ops.h"

namespace lf {
namespace {

using detail::fail;

// 16-bit floats compute in float32 and round once, as PyTorch's opmath does.
DType opmath(DType d) { return d == DType::Float16 || d == DType::BFloat16 ? DType::Float32 : d; }

void check_dims(const char* op, const std::vector<int64_t>& dims, const Tensor& x) {
  std::vector<int64_t> seen;
  for (int64_t d : dims) seen.push_back(detail::normalize_dim(op, d, x.dim(), x));
  std::sort(seen.begin(), seen.end());
  if (std::adjacent_find(seen.begin(), seen.end()) != seen.end())
    fail(op, "dim " + std::to_string(*std::adjacent_find(seen.begin(), seen.end())) + " appears more than once", {&x});
}

}  // namespace

// PyTorch's formula: start + w * (end - start) for |w| < 0.5, else end - (end - start) * (1 - w),
// which is exact at w = 0 and w = 1.
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  detail::check_defined("lerp", {&start, &end, &weight});
  detail::check_same_device("lerp", {&start, &end, &weight});
  if (!is_floating(start.dtype()) || end.dtype() != start.dtype() || weight.dtype() != start.dtype())
    fail("lerp", "needs start, end and weight of one floating dtype", {&start, &end, &weight});
  Shape shape = detail::broadcast_shapes("lerp", start, end);
  detail::broadcast_shapes("lerp", shape, weight.shape(), {&start, &end, &weight});
  DType c = opmath(start.dtype());
  Tensor s = cast(start, c), e = cast(end, c), w = cast(weight, c);
  Tensor diff = e - s;
  return cast(where(abs(w) < 0.5, s + w * diff, e - diff * (1 - w)), start.dtype());
}

Tensor lerp(const Tensor& start, const Tensor& end, Scalar weight) {
  detail::check_defined("lerp", {&start, &end});
  detail::check_same_device("lerp", {&start, &end});
  if (!is_floating(start.dtype()) || end.dtype() != start.dtype())
    fail("lerp", "needs start and end of one floating dtype", {&start, &end});
  detail::broadcast_shapes("lerp", start, end);
  double w = weight.to_double();
  DType c = opmath(start.dtype());
  Tensor s = cast(start, c), e = cast(end, c);
  Tensor diff = e - s;
  return cast(std::fabs(w) < 0.5 ? s + w * diff : e - diff * (1 - w), start.dtype());
}

// min(max(x, lo), hi), in the promoted dtype of all three; NaN in x or a bound propagates.
Tensor clamp(const Tensor& x, const std::optional<Tensor>& lo, const std::optional<Tensor>& hi) {
  detail::check_defined("clamp", {&x});
  if (!lo && !hi) fail("clamp", "needs at least one of min and max", {&x});
  DType d = x.dtype();
  Shape shape = x.shape();
  for (const std::optional<Tensor>* b : {&lo, &hi}) {
    if (!*b) continue;
    const Tensor& t = **b;
    detail::check_defined("clamp", {&t});
    detail::check_same_device("clamp", {&x, &t});
    if (t.dtype() == DType::Bool || x.dtype() == DType::Bool) fail("clamp", "is not defined for bool tensors", {&x, &t});
    shape = detail::broadcast_shapes("clamp", shape, t.shape(), {&x, &t});
    d = detail::promote(d, t.dtype());
  }
  if (x.dtype() == DType::Bool) fail("clamp", "is not defined for bool tensors", {&x});
  Tensor r = cast(x, d);
  if (lo) r = maximum(r, cast(*lo, d));
  if (hi) r = minimum(r, cast(*hi, d));
  return r;
}
Tensor clamp_min(const Tensor& x, const Tensor& lo) { return clamp(x, lo, std::nullopt); }
Tensor clamp_max(const Tensor& x, const Tensor& hi) { return clamp(x, std::nullopt, hi); }
Tensor clamp_min(const Tensor& x, Scalar lo) {
  detail::check_defined("clamp_min", {&x});
  if (x.dtype() == DType::Bool) fail("clamp_min", "is not defined for bool tensors", {&x});
  if (std::isnan(lo.to_double())) fail("clamp_min", "bound must not be NaN", {&x});
  return maximum(x, Tensor(detail::scalar_operand({}, lo, detail::promote_scalar(x.dtype(), lo.kind()), x.device())));
}
Tensor clamp_max(const Tensor& x, Scalar hi) {
  detail::check_defined("clamp_max", {&x});
  if (x.dtype() == DType::Bool) fail("clamp_max", "is not defined for bool tensors", {&x});
  if (std::isnan(hi.to_double())) fail("clamp_max", "bound must not be NaN", {&x});
  return minimum(x, Tensor(detail::scalar_operand({}, hi, detail::promote_scalar(x.dtype(), hi.kind()), x.device())));
}

// PyTorch's isclose: a == b, or (equal_nan) both NaN, or |a - b| finite and <= atol + |rtol * b|.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  detail::check_defined("isclose", {&a, &b});
  detail::check_same_device("isclose", {&a, &b});
  if (a.dtype() != b.dtype()) fail("isclose", "needs operands of one dtype", {&a, &b});
  if (!(rtol >= 0) || !(atol >= 0))
    fail("isclose", "rtol and atol must be non-negative (got rtol " + std::to_string(rtol) + ", atol " +
                        std::to_string(atol) + ")", {&a, &b});
  detail::broadcast_shapes("isclose", a, b);
  Tensor close = a == b;
  if (equal_nan && is_floating(a.dtype())) close = close || (isnan(a) && isnan(b));
  if (rtol == 0 && atol == 0) return close;
  Tensor x = a.dtype() == DType::Bool ? cast(a, DType::Float32) : a;
  Tensor y = b.dtype() == DType::Bool ? cast(b, DType::Float32) : b;
  Tensor allowed = abs(y * rtol) + atol;
  Tensor actual = abs(x - y);
  return close || (isfinite(actual) && actual <= allowed);
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  return all(isclose(a, b, rtol, atol, equal_nan)).item<bool>();
}

// Two numbers: float32 if either is a float, else int64 if either is an integer, else bool.
Tensor where(const Tensor& cond, Scalar a, Scalar b) {
  detail::check_defined("where", {&cond});
  if (cond.dtype() != DType::Bool) fail("where", "condition must be a bool tensor", {&cond});
  using K = Scalar::Kind;
  DType d = a.kind() == K::Float || b.kind() == K::Float ? DType::Float32
            : a.kind() == K::Int || b.kind() == K::Int   ? DType::Int64
                                                         : DType::Bool;
  return where(cond, Tensor(detail::full_like_shape({}, a, d, cond.device())),
               Tensor(detail::full_like_shape({}, b, d, cond.device())));
}

// ---- Reductions. NaN counts as true (it is not 0), as in PyTorch.
Tensor any(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  detail::check_defined("any", {&x});
  check_dims("any", dims, x);
  return sum(x != 0, std::move(dims), keepdim) > 0;
}
Tensor all(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  detail::check_defined("all", {&x});
  check_dims("all", dims, x);
  return sum(x == 0, std::move(dims), keepdim) == 0;
}
Tensor count_nonzero(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  detail::check_defined("count_nonzero", {&x});
  check_dims("count_nonzero", dims, x);
  return sum(x != 0, std::move(dims), keepdim);
}

// torch.linalg.vector_norm: p = 2: sqrt(sum(x^2)); 1: sum(|x|); inf: max(|x|); -inf: min(|x|);
// 0: the count of non-zeros; other p: sum(|x|^p)^(1/p). Computed in float32 for 16-bit floats and
// rounded once (x^2 of a float16 overflows past 256).
Tensor norm(const Tensor& x, double p, std::vector<int64_t> dims, bool keepdim) {
  detail::check_defined("norm", {&x});
  if (!is_floating(x.dtype())) fail("norm", "needs a floating dtype", {&x});
  if (std::isnan(p)) fail("norm", "p must not be NaN", {&x});
  check_dims("norm", dims, x);
  if (std::isinf(p) && x.numel() == 0)
    fail("norm", "of an empty tensor with p = " + std::string(p > 0 ? "inf" : "-inf") + " has no value", {&x});
  Tensor a = abs(cast(x, opmath(x.dtype())));
  Tensor r;
  if (p == 2) r = sqrt(sum(a * a, std::move(dims), keepdim));
  else if (p == 1) r = sum(a, std::move(dims), keepdim);
  else if (p == INFINITY) r = max(a, std::move(dims), keepdim);
  else if (p == -INFINITY) r = min(a, std::move(dims), keepdim);
  else if (p == 0) r = cast(sum(a != 0, std::move(dims), keepdim), a.dtype());
  else r = pow(sum(pow(a, p), std::move(dims), keepdim), 1.0 / p);
  return cast(r, x.dtype());
}

Tensor norm(const Tensor& x, const std::string& p, std::vector<int64_t> dims, bool keepdim) {
  if (p != "fro") fail("norm", "p must be a number or \"fro\", not \"" + p + "\"", {&x});
  return norm(x, 2.0, std::move(dims), keepdim);  // the Frobenius norm is the 2-norm of the entries
}

}  // namespace lf
