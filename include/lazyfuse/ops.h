// The ops of LazyFuse. Each checks shapes and dtypes when called (an lf::Error names the op, the
// shapes and the dtypes) and records a node in the trace; nothing is computed here.
// Broadcasting and type promotion follow PyTorch (README, "Broadcasting and type promotion").
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include <utility>
#include <vector>

#include "lazyfuse/tensor.h"
#include "lazyfuse/types.h"

namespace lf {

// ---- Creation. `device` defaults to lf::default_device().
Tensor from_vector(const std::vector<bool>& data, Shape shape);
Tensor from_vector(const std::vector<int32_t>& data, Shape shape);
Tensor from_vector(const std::vector<int64_t>& data, Shape shape);
Tensor from_vector(const std::vector<float>& data, Shape shape);
Tensor from_vector(const std::vector<double>& data, Shape shape);
Tensor zeros(Shape shape, DType dtype = DType::Float32);
Tensor ones(Shape shape, DType dtype = DType::Float32);
Tensor full(Shape shape, double value, DType dtype = DType::Float32);
// torch.arange's dtype rule: int64 when start, end and step are all integers (arange(0, n)),
// else float32; `dtype` overrides it. arange(end) starts at 0.
Tensor arange(Scalar start, Scalar end, Scalar step = 1, std::optional<DType> dtype = std::nullopt);
Tensor arange(Scalar end, std::optional<DType> dtype = std::nullopt);
Tensor scalar(double value, DType dtype = DType::Float32);
// Counter-based random numbers: the same seed gives the same numbers whatever is fused and on
// whatever device. rand: uniform in [0, 1); randn: standard normal.
void manual_seed(uint64_t seed);
Tensor rand(Shape shape, DType dtype = DType::Float32);
Tensor randn(Shape shape, DType dtype = DType::Float32);

// ---- Creation of issue 23 (PyTorch's names and semantics). The *_like ops take x's shape and
// device and, unless given, its dtype; empty_like is zeros. eye, linspace and logspace are
// generators fused into their consumers; the random ops draw from the same counter-based stream
// as rand (the same numbers fused or unfused, on any device).
Tensor zeros_like(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor ones_like(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor full_like(const Tensor& x, double value, std::optional<DType> dtype = std::nullopt);
Tensor empty_like(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor rand_like(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor randn_like(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor eye(int64_t n, DType dtype = DType::Float32);
Tensor eye(int64_t n, int64_t m, DType dtype = DType::Float32);
Tensor linspace(double start, double end, int64_t steps, DType dtype = DType::Float32);
Tensor logspace(double start, double end, int64_t steps, double base = 10, DType dtype = DType::Float32);
Tensor randint(int64_t low, int64_t high, Shape shape, DType dtype = DType::Int64);  // [low, high)
Tensor bernoulli(const Tensor& p);            // 1 with probability p, in p's dtype
Tensor bernoulli(const Tensor& x, double p);  // x's shape and dtype, probability p
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true);  // x * mask / (1 - p)
Tensor normal(const Tensor& mean, const Tensor& std);
Tensor normal(const Tensor& mean, double std = 1);
Tensor normal(double mean, const Tensor& std);
Tensor normal(double mean, double std, Shape shape, DType dtype = DType::Float32);

// ---- Elementwise arithmetic and comparisons (tensor with tensor, or with a C++ number).
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);  // true division: integers give float32
Tensor operator+(const Tensor& a, Scalar b);
Tensor operator-(const Tensor& a, Scalar b);
Tensor operator*(const Tensor& a, Scalar b);
Tensor operator/(const Tensor& a, Scalar b);
Tensor operator+(Scalar a, const Tensor& b);
Tensor operator-(Scalar a, const Tensor& b);
Tensor operator*(Scalar a, const Tensor& b);
Tensor operator/(Scalar a, const Tensor& b);
Tensor operator-(const Tensor& a);

Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, Scalar b);
Tensor operator!=(const Tensor& a, Scalar b);
Tensor operator<(const Tensor& a, Scalar b);
Tensor operator<=(const Tensor& a, Scalar b);
Tensor operator>(const Tensor& a, Scalar b);
Tensor operator>=(const Tensor& a, Scalar b);

Tensor operator&&(const Tensor& a, const Tensor& b);  // Bool only
Tensor operator||(const Tensor& a, const Tensor& b);  // Bool only
Tensor operator!(const Tensor& a);                    // Bool only

// ---- Elementwise functions. Float functions of integer tensors compute in float32.
Tensor abs(const Tensor& x);
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor exp2(const Tensor& x);
Tensor log(const Tensor& x);
Tensor log2(const Tensor& x);
Tensor log1p(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor tan(const Tensor& x);
Tensor asin(const Tensor& x);
Tensor acos(const Tensor& x);
Tensor atan(const Tensor& x);
Tensor atan2(const Tensor& y, const Tensor& x);
Tensor sinh(const Tensor& x);
Tensor cosh(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor gelu(const Tensor& x, bool tanh_approx = false);
Tensor silu(const Tensor& x);
Tensor hardswish(const Tensor& x);  // x * relu6(x + 3) / 6
// log(x / (1 - x)); with eps, x is first clamped to [eps, 1 - eps] (PyTorch's logit)
Tensor logit(const Tensor& x);
Tensor logit(const Tensor& x, double eps);
Tensor erf(const Tensor& x);
Tensor floor(const Tensor& x);
Tensor ceil(const Tensor& x);
Tensor round(const Tensor& x);  // half to even, like PyTorch
Tensor sign(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor square(const Tensor& x);
Tensor pow(const Tensor& x, const Tensor& exponent);
Tensor pow(const Tensor& x, Scalar exponent);
Tensor maximum(const Tensor& a, const Tensor& b);  // NaN propagates
Tensor minimum(const Tensor& a, const Tensor& b);  // NaN propagates
Tensor clamp(const Tensor& x, Scalar lo, Scalar hi);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);
Tensor isnan(const Tensor& x);
Tensor isinf(const Tensor& x);
Tensor isfinite(const Tensor& x);
Tensor cast(const Tensor& x, DType dtype);

// ---- Division family and bitwise ops (issue 23), PyTorch's names, promotion and semantics.
// remainder (also %): the sign of the divisor (Python's %); fmod: the sign of the dividend;
// floor_divide: the quotient rounded down (PyTorch >= 1.13). Integer division by zero gives 0
// (as numpy; PyTorch raises on the CPU), INT_MIN / -1 wraps to INT_MIN. Bool with bool is an error.
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, Scalar b);
Tensor remainder(Scalar a, const Tensor& b);
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, Scalar b);
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, Scalar b);
Tensor operator%(const Tensor& a, const Tensor& b);
Tensor operator%(const Tensor& a, Scalar b);
// Bool and integers only (floats are an error); shifts integers only. A shift by a negative amount
// or by the width or more gives 0 (left) or the sign fill (right), as PyTorch.
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_and(const Tensor& a, Scalar b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, Scalar b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, Scalar b);
Tensor bitwise_not(const Tensor& x);
Tensor bitwise_left_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_left_shift(const Tensor& a, Scalar b);
Tensor bitwise_right_shift(const Tensor& a, const Tensor& b);
Tensor bitwise_right_shift(const Tensor& a, Scalar b);
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, const Tensor& b);
Tensor operator&(const Tensor& a, Scalar b);
Tensor operator|(const Tensor& a, Scalar b);
Tensor operator^(const Tensor& a, Scalar b);
Tensor operator~(const Tensor& x);
Tensor operator<<(const Tensor& a, const Tensor& b);
Tensor operator>>(const Tensor& a, const Tensor& b);
Tensor operator<<(const Tensor& a, Scalar b);
Tensor operator>>(const Tensor& a, Scalar b);

// ---- Composites of issue 23 (PyTorch's names and semantics; they fuse like their primitives).
// lerp: start + weight * (end - start), PyTorch's two-sided formula; one floating dtype.
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
Tensor lerp(const Tensor& start, const Tensor& end, Scalar weight);
// clamp with tensor bounds (either may be std::nullopt); the result has the promoted dtype.
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max);
Tensor clamp_min(const Tensor& x, const Tensor& min);
Tensor clamp_min(const Tensor& x, Scalar min);
Tensor clamp_max(const Tensor& x, const Tensor& max);
Tensor clamp_max(const Tensor& x, Scalar max);
// |a - b| <= atol + rtol * |b| (or a == b; both NaN with equal_nan); a and b of one dtype.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);  // a sync point
Tensor where(const Tensor& cond, Scalar a, Scalar b);  // float32, int64 or bool, by the numbers' kinds
// any / all: bool (NaN counts as true); count_nonzero: int64. norm: torch.linalg.vector_norm over
// `dims` (empty: all) for p = 2, 1, inf, -inf, 0 or any other number; "fro" is the 2-norm.
Tensor any(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor all(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor count_nonzero(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor norm(const Tensor& x, double p = 2, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor norm(const Tensor& x, const std::string& p, std::vector<int64_t> dims = {}, bool keepdim = false);
// One dim (PyTorch's any(x, 1)); a braced list takes the forms above (Tensor's IntDim says why).
template <IntDim I> Tensor any(const Tensor& x, I dim, bool keepdim = false) { return any(x, {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor all(const Tensor& x, I dim, bool keepdim = false) { return all(x, {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor count_nonzero(const Tensor& x, I dim, bool keepdim = false) {
  return count_nonzero(x, {int64_t(dim)}, keepdim);
}
template <IntDim I> Tensor norm(const Tensor& x, double p, I dim, bool keepdim = false) {
  return norm(x, p, {int64_t(dim)}, keepdim);
}
template <IntDim I> Tensor norm(const Tensor& x, const std::string& p, I dim, bool keepdim = false) {
  return norm(x, p, {int64_t(dim)}, keepdim);
}

// ---- Reductions. Empty `dims` reduces over all dims; negative dims count from the end.
// Empty sum is 0, empty prod 1, empty mean NaN; max/min/argmax/argmin of nothing throw.
// NaN propagates through max and min. argmax/argmin take at most one dim (none: the flat index).
Tensor sum(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor prod(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor max(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor min(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor argmax(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor argmin(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor var(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false, int64_t correction = 1);
Tensor std(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false, int64_t correction = 1);
Tensor logsumexp(const Tensor& x, std::vector<int64_t> dims = {}, bool keepdim = false);
// The same, consuming a temporary: the argument's handle is released before the reduction returns.
// C++ keeps a temporary until the end of its full expression, and a read stores every value a
// handle still holds, so without these `lf::sum(x * x).item<float>()` would also compute and
// store x * x. A named tensor (an lvalue) takes the overloads above and is never released.
Tensor sum(Tensor&& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor mean(Tensor&& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor prod(Tensor&& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor max(Tensor&& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor min(Tensor&& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor argmax(Tensor&& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor argmin(Tensor&& x, std::vector<int64_t> dims = {}, bool keepdim = false);
Tensor var(Tensor&& x, std::vector<int64_t> dims = {}, bool keepdim = false, int64_t correction = 1);
Tensor std(Tensor&& x, std::vector<int64_t> dims = {}, bool keepdim = false, int64_t correction = 1);
Tensor logsumexp(Tensor&& x, std::vector<int64_t> dims = {}, bool keepdim = false);
// One dim: lf::sum(x, 1) is lf::sum(x, {1}), lf::mean(x, -1, true) keeps it (PyTorch's forms). A
// template so that a braced list takes the forms above: sum(x, {}) stays "every dim".
template <IntDim I> Tensor sum(const Tensor& x, I dim, bool keepdim = false) { return sum(x, {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor sum(Tensor&& x, I dim, bool keepdim = false) { return sum(std::move(x), {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor mean(const Tensor& x, I dim, bool keepdim = false) { return mean(x, {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor mean(Tensor&& x, I dim, bool keepdim = false) { return mean(std::move(x), {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor prod(const Tensor& x, I dim, bool keepdim = false) { return prod(x, {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor prod(Tensor&& x, I dim, bool keepdim = false) { return prod(std::move(x), {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor max(const Tensor& x, I dim, bool keepdim = false) { return max(x, {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor max(Tensor&& x, I dim, bool keepdim = false) { return max(std::move(x), {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor min(const Tensor& x, I dim, bool keepdim = false) { return min(x, {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor min(Tensor&& x, I dim, bool keepdim = false) { return min(std::move(x), {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor argmax(const Tensor& x, I dim, bool keepdim = false) { return argmax(x, {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor argmax(Tensor&& x, I dim, bool keepdim = false) { return argmax(std::move(x), {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor argmin(const Tensor& x, I dim, bool keepdim = false) { return argmin(x, {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor argmin(Tensor&& x, I dim, bool keepdim = false) { return argmin(std::move(x), {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor logsumexp(const Tensor& x, I dim, bool keepdim = false) { return logsumexp(x, {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor logsumexp(Tensor&& x, I dim, bool keepdim = false) { return logsumexp(std::move(x), {int64_t(dim)}, keepdim); }
template <IntDim I> Tensor var(const Tensor& x, I dim, bool keepdim = false, int64_t correction = 1) {
  return var(x, {int64_t(dim)}, keepdim, correction);
}
template <IntDim I> Tensor var(Tensor&& x, I dim, bool keepdim = false, int64_t correction = 1) {
  return var(std::move(x), {int64_t(dim)}, keepdim, correction);
}
template <IntDim I> Tensor std(const Tensor& x, I dim, bool keepdim = false, int64_t correction = 1) {
  return std(x, {int64_t(dim)}, keepdim, correction);
}
template <IntDim I> Tensor std(Tensor&& x, I dim, bool keepdim = false, int64_t correction = 1) {
  return std(std::move(x), {int64_t(dim)}, keepdim, correction);
}

// ---- Views: index math, never a copy unless the layout forces one.
Tensor reshape(const Tensor& x, Shape shape);  // one -1 allowed
Tensor flatten(const Tensor& x);
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor permute(const Tensor& x, std::vector<int64_t> dims);
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);  // clamps like Python
Tensor expand(const Tensor& x, Shape shape);  // -1 keeps a dim
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor contiguous(const Tensor& x);
// The same, consuming a temporary (like the reductions' Tensor&& forms): the argument's handle is
// released, so that `lf::slice(lf::arange(0, n), 0, 5, 6).item<float>()` computes the one element
// read, not the whole range, and `lf::reshape(lf::cast(m, DType::Int32), {-1, 4})` does not store
// the cast.
Tensor reshape(Tensor&& x, Shape shape);
Tensor flatten(Tensor&& x);
Tensor transpose(Tensor&& x, int64_t d0, int64_t d1);
Tensor permute(Tensor&& x, std::vector<int64_t> dims);
Tensor slice(Tensor&& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor expand(Tensor&& x, Shape shape);
Tensor squeeze(Tensor&& x, int64_t dim);
Tensor unsqueeze(Tensor&& x, int64_t dim);
Tensor contiguous(Tensor&& x);
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim);

// ---- Neural-network building blocks.
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
// Normalizes over the last `normalized_dims` dims. weight and bias may be empty Tensors.
Tensor layer_norm(const Tensor& x, int64_t normalized_dims, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
Tensor rms_norm(const Tensor& x, const Tensor& weight = {}, double eps = 1e-6);  // over the last dim
// The same, consuming a temporary `x` (see the reductions' Tensor&& forms): in
// `lf::softmax(x * 2, -1).to_vector<float>()` the product is not stored.
Tensor softmax(Tensor&& x, int64_t dim);
Tensor log_softmax(Tensor&& x, int64_t dim);
Tensor layer_norm(Tensor&& x, int64_t normalized_dims, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
Tensor layer_norm(Tensor&& x, const Shape& normalized_shape, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
Tensor rms_norm(Tensor&& x, const Tensor& weight = {}, double eps = 1e-6);
Tensor matmul(const Tensor& a, const Tensor& b);  // numpy's 1-D / 2-D / batched rules

// ---- Convolution, pooling and normalization over channels (PyTorch's torch.nn.functional names
// and semantics): activations NCHW ([C, H, W] unbatched), weights OIHW; floating-point dtypes,
// input, weight and bias of one dtype.
struct Size2 {  // an int (both dims) or a pair {h, w}
  int64_t h, w;
  Size2(int64_t v) : h(v), w(v) {}  // NOLINT(google-explicit-constructor): 3 means {3, 3}
  Size2(int64_t h, int64_t w) : h(h), w(w) {}
};
struct Padding2 {  // an int, a pair {h, w}, "same" (stride 1 only; an odd total pads one more at the end) or "valid"
  int64_t h = 0, w = 0;
  bool same = false;
  Padding2(int64_t v) : h(v), w(v) {}  // NOLINT(google-explicit-constructor)
  Padding2(int v) : h(v), w(v) {}      // NOLINT(google-explicit-constructor): a literal 0 is no "mode"
  Padding2(int64_t h, int64_t w) : h(h), w(w) {}
  Padding2(const char* mode);  // NOLINT(google-explicit-constructor)
};
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, Size2 stride = 1, Padding2 padding = 0,
              Size2 dilation = 1, int64_t groups = 1);
// Without a bias, no {} needed: conv2d(x, w, 2, 1) is conv2d(x, w, {}, 2, 1). (A braced {} or a
// Tensor in the third place still takes the form above.)
Tensor conv2d(const Tensor& x, const Tensor& weight, Size2 stride, Padding2 padding = 0, Size2 dilation = 1,
              int64_t groups = 1);
// F.conv_transpose2d: weight [in_channels, out_channels / groups, kh, kw]; output
// (in - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1 per dim. Computed as a
// conv2d of the input with stride - 1 zeros inserted (stride^2 more multiplications than a direct
// transposed convolution).
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, Size2 stride = 1,
                        Size2 padding = 0, Size2 output_padding = 0, int64_t groups = 1, Size2 dilation = 1);
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, Size2 stride, Size2 padding = 0, Size2 output_padding = 0,
                        int64_t groups = 1, Size2 dilation = 1);  // no bias
// [N, C, L] ([C, L] unbatched), weight [O, C / groups, k]: conv2d over a height of 1.
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, int64_t stride = 1, Padding2 padding = 0,
              int64_t dilation = 1, int64_t groups = 1);
// No bias: conv1d(x, w, 2) (a template, so that conv1d(x, w, {}, 2) keeps meaning "no bias, stride 2").
template <IntDim I>
Tensor conv1d(const Tensor& x, const Tensor& weight, I stride, Padding2 padding = 0, int64_t dilation = 1,
              int64_t groups = 1) {
  return conv1d(x, weight, Tensor(), int64_t(stride), padding, dilation, groups);
}
// stride defaults to the kernel size; padding at most half the kernel. max: NaN propagates.
// dilation (max_pool2d's last argument here, so that a ceil_mode given by position stays one):
// the window's elements that far apart.
Tensor max_pool2d(const Tensor& x, Size2 kernel, std::optional<Size2> stride = std::nullopt, Size2 padding = 0,
                  bool ceil_mode = false, Size2 dilation = 1);
// A number where ceil_mode goes would be taken for a bool: the dilation is the last argument.
Tensor max_pool2d(const Tensor& x, Size2 kernel, std::optional<Size2> stride, Size2 padding, int ceil_mode,
                  Size2 dilation = 1) = delete;
// F.max_pool2d(..., return_indices=True): {values, indices}, the indices int64 into each input
// plane (h * W + w) of the window's maximum, as PyTorch's: the first maximum in the window's
// row-major order, the last NaN where the window holds NaN, the first element inside the input
// where every element is -inf. One kernel with the values.
// Its arguments in max_pool2d's order (ceil_mode, then dilation).
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, Size2 kernel, std::optional<Size2> stride = std::nullopt,
                                                  Size2 padding = 0, bool ceil_mode = false, Size2 dilation = 1);
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, Size2 kernel, std::optional<Size2> stride,
                                                  Size2 padding, int ceil_mode, Size2 dilation = 1) = delete;
// F.max_unpool2d: each value of x [N, C, h, w] (or [C, h, w]) at its index (max_pool2d_with_indices')
// in a plane of zeros [N, C, H, W]; H, W = output_size (within a stride of the default, as
// PyTorch's), by default (in - 1) * stride - 2 * padding + kernel. An index outside the plane is
// an error at the sync point.
Tensor max_unpool2d(const Tensor& x, const Tensor& indices, Size2 kernel, std::optional<Size2> stride = std::nullopt,
                    Size2 padding = 0, std::optional<Size2> output_size = std::nullopt);
Tensor avg_pool2d(const Tensor& x, Size2 kernel, std::optional<Size2> stride = std::nullopt, Size2 padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool2d(const Tensor& x, Size2 output_size);
// F.adaptive_max_pool2d: the maximum of each window [floor(i H / oh), ceil((i + 1) H / oh)) x (the
// same along W); NaN propagates. _with_indices also gives int64 indices into each input plane, as
// max_pool2d_with_indices' (the first maximum in row-major order, or the last NaN).
Tensor adaptive_max_pool2d(const Tensor& x, Size2 output_size);
std::pair<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& x, Size2 output_size);
// F.interpolate of [N, C, H, W] ("nearest", "nearest-exact", "bilinear", "bicubic", "area"),
// [N, C, L] ("nearest", "nearest-exact", "linear", "area") or [N, C, D, H, W] ("nearest",
// "nearest-exact", "trilinear", "area") to `size`, or by `scale_factor` (output floor(in * scale),
// source coordinates from the scale as PyTorch computes them); align_corners for the linear and
// cubic modes (default false). Source indices and weights in float32 (float64
// for float64 x), as PyTorch; gathers and the weighted sum fuse. "bicubic" is PyTorch's cubic
// convolution (A = -0.75) over the 4 x 4 points around the source, clamped into the image (it may
// overshoot the input's range, as PyTorch's); "area" is adaptive_avg_pool2d.
// `scales` (internal to the scale_factor form): the factors the coordinates use.
Tensor interpolate(const Tensor& x, std::vector<int64_t> size, const std::string& mode = "nearest",
                   std::optional<bool> align_corners = std::nullopt, std::vector<double> scales = {});
Tensor interpolate(const Tensor& x, double scale_factor, const std::string& mode = "nearest",
                   std::optional<bool> align_corners = std::nullopt);
// A braced size, interpolate(x, {4}): without this, {4} would convert to the scale factor 4.0.
inline Tensor interpolate(const Tensor& x, std::initializer_list<int64_t> size, const std::string& mode = "nearest",
                          std::optional<bool> align_corners = std::nullopt) {
  return interpolate(x, std::vector<int64_t>(size), mode, align_corners);
}
// Inference batch norm over dim 1 of [N, C, ...]: (x - running_mean) / sqrt(running_var + eps) * weight + bias,
// recorded as x * scale + shift with per-channel scale and shift, so after a convolution it is two
// operations of the convolution's epilogue. weight and bias may be empty Tensors.
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
// Training batch norm: normalized with the batch's statistics over every dim but 1. `mean` and
// `var` ([C]) are those statistics, var biased (the one that normalized); updating running
// statistics is the caller's (PyTorch's uses the unbiased var * n / (n - 1)).
struct BatchNormOutput {
  Tensor output, mean, var;
};
BatchNormOutput batch_norm_training(const Tensor& x, const Tensor& weight = {}, const Tensor& bias = {},
                                    double eps = 1e-5);
// [N, C, ...]: statistics per image over each of num_groups groups of channels; weight, bias [C].
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);

// ---- Indexing, scatter, scans and sorting (PyTorch's names and semantics; each returns a new
// tensor). Indices are int32 or int64; negative ones count from the end. An index out of range is
// an lf::Error at the sync point that computes the result (indices are data), naming the op, the
// index and the size.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);  // index: 1-D (or 0-D)
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);  // index: x's rank, sizes <= x's off dim
Tensor take_along_dim(const Tensor& x, const Tensor& indices, int64_t dim);  // broadcasts off dim
Tensor take_along_dim(const Tensor& x, const Tensor& indices);  // over the flattened x
Tensor take(const Tensor& x, const Tensor& index);  // x flattened; the result has index's shape
Tensor embedding(const Tensor& weight, const Tensor& indices);  // weight [V, D] -> indices.shape + [D]
// F.embedding's options. padding_idx (range-checked) changes no forward value: it matters to
// gradients only. max_norm: rows whose norm_type-norm exceeds it are scaled by
// max_norm / (norm + 1e-7) in the result; unlike PyTorch, the weight itself is not changed (values
// are immutable), so a later lookup renormalizes again and gives the same rows.
Tensor embedding(const Tensor& weight, const Tensor& indices, std::optional<int64_t> padding_idx,
                 std::optional<double> max_norm = std::nullopt, double norm_type = 2);
// out = x; out[.., index[i], ..] += alpha * source[.., i, ..] along dim (in order of i: deterministic).
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, Scalar alpha = 1);
// out = x; out[c with c[dim] = index[c]] += src[c] for c over index's shape (in order: deterministic).
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// The rest of the scatter family (frontend/ops_scatter.cpp; PyTorch's names and semantics, a new
// tensor each; src is cast to x's dtype). Duplicate indices apply in index order: scatter,
// index_copy and index_put without accumulate keep the LAST value (PyTorch leaves it unspecified).
// out = x; out[c with c[dim] = index[c]] = src[c] (or value) for c over index's shape.
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, Scalar value);
// reduce: "sum", "prod", "mean", "amax", "amin". include_self false: a destination that receives
// values reduces only them; mean divides by the count (plus one with self; integers floor);
// amax / amin propagate NaN. Not for bool.
Tensor scatter_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                      bool include_self = true);
// out = x with out[.., index[i], ..] = source[.., i, ..] along dim (1-D index), or = value.
Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source);
Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, Scalar value);
// torch.index_reduce: out = x with source's slices combined into out[.., index[i], ..] along dim
// by reduce ("prod", "mean", "amax", "amin"; scatter_reduce's rules: without include_self a
// destination that receives values starts from the mode's identity).
Tensor index_reduce(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, const std::string& reduce,
                    bool include_self = true);
// x[i0, i1, ...] = v on a copy (torch.index_put): int32/int64 index tensors broadcast together
// to B and index x's leading dims; v broadcasts to B + x.shape[k:]. accumulate: += (duplicates
// add up). The one-tensor form index_put(x, i, v) is the mask overload below, which forwards an
// integer index here.
Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& v, bool accumulate = false);
// Counts of each value of the 1-D non-negative integer x (weighted sums with `weights`). The
// result's size, max(x) + 1 (at least minlength), is data: a sync point that reads max and min of x.
Tensor bincount(const Tensor& x, const Tensor& weights = {}, int64_t minlength = 0);
// torch.histc: counts of x's elements (flattened, floating point) in `bins` equal bins over
// [min, max], in x's dtype; max falls in the last bin, values outside (and NaN) are not counted.
// min == max: the data's min and max (a sync point that reads them), widened by 1 each way when
// they are equal too.
Tensor histc(const Tensor& x, int64_t bins = 100, double min = 0, double max = 0);
// int64 one-hot rows (x.shape + [num_classes]); num_classes -1: max(x) + 1. Reads min and max of x
// (a sync point) to check the classes, like PyTorch.
Tensor one_hot(const Tensor& x, int64_t num_classes = -1);
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);  // where(mask, value, x), x's dtype
// torch.masked_scatter: x (broadcast with the bool mask) with the mask's positions, in row-major
// order, taking source's elements in order (source: x's dtype, any shape, at least as many
// elements as the mask selects; fewer is an lf::Error at the sync point).
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source);
Tensor cumsum(const Tensor& x, int64_t dim);   // bool and integers give int64
Tensor cumprod(const Tensor& x, int64_t dim);  // bool and integers give int64
// log(cumsum(exp(x))) without overflow; integers give float32, bool is an error.
Tensor logcumsumexp(const Tensor& x, int64_t dim);
// The running max / min along dim: {values, int64 indices}; among equal values the latest index,
// and NaN propagates (the latest NaN's index), as PyTorch.
std::pair<Tensor, Tensor> cummax(const Tensor& x, int64_t dim);
std::pair<Tensor, Tensor> cummin(const Tensor& x, int64_t dim);
// Data-dependent sizes: each reads its result's size back (a sync point, counted in
// cache_stats().flushes); the rest stays lazy on the device. nonzero: int64 [count, x.dim()], the
// coordinates of the non-zero elements in row-major order. masked_select: the elements of x where
// the bool mask (broadcast with x) is true, 1-D, in row-major order.
Tensor nonzero(const Tensor& x);
Tensor masked_select(const Tensor& x, const Tensor& mask);
// Stable sort along dim (NaN is larger than every number: last ascending, first descending):
// {values, int64 indices}.
std::pair<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
// The k largest (or smallest) along dim, sorted, with their int64 indices; ties keep index order.
std::pair<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true);
// The k-th smallest (k from 1) along dim and its int64 index: position k - 1 of the stable sort
// (NaN largest; among ties, the k-th by index).
std::pair<Tensor, Tensor> kthvalue(const Tensor& x, int64_t k, int64_t dim = -1, bool keepdim = false);
// The lower median along dim ({values, indices}) as PyTorch: NaN when the row has one (the first
// NaN's index), else the value at position (n - 1) / 2 of the stable sort. median(x): of all of x.
std::pair<Tensor, Tensor> median(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor median(const Tensor& x);
// torch.nanmedian: the lower median of each row's numbers, NaN skipped; NaN (at the first NaN)
// only for a row of NaN. Integers and bool: median.
std::pair<Tensor, Tensor> nanmedian(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor nanmedian(const Tensor& x);
Tensor msort(const Tensor& x);  // sort(x, 0).first
// The sorted distinct values of x (flattened; NaNs are distinct from each other, -0.0 equals
// 0.0), with `inverse` (x's shape: each element's place in `values`) and `counts` (int64). The
// number of values is data: a sync point that reads back that number only (the sort, the runs of
// equal values and the counts stay on x's device).
struct Unique {
  Tensor values, inverse, counts;
};
Unique unique(const Tensor& x);
// torch.unique(x, dim=dim): the distinct slices along dim, sorted lexicographically (a stable
// argsort per element of a slice: k sorts of n keys for n slices of k elements), with `inverse`
// (int64 [n]: each slice's place) and `counts`. A sync point like unique(x). Only dim itself may be
// empty (PyTorch's rule).
Unique unique(const Tensor& x, int64_t dim);
// torch.unique_consecutive: the first value of each run of equal neighbours in the flattened x
// (NaN never equals NaN), each element's run as `inverse`, and the runs' lengths. A sync point
// like unique's.
Unique unique_consecutive(const Tensor& x);

// torch.searchsorted: for each value, the number of boundaries before it along the last dim of
// sorted_sequence (ascending; `right`: those equal count too), int64 (int32 with out_int32). A
// sequence of more than one dim searches each row for the values of the same leading dims;
// `sorter` (int64, the sequence's shape) gives the ascending order of an unsorted sequence.
// PyTorch's binary search, probe for probe: a NaN value is past every boundary, and NaN boundaries
// (or an unsorted sequence) give PyTorch's answer.
Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32 = false, bool right = false,
                    const Tensor& sorter = {});
Tensor searchsorted(const Tensor& sorted_sequence, Scalar value, bool out_int32 = false, bool right = false);
// torch.isin: whether each element of `elements` equals one of test_elements (bool, elements'
// shape; `invert`: the negation). A sort of the test elements and a fused binary search.
Tensor isin(const Tensor& elements, const Tensor& test_elements, bool invert = false);
// torch.bucketize: searchsorted(boundaries, input, out_int32, right) for 1-D boundaries.
Tensor bucketize(const Tensor& input, const Tensor& boundaries, bool out_int32 = false, bool right = false);

// ---- Shape ops and slice assignment (issue 23, second wave; PyTorch's names and semantics).
// Views where the layout allows; otherwise index math inside the consumer's kernel (README,
// "Shape ops, pad and slice assignment").
Tensor flip(const Tensor& x, std::vector<int64_t> dims);
Tensor roll(const Tensor& x, std::vector<int64_t> shifts, std::vector<int64_t> dims = {});  // no dims: flattened
Tensor repeat(const Tensor& x, std::vector<int64_t> repeats);  // torch.Tensor.repeat
Tensor tile(const Tensor& x, std::vector<int64_t> reps);
Tensor repeat_interleave(const Tensor& x, int64_t repeats, int64_t dim);
Tensor repeat_interleave(const Tensor& x, int64_t repeats);  // over the flattened x
Tensor tril(const Tensor& x, int64_t diagonal = 0);
Tensor triu(const Tensor& x, int64_t diagonal = 0);
Tensor diagonal(const Tensor& x, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);  // a view
Tensor select(const Tensor& x, int64_t dim, int64_t index);  // x[..., index, ...] along dim, a view
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, std::vector<int64_t> sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0);
Tensor movedim(const Tensor& x, std::vector<int64_t> source, std::vector<int64_t> destination);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// F.pad: pads (before, after) pairs, last dim first; negative pads crop. Reflect pads must be
// smaller than the dim, circular ones at most the dim.
enum class PadMode { Constant, Reflect, Replicate, Circular };
Tensor pad(const Tensor& x, std::vector<int64_t> pads, PadMode mode = PadMode::Constant, double value = 0);
// Slice assignment in value semantics: index_put(x, {slice(1, -1), slice(1, -1)}, v) is x with
// x[1:-1, 1:-1] replaced by v (broadcast to the region, cast to x's dtype), as numpy's
// x[1:-1, 1:-1] = v on a copy. Bounds clamp like Python; steps are positive.
struct Slice {
  int64_t start = 0, end = INT64_MAX, step = 1;
};
inline Slice slice(int64_t start, int64_t end = INT64_MAX, int64_t step = 1) { return Slice{start, end, step}; }
Tensor index_put(const Tensor& x, const std::vector<Slice>& index, const Tensor& v);
Tensor index_put(const Tensor& x, const std::vector<Slice>& index, Scalar v);
Tensor index_put(const Tensor& x, const Tensor& mask, const Tensor& v);  // where(mask, v, x), x's dtype (int mask: above)
// numpy's x[a, b, ...] = v with slices, integers and index tensors mixed, on a copy:
// index_put(x, index_list(slice(0), idx, 2), v). Tensors (int32/int64) and integers broadcast together to
// B; the region is B in place of the tensors when they are adjacent in the index, else B first,
// then the slices' dims in order (numpy's rule); v broadcasts to the region plus x's dims past the
// index. accumulate: += (duplicates add up). It runs as index_put with index tensors, each slice an
// arange of its positions.
class Index {
 public:
  explicit Index(Slice s) : slice_(s) {}
  explicit Index(Tensor t) : tensor_(std::move(t)) {}
  explicit Index(int64_t i) : integer_(i), is_integer_(true) {}
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }
  bool is_slice() const { return !tensor_.defined() && !is_integer_; }
  bool is_integer() const { return is_integer_; }
  int64_t integer() const { return integer_; }

 private:
  Slice slice_;
  Tensor tensor_;
  int64_t integer_ = 0;
  bool is_integer_ = false;
};
template <typename... Parts>
std::vector<Index> index_list(const Parts&... parts) {
  return {Index(parts)...};
}
Tensor index_put(const Tensor& x, const std::vector<Index>& index, const Tensor& v, bool accumulate = false);
Tensor index_put(const Tensor& x, const std::vector<Index>& index, Scalar v, bool accumulate = false);
// numpy's x[a, b, ...] read with the same index (torch's Tensor::index): slices and integers alone
// are views; with index tensors, a gather of the region (B placed by the same rule) + x's dims past
// the index. Index errors are raised at the sync point and name lf::index.
Tensor index(const Tensor& x, const std::vector<Index>& index);

// PyTorch C++'s torch::indexing names for Tensor::index and operator[] (lazyfuse/tensor.h):
// `using namespace lf::indexing;` then x.index({0, Slice{1, 3}, None, Ellipsis, idx}). Unlike lf::Index,
// every part converts implicitly, so a braced list mixes them. None inserts a dim of size 1
// (numpy's newaxis); Ellipsis stands for as many full slices as the other parts leave (at most one).
// A separate namespace as in PyTorch: X11's headers define a macro None.
namespace indexing {
using lf::Slice;
struct NoneIndex {};
struct EllipsisIndex {};
inline constexpr NoneIndex None{};
inline constexpr EllipsisIndex Ellipsis{};
class TensorIndex {
 public:
  enum class Kind : uint8_t { Integer, Slice, Tensor, None, Ellipsis };
  // NOLINTBEGIN(google-explicit-constructor): implicit, so that {0, Slice{1, 3}} is a list of them.
  template <IntDim I>
  TensorIndex(I i) : kind_(Kind::Integer), integer_(static_cast<int64_t>(i)) {}
  TensorIndex(lf::Slice s) : kind_(Kind::Slice), slice_(s) {}
  TensorIndex(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}
  TensorIndex(NoneIndex) : kind_(Kind::None) {}
  TensorIndex(EllipsisIndex) : kind_(Kind::Ellipsis) {}
  // NOLINTEND(google-explicit-constructor)
  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  const lf::Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  lf::Slice slice_;
  Tensor tensor_;
};
}  // namespace indexing

}  // namespace lf
