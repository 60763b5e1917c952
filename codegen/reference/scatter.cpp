// The reference executor's scatter row (scatter, scatter_reduce, index_put, index_copy,
// index_fill): one value at a time in src's row-major order, each step rounded to the dtype.
#include "codegen/reference/scatter.h"

#include <cstring>
#include <vector>

#include "codegen/ir/dtype_dispatch.h"
#include "codegen/ir/indexing.h"
#include "codegen/reference/indexing.h"

namespace lf::ir {

Value scatter_ref(const Node& node, const std::vector<Value>& in) {
  // A fresh copy of self (values are immutable: never write into the input's storage).
  auto storage = rt::Storage::allocate(Device::cpu(), static_cast<size_t>(node.numel()) * dtype_size(node.dtype));
  Value result{std::move(storage), node.dtype, node.shape, Layout{contiguous_strides(node.shape), 0}};
  std::memcpy(result.storage->data(), to_contiguous(in[0], node.dtype).storage->data(), result.storage->nbytes());
  Value idx = to_contiguous(in[1], DType::Int64);
  Value src = to_contiguous(in[2], node.dtype);
  const int64_t* ip = static_cast<const int64_t*>(idx.storage->data());
  const int64_t axis = node.attrs.axis, size = node.shape[static_cast<size_t>(axis)];
  const auto mode = static_cast<ScatterReduce>(node.attrs.start);
  const bool include_self = node.attrs.keepdim;
  const char* op = scatter_op_name(node.attrs.step);
  const size_t rank = node.shape.size();
  const Shape self_strides = contiguous_strides(node.shape);
  const int64_t count = shape_numel(idx.shape);
  // Every destination first, in row-major order: the first bad index is the error.
  std::vector<int64_t> target(static_cast<size_t>(count));
  std::vector<int64_t> c(rank, 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t rest = e, off = 0;
    for (size_t d = rank; d-- > 0;) {
      c[d] = rest % idx.shape[d];
      rest /= idx.shape[d];
    }
    for (size_t d = 0; d < rank; ++d) {
      int64_t i = c[d];
      if (static_cast<int64_t>(d) == axis) {
        i = ip[e] < 0 ? ip[e] + size : ip[e];
        if (i < 0 || i >= size) throw Error(index_error(op, ip[e], axis, size, true));
      }
      off += i * self_strides[d];
    }
    target[static_cast<size_t>(e)] = off;
  }
  dispatch(node.dtype, [&](auto tag) {
    using S = typename decltype(tag)::storage_t;
    using C = typename decltype(tag)::compute_t;
    S* out = static_cast<S*>(result.storage->data());
    const S* sp = static_cast<const S*>(src.storage->data());
    if (!include_self && mode != ScatterReduce::Assign)
      for (int64_t off : target) out[off] = from_value<S>(ref::scatter_identity<C>(mode));
    std::vector<int64_t> hits(mode == ScatterReduce::Mean ? static_cast<size_t>(node.numel()) : 0, 0);
    for (int64_t e = 0; e < count; ++e) {
      int64_t off = target[static_cast<size_t>(e)];
      out[off] = from_value<S>(ref::scatter_combine<C>(mode, to_compute(out[off]), to_compute(sp[e])));
      if (mode == ScatterReduce::Mean) ++hits[static_cast<size_t>(off)];
    }
    for (size_t i = 0; i < hits.size(); ++i)
      if (hits[i] > 0)
        out[i] = from_value<S>(ref::scatter_mean<C>(to_compute(out[i]), hits[i] + (include_self ? 1 : 0)));
  });
  return result;
}

}  // namespace lf::ir
