// lf::Tensor: handle bookkeeping, accessors, reads (sync points) and member forwarding.
#include "lazyfuse/tensor.h"

#include <complex>
#include <cstring>
#include <string>
#include <utility>

#include "codegen/ir/dtype_dispatch.h"
#include "codegen/reference/reference.h"
#include "frontend/complex.h"
#include "frontend/record.h"
#include "frontend/trace.h"
#include "lazyfuse/complex.h"
#include "lazyfuse/ops.h"
#include "runtime/cuda_driver.h"
#include "runtime/storage.h"

namespace lf {

namespace {
// A complex tensor's handle counts as a handle of its pairs too (frontend/complex.h): the fuser
// computes a held node, and the pairs are what holds the values.
void retain_pairs(const ir::Node& n) {
  if (is_complex(n.dtype)) [[unlikely]]
    n.inputs[0]->user_refs.fetch_add(1, std::memory_order_relaxed);
}
void release_pairs(const ir::Node& n) {
  if (is_complex(n.dtype)) [[unlikely]]
    n.inputs[0]->user_refs.fetch_sub(1, std::memory_order_relaxed);
}
}  // namespace

Tensor::Tensor(std::shared_ptr<ir::Node> node) : node_(std::move(node)) {
  if (!node_) return;
  retain_pairs(*node_);
  // A node only this handle holds (one just recorded) is visible to no other thread, so its count
  // needs no atomic read-modify-write: that saves a locked instruction on every recorded op.
  if (node_.use_count() == 1)
    node_->user_refs.store(node_->user_refs.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  else
    node_->user_refs.fetch_add(1, std::memory_order_relaxed);
}
Tensor::Tensor(const Tensor& other) : Tensor(other.node_) {}
Tensor::Tensor(Tensor&& other) noexcept : node_(std::move(other.node_)) {}
Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) *this = Tensor(other);
  return *this;
}
Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this != &other) {
    if (node_) {
      release_pairs(*node_);
      node_->user_refs.fetch_sub(1, std::memory_order_relaxed);
    }
    node_ = std::move(other.node_);
  }
  return *this;
}
Tensor::~Tensor() {
  if (!node_) return;
  release_pairs(*node_);  // the pairs may outlive this node: their count matters
  // A node this handle alone holds dies with it: its count no longer matters.
  if (node_.use_count() > 1) node_->user_refs.fetch_sub(1, std::memory_order_relaxed);
}

const std::shared_ptr<ir::Node>& Tensor::node() const {
  if (!node_) throw Error("lf::Tensor: use of an empty Tensor (default-constructed, never assigned)");
  return node_;
}

const Shape& Tensor::shape() const { return node()->shape; }
DType Tensor::dtype() const { return node()->dtype; }
Device Tensor::device() const { return node()->device; }
int64_t Tensor::numel() const { return node()->numel(); }
int64_t Tensor::dim() const { return node()->rank(); }
int64_t Tensor::size(int64_t d) const { return shape()[detail::normalize_dim("size", d, dim(), *this)]; }
bool Tensor::is_materialized() const {
  const ir::Node& n = *node();
  return is_complex(n.dtype) ? n.inputs[0]->realized() : n.realized();  // a complex value: its pairs
}

namespace {

template <typename T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return DType::Bool;
  if constexpr (std::is_same_v<T, int32_t>) return DType::Int32;
  if constexpr (std::is_same_v<T, int64_t>) return DType::Int64;
  if constexpr (std::is_same_v<T, float>) return DType::Float32;
  if constexpr (std::is_same_v<T, double>) return DType::Float64;
}

// The elements a strided view can reach, [first, last], in elements from the start of its storage.
std::pair<int64_t, int64_t> extent(const Shape& shape, const ir::Layout& layout) {
  int64_t first = layout.offset, last = layout.offset;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t span = (shape[d] - 1) * layout.strides[d];
    (span < 0 ? first : last) += span;
  }
  return {first, last};
}

// A host copy of a computed value: itself on the CPU; from a GPU, the bytes its view can reach,
// copied down (after the device's queued work, which rt::copy waits for).
ir::Value on_host(const ir::Value& v) {
  if (v.storage->device().is_cpu() || shape_numel(v.shape) == 0) return v;
  auto [first, last] = extent(v.shape, v.layout);
  const size_t esize = dtype_size(v.dtype);
  const size_t bytes = static_cast<size_t>(last - first + 1) * esize;
  auto host = rt::Storage::allocate(Device::cpu(), bytes);
  rt::copy(*v.storage, static_cast<size_t>(first) * esize, *host, 0, bytes);
  return ir::Value{std::move(host), v.dtype, v.shape, ir::Layout{v.layout.strides, v.layout.offset - first}};
}

// Materializes `t` (on its device) and copies its values, converted to T on the host, into
// row-major order.
template <typename T>
std::vector<T> read_values(const Tensor& t) {
  const ir::NodePtr& node = t.node();
  detail::realize({node.get()});
  std::vector<T> out(static_cast<size_t>(node->numel()));
  if (out.empty()) return out;
  ir::Value v = ir::to_contiguous(on_host(ir::value_of(*node)), dtype_of<T>());
  if constexpr (std::is_same_v<T, bool>) {
    const auto* p = static_cast<const unsigned char*>(v.storage->data());  // 0/1 (to_contiguous)
    for (size_t i = 0; i < out.size(); ++i) out[i] = p[i] != 0;
  } else {
    std::memcpy(out.data(), v.storage->data(), out.size() * sizeof(T));
  }
  return out;
}

}  // namespace

template <typename T>
struct IsComplex : std::false_type {};
template <typename T>
struct IsComplex<std::complex<T>> : std::true_type {};

// A complex tensor's values from its pairs; a real tensor read as complex is cast first. Real
// values of a complex tensor are an error (PyTorch's item() gives a complex number too).
template <typename T>
std::vector<T> read_any(const Tensor& t) {
  if constexpr (IsComplex<T>::value) {
    using P = typename T::value_type;
    const DType d = std::is_same_v<P, float> ? DType::Complex64 : DType::Complex128;
    std::vector<P> flat = read_values<P>(view_as_real(t.dtype() == d ? t : cast(t, d)));
    std::vector<T> out(flat.size() / 2);
    if (!flat.empty()) std::memcpy(out.data(), flat.data(), flat.size() * sizeof(P));
    return out;
  } else {
    if (is_complex(t.dtype()))
      detail::fail("to_vector", "reads a complex tensor as std::complex<float> or std::complex<double> (or read lf::real(z))", {&t});
    return read_values<T>(t);
  }
}

template <typename T>
T Tensor::item() const {
  if (numel() != 1) {
    detail::fail("item", "needs a tensor with exactly one element, not " + std::to_string(numel()), {this});
  }
  return read_any<T>(*this)[0];
}

template <typename T>
std::vector<T> Tensor::to_vector() const {
  return read_any<T>(*this);
}

#define LF_INSTANTIATE_READS(T)          \
  template T Tensor::item<T>() const; \
  template std::vector<T> Tensor::to_vector<T>() const;
LF_INSTANTIATE_READS(bool)
LF_INSTANTIATE_READS(int32_t)
LF_INSTANTIATE_READS(int64_t)
LF_INSTANTIATE_READS(float)
LF_INSTANTIATE_READS(double)
LF_INSTANTIATE_READS(std::complex<float>)
LF_INSTANTIATE_READS(std::complex<double>)
#undef LF_INSTANTIATE_READS

Tensor Tensor::to(DType dtype) const { return cast(*this, dtype); }

// A copy of the values on `device`, as a materialized buffer: a sync point for the source. A
// strided view is made contiguous on its own device first, so only numel elements travel.
Tensor Tensor::to(Device device) const {
  const Device from = this->device();
  if (device == from) return *this;
  if (is_complex(dtype())) return view_as_complex(view_as_real(*this).to(device));
  const std::string move = from.str() + " to " + device.str() + " (" + detail::describe(*this) + ", " +
                           std::to_string(static_cast<size_t>(numel()) * dtype_size(dtype())) + " bytes)";
  for (Device d : {from, device}) {
    if (!d.is_cuda()) continue;
    const rt::CudaStatus& st = rt::cuda_status();
    if (!st.available) detail::fail("to", "cannot move a tensor from " + move + ": CUDA is unavailable (" + st.reason + ")");
    if (d.index() < 0 || d.index() >= static_cast<int>(st.devices.size()))
      detail::fail("to", "cannot move a tensor from " + move + ": " + d.str() + " does not exist (" +
                             std::to_string(st.devices.size()) + " CUDA device(s))");
  }
  Tensor src = lf::contiguous(*this);
  detail::realize({src.node().get()});
  const ir::Node& n = *src.node();
  if (!ir::is_contiguous(n.shape, n.layout))
    detail::fail("to", "internal error: the source of the move from " + move + " is still strided after contiguous()");
  const size_t esize = dtype_size(n.dtype);
  const size_t bytes = static_cast<size_t>(n.numel()) * esize;
  std::shared_ptr<rt::Storage> storage;
  try {
    storage = rt::Storage::allocate(device, bytes);
    rt::copy(*n.storage, static_cast<size_t>(n.layout.offset) * esize, *storage, 0, bytes);
    rt::Storage::ValueRange r;  // a bound on the source storage's values bounds any view's
    if (n.storage->value_range(&r)) storage->set_value_range(r);
  } catch (const Error& e) {
    detail::fail("to", "moving a tensor from " + move + " failed: " + e.what());
  }
  return Tensor(ir::make_buffer(std::move(storage), n.dtype, n.shape, ir::Layout{ir::contiguous_strides(n.shape), 0}));
}

Tensor Tensor::sum(std::vector<int64_t> dims, bool keepdim) const& { return lf::sum(*this, std::move(dims), keepdim); }
Tensor Tensor::mean(std::vector<int64_t> dims, bool keepdim) const& { return lf::mean(*this, std::move(dims), keepdim); }
Tensor Tensor::prod(std::vector<int64_t> dims, bool keepdim) const& { return lf::prod(*this, std::move(dims), keepdim); }
Tensor Tensor::max(std::vector<int64_t> dims, bool keepdim) const& { return lf::max(*this, std::move(dims), keepdim); }
Tensor Tensor::min(std::vector<int64_t> dims, bool keepdim) const& { return lf::min(*this, std::move(dims), keepdim); }
Tensor Tensor::argmax(std::vector<int64_t> dims, bool keepdim) const& { return lf::argmax(*this, std::move(dims), keepdim); }
Tensor Tensor::argmin(std::vector<int64_t> dims, bool keepdim) const& { return lf::argmin(*this, std::move(dims), keepdim); }
Tensor Tensor::var(std::vector<int64_t> dims, bool keepdim, int64_t correction) const& {
  return lf::var(*this, std::move(dims), keepdim, correction);
}
Tensor Tensor::std(std::vector<int64_t> dims, bool keepdim, int64_t correction) const& {
  return lf::std(*this, std::move(dims), keepdim, correction);
}
Tensor Tensor::logsumexp(std::vector<int64_t> dims, bool keepdim) const& {
  return lf::logsumexp(*this, std::move(dims), keepdim);
}

// On a temporary: the free functions' Tensor&& forms release its handle.
Tensor Tensor::sum(std::vector<int64_t> dims, bool keepdim) && { return lf::sum(std::move(*this), std::move(dims), keepdim); }
Tensor Tensor::mean(std::vector<int64_t> dims, bool keepdim) && { return lf::mean(std::move(*this), std::move(dims), keepdim); }
Tensor Tensor::prod(std::vector<int64_t> dims, bool keepdim) && { return lf::prod(std::move(*this), std::move(dims), keepdim); }
Tensor Tensor::max(std::vector<int64_t> dims, bool keepdim) && { return lf::max(std::move(*this), std::move(dims), keepdim); }
Tensor Tensor::min(std::vector<int64_t> dims, bool keepdim) && { return lf::min(std::move(*this), std::move(dims), keepdim); }
Tensor Tensor::argmax(std::vector<int64_t> dims, bool keepdim) && { return lf::argmax(std::move(*this), std::move(dims), keepdim); }
Tensor Tensor::argmin(std::vector<int64_t> dims, bool keepdim) && { return lf::argmin(std::move(*this), std::move(dims), keepdim); }
Tensor Tensor::var(std::vector<int64_t> dims, bool keepdim, int64_t correction) && {
  return lf::var(std::move(*this), std::move(dims), keepdim, correction);
}
Tensor Tensor::std(std::vector<int64_t> dims, bool keepdim, int64_t correction) && {
  return lf::std(std::move(*this), std::move(dims), keepdim, correction);
}
Tensor Tensor::logsumexp(std::vector<int64_t> dims, bool keepdim) && {
  return lf::logsumexp(std::move(*this), std::move(dims), keepdim);
}

Tensor Tensor::reshape(Shape shape) const& { return lf::reshape(*this, std::move(shape)); }
Tensor Tensor::flatten() const& { return lf::flatten(*this); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const& { return lf::transpose(*this, d0, d1); }
Tensor Tensor::permute(std::vector<int64_t> dims) const& { return lf::permute(*this, std::move(dims)); }
Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step) const& {
  return lf::slice(*this, d, start, end, step);
}
Tensor Tensor::expand(Shape shape) const& { return lf::expand(*this, std::move(shape)); }
Tensor Tensor::squeeze(int64_t d) const& { return lf::squeeze(*this, d); }
Tensor Tensor::unsqueeze(int64_t d) const& { return lf::unsqueeze(*this, d); }
Tensor Tensor::contiguous() const& { return lf::contiguous(*this); }

// On a temporary: the free functions' Tensor&& forms release its handle.
Tensor Tensor::reshape(Shape shape) && { return lf::reshape(std::move(*this), std::move(shape)); }
Tensor Tensor::flatten() && { return lf::flatten(std::move(*this)); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) && { return lf::transpose(std::move(*this), d0, d1); }
Tensor Tensor::permute(std::vector<int64_t> dims) && { return lf::permute(std::move(*this), std::move(dims)); }
Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step) && {
  return lf::slice(std::move(*this), d, start, end, step);
}
Tensor Tensor::expand(Shape shape) && { return lf::expand(std::move(*this), std::move(shape)); }
Tensor Tensor::squeeze(int64_t d) && { return lf::squeeze(std::move(*this), d); }
Tensor Tensor::unsqueeze(int64_t d) && { return lf::unsqueeze(std::move(*this), d); }
Tensor Tensor::contiguous() && { return lf::contiguous(std::move(*this)); }

Tensor& Tensor::operator+=(const Tensor& o) { return *this = *this + o; }
Tensor& Tensor::operator-=(const Tensor& o) { return *this = *this - o; }
Tensor& Tensor::operator*=(const Tensor& o) { return *this = *this * o; }
Tensor& Tensor::operator/=(const Tensor& o) { return *this = *this / o; }
Tensor& Tensor::operator+=(Scalar o) { return *this = *this + o; }
Tensor& Tensor::operator-=(Scalar o) { return *this = *this - o; }
Tensor& Tensor::operator*=(Scalar o) { return *this = *this * o; }
Tensor& Tensor::operator/=(Scalar o) { return *this = *this / o; }

}  // namespace lf
