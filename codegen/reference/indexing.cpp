// Reference implementations of gather, scatter_add, cumsum/cumprod and argsort/topk (indexing.h).
// Each works on contiguous copies, viewed as [outer, n, inner] around the op's axis.
#include "codegen/reference/indexing.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "codegen/ir/dtype_dispatch.h"
#include "codegen/ir/indexing.h"
#include "codegen/reference/math.h"

namespace lf::ir {
namespace {

struct Around {
  int64_t outer = 1, n = 1, inner = 1;
};

Around around(const Shape& shape, int64_t axis) {
  Around a;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < axis) a.outer *= shape[d];
    else if (d == axis) a.n = shape[d];
    else a.inner *= shape[d];
  }
  return a;
}

Value fresh(DType dtype, const Shape& shape) {
  auto storage = rt::Storage::allocate(Device::cpu(), static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype));
  return Value{std::move(storage), dtype, shape, Layout{contiguous_strides(shape), 0}};
}

// The index, counted from the end when negative; an lf::Error when out of range.
int64_t checked_index(int64_t raw, int64_t size, const char* op, int64_t axis, bool name_dim) {
  int64_t i = raw < 0 ? raw + size : raw;
  if (i < 0 || i >= size) throw Error(index_error(op, raw, axis, size, name_dim));
  return i;
}

}  // namespace

Value gather_ref(const Node& node, const std::vector<Value>& in) {
  Value src = to_contiguous(in[0], in[0].dtype);
  Value idx = to_contiguous(in[1], DType::Int64);
  const int64_t* ip = static_cast<const int64_t*>(idx.storage->data());
  Around out = around(node.shape, node.attrs.axis);
  int64_t size = src.shape[static_cast<size_t>(node.attrs.axis)];
  Value result = fresh(node.dtype, node.shape);
  size_t es = dtype_size(node.dtype);
  const char* sp = static_cast<const char*>(src.storage->data());
  char* dp = static_cast<char*>(result.storage->data());
  for (int64_t o = 0; o < out.outer; ++o)
    for (int64_t j = 0; j < out.n; ++j)
      for (int64_t k = 0; k < out.inner; ++k) {
        int64_t at = (o * out.n + j) * out.inner + k;
        int64_t i = ip[at] < 0 ? ip[at] + size : ip[at];
        if (i < 0 || i >= size) throw Error(gather_index_error(node.attrs.start, ip[at], node.attrs.axis, size));
        std::memcpy(dp + at * es, sp + ((o * size + i) * out.inner + k) * es, es);
      }
  return result;
}

Value remap_ref(const Node& node, const std::vector<Value>& in) {
  const Value& src = in[0];
  const std::vector<int64_t>& axes = node.attrs.dims;
  std::vector<Value> idx;
  for (size_t k = 1; k < in.size(); ++k) idx.push_back(to_contiguous(in[k], DType::Int64));
  Value result = fresh(node.dtype, node.shape);
  size_t es = dtype_size(node.dtype), rank = node.shape.size();
  const char* sp = static_cast<const char*>(src.storage->data());
  char* dp = static_cast<char*>(result.storage->data());
  std::vector<int64_t> c(rank, 0), axis_of(rank, -1);
  for (size_t k = 0; k < axes.size(); ++k) axis_of[static_cast<size_t>(axes[k])] = static_cast<int64_t>(k);
  for (int64_t at = 0, n = shape_numel(node.shape); at < n; ++at) {
    int64_t off = src.layout.offset;
    for (size_t d = 0; d < rank; ++d) {
      int64_t i = c[d];
      if (axis_of[d] >= 0) {
        i = static_cast<const int64_t*>(idx[static_cast<size_t>(axis_of[d])].storage->data())[at];
        // The frontend builds the indices in range; one out of range is a bug, not a user error.
        if (i < 0 || i >= src.shape[d]) throw Error("reference remap: index out of range (internal error)");
      }
      off += i * src.layout.strides[d];
    }
    std::memcpy(dp + at * es, sp + off * es, es);
    for (size_t d = rank; d-- > 0;) {
      if (++c[d] < node.shape[d]) break;
      c[d] = 0;
    }
  }
  return result;
}

Value scatter_add_ref(const Node& node, const std::vector<Value>& in) {
  // A fresh copy of self (values are immutable: never write into the input's storage).
  Value result = fresh(node.dtype, node.shape);
  std::memcpy(result.storage->data(), to_contiguous(in[0], node.dtype).storage->data(), result.storage->nbytes());
  Value idx = to_contiguous(in[1], DType::Int64);
  Value src = to_contiguous(in[2], node.dtype);
  const int64_t* ip = static_cast<const int64_t*>(idx.storage->data());
  int64_t axis = node.attrs.axis;
  const char* op_name = scatter_op_name(node.attrs.step);  // scatter_add, or the composite it stands for
  Shape self_strides = contiguous_strides(node.shape);
  int64_t size = node.shape[static_cast<size_t>(axis)];
  size_t rank = node.shape.size();
  dispatch(node.dtype, [&](auto tag) {
    using S = typename decltype(tag)::storage_t;
    S* out = static_cast<S*>(result.storage->data());
    const S* sp = static_cast<const S*>(src.storage->data());
    std::vector<int64_t> c(rank, 0);
    for (int64_t e = 0; e < shape_numel(idx.shape); ++e) {
      int64_t rest = e, off = 0;
      for (size_t d = rank; d-- > 0;) {
        c[d] = rest % idx.shape[d];
        rest /= idx.shape[d];
      }
      for (size_t d = 0; d < rank; ++d) {
        int64_t cd = static_cast<int64_t>(d) == axis ? checked_index(ip[e], size, op_name, axis, true) : c[d];
        off += cd * self_strides[d];
      }
      // Each add is rounded to the dtype, in order: the result does not depend on threads.
      out[off] = from_value<S>(ref::add(to_compute(out[off]), to_compute(sp[e])));
    }
  });
  return result;
}

Value scan_ref(const Node& node, const Value& in) {
  Value x = to_contiguous(in, node.dtype);
  Value result = fresh(node.dtype, node.shape);
  Around a = around(node.shape, node.attrs.axis);
  dispatch(node.dtype, [&](auto tag) {
    using S = typename decltype(tag)::storage_t;
    using C = typename decltype(tag)::compute_t;
    const S* xp = static_cast<const S*>(x.storage->data());
    S* out = static_cast<S*>(result.storage->data());
    auto step = [&](C acc, C v) {
      if constexpr (std::is_floating_point_v<C>)
        if (node.op == Op::LogCumSumExp) return ref::logaddexp(acc, v);
      return node.op == Op::CumSum ? ref::add(acc, v) : ref::mul(acc, v);
    };
    C start = node.op == Op::CumSum ? C(0) : C(1);
    if constexpr (std::is_floating_point_v<C>)
      if (node.op == Op::LogCumSumExp) start = -std::numeric_limits<C>::infinity();
    for (int64_t o = 0; o < a.outer; ++o)
      for (int64_t k = 0; k < a.inner; ++k) {
        C acc = start;  // in the compute type (float for the 16-bit floats), rounded on store
        for (int64_t j = 0; j < a.n; ++j) {
          int64_t at = (o * a.n + j) * a.inner + k;
          acc = step(acc, to_compute(xp[at]));
          out[at] = from_value<S>(acc);
        }
      }
  });
  return result;
}

Value cum_extreme_ref(const Node& node, const Value& in) {
  Value x = to_contiguous(in, in.dtype);
  Value result = fresh(DType::Int64, node.shape);
  Around a = around(node.shape, node.attrs.axis);
  bool max = node.op == Op::CumMax;
  int64_t* out = static_cast<int64_t*>(result.storage->data());
  dispatch(in.dtype, [&](auto tag) {
    using S = typename decltype(tag)::storage_t;
    using C = typename decltype(tag)::compute_t;
    const S* xp = static_cast<const S*>(x.storage->data());
    auto nan = [](C v) {
      if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
      else return false;
    };
    for (int64_t o = 0; o < a.outer; ++o)
      for (int64_t k = 0; k < a.inner; ++k) {
        C best{};
        int64_t at_best = 0;
        for (int64_t j = 0; j < a.n; ++j) {
          int64_t at = (o * a.n + j) * a.inner + k;
          C v = to_compute(xp[at]);
          if (j == 0 || nan(v) || (!nan(best) && (max ? v >= best : v <= best))) {
            best = v;
            at_best = j;
          }
          out[at] = at_best;
        }
      }
  });
  return result;
}

Value argsort_ref(const Node& node, const Value& in) {
  Value x = to_contiguous(in, in.dtype);
  Value result = fresh(DType::Int64, node.shape);
  Around a = around(in.shape, node.attrs.axis);
  // argsort keeps every position; topk the first k (the node's size along the axis).
  int64_t kept = node.shape[static_cast<size_t>(node.attrs.axis)];
  bool descending = node.attrs.keepdim;
  int64_t* out = static_cast<int64_t*>(result.storage->data());
  dispatch(in.dtype, [&](auto tag) {
    using S = typename decltype(tag)::storage_t;
    using C = typename decltype(tag)::compute_t;
    const S* xp = static_cast<const S*>(x.storage->data());
    std::vector<int64_t> order(static_cast<size_t>(a.n));
    std::vector<C> row(static_cast<size_t>(a.n));
    for (int64_t o = 0; o < a.outer; ++o)
      for (int64_t k = 0; k < a.inner; ++k) {
        for (int64_t j = 0; j < a.n; ++j) row[j] = to_compute(xp[(o * a.n + j) * a.inner + k]);
        std::iota(order.begin(), order.end(), int64_t{0});
        // NaN is larger than every number (PyTorch): last ascending, first descending.
        auto nan = [](C v) {
          if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
          else return false;
        };
        auto less = [&](int64_t p, int64_t q) {
          C u = row[p], v = row[q];
          if (descending) std::swap(u, v);
          if (nan(u)) return false;
          if (nan(v)) return true;
          return u < v;
        };
        std::stable_sort(order.begin(), order.end(), less);
        for (int64_t j = 0; j < kept; ++j) out[(o * kept + j) * a.inner + k] = order[j];
      }
  });
  return result;
}

}  // namespace lf::ir
