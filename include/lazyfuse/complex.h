// Complex numbers (issue 49): DType::Complex64 and Complex128, with PyTorch's names and semantics.
//
// A complex tensor of shape S holds its values in a real tensor of shape S + [2] (re, im: the
// layout of torch.view_as_real). The trace, the fuser, the kernels and autograd see only that real
// tensor: every op on complex values records ops on it (a complex product is four real products
// and two sums), so complex arithmetic fuses like any other, runs on every backend, and
// differentiates with PyTorch's convention (the gradient of a real loss L with respect to z is
// dL/dre + i dL/dim). docs/complex.md lists what takes complex tensors; any other op raises an
// lf::Error naming itself ("lf::sigmoid: is not defined for complex tensors").
//
// Promotion follows PyTorch's categories: complex with a real or integer tensor keeps the complex
// dtype, widened to Complex128 with a Float64 operand (numpy agrees except for integer operands,
// which widen a complex64 there).
#pragma once

#include <complex>
#include <concepts>
#include <vector>

#include "lazyfuse/ops.h"
#include "lazyfuse/tensor.h"

namespace lf {

// torch.complex: real + i imag (float32 or float64 parts of one dtype, broadcast together).
Tensor complex(const Tensor& real, const Tensor& imag);
// torch.polar: abs * (cos(angle) + i sin(angle)).
Tensor polar(const Tensor& abs, const Tensor& angle);
// The values as a real tensor of shape S + [2] (re, im), and back (the last dim must be 2). Views:
// no copy.
Tensor view_as_real(const Tensor& z);
Tensor view_as_complex(const Tensor& r);
// The real and imaginary parts, views; real() of a real tensor is the tensor, imag() needs a
// complex one (as PyTorch).
Tensor real(const Tensor& z);
Tensor imag(const Tensor& z);
// The conjugate (a real tensor: itself) and the argument atan2(im, re) (a real tensor: 0 or pi,
// by sign; NaN stays NaN).
Tensor conj(const Tensor& z);
Tensor angle(const Tensor& z);

// Complex tensors from host values (row-major), like from_vector.
Tensor from_vector(const std::vector<std::complex<float>>& data, Shape shape);
Tensor from_vector(const std::vector<std::complex<double>>& data, Shape shape);

// Complex numbers as operands (z * 1i, std::complex<float> or <double>): a 0-D complex tensor of
// the other operand's precision. Templates, so that a real number (x * 2.0) never converts to one.
Tensor complex_number(const Tensor& like, std::complex<double> v);
template <typename T>
concept ComplexNumber = std::same_as<T, std::complex<float>> || std::same_as<T, std::complex<double>>;
template <ComplexNumber C> Tensor operator+(const Tensor& a, C b) { return a + complex_number(a, b); }
template <ComplexNumber C> Tensor operator-(const Tensor& a, C b) { return a - complex_number(a, b); }
template <ComplexNumber C> Tensor operator*(const Tensor& a, C b) { return a * complex_number(a, b); }
template <ComplexNumber C> Tensor operator/(const Tensor& a, C b) { return a / complex_number(a, b); }
template <ComplexNumber C> Tensor operator+(C a, const Tensor& b) { return complex_number(b, a) + b; }
template <ComplexNumber C> Tensor operator-(C a, const Tensor& b) { return complex_number(b, a) - b; }
template <ComplexNumber C> Tensor operator*(C a, const Tensor& b) { return complex_number(b, a) * b; }
template <ComplexNumber C> Tensor operator/(C a, const Tensor& b) { return complex_number(b, a) / b; }

}  // namespace lf
