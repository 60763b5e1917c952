// Data-dependent sizes (issue 23): nonzero and masked_select. Each is one sync point that reads one
// number back, the count; everything else stays on the device and lazy: the positions of the
// selected elements are a cumsum of the mask (a scan kernel), the count its last element, and the
// selected flat indices a scatter of arange to those positions (non-selected elements go to one
// spare slot past the end, sliced off). Each selected slot receives exactly one index, so the
// result is exact and deterministic on every backend. Values are gathered at the indices (take),
// so they keep their bits (the sign of zero, NaN payloads).
#include <vector>

#include "frontend/record.h"
#include "lazyfuse/ops.h"

namespace lf {
namespace {

using detail::fail;

// The flat (row-major) indices of the true elements of the bool `mask`, as int64 [count].
Tensor true_indices(const Tensor& mask) {
  Tensor flat = flatten(mask);
  int64_t n = flat.numel();
  if (n == 0) return zeros({0}, DType::Int64).to(mask.device());
  Tensor pos = cumsum(flat, 0);                            // int64: 1-based position of each true element
  int64_t count = slice(pos, 0, n - 1, n).item<int64_t>();  // the sync point: one number read back
  Tensor target = where(flat, pos - 1, count);
  Tensor all = arange(0, static_cast<double>(n), 1, DType::Int64).to(mask.device());
  Tensor slots = scatter_add(zeros({count + 1}, DType::Int64).to(mask.device()), 0, target, all);
  return slice(slots, 0, 0, count);
}

}  // namespace

Tensor nonzero(const Tensor& x) {
  detail::check_defined("nonzero", {&x});
  Tensor mask = x.dtype() == DType::Bool ? x : x != 0;
  Tensor flat = true_indices(mask);
  int64_t rank = x.dim();
  int64_t count = flat.numel();
  if (rank == 0) return zeros({count, 0}, DType::Int64).to(x.device());
  // Column d: the d-th coordinate of each index, gathered from arange(size_d) broadcast over x's shape.
  std::vector<Tensor> columns;
  for (int64_t d = 0; d < rank; ++d) {
    Shape along(static_cast<size_t>(rank), 1);
    along[static_cast<size_t>(d)] = x.size(d);
    Tensor coord = reshape(arange(0, static_cast<double>(x.size(d)), 1, DType::Int64).to(x.device()), along);
    columns.push_back(reshape(take(expand(coord, x.shape()), flat), {count, 1}));
  }
  return cat(columns, 1);
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  detail::check_defined("masked_select", {&x, &mask});
  detail::check_same_device("masked_select", {&x, &mask});
  if (mask.dtype() != DType::Bool) fail("masked_select", "mask must be bool", {&x, &mask});
  Shape shape = detail::broadcast_shapes("masked_select", x, mask);
  return take(expand(x, shape), true_indices(expand(mask, shape)));
}

}  // namespace lf
