// lf::fft: torch.fft's names and semantics (issue 49). Any length (mixed radix, and Bluestein's
// chirp-z for lengths with large prime factors), any dim, every norm ("backward", the default;
// "forward"; "ortho"), Float32 and Float64; integer and bool inputs are promoted to Float32 as
// torch promotes them. The transforms are also there on complex values held as real pairs
// (lf::fft::pairs, below), which the complex ones are made of. Each transform records one node (our host FFT;
// docs/fft.md), so the elementwise work around it fuses into its neighbours and lf::grad differentiates it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lazyfuse/tensor.h"

namespace lf::fft {

// The transforms of torch.fft, on complex tensors (lazyfuse/complex.h); a real or integer input to
// a complex transform is taken as complex with zero imaginary parts (integers promoted to float32
// first, as torch). `n` / `s`: the signal length along each transformed dim, the input padded with
// zeros or truncated to it (none, or -1 in s: the input's size; irfft's: 2 (m - 1)). `dim`: any
// dims; fft2's default the last two, fftn's every dim (or, with s, the last len(s)). `norm`:
// "backward" (the inverse divides by n), "forward" (the forward does) or "ortho" (both by sqrt(n)).
Tensor fft(const Tensor& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
           const std::string& norm = "backward");
Tensor ifft(const Tensor& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
            const std::string& norm = "backward");
// rfft: the n / 2 + 1 non-negative frequencies of a real signal (a complex input is an error, as
// torch's); irfft: its inverse, a real signal of length n; bins 0 and n / 2 contribute their real
// parts only.
Tensor rfft(const Tensor& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
            const std::string& norm = "backward");
Tensor irfft(const Tensor& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
             const std::string& norm = "backward");
// hfft: the real spectrum of a signal with Hermitian symmetry given by its first half (irfft of
// the conjugate, scaled as a forward transform); ihfft: its inverse, from a real spectrum.
Tensor hfft(const Tensor& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
            const std::string& norm = "backward");
Tensor ihfft(const Tensor& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
             const std::string& norm = "backward");

using Dims = std::optional<std::vector<int64_t>>;
Tensor fft2(const Tensor& x, std::optional<Shape> s = std::nullopt, std::vector<int64_t> dim = {-2, -1},
            const std::string& norm = "backward");
Tensor ifft2(const Tensor& x, std::optional<Shape> s = std::nullopt, std::vector<int64_t> dim = {-2, -1},
             const std::string& norm = "backward");
Tensor rfft2(const Tensor& x, std::optional<Shape> s = std::nullopt, std::vector<int64_t> dim = {-2, -1},
             const std::string& norm = "backward");
Tensor irfft2(const Tensor& x, std::optional<Shape> s = std::nullopt, std::vector<int64_t> dim = {-2, -1},
              const std::string& norm = "backward");
Tensor fftn(const Tensor& x, std::optional<Shape> s = std::nullopt, Dims dim = std::nullopt,
            const std::string& norm = "backward");
Tensor ifftn(const Tensor& x, std::optional<Shape> s = std::nullopt, Dims dim = std::nullopt,
             const std::string& norm = "backward");
Tensor rfftn(const Tensor& x, std::optional<Shape> s = std::nullopt, Dims dim = std::nullopt,
             const std::string& norm = "backward");
Tensor irfftn(const Tensor& x, std::optional<Shape> s = std::nullopt, Dims dim = std::nullopt,
              const std::string& norm = "backward");

// The sample frequencies of an fft of length n with sample spacing d: [0, 1, ..., -(n / 2), ...,
// -1] / (d n); rfftfreq: [0, 1, ..., n / 2] / (d n) (an rfft's bins).
Tensor fftfreq(int64_t n, double d = 1.0, DType dtype = DType::Float32);
Tensor rfftfreq(int64_t n, double d = 1.0, DType dtype = DType::Float32);

// The zero frequency moved to the middle (torch.roll by size / 2 along each of `dim`; none: every
// dim); ifftshift undoes it (by (size + 1) / 2).
Tensor fftshift(const Tensor& x, std::optional<std::vector<int64_t>> dim = std::nullopt);
Tensor ifftshift(const Tensor& x, std::optional<std::vector<int64_t>> dim = std::nullopt);

}  // namespace lf::fft

namespace lf::fft::pairs {

// The transforms on complex values held as real pairs (PyTorch's view_as_real layout: a real
// tensor whose last dim of size 2 holds re, im): what the complex-valued functions are made of,
// usable before complex dtypes exist. `z`: pairs [.., 2] whose complex dims are all but the last; `x`: real. `n`: the
// signal length (padded with zeros or truncated; none: the input's), `dim` a complex dim, `norm` "backward", "forward"
// or "ortho". `op` is what errors name ("torch.fft.fft").
Tensor c2c(const Tensor& z, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
           const std::string& norm = "backward", bool forward = true, const char* op = "fft::pairs::c2c");
// rfft (forward) or ihfft (!forward: conj(rfft) with the inverse's scale): real in, pairs out.
Tensor r2c(const Tensor& x, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
           const std::string& norm = "backward", bool forward = true, const char* op = "fft::pairs::r2c");
// irfft (!forward) or hfft (forward: irfft of the conjugate with the forward's scale): pairs in,
// real out of length n (none: 2 (m - 1) for an input of m values).
Tensor c2r(const Tensor& z, std::optional<int64_t> n = std::nullopt, int64_t dim = -1,
           const std::string& norm = "backward", bool forward = false, const char* op = "fft::pairs::c2r");

// The n-dimensional forms (fft2, fftn, rfft2, rfftn, irfft2, irfftn ...), torch's rules for s and
// dim: both given have one length; s alone means its last len(s) dims; neither, every dim; -1 in s
// keeps that dim's size. r2cn's last dim is the real one (rfftn), c2rn's too (irfftn).
Tensor c2cn(const Tensor& z, std::optional<Shape> s = std::nullopt,
            std::optional<std::vector<int64_t>> dim = std::nullopt, const std::string& norm = "backward",
            bool forward = true, const char* op = "fft::pairs::c2cn");
Tensor r2cn(const Tensor& x, std::optional<Shape> s = std::nullopt,
            std::optional<std::vector<int64_t>> dim = std::nullopt, const std::string& norm = "backward",
            const char* op = "fft::pairs::r2cn");
Tensor c2rn(const Tensor& z, std::optional<Shape> s = std::nullopt,
            std::optional<std::vector<int64_t>> dim = std::nullopt, const std::string& norm = "backward",
            const char* op = "fft::pairs::c2rn");

}  // namespace lf::fft::pairs
