// lf::fft (lazyfuse/fft.h) and the transforms on real pairs beneath it (frontend/fft_pairs.h): each
// 1-d transform moves its dim next to the pair dim (or last, for a real side), pads or truncates to
// n, and records one Fft node (codegen/ir/fft.h); the moves and pads are views and pads that fuse
// into the kernels either side of the transform.
#include "lazyfuse/fft.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "frontend/fft_pairs.h"
#include "frontend/record.h"
#include "lazyfuse/complex.h"
#include "lazyfuse/ops.h"

namespace lf::detail {

Tensor record_fft(const Tensor& x, const ir::FftParams& p) {
  Shape shape = x.shape();
  if (p.kind == ir::FftKind::kR2C) {
    shape.back() = p.out_length();
    shape.push_back(2);
  } else if (p.kind == ir::FftKind::kC2R) {
    shape.pop_back();
    shape.back() = p.n;
  } else {
    shape[shape.size() - 2] = p.n;
  }
  ir::Attrs attrs;
  p.pack(attrs);
  return record(ir::Op::Fft, x.dtype(), x.device(), shape, {&x}, std::move(attrs));
}

Tensor conj_pairs(const Tensor& z) {
  return z * from_vector(std::vector<double>{1, -1}, {2}).to(z.dtype()).to(z.device());
}

}  // namespace lf::detail

namespace lf::fft::pairs {
namespace {

using detail::fail;

// The dtype a transform computes in: Float32 and Float64 as they are, integers and bool promoted
// to Float32 (torch's default dtype), half types refused (torch's CPU refuses them too).
Tensor as_float(const Tensor& x, const char* op) {
  if (x.defined() && is_complex(x.dtype()))
    fail(op, "takes real pairs [..., 2], not a complex tensor (lf::view_as_real gives them)", {&x});
  detail::check_defined(op, {&x});
  if (x.dtype() == DType::Float32 || x.dtype() == DType::Float64) return x;
  if (x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16)
    fail(op, std::string("unsupported dtype ") + dtype_name(x.dtype()) + " (float32 and float64 only)", {&x});
  return x.to(DType::Float32);
}

// The norm's factor for a transform of length n in the forward (e^-) or the inverse direction.
double scale_of(const std::string& norm, int64_t n, bool forward, const char* op, const Tensor& x) {
  const double dn = static_cast<double>(n);
  if (norm == "backward") return forward ? 1.0 : 1.0 / dn;
  if (norm == "forward") return forward ? 1.0 / dn : 1.0;
  if (norm == "ortho") return 1.0 / std::sqrt(dn);
  fail(op, "Invalid normalization mode: \"" + norm + "\" (expected \"backward\", \"forward\" or \"ortho\")", {&x});
}

void check_points(int64_t n, const char* op, const Tensor& x) {
  if (n < 1) fail(op, "Invalid number of data points (" + std::to_string(n) + ") specified", {&x});
}

// x's dim `dim` padded with zeros or truncated to n.
Tensor resize(const Tensor& x, int64_t dim, int64_t n) {
  const int64_t size = x.size(dim);
  if (size == n) return x;
  if (size > n) return slice(x, dim, 0, n);
  std::vector<int64_t> pads(2 * static_cast<size_t>(x.dim() - dim), 0);
  pads.back() = n - size;
  return pad(x, pads);
}

// A complex dim of pairs z (rank: z.dim() - 1), wrapped.
int64_t complex_dim(const Tensor& z, int64_t dim, const char* op) {
  const int64_t rank = z.dim() - 1;
  if (rank < 1) fail(op, "expected a tensor of at least one dimension", {&z});
  return detail::normalize_dim(op, dim, rank, z);
}

}  // namespace

Tensor c2c(const Tensor& z0, std::optional<int64_t> n, int64_t dim, const std::string& norm, bool forward,
           const char* op) {
  Tensor z = as_float(z0, op);
  const int64_t d = complex_dim(z, dim, op), last = z.dim() - 2;
  const int64_t len = n.value_or(z.size(d));
  check_points(len, op, z);
  const double scale = scale_of(norm, len, forward, op, z);
  Tensor t = resize(movedim(z, {d}, {last}), last, len);
  Tensor y = detail::record_fft(t, {forward ? ir::FftKind::kForward : ir::FftKind::kInverse, len, scale});
  return movedim(y, {last}, {d});
}

Tensor r2c(const Tensor& x0, std::optional<int64_t> n, int64_t dim, const std::string& norm, bool forward,
           const char* op) {
  Tensor x = as_float(x0, op);
  if (x.dim() < 1) fail(op, "expected a tensor of at least one dimension", {&x});
  const int64_t d = detail::normalize_dim(op, dim, x.dim(), x), last = x.dim() - 1;
  const int64_t len = n.value_or(x.size(d));
  check_points(len, op, x);
  const double scale = scale_of(norm, len, forward, op, x);
  Tensor t = resize(movedim(x, {d}, {last}), last, len);
  Tensor y = detail::record_fft(t, {ir::FftKind::kR2C, len, scale});
  if (!forward) y = detail::conj_pairs(y);  // ihfft(x) = conj(rfft(x)) / n
  return movedim(y, {last}, {d});
}

Tensor c2r(const Tensor& z0, std::optional<int64_t> n, int64_t dim, const std::string& norm, bool forward,
           const char* op) {
  Tensor z = as_float(z0, op);
  const int64_t d = complex_dim(z, dim, op), last = z.dim() - 2;
  const int64_t len = n.value_or(2 * (z.size(d) - 1));
  check_points(len, op, z);
  const double scale = scale_of(norm, len, forward, op, z);
  // The Hermitian half a real signal of length n has: n / 2 + 1 values, padded or truncated to it.
  Tensor t = resize(movedim(z, {d}, {last}), last, len / 2 + 1);
  if (forward) t = detail::conj_pairs(t);  // hfft(x) = irfft(conj(x)) * n
  Tensor y = detail::record_fft(t, {ir::FftKind::kC2R, len, scale});
  return movedim(y, {last}, {d});
}

namespace {

// torch's canonicalize_fft_shape_and_dim_args: the dims (wrapped, unique) and each one's length.
struct Plan {
  std::vector<int64_t> dims;
  std::vector<std::optional<int64_t>> lengths;  // none: the input's size (c2rn's last: 2 (m - 1))
};

Plan plan_of(const Tensor& x, int64_t rank, const std::optional<Shape>& s,
             const std::optional<std::vector<int64_t>>& dim, const char* op) {
  Plan p;
  if (dim) {
    for (int64_t d : *dim) p.dims.push_back(detail::normalize_dim(op, d, rank, x));
    std::vector<int64_t> sorted = p.dims;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) fail(op, "FFT dims must be unique", {&x});
    if (s && s->size() != dim->size())
      fail(op,
           "When given, dim and shape arguments must have the same length (got s of " + std::to_string(s->size()) +
               " and dim of " + std::to_string(dim->size()) + ")",
           {&x});
  } else if (s) {
    if (static_cast<int64_t>(s->size()) > rank)
      fail(op,
           "Got shape with " + std::to_string(s->size()) + " values but input tensor only has " + std::to_string(rank) +
               " dimensions.",
           {&x});
    for (int64_t d = rank - static_cast<int64_t>(s->size()); d < rank; ++d) p.dims.push_back(d);
  } else {
    for (int64_t d = 0; d < rank; ++d) p.dims.push_back(d);
  }
  p.lengths.assign(p.dims.size(), std::nullopt);
  if (s)
    for (size_t i = 0; i < s->size(); ++i) {
      if ((*s)[i] == -1) continue;
      check_points((*s)[i], op, x);
      p.lengths[i] = (*s)[i];
    }
  return p;
}

}  // namespace

Tensor c2cn(const Tensor& z0, std::optional<Shape> s, std::optional<std::vector<int64_t>> dim, const std::string& norm,
            bool forward, const char* op) {
  Tensor z = as_float(z0, op);
  const Plan p = plan_of(z, z.dim() - 1, s, dim, op);
  scale_of(norm, 1, forward, op, z);  // a bad norm is an error even with no dim to transform
  for (size_t i = p.dims.size(); i-- > 0;) z = c2c(z, p.lengths[i], p.dims[i], norm, forward, op);
  return z;
}

Tensor r2cn(const Tensor& x0, std::optional<Shape> s, std::optional<std::vector<int64_t>> dim, const std::string& norm,
            const char* op) {
  Tensor x = as_float(x0, op);
  const Plan p = plan_of(x, x.dim(), s, dim, op);
  if (p.dims.empty()) fail(op, "must transform at least one axis", {&x});
  Tensor z = r2c(x, p.lengths.back(), p.dims.back(), norm, true, op);
  for (size_t i = p.dims.size() - 1; i-- > 0;) z = c2c(z, p.lengths[i], p.dims[i], norm, true, op);
  return z;
}

Tensor c2rn(const Tensor& z0, std::optional<Shape> s, std::optional<std::vector<int64_t>> dim, const std::string& norm,
            const char* op) {
  Tensor z = as_float(z0, op);
  const Plan p = plan_of(z, z.dim() - 1, s, dim, op);
  if (p.dims.empty()) fail(op, "must transform at least one axis", {&z});
  for (size_t i = 0; i + 1 < p.dims.size(); ++i) z = c2c(z, p.lengths[i], p.dims[i], norm, false, op);
  return c2r(z, p.lengths.back(), p.dims.back(), norm, false, op);
}

}  // namespace lf::fft::pairs

namespace lf::fft {

// The complex transforms: the pair transforms over view_as_real, the result viewed as complex.
namespace {

// x's values as pairs: a complex tensor's own, a real one's with zero imaginary parts.
// (check_defined would refuse a complex tensor: the table of ops that take them is record.cpp's,
// and these take them by viewing their pairs.)
Tensor as_pairs(const Tensor& x, const char* op) {
  if (x.defined() && is_complex(x.dtype())) return view_as_real(x);
  detail::check_defined(op, {&x});
  if (x.dim() == 0) detail::fail(op, "expected a tensor of at least one dimension", {&x});
  Tensor re = is_floating(x.dtype()) ? x : x.to(DType::Float32);
  return stack({re, zeros_like(re)}, -1);
}

// rfft's input: real (integers promoted by the pair transform), never complex (torch's rule).
const Tensor& real_input(const Tensor& x, const char* op) {
  if (x.defined() && is_complex(x.dtype()))
    detail::fail(op, "expects a real input tensor, but got a complex one", {&x});
  return x;
}

}  // namespace

Tensor fft(const Tensor& x, std::optional<int64_t> n, int64_t dim, const std::string& norm) {
  return view_as_complex(pairs::c2c(as_pairs(x, "fft::fft"), n, dim, norm, true, "fft::fft"));
}
Tensor ifft(const Tensor& x, std::optional<int64_t> n, int64_t dim, const std::string& norm) {
  return view_as_complex(pairs::c2c(as_pairs(x, "fft::ifft"), n, dim, norm, false, "fft::ifft"));
}
Tensor rfft(const Tensor& x, std::optional<int64_t> n, int64_t dim, const std::string& norm) {
  return view_as_complex(pairs::r2c(real_input(x, "fft::rfft"), n, dim, norm, true, "fft::rfft"));
}
Tensor irfft(const Tensor& x, std::optional<int64_t> n, int64_t dim, const std::string& norm) {
  return pairs::c2r(as_pairs(x, "fft::irfft"), n, dim, norm, false, "fft::irfft");
}
Tensor hfft(const Tensor& x, std::optional<int64_t> n, int64_t dim, const std::string& norm) {
  return pairs::c2r(as_pairs(x, "fft::hfft"), n, dim, norm, true, "fft::hfft");
}
Tensor ihfft(const Tensor& x, std::optional<int64_t> n, int64_t dim, const std::string& norm) {
  return view_as_complex(pairs::r2c(real_input(x, "fft::ihfft"), n, dim, norm, false, "fft::ihfft"));
}

Tensor fft2(const Tensor& x, std::optional<Shape> s, std::vector<int64_t> dim, const std::string& norm) {
  return view_as_complex(pairs::c2cn(as_pairs(x, "fft::fft2"), std::move(s), std::move(dim), norm, true, "fft::fft2"));
}
Tensor ifft2(const Tensor& x, std::optional<Shape> s, std::vector<int64_t> dim, const std::string& norm) {
  return view_as_complex(
      pairs::c2cn(as_pairs(x, "fft::ifft2"), std::move(s), std::move(dim), norm, false, "fft::ifft2"));
}
Tensor rfft2(const Tensor& x, std::optional<Shape> s, std::vector<int64_t> dim, const std::string& norm) {
  return view_as_complex(pairs::r2cn(real_input(x, "fft::rfft2"), std::move(s), std::move(dim), norm, "fft::rfft2"));
}
Tensor irfft2(const Tensor& x, std::optional<Shape> s, std::vector<int64_t> dim, const std::string& norm) {
  return pairs::c2rn(as_pairs(x, "fft::irfft2"), std::move(s), std::move(dim), norm, "fft::irfft2");
}
Tensor fftn(const Tensor& x, std::optional<Shape> s, Dims dim, const std::string& norm) {
  return view_as_complex(pairs::c2cn(as_pairs(x, "fft::fftn"), std::move(s), std::move(dim), norm, true, "fft::fftn"));
}
Tensor ifftn(const Tensor& x, std::optional<Shape> s, Dims dim, const std::string& norm) {
  return view_as_complex(
      pairs::c2cn(as_pairs(x, "fft::ifftn"), std::move(s), std::move(dim), norm, false, "fft::ifftn"));
}
Tensor rfftn(const Tensor& x, std::optional<Shape> s, Dims dim, const std::string& norm) {
  return view_as_complex(pairs::r2cn(real_input(x, "fft::rfftn"), std::move(s), std::move(dim), norm, "fft::rfftn"));
}
Tensor irfftn(const Tensor& x, std::optional<Shape> s, Dims dim, const std::string& norm) {
  return pairs::c2rn(as_pairs(x, "fft::irfftn"), std::move(s), std::move(dim), norm, "fft::irfftn");
}

Tensor fftfreq(int64_t n, double d, DType dtype) {
  if (n < 0) detail::fail("fft::fftfreq", "n must be non-negative, got " + std::to_string(n));
  // torch's: arange(n) with its upper half arange(-(n / 2), 0), times 1 / (n d).
  Tensor k = arange(0, n, 1, DType::Int64);
  Tensor signed_k = where(k < (n + 1) / 2, k, k - n);
  return signed_k.to(dtype) * (1.0 / (static_cast<double>(n) * d));
}

Tensor rfftfreq(int64_t n, double d, DType dtype) {
  if (n < 0) detail::fail("fft::rfftfreq", "n must be non-negative, got " + std::to_string(n));
  return arange(0, n / 2 + 1, 1, DType::Int64).to(dtype) * (1.0 / (static_cast<double>(n) * d));
}

namespace {

Tensor shift(const Tensor& x, const std::optional<std::vector<int64_t>>& dim, bool inverse, const char* op) {
  if (!x.defined()) detail::check_defined(op, {&x});  // complex tensors welcome: roll takes them
  std::vector<int64_t> dims, shifts;
  if (dim) {
    for (int64_t d : *dim) dims.push_back(detail::normalize_dim(op, d, x.dim(), x));
  } else {
    for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
  }
  if (dims.empty()) return x;
  for (int64_t d : dims) shifts.push_back(inverse ? (x.size(d) + 1) / 2 : x.size(d) / 2);
  return roll(x, shifts, dims);
}

}  // namespace

Tensor fftshift(const Tensor& x, std::optional<std::vector<int64_t>> dim) {
  return shift(x, dim, false, "fft::fftshift");
}
Tensor ifftshift(const Tensor& x, std::optional<std::vector<int64_t>> dim) {
  return shift(x, dim, true, "fft::ifftshift");
}

}  // namespace lf::fft
