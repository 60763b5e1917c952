// Convolution and transposed convolution (recorded as conv2d nodes, their geometry in attrs: see
// codegen/ir/conv.h), and the channel normalizations (batch_norm, group_norm: composites of
// reductions and elementwise ops, which the fuser fuses; after a convolution, inference batch
// norm's per-channel scale and shift join the convolution's epilogue). Pooling: ops_pool.cpp.
#include <limits>
#include <string>
#include <cstring>

#include "codegen/ir/conv.h"
#include "frontend/conv_args.h"
#include "frontend/record.h"
#include "lazyfuse/ops.h"

namespace lf {
namespace detail {

std::string pair_str(int64_t h, int64_t w) { return "(" + std::to_string(h) + ", " + std::to_string(w) + ")"; }

void check_float(const char* op, std::initializer_list<const Tensor*> args) {
  DType d = (*args.begin())->dtype();
  for (const Tensor* t : args) {
    if (!t->defined()) continue;
    if (!is_floating(t->dtype())) fail(op, "is only defined for floating-point tensors", args);
    if (t->dtype() != d) fail(op, "input, weight and bias must have one dtype", args);
  }
}

// An unbatched input ([C, H, W]) gets a batch dim of 1, dropped again from the result.
Tensor batched(const char* op, const Tensor& x, int64_t rank) {
  if (x.dim() == rank) return x;
  if (x.dim() == rank - 1) return unsqueeze(x, 0);
  fail(op, "expects a " + std::to_string(rank) + "-D (batched) or " + std::to_string(rank - 1) +
               "-D (unbatched) input", {&x});
}

}  // namespace detail

namespace {

using detail::fail;
using detail::batched;
using detail::check_float;
using detail::pair_str;

// The arguments conv2d and conv_transpose2d check alike (weight_dims: the weight's 4-D layout, for
// the message); x as a batch of 4 dims.
Tensor checked_conv_input(const char* op, const Tensor& x0, const Tensor& weight, const Tensor& bias, Size2 stride,
                          int64_t pad_h, int64_t pad_w, Size2 dilation, int64_t groups, const char* weight_dims) {
  detail::check_defined(op, {&x0, &weight});
  detail::check_same_device(op, {&x0, &weight});
  if (bias.defined()) detail::check_same_device(op, {&x0, &bias});
  check_float(op, {&x0, &weight, &bias});
  Tensor x = batched(op, x0, 4);
  if (weight.dim() != 4) fail(op, std::string("weight must be 4-D ") + weight_dims, {&x0, &weight});
  if (groups < 1) fail(op, "groups must be at least 1, not " + std::to_string(groups), {&x0, &weight});
  if (stride.h < 1 || stride.w < 1) fail(op, "stride must be positive, not " + pair_str(stride.h, stride.w), {&x0});
  if (dilation.h < 1 || dilation.w < 1)
    fail(op, "dilation must be positive, not " + pair_str(dilation.h, dilation.w), {&x0});
  if (pad_h < 0 || pad_w < 0) fail(op, "padding must be non-negative, not " + pair_str(pad_h, pad_w), {&x0});
  // The sizes the output's arithmetic forms (the dilated kernel, the padded input, a transposed
  // convolution's strided input), exact in 128 bits: past 2^62 they overflow it (INT64_MAX
  // dilation or padding gave garbage, not an error).
  const Shape& xs = x.shape();
  auto overflows = [](__int128 v) { return v > (__int128{1} << 62); };
  for (int d = 0; d < 2; ++d) {
    const __int128 k = weight.shape()[static_cast<size_t>(2 + d)], in = xs[static_cast<size_t>(2 + d)];
    const __int128 dil = d == 0 ? dilation.h : dilation.w, pad = d == 0 ? pad_h : pad_w, st = d == 0 ? stride.h : stride.w;
    if (overflows(dil * (k - 1) + 1) || overflows(in + 2 * pad) || overflows(st * (in - 1) + dil * (k - 1) + 1))
      fail(op, "stride " + pair_str(stride.h, stride.w) + ", padding " + pair_str(pad_h, pad_w) + " and dilation " +
                   pair_str(dilation.h, dilation.w) + " overflow the output size's arithmetic",
           {&x0, &weight});
  }
  return x;
}

}  // namespace

Padding2::Padding2(const char* mode) {
  if (std::strcmp(mode, "same") == 0) {
    same = true;
  } else if (std::strcmp(mode, "valid") != 0) {
    throw Error(std::string("lf::conv2d: padding must be an int, a pair, \"same\" or \"valid\", not \"") + mode + "\"");
  }
}

Tensor conv2d(const Tensor& x0, const Tensor& weight, const Tensor& bias, Size2 stride, Padding2 padding,
              Size2 dilation, int64_t groups) {
  const char* op = "conv2d";
  Tensor x = checked_conv_input(op, x0, weight, bias, stride, padding.h, padding.w, dilation, groups,
                                "[out_channels, in_channels / groups, kh, kw]");
  const Shape& xs = x.shape();
  const Shape& ws = weight.shape();
  int64_t out_c = ws[0], kh = ws[2], kw = ws[3];
  if (xs[1] % groups != 0 || xs[1] / groups != ws[1]) {  // not ws[1] * groups: it may overflow
    fail(op, "input has " + std::to_string(xs[1]) + " channels, weight expects " + std::to_string(ws[1]) + " x " +
                 std::to_string(groups) + " groups", {&x0, &weight});
  }
  if (out_c % groups != 0)
    fail(op, "out_channels " + std::to_string(out_c) + " is not divisible by groups " + std::to_string(groups), {&weight});
  if (bias.defined() && bias.shape() != Shape{out_c})
    fail(op, "bias must have shape [" + std::to_string(out_c) + "]", {&weight, &bias});
  ir::ConvParams p;
  p.stride_h = stride.h;
  p.stride_w = stride.w;
  p.dil_h = dilation.h;
  p.dil_w = dilation.w;
  p.groups = groups;
  if (padding.same) {
    if (stride.h != 1 || stride.w != 1) fail(op, "padding \"same\" needs stride 1, not " + pair_str(stride.h, stride.w), {&x0});
    int64_t th = dilation.h * (kh - 1), tw = dilation.w * (kw - 1);
    p.pad_top = th / 2;
    p.pad_bottom = th - th / 2;
    p.pad_left = tw / 2;
    p.pad_right = tw - tw / 2;
  } else {
    p.pad_top = p.pad_bottom = padding.h;
    p.pad_left = p.pad_right = padding.w;
  }
  int64_t oh = ir::ConvParams::out_size(xs[2], kh, p.stride_h, p.pad_top, p.pad_bottom, p.dil_h);
  int64_t ow = ir::ConvParams::out_size(xs[3], kw, p.stride_w, p.pad_left, p.pad_right, p.dil_w);
  if (oh < 1 || ow < 1) {
    fail(op, "the padded input " + pair_str(xs[2] + p.pad_top + p.pad_bottom, xs[3] + p.pad_left + p.pad_right) +
                 " is smaller than the dilated kernel " + pair_str(p.dil_h * (kh - 1) + 1, p.dil_w * (kw - 1) + 1),
         {&x0, &weight});
  }
  Shape out{xs[0], out_c, oh, ow};
  detail::check_shape(op, out, x.dtype());
  ir::Attrs attrs;
  attrs.dims = p.pack();
  Tensor y = detail::record(ir::Op::Conv2d, x.dtype(), x.device(), out, {&x, &weight}, std::move(attrs));
  if (bias.defined()) y = y + reshape(bias, {1, out_c, 1, 1});
  return x0.dim() == 3 ? squeeze(y, 0) : y;
}

Tensor conv2d(const Tensor& x, const Tensor& weight, Size2 stride, Padding2 padding, Size2 dilation, int64_t groups) {
  return conv2d(x, weight, Tensor(), stride, padding, dilation, groups);
}

Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, int64_t stride, Padding2 padding,
              int64_t dilation, int64_t groups) {
  detail::UserOp user("conv1d");
  detail::check_defined("conv1d", {&x, &weight});
  if (x.dim() != 2 && x.dim() != 3) fail("conv1d", "expects a 3-D (batched) or 2-D (unbatched) input", {&x});
  if (weight.dim() != 3) fail("conv1d", "weight must be 3-D [out_channels, in_channels / groups, k]", {&x, &weight});
  Padding2 pad2 = padding.same ? Padding2("same") : Padding2(0, padding.w);
  Tensor y = conv2d(unsqueeze(x, -2), unsqueeze(weight, -2), bias, Size2(1, stride), pad2, Size2(1, dilation), groups);
  return squeeze(y, -2);
}

namespace {

// [C] -> [1, C, 1, ...] against an input of rank `rank`.
Tensor per_channel(const Tensor& v, int64_t rank) {
  Shape s(static_cast<size_t>(rank), 1);
  s[1] = v.shape()[0];
  return reshape(v, s);
}

void check_channels(const char* op, const Tensor& x, const Tensor& v, const char* what) {
  if (!v.defined()) return;
  detail::check_same_device(op, {&x, &v});
  if (v.shape() != Shape{x.shape()[1]})
    fail(op, std::string(what) + " must have shape [" + std::to_string(x.shape()[1]) + "]", {&x, &v});
}

void check_norm_input(const char* op, const Tensor& x) {
  detail::check_defined(op, {&x});
  if (x.dim() < 2) fail(op, "expects an input [N, C, ...] of at least 2 dims", {&x});
  if (!is_floating(x.dtype())) fail(op, "is only defined for floating-point tensors", {&x});
}

Tensor affine(const Tensor& y, const Tensor& weight, const Tensor& bias) {
  Tensor r = y;
  if (weight.defined()) r = r * per_channel(weight, y.dim());
  if (bias.defined()) r = r + per_channel(bias, y.dim());
  return r;
}

}  // namespace

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, double eps) {
  detail::UserOp user("batch_norm");
  const char* op = "batch_norm";
  check_norm_input(op, x);
  detail::check_defined(op, {&running_mean, &running_var});
  for (auto [t, what] : {std::pair{&running_mean, "running_mean"}, {&running_var, "running_var"}, {&weight, "weight"},
                         {&bias, "bias"}})
    check_channels(op, x, *t, what);
  // One multiply-add per element, the per-channel arithmetic done once on [C]. For the 16-bit
  // floats, as PyTorch's kernel computes it: in float32, x widened and the result rounded once, the
  // scale and shift never rounded to x's dtype. A rounded scale carries one error into every element
  // of its channel, and through ResNet-18's 20 batch norms in bfloat16 those errors made its logits
  // drift 1.5x as far from the float64 reference as PyTorch's (bench/RESULTS.md, 2026-11-28).
  // After a convolution the float32 epilogue runs inside cuDNN's call (conv_epilogue.h).
  const bool narrow = x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16;
  const DType acc = narrow ? DType::Float32 : x.dtype();
  Tensor scale = rsqrt(cast(running_var, acc) + eps);
  if (weight.defined()) scale = scale * cast(weight, acc);
  Tensor shift = -cast(running_mean, acc) * scale;
  if (bias.defined()) shift = shift + cast(bias, acc);
  Tensor y = cast(x, acc) * per_channel(scale, x.dim()) + per_channel(shift, x.dim());
  return narrow ? cast(y, x.dtype()) : y;
}

BatchNormOutput batch_norm_training(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  const char* op = "batch_norm_training";
  check_norm_input(op, x);
  check_channels(op, x, weight, "weight");
  check_channels(op, x, bias, "bias");
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  Tensor m;
  detail::Moments mo = detail::moments(x, dims, &m);
  Tensor v = mo.sum_sq / static_cast<double>(mo.n);
  Tensor y = affine(mo.centered * rsqrt(v + eps), weight, bias);
  Shape c{x.shape()[1]};
  return {y, reshape(m, c), reshape(v, c)};
}

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  detail::UserOp user("group_norm");
  const char* op = "group_norm";
  check_norm_input(op, x);
  int64_t C = x.shape()[1];
  if (num_groups < 1 || C % num_groups != 0)
    fail(op, "num_groups " + std::to_string(num_groups) + " must divide the " + std::to_string(C) + " channels", {&x});
  check_channels(op, x, weight, "weight");
  check_channels(op, x, bias, "bias");
  int64_t per_group = C / num_groups;
  for (int64_t d = 2; d < x.dim(); ++d) per_group *= x.shape()[d];
  Tensor g = reshape(x, {x.shape()[0], num_groups, per_group});
  detail::Moments mo = detail::moments(g, {2});
  Tensor v = mo.sum_sq / static_cast<double>(mo.n);
  return affine(reshape(mo.centered * rsqrt(v + eps), x.shape()), weight, bias);
}

// F.conv_transpose2d as a convolution: x with stride - 1 zeros between its elements (slice
// assignment into zeros: index math), padded by dilation * (k - 1) - padding on each side (a
// negative pad crops) and output_padding more at the bottom and right, convolved at stride 1 with
// the weights flipped and their in/out channels swapped per group. The zeros cost stride^2 more
// multiplications than a direct transposed convolution would.
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, Size2 stride, Size2 padding, Size2 output_padding,
                        int64_t groups, Size2 dilation) {
  return conv_transpose2d(x, weight, Tensor(), stride, padding, output_padding, groups, dilation);
}

Tensor conv_transpose2d(const Tensor& x0, const Tensor& weight, const Tensor& bias, Size2 stride, Size2 padding,
                        Size2 output_padding, int64_t groups, Size2 dilation) {
  const char* op = "conv_transpose2d";
  detail::UserOp user(op);
  Tensor x = checked_conv_input(op, x0, weight, bias, stride, padding.h, padding.w, dilation, groups,
                                "[in_channels, out_channels / groups, kh, kw]");
  if (output_padding.h < 0 || output_padding.w < 0 ||
      (output_padding.h >= stride.h && output_padding.h >= dilation.h) ||
      (output_padding.w >= stride.w && output_padding.w >= dilation.w))
    fail(op, "output_padding " + pair_str(output_padding.h, output_padding.w) +
                 " must be smaller than the stride or the dilation", {&x0});
  const Shape& ws = weight.shape();
  const int64_t in_c = ws[0], out_per_group = ws[1], kh = ws[2], kw = ws[3];
  if (x.size(1) != in_c)
    fail(op, "input has " + std::to_string(x.size(1)) + " channels, weight expects " + std::to_string(in_c), {&x0, &weight});
  if (in_c % groups != 0)
    fail(op, "in_channels " + std::to_string(in_c) + " is not divisible by groups " + std::to_string(groups), {&weight});
  if (out_per_group != 0 && groups > std::numeric_limits<int64_t>::max() / out_per_group)  // in_c 0 takes any groups
    fail(op, std::to_string(groups) + " groups of " + std::to_string(out_per_group) + " output channels are too many",
         {&weight});
  const int64_t out_c = out_per_group * groups;
  if (bias.defined() && bias.shape() != Shape{out_c})
    fail(op, "bias must have shape [" + std::to_string(out_c) + "]", {&weight, &bias});
  const int64_t n = x.size(0), h = x.size(2), w = x.size(3);
  const int64_t oh = (h - 1) * stride.h - 2 * padding.h + dilation.h * (kh - 1) + output_padding.h + 1;
  const int64_t ow = (w - 1) * stride.w - 2 * padding.w + dilation.w * (kw - 1) + output_padding.w + 1;
  if (oh <= 0 || ow <= 0)
    fail(op, "the output would be " + pair_str(oh, ow) + ": padding is too large for this input", {&x0, &weight});
  Tensor up = x;
  if ((stride.h > 1 || stride.w > 1) && h > 0 && w > 0) {
    Tensor zeros_up = zeros({n, in_c, (h - 1) * stride.h + 1, (w - 1) * stride.w + 1}, x.dtype()).to(x.device());
    up = index_put(zeros_up, {slice(0), slice(0), slice(0, INT64_MAX, stride.h), slice(0, INT64_MAX, stride.w)}, x);
  }
  const int64_t ph = dilation.h * (kh - 1) - padding.h, pw = dilation.w * (kw - 1) - padding.w;
  up = pad(up, {pw, pw + output_padding.w, ph, ph + output_padding.h});
  // [in, out / g, kh, kw] -> [g, in / g, out / g, kh, kw] -> [out, in / g, kh, kw], flipped.
  Tensor wt = reshape(permute(reshape(weight, {groups, in_c / groups, out_per_group, kh, kw}), {0, 2, 1, 3, 4}),
                      {out_c, in_c / groups, kh, kw});
  Tensor y = conv2d(up, flip(wt, {2, 3}), bias, 1, 0, dilation, groups);
  return x0.dim() == 3 ? squeeze(y, 0) : y;
}

}  // namespace lf
