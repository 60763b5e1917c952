// Pooling (recorded as pool2d nodes, their geometry in attrs: see codegen/ir/conv.h; small windows
// as elementwise ops over strided views) and interpolate (gathers and their weighted sums).
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <tuple>

#include "codegen/ir/conv.h"
#include "frontend/conv_args.h"
#include "frontend/record.h"
#include "runtime/checked.h"
#include "lazyfuse/ops.h"

namespace lf {
namespace {

using detail::fail;
using detail::batched;
using detail::check_float;
using detail::pair_str;

// Windows of at most this many elements pool as elementwise ops over strided views (pool_as_views);
// larger ones (and adaptive pooling) are a Pool2d node, a kernel of its own.
constexpr int64_t kMaxWindowViews = 16;

// The [oh, ow] view of `xp` (padded) at window offset (i, j): rows i, i + sh, ..., columns likewise.
Tensor window_view(const Tensor& xp, const ir::PoolParams& p, int64_t oh, int64_t ow, int64_t i, int64_t j) {
  Tensor r = slice(xp, -2, i, i + (oh - 1) * p.stride_h + 1, p.stride_h);
  return slice(r, -1, j, j + (ow - 1) * p.stride_w + 1, p.stride_w);
}

// Pooling as index math (issue 22: "pooling fuses with its elementwise producers and consumers"):
// the maximum, or the sum over the divisor, of the window's kh * kw strided views of the input,
// padded (-inf for max, 0 for avg) on the left by the padding and on the right as far as ceil_mode's
// last window reaches. One pointwise kernel, which elementwise producers and consumers join; the
// same values as the Pool2d kernel: max propagates NaN, and the divisor is PyTorch's (the window
// clipped to the padded input with count_include_pad, to the input without).
Tensor pool_as_views(const Tensor& x, const ir::PoolParams& p, int64_t oh, int64_t ow) {
  const int64_t h = x.size(2), w = x.size(3);
  const int64_t right_h = std::max<int64_t>(0, (oh - 1) * p.stride_h + p.kernel_h - h - p.pad_h);
  const int64_t right_w = std::max<int64_t>(0, (ow - 1) * p.stride_w + p.kernel_w - w - p.pad_w);
  const bool max = p.kind == ir::PoolParams::kMax;
  const bool narrow = x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16;
  const bool padded = p.pad_h || p.pad_w || right_h || right_w;
  Tensor xp = padded ? pad(x, {p.pad_w, right_w, p.pad_h, right_h}, PadMode::Constant,
                           max ? -std::numeric_limits<double>::infinity() : 0.0)
                     : x;
  if (!max && narrow) xp = cast(xp, DType::Float32);  // an average sums in float32, as the kernel
  Tensor acc;
  for (int64_t i = 0; i < p.kernel_h; ++i)
    for (int64_t j = 0; j < p.kernel_w; ++j) {
      Tensor v = window_view(xp, p, oh, ow, i, j);
      acc = !acc.defined() ? v : max ? maximum(acc, v) : acc + v;
    }
  if (max) return acc;
  // The divisor per output place, PyTorch's: the window clipped to the padded input's end (with
  // count_include_pad), or to the input on both sides; index math over two aranges.
  auto count = [&](int64_t n, int64_t k, int64_t stride, int64_t pad, int64_t size) {
    ir::Attrs a;
    a.value = static_cast<double>(-pad);
    a.value2 = static_cast<double>(stride);
    Tensor start = detail::record(ir::Op::Arange, DType::Float32, x.device(), {n}, {}, a);  // i * stride - pad
    Tensor end = minimum(start + static_cast<double>(k), detail::full_like_shape({}, static_cast<double>(size + pad),
                                                                                DType::Float32, x.device()));
    if (p.count_include_pad) return end - start;
    Tensor zero = detail::full_like_shape({}, 0.0, DType::Float32, x.device());
    Tensor last = detail::full_like_shape({}, static_cast<double>(size), DType::Float32, x.device());
    return minimum(end, last) - maximum(start, zero);
  };
  Tensor divisor = padded ? reshape(count(oh, p.kernel_h, p.stride_h, p.pad_h, h), {oh, 1}) *
                                reshape(count(ow, p.kernel_w, p.stride_w, p.pad_w, w), {1, ow})
                          : detail::full_like_shape({}, static_cast<double>(p.kernel_h * p.kernel_w), DType::Float32,
                                                    x.device());
  Tensor y = acc / divisor;
  return narrow ? cast(y, x.dtype()) : y;
}

ir::PoolParams window(int64_t kind, Size2 kernel, std::optional<Size2> stride, Size2 padding) {
  Size2 s = stride.value_or(kernel);
  return {kind, kernel.h, kernel.w, s.h, s.w, padding.h, padding.w, 1};
}

// The checks of a pooling window (kernel, stride, dilation, padding at most half the kernel) and
// the output size of x [n, c, h, w] (x0 as the user gave it, for the messages): windows spanning
// dilation (kernel - 1) + 1 places, PyTorch's rule.
std::pair<int64_t, int64_t> window_out_size(const char* op, const Tensor& x0, const Tensor& x, const ir::PoolParams& p,
                                            Size2 dilation, bool ceil_mode) {
  if (p.kernel_h < 1 || p.kernel_w < 1) fail(op, "kernel_size must be positive, not " + pair_str(p.kernel_h, p.kernel_w), {&x0});
  if (p.stride_h < 1 || p.stride_w < 1) fail(op, "stride must be positive, not " + pair_str(p.stride_h, p.stride_w), {&x0});
  if (dilation.h < 1 || dilation.w < 1) fail(op, "dilation must be positive, not " + pair_str(dilation.h, dilation.w), {&x0});
  if (p.pad_h < 0 || p.pad_w < 0 || p.pad_h > p.kernel_h / 2 || p.pad_w > p.kernel_w / 2) {  // not 2 * pad: it may overflow
    fail(op, "padding " + pair_str(p.pad_h, p.pad_w) + " must be between 0 and half the kernel " +
                 pair_str(p.kernel_h, p.kernel_w), {&x0});
  }
  const int64_t h = x.size(2), w = x.size(3);
  if (auto sh = rt::mul(dilation.h, p.kernel_h - 1), sw = rt::mul(dilation.w, p.kernel_w - 1);
      !sh || !sw || *sh == INT64_MAX || *sw == INT64_MAX)
    fail(op, "the window of kernel " + pair_str(p.kernel_h, p.kernel_w) + " and dilation " + pair_str(dilation.h, dilation.w) +
                 " is too large", {&x0});
  const int64_t span_h = dilation.h * (p.kernel_h - 1) + 1, span_w = dilation.w * (p.kernel_w - 1) + 1;
  const int64_t oh = ir::PoolParams::out_size(h, span_h, p.stride_h, p.pad_h, ceil_mode);
  const int64_t ow = ir::PoolParams::out_size(w, span_w, p.stride_w, p.pad_w, ceil_mode);
  if (oh < 1 || ow < 1) {
    const bool dilated = dilation.h > 1 || dilation.w > 1;
    fail(op, "the input " + pair_str(h, w) + " padded by " + pair_str(p.pad_h, p.pad_w) + " is smaller than the " +
                 (dilated ? "window " : "kernel ") + pair_str(span_h, span_w), {&x0});
  }
  return {oh, ow};
}

Tensor pool(const char* op, const Tensor& x0, ir::PoolParams p, bool ceil_mode, int64_t oh_adaptive = 0,
            int64_t ow_adaptive = 0) {
  detail::UserOp user(op);
  detail::check_defined(op, {&x0});
  check_float(op, {&x0});
  Tensor x = batched(op, x0, 4);
  const Shape& xs = x.shape();
  int64_t oh = oh_adaptive, ow = ow_adaptive;
  if (p.kind == ir::PoolParams::kAdaptiveAvg) {
    if (oh < 1 || ow < 1) fail(op, "output_size must be positive, not " + pair_str(oh, ow), {&x0});
    if (xs[2] < 1 || xs[3] < 1) fail(op, "needs a non-empty image", {&x0});
  } else {
    std::tie(oh, ow) = window_out_size(op, x0, x, p, 1, ceil_mode);
  }
  if (p.kind != ir::PoolParams::kAdaptiveAvg && p.kernel_h * p.kernel_w <= kMaxWindowViews) {
    Tensor y = pool_as_views(x, p, oh, ow);
    return x0.dim() == 3 ? squeeze(y, 0) : y;
  }
  ir::Attrs attrs;
  attrs.dims = p.pack();
  Tensor y = detail::record(ir::Op::Pool2d, x.dtype(), x.device(), {xs[0], xs[1], oh, ow}, {&x}, std::move(attrs));
  return x0.dim() == 3 ? squeeze(y, 0) : y;
}

// max_pool2d with dilation, and where each maximum came from (return_indices): elementwise ops over
// the window's strided views of the input padded with -inf, as pool_as_views, one kernel. A
// running maximum takes a view's value where it is greater or NaN (PyTorch's test, so the first
// maximum and the last NaN win) and its index along with it; the index starts at the window's
// first element inside the input, which a padded -inf never displaces. The input positions are
// index math over aranges broadcast to the output's shape first (a view of a computed index would
// be stored, a kernel of its own).
std::pair<Tensor, Tensor> dilated_max_pool(const char* op, const Tensor& x0, Size2 kernel, Size2 stride, Size2 padding,
                                           Size2 dilation, bool ceil_mode, bool want_indices) {
  detail::UserOp user(op);
  detail::check_defined(op, {&x0});
  check_float(op, {&x0});
  Tensor x = batched(op, x0, 4);
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const ir::PoolParams p = window(ir::PoolParams::kMax, kernel, stride, padding);
  const auto [oh, ow] = window_out_size(op, x0, x, p, dilation, ceil_mode);
  // The window's span with dilation: its first and last elements' distance + 1.
  const int64_t span_h = dilation.h * (kernel.h - 1) + 1, span_w = dilation.w * (kernel.w - 1) + 1;
  const int64_t right_h = std::max<int64_t>(0, (oh - 1) * stride.h + span_h - h - padding.h);
  const int64_t right_w = std::max<int64_t>(0, (ow - 1) * stride.w + span_w - w - padding.w);
  const double inf = std::numeric_limits<double>::infinity();
  Tensor xp = padding.h || padding.w || right_h || right_w
                  ? pad(x, {padding.w, right_w, padding.h, right_h}, PadMode::Constant, -inf)
                  : x;
  const Shape full{n, c, oh, ow};
  auto place = [&](int64_t count, Shape one) {  // output row or column index in the output's shape
    return expand(reshape(arange(0, static_cast<double>(count), 1, DType::Int64).to(x.device()), std::move(one)), full);
  };
  // Input rows of the window's rows i (row[i] * w: the index of their first column), and columns
  // of its columns j; the first ones inside the input (a window starts inside the input or its
  // left padding, so the first row >= 0 is inside).
  std::vector<Tensor> row_at, col;
  Tensor first_row, first_col;
  if (want_indices) {
    const Tensor out_row = place(oh, {1, 1, oh, 1}), out_col = place(ow, {1, 1, 1, ow});
    for (int64_t i = 0; i < kernel.h; ++i) row_at.push_back(out_row * stride.h + (i * dilation.h - padding.h));
    for (int64_t j = 0; j < kernel.w; ++j) col.push_back(out_col * stride.w + (j * dilation.w - padding.w));
    first_row = row_at.back(), first_col = col.back();
    for (size_t i = row_at.size(); i-- > 0;) first_row = where(row_at[i] >= int64_t{0}, row_at[i], first_row);
    for (size_t j = col.size(); j-- > 0;) first_col = where(col[j] >= int64_t{0}, col[j], first_col);
    for (Tensor& r : row_at) r = r * w;
  }
  Tensor value, index;
  for (int64_t i = 0; i < kernel.h; ++i)
    for (int64_t j = 0; j < kernel.w; ++j) {
      Tensor v = window_view(xp, p, oh, ow, i * dilation.h, j * dilation.w);
      if (!want_indices) {
        value = value.defined() ? maximum(value, v) : v;  // NaN propagates
        continue;
      }
      if (!value.defined()) {
        value = full_like(v, -inf);
        index = first_row * w + first_col;  // kept where every element is -inf
      }
      Tensor take = (v > value) || isnan(v);
      value = where(take, v, value);
      index = where(take, row_at[static_cast<size_t>(i)] + col[static_cast<size_t>(j)], index);
    }
  if (x0.dim() == 3) return {squeeze(value, 0), want_indices ? squeeze(index, 0) : Tensor()};
  return {value, index};
}

// One axis of adaptive max pooling: along `dim` (2: H, 3: W) of x [n, c, ., .], the maximum of
// output place i's window [floor(i in / out), ceil((i + 1) in / out)), read by gathers at the
// window's k-th place for k below the longest window (a shorter one's extra places read its last
// element again, which changes no maximum), with where each came from along `dim` (an index into
// `from`, the earlier axis' indices, when given: then row * width + column). The same test as max_pool2d_with_indices: a
// value greater than the running maximum, or NaN, is taken.
std::pair<Tensor, Tensor> adaptive_max_axis(const Tensor& x, int64_t dim, int64_t out, const Tensor& from,
                                            int64_t width) {
  const int64_t in = x.size(dim);
  std::vector<int64_t> start(static_cast<size_t>(out)), last(static_cast<size_t>(out));
  int64_t longest = 1;
  for (int64_t i = 0; i < out; ++i) {
    start[static_cast<size_t>(i)] = i * in / out;
    last[static_cast<size_t>(i)] = ((i + 1) * in + out - 1) / out - 1;
    longest = std::max(longest, last[static_cast<size_t>(i)] - start[static_cast<size_t>(i)] + 1);
  }
  Shape shape = x.shape(), one(4, 1);
  shape[static_cast<size_t>(dim)] = out;
  one[static_cast<size_t>(dim)] = out;
  auto spread = [&](const std::vector<int64_t>& v) { return expand(reshape(from_vector(v, {out}).to(x.device()), one), shape); };
  const Tensor first = spread(start), end = spread(last);
  Tensor value, index;
  for (int64_t k = 0; k < longest; ++k) {
    Tensor at = k == 0 ? first : minimum(first + k, end);
    Tensor v = gather(x, dim, at);
    if (!value.defined()) {
      value = v, index = at;
      continue;
    }
    Tensor take = (v > value) || isnan(v);
    value = where(take, v, value);
    index = where(take, at, index);
  }
  // Rows after columns: the column each row's maximum came from, at the row taken.
  if (from.defined()) index = index * width + gather(from, dim, index);
  return {value, index};
}

std::pair<Tensor, Tensor> adaptive_max_pool(const char* op, const Tensor& x0, Size2 output_size, bool want_indices) {
  detail::UserOp user(op);
  detail::check_defined(op, {&x0});
  check_float(op, {&x0});
  Tensor x = batched(op, x0, 4);
  if (output_size.h < 1 || output_size.w < 1)
    fail(op, "output_size must be positive, not " + pair_str(output_size.h, output_size.w), {&x0});
  if (x.size(2) < 1 || x.size(3) < 1) fail(op, "needs a non-empty image", {&x0});
  detail::check_shape(op, {x.size(0), x.size(1), output_size.h, output_size.w}, x.dtype());
  // Each side's window table is a host vector: a side of 2^40 would fill a large machine's memory
  // before failing (seen on the 128 GiB GPU host), so sides past 2^24 are refused outright.
  constexpr int64_t kMaxSide = int64_t{1} << 24;
  if (output_size.h > kMaxSide || output_size.w > kMaxSide)
    fail(op, "output_size " + pair_str(output_size.h, output_size.w) + " is too large (each side at most 2^24)", {&x0});
  // The maximum over a box is the maximum over its rows of each row's maximum over its columns:
  // along W (each row's first maximum, or last NaN), then along H, which keeps row-major order's
  // first maximum and last NaN.
  Tensor value, index;
  try {
    auto [cols, col_at] = adaptive_max_axis(x, 3, output_size.w, Tensor(), 0);
    std::tie(value, index) = adaptive_max_axis(cols, 2, output_size.h, col_at, x.size(3));
  } catch (const std::bad_alloc&) {
    // The windows' tables (host vectors as long as the output's sides) of an output_size of 2^40
    // (hostile input issue, item 12).
    fail(op, "output_size " + pair_str(output_size.h, output_size.w) + " needs more memory than there is", {&x0});
  } catch (const std::length_error&) {
    fail(op, "output_size " + pair_str(output_size.h, output_size.w) + " is too large", {&x0});
  }
  if (x0.dim() == 3) return {squeeze(value, 0), want_indices ? squeeze(index, 0) : Tensor()};
  return {value, want_indices ? index : Tensor()};
}

}  // namespace

Tensor max_pool2d(const Tensor& x, Size2 kernel, std::optional<Size2> stride, Size2 padding, bool ceil_mode,
                  Size2 dilation) {
  if (dilation.h == 1 && dilation.w == 1)
    return pool("max_pool2d", x, window(ir::PoolParams::kMax, kernel, stride, padding), ceil_mode);
  return dilated_max_pool("max_pool2d", x, kernel, stride.value_or(kernel), padding, dilation, ceil_mode, false).first;
}

std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, Size2 kernel, std::optional<Size2> stride,
                                                  Size2 padding, bool ceil_mode, Size2 dilation) {
  return dilated_max_pool("max_pool2d_with_indices", x, kernel, stride.value_or(kernel), padding, dilation, ceil_mode,
                          true);
}

Tensor adaptive_max_pool2d(const Tensor& x, Size2 output_size) {
  return adaptive_max_pool("adaptive_max_pool2d", x, output_size, false).first;
}

std::pair<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& x, Size2 output_size) {
  return adaptive_max_pool("adaptive_max_pool2d_with_indices", x, output_size, true);
}

Tensor max_unpool2d(const Tensor& x0, const Tensor& indices0, Size2 kernel, std::optional<Size2> stride, Size2 padding,
                    std::optional<Size2> output_size) {
  const char* op = "max_unpool2d";
  detail::UserOp user(op);
  detail::check_defined(op, {&x0, &indices0});
  detail::check_same_device(op, {&x0, &indices0});
  check_float(op, {&x0});
  if (indices0.dtype() != DType::Int64) fail(op, "indices must be int64", {&x0, &indices0});
  if (indices0.shape() != x0.shape()) fail(op, "indices must have the shape of x", {&x0, &indices0});
  Tensor x = batched(op, x0, 4), indices = batched(op, indices0, 4);
  const Size2 s = stride.value_or(kernel);
  if (kernel.h < 1 || kernel.w < 1 || s.h < 1 || s.w < 1)
    fail(op, "kernel_size and stride must be positive, not " + pair_str(kernel.h, kernel.w) + " and " + pair_str(s.h, s.w),
         {&x0});
  const int64_t n = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  const Size2 natural((h - 1) * s.h - 2 * padding.h + kernel.h, (w - 1) * s.w - 2 * padding.w + kernel.w);
  const Size2 out = output_size.value_or(natural);
  // PyTorch's rule: within a stride of the natural size, either way.
  if (out.h <= natural.h - s.h || out.h >= natural.h + s.h || out.w <= natural.w - s.w || out.w >= natural.w + s.w)
    fail(op, "output_size " + pair_str(out.h, out.w) + " must be within a stride of " + pair_str(natural.h, natural.w),
         {&x0});
  if (out.h < 1 || out.w < 1) fail(op, "the output size " + pair_str(out.h, out.w) + " must be positive", {&x0});
  Tensor plane = zeros({n, c, out.h * out.w}, x.dtype()).to(x.device());
  // An index outside the plane is an error at the sync point (scatter's check); a negative one
  // too, which scatter would count from the end: it becomes the plane's size, out of range.
  Tensor flat = reshape(indices, {n, c, h * w});
  flat = where(flat < 0, Scalar(out.h * out.w), flat);
  Tensor y = reshape(scatter(plane, 2, flat, reshape(x, {n, c, h * w})), {n, c, out.h, out.w});
  return x0.dim() == 3 ? squeeze(y, 0) : y;
}

Tensor avg_pool2d(const Tensor& x, Size2 kernel, std::optional<Size2> stride, Size2 padding, bool ceil_mode,
                  bool count_include_pad) {
  ir::PoolParams p = window(ir::PoolParams::kAvg, kernel, stride, padding);
  p.count_include_pad = count_include_pad;
  return pool("avg_pool2d", x, p, ceil_mode);
}

Tensor adaptive_avg_pool2d(const Tensor& x, Size2 output_size) {
  ir::PoolParams p;
  p.kind = ir::PoolParams::kAdaptiveAvg;
  p.pad_h = p.pad_w = 0;
  return pool("adaptive_avg_pool2d", x, p, false, output_size.h, output_size.w);
}

// F.interpolate (issue 22's decoders): PyTorch's source index per output index along H and W,
// computed in the accumulation type as PyTorch computes it (float32, float64 for float64), then
// gathers (index math in the consumer) and, for the linear and cubic modes, their weighted sum;
// "area" is adaptive average pooling, as in PyTorch.
namespace {

enum class Interp { kNearest, kNearestExact, kLinear, kCubic };

// The source indices (int64) along one axis and their weights (the linear and cubic modes): 1, 2
// or 4 points an output index, each a tensor of the output's shape.
struct Axis {
  std::vector<Tensor> i, w;
};

// PyTorch's cubic convolution kernel (aten/src/ATen/native/UpSample.h, A = -0.75): the weights of
// the points at distances t + 1, t, 1 - t and 2 - t from the source coordinate.
std::vector<Tensor> cubic_weights(const Tensor& t) {
  constexpr double A = -0.75;
  auto near = [](const Tensor& x) { return ((A + 2) * x - (A + 3)) * x * x + 1.0; };     // |x| <= 1
  auto far = [](const Tensor& x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };  // 1 < |x| < 2
  Tensor u = 1.0 - t;
  return {far(t + 1.0), near(t), near(u), far(u + 1.0)};
}

// scale: in / out, or 1 / scale_factor when the caller gave one (PyTorch's rule).
// The output index is broadcast to the output's shape `full` first (along dim `axis`), so that no
// computed index or weight is broadcast afterwards: a view of a computed value is stored for its
// readers, a kernel of its own (the cubic weights are too deep to be pushed through as index
// math). Each output element computes its coordinates: a few operations beside 16 reads.
Axis interp_axis(int64_t in, int64_t out, double scale, Interp mode, bool align_corners, DType acc, Device dev,
                 const Shape& full, int64_t axis) {
  Shape one(full.size(), 1);
  one[static_cast<size_t>(axis)] = out;
  Tensor dst = expand(reshape(arange(0, static_cast<double>(out), 1, acc).to(dev), one), full);
  Axis a;
  if (mode == Interp::kNearest || mode == Interp::kNearestExact) {  // floor(dst * scale), or of dst + 0.5
    // (Some PyTorch CPU builds take an output as large as the input, or twice as large, as dst
    // and dst / 2 whatever the scale factor; 1.13's and the CUDA kernels use the scale, as here.)
    Tensor src = mode == Interp::kNearest ? dst * scale : (dst + 0.5) * scale;
    a.i = {clamp_max(cast(floor(src), DType::Int64), in - 1)};
    return a;
  }
  double s = align_corners ? (out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0) : scale;
  if (mode == Interp::kLinear) {
    Tensor src = align_corners ? dst * s : clamp_min((dst + 0.5) * s - 0.5, 0.0);
    Tensor i0 = clamp_max(cast(src, DType::Int64), in - 1);  // src >= 0: truncation is floor
    Tensor w1 = src - cast(i0, acc);
    a.i = {i0, clamp_max(i0 + 1, in - 1)};
    a.w = {1.0 - w1, w1};
    return a;
  }
  // Cubic: the source coordinate is not clamped at 0; the 4 points around its floor are clamped
  // into the image (PyTorch's guard_index_and_lambda and upsample_get_value_bounded).
  Tensor src = align_corners ? dst * s : (dst + 0.5) * s - 0.5;
  Tensor i0 = clamp_max(cast(floor(src), DType::Int64), in - 1);
  a.w = cubic_weights(clamp(src - cast(i0, acc), 0.0, 1.0));
  for (int64_t k = -1; k <= 2; ++k) a.i.push_back(clamp(i0 + k, 0, in - 1));
  return a;
}

Interp interp_mode(const Tensor& x, const std::string& mode) {
  if (mode == "nearest") return Interp::kNearest;
  if (mode == "nearest-exact") return Interp::kNearestExact;
  if (mode == "linear" || mode == "bilinear" || mode == "trilinear") return Interp::kLinear;
  if (mode == "bicubic") return Interp::kCubic;
  fail("interpolate",
       "mode must be \"nearest\", \"nearest-exact\", \"linear\", \"bilinear\", \"bicubic\", \"trilinear\" or \"area\", not \"" +
           mode + "\"",
       {&x});
}

}  // namespace

Tensor interpolate(const Tensor& x, std::vector<int64_t> size, const std::string& mode,
                   std::optional<bool> align_corners, std::vector<double> scales) {
  detail::UserOp user("interpolate");
  detail::check_defined("interpolate", {&x});
  const bool area = mode == "area";
  const Interp how = area ? Interp::kNearest : interp_mode(x, mode);
  const bool weighted = how == Interp::kLinear || how == Interp::kCubic;
  if (!is_floating(x.dtype())) fail("interpolate", "x must be a floating-point tensor", {&x});
  if (x.dim() < 3 || x.dim() > 5) fail("interpolate", "x must be [N, C, L], [N, C, H, W] or [N, C, D, H, W]", {&x});
  if ((mode == "linear" && x.dim() != 3) || ((mode == "bilinear" || mode == "bicubic") && x.dim() != 4) ||
      (mode == "trilinear" && x.dim() != 5))
    fail("interpolate",
         "\"linear\" is for [N, C, L], \"bilinear\" and \"bicubic\" for [N, C, H, W], \"trilinear\" for [N, C, D, H, W]",
         {&x});
  if (!weighted && align_corners.has_value())
    fail("interpolate", "align_corners is for the linear and cubic modes only", {&x});
  const size_t spatial = static_cast<size_t>(x.dim() - 2);
  if (size.size() != spatial)
    fail("interpolate", "needs " + std::to_string(spatial) + " output sizes, got " + shape_str(size), {&x});
  for (int64_t n : size)
    if (n <= 0) fail("interpolate", "output sizes must be positive, got " + shape_str(size), {&x});
  // [N, C, L] as [N, C, 1, L]; images and volumes as they are.
  Tensor v = x.dim() == 3 ? unsqueeze(x, 2) : x;
  if (x.dim() == 3) size.insert(size.begin(), 1);
  if (scales.size() == 1 && x.dim() == 3) scales.insert(scales.begin(), 1.0);
  const size_t k = size.size();  // 2 or 3 axes
  const int64_t n = v.size(0), c = v.size(1);
  std::vector<int64_t> in(k);
  for (size_t a = 0; a < k; ++a) in[a] = v.size(static_cast<int64_t>(2 + a));
  for (int64_t s : in)
    if (s == 0) fail("interpolate", "cannot resize an empty image", {&x});
  auto unflat = [&](const Tensor& out) { return x.dim() == 3 ? squeeze(out, 2) : out; };
  if (area) {  // each output the mean of its window, as adaptive_avg_pool (which ignores a scale factor)
    if (k == 2) return unflat(adaptive_avg_pool2d(v, {size[0], size[1]}));
    // A box's mean is the mean over its depths of its planes' window means: H and W, then D, in
    // float32 for the 16-bit floats (rounded once, as one pool would).
    const int64_t d = in[0], od = size[0], oh = size[1], ow = size[2];
    const bool narrow = x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16;
    Tensor planes = adaptive_avg_pool2d(reshape(narrow ? cast(v, DType::Float32) : v, {n, c * d, in[1], in[2]}), {oh, ow});
    Tensor box = adaptive_avg_pool2d(reshape(planes, {n, c, d, oh * ow}), {od, oh * ow});
    return reshape(narrow ? cast(box, x.dtype()) : box, {n, c, od, oh, ow});
  }
  DType acc = x.dtype() == DType::Float64 ? DType::Float64 : DType::Float32;
  Shape full{n, c};
  full.insert(full.end(), size.begin(), size.end());
  std::vector<Axis> axes;
  for (size_t a = 0; a < k; ++a) {
    const double scale = scales.empty() ? static_cast<double>(in[a]) / static_cast<double>(size[a]) : 1.0 / scales[a];
    axes.push_back(interp_axis(in[a], size[a], scale, how, align_corners.value_or(false), acc, x.device(), full,
                               static_cast<int64_t>(2 + a)));
  }
  // Each point read is one gather of the image's plane at a flat index (i * H + j) * W + l,
  // gathered in the output's own shape (the plane broadcast over the output's other axes): no
  // gather of a gather and no reshape of a gathered value, so the reads and the weighted sum are
  // one kernel.
  int64_t volume = 1;
  for (int64_t s : in) volume *= s;
  Shape plane_shape(full.begin(), full.end() - 1), one(k + 2, 1);
  plane_shape.push_back(volume);
  one[0] = n, one[1] = c, one[k + 1] = volume;
  Tensor plane = expand(reshape(v, one), plane_shape);
  const int64_t last = static_cast<int64_t>(k + 1);
  // The weighted sum over axes a.. of the points whose flat index so far is `at`: along the last
  // axis first (W in each source row), then the ones before it.
  std::function<Tensor(size_t, const Tensor&)> point_sum = [&](size_t a, const Tensor& at) -> Tensor {
    const Axis& ax = axes[a];
    auto inner = [&](size_t r) {
      Tensor idx = a == 0 ? ax.i[r] : at * in[a] + ax.i[r];
      if (a + 1 < k) return point_sum(a + 1, idx);
      Tensor point = gather(plane, last, idx);
      return weighted ? cast(point, acc) : point;
    };
    if (!weighted) return inner(0);
    Tensor sum = inner(0) * ax.w[0];
    for (size_t r = 1; r < ax.i.size(); ++r) sum = sum + inner(r) * ax.w[r];
    return sum;
  };
  Tensor out = point_sum(0, Tensor());
  return unflat(weighted ? cast(out, x.dtype()) : out);
}

Tensor interpolate(const Tensor& x, double scale_factor, const std::string& mode, std::optional<bool> align_corners) {
  detail::UserOp user("interpolate");
  detail::check_defined("interpolate", {&x});
  if (!(scale_factor > 0) || !std::isfinite(scale_factor))
    fail("interpolate", "scale_factor must be positive, got " + std::to_string(scale_factor), {&x});
  if (x.dim() < 3 || x.dim() > 5) fail("interpolate", "x must be [N, C, L], [N, C, H, W] or [N, C, D, H, W]", {&x});
  std::vector<int64_t> size;
  for (int64_t d = 2; d < x.dim(); ++d)
    size.push_back(static_cast<int64_t>(std::floor(static_cast<double>(x.size(d)) * scale_factor)));
  return interpolate(x, size, mode, align_corners, std::vector<double>(size.size(), scale_factor));
}

}  // namespace lf
