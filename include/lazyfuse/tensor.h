// lf::Tensor: a cheap, immutable value handle to a node of the lazy trace.
// Copying a Tensor shares the value; every op returns a new Tensor and records a node instead of
// computing. Values are computed at sync points: reading (item, to_vector, printing), lf::sync(),
// a trace that grows too long.
#pragma once

#include <iosfwd>
#include <memory>
#include <vector>

#include "lazyfuse/types.h"

namespace lf {

namespace ir {
struct Node;
}

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
  std::shared_ptr<ir::Node> node_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);  // prints like PyTorch; a sync point

}  // namespace lf
