// lf::Tensor's PyTorch-style members: elementwise functions, transposes and indexing sugar. Each
// forwards to the free function of the same name (lazyfuse/ops.h), so the two forms record the
// same nodes.
#include <string>
#include <utility>
#include <vector>

#include "frontend/record.h"
#include "lazyfuse/ops.h"

namespace lf {

Tensor Tensor::any(std::vector<int64_t> dims, bool keepdim) const { return lf::any(*this, std::move(dims), keepdim); }
Tensor Tensor::all(std::vector<int64_t> dims, bool keepdim) const { return lf::all(*this, std::move(dims), keepdim); }
Tensor Tensor::norm(double p, std::vector<int64_t> dims, bool keepdim) const {
  return lf::norm(*this, p, std::move(dims), keepdim);
}

namespace {
// PyTorch's messages: "t() expects a tensor with <= 2 dimensions, but self is 3D".
void check_t(const Tensor& x) {
  if (x.dim() > 2)
    detail::fail("t", "expects a tensor of at most 2 dims, got " + std::to_string(x.dim()) +
                          " (mT() transposes the last two dims, T() reverses them all)",
                 {&x});
}
void check_mT(const Tensor& x) {
  if (x.dim() < 2)
    detail::fail("mT", "expects a matrix or a batch of matrices (at least 2 dims), got " + std::to_string(x.dim()),
                 {&x});
}
std::vector<int64_t> reversed_dims(int64_t n) {
  std::vector<int64_t> dims(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) dims[static_cast<size_t>(i)] = n - 1 - i;
  return dims;
}
}  // namespace

Tensor Tensor::t() const& {
  check_t(*this);
  return dim() < 2 ? *this : lf::transpose(*this, 0, 1);
}
Tensor Tensor::t() && {
  check_t(*this);
  return dim() < 2 ? std::move(*this) : lf::transpose(std::move(*this), 0, 1);
}
Tensor Tensor::mT() const& {
  check_mT(*this);
  return lf::transpose(*this, -2, -1);
}
Tensor Tensor::mT() && {
  check_mT(*this);
  return lf::transpose(std::move(*this), -2, -1);
}
Tensor Tensor::T() const& { return dim() < 2 ? *this : lf::permute(*this, reversed_dims(dim())); }
Tensor Tensor::T() && {
  if (dim() < 2) return std::move(*this);
  std::vector<int64_t> dims = reversed_dims(dim());
  return lf::permute(std::move(*this), std::move(dims));
}

Tensor Tensor::select(int64_t d, int64_t index) const { return lf::select(*this, d, index); }
Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const { return lf::narrow(*this, d, start, length); }
Tensor Tensor::diagonal(int64_t offset, int64_t dim1, int64_t dim2) const {
  return lf::diagonal(*this, offset, dim1, dim2);
}
Tensor Tensor::flip(std::vector<int64_t> dims) const { return lf::flip(*this, std::move(dims)); }
Tensor Tensor::movedim(int64_t source, int64_t destination) const {
  return lf::movedim(*this, {source}, {destination});
}

// numpy's rules through lf::index: Ellipsis becomes the full slices it stands for, None an
// unsqueeze of the dim it names followed by a full slice of it (PyTorch's applySlicing does the
// same), so lf::index sees integers, slices and tensors only.
Tensor Tensor::index(const std::vector<indexing::TensorIndex>& indices) const {
  using Kind = indexing::TensorIndex::Kind;
  detail::check_defined("index", {this});
  int64_t consumed = 0, ellipses = 0;
  for (const indexing::TensorIndex& i : indices) {
    switch (i.kind()) {
      case Kind::Integer:
      case Kind::Slice: ++consumed; break;
      // A bool mask covers as many dims as it has (numpy's rule); an integer tensor one.
      case Kind::Tensor:
        detail::check_defined("index", {&i.tensor()});
        consumed += i.tensor().dtype() == DType::Bool ? i.tensor().dim() : 1;
        break;
      case Kind::None: break;
      case Kind::Ellipsis: ++ellipses; break;
    }
  }
  if (ellipses > 1) detail::fail("index", "an index may hold at most one Ellipsis, got " + std::to_string(ellipses), {this});
  if (consumed > dim())
    detail::fail("index",
                 "too many indices: " + std::to_string(consumed) + " dims indexed, the tensor has " +
                     std::to_string(dim()),
                 {this});
  Tensor x = *this;
  std::vector<Index> at;
  int64_t d = 0;  // the dim of x the next part indexes
  for (const indexing::TensorIndex& i : indices) {
    switch (i.kind()) {
      case Kind::Integer: at.emplace_back(i.integer()); ++d; break;
      case Kind::Slice: at.emplace_back(i.slice()); ++d; break;
      case Kind::Tensor:
        at.emplace_back(i.tensor());
        d += i.tensor().dtype() == DType::Bool ? i.tensor().dim() : 1;
        break;
      case Kind::None:
        x = lf::unsqueeze(std::move(x), d++);
        at.emplace_back(Slice{});
        break;
      case Kind::Ellipsis:
        for (int64_t k = 0; k < dim() - consumed; ++k, ++d) at.emplace_back(Slice{});
        break;
    }
  }
  return at.empty() ? x : lf::index(x, at);
}
Tensor Tensor::index(std::initializer_list<indexing::TensorIndex> indices) const {
  return index(std::vector<indexing::TensorIndex>(indices));
}
Tensor Tensor::operator[](const indexing::TensorIndex& i) const { return index({i}); }

Tensor Tensor::abs() const { return lf::abs(*this); }
Tensor Tensor::neg() const { return lf::neg(*this); }
Tensor Tensor::exp() const { return lf::exp(*this); }
Tensor Tensor::exp2() const { return lf::exp2(*this); }
Tensor Tensor::log() const { return lf::log(*this); }
Tensor Tensor::log2() const { return lf::log2(*this); }
Tensor Tensor::log1p() const { return lf::log1p(*this); }
Tensor Tensor::expm1() const { return lf::expm1(*this); }
Tensor Tensor::sqrt() const { return lf::sqrt(*this); }
Tensor Tensor::rsqrt() const { return lf::rsqrt(*this); }
Tensor Tensor::sin() const { return lf::sin(*this); }
Tensor Tensor::cos() const { return lf::cos(*this); }
Tensor Tensor::tan() const { return lf::tan(*this); }
Tensor Tensor::asin() const { return lf::asin(*this); }
Tensor Tensor::acos() const { return lf::acos(*this); }
Tensor Tensor::atan() const { return lf::atan(*this); }
Tensor Tensor::sinh() const { return lf::sinh(*this); }
Tensor Tensor::cosh() const { return lf::cosh(*this); }
Tensor Tensor::tanh() const { return lf::tanh(*this); }
Tensor Tensor::sigmoid() const { return lf::sigmoid(*this); }
Tensor Tensor::relu() const { return lf::relu(*this); }
Tensor Tensor::gelu(bool tanh_approx) const { return lf::gelu(*this, tanh_approx); }
Tensor Tensor::silu() const { return lf::silu(*this); }
Tensor Tensor::hardswish() const { return lf::hardswish(*this); }
Tensor Tensor::logit() const { return lf::logit(*this); }
Tensor Tensor::logit(double eps) const { return lf::logit(*this, eps); }
Tensor Tensor::erf() const { return lf::erf(*this); }
Tensor Tensor::floor() const { return lf::floor(*this); }
Tensor Tensor::ceil() const { return lf::ceil(*this); }
Tensor Tensor::round() const { return lf::round(*this); }
Tensor Tensor::sign() const { return lf::sign(*this); }
Tensor Tensor::reciprocal() const { return lf::reciprocal(*this); }
Tensor Tensor::square() const { return lf::square(*this); }
Tensor Tensor::isnan() const { return lf::isnan(*this); }
Tensor Tensor::isinf() const { return lf::isinf(*this); }
Tensor Tensor::isfinite() const { return lf::isfinite(*this); }
Tensor Tensor::logical_not() const { return !*this; }
Tensor Tensor::bitwise_not() const { return lf::bitwise_not(*this); }

Tensor Tensor::add(const Tensor& o) const { return *this + o; }
Tensor Tensor::add(Scalar o) const { return *this + o; }
Tensor Tensor::sub(const Tensor& o) const { return *this - o; }
Tensor Tensor::sub(Scalar o) const { return *this - o; }
Tensor Tensor::mul(const Tensor& o) const { return *this * o; }
Tensor Tensor::mul(Scalar o) const { return *this * o; }
Tensor Tensor::div(const Tensor& o) const { return *this / o; }
Tensor Tensor::div(Scalar o) const { return *this / o; }
Tensor Tensor::pow(const Tensor& e) const { return lf::pow(*this, e); }
Tensor Tensor::pow(Scalar e) const { return lf::pow(*this, e); }
Tensor Tensor::maximum(const Tensor& o) const { return lf::maximum(*this, o); }
Tensor Tensor::minimum(const Tensor& o) const { return lf::minimum(*this, o); }
Tensor Tensor::atan2(const Tensor& o) const { return lf::atan2(*this, o); }
Tensor Tensor::remainder(const Tensor& o) const { return lf::remainder(*this, o); }
Tensor Tensor::remainder(Scalar o) const { return lf::remainder(*this, o); }
Tensor Tensor::fmod(const Tensor& o) const { return lf::fmod(*this, o); }
Tensor Tensor::fmod(Scalar o) const { return lf::fmod(*this, o); }
Tensor Tensor::floor_divide(const Tensor& o) const { return lf::floor_divide(*this, o); }
Tensor Tensor::floor_divide(Scalar o) const { return lf::floor_divide(*this, o); }
Tensor Tensor::bitwise_and(const Tensor& o) const { return lf::bitwise_and(*this, o); }
Tensor Tensor::bitwise_and(Scalar o) const { return lf::bitwise_and(*this, o); }
Tensor Tensor::bitwise_or(const Tensor& o) const { return lf::bitwise_or(*this, o); }
Tensor Tensor::bitwise_or(Scalar o) const { return lf::bitwise_or(*this, o); }
Tensor Tensor::bitwise_xor(const Tensor& o) const { return lf::bitwise_xor(*this, o); }
Tensor Tensor::bitwise_xor(Scalar o) const { return lf::bitwise_xor(*this, o); }
Tensor Tensor::bitwise_left_shift(const Tensor& o) const { return lf::bitwise_left_shift(*this, o); }
Tensor Tensor::bitwise_left_shift(Scalar o) const { return lf::bitwise_left_shift(*this, o); }
Tensor Tensor::bitwise_right_shift(const Tensor& o) const { return lf::bitwise_right_shift(*this, o); }
Tensor Tensor::bitwise_right_shift(Scalar o) const { return lf::bitwise_right_shift(*this, o); }
Tensor Tensor::logical_and(const Tensor& o) const { return *this && o; }
Tensor Tensor::logical_or(const Tensor& o) const { return *this || o; }
Tensor Tensor::eq(const Tensor& o) const { return *this == o; }
Tensor Tensor::eq(Scalar o) const { return *this == o; }
Tensor Tensor::ne(const Tensor& o) const { return *this != o; }
Tensor Tensor::ne(Scalar o) const { return *this != o; }
Tensor Tensor::lt(const Tensor& o) const { return *this < o; }
Tensor Tensor::lt(Scalar o) const { return *this < o; }
Tensor Tensor::le(const Tensor& o) const { return *this <= o; }
Tensor Tensor::le(Scalar o) const { return *this <= o; }
Tensor Tensor::gt(const Tensor& o) const { return *this > o; }
Tensor Tensor::gt(Scalar o) const { return *this > o; }
Tensor Tensor::ge(const Tensor& o) const { return *this >= o; }
Tensor Tensor::ge(Scalar o) const { return *this >= o; }
Tensor Tensor::clamp(Scalar min, Scalar max) const { return lf::clamp(*this, min, max); }
Tensor Tensor::clamp(const std::optional<Tensor>& min, const std::optional<Tensor>& max) const {
  return lf::clamp(*this, min, max);
}
Tensor Tensor::clamp_min(const Tensor& min) const { return lf::clamp_min(*this, min); }
Tensor Tensor::clamp_min(Scalar min) const { return lf::clamp_min(*this, min); }
Tensor Tensor::clamp_max(const Tensor& max) const { return lf::clamp_max(*this, max); }
Tensor Tensor::clamp_max(Scalar max) const { return lf::clamp_max(*this, max); }
Tensor Tensor::lerp(const Tensor& end, const Tensor& weight) const { return lf::lerp(*this, end, weight); }
Tensor Tensor::lerp(const Tensor& end, Scalar weight) const { return lf::lerp(*this, end, weight); }
Tensor Tensor::where(const Tensor& cond, const Tensor& other) const { return lf::where(cond, *this, other); }
Tensor Tensor::where(const Tensor& cond, Scalar other) const { return lf::where(cond, *this, other); }
Tensor Tensor::masked_fill(const Tensor& mask, Scalar value) const { return lf::masked_fill(*this, mask, value); }
Tensor Tensor::matmul(const Tensor& other) const { return lf::matmul(*this, other); }
Tensor Tensor::softmax(int64_t d) const { return lf::softmax(*this, d); }
Tensor Tensor::log_softmax(int64_t d) const { return lf::log_softmax(*this, d); }
Tensor Tensor::cumsum(int64_t d) const { return lf::cumsum(*this, d); }
Tensor Tensor::cumprod(int64_t d) const { return lf::cumprod(*this, d); }

}  // namespace lf
