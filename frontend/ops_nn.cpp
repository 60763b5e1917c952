// Neural-network building blocks, recorded as primitives (reductions broadcast back over rows),
// and matmul with numpy's 1-D / 2-D / batched rules.
#include <algorithm>

#include "frontend/complex.h"
#include "frontend/record.h"
#include "runtime/checked.h"
#include "lazyfuse/ops.h"

namespace lf {
namespace {

using detail::fail;

Tensor as_float(const char* op, const Tensor& x) {
  detail::check_defined(op, {&x});
  if (x.dtype() == DType::Bool) fail(op, "is not defined for bool tensors", {&x});
  return is_floating(x.dtype()) ? x : detail::cast_to(x, DType::Float32);
}

void check_affine(const char* op, const Tensor& x, const Tensor& p, const Shape& expected, const char* what) {
  if (!p.defined()) return;
  if (p.shape() != expected)
    fail(op, std::string(what) + " must have shape " + shape_str(expected) + ", not " + shape_str(p.shape()), {&x, &p});
  detail::check_same_device(op, {&x, &p});
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  detail::UserOp user("softmax");
  Tensor f = as_float("softmax", x);
  dim = detail::normalize_dim("softmax", dim, f.dim(), f);
  if (f.dim() == 0) {
    Tensor e = exp(f - f);  // 1, or NaN for NaN and inf (x - max is NaN there)
    return e / e;
  }
  if (f.shape()[dim] == 0) return f;
  Tensor e = exp(f - max(f, {dim}, true));
  return e / sum(e, {dim}, true);
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  detail::UserOp user("log_softmax");
  Tensor f = as_float("log_softmax", x);
  dim = detail::normalize_dim("log_softmax", dim, f.dim(), f);
  if (f.dim() == 0) return f - f;
  if (f.shape()[dim] == 0) return f;
  Tensor shifted = f - max(f, {dim}, true);
  return shifted - log(sum(exp(shifted), {dim}, true));
}

Tensor layer_norm(const Tensor& x, int64_t normalized_dims, const Tensor& weight, const Tensor& bias, double eps) {
  detail::UserOp user("layer_norm");
  detail::check_defined("layer_norm", {&x});
  if (normalized_dims < 1 || normalized_dims > x.dim()) {
    fail("layer_norm", "normalized_dims must be in [1, " + std::to_string(x.dim()) + "], not " +
                           std::to_string(normalized_dims),
         {&x});
  }
  Shape norm_shape(x.shape().end() - normalized_dims, x.shape().end());
  check_affine("layer_norm", x, weight, norm_shape, "weight");
  check_affine("layer_norm", x, bias, norm_shape, "bias");
  Tensor f = as_float("layer_norm", x);
  std::vector<int64_t> dims;
  for (int64_t d = f.dim() - normalized_dims; d < f.dim(); ++d) dims.push_back(d);
  detail::Moments mo = detail::moments(f, dims);
  Tensor var = mo.sum_sq / static_cast<double>(mo.n);  // biased, like PyTorch's layer_norm
  Tensor y = mo.centered * rsqrt(var + eps);
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps) {
  detail::UserOp user("layer_norm");
  detail::check_defined("layer_norm", {&x});
  int64_t k = static_cast<int64_t>(normalized_shape.size());
  bool ok = k >= 1 && k <= x.dim() && std::equal(normalized_shape.begin(), normalized_shape.end(), x.shape().end() - k);
  if (!ok) {
    fail("layer_norm", "normalized_shape " + shape_str(normalized_shape) + " must match the last dims of the input",
         {&x});
  }
  return layer_norm(x, k, weight, bias, eps);
}

Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps) {
  detail::UserOp user("rms_norm");
  detail::check_defined("rms_norm", {&x});
  if (x.dim() == 0) fail("rms_norm", "needs at least one dim", {&x});
  check_affine("rms_norm", x, weight, {x.shape().back()}, "weight");
  Tensor f = as_float("rms_norm", x);
  Tensor y = f * rsqrt(mean(f * f, {-1}, true) + eps);
  return weight.defined() ? y * weight : y;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  detail::check_defined("matmul", {&a, &b});
  detail::check_same_device("matmul", {&a, &b});
  if (a.dim() == 0 || b.dim() == 0) fail("matmul", "needs operands with at least one dim", {&a, &b});
  if (is_complex(a.dtype()) || is_complex(b.dtype())) return detail::complex_matmul(a, b);
  DType d = detail::promote(a.dtype(), b.dtype());
  if (d == DType::Bool) fail("matmul", "is not defined for bool tensors", {&a, &b});
  // numpy: a 1-D left operand is a row, a 1-D right operand a column; both dims vanish afterwards.
  Tensor x = a.dim() == 1 ? unsqueeze(a, 0) : a;
  Tensor y = b.dim() == 1 ? unsqueeze(b, 1) : b;
  int64_t m = x.shape()[x.dim() - 2], k = x.shape()[x.dim() - 1];
  int64_t k2 = y.shape()[y.dim() - 2], n = y.shape()[y.dim() - 1];
  if (k != k2) {
    fail("matmul", "inner dims differ: " + shape_str(a.shape()) + " @ " + shape_str(b.shape()) + " (" +
                       std::to_string(k) + " vs " + std::to_string(k2) + ")",
         {&a, &b});
  }
  Shape batch = detail::broadcast_shapes("matmul", Shape(x.shape().begin(), x.shape().end() - 2),
                                         Shape(y.shape().begin(), y.shape().end() - 2), {&a, &b});
  Shape xs = batch, ys = batch, out = batch;
  xs.insert(xs.end(), {m, k});
  ys.insert(ys.end(), {k, n});
  out.insert(out.end(), {m, n});
  for (const Shape* s : {&xs, &ys, &out}) {
    std::string why = rt::shape_problem(*s, dtype_size(d));
    if (!why.empty()) fail("matmul", why, {&a, &b});
  }
  x = detail::broadcast_to(detail::cast_to(x, d), xs);
  y = detail::broadcast_to(detail::cast_to(y, d), ys);
  Tensor r = detail::record(ir::Op::Matmul, d, a.device(), out, {&x, &y});
  if (a.dim() == 1) r = squeeze(r, -2);
  if (b.dim() == 1) r = squeeze(r, -1);
  return r;
}

}  // namespace lf

// The Tensor&& forms: the temporary moves into a const local, whose handle is released when the
// function returns (see ops_reduce.cpp).
namespace lf {

Tensor softmax(Tensor&& x, int64_t dim) {
  const Tensor t = std::move(x);
  return softmax(t, dim);
}
Tensor log_softmax(Tensor&& x, int64_t dim) {
  const Tensor t = std::move(x);
  return log_softmax(t, dim);
}
Tensor layer_norm(Tensor&& x, int64_t normalized_dims, const Tensor& weight, const Tensor& bias, double eps) {
  const Tensor t = std::move(x);
  return layer_norm(t, normalized_dims, weight, bias, eps);
}
Tensor layer_norm(Tensor&& x, const Shape& normalized_shape, const Tensor& weight, const Tensor& bias, double eps) {
  const Tensor t = std::move(x);
  return layer_norm(t, normalized_shape, weight, bias, eps);
}
Tensor rms_norm(Tensor&& x, const Tensor& weight, double eps) {
  const Tensor t = std::move(x);
  return rms_norm(t, weight, eps);
}

}  // namespace lf
