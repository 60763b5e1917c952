// Eigen in and out without copies (an optional header: it includes Eigen, which lazyfuse.h never
// does; Debian: libeigen3-dev). Header-only, on lf::from_blob and Tensor::data_ptr / strides.
//
//   lf::Tensor t = lf::from_eigen(m);        // m: Matrix, Array, Map, Ref, Block with direct
//                                            // access; Eigen::Tensor or TensorMap. Borrowed.
//   lf::Tensor o = lf::adopt_eigen(std::move(m));  // the tensor owns the moved matrix
//   auto view = lf::as_eigen<float>(t);      // a const Eigen::Map over a computed 1-D or 2-D tensor
//   auto tv = lf::as_eigen_tensor<float, 3>(t);  // a const Eigen::TensorMap, row-major
//
// Lifetime (README, "Using LazyFuse inside existing code"): from_eigen borrows, like from_blob:
// the Eigen object stays alive (and is not resized) while any tensor or pending value made from it
// exists, and is written only when no pending value reads it. as_eigen's map is valid while a
// Tensor holds the value it views; it is a sync point.
#pragma once

#include <Eigen/Core>
#include <unsupported/Eigen/CXX11/Tensor>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "lazyfuse/interop.h"
#include "lazyfuse/tensor.h"
#include "lazyfuse/types.h"

namespace lf {
namespace eigen_detail {

template <typename T>
constexpr DType dtype_of() {
  using U = std::remove_const_t<T>;
  if constexpr (std::is_same_v<U, bool>) return DType::Bool;
  else if constexpr (std::is_same_v<U, int32_t>) return DType::Int32;
  else if constexpr (std::is_same_v<U, int64_t>) return DType::Int64;
  else if constexpr (std::is_same_v<U, float>) return DType::Float32;
  else if constexpr (std::is_same_v<U, double>) return DType::Float64;
  else if constexpr (std::is_same_v<U, Eigen::half>) return DType::Float16;
  else if constexpr (std::is_same_v<U, Eigen::bfloat16>) return DType::BFloat16;
  else static_assert(sizeof(U) == 0, "no LazyFuse dtype for this Eigen scalar type");
}

// Shape and strides (elements) of a dense Eigen object with direct access.
template <typename Derived>
void dense_layout(const Eigen::DenseBase<Derived>& m, Shape* shape, Shape* strides) {
  static_assert(bool(Derived::Flags & Eigen::DirectAccessBit),
                "lf::from_eigen needs an object with direct access to its memory (Matrix, Array, Map, "
                "Ref, Block): evaluate an expression into a Matrix first");
  const Derived& d = m.derived();
  if constexpr (Derived::IsVectorAtCompileTime) {
    *shape = {static_cast<int64_t>(d.size())};
    *strides = {static_cast<int64_t>(d.innerStride())};
  } else if constexpr (bool(Derived::IsRowMajor)) {
    *shape = {static_cast<int64_t>(d.rows()), static_cast<int64_t>(d.cols())};
    *strides = {static_cast<int64_t>(d.outerStride()), static_cast<int64_t>(d.innerStride())};
  } else {
    *shape = {static_cast<int64_t>(d.rows()), static_cast<int64_t>(d.cols())};
    *strides = {static_cast<int64_t>(d.innerStride()), static_cast<int64_t>(d.outerStride())};
  }
}

template <typename Dims>
void tensor_layout(const Dims& dims, int rank, bool row_major, Shape* shape, Shape* strides) {
  shape->resize(static_cast<size_t>(rank));
  strides->resize(static_cast<size_t>(rank));
  int64_t s = 1;
  for (int i = 0; i < rank; ++i) {
    const int d = row_major ? rank - 1 - i : i;
    (*shape)[static_cast<size_t>(d)] = static_cast<int64_t>(dims[d]);
    (*strides)[static_cast<size_t>(d)] = s;
    s *= dims[d] > 1 ? static_cast<int64_t>(dims[d]) : 1;
  }
}

}  // namespace eigen_detail

// ---- In: Matrix, Array, Map, Ref, Block (row- or column-major, any strides); borrowed.
template <typename Derived>
Tensor from_eigen(const Eigen::DenseBase<Derived>& m) {
  Shape shape, strides;
  eigen_detail::dense_layout(m, &shape, &strides);
  using T = typename Derived::Scalar;
  return from_blob(const_cast<std::remove_const_t<T>*>(m.derived().data()), std::move(shape), std::move(strides),
                   eigen_detail::dtype_of<T>());
}

// ---- In: Eigen::Tensor and Eigen::TensorMap (row- or column-major); borrowed.
template <typename T, int N, int Options, typename Index>
Tensor from_eigen(const Eigen::Tensor<T, N, Options, Index>& t) {
  Shape shape, strides;
  eigen_detail::tensor_layout(t.dimensions(), N, (Options & Eigen::RowMajor) != 0, &shape, &strides);
  return from_blob(const_cast<T*>(t.data()), std::move(shape), std::move(strides), eigen_detail::dtype_of<T>());
}
template <typename PlainTensor, int MapOptions, template <class> class MakePointer>
Tensor from_eigen(const Eigen::TensorMap<PlainTensor, MapOptions, MakePointer>& t) {
  using T = typename PlainTensor::Scalar;
  constexpr int N = PlainTensor::NumIndices;
  Shape shape, strides;
  eigen_detail::tensor_layout(t.dimensions(), N, (PlainTensor::Options & Eigen::RowMajor) != 0, &shape, &strides);
  return from_blob(const_cast<std::remove_const_t<T>*>(t.data()), std::move(shape), std::move(strides),
                   eigen_detail::dtype_of<T>());
}

// ---- In, adopted: the tensor owns the (moved) Matrix, Array or Eigen::Tensor.
template <typename Plain>
Tensor adopt_eigen(Plain&& m) {
  static_assert(!std::is_lvalue_reference_v<Plain>, "adopt_eigen takes an rvalue: std::move(m)");
  auto owner = std::make_shared<std::remove_cv_t<Plain>>(std::move(m));
  Tensor borrowed = from_eigen(*owner);
  return from_blob(const_cast<void*>(borrowed.data_ptr()), borrowed.shape(), borrowed.strides(), borrowed.dtype(),
                   Device::cpu(), std::shared_ptr<const void>(owner));
}

// ---- Out: a computed CPU tensor as a const Eigen::Map (sync point). Rank 2: rows x cols; rank 1:
// a column; rank 0: 1 x 1. Strides are kept (a transposed tensor maps as is, no copy). T must be
// the tensor's element type.
template <typename T>
using EigenView = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, Eigen::Unaligned,
                             Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;

template <typename T>
EigenView<T> as_eigen(const Tensor& t) {
  if (t.dtype() != eigen_detail::dtype_of<T>())
    throw Error(std::string("lf::as_eigen: the tensor is ") + dtype_name(t.dtype()) + ", not " +
                dtype_name(eigen_detail::dtype_of<T>()));
  if (!t.device().is_cpu()) throw Error("lf::as_eigen: the tensor is on " + t.device().str() + "; move it with .to(lf::Device::cpu())");
  if (t.dim() > 2) throw Error("lf::as_eigen: needs a tensor of rank 0, 1 or 2, not " + std::to_string(t.dim()) + " (see as_eigen_tensor)");
  const T* data = static_cast<const T*>(t.data_ptr());  // the sync point
  const Shape strides = t.strides();
  const Eigen::Index rows = t.dim() >= 1 ? t.shape()[0] : 1, cols = t.dim() == 2 ? t.shape()[1] : 1;
  const Eigen::Index outer = t.dim() >= 1 ? strides[0] : 1, inner = t.dim() == 2 ? strides[1] : 1;
  return EigenView<T>(data, rows, cols, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(outer, inner));
}

// A computed, contiguous CPU tensor of rank N as a const row-major Eigen::TensorMap (sync point).
// Eigen's TensorMap has no strides: call .contiguous() first on a view.
template <typename T, int N>
Eigen::TensorMap<const Eigen::Tensor<T, N, Eigen::RowMajor>> as_eigen_tensor(const Tensor& t) {
  if (t.dtype() != eigen_detail::dtype_of<T>())
    throw Error(std::string("lf::as_eigen_tensor: the tensor is ") + dtype_name(t.dtype()) + ", not " +
                dtype_name(eigen_detail::dtype_of<T>()));
  if (!t.device().is_cpu()) throw Error("lf::as_eigen_tensor: the tensor is on " + t.device().str());
  if (t.dim() != N) throw Error("lf::as_eigen_tensor: the tensor has rank " + std::to_string(t.dim()) + ", not " + std::to_string(N));
  const T* data = static_cast<const T*>(t.data_ptr());
  if (!t.is_contiguous()) throw Error("lf::as_eigen_tensor: the tensor is a strided view; call .contiguous() first");
  Eigen::array<Eigen::Index, N> dims;
  for (int i = 0; i < N; ++i) dims[i] = t.shape()[static_cast<size_t>(i)];
  return Eigen::TensorMap<const Eigen::Tensor<T, N, Eigen::RowMajor>>(data, dims);
}

}  // namespace lf
