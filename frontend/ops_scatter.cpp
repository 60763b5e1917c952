// The scatter family beyond scatter_add (issue 23): scatter, scatter_reduce, index_put with integer
// index tensors, index_copy and index_fill, all recorded as one `scatter` node (ops.inc) whose
// attrs say the reduce mode and the user-facing op. Value semantics: each returns a new tensor.
#include <algorithm>
#include <string>
#include <vector>

#include "codegen/ir/indexing.h"
#include "frontend/record.h"
#include "lazyfuse/ops.h"

namespace lf {
namespace {

using detail::fail;
using ir::Op;
using ir::ScatterOp;
using ir::ScatterReduce;

void check_index(const char* op, const Tensor& index, std::initializer_list<const Tensor*> args) {
  if (index.dtype() != DType::Int64 && index.dtype() != DType::Int32)
    fail(op, "indices must be int32 or int64, not " + std::string(dtype_name(index.dtype())), args);
}

Tensor as_1d(const Tensor& x) { return x.dim() == 0 ? reshape(x, {1}) : x; }

// x, index and src already checked for rank and sizes by the caller; src has index's shape.
Tensor record_scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, ScatterReduce mode,
                      bool include_self, ScatterOp op) {
  Tensor s = detail::cast_to(src, x.dtype());
  ir::Attrs a;
  a.axis = dim;
  a.start = static_cast<int64_t>(mode);
  a.keepdim = include_self;
  a.step = static_cast<int64_t>(ir::scatter_op_named(detail::user_op(ir::scatter_op_name(static_cast<int64_t>(op))), op));
  return detail::record(Op::Scatter, x.dtype(), x.device(), x.shape(), {&x, &index, &s}, std::move(a));
}

// scatter and scatter_reduce: PyTorch's shape rules (index no larger than src, nor than x off dim).
Tensor scatter_like(const char* name, const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src,
                    ScatterReduce mode, bool include_self, ScatterOp op) {
  detail::check_defined(name, {&x, &index, &src});
  detail::check_same_device(name, {&x, &index, &src});
  check_index(name, index, {&x, &index, &src});
  if (x.dtype() == DType::Bool && mode != ScatterReduce::Assign)
    fail(name, std::string("reduce \"") + ir::scatter_reduce_name(mode) + "\" is not defined for bool",
         {&x, &index, &src});
  if (index.dim() != x.dim() || src.dim() != x.dim())
    fail(name, "x, index and src must have one rank", {&x, &index, &src});
  Tensor self = as_1d(x), idx = as_1d(index), s = as_1d(src);
  dim = detail::normalize_dim(name, dim, self.dim(), self);
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (idx.size(d) > s.size(d) || (d != dim && idx.size(d) > self.size(d)))
      fail(name, "index is larger than src in dim " + std::to_string(d) + ", or than x off dim " + std::to_string(dim),
           {&x, &index, &src});
    if (idx.size(d) < s.size(d)) s = slice(s, d, 0, idx.size(d));
  }
  Tensor out = record_scatter(self, dim, idx, s, mode, include_self, op);
  return x.dim() == 0 ? reshape(out, {}) : out;
}

// index_copy, index_fill and index_reduce: a 1-D index along dim, expanded to the source's shape.
Tensor index_scatter(const char* name, const Tensor& x, int64_t dim, const Tensor& index, const Tensor* source,
                     Scalar value, ScatterOp op, ScatterReduce mode = ScatterReduce::Assign, bool include_self = true) {
  Tensor self = as_1d(x);
  dim = detail::normalize_dim(name, dim, self.dim(), self);
  Shape want = self.shape();
  want[static_cast<size_t>(dim)] = index.numel();
  Tensor src = source ? as_1d(*source) : detail::full_like_shape(want, value, x.dtype(), x.device());
  if (src.shape() != want) fail(name, "source must have shape " + shape_str(want), {&x, &index, source});
  Shape along(want.size(), 1);
  along[static_cast<size_t>(dim)] = index.numel();
  Tensor idx = expand(reshape(index, along), want);
  Tensor out = record_scatter(self, dim, idx, src, mode, include_self, op);
  return x.dim() == 0 ? reshape(out, {}) : out;
}

// x's first k dims indexed by tensors that broadcast to B (numel m > 0): the row of x viewed as
// [product of those dims, rest...] that each element of B picks, [m]. Each index is checked and
// counted from the end by a gather of an arange along its dim (an index error names `op`, the dim
// and its size; the gathers fuse into the flat index's kernel).
Tensor flat_rows(const Tensor& x, const std::vector<Tensor>& indices, const Shape& b, ir::GatherOp op) {
  const int64_t m = shape_numel(b);
  Tensor flat;
  for (size_t j = 0; j < indices.size(); ++j) {
    int64_t n = x.shape()[j];
    Shape at(j + 1, 1), idx_at(j + 1, 1);
    at[j] = n;
    idx_at[j] = m;
    Tensor src = reshape(arange(0, static_cast<double>(n), 1, DType::Int64).to(x.device()), at);
    Tensor idx = reshape(expand(indices[j], b), idx_at);
    Tensor norm = reshape(detail::record_gather(src, static_cast<int64_t>(j), idx, op), {m});
    flat = j == 0 ? norm : flat * n + norm;
  }
  return flat;
}

// A bool tensor in a mixed index selects the positions where it is true over as many of x's dims
// as it has (numpy's x[mask]): it becomes nonzero(mask)'s columns, one int64 index tensor a dim
// (nonzero is a sync point: the count is data). Its shape must be those dims' sizes.
std::vector<Index> expand_masks(const char* name, const Tensor& x, const std::vector<Index>& index) {
  std::vector<Index> out;
  for (const Index& i : index) {
    if (i.is_slice() || i.is_integer() || !i.tensor().defined() || i.tensor().dtype() != DType::Bool) {
      out.push_back(i);
      continue;
    }
    const Tensor& mask = i.tensor();
    detail::check_same_device(name, {&x, &mask});
    const size_t at = out.size(), r = static_cast<size_t>(mask.dim());
    if (r == 0) fail(name, "a 0-d bool index is not supported (index " + std::to_string(at) + ")", {&x, &mask});
    if (at + r > static_cast<size_t>(x.dim()) ||
        !std::equal(mask.shape().begin(), mask.shape().end(), x.shape().begin() + static_cast<std::ptrdiff_t>(at)))
      fail(name,
           "the bool index's shape " + shape_str(mask.shape()) + " does not match x's dims " + std::to_string(at) +
               " to " + std::to_string(at + r - 1),
           {&x, &mask});
    Tensor nz = nonzero(mask);
    for (size_t j = 0; j < r; ++j) out.push_back(Index(select(nz, 1, static_cast<int64_t>(j))));
  }
  return out;
}

// numpy's mixed index over x's first k dims as k index tensors (the region's shape = their
// broadcast shape): each slice an arange of its positions on its own axis, integers and tensors
// one block B placed by numpy's rule (in place when adjacent in the index, else first). Sets
// *slices_only when no entry is a tensor or an integer (the caller may take views instead).
std::vector<Tensor> mixed_index(const char* name, const Tensor& x, const std::vector<Index>& index, bool* slices_only) {
  const size_t k = index.size();
  if (k == 0 || static_cast<int64_t>(k) > x.dim())
    fail(name, std::to_string(k) + " indices for " + std::to_string(x.dim()) + " dims", {&x});
  std::vector<Tensor> parts(k);
  std::vector<size_t> advanced;
  Shape b;
  for (size_t d = 0; d < k; ++d) {
    const Index& i = index[d];
    if (i.is_slice()) {
      if (i.slice().step <= 0)
        fail(name, "slice step must be positive, not " + std::to_string(i.slice().step) + " (dim " + std::to_string(d) + ")",
             {&x});
      continue;
    }
    if (i.is_integer()) {
      parts[d] = full({}, static_cast<double>(i.integer()), DType::Int64).to(x.device());
    } else {
      parts[d] = i.tensor();
      detail::check_defined(name, {&parts[d]});
      detail::check_same_device(name, {&x, &parts[d]});
    }
    b = advanced.empty() ? parts[d].shape() : detail::broadcast_shapes(name, b, parts[d].shape(), {&x, &parts[d]});
    advanced.push_back(d);
  }
  *slices_only = advanced.empty();
  bool adjacent = advanced.empty() || advanced.back() - advanced.front() + 1 == advanced.size();
  const size_t nb = b.size(), rank = nb + (k - advanced.size());
  size_t block_at = 0;  // the region axis where B starts
  if (adjacent && !advanced.empty())
    for (size_t d = 0; d < advanced.front(); ++d) block_at += index[d].is_slice() ? 1 : 0;
  std::vector<Tensor> tensors;
  size_t next_slice_axis = 0;
  for (size_t d = 0; d < k; ++d) {
    Shape shape(rank, 1);
    if (index[d].is_slice()) {
      const Slice& sl = index[d].slice();
      Tensor pos = lf::slice(arange(0, static_cast<double>(x.size(static_cast<int64_t>(d))), 1, DType::Int64).to(x.device()),
                             0, sl.start, sl.end, sl.step);
      if (next_slice_axis == block_at && !advanced.empty()) next_slice_axis += nb;  // past the block
      shape[next_slice_axis++] = pos.numel();
      tensors.push_back(reshape(pos, shape));
    } else {
      const Shape& t = parts[d].shape();
      for (size_t j = 0; j < t.size(); ++j) shape[block_at + nb - t.size() + j] = t[j];
      tensors.push_back(reshape(parts[d], shape));
    }
  }
  return tensors;
}

ScatterReduce parse_reduce(const std::string& reduce, const Tensor& x, const Tensor& index, const Tensor& src) {
  if (reduce == "sum") return ScatterReduce::Sum;
  if (reduce == "prod") return ScatterReduce::Prod;
  if (reduce == "mean") return ScatterReduce::Mean;
  if (reduce == "amax") return ScatterReduce::AMax;
  if (reduce == "amin") return ScatterReduce::AMin;
  fail("scatter_reduce", "reduce must be \"sum\", \"prod\", \"mean\", \"amax\" or \"amin\", not \"" + reduce + "\"",
       {&x, &index, &src});
}

}  // namespace

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_like("scatter", x, dim, index, src, ScatterReduce::Assign, true, ScatterOp::Scatter);
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, Scalar value) {
  detail::check_defined("scatter", {&x, &index});
  Tensor src = detail::full_like_shape(index.shape(), value, x.dtype(), x.device());
  return scatter_like("scatter", x, dim, index, src, ScatterReduce::Assign, true, ScatterOp::Scatter);
}

Tensor scatter_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                      bool include_self) {
  detail::check_defined("scatter_reduce", {&x, &index, &src});
  ScatterReduce mode = parse_reduce(reduce, x, index, src);
  return scatter_like("scatter_reduce", x, dim, index, src, mode, include_self, ScatterOp::ScatterReduce);
}

Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source) {
  detail::check_defined("index_copy", {&x, &index, &source});
  detail::check_same_device("index_copy", {&x, &index, &source});
  check_index("index_copy", index, {&x, &index, &source});
  if (index.dim() > 1) fail("index_copy", "index must be 1-D or 0-D", {&x, &index, &source});
  return index_scatter("index_copy", x, dim, index, &source, 0, ScatterOp::IndexCopy);
}

Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, Scalar value) {
  detail::check_defined("index_fill", {&x, &index});
  detail::check_same_device("index_fill", {&x, &index});
  check_index("index_fill", index, {&x, &index});
  if (index.dim() > 1) fail("index_fill", "index must be 1-D or 0-D", {&x, &index});
  return index_scatter("index_fill", x, dim, index, nullptr, value, ScatterOp::IndexFill);
}

Tensor index_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, const std::string& reduce,
                    bool include_self) {
  detail::check_defined("index_reduce", {&x, &index, &source});
  detail::check_same_device("index_reduce", {&x, &index, &source});
  check_index("index_reduce", index, {&x, &index, &source});
  if (index.dim() > 1) fail("index_reduce", "index must be 1-D or 0-D", {&x, &index, &source});
  ScatterReduce mode = reduce == "prod"   ? ScatterReduce::Prod
                       : reduce == "mean" ? ScatterReduce::Mean
                       : reduce == "amax" ? ScatterReduce::AMax
                       : reduce == "amin" ? ScatterReduce::AMin
                                          : ScatterReduce::Assign;
  if (mode == ScatterReduce::Assign)
    fail("index_reduce", "reduce must be \"prod\", \"mean\", \"amax\" or \"amin\", not \"" + reduce + "\"",
         {&x, &index, &source});
  if (x.dtype() == DType::Bool) fail("index_reduce", "is not defined for bool", {&x, &index, &source});
  return index_scatter("index_reduce", x, dim, index, &source, 0, ScatterOp::IndexReduce, mode, include_self);
}

// x[i0, i1, ...] = v (torch.index_put): the index tensors broadcast together to B and index x's
// leading dims; v broadcasts to B + x's other dims. Each index is checked and counted from the end
// by a gather of arange along its dim (an index error names index_put, the dim and its size; the
// gather fuses into the flat index's kernel), then the flat index over the leading dims scatters
// rows of x viewed as [leading, rest...].
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& v, bool accumulate) {
  detail::check_defined("index_put", {&x, &v});
  for (const Tensor& i : indices) {
    detail::check_defined("index_put", {&i});
    detail::check_same_device("index_put", {&x, &i, &v});
    if (i.dtype() == DType::Bool) fail("index_put", "a bool index goes alone: index_put(x, mask, v)", {&x, &i, &v});
    check_index("index_put", i, {&x, &i, &v});
  }
  detail::check_same_device("index_put", {&x, &v});
  const size_t k = indices.size();
  if (k == 0 || static_cast<int64_t>(k) > x.dim())
    fail("index_put", std::to_string(k) + " index tensors for " + std::to_string(x.dim()) + " dims", {&x, &v});
  if (accumulate && x.dtype() == DType::Bool) fail("index_put", "accumulate is not defined for bool", {&x, &v});
  Shape b = indices[0].shape();
  for (size_t j = 1; j < k; ++j)
    b = detail::broadcast_shapes("index_put", b, indices[j].shape(), {&indices[0], &indices[j]});
  Shape rest(x.shape().begin() + static_cast<std::ptrdiff_t>(k), x.shape().end());
  Shape region = b;
  region.insert(region.end(), rest.begin(), rest.end());
  if (detail::broadcast_shapes("index_put", v.shape(), region, {&x, &v}) != region)
    fail("index_put",
         "value of shape " + shape_str(v.shape()) + " does not broadcast to the indexed shape " + shape_str(region),
         {&x, &v});
  const int64_t m = shape_numel(b);
  if (m == 0) return x;
  Tensor flat = flat_rows(x, indices, b, ir::GatherOp::IndexPut);
  int64_t leading = 1;
  for (size_t j = 0; j < k; ++j) leading *= x.shape()[j];
  Shape self_shape{leading}, rows{m};
  self_shape.insert(self_shape.end(), rest.begin(), rest.end());
  rows.insert(rows.end(), rest.begin(), rest.end());
  Shape along(rows.size(), 1);
  along[0] = m;
  Tensor self = reshape(x, self_shape);
  Tensor idx = expand(reshape(flat, along), rows);
  Tensor src = reshape(expand(detail::cast_to(v, x.dtype()), region), rows);
  Tensor out = record_scatter(self, 0, idx, src, accumulate ? ScatterReduce::Sum : ScatterReduce::Assign, true,
                              ScatterOp::IndexPut);
  return reshape(out, x.shape());
}

Tensor index_put(const Tensor& x, const std::vector<Index>& with_masks, const Tensor& v, bool accumulate) {
  detail::check_defined("index_put", {&x, &v});
  const std::vector<Index> index = expand_masks("index_put", x, with_masks);
  bool slices_only = false;
  std::vector<Tensor> tensors = mixed_index("index_put", x, index, &slices_only);
  if (slices_only && !accumulate) {  // plain slice assignment: index math, no scatter
    std::vector<Slice> slices;
    for (const Index& i : index) slices.push_back(i.slice());
    return index_put(x, slices, v);
  }
  return index_put(x, tensors, v, accumulate);
}

// numpy's x[...] read: slices and integers alone are views; with index tensors, one gather of the
// rows of x viewed as [the indexed dims' product, rest...] at their flat index.
Tensor index(const Tensor& x, const std::vector<Index>& with_masks) {
  detail::check_defined("index", {&x});
  const std::vector<Index> at = expand_masks("index", x, with_masks);
  bool slices_only = false;
  std::vector<Tensor> tensors = mixed_index("index", x, at, &slices_only);
  bool any_tensor = false;
  for (const Index& i : at) any_tensor |= !i.is_slice() && !i.is_integer();
  if (!any_tensor) {
    Tensor out = x;
    for (size_t d = 0, kept = 0; d < at.size(); ++d) {
      if (at[d].is_integer()) {
        out = select(out, static_cast<int64_t>(kept), at[d].integer());
      } else {
        const Slice& sl = at[d].slice();
        out = lf::slice(out, static_cast<int64_t>(kept++), sl.start, sl.end, sl.step);
      }
    }
    return out;
  }
  for (const Tensor& t : tensors) check_index("index", t, {&x, &t});
  Shape b = tensors[0].shape();
  for (size_t j = 1; j < tensors.size(); ++j) b = detail::broadcast_shapes("index", b, tensors[j].shape(), {&x, &tensors[j]});
  const size_t k = tensors.size();
  Shape rest(x.shape().begin() + static_cast<std::ptrdiff_t>(k), x.shape().end());
  Shape out = b;
  out.insert(out.end(), rest.begin(), rest.end());
  int64_t leading = 1;
  for (size_t j = 0; j < k; ++j) leading *= x.shape()[j];
  Shape rows{leading};
  rows.insert(rows.end(), rest.begin(), rest.end());
  Tensor flat = shape_numel(b) == 0 ? zeros({0}, DType::Int64).to(x.device())
                                    : flat_rows(x, tensors, b, ir::GatherOp::Index);
  return reshape(index_select(reshape(x, rows), 0, flat), out);
}

Tensor index_put(const Tensor& x, const std::vector<Index>& index, Scalar v, bool accumulate) {
  detail::check_defined("index_put", {&x});
  // An integer keeps every bit (through a double, 2^53 + 1 became 2^53).
  Tensor value = v.kind() == Scalar::Kind::Float ? full({}, v.to_double(), x.dtype()).to(x.device())
                                                 : detail::full_like_shape({}, v, x.dtype(), x.device());
  return index_put(x, index, value, accumulate);
}

}  // namespace lf
