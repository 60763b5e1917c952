// The products and integrals around einsum (issue 49): tensordot, outer, kron, cross, dot, vdot,
// trace, diag, diag_embed, trapezoid, cumulative_trapezoid and cdist, with PyTorch's semantics, each
// a few existing ops (so they fuse and lf::grad differentiates them).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "frontend/record.h"
#include "lazyfuse/complex.h"
#include "lazyfuse/einsum.h"
#include "lazyfuse/ops.h"

namespace lf {
namespace {

using detail::fail;

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

void check_not_bool(const char* op, const Tensor& a, const Tensor& b) {
  if (a.dtype() == DType::Bool || b.dtype() == DType::Bool) fail(op, "is not defined for bool tensors", {&a, &b});
}

void check_pair(const char* op, const Tensor& a, const Tensor& b) {
  detail::check_defined(op, {&a, &b});
  detail::check_same_device(op, {&a, &b});
}

// 16-bit floats compute in float32 and round once, as PyTorch's opmath does.
DType opmath(DType d) { return d == DType::Float16 || d == DType::BFloat16 ? DType::Float32 : d; }

Tensor vector_dot(const char* op, const Tensor& a, const Tensor& b) {
  check_pair(op, a, b);
  if (a.dim() != 1 || b.dim() != 1) fail(op, "needs two 1-D tensors", {&a, &b});
  if (a.size(0) != b.size(0)) fail(op, "needs tensors of one size", {&a, &b});
  check_not_bool(op, a, b);
  return matmul(a, b);
}

Tensor floating(const Tensor& y) { return is_floating(y.dtype()) ? y : detail::cast_to(y, DType::Float32); }

// y[1:] + y[:-1] along dim (slices clamp, so an empty dim stays empty).
Tensor pair_sums(const Tensor& y, int64_t dim) { return slice(y, dim, 1, INT64_MAX) + slice(y, dim, 0, -1); }

// The spacings x[1:] - x[:-1] along y's dim (PyTorch's rule): a 1-D x holds one point per
// sample; any other x broadcasts with y (a lower rank gains leading dims of size 1).
Tensor spacings(const char* op, const Tensor& y, const Tensor& x, int64_t dim) {
  check_pair(op, y, x);
  check_not_bool(op, y, x);
  if (y.dim() == 0) fail(op, "needs y with at least one dim", {&y, &x});
  dim = detail::normalize_dim(op, dim, y.dim(), y);
  Tensor v = x;
  if (x.dim() == 1) {
    if (x.size(0) != y.size(dim)) fail(op, "needs one x for each sample along dim " + std::to_string(dim), {&y, &x});
    Shape view(static_cast<size_t>(y.dim()), 1);
    view[static_cast<size_t>(dim)] = x.size(0);
    v = reshape(x, view);
  } else if (x.dim() < y.dim()) {
    Shape view(static_cast<size_t>(y.dim() - x.dim()), 1);
    view.insert(view.end(), x.shape().begin(), x.shape().end());
    v = reshape(x, view);
  }
  if (dim >= v.dim()) fail(op, "needs x with a dim " + std::to_string(dim), {&y, &x});
  Tensor dx = slice(v, dim, 1, INT64_MAX) - slice(v, dim, 0, -1);
  Shape pairs = y.shape();
  pairs[static_cast<size_t>(dim)] = std::max<int64_t>(0, y.size(dim) - 1);
  detail::broadcast_shapes(op, dx.shape(), pairs, {&y, &x});
  return dx;
}

}  // namespace

Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims) {
  check_pair("tensordot", a, b);
  if (dims < 0 || dims > std::min(a.dim(), b.dim()))
    fail("tensordot",
         "dims must be in [0, " + std::to_string(std::min(a.dim(), b.dim())) + "], not " + std::to_string(dims),
         {&a, &b});
  std::vector<int64_t> da, db;
  for (int64_t i = 0; i < dims; ++i) da.push_back(a.dim() - dims + i), db.push_back(i);
  return tensordot(a, b, da, db);
}

Tensor tensordot(const Tensor& a, const Tensor& b, const std::vector<int64_t>& dims_a,
                 const std::vector<int64_t>& dims_b) {
  check_pair("tensordot", a, b);
  check_not_bool("tensordot", a, b);
  if (dims_a.size() != dims_b.size())
    fail("tensordot", "dims " + list_str(dims_a) + " and " + list_str(dims_b) + " differ in length", {&a, &b});
  std::vector<int64_t> da, db;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    da.push_back(detail::normalize_dim("tensordot", dims_a[i], a.dim(), a));
    db.push_back(detail::normalize_dim("tensordot", dims_b[i], b.dim(), b));
    if (std::count(da.begin(), da.end(), da.back()) > 1 || std::count(db.begin(), db.end(), db.back()) > 1)
      fail("tensordot", "a dim appears twice in " + list_str(dims_a) + " or " + list_str(dims_b), {&a, &b});
    if (a.size(da.back()) != b.size(db.back()))
      fail("tensordot",
           "contracted dims differ in size: dim " + std::to_string(da.back()) + " of a has " +
               std::to_string(a.size(da.back())) + ", dim " + std::to_string(db.back()) + " of b has " +
               std::to_string(b.size(db.back())),
           {&a, &b});
  }
  // a as [free_a, K] @ b as [K, free_b]: one matmul.
  std::vector<int64_t> pa, pb = db;
  Shape out;
  int64_t k = 1, m = 1, n = 1;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (std::find(da.begin(), da.end(), d) == da.end()) pa.push_back(d), out.push_back(a.size(d)), m *= a.size(d);
  for (int64_t d : da) pa.push_back(d), k *= a.size(d);
  for (int64_t d = 0; d < b.dim(); ++d)
    if (std::find(db.begin(), db.end(), d) == db.end()) pb.push_back(d), out.push_back(b.size(d)), n *= b.size(d);
  return reshape(matmul(reshape(permute(a, pa), {m, k}), reshape(permute(b, pb), {k, n})), out);
}

Tensor outer(const Tensor& a, const Tensor& b) {
  check_pair("outer", a, b);
  if (a.dim() != 1 || b.dim() != 1) fail("outer", "needs two 1-D tensors", {&a, &b});
  Tensor column = unsqueeze(a, 1), row = unsqueeze(b, 0);
  return a.dtype() == DType::Bool && b.dtype() == DType::Bool ? column && row : column * row;
}

Tensor kron(const Tensor& a, const Tensor& b) {
  check_pair("kron", a, b);
  size_t r = static_cast<size_t>(std::max(a.dim(), b.dim()));
  Shape sa(r - a.shape().size(), 1), sb(r - b.shape().size(), 1);
  sa.insert(sa.end(), a.shape().begin(), a.shape().end());
  sb.insert(sb.end(), b.shape().begin(), b.shape().end());
  // a as [a0, 1, a1, 1, ...] times b as [1, b0, 1, b1, ...] is [a0, b0, a1, b1, ...]: merge the pairs.
  Shape ia, ib, out;
  for (size_t d = 0; d < r; ++d) {
    ia.insert(ia.end(), {sa[d], 1});
    ib.insert(ib.end(), {1, sb[d]});
    out.push_back(sa[d] * sb[d]);
  }
  return reshape(reshape(a, ia) * reshape(b, ib), out);
}

Tensor cross(const Tensor& a, const Tensor& b, int64_t dim) {
  check_pair("cross", a, b);
  check_not_bool("cross", a, b);
  Shape shape = detail::broadcast_shapes("cross", a, b);
  int64_t r = static_cast<int64_t>(shape.size());
  if (r == 0) fail("cross", "needs tensors with at least one dim", {&a, &b});
  dim = detail::normalize_dim("cross", dim, r, a.dim() == r ? a : b);
  int64_t from_end = dim - r;  // the dim counted from the end, for each operand's own rank
  for (const Tensor* t : {&a, &b})
    if (t->dim() + from_end < 0 || t->size(from_end) != 3)
      fail("cross", "needs size 3 along dim " + std::to_string(dim) + " in both tensors", {&a, &b});
  auto part = [&](const Tensor& t, int64_t i) { return narrow(t, t.dim() + from_end, i, 1); };
  return cat({part(a, 1) * part(b, 2) - part(a, 2) * part(b, 1), part(a, 2) * part(b, 0) - part(a, 0) * part(b, 2),
              part(a, 0) * part(b, 1) - part(a, 1) * part(b, 0)},
             dim);
}

Tensor dot(const Tensor& a, const Tensor& b) { return vector_dot("dot", a, b); }
Tensor vdot(const Tensor& a, const Tensor& b) {
  detail::check_defined("vdot", {&a, &b});
  return vector_dot("vdot", conj(a), b);  // conjugates the first (numpy's and PyTorch's vdot)
}

Tensor trace(const Tensor& x) {
  detail::check_defined("trace", {&x});
  if (x.dim() != 2) fail("trace", "needs a 2-D tensor", {&x});
  return sum(diagonal(x));
}

Tensor diag(const Tensor& x, int64_t diagonal) {
  detail::UserOp user("diag");
  detail::check_defined("diag", {&x});
  if (x.dim() == 1) return diag_embed(x, diagonal);
  if (x.dim() == 2) return lf::diagonal(x, diagonal);
  fail("diag", "needs a 1-D or 2-D tensor", {&x});
}

Tensor diag_embed(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  detail::UserOp user("diag_embed");
  detail::check_defined("diag_embed", {&x});
  if (x.dim() == 0) fail("diag_embed", "needs a tensor with at least one dim", {&x});
  int64_t r = x.dim() + 1;
  dim1 = detail::normalize_dim("diag_embed", dim1, r, x);
  dim2 = detail::normalize_dim("diag_embed", dim2, r, x);
  if (dim1 == dim2) fail("diag_embed", "dim1 and dim2 must differ (both " + std::to_string(dim1) + ")", {&x});
  // -INT64_MIN does not exist; any offset that large gives a dim no tensor can have.
  if (offset == std::numeric_limits<int64_t>::min())
    fail("diag_embed", "offset " + std::to_string(offset) + " gives a dim too large", {&x});
  int64_t n = x.size(-1), k = std::abs(offset);
  // x on the main diagonal of an n x n plane (where, not a multiply: NaN and inf stay on the
  // diagonal), shifted to the offset-th by padding k zero rows and columns.
  Shape plane{n, n};
  Tensor on_diagonal = detail::coord(plane, 0, x.device()) == detail::coord(plane, 1, x.device());
  Tensor m = where(on_diagonal, unsqueeze(x, -2), detail::full_like_shape({}, 0, x.dtype(), x.device()));
  m = pad(m, offset >= 0 ? std::vector<int64_t>{k, 0, 0, k} : std::vector<int64_t>{0, k, k, 0});
  return movedim(m, {r - 2, r - 1}, {dim1, dim2});
}

Tensor trapezoid(const Tensor& y, double dx, int64_t dim) {
  detail::check_defined("trapezoid", {&y});
  if (y.dim() == 0) fail("trapezoid", "needs a tensor with at least one dim", {&y});
  dim = detail::normalize_dim("trapezoid", dim, y.dim(), y);
  Tensor f = floating(y);
  if (f.size(dim) == 0) return sum(f, {dim}) * dx;
  // PyTorch's form for a constant spacing: (sum(y) - (y[0] + y[-1]) / 2) * dx, one reduction.
  return (sum(f, {dim}) - (select(f, dim, 0) + select(f, dim, -1)) * 0.5) * dx;
}

Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  Tensor dx = spacings("trapezoid", y, x, dim);
  dim = detail::normalize_dim("trapezoid", dim, y.dim(), y);
  return sum(dx * pair_sums(y, dim), {dim}) / 2;
}

Tensor cumulative_trapezoid(const Tensor& y, double dx, int64_t dim) {
  detail::check_defined("cumulative_trapezoid", {&y});
  if (y.dim() == 0) fail("cumulative_trapezoid", "needs a tensor with at least one dim", {&y});
  dim = detail::normalize_dim("cumulative_trapezoid", dim, y.dim(), y);
  return cumsum(dx / 2 * pair_sums(floating(y), dim), dim);
}

Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  Tensor dx = spacings("cumulative_trapezoid", y, x, dim);
  dim = detail::normalize_dim("cumulative_trapezoid", dim, y.dim(), y);
  return cumsum(dx * pair_sums(y, dim), dim) / 2;
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p) {
  check_pair("cdist", x1, x2);
  if (x1.dim() < 2 || x2.dim() < 2) fail("cdist", "needs tensors with at least 2 dims", {&x1, &x2});
  if (!is_floating(x1.dtype()) || !is_floating(x2.dtype())) fail("cdist", "needs floating dtypes", {&x1, &x2});
  if (x1.size(-1) != x2.size(-1)) fail("cdist", "needs rows of one length (the last dims differ)", {&x1, &x2});
  if (!(p >= 0)) fail("cdist", "needs p >= 0, not " + std::to_string(p), {&x1, &x2});
  DType dtype = detail::promote(x1.dtype(), x2.dtype()), c = opmath(dtype);
  Shape out = detail::broadcast_shapes("cdist", Shape(x1.shape().begin(), x1.shape().end() - 2),
                                       Shape(x2.shape().begin(), x2.shape().end() - 2), {&x1, &x2});
  int64_t rows1 = x1.size(-2), rows2 = x2.size(-2);
  out.insert(out.end(), {rows1, rows2});
  if (x1.size(-1) == 0 || shape_numel(out) == 0) return detail::full_like_shape(out, 0, dtype, x1.device());
  Tensor a = detail::cast_to(x1, c), b = detail::cast_to(x2, c);
  // A distance of 0 gets gradient 0 (PyTorch's), not 0 / 0: the root only of positive sums.
  auto root = [](const Tensor& s, double q) {
    Tensor positive = s > 0;
    Tensor safe = where(positive, s, 1);
    return where(positive, q == 2 ? sqrt(safe) : pow(safe, 1 / q), 0);
  };
  Tensor r;
  if (p == 2 && (rows1 > 25 || rows2 > 25)) {
    // PyTorch's matmul form for many rows: [-2 a, |a|^2, 1] @ [b, 1, |b|^2]^T.
    Tensor na = sum(a * a, {-1}, true), nb = sum(b * b, {-1}, true);
    Tensor left = cat({a * -2, na, ones_like(na)}, -1), right = cat({b, ones_like(nb), nb}, -1);
    r = sqrt(clamp_min(matmul(left, transpose(right, -1, -2)), 1e-30));
  } else {
    Tensor diff = unsqueeze(a, -2) - unsqueeze(b, -3);  // [..., P, R, M], fused into the reduction
    if (p == 0)
      r = cast(sum(diff != 0, {-1}), c);
    else if (p == 1)
      r = sum(abs(diff), {-1});
    else if (p == 2)
      r = root(sum(diff * diff, {-1}), 2);
    else if (std::isinf(p))
      r = max(abs(diff), {-1});
    else
      r = root(sum(pow(abs(diff), p), {-1}), p);
  }
  return detail::cast_to(r, dtype);
}

}  // namespace lf
