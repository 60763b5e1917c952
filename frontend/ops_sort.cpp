// Selection ops on the sort path (issue 23): kthvalue and median are a TopK node (the backends'
// selection, Backend::sort) followed by a gather of the values; msort is sort along dim 0; unique
// sorts on the device and reads the sorted values back (its size is data: a sync point).
#include <cmath>
#include <string>

#include "codegen/ir/dtype_dispatch.h"
#include "frontend/record.h"
#include "lazyfuse/ops.h"

namespace lf {
namespace {

using detail::fail;

// The first k positions of the stable order along dim (largest first when `largest`).
Tensor topk_indices(const Tensor& v, int64_t k, int64_t dim, bool largest) {
  ir::Attrs a;
  a.axis = dim;
  a.start = k;
  a.keepdim = largest;
  Shape shape = v.shape();
  shape[dim] = k;
  return detail::record(ir::Op::TopK, DType::Int64, v.device(), shape, {&v}, std::move(a));
}

std::pair<Tensor, Tensor> finish(const Tensor& x, const Tensor& v, Tensor idx, int64_t d, bool keepdim) {
  Tensor values = gather(v, d, idx);
  if (x.dim() == 0) return {reshape(values, {}), reshape(idx, {})};
  if (keepdim) return {values, idx};
  return {squeeze(values, d), squeeze(idx, d)};
}

Tensor as_1d(const Tensor& x) { return x.dim() == 0 ? reshape(x, {1}) : x; }

}  // namespace

std::pair<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim, bool keepdim) {
  detail::check_defined("kthvalue", {&x});
  Tensor v = as_1d(x);
  int64_t d = detail::normalize_dim("kthvalue", dim, v.dim(), v);
  if (k < 1 || k > v.size(d))
    fail("kthvalue", "k = " + std::to_string(k) + " is out of range for dim " + std::to_string(d) + " of size " +
                         std::to_string(v.size(d)) + " (valid: 1 to the size)",
         {&x});
  Tensor idx = slice(topk_indices(v, k, d, false), d, k - 1, k);
  return finish(x, v, idx, d, keepdim);
}

std::pair<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim) {
  detail::check_defined("median", {&x});
  Tensor v = as_1d(x);
  int64_t d = detail::normalize_dim("median", dim, v.dim(), v);
  int64_t n = v.size(d);
  if (n == 0) fail("median", "dim " + std::to_string(d) + " is empty: a median needs one value at least", {&x});
  int64_t k = (n - 1) / 2 + 1;
  Tensor idx = slice(topk_indices(v, k, d, false), d, k - 1, k);
  if (is_floating(x.dtype())) {
    // PyTorch's median is NaN when the row has one, at the first NaN: the first of the stable
    // descending order, where NaN comes first.
    Tensor first = topk_indices(v, 1, d, true);
    idx = where(isnan(gather(v, d, first)), first, idx);
  }
  return finish(x, v, idx, d, keepdim);
}

Tensor median(const Tensor& x) {
  detail::check_defined("median", {&x});
  if (x.numel() == 0) fail("median", "the input is empty: a median needs one value at least", {&x});
  return median(reshape(x, {x.numel()}), 0).first;
}

Tensor msort(const Tensor& x) {
  detail::check_defined("msort", {&x});
  return sort(x, 0).first;
}

Unique unique(const Tensor& x) {
  detail::check_defined("unique", {&x});
  Tensor flat = reshape(x, {x.numel()});
  auto [sorted, order] = sort(flat, 0);
  // The sync point: the sorted values and their positions, on the host.
  std::vector<int64_t> pos = order.to_vector<int64_t>();
  std::vector<int64_t> starts, counts, inverse(pos.size());
  auto group = [&](auto same) {
    for (size_t i = 0; i < pos.size(); ++i) {
      if (i == 0 || !same(i)) {
        starts.push_back(static_cast<int64_t>(i));
        counts.push_back(0);
      }
      ++counts.back();
      inverse[static_cast<size_t>(pos[i])] = static_cast<int64_t>(starts.size()) - 1;
    }
  };
  if (is_floating(x.dtype())) {
    std::vector<double> s = sorted.to_vector<double>();  // exact for every float dtype
    group([&](size_t i) { return s[i] == s[i - 1]; });   // NaN != NaN: each NaN its own value
  } else {
    std::vector<int64_t> s = sorted.to_vector<int64_t>();
    group([&](size_t i) { return s[i] == s[i - 1]; });
  }
  auto on_device = [&](Tensor t) { return t.device() == x.device() ? t : t.to(x.device()); };
  Tensor at = on_device(from_vector(starts, {static_cast<int64_t>(starts.size())}));
  Unique u;
  u.values = gather(sorted, 0, at);
  u.counts = on_device(from_vector(counts, {static_cast<int64_t>(counts.size())}));
  u.inverse = on_device(reshape(from_vector(inverse, {static_cast<int64_t>(inverse.size())}), x.shape()));
  return u;
}

}  // namespace lf
