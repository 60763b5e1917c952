// The reference FFT: the direct sum X_k = sum_j x_j e^{-+2 pi i jk / n} in float64 (fft.h).
#include "codegen/reference/fft.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <numbers>

#include "runtime/storage.h"

namespace lf::ir {
namespace {

using C = std::complex<double>;

template <typename T>
void run_lines(const FftProblem& p) {
  const FftParams& q = p.params;
  const int64_t n = q.n, len = q.out_length();
  const T* in = static_cast<const T*>(p.in);
  T* out = static_cast<T*>(p.out);
  // The angle of jk / n with jk reduced mod n first, so that large n keeps its accuracy.
  std::vector<C> root(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r)
    root[static_cast<size_t>(r)] =
        std::polar(1.0, -2 * std::numbers::pi * static_cast<double>(r) / static_cast<double>(n));
  std::vector<C> x(static_cast<size_t>(n));
  for (int64_t b = 0; b < p.batch; ++b) {
    const T* line = in + p.line_offset(b);
    auto at = [&](int64_t j, int64_t part) { return static_cast<double>(line[j * p.stride + part * p.pair_stride]); };
    // The whole signal as n complex values: c2r's Hermitian extension, r2c's zero imaginary parts.
    for (int64_t j = 0; j < n; ++j) {
      if (q.kind == FftKind::kR2C) {
        x[static_cast<size_t>(j)] = C(at(j, 0), 0);
      } else if (q.kind == FftKind::kC2R && j >= q.in_length()) {
        const int64_t m = n - j;
        x[static_cast<size_t>(j)] = std::conj(C(at(m, 0), at(m, 1)));
      } else {
        x[static_cast<size_t>(j)] = C(at(j, 0), at(j, 1));
      }
    }
    if (q.kind == FftKind::kC2R) {
      // Only the real part is kept, so the imaginary parts of bins 0 and n / 2 (which the extension
      // cannot make Hermitian) drop out, as numpy's irfft ignores them.
      x[0] = C(x[0].real(), 0);
      if (n % 2 == 0) x[static_cast<size_t>(n / 2)] = C(x[static_cast<size_t>(n / 2)].real(), 0);
    }
    const bool inverse = q.kind == FftKind::kInverse || q.kind == FftKind::kC2R;
    T* o = out + b * p.out_line();
    for (int64_t k = 0; k < len; ++k) {
      C sum = 0;
      for (int64_t j = 0; j < n; ++j) {
        const C w = root[static_cast<size_t>((j * k) % n)];
        sum += x[static_cast<size_t>(j)] * (inverse ? std::conj(w) : w);
      }
      sum *= q.scale;
      if (q.complex_output()) {
        o[2 * k] = static_cast<T>(sum.real());
        o[2 * k + 1] = static_cast<T>(sum.imag());
      } else {
        o[k] = static_cast<T>(sum.real());
      }
    }
  }
}

}  // namespace

FftProblem FftProblem::of(const Node& node, const Value& in) {
  FftProblem p;
  p.params = FftParams::of(node);
  p.dtype = node.dtype;
  const size_t line_dims = p.params.complex_input() ? 2 : 1;
  const size_t rank = in.shape.size();
  p.batch_shape.assign(in.shape.begin(), in.shape.end() - static_cast<std::ptrdiff_t>(line_dims));
  p.batch_strides.assign(in.layout.strides.begin(), in.layout.strides.end() - static_cast<std::ptrdiff_t>(line_dims));
  p.stride = in.layout.strides[rank - line_dims];
  p.pair_stride = line_dims == 2 ? in.layout.strides[rank - 1] : 0;
  p.batch = shape_numel(p.batch_shape);
  p.in = in.storage ? static_cast<const char*>(in.storage->data()) +
                          in.layout.offset * static_cast<int64_t>(dtype_size(in.dtype))
                    : nullptr;
  return p;
}

void reference_fft_problem(const FftProblem& p) {
  if (p.dtype == DType::Float32) return run_lines<float>(p);
  run_lines<double>(p);
}

Value reference_fft(const Node& node, const std::vector<Value>& in) {
  // A value of another dtype is converted (and made contiguous); any strides of the node's dtype
  // are read as they are.
  Value dense = in[0].dtype == node.dtype ? in[0] : to_contiguous(in[0], node.dtype);
  const size_t bytes = static_cast<size_t>(shape_numel(node.shape)) * dtype_size(node.dtype);
  auto storage = rt::Storage::allocate(Device::cpu(), bytes);
  FftProblem p = FftProblem::of(node, dense);
  p.out = storage->data();
  reference_fft_problem(p);
  return Value{std::move(storage), node.dtype, node.shape, Layout{contiguous_strides(node.shape), 0}};
}

}  // namespace lf::ir
