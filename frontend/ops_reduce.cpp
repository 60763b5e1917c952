// Reductions. sum/prod/max/min/argmax/argmin are primitives; mean, var, std and logsumexp are
// recorded as primitives so the fuser sees through them.
#include <algorithm>

#include "frontend/complex.h"
#include "frontend/record.h"
#include "lazyfuse/ops.h"

namespace lf {
namespace {

using detail::fail;
using detail::record;
using ir::Op;

// Sorted, unique, non-negative dims; empty means all. Rank-0 tensors accept dim 0 or -1.
std::vector<int64_t> normalize_dims(const char* op, std::vector<int64_t> dims, const Tensor& x) {
  int64_t rank = x.dim();
  if (dims.empty()) {
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
    return dims;
  }
  for (int64_t& d : dims) d = detail::normalize_dim(op, d, rank, x);
  std::sort(dims.begin(), dims.end());
  if (std::adjacent_find(dims.begin(), dims.end()) != dims.end())
    fail(op, "dim " + std::to_string(*std::adjacent_find(dims.begin(), dims.end())) + " appears more than once", {&x});
  if (rank == 0) dims.clear();
  return dims;
}

Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& dims, bool keepdim) {
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d) {
    bool reduced = std::binary_search(dims.begin(), dims.end(), static_cast<int64_t>(d));
    if (!reduced) out.push_back(shape[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

int64_t reduced_count(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= shape[d];
  return n;
}

Tensor reduce(Op op, const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  const char* name = ir::op_name(op);
  detail::check_defined(name, {&x});
  dims = normalize_dims(name, std::move(dims), x);
  if (is_complex(x.dtype())) return detail::complex_reduce(op, x, dims, keepdim);
  Tensor in = x;
  DType out = x.dtype();
  if (op == Op::Sum || op == Op::Prod) {
    if (!is_floating(x.dtype())) in = detail::cast_to(x, DType::Int64);  // like PyTorch: integer sums are int64
    out = in.dtype();
  }
  if (op == Op::Max || op == Op::Min || op == Op::ArgMax || op == Op::ArgMin) {
    if (reduced_count(x.shape(), dims) == 0)
      fail(name, "of an empty tensor or dim has no value (reduced over dims of size 0)", {&x});
  }
  if (op == Op::ArgMax || op == Op::ArgMin) out = DType::Int64;
  ir::Attrs a;
  a.dims = dims;
  a.keepdim = keepdim;
  return record(op, out, x.device(), reduced_shape(x.shape(), dims, keepdim), {&in}, a);
}

Tensor arg_reduce(Op op, const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  const char* name = ir::op_name(op);
  detail::check_defined(name, {&x});
  if (dims.size() > 1) fail(name, "takes at most one dim", {&x});
  if (!dims.empty() || x.dim() <= 1) return reduce(op, x, dims, keepdim);
  // No dim: the index into the flattened tensor.
  Tensor r = reduce(op, flatten(x), {0}, false);
  return keepdim ? reshape(r, Shape(static_cast<size_t>(x.dim()), 1)) : r;
}

Tensor as_float(const char* op, const Tensor& x) {
  detail::check_defined(op, {&x});
  if (x.dtype() == DType::Bool) fail(op, "is not defined for bool tensors", {&x});
  return is_floating(x.dtype()) ? x : detail::cast_to(x, DType::Float32);
}

}  // namespace

Tensor sum(const Tensor& x, std::vector<int64_t> dims, bool keepdim) { return reduce(Op::Sum, x, std::move(dims), keepdim); }
Tensor prod(const Tensor& x, std::vector<int64_t> dims, bool keepdim) { return reduce(Op::Prod, x, std::move(dims), keepdim); }
Tensor max(const Tensor& x, std::vector<int64_t> dims, bool keepdim) { return reduce(Op::Max, x, std::move(dims), keepdim); }
Tensor min(const Tensor& x, std::vector<int64_t> dims, bool keepdim) { return reduce(Op::Min, x, std::move(dims), keepdim); }
Tensor argmax(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  return arg_reduce(Op::ArgMax, x, std::move(dims), keepdim);
}
Tensor argmin(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  return arg_reduce(Op::ArgMin, x, std::move(dims), keepdim);
}

Tensor mean(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  if (x.defined() && is_complex(x.dtype())) {
    std::vector<int64_t> d = normalize_dims("mean", dims, x);
    return sum(x, d, keepdim) / reduced_count(x.shape(), d);
  }
  Tensor f = as_float("mean", x);
  std::vector<int64_t> d = normalize_dims("mean", dims, f);
  // A 16-bit mean sums and divides in float32 and rounds once, as PyTorch's: a float16 sum past
  // 65504 would be inf, and a bfloat16 one keeps 8 bits. The casts are part of the sum's kernel.
  const DType dt = f.dtype();
  if (dt == DType::Float16 || dt == DType::BFloat16)
    return detail::cast_to(sum(detail::cast_to(f, DType::Float32), d, keepdim) / reduced_count(f.shape(), d), dt);
  return sum(f, d, keepdim) / reduced_count(f.shape(), d);  // an empty mean is 0 / 0 = NaN
}

Tensor var(const Tensor& x, std::vector<int64_t> dims, bool keepdim, int64_t correction) {
  detail::UserOp user("var");
  Tensor f = as_float("var", x);
  if (correction < 0) fail("var", "correction must be >= 0, not " + std::to_string(correction), {&x});
  std::vector<int64_t> d = normalize_dims("var", dims, f);
  detail::Moments mo = detail::moments(f, d);
  Tensor sum_sq = keepdim ? mo.sum_sq : reshape(mo.sum_sq, reduced_shape(f.shape(), d, false));
  // Fewer values than the correction divides by 0 (inf or NaN), as PyTorch does.
  return sum_sq / std::max<int64_t>(0, mo.n - correction);
}

detail::Moments detail::moments(const Tensor& x, const std::vector<int64_t>& dims, Tensor* mean_out) {
  const int64_t n = reduced_count(x.shape(), dims);
  Tensor m = mean(x, dims, true);
  Tensor c = x - m;
  Tensor e = mean(c, dims, true);
  if (mean_out) *mean_out = m + e;
  // At least 0; NaN stays NaN. A sum of squares that overflowed (values beyond about 1e19 apart,
  // or equal ones beyond about 1e25 in float32) stays inf rather than inf - inf: a norm then
  // scales by rsqrt(inf) = 0, which is what PyTorch's overflowing variance gives too.
  Tensor s2 = sum(c * c, dims, true);
  Tensor sum_sq = where(isinf(s2), s2, clamp_min(s2 - e * e * static_cast<double>(n), 0.0));
  return {c - e, sum_sq, n};
}

Tensor std(const Tensor& x, std::vector<int64_t> dims, bool keepdim, int64_t correction) {
  detail::UserOp user("std");
  return sqrt(var(x, std::move(dims), keepdim, correction));
}

Tensor logsumexp(const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  detail::UserOp user("logsumexp");
  Tensor f = as_float("logsumexp", x);
  std::vector<int64_t> d = normalize_dims("logsumexp", dims, f);
  if (reduced_count(f.shape(), d) == 0) return log(sum(exp(f), d, keepdim));  // log(0) = -inf
  // Shift by the max for range; an infinite max shifts by 0 so that all -inf gives -inf, not NaN.
  Tensor m = max(f, d, true);
  Tensor shift = where(isinf(m), 0.0, m);
  Tensor r = log(sum(exp(f - shift), d, true)) + shift;
  return keepdim ? r : reshape(r, reduced_shape(f.shape(), d, false));
}

}  // namespace lf

// The Tensor&& forms: move the temporary into a local (a const lvalue, so the call below takes the
// const Tensor& form), whose handle is released when the function returns.
namespace lf {

Tensor sum(Tensor&& x, std::vector<int64_t> dims, bool keepdim) {
  const Tensor t = std::move(x);
  return sum(t, std::move(dims), keepdim);
}
Tensor mean(Tensor&& x, std::vector<int64_t> dims, bool keepdim) {
  const Tensor t = std::move(x);
  return mean(t, std::move(dims), keepdim);
}
Tensor prod(Tensor&& x, std::vector<int64_t> dims, bool keepdim) {
  const Tensor t = std::move(x);
  return prod(t, std::move(dims), keepdim);
}
Tensor max(Tensor&& x, std::vector<int64_t> dims, bool keepdim) {
  const Tensor t = std::move(x);
  return max(t, std::move(dims), keepdim);
}
Tensor min(Tensor&& x, std::vector<int64_t> dims, bool keepdim) {
  const Tensor t = std::move(x);
  return min(t, std::move(dims), keepdim);
}
Tensor argmax(Tensor&& x, std::vector<int64_t> dims, bool keepdim) {
  const Tensor t = std::move(x);
  return argmax(t, std::move(dims), keepdim);
}
Tensor argmin(Tensor&& x, std::vector<int64_t> dims, bool keepdim) {
  const Tensor t = std::move(x);
  return argmin(t, std::move(dims), keepdim);
}
Tensor var(Tensor&& x, std::vector<int64_t> dims, bool keepdim, int64_t correction) {
  const Tensor t = std::move(x);
  return var(t, std::move(dims), keepdim, correction);
}
Tensor std(Tensor&& x, std::vector<int64_t> dims, bool keepdim, int64_t correction) {
  const Tensor t = std::move(x);
  return std(t, std::move(dims), keepdim, correction);
}
Tensor logsumexp(Tensor&& x, std::vector<int64_t> dims, bool keepdim) {
  const Tensor t = std::move(x);
  return logsumexp(t, std::move(dims), keepdim);
}

}  // namespace lf
