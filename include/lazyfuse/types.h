// Vocabulary types of LazyFuse: dtypes, devices, shapes, scalars and the error type.
// Every layer (runtime, codegen, frontend) speaks these; they carry no LLVM or CUDA types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace lf {

// Complex64 and Complex128 are frontend types (lazyfuse/complex.h): a complex tensor of shape S is a
// handle over a real tensor of shape S + [2] (re, im), which the trace, the fuser and the kernels
// see; they never see a complex dtype.
enum class DType : uint8_t { Bool, Int32, Int64, Float16, BFloat16, Float32, Float64, Complex64, Complex128 };
inline constexpr int kNumDTypes = 9;

const char* dtype_name(DType dtype);  // "float32", "int64", "complex64", ...
size_t dtype_size(DType dtype);       // bytes per element
inline bool is_floating(DType d) { return d >= DType::Float16 && d <= DType::Float64; }
inline bool is_integral(DType d) { return d == DType::Int32 || d == DType::Int64; }
inline bool is_complex(DType d) { return d >= DType::Complex64; }
// The real dtype of a complex one's parts (Complex64: Float32), and the complex dtype of a real
// one (Float32 and narrower: Complex64; Float64: Complex128).
inline DType complex_part(DType d) { return d == DType::Complex128 ? DType::Float64 : DType::Float32; }
inline DType complex_of(DType d) {
  return d == DType::Float64 || d == DType::Complex128 ? DType::Complex128 : DType::Complex64;
}

using Shape = std::vector<int64_t>;
std::string shape_str(const Shape& shape);  // "[2, 3]"
int64_t shape_numel(const Shape& shape);

// Every user error (bad shape, dtype, dim, index) and every runtime failure the user can act on.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Device {
 public:
  enum class Kind : uint8_t { CPU, CUDA };
  constexpr Device() = default;
  static constexpr Device cpu() { return Device(Kind::CPU, 0); }
  static constexpr Device cuda(int index = 0) { return Device(Kind::CUDA, index); }
  constexpr Kind kind() const { return kind_; }
  constexpr int index() const { return index_; }
  constexpr bool is_cpu() const { return kind_ == Kind::CPU; }
  constexpr bool is_cuda() const { return kind_ == Kind::CUDA; }
  constexpr bool operator==(const Device&) const = default;
  std::string str() const;  // "cpu", "cuda:0"

 private:
  constexpr Device(Kind kind, int index) : kind_(kind), index_(index) {}
  Kind kind_ = Kind::CPU;
  int index_ = 0;
};

// A C++ number used as an operand (x + 2, x * 0.5). It remembers its category, because
// PyTorch's promotion rule lets a scalar lift a tensor's category (int tensor + 0.5 is float)
// but never its width within a category (float16 tensor * 2.0 stays float16).
class Scalar {
 public:
  enum class Kind : uint8_t { Bool, Int, Float };
  template <typename T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  Scalar(T v) {  // NOLINT(google-explicit-constructor): scalars convert implicitly, like in Python.
    if constexpr (std::is_same_v<T, bool>) {
      kind_ = Kind::Bool;
      value_ = v ? 1.0 : 0.0;
      ivalue_ = v ? 1 : 0;
    } else if constexpr (std::is_integral_v<T>) {
      kind_ = Kind::Int;
      value_ = static_cast<double>(v);
      ivalue_ = static_cast<int64_t>(v);
    } else {
      kind_ = Kind::Float;
      value_ = static_cast<double>(v);
      ivalue_ = 0;
    }
  }
  Kind kind() const { return kind_; }
  double to_double() const { return value_; }
  int64_t to_int() const { return kind_ == Kind::Float ? static_cast<int64_t>(value_) : ivalue_; }

 private:
  Kind kind_;
  double value_;
  int64_t ivalue_;
};

}  // namespace lf
