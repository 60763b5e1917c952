// Selection ops on the sort path (issue 23): kthvalue and median are a TopK node (the backends'
// selection, Backend::sort) followed by a gather of the values; nanmedian an argsort and a gather
// at each row's count of numbers; msort is sort along dim 0; unique
// sorts on the device and finds the runs of equal values there, reading back only their number
// (a sync point); unique_consecutive is the same without the sort.
#include <algorithm>
#include <cmath>
#include <functional>
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

std::pair<Tensor, Tensor> nanmedian(const Tensor& x, int64_t dim, bool keepdim) {
  detail::check_defined("nanmedian", {&x});
  Tensor v = as_1d(x);
  int64_t d = detail::normalize_dim("nanmedian", dim, v.dim(), v);
  if (v.size(d) == 0)
    fail("nanmedian", "dim " + std::to_string(d) + " is empty: a median needs one value at least", {&x});
  if (!is_floating(x.dtype())) return median(x, dim, keepdim);  // no NaN to skip
  // The stable sort puts a row's c numbers first (NaN is largest): the lower median of those is
  // at (c - 1) / 2, and a row of NaN only gives its first NaN (position 0), as PyTorch.
  Tensor order = argsort(v, d);
  Tensor c = sum(!isnan(v), {d}, /*keepdim=*/true);
  Tensor at = floor_divide(clamp_min(c - 1, 0), 2);
  return finish(x, v, gather(order, d, at), d, keepdim);
}

Tensor nanmedian(const Tensor& x) {
  detail::check_defined("nanmedian", {&x});
  if (x.numel() == 0) fail("nanmedian", "the input is empty: a median needs one value at least", {&x});
  return nanmedian(reshape(x, {x.numel()}), 0).first;
}

Tensor msort(const Tensor& x) {
  detail::check_defined("msort", {&x});
  return sort(x, 0).first;
}

namespace {

// The runs of equal neighbours in the 1-D `s`, or of equal rows of the 2-D `s` (NaN is never equal,
// -0.0 equals 0.0): a run starts where s[i] != s[i - 1]. `runs` is each element's run (an int64 cumsum of the starts); nonzero of
// the starts is the one sync point, reading back only the number of runs.
struct Runs {
  Tensor starts, runs, counts;
};

Runs runs_of(const Tensor& s) {
  int64_t n = s.size(0);
  Tensor first = full({1}, 1, DType::Bool).to(s.device());
  Tensor differs = slice(s, 0, 1, n) != slice(s, 0, 0, n - 1);
  if (s.dim() == 2) differs = any(differs, {1});  // rows [n, k]: a row differs in any column
  Tensor starts_here = cat({first, differs}, 0);
  Runs r;
  r.runs = cumsum(starts_here, 0) - 1;
  r.starts = reshape(nonzero(starts_here), {-1});
  int64_t count = r.starts.numel();
  Tensor ends = cat({slice(r.starts, 0, 1, count), full_like(slice(r.starts, 0, 0, 1), static_cast<double>(n))}, 0);
  r.counts = ends - r.starts;
  return r;
}

Unique empty_unique(const Tensor& x, const Tensor& flat) {
  Unique u;
  u.values = flat;
  u.inverse = zeros_like(x, DType::Int64);
  u.counts = zeros_like(flat, DType::Int64);
  return u;
}

}  // namespace

Unique unique(const Tensor& x) {
  detail::check_defined("unique", {&x});
  Tensor flat = reshape(x, {x.numel()});
  if (x.numel() == 0) return empty_unique(x, flat);
  auto [sorted, order] = sort(flat, 0);
  Runs r = runs_of(sorted);
  Unique u;
  u.values = gather(sorted, 0, r.starts);
  u.counts = r.counts;
  // Element order[i] of x sorted to place i, in run runs[i].
  u.inverse = reshape(scatter(zeros_like(order), 0, order, r.runs), x.shape());
  return u;
}

Unique unique(const Tensor& x, int64_t dim) {
  detail::check_defined("unique", {&x});
  if (x.dim() == 0) fail("unique", "a rank-0 tensor has no dim to take slices along", {&x});
  int64_t d = detail::normalize_dim("unique", dim, x.dim(), x);
  int64_t zero_dims = std::count(x.shape().begin(), x.shape().end(), int64_t{0});
  if (zero_dims > 1 || (zero_dims == 1 && x.size(d) != 0))  // PyTorch's rule
    fail("unique", "an empty dim other than dim " + std::to_string(d) + " leaves no slices to compare", {&x});
  // The slices along dim as rows [n, k], sorted lexicographically: stable argsorts by the last
  // column first (k sorts of n keys), each permuting the order the earlier ones left.
  Tensor moved = movedim(x, {d}, {0});
  Shape rest(moved.shape().begin() + 1, moved.shape().end());
  int64_t n = x.size(d), k = shape_numel(rest);
  Tensor rows = reshape(moved, {n, k});
  Tensor order = arange(0, static_cast<double>(n), 1, DType::Int64).to(x.device());
  for (int64_t c = k - 1; c >= 0 && n > 1; --c)
    order = gather(order, 0, argsort(take(select(rows, 1, c), order), 0));
  Unique u;
  if (n == 0) {
    u.values = x;
    u.inverse = zeros({0}, DType::Int64).to(x.device());
    u.counts = zeros({0}, DType::Int64).to(x.device());
    return u;
  }
  Tensor sorted = index_select(rows, 0, order);
  Runs r = runs_of(sorted);
  Shape out = rest;
  out.insert(out.begin(), r.starts.numel());
  u.values = movedim(reshape(index_select(sorted, 0, r.starts), out), {0}, {d});
  u.counts = r.counts;
  u.inverse = scatter(zeros_like(order), 0, order, r.runs);
  return u;
}

Unique unique_consecutive(const Tensor& x) {
  detail::check_defined("unique_consecutive", {&x});
  Tensor flat = reshape(x, {x.numel()});
  if (x.numel() == 0) return empty_unique(x, flat);
  Runs r = runs_of(flat);
  Unique u;
  u.values = gather(flat, 0, r.starts);
  u.counts = r.counts;
  u.inverse = reshape(r.runs, x.shape());
  return u;
}

namespace {

// PyTorch's binary search over the last dim of `seq` (M values), step for step: while start <
// end, mid = start + (end - start) / 2 and start = mid + 1 where `below(seq[mid])`, else end = mid.
// floor(log2(M)) + 1 rounds, each a gather at mid, a compare and two `where`s, fuse into one kernel
// with their producers and consumers (index math in the consumer, the small `seq` in cache). The
// same probes give PyTorch's answer even where `below` does not hold on a prefix of seq (NaN
// boundaries, an unsorted sequence).
Tensor binary_search(const Tensor& seq, const Shape& out, const std::function<Tensor(const Tensor&)>& below) {
  int64_t m = seq.size(-1);
  Tensor start = zeros(out, DType::Int64).to(seq.device());
  if (m == 0) return start;
  Tensor end = full_like(start, static_cast<double>(m));
  for (int64_t left = m; left > 0; left /= 2) {
    Tensor mid = start + ((end - start) >> 1);
    Tensor at = clamp_max(mid, m - 1);  // mid == m only where start == end: the round changes nothing there
    Tensor b = seq.dim() == 1 ? take(seq, at) : gather(seq, -1, at);
    Tensor active = start < end, go_right = below(b);
    start = where(active && go_right, mid + 1, start);
    end = where(active && !go_right, mid, end);
  }
  return start;
}

Tensor sorted_boundaries(const char* op, const Tensor& seq, const Tensor& sorter) {
  if (seq.dim() == 0) fail(op, "the sorted sequence must have one dim at least", {&seq});
  if (!sorter.defined()) return seq;
  if (sorter.dtype() != DType::Int64 || sorter.shape() != seq.shape())
    fail(op, "sorter must be int64 indices of the sorted sequence's shape", {&seq, &sorter});
  return detail::record_gather(seq, seq.dim() - 1, sorter, ir::GatherOp::Searchsorted);  // errors name searchsorted
}

}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right,
                    const Tensor& sorter) {
  detail::check_defined("searchsorted", {&sorted_sequence, &values});
  if (sorter.defined()) detail::check_same_device("searchsorted", {&sorted_sequence, &sorter});
  Tensor seq = sorted_boundaries("searchsorted", sorted_sequence, sorter);
  if (seq.dim() > 1) {
    Shape lead(seq.shape().begin(), seq.shape().end() - 1), vlead;
    if (values.dim() >= 1) vlead.assign(values.shape().begin(), values.shape().end() - 1);
    if (values.dim() != seq.dim() || lead != vlead)
      fail("searchsorted",
           "a sorted sequence of more than one dim needs values with the same leading dims (all but the last)",
           {&sorted_sequence, &values});
  }
  if (seq.device() != values.device())
    fail("searchsorted", "the sorted sequence and the values are on different devices", {&sorted_sequence, &values});
  // PyTorch's tests: left goes past b where !(b >= v), right where !(b > v); so a NaN value is
  // past every boundary, and a NaN boundary counts as below every value.
  Tensor pos = binary_search(seq, values.shape(), [&](const Tensor& b) { return !(right ? b > values : b >= values); });
  return out_int32 ? cast(pos, DType::Int32) : pos;
}

Tensor searchsorted(const Tensor& sorted_sequence, Scalar value, bool out_int32, bool right) {
  detail::check_defined("searchsorted", {&sorted_sequence});
  if (sorted_sequence.dim() != 1)
    fail("searchsorted", "a number is searched in a sorted sequence of one dim only", {&sorted_sequence});
  Tensor pos = binary_search(sorted_sequence, {}, [&](const Tensor& b) { return !(right ? b > value : b >= value); });
  return out_int32 ? cast(pos, DType::Int32) : pos;
}

Tensor isin(const Tensor& elements, const Tensor& test_elements, bool invert) {
  detail::check_defined("isin", {&elements, &test_elements});
  detail::check_same_device("isin", {&elements, &test_elements});
  int64_t n = test_elements.numel();
  if (n == 0) return full_like(elements, invert ? 1 : 0, DType::Bool);
  // Each element's place in the sorted test elements (a fused binary search), compared with the
  // test element there: NaN is never found, -0.0 finds 0.0.
  // The search's test is b < v, false for a NaN b: NaN boundaries (sorted last) stay past every
  // number here, unlike PyTorch's searchsorted test, so a number before them is found.
  Tensor sorted = sort(flatten(test_elements), 0).first;
  Tensor at = clamp_max(binary_search(sorted, elements.shape(), [&](const Tensor& b) { return b < elements; }), n - 1);
  Tensor found = take(sorted, at) == elements;
  return invert ? !found : found;
}

Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool out_int32, bool right) {
  detail::check_defined("bucketize", {&input, &boundaries});
  if (boundaries.dim() != 1) fail("bucketize", "boundaries must have one dim", {&input, &boundaries});
  return searchsorted(boundaries, input, out_int32, right);
}

}  // namespace lf
