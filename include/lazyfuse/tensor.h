// lf::Tensor: a cheap, immutable value handle to a node of the lazy trace.
// Copying a Tensor shares the value; every op returns a new Tensor and records a node instead of
// computing. Values are computed at sync points: reading (item, to_vector, printing), lf::sync(),
// a trace that grows too long.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "lazyfuse/types.h"

namespace lf {

namespace ir {
struct Node;
}
namespace indexing {
class TensorIndex;  // lazyfuse/ops.h
}

// An integer dim where a list of dims goes: x.sum(1) is x.sum({1}). A template, so that a braced
// list never picks it: x.sum({}) stays "every dim" and x.sum({1}) the list. bool is not a dim.
template <typename T>
concept IntDim = std::integral<T> && !std::same_as<T, bool>;

class Tensor {
 public:
  Tensor() = default;  // an empty handle: every use throws lf::Error
  explicit Tensor(std::shared_ptr<ir::Node> node);
  Tensor(const Tensor& other);
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(const Tensor& other);
  Tensor& operator=(Tensor&& other) noexcept;
  ~Tensor();

  bool defined() const { return node_ != nullptr; }
  const Shape& shape() const;
  DType dtype() const;
  Device device() const;
  int64_t numel() const;
  int64_t dim() const;
  int64_t size(int64_t dim) const;  // negative dims count from the end

  // Sync points. T is one of bool, int32_t, int64_t, float, double; values convert like a cast.
  template <typename T>
  T item() const;
  template <typename T>
  std::vector<T> to_vector() const;  // row-major
  bool is_materialized() const;      // true once the value has been computed

  // Pointer out (sync points, like item()): computes the value if it is pending and, on a GPU,
  // waits for the device's queued work. The address of element [0, 0, ...] (on a GPU a device
  // address, a CUdeviceptr cast to void*); element i is at data_ptr() + sum(i_d * strides()[d])
  // elements. A view of computed data keeps its view's strides (a transpose is not contiguous):
  // `t.contiguous().data_ptr<float>()` gives a row-major pointer, copying only when the layout
  // is not row-major already. The memory lives as long as a Tensor holds the value. The values
  // are immutable (README, "Value semantics"): do not write through the pointer.
  const void* data_ptr() const;
  // T is bool, int32_t, int64_t, float or double and must be the tensor's dtype (else lf::Error);
  // use the untyped form for float16 and bfloat16.
  template <typename T>
  const T* data_ptr() const;
  Shape strides() const;         // in elements; a sync point
  bool is_contiguous() const;    // row-major without gaps; a sync point

  Tensor to(Device device) const;
  Tensor to(DType dtype) const;

  // Reductions, as members (see the free functions for the meaning of the arguments). On a
  // temporary (`(x * x).sum()`) they release its handle, like the free functions' Tensor&& forms.
  Tensor sum(std::vector<int64_t> dims = {}, bool keepdim = false) const&;
  Tensor sum(std::vector<int64_t> dims = {}, bool keepdim = false) &&;
  Tensor mean(std::vector<int64_t> dims = {}, bool keepdim = false) const&;
  Tensor mean(std::vector<int64_t> dims = {}, bool keepdim = false) &&;
  Tensor prod(std::vector<int64_t> dims = {}, bool keepdim = false) const&;
  Tensor prod(std::vector<int64_t> dims = {}, bool keepdim = false) &&;
  Tensor max(std::vector<int64_t> dims = {}, bool keepdim = false) const&;
  Tensor max(std::vector<int64_t> dims = {}, bool keepdim = false) &&;
  Tensor min(std::vector<int64_t> dims = {}, bool keepdim = false) const&;
  Tensor min(std::vector<int64_t> dims = {}, bool keepdim = false) &&;
  Tensor argmax(std::vector<int64_t> dims = {}, bool keepdim = false) const&;
  Tensor argmax(std::vector<int64_t> dims = {}, bool keepdim = false) &&;
  Tensor argmin(std::vector<int64_t> dims = {}, bool keepdim = false) const&;
  Tensor argmin(std::vector<int64_t> dims = {}, bool keepdim = false) &&;
  Tensor var(std::vector<int64_t> dims = {}, bool keepdim = false, int64_t correction = 1) const&;
  Tensor var(std::vector<int64_t> dims = {}, bool keepdim = false, int64_t correction = 1) &&;
  Tensor std(std::vector<int64_t> dims = {}, bool keepdim = false, int64_t correction = 1) const&;
  Tensor std(std::vector<int64_t> dims = {}, bool keepdim = false, int64_t correction = 1) &&;
  Tensor logsumexp(std::vector<int64_t> dims = {}, bool keepdim = false) const&;
  Tensor logsumexp(std::vector<int64_t> dims = {}, bool keepdim = false) &&;
  // The same over one dim, PyTorch's x.sum(1) and x.mean(-1, true). max / min give the values
  // only (torch.amax / amin; PyTorch's x.max(dim) also gives indices: lf::max(x, d) with argmax).
  template <IntDim I> Tensor sum(I dim, bool keepdim = false) const& { return sum(dims_of(dim), keepdim); }
  template <IntDim I> Tensor sum(I dim, bool keepdim = false) && { return std::move(*this).sum(dims_of(dim), keepdim); }
  template <IntDim I> Tensor mean(I dim, bool keepdim = false) const& { return mean(dims_of(dim), keepdim); }
  template <IntDim I> Tensor mean(I dim, bool keepdim = false) && { return std::move(*this).mean(dims_of(dim), keepdim); }
  template <IntDim I> Tensor prod(I dim, bool keepdim = false) const& { return prod(dims_of(dim), keepdim); }
  template <IntDim I> Tensor prod(I dim, bool keepdim = false) && { return std::move(*this).prod(dims_of(dim), keepdim); }
  template <IntDim I> Tensor max(I dim, bool keepdim = false) const& { return max(dims_of(dim), keepdim); }
  template <IntDim I> Tensor max(I dim, bool keepdim = false) && { return std::move(*this).max(dims_of(dim), keepdim); }
  template <IntDim I> Tensor min(I dim, bool keepdim = false) const& { return min(dims_of(dim), keepdim); }
  template <IntDim I> Tensor min(I dim, bool keepdim = false) && { return std::move(*this).min(dims_of(dim), keepdim); }
  template <IntDim I> Tensor argmax(I dim, bool keepdim = false) const& { return argmax(dims_of(dim), keepdim); }
  template <IntDim I> Tensor argmax(I dim, bool keepdim = false) && {
    return std::move(*this).argmax(dims_of(dim), keepdim);
  }
  template <IntDim I> Tensor argmin(I dim, bool keepdim = false) const& { return argmin(dims_of(dim), keepdim); }
  template <IntDim I> Tensor argmin(I dim, bool keepdim = false) && {
    return std::move(*this).argmin(dims_of(dim), keepdim);
  }
  template <IntDim I> Tensor var(I dim, bool keepdim = false, int64_t correction = 1) const& {
    return var(dims_of(dim), keepdim, correction);
  }
  template <IntDim I> Tensor var(I dim, bool keepdim = false, int64_t correction = 1) && {
    return std::move(*this).var(dims_of(dim), keepdim, correction);
  }
  template <IntDim I> Tensor std(I dim, bool keepdim = false, int64_t correction = 1) const& {
    return this->std(dims_of(dim), keepdim, correction);
  }
  template <IntDim I> Tensor std(I dim, bool keepdim = false, int64_t correction = 1) && {
    return std::move(*this).std(dims_of(dim), keepdim, correction);
  }
  template <IntDim I> Tensor logsumexp(I dim, bool keepdim = false) const& { return logsumexp(dims_of(dim), keepdim); }
  template <IntDim I> Tensor logsumexp(I dim, bool keepdim = false) && {
    return std::move(*this).logsumexp(dims_of(dim), keepdim);
  }
  // any / all over dims (bool, NaN is true), norm (torch.linalg.vector_norm), as the free functions.
  Tensor any(std::vector<int64_t> dims = {}, bool keepdim = false) const;
  Tensor all(std::vector<int64_t> dims = {}, bool keepdim = false) const;
  Tensor norm(double p = 2, std::vector<int64_t> dims = {}, bool keepdim = false) const;
  template <IntDim I> Tensor any(I dim, bool keepdim = false) const { return any(dims_of(dim), keepdim); }
  template <IntDim I> Tensor all(I dim, bool keepdim = false) const { return all(dims_of(dim), keepdim); }
  template <IntDim I> Tensor norm(double p, I dim, bool keepdim = false) const { return norm(p, dims_of(dim), keepdim); }

  // Views, as members. On a temporary (`lf::arange(0, n).slice(0, 5, 6)`) they release its handle,
  // so a read of the view computes only what the view reads.
  Tensor reshape(Shape shape) const&;
  Tensor reshape(Shape shape) &&;
  Tensor flatten() const&;
  Tensor flatten() &&;
  Tensor transpose(int64_t d0, int64_t d1) const&;
  Tensor transpose(int64_t d0, int64_t d1) &&;
  Tensor permute(std::vector<int64_t> dims) const&;
  Tensor permute(std::vector<int64_t> dims) &&;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const&;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) &&;
  Tensor expand(Shape shape) const&;
  Tensor expand(Shape shape) &&;
  Tensor squeeze(int64_t dim) const&;
  Tensor squeeze(int64_t dim) &&;
  Tensor unsqueeze(int64_t dim) const&;
  Tensor unsqueeze(int64_t dim) &&;
  Tensor contiguous() const&;
  Tensor contiguous() &&;
  // PyTorch's transposes: t() swaps the two dims of a matrix and leaves 0-D and 1-D tensors as
  // they are (more dims: an lf::Error); mT() swaps the last two dims (at least 2); T() reverses
  // every dim. Views, like transpose.
  Tensor t() const&;
  Tensor t() &&;
  Tensor mT() const&;
  Tensor mT() &&;
  Tensor T() const&;
  Tensor T() &&;
  Tensor select(int64_t dim, int64_t index) const;  // x[..., index, ...] along dim, a view
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  Tensor flip(std::vector<int64_t> dims) const;
  template <IntDim I> Tensor flip(I dim) const { return flip(dims_of(dim)); }
  Tensor movedim(int64_t source, int64_t destination) const;

  // Indexing sugar (PyTorch's C++ Tensor::index and operator[]): x[i] is x.select(0, i);
  // x.index({1, Slice{0, 4, 2}, None, Ellipsis, idx}) reads as numpy's x[1, 0:4:2, None, ..., idx]
  // (lf::indexing's names, as torch::indexing's). Integers and slices alone give a view; index
  // tensors gather (lf::index).
  template <IntDim I> Tensor operator[](I i) const { return select(0, static_cast<int64_t>(i)); }
  Tensor operator[](const indexing::TensorIndex& i) const;
  Tensor index(std::initializer_list<indexing::TensorIndex> indices) const;
  Tensor index(const std::vector<indexing::TensorIndex>& indices) const;

  // Elementwise functions, as members (x.exp() is lf::exp(x); the free functions say more).
  Tensor abs() const;
  Tensor neg() const;
  Tensor exp() const;
  Tensor exp2() const;
  Tensor log() const;
  Tensor log2() const;
  Tensor log1p() const;
  Tensor expm1() const;
  Tensor sqrt() const;
  Tensor rsqrt() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor tan() const;
  Tensor asin() const;
  Tensor acos() const;
  Tensor atan() const;
  Tensor sinh() const;
  Tensor cosh() const;
  Tensor tanh() const;
  Tensor sigmoid() const;
  Tensor relu() const;
  Tensor gelu(bool tanh_approx = false) const;
  Tensor silu() const;
  Tensor hardswish() const;
  Tensor logit() const;
  Tensor logit(double eps) const;
  Tensor erf() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;
  Tensor sign() const;
  Tensor reciprocal() const;
  Tensor square() const;
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  Tensor logical_not() const;
  Tensor bitwise_not() const;
  // Binary ones: the tensor is the first operand (x.pow(2) is lf::pow(x, 2)).
  Tensor add(const Tensor& other) const;
  Tensor add(Scalar other) const;
  Tensor sub(const Tensor& other) const;
  Tensor sub(Scalar other) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(Scalar other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(Scalar other) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(Scalar exponent) const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor atan2(const Tensor& other) const;
  Tensor remainder(const Tensor& other) const;
  Tensor remainder(Scalar other) const;
  Tensor fmod(const Tensor& other) const;
  Tensor fmod(Scalar other) const;
  Tensor floor_divide(const Tensor& other) const;
  Tensor floor_divide(Scalar other) const;
  Tensor bitwise_and(const Tensor& other) const;
  Tensor bitwise_and(Scalar other) const;
  Tensor bitwise_or(const Tensor& other) const;
  Tensor bitwise_or(Scalar other) const;
  Tensor bitwise_xor(const Tensor& other) const;
  Tensor bitwise_xor(Scalar other) const;
  Tensor bitwise_left_shift(const Tensor& other) const;
  Tensor bitwise_left_shift(Scalar other) const;
  Tensor bitwise_right_shift(const Tensor& other) const;
  Tensor bitwise_right_shift(Scalar other) const;
  Tensor logical_and(const Tensor& other) const;
  Tensor logical_or(const Tensor& other) const;
  Tensor eq(const Tensor& other) const;
  Tensor eq(Scalar other) const;
  Tensor ne(const Tensor& other) const;
  Tensor ne(Scalar other) const;
  Tensor lt(const Tensor& other) const;
  Tensor lt(Scalar other) const;
  Tensor le(const Tensor& other) const;
  Tensor le(Scalar other) const;
  Tensor gt(const Tensor& other) const;
  Tensor gt(Scalar other) const;
  Tensor ge(const Tensor& other) const;
  Tensor ge(Scalar other) const;
  Tensor clamp(Scalar min, Scalar max) const;
  Tensor clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const;
  Tensor clamp_min(const Tensor& min) const;
  Tensor clamp_min(Scalar min) const;
  Tensor clamp_max(const Tensor& max) const;
  Tensor clamp_max(Scalar max) const;
  Tensor lerp(const Tensor& end, const Tensor& weight) const;
  Tensor lerp(const Tensor& end, Scalar weight) const;
  Tensor where(const Tensor& cond, const Tensor& other) const;  // PyTorch's x.where(cond, y): where(cond, x, y)
  Tensor where(const Tensor& cond, Scalar other) const;
  Tensor masked_fill(const Tensor& mask, Scalar value) const;
  Tensor matmul(const Tensor& other) const;
  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;
  Tensor cumsum(int64_t dim) const;
  Tensor cumprod(int64_t dim) const;

  // Value semantics: these rebind *this to a new value; other handles to the old value are untouched.
  Tensor& operator+=(const Tensor& other);
  Tensor& operator-=(const Tensor& other);
  Tensor& operator*=(const Tensor& other);
  Tensor& operator/=(const Tensor& other);
  Tensor& operator+=(Scalar other);
  Tensor& operator-=(Scalar other);
  Tensor& operator*=(Scalar other);
  Tensor& operator/=(Scalar other);

  // Internal: the trace node behind this handle (throws lf::Error on an empty handle).
  const std::shared_ptr<ir::Node>& node() const;

 private:
  template <IntDim I>
  static std::vector<int64_t> dims_of(I dim) {
    return {static_cast<int64_t>(dim)};
  }
  std::shared_ptr<ir::Node> node_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);  // prints like PyTorch; a sync point

}  // namespace lf
