// The host FFT (fft_host.h). A plan per length, cached: the radices, the table W_n^j = e^{-2 pi i j
// / n} and, for Bluestein, the chirp and the transformed kernel. Every transform is computed as a
// forward one: an inverse conjugates on the way in and out, c2r extends its Hermitian half to the
// whole spectrum, and r2c fills in zero imaginary parts, so one code path serves the four kinds.
#include "codegen/backend/fft_host.h"

#include <cmath>
#include <complex>
#include <map>
#include <memory>
#include <mutex>
#include <numbers>
#include <vector>

#include "runtime/thread_pool.h"

namespace lf::backend::fft {
namespace {

using C = std::complex<double>;

// a * b without std::complex's operator*, which calls __muldc3 to recover infinities from NaN
// products (C Annex G) and costs several times the four multiplies; a NaN or inf input still gives
// NaN or inf, as numpy's pocketfft does.
inline C mul(C a, C b) {
  return C(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
}

// From this length a transform runs in four steps (Plan::four_step), spread over the thread pool.
constexpr int64_t kFourStepLength = int64_t{1} << 14;

// Above this prime factor, the O(p^2) butterfly costs more than Bluestein's three transforms of a
// smooth length.
constexpr int64_t kLargestRadix = 13;

std::vector<int64_t> radices(int64_t n) {
  std::vector<int64_t> r;
  while (n % 4 == 0) r.push_back(4), n /= 4;
  while (n % 2 == 0) r.push_back(2), n /= 2;
  for (int64_t p = 3; p * p <= n; p += 2)
    while (n % p == 0) r.push_back(p), n /= p;
  if (n > 1) r.push_back(n);
  return r;
}

// e^{-2 pi i num / den}, num reduced first (callers pass num < den).
C root(int64_t num, int64_t den) {
  return std::polar(1.0, -2 * std::numbers::pi * static_cast<double>(num) / static_cast<double>(den));
}

class Plan {
 public:
  explicit Plan(int64_t n) : n_(n) {
    std::vector<int64_t> r = radices(n);
    if (!r.empty() && r.back() > kLargestRadix) {
      init_bluestein();
      return;
    }
    radix_ = r;
    twiddle_.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) twiddle_[static_cast<size_t>(j)] = root(j, n);
    if (n >= kFourStepLength) {
      int64_t n1 = 1;
      for (size_t i = 0; i < r.size() && n1 * n1 < n; ++i) n1 *= r[i];
      rows_ = std::make_unique<Plan>(n1);
      cols_ = std::make_unique<Plan>(n / n1);
    }
  }

  int64_t size() const { return n_; }
  // Complex values of scratch forward() needs beyond its input and output.
  size_t scratch() const { return sub_ ? static_cast<size_t>(2 * sub_->size()) + sub_->scratch() : 0; }

  // out = DFT(in), both n values; in is left as it was unless this is a Bluestein plan (then it is
  // read once and may be overwritten by nothing: the chirped copy lives in scratch).
  void forward(const C* in, C* out, C* scratch) const {
    if (n_ == 1) {
      out[0] = in[0];
      return;
    }
    if (sub_) return bluestein(in, out, scratch);
    if (rows_) return four_step(in, out);
    work(out, in, 1, 0);
  }

  std::string describe() const {
    if (rows_)
      return "four-step " + std::to_string(rows_->size()) + " x " + std::to_string(cols_->size()) + " (" +
             rows_->describe() + "; " + cols_->describe() + ")";
    std::string s;
    const std::vector<int64_t>& r = sub_ ? sub_->radix_ : radix_;
    for (int64_t p : r) s += (s.empty() ? "" : "x") + std::to_string(p);
    if (s.empty()) s = "1";
    return sub_ ? "Bluestein over " + std::to_string(sub_->size()) + " (radix " + s + ")" : "radix " + s;
  }

 private:
  // The recursive decimation in time: out[0, p m) = the DFT of the p m values in[0], in[stride],
  // ..., where p = radix_[level]; the p sub-transforms of length m first, then the butterflies.
  void work(C* out, const C* in, int64_t stride, size_t level) const {
    const int64_t p = radix_[level], m = n_ / (stride * p);
    if (m == 1) {
      for (int64_t q = 0; q < p; ++q) out[q] = in[q * stride];
    } else {
      for (int64_t q = 0; q < p; ++q) work(out + q * m, in + q * stride, stride * p, level + 1);
    }
    butterflies(out, stride, p, m);
  }

  // X[k + s m] = sum_q W_{pm}^{qk} Y_q[k] W_p^{qs}, with Y_q = out[q m, q m + m) and W_{pm}^x =
  // twiddle_[x * stride].
  void butterflies(C* out, int64_t stride, int64_t p, int64_t m, int64_t k0 = 0, int64_t k1 = -1) const {
    if (k1 < 0) k1 = m;
    const C* tw = twiddle_.data();
    switch (p) {
      case 2:
        for (int64_t k = k0; k < k1; ++k) {
          const C t = mul(out[k + m], tw[k * stride]);
          out[k + m] = out[k] - t;
          out[k] += t;
        }
        return;
      case 4:
        for (int64_t k = k0; k < k1; ++k) {
          const C t0 = out[k], t1 = mul(out[k + m], tw[k * stride]), t2 = mul(out[k + 2 * m], tw[2 * k * stride]),
                  t3 = mul(out[k + 3 * m], tw[3 * k * stride]);
          const C a = t0 + t2, b = t0 - t2, c = t1 + t3, d = t1 - t3;
          const C id(-d.imag(), d.real());  // i d; W_4 = -i
          out[k] = a + c;
          out[k + m] = b - id;
          out[k + 2 * m] = a - c;
          out[k + 3 * m] = b + id;
        }
        return;
      case 3: {
        const double h = -std::sqrt(3.0) / 2;  // Im W_3
        for (int64_t k = k0; k < k1; ++k) {
          const C t0 = out[k], t1 = mul(out[k + m], tw[k * stride]), t2 = mul(out[k + 2 * m], tw[2 * k * stride]);
          const C s = t1 + t2, d = t1 - t2;
          const C base = t0 - 0.5 * s, rot(-h * d.imag(), h * d.real());  // i h d
          out[k] = t0 + s;
          out[k + m] = base + rot;
          out[k + 2 * m] = base - rot;
        }
        return;
      }
      default: {
        // Any other prime: the direct p-point DFT, W_p^{x} = twiddle_[(x mod p) m stride].
        C t[kLargestRadix];
        for (int64_t k = k0; k < k1; ++k) {
          for (int64_t q = 0; q < p; ++q) t[q] = q == 0 ? out[k] : mul(out[k + q * m], tw[q * k * stride]);
          for (int64_t s = 0; s < p; ++s) {
            C sum = t[0];
            for (int64_t q = 1; q < p; ++q) sum += mul(t[q], tw[((q * s) % p) * m * stride]);
            out[k + s * m] = sum;
          }
        }
        return;
      }
    }
  }

  // Bailey's four-step transform for a long line, whose recursion would read its input at strides
  // of n / 4, n / 16, ... (a cache miss a value): with n = n1 n2, j = j1 + n1 j2, k = k2 + n2 k1,
  // X_k = sum_j1 W_n1^{j1 k1} W_n^{j1 k2} (sum_j2 x_j W_n2^{j2 k2}): n1 transforms of length n2,
  // the twiddles, n2 transforms of length n1, each short enough for the cache. Columns are
  // gathered and scattered kBlock at a time, so that each row of the matrix is read in one piece.
  void four_step(const C* in, C* out) const {
    constexpr int64_t kBlock = 16;
    const int64_t n1 = rows_->size(), n2 = cols_->size();
    std::vector<C> y(static_cast<size_t>(n_));  // y[j1 n2 + k2]
    rt::parallel_for((n1 + kBlock - 1) / kBlock, [&](int64_t blk) {
      const int64_t j0 = blk * kBlock, count = std::min(kBlock, n1 - j0);
      std::vector<C> a(static_cast<size_t>(kBlock * n2)), b(static_cast<size_t>(n2)), scratch(cols_->scratch());
      for (int64_t j2 = 0; j2 < n2; ++j2)
        for (int64_t l = 0; l < count; ++l) a[static_cast<size_t>(l * n2 + j2)] = in[j0 + l + n1 * j2];
      for (int64_t l = 0; l < count; ++l) {
        cols_->forward(a.data() + l * n2, b.data(), scratch.data());
        const int64_t j1 = j0 + l;
        C* row = y.data() + j1 * n2;
        // W_n^{j1 k2} with j1 k2 < n1 n2 = n: no reduction needed.
        for (int64_t k2 = 0, t = 0; k2 < n2; ++k2, t += j1)
          row[k2] = mul(b[static_cast<size_t>(k2)], twiddle_[static_cast<size_t>(t)]);
      }
    });
    rt::parallel_for((n2 + kBlock - 1) / kBlock, [&](int64_t blk) {
      const int64_t k0 = blk * kBlock, count = std::min(kBlock, n2 - k0);
      std::vector<C> a(static_cast<size_t>(kBlock * n1)), b(static_cast<size_t>(kBlock * n1)),
          scratch(rows_->scratch());
      for (int64_t j1 = 0; j1 < n1; ++j1)
        for (int64_t l = 0; l < count; ++l)
          a[static_cast<size_t>(l * n1 + j1)] = y[static_cast<size_t>(j1 * n2 + k0 + l)];
      for (int64_t l = 0; l < count; ++l) rows_->forward(a.data() + l * n1, b.data() + l * n1, scratch.data());
      for (int64_t k1 = 0; k1 < n1; ++k1)
        for (int64_t l = 0; l < count; ++l) out[k0 + l + n2 * k1] = b[static_cast<size_t>(l * n1 + k1)];
    });
  }

  // X_k = c_k sum_j (x_j c_j) conj(c_{k - j}) with the chirp c_k = e^{-i pi k^2 / n}: a circular
  // convolution of length m >= 2n - 1, a power of two, done by three transforms of length m (the
  // kernel's once, in the plan).
  void init_bluestein() {
    int64_t m = 1;
    while (m < 2 * n_ - 1) m *= 2;
    sub_ = std::make_unique<Plan>(m);
    chirp_.resize(static_cast<size_t>(n_));
    for (int64_t k = 0; k < n_; ++k) {
      // k^2 mod 2n before the angle: k^2 itself loses the angle's digits for large n.
      const int64_t r =
          static_cast<int64_t>((static_cast<unsigned __int128>(k) * k) % static_cast<unsigned __int128>(2 * n_));
      chirp_[static_cast<size_t>(k)] =
          std::polar(1.0, -std::numbers::pi * static_cast<double>(r) / static_cast<double>(n_));
    }
    std::vector<C> b(static_cast<size_t>(m), C(0)), scratch(sub_->scratch());
    for (int64_t d = 0; d < n_; ++d) {
      b[static_cast<size_t>(d)] = std::conj(chirp_[static_cast<size_t>(d)]);
      if (d > 0) b[static_cast<size_t>(m - d)] = b[static_cast<size_t>(d)];
    }
    kernel_.resize(static_cast<size_t>(m));
    sub_->forward(b.data(), kernel_.data(), scratch.data());
    // The inverse transform's 1 / m folded into the kernel.
    for (C& v : kernel_) v /= static_cast<double>(m);
  }

  void bluestein(const C* in, C* out, C* scratch) const {
    const int64_t m = sub_->size();
    C* a = scratch;
    C* fa = scratch + m;
    C* rest = scratch + 2 * m;
    for (int64_t j = 0; j < n_; ++j) a[j] = mul(in[j], chirp_[static_cast<size_t>(j)]);
    for (int64_t j = n_; j < m; ++j) a[j] = 0;
    sub_->forward(a, fa, rest);
    // The inverse as conj(DFT(conj(.))): conjugate the product going in, and the result coming out.
    for (int64_t j = 0; j < m; ++j) fa[j] = std::conj(mul(fa[j], kernel_[static_cast<size_t>(j)]));
    sub_->forward(fa, a, rest);
    for (int64_t k = 0; k < n_; ++k) out[k] = mul(std::conj(a[k]), chirp_[static_cast<size_t>(k)]);
  }

  int64_t n_;
  std::vector<int64_t> radix_;
  std::vector<C> twiddle_;
  std::unique_ptr<Plan> sub_;          // Bluestein's transform of the convolution's length
  std::unique_ptr<Plan> rows_, cols_;  // the four-step transform's lengths n1 and n2
  std::vector<C> chirp_, kernel_;
};

// Plans by length, kept for the process (a few lengths per program; the bound keeps a program that
// sweeps lengths from holding every table).
std::shared_ptr<const Plan> plan_for(int64_t n) {
  static std::mutex mu;
  static auto* plans = new std::map<int64_t, std::shared_ptr<const Plan>>();
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = plans->find(n); it != plans->end()) return it->second;
  if (plans->size() >= 64) plans->clear();
  auto plan = std::make_shared<const Plan>(n);
  (*plans)[n] = plan;
  return plan;
}

// Whether a real transform (r2c, c2r) of even length runs as a complex one of half the length:
// the even and odd samples as real and imaginary parts, untangled with W_n^k (half the work).
bool halved(const ir::FftParams& q) {
  return (q.kind == ir::FftKind::kR2C || q.kind == ir::FftKind::kC2R) && q.n % 2 == 0 && q.n >= 4;
}

template <typename T>
void run_typed(const ir::FftProblem& p, const Plan& plan) {
  const ir::FftParams& q = p.params;
  const int64_t n = q.n, in_len = q.in_length(), out_len = q.out_length();
  const bool conj = q.kind == ir::FftKind::kInverse || q.kind == ir::FftKind::kC2R;
  const bool half = halved(q);
  const int64_t h = n / 2;
  std::vector<C> w;  // W_n^k, k < h: the half-length untangling's twiddles
  if (half)
    for (int64_t k = 0; k < h; ++k) w.push_back(root(k, n));
  const T* in = static_cast<const T*>(p.in);
  T* out = static_cast<T*>(p.out);
  // Lines in chunks of about 32k values, at least one line each: enough work per chunk to pay for
  // its buffers, and enough chunks to share a batch of short lines over the pool.
  const int64_t per = std::max<int64_t>(1, (int64_t{1} << 15) / std::max<int64_t>(n, 1));
  const int64_t chunks = (p.batch + per - 1) / per;
  // A line that is not contiguous (a transform along a leading dim: a column) is gathered with
  // its neighbours, kGroup lines at once, into a staging buffer: reading one value per cache line
  // down a column, at a power-of-two stride that maps every row to the same cache sets, cost more
  // than the transform.
  const int64_t parts = q.complex_input() ? 2 : 1;
  const bool gather = p.stride != parts || (parts == 2 && p.pair_stride != 1);
  constexpr int64_t kGroup = 16;
  const int64_t staged = in_len * parts;
  rt::parallel_for(chunks, [&](int64_t chunk) {
    std::vector<C> x(static_cast<size_t>(n)), y(static_cast<size_t>(n)), scratch(plan.scratch());
    std::vector<T> stage(gather ? static_cast<size_t>(kGroup * staged) : 0);
    const int64_t begin = chunk * per, end = std::min(p.batch, (chunk + 1) * per);
    for (int64_t b = begin; b < end; ++b) {
      if (gather && (b - begin) % kGroup == 0) {
        const int64_t count = std::min(kGroup, end - b);
        const T* lines[kGroup];
        for (int64_t l = 0; l < count; ++l) lines[l] = in + p.line_offset(b + l);
        for (int64_t j = 0; j < in_len; ++j)
          for (int64_t l = 0; l < count; ++l)
            for (int64_t part = 0; part < parts; ++part)
              stage[static_cast<size_t>(l * staged + j * parts + part)] = lines[l][j * p.stride + part * p.pair_stride];
      }
      const T* line = gather ? stage.data() + ((b - begin) % kGroup) * staged : in + p.line_offset(b);
      const int64_t stride = gather ? parts : p.stride, pair_stride = gather ? 1 : p.pair_stride;
      auto at = [&](int64_t j, int64_t part) { return static_cast<double>(line[j * stride + part * pair_stride]); };
      T* o = out + b * p.out_line();
      if (half && q.kind == ir::FftKind::kR2C) {
        // z_j = x_2j + i x_2j+1, Z = DFT_h(z); X_k = E_k + W_n^k O_k with E_k = (Z_k + conj(Z_h-k)) / 2,
        // O_k = -i (Z_k - conj(Z_h-k)) / 2 (the even and odd samples' transforms).
        for (int64_t j = 0; j < h; ++j) x[static_cast<size_t>(j)] = C(at(2 * j, 0), at(2 * j + 1, 0));
        plan.forward(x.data(), y.data(), scratch.data());
        for (int64_t k = 0; k <= h; ++k) {
          const C zk = y[static_cast<size_t>(k % h)], zm = std::conj(y[static_cast<size_t>((h - k) % h)]);
          const C e = 0.5 * (zk + zm), d = zk - zm, od(0.5 * d.imag(), -0.5 * d.real());
          const C xk = k < h ? e + mul(w[static_cast<size_t>(k)], od) : e - od;  // W_n^h = -1
          o[2 * k] = static_cast<T>(xk.real() * q.scale);
          o[2 * k + 1] = static_cast<T>(xk.imag() * q.scale);
        }
        continue;
      }
      if (half) {
        // c2r: E_k = (X_k + conj(X_h-k)) / 2, O_k = (X_k - conj(X_h-k)) conj(W_n^k) / 2, Z_k = E_k + i O_k;
        // the unnormalized inverse of Z holds x_2j / 2 + i x_2j+1 / 2 (bins 0 and h: real parts only).
        auto bin = [&](int64_t k) {
          C v(at(k, 0), at(k, 1));
          return k == 0 || k == h ? C(v.real(), 0) : v;
        };
        for (int64_t k = 0; k < h; ++k) {
          const C xk = bin(k), xm = std::conj(bin(h - k));
          const C e = 0.5 * (xk + xm), od = mul(0.5 * (xk - xm), std::conj(w[static_cast<size_t>(k)]));
          x[static_cast<size_t>(k)] = std::conj(C(e.real() - od.imag(), e.imag() + od.real()));
        }
        plan.forward(x.data(), y.data(), scratch.data());
        for (int64_t j = 0; j < h; ++j) {
          o[2 * j] = static_cast<T>(2 * y[static_cast<size_t>(j)].real() * q.scale);
          o[2 * j + 1] = static_cast<T>(-2 * y[static_cast<size_t>(j)].imag() * q.scale);
        }
        continue;
      }
      if (q.kind == ir::FftKind::kR2C) {
        for (int64_t j = 0; j < n; ++j) x[static_cast<size_t>(j)] = C(at(j, 0), 0);
      } else {
        for (int64_t j = 0; j < in_len; ++j) x[static_cast<size_t>(j)] = C(at(j, 0), at(j, 1));
        if (q.kind == ir::FftKind::kC2R) {
          // The Hermitian extension; bins 0 and n / 2 contribute their real parts only (numpy's irfft).
          for (int64_t j = in_len; j < n; ++j) x[static_cast<size_t>(j)] = std::conj(x[static_cast<size_t>(n - j)]);
          x[0] = C(x[0].real(), 0);
          if (n % 2 == 0) x[static_cast<size_t>(n / 2)] = C(x[static_cast<size_t>(n / 2)].real(), 0);
        }
        if (conj)
          for (C& v : x) v = std::conj(v);
      }
      plan.forward(x.data(), y.data(), scratch.data());
      // conj(DFT(conj x)) is the inverse; a c2r keeps the real part, which conjugation leaves alone.
      const double im_sign = conj ? -q.scale : q.scale;
      if (q.complex_output()) {
        for (int64_t k = 0; k < out_len; ++k) {
          o[2 * k] = static_cast<T>(y[static_cast<size_t>(k)].real() * q.scale);
          o[2 * k + 1] = static_cast<T>(y[static_cast<size_t>(k)].imag() * im_sign);
        }
      } else {
        for (int64_t k = 0; k < out_len; ++k) o[k] = static_cast<T>(y[static_cast<size_t>(k)].real() * q.scale);
      }
    }
  });
}

}  // namespace

void run(const ir::FftProblem& p) {
  if (p.batch == 0 || p.params.n == 0) return;
  std::shared_ptr<const Plan> plan = plan_for(halved(p.params) ? p.params.n / 2 : p.params.n);
  if (p.dtype == DType::Float32) return run_typed<float>(p, *plan);
  run_typed<double>(p, *plan);
}

std::string describe(const ir::FftParams& q) {
  if (halved(q)) return "a complex transform of n / 2, " + plan_for(q.n / 2)->describe();
  return plan_for(q.n)->describe();
}

}  // namespace lf::backend::fft
