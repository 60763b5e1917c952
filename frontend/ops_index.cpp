// Indexing, scatter, scans and sorting (issue 23). The gathers (index_select, gather,
// take_along_dim, take, embedding) record one Gather node over views of their operands; scatters
// record ScatterAdd; masked_fill and one_hot are elementwise composites; sort and topk are an
// argsort followed by a gather.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "codegen/ir/indexing.h"
#include "frontend/record.h"
#include "lazyfuse/autograd.h"
#include "lazyfuse/ops.h"

namespace lf {
namespace detail {

Tensor record_gather(const Tensor& src, int64_t axis, const Tensor& index, ir::GatherOp op) {
  ir::Attrs a;
  a.axis = axis;
  a.start = static_cast<int64_t>(op);
  return record(ir::Op::Gather, src.dtype(), src.device(), index.shape(), {&src, &index}, std::move(a));
}

}  // namespace detail

namespace {

using detail::fail;
using detail::record;
using detail::record_gather;
using ir::GatherOp;
using ir::Op;

void check_index(const char* op, const Tensor& index, std::initializer_list<const Tensor*> args) {
  if (index.dtype() != DType::Int64 && index.dtype() != DType::Int32)
    fail(op, "indices must be int32 or int64, not " + std::string(dtype_name(index.dtype())), args);
}


Tensor as_1d(const Tensor& x) { return x.dim() == 0 ? reshape(x, {1}) : x; }

// The smallest and largest of a non-empty integer x, read back in one sync point (one flush, one
// copy to the host) instead of one each.
std::pair<int64_t, int64_t> min_max(const Tensor& x) {
  std::vector<int64_t> v = stack({lf::min(x), lf::max(x)}).to_vector<int64_t>();
  return {v[0], v[1]};
}

}  // namespace

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  detail::check_defined("index_select", {&x, &index});
  detail::check_same_device("index_select", {&x, &index});
  check_index("index_select", index, {&x, &index});
  if (index.dim() > 1) fail("index_select", "index must be 1-D or 0-D", {&x, &index});
  Tensor src = as_1d(x);
  dim = detail::normalize_dim("index_select", dim, src.dim(), src);
  Shape shape = src.shape();
  shape[dim] = index.numel();
  Shape along(shape.size(), 1);
  along[dim] = index.numel();
  Tensor idx = expand(reshape(index, along), shape);
  Tensor out = record_gather(src, dim, idx, GatherOp::IndexSelect);
  return x.dim() == 0 ? reshape(out, {}) : out;
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  detail::check_defined("gather", {&x, &index});
  detail::check_same_device("gather", {&x, &index});
  check_index("gather", index, {&x, &index});
  if (index.dim() != x.dim())
    fail("gather", "index must have the rank of x (" + std::to_string(x.dim()) + ")", {&x, &index});
  Tensor src = as_1d(x), idx = as_1d(index);
  dim = detail::normalize_dim("gather", dim, src.dim(), src);
  for (int64_t d = 0; d < src.dim(); ++d) {
    if (d == dim) continue;
    if (idx.size(d) > src.size(d))
      fail("gather", "index is larger than x in dim " + std::to_string(d) + " (" + std::to_string(idx.size(d)) +
                         " vs " + std::to_string(src.size(d)) + ")",
           {&x, &index});
    if (idx.size(d) < src.size(d)) src = slice(src, d, 0, idx.size(d));
  }
  Tensor out = record_gather(src, dim, idx, GatherOp::Gather);
  return index.dim() == 0 ? reshape(out, {}) : out;
}

Tensor take_along_dim(const Tensor& x, const Tensor& indices, int64_t dim) {
  detail::check_defined("take_along_dim", {&x, &indices});
  detail::check_same_device("take_along_dim", {&x, &indices});
  check_index("take_along_dim", indices, {&x, &indices});
  if (indices.dim() != x.dim())
    fail("take_along_dim", "indices must have the rank of x (" + std::to_string(x.dim()) + ")", {&x, &indices});
  Tensor src = as_1d(x), idx = as_1d(indices);
  dim = detail::normalize_dim("take_along_dim", dim, src.dim(), src);
  Shape xs = src.shape(), is = idx.shape();
  xs[dim] = 1;
  is[dim] = 1;
  Shape b = detail::broadcast_shapes("take_along_dim", xs, is, {&x, &indices});
  Shape bx = b, bi = b;
  bx[dim] = src.size(dim);
  bi[dim] = idx.size(dim);
  Tensor out = record_gather(expand(src, bx), dim, expand(idx, bi), GatherOp::TakeAlongDim);
  return x.dim() == 0 ? reshape(out, {}) : out;
}

Tensor take_along_dim(const Tensor& x, const Tensor& indices) {
  detail::check_defined("take_along_dim", {&x, &indices});
  detail::check_same_device("take_along_dim", {&x, &indices});
  check_index("take_along_dim", indices, {&x, &indices});
  return record_gather(flatten(x), 0, flatten(indices), GatherOp::TakeAlongDim);
}

Tensor take(const Tensor& x, const Tensor& index) {
  detail::check_defined("take", {&x, &index});
  detail::check_same_device("take", {&x, &index});
  check_index("take", index, {&x, &index});
  return reshape(record_gather(flatten(x), 0, flatten(index), GatherOp::Take), index.shape());
}

// x with the mask's positions (in row-major order of the broadcast shape) filled from source's
// elements in order. The k-th selected position reads source[k - 1] behind one padding element
// that the unselected positions read: a gather at the mask's running count, so a mask selecting
// more than source holds is a range error at the sync point. The running count is a cumsum (a scan
// group of its own); the gather and the where are index math in one kernel after it.
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source) {
  detail::check_defined("masked_scatter", {&x, &mask, &source});
  detail::check_same_device("masked_scatter", {&x, &mask, &source});
  if (mask.dtype() != DType::Bool) fail("masked_scatter", "mask must be bool", {&x, &mask, &source});
  if (source.dtype() != x.dtype()) fail("masked_scatter", "source must have x's dtype", {&x, &mask, &source});
  Shape shape = detail::broadcast_shapes("masked_scatter", x, mask);
  Tensor m = expand(mask, shape), flat = flatten(m);
  Tensor padded = cat({zeros({1}, x.dtype()).to(x.device()), flatten(source)}, 0);
  Tensor at = where(flat, cumsum(flat, 0), 0);
  Tensor values = reshape(record_gather(padded, 0, at, GatherOp::MaskedScatter), shape);
  return where(m, values, expand(x, shape));
}

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  detail::check_defined("embedding", {&weight, &indices});
  detail::check_same_device("embedding", {&weight, &indices});
  check_index("embedding", indices, {&weight, &indices});
  if (weight.dim() != 2) fail("embedding", "weight must be 2-D [num_embeddings, embedding_dim]", {&weight, &indices});
  const int64_t width = weight.size(1);
  if (indices.dim() == 0) return reshape(record_gather(weight, 0, expand(reshape(indices, {1, 1}), {1, width}), GatherOp::Embedding), {width});
  // Gathered in the result's own shape, along the indices' last dim of the weight broadcast over
  // their leading dims: no reshape of the gathered value, which would cut it from its consumer
  // (a layer_norm over the rows reads the gather inside its own kernel).
  const int64_t r = indices.dim();
  Shape lead(indices.shape().begin(), indices.shape().end() - 1);
  Shape ones(lead.size(), 1), src_shape = lead;
  ones.insert(ones.end(), {weight.size(0), width});
  src_shape.insert(src_shape.end(), {weight.size(0), width});
  Shape shape = indices.shape();
  shape.push_back(width);
  Tensor src = expand(reshape(weight, ones), src_shape);
  return record_gather(src, r - 1, expand(unsqueeze(indices, r), shape), GatherOp::Embedding);
}

Tensor embedding(const Tensor& weight, const Tensor& indices, std::optional<int64_t> padding_idx,
                 std::optional<double> max_norm, double norm_type) {
  Tensor rows = embedding(weight, indices);
  const int64_t n = weight.size(0);
  if (padding_idx && (*padding_idx < -n || *padding_idx >= n))
    fail("embedding", "padding_idx " + std::to_string(*padding_idx) + " is out of range for " + std::to_string(n) +
                          " embeddings",
         {&weight, &indices});
  // The padding row's lookups are the same values but carry no gradient (PyTorch's padding_idx).
  if (padding_idx) {
    const int64_t pad = *padding_idx < 0 ? *padding_idx + n : *padding_idx;
    Tensor at_pad = unsqueeze(indices == pad, indices.dim());
    rows = where(at_pad, detach(rows), rows);
  }
  if (!max_norm) return rows;
  if (!is_floating(weight.dtype())) fail("embedding", "max_norm needs a floating-point weight", {&weight, &indices});
  if (!(*max_norm >= 0)) fail("embedding", "max_norm must be a number >= 0", {&weight, &indices});
  // PyTorch's renorm: a row whose norm exceeds max_norm is scaled by max_norm / (norm + 1e-7). One
  // row kernel with the gather; the weight is a value and stays as it is.
  Tensor norm_rows = norm(rows, norm_type, {-1}, /*keepdim=*/true);
  return where(norm_rows > *max_norm, rows * (*max_norm / (norm_rows + 1e-7)), rows);
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  detail::check_defined("scatter_add", {&x, &index, &src});
  detail::check_same_device("scatter_add", {&x, &index, &src});
  check_index("scatter_add", index, {&x, &index, &src});
  if (x.dtype() == DType::Bool) fail("scatter_add", "is not defined for bool", {&x, &index, &src});
  if (index.dim() != x.dim() || src.dim() != x.dim())
    fail("scatter_add", "x, index and src must have one rank", {&x, &index, &src});
  Tensor self = as_1d(x), idx = as_1d(index), s = as_1d(src);
  dim = detail::normalize_dim("scatter_add", dim, self.dim(), self);
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (idx.size(d) > s.size(d) || (d != dim && idx.size(d) > self.size(d)))
      fail("scatter_add",
           "index is larger than src in dim " + std::to_string(d) + ", or than x off dim " + std::to_string(dim),
           {&x, &index, &src});
    if (idx.size(d) < s.size(d)) s = slice(s, d, 0, idx.size(d));
  }
  s = detail::cast_to(s, x.dtype());
  ir::Attrs a;
  a.axis = dim;
  a.step = static_cast<int64_t>(ir::scatter_op_named(detail::user_op("scatter_add"), ir::ScatterOp::ScatterAdd));
  Tensor out = record(Op::ScatterAdd, x.dtype(), x.device(), self.shape(), {&self, &idx, &s}, std::move(a));
  return x.dim() == 0 ? reshape(out, {}) : out;
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha) {
  detail::UserOp user("index_add");
  detail::check_defined("index_add", {&x, &index, &source});
  detail::check_same_device("index_add", {&x, &index, &source});
  check_index("index_add", index, {&x, &index, &source});
  if (index.dim() > 1) fail("index_add", "index must be 1-D or 0-D", {&x, &index, &source});
  Tensor self = as_1d(x), src = as_1d(source);
  dim = detail::normalize_dim("index_add", dim, self.dim(), self);
  Shape want = self.shape();
  want[dim] = index.numel();
  if (src.shape() != want)
    fail("index_add", "source must have shape " + shape_str(want), {&x, &index, &source});
  Shape along(want.size(), 1);
  along[dim] = index.numel();
  Tensor idx = expand(reshape(index, along), want);
  if (!(alpha.kind() == Scalar::Kind::Int && alpha.to_int() == 1)) src = src * alpha;
  Tensor out = scatter_add(self, dim, idx, src);
  return x.dim() == 0 ? reshape(out, {}) : out;
}

Tensor bincount(const Tensor& x, const Tensor& weights, int64_t minlength) {
  detail::UserOp user("bincount");
  detail::check_defined("bincount", {&x});
  if (x.dim() != 1 || (x.dtype() != DType::Int32 && x.dtype() != DType::Int64))
    fail("bincount", "x must be a 1-D tensor of int32 or int64", {&x});
  if (minlength < 0) fail("bincount", "minlength must be non-negative", {&x});
  if (weights.defined() && weights.shape() != x.shape())
    fail("bincount", "weights must have x's shape", {&x, &weights});
  int64_t n = minlength;
  if (x.numel() > 0) {  // the result's size is data: read it (a sync point)
    auto [lo, hi] = min_max(x);
    if (lo < 0) fail("bincount", "x must be non-negative", {&x});
    // hi + 1 bins: none can hold INT64_MAX + 1 (it wrapped to a size-0 result before).
    if (hi == INT64_MAX) fail("bincount", "the largest value, INT64_MAX, needs more bins than int64 counts", {&x});
    n = std::max(n, hi + 1);
  }
  DType dt = !weights.defined() ? DType::Int64 : weights.dtype() == DType::Float32 ? DType::Float32 : DType::Float64;
  Tensor w = weights.defined() ? detail::cast_to(weights, dt) : ones({x.numel()}, dt);
  return scatter_add(zeros({n}, dt).to(x.device()), 0, x, w.to(x.device()));
}

Tensor histc(const Tensor& x, int64_t bins, double min, double max) {
  detail::UserOp user("histc");
  detail::check_defined("histc", {&x});
  if (!is_floating(x.dtype())) fail("histc", "x must be a floating-point tensor", {&x});
  if (bins <= 0) fail("histc", "bins must be positive (got " + std::to_string(bins) + ")", {&x});
  if (!(min <= max)) fail("histc", "min must not exceed max", {&x});
  if (min == max && x.numel() > 0) {  // the data's range (a sync point), as PyTorch
    std::vector<double> v = stack({lf::min(x), lf::max(x)}).to_vector<double>();
    min = v[0];
    max = v[1];
  }
  if (!std::isfinite(min) || !std::isfinite(max))
    fail("histc", "the range [" + std::to_string(min) + ", " + std::to_string(max) + "] is not finite", {&x});
  if (min == max) {
    min -= 1;
    max += 1;
  }
  // Bin floor((x - min) * bins / (max - min)); max itself in the last bin; values outside the
  // range (and NaN) add nothing.
  Tensor flat = flatten(x);
  Tensor inside = (flat >= min) && (flat <= max);
  Tensor bin = clamp(cast(floor((flat - min) * (static_cast<double>(bins) / (max - min))), DType::Int64), 0, bins - 1);
  return scatter_add(zeros({bins}, x.dtype()).to(x.device()), 0, where(inside, bin, 0), cast(inside, x.dtype()));
}

Tensor one_hot(const Tensor& x, int64_t num_classes) {
  detail::UserOp user("one_hot");
  detail::check_defined("one_hot", {&x});
  if (x.dtype() != DType::Int64) fail("one_hot", "x must be int64", {&x});
  if (num_classes < -1) fail("one_hot", "num_classes must be -1 or non-negative", {&x});
  if (x.numel() > 0) {  // PyTorch checks the classes too (a sync point)
    auto [lo, hi] = min_max(x);
    if (lo < 0) fail("one_hot", "class values must be non-negative (got " + std::to_string(lo) + ")", {&x});
    if (num_classes == -1 && hi == INT64_MAX)
      fail("one_hot", "the largest class, INT64_MAX, needs more classes than int64 counts", {&x});
    if (num_classes == -1) num_classes = hi + 1;
    if (hi >= num_classes)
      fail("one_hot", "class values must be smaller than num_classes (" + std::to_string(hi) + " >= " +
                          std::to_string(num_classes) + ")",
           {&x});
  } else if (num_classes == -1) {
    fail("one_hot", "cannot infer num_classes of an empty tensor", {&x});
  }
  Tensor classes = arange(0, static_cast<double>(num_classes), 1, DType::Int64).to(x.device());
  return cast(unsqueeze(x, -1) == classes, DType::Int64);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
  detail::check_defined("masked_fill", {&x, &mask});
  if (mask.dtype() != DType::Bool) fail("masked_fill", "mask must be bool", {&x, &mask});
  Shape b = detail::broadcast_shapes("masked_fill", x, mask);
  if (b != x.shape()) fail("masked_fill", "mask must broadcast to x's shape " + shape_str(x.shape()), {&x, &mask});
  return detail::cast_to(where(mask, value, x), x.dtype());
}

namespace {

Tensor scan(Op op, const char* name, const Tensor& x, int64_t dim) {
  detail::check_defined(name, {&x});
  Tensor v = as_1d(x);
  dim = detail::normalize_dim(name, dim, v.dim(), v);
  DType dt = is_floating(x.dtype()) ? x.dtype() : DType::Int64;
  v = detail::cast_to(v, dt);
  ir::Attrs a;
  a.axis = dim;
  Tensor out = record(op, dt, x.device(), v.shape(), {&v}, std::move(a));
  return x.dim() == 0 ? reshape(out, {}) : out;
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t dim) { return scan(Op::CumSum, "cumsum", x, dim); }
Tensor cumprod(const Tensor& x, int64_t dim) { return scan(Op::CumProd, "cumprod", x, dim); }

Tensor logcumsumexp(const Tensor& x, int64_t dim) {
  detail::check_defined("logcumsumexp", {&x});
  if (x.dtype() == DType::Bool) fail("logcumsumexp", "is not defined for bool tensors", {&x});
  return scan(Op::LogCumSumExp, "logcumsumexp", is_floating(x.dtype()) ? x : detail::cast_to(x, DType::Float32), dim);
}

namespace {

// cummax / cummin: the positions are a scan of their own; the values a gather at them.
std::pair<Tensor, Tensor> cum_extreme(Op op, const char* name, const Tensor& x, int64_t dim) {
  detail::check_defined(name, {&x});
  Tensor v = as_1d(x);
  dim = detail::normalize_dim(name, dim, v.dim(), v);
  ir::Attrs a;
  a.axis = dim;
  Tensor idx = record(op, DType::Int64, x.device(), v.shape(), {&v}, std::move(a));
  Tensor values = gather(v, dim, idx);
  if (x.dim() == 0) return {reshape(values, {}), reshape(idx, {})};
  return {values, idx};
}

}  // namespace

std::pair<Tensor, Tensor> cummax(const Tensor& x, int64_t dim) { return cum_extreme(Op::CumMax, "cummax", x, dim); }
std::pair<Tensor, Tensor> cummin(const Tensor& x, int64_t dim) { return cum_extreme(Op::CumMin, "cummin", x, dim); }

Tensor argsort(const Tensor& x, int64_t dim, bool descending) {
  detail::check_defined("argsort", {&x});
  Tensor v = as_1d(x);
  dim = detail::normalize_dim("argsort", dim, v.dim(), v);
  ir::Attrs a;
  a.axis = dim;
  a.keepdim = descending;
  Tensor out = record(Op::ArgSort, DType::Int64, x.device(), v.shape(), {&v}, std::move(a));
  return x.dim() == 0 ? reshape(out, {}) : out;
}

std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  detail::UserOp user("sort");
  Tensor idx = argsort(x, dim, descending);
  return {gather(x, dim, idx), idx};
}

std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest) {
  detail::check_defined("topk", {&x});
  Tensor v = as_1d(x);
  int64_t d = detail::normalize_dim("topk", dim, v.dim(), v);
  if (k < 0 || k > v.size(d))
    fail("topk", "k = " + std::to_string(k) + " is out of range for dim " + std::to_string(d) + " of size " +
                     std::to_string(v.size(d)),
         {&x});
  // A TopK node rather than a slice of argsort: backends select the k instead of sorting the row.
  ir::Attrs a;
  a.axis = d;
  a.start = k;
  a.keepdim = largest;
  Shape shape = v.shape();
  shape[d] = k;
  Tensor idx = record(Op::TopK, DType::Int64, x.device(), shape, {&v}, std::move(a));
  Tensor values = gather(v, d, idx);
  if (x.dim() == 0) return {reshape(values, {}), reshape(idx, {})};
  return {values, idx};
}

}  // namespace lf
