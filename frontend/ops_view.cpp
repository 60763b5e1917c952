// Views (reshape, permute, slice, expand, squeeze, ...) and cat. Views record index math; the
// data is copied only when contiguous() or a reshape of a non-contiguous layout asks for it.
#include <algorithm>

#include "frontend/complex.h"
#include "frontend/record.h"
#include "lazyfuse/ops.h"
#include "runtime/checked.h"

namespace lf {
namespace {

using detail::fail;
using detail::record;
using ir::Op;

Tensor view(Op op, const Tensor& x, Shape shape, ir::Attrs attrs = {}) {
  return record(op, x.dtype(), x.device(), std::move(shape), {&x}, std::move(attrs));
}

}  // namespace

Tensor reshape(const Tensor& x, Shape shape) {
  detail::check_defined("reshape", {&x});
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) fail("reshape", "only one dim may be -1 in " + shape_str(shape), {&x});
      infer = static_cast<int64_t>(i);
    } else if (shape[i] < 0) {
      fail("reshape", "shape " + shape_str(shape) + " has a negative size", {&x});
    } else if (shape[i] == 0 || known == 0) {
      known = 0;  // the record check still bounds the product of the other sizes
    } else if (auto k = rt::mul(known, shape[i])) {
      known = *k;
    } else {
      fail("reshape", "shape " + shape_str(shape) + " has more elements than fit int64 (2^63 - 1)", {&x});
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0)
      fail("reshape", "cannot infer the -1 in " + shape_str(shape) + " for " + std::to_string(x.numel()) + " elements",
           {&x});
    shape[infer] = x.numel() / known;
  } else if (known != x.numel()) {
    fail("reshape", "shape " + shape_str(shape) + " holds " + std::to_string(known) + " elements, not " +
                        std::to_string(x.numel()),
         {&x});
  }
  if (shape == x.shape()) return x;
  return view(Op::Reshape, x, std::move(shape));
}

Tensor flatten(const Tensor& x) {
  detail::check_defined("flatten", {&x});
  return reshape(x, {x.numel()});
}

Tensor permute(const Tensor& x, std::vector<int64_t> dims) {
  detail::check_defined("permute", {&x});
  int64_t rank = x.dim();
  if (static_cast<int64_t>(dims.size()) != rank)
    fail("permute", "needs " + std::to_string(rank) + " dims, got " + std::to_string(dims.size()), {&x});
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  Shape shape(static_cast<size_t>(rank));
  for (size_t i = 0; i < dims.size(); ++i) {
    dims[i] = detail::normalize_dim("permute", dims[i], rank, x);
    if (seen[dims[i]]) fail("permute", "dim " + std::to_string(dims[i]) + " appears more than once", {&x});
    seen[dims[i]] = true;
    shape[i] = x.shape()[dims[i]];
  }
  bool identity = true;
  for (size_t i = 0; i < dims.size(); ++i) identity &= dims[i] == static_cast<int64_t>(i);
  if (identity) return x;
  ir::Attrs a;
  a.dims = std::move(dims);
  return view(Op::Permute, x, std::move(shape), std::move(a));
}

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  detail::check_defined("transpose", {&x});
  int64_t rank = x.dim();
  if (rank == 0) {
    detail::normalize_dim("transpose", d0, rank, x);
    detail::normalize_dim("transpose", d1, rank, x);
    return x;
  }
  d0 = detail::normalize_dim("transpose", d0, rank, x);
  d1 = detail::normalize_dim("transpose", d1, rank, x);
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) perm[i] = i;
  std::swap(perm[d0], perm[d1]);
  return permute(x, perm);
}

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  detail::check_defined("slice", {&x});
  if (x.dim() == 0) fail("slice", "cannot slice a rank-0 tensor", {&x});
  dim = detail::normalize_dim("slice", dim, x.dim(), x);
  if (step <= 0) fail("slice", "step must be positive, not " + std::to_string(step), {&x});
  int64_t n = x.shape()[dim];
  // Python's clamping: negative bounds count from the end, out-of-range bounds clamp.
  auto clampb = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
  start = clampb(start);
  end = clampb(end);
  // ceil((end - start) / step) without overflow: step may be up to INT64_MAX.
  int64_t len = end > start ? (end - start - 1) / step + 1 : 0;
  if (start == 0 && len == n && step == 1) return x;
  Shape shape = x.shape();
  shape[dim] = len;
  ir::Attrs a;
  a.axis = dim;
  a.start = start;
  a.step = step;
  return view(Op::Slice, x, std::move(shape), std::move(a));
}

Tensor expand(const Tensor& x, Shape shape) {
  detail::check_defined("expand", {&x});
  const Shape& in = x.shape();
  if (shape.size() < in.size())
    fail("expand", "target " + shape_str(shape) + " has fewer dims than the tensor", {&x});
  size_t lead = shape.size() - in.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t have = i < lead ? 1 : in[i - lead];
    if (shape[i] == -1) {
      if (i < lead) fail("expand", "-1 is not allowed for a new leading dim in " + shape_str(shape), {&x});
      shape[i] = have;
    } else if (shape[i] < 0) {
      fail("expand", "target " + shape_str(shape) + " has a negative size", {&x});
    } else if (have != shape[i] && have != 1) {
      fail("expand", "cannot expand dim " + std::to_string(i) + " of size " + std::to_string(have) + " to " +
                         std::to_string(shape[i]) + " (only size-1 dims expand)",
           {&x});
    }
  }
  std::string why = rt::shape_problem(shape, dtype_size(x.dtype()));
  if (!why.empty()) fail("expand", "target " + why, {&x});
  return detail::broadcast_to(x, shape);
}

Tensor squeeze(const Tensor& x, int64_t dim) {
  detail::check_defined("squeeze", {&x});
  if (x.dim() == 0) {
    detail::normalize_dim("squeeze", dim, 0, x);
    return x;
  }
  dim = detail::normalize_dim("squeeze", dim, x.dim(), x);
  if (x.shape()[dim] != 1) return x;  // like PyTorch: squeezing a dim that is not 1 does nothing
  Shape shape = x.shape();
  shape.erase(shape.begin() + dim);
  return reshape(x, shape);
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  detail::check_defined("unsqueeze", {&x});
  dim = detail::normalize_dim("unsqueeze", dim, x.dim() + 1, x);
  Shape shape = x.shape();
  shape.insert(shape.begin() + dim, 1);
  return reshape(x, shape);
}

Tensor contiguous(const Tensor& x) {
  detail::check_defined("contiguous", {&x});
  if (is_complex(x.dtype())) return detail::wrap_complex(contiguous(detail::pairs(x)), x.dtype());
  const ir::Node& n = *x.node();
  // A pending value is computed contiguous, except a 4-D one that may come out channels-last (a
  // GPU convolution's, or one over a channels-last buffer: codegen/fuse/lower.h, out_strides): that
  // one gets a copy, which is always contiguous. A layout that only channels-last strides describe
  // needs C > 1 and H * W > 1.
  const bool may_be_channels_last = n.shape.size() == 4 && n.shape[1] > 1 && n.shape[2] * n.shape[3] > 1;
  if (n.realized() ? ir::is_contiguous(n.shape, n.layout)
                   : !ir::is_view(n.op) && (n.op == Op::Copy || !may_be_channels_last))
    return x;
  return record(Op::Copy, x.dtype(), x.device(), x.shape(), {&x});
}

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) fail("cat", "needs at least one tensor");
  const Tensor& first = tensors[0];
  for (const Tensor& t : tensors) detail::check_defined("cat", {&t});
  if (first.dim() == 0) fail("cat", "cannot concatenate rank-0 tensors", {&first});
  dim = detail::normalize_dim("cat", dim, first.dim(), first);
  DType d = first.dtype();
  Shape shape = first.shape();
  shape[dim] = 0;
  for (const Tensor& t : tensors) {
    detail::check_same_device("cat", {&first, &t});
    bool ok = t.dim() == first.dim();
    for (int64_t i = 0; ok && i < first.dim(); ++i) ok = i == dim || t.shape()[i] == first.shape()[i];
    if (!ok) {
      fail("cat", "shapes must match except in dim " + std::to_string(dim) + ": " + shape_str(first.shape()) +
                      " vs " + shape_str(t.shape()),
           {&first, &t});
    }
    if (auto total = rt::add(shape[dim], t.shape()[dim])) {
      shape[dim] = *total;
    } else {
      fail("cat", "the sizes of dim " + std::to_string(dim) + " add up to more than fit int64 (2^63 - 1)",
           {&first, &t});
    }
    d = detail::promote(d, t.dtype());
  }
  if (tensors.size() == 1) return first;
  ir::Inputs inputs;
  for (const Tensor& t : tensors) inputs.push_back(detail::cast_to(t, d).node());
  ir::Attrs a;
  a.axis = dim;
  return detail::record_node(ir::make_node(Op::Cat, d, first.device(), std::move(shape), std::move(inputs), std::move(a)));
}

// The Tensor&& forms: the temporary moves into a const local, whose handle is released when the
// function returns (see ops_reduce.cpp).
Tensor reshape(Tensor&& x, Shape shape) {
  const Tensor t = std::move(x);
  return reshape(t, std::move(shape));
}
Tensor flatten(Tensor&& x) {
  const Tensor t = std::move(x);
  return flatten(t);
}
Tensor transpose(Tensor&& x, int64_t d0, int64_t d1) {
  const Tensor t = std::move(x);
  return transpose(t, d0, d1);
}
Tensor permute(Tensor&& x, std::vector<int64_t> dims) {
  const Tensor t = std::move(x);
  return permute(t, std::move(dims));
}
Tensor slice(Tensor&& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  const Tensor t = std::move(x);
  return slice(t, dim, start, end, step);
}
Tensor expand(Tensor&& x, Shape shape) {
  const Tensor t = std::move(x);
  return expand(t, std::move(shape));
}
Tensor squeeze(Tensor&& x, int64_t dim) {
  const Tensor t = std::move(x);
  return squeeze(t, dim);
}
Tensor unsqueeze(Tensor&& x, int64_t dim) {
  const Tensor t = std::move(x);
  return unsqueeze(t, dim);
}
Tensor contiguous(Tensor&& x) {
  const Tensor t = std::move(x);
  return contiguous(t);
}

}  // namespace lf
