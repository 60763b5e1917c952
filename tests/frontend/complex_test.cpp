// Complex dtypes (issue 49, item 1): every op that takes complex tensors against std::complex<double>
// (the C++ library numpy's and PyTorch's complex kernels follow), fused and unfused, on random
// inputs with broadcasts, views, size-0 and size-1 dims, NaN and inf.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <complex>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <lazyfuse/dlpack.h>
#include <lazyfuse/lazyfuse.h>

namespace {

using lf::DType;
using lf::Shape;
using lf::Tensor;
using C = std::complex<double>;

std::vector<C> random_values(size_t n, uint32_t seed, double scale = 2.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<C> v(n);
  for (C& z : v) z = C(u(rng), u(rng));
  return v;
}

Tensor make(const std::vector<C>& v, Shape shape, DType d = DType::Complex128) {
  Tensor z = lf::from_vector(v, std::move(shape));
  return d == DType::Complex128 ? z : z.to(d);
}

std::vector<C> read(const Tensor& z) { return z.to_vector<C>(); }

// Equal as numpy's allclose, NaN equal to NaN and infinities by sign, part by part.
void expect_close(const std::vector<C>& got, const std::vector<C>& want, double tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  auto close = [tol](double g, double w) {
    if (std::isnan(w)) return std::isnan(g);
    if (std::isinf(w)) return g == w;
    return std::fabs(g - w) <= tol * (1 + std::fabs(w));
  };
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(close(got[i].real(), want[i].real()) && close(got[i].imag(), want[i].imag()))
        << what << " [" << i << "]: got " << got[i] << ", want " << want[i];
}

// Runs `f` fused and unfused; both must match `want`.
void both_ways(const std::function<Tensor()>& f, const std::vector<C>& want, double tol, const std::string& what) {
  const bool saved = lf::fusion_enabled();
  for (bool fused : {true, false}) {
    lf::set_fusion_enabled(fused);
    expect_close(read(f()), want, tol, what + (fused ? " (fused)" : " (unfused)"));
  }
  lf::set_fusion_enabled(saved);
}

std::vector<C> map(const std::vector<C>& a, const std::function<C(C)>& f) {
  std::vector<C> out;
  for (C z : a) out.push_back(f(z));
  return out;
}

TEST(Complex, CreationAndReads) {
  Tensor re = lf::from_vector(std::vector<float>{1, -2, 3}, {3});
  Tensor im = lf::from_vector(std::vector<float>{0.5f, 4, -6}, {3});
  Tensor z = lf::complex(re, im);
  EXPECT_EQ(z.dtype(), DType::Complex64);
  EXPECT_EQ(z.shape(), Shape({3}));
  std::vector<std::complex<float>> v = z.to_vector<std::complex<float>>();
  EXPECT_EQ(v[1], std::complex<float>(-2, 4));
  EXPECT_EQ(lf::view_as_real(z).shape(), Shape({3, 2}));
  EXPECT_EQ(lf::view_as_real(z).to_vector<float>(), (std::vector<float>{1, 0.5f, -2, 4, 3, -6}));
  EXPECT_EQ(lf::real(z).to_vector<float>(), re.to_vector<float>());
  EXPECT_EQ(lf::imag(z).to_vector<float>(), im.to_vector<float>());
  EXPECT_EQ(z.select(0, 2).item<std::complex<float>>(), std::complex<float>(3, -6));
  Tensor r = lf::view_as_complex(lf::arange(0, 8, 1, DType::Float64).reshape({2, 2, 2}));
  EXPECT_EQ(r.dtype(), DType::Complex128);
  EXPECT_EQ(read(r), (std::vector<C>{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  // Creation in a complex dtype: the value's imaginary part is 0.
  EXPECT_EQ(read(lf::full({2}, 2.5, DType::Complex128)), (std::vector<C>{{2.5, 0}, {2.5, 0}}));
  EXPECT_EQ(read(lf::zeros({0, 3}, DType::Complex64)).size(), 0u);
  // Casts: real to complex, complex to complex, complex to real (the real part) and to bool.
  EXPECT_EQ(read(re.to(DType::Complex128)), (std::vector<C>{{1, 0}, {-2, 0}, {3, 0}}));
  EXPECT_EQ(z.to(DType::Complex128).dtype(), DType::Complex128);
  EXPECT_EQ(z.to(DType::Float64).to_vector<double>(), (std::vector<double>{1, -2, 3}));
  EXPECT_EQ(lf::complex(lf::zeros({2}), lf::from_vector(std::vector<float>{0, 1}, {2})).to(DType::Bool).to_vector<bool>(),
            (std::vector<bool>{false, true}));
  Tensor p = lf::polar(lf::full({1}, 2.0, DType::Float64), lf::full({1}, M_PI / 2, DType::Float64));
  expect_close(read(p), {C(0, 2)}, 1e-15, "polar");
}

TEST(Complex, Promotion) {
  Tensor z = make(random_values(3, 1), {3}, DType::Complex64);
  EXPECT_EQ((z + lf::ones({3}, DType::Float64)).dtype(), DType::Complex128);
  EXPECT_EQ((z + lf::ones({3}, DType::Float32)).dtype(), DType::Complex64);
  EXPECT_EQ((z * lf::ones({3}, DType::Int64)).dtype(), DType::Complex64);
  EXPECT_EQ((z * 2.5).dtype(), DType::Complex64);
  EXPECT_EQ((z + z.to(DType::Complex128)).dtype(), DType::Complex128);
  EXPECT_EQ((lf::ones({3}) * C(0, 1)).dtype(), DType::Complex64);
  EXPECT_EQ((lf::ones({3}, DType::Float64) * C(0, 1)).dtype(), DType::Complex128);
}

TEST(Complex, ArithmeticBroadcastsAgainstStdComplex) {
  std::vector<C> av = random_values(12, 2), bv = random_values(4, 3);
  av[5] = C(NAN, 1);
  bv[2] = C(0, 0);  // division by zero
  auto want = [&](const std::function<C(C, C)>& f) {
    std::vector<C> out;
    for (size_t i = 0; i < 3; ++i)
      for (size_t j = 0; j < 4; ++j) out.push_back(f(av[i * 4 + j], bv[j]));
    return out;
  };
  for (DType d : {DType::Complex128, DType::Complex64}) {
    const double tol = d == DType::Complex128 ? 1e-13 : 1e-5;
    auto a = [&] { return make(av, {3, 4}, d); };
    auto b = [&] { return make(bv, {4}, d); };
    both_ways([&] { return a() + b(); }, want([](C x, C y) { return x + y; }), tol, "add");
    both_ways([&] { return a() - b(); }, want([](C x, C y) { return x - y; }), tol, "sub");
    both_ways([&] { return a() * b(); }, want([](C x, C y) { return x * y; }), tol, "mul");
    // std::complex's division by 0 + 0i is inf or NaN by parts, like ours (Smith's): compare
    // the finite quotients and NaN-ness of the others.
    std::vector<C> q = want([](C x, C y) { return x / y; });
    std::vector<C> got = read(a() / b());
    for (size_t i = 0; i < q.size(); ++i) {
      if (i % 4 == 2) {
        EXPECT_FALSE(std::isfinite(got[i].real()) && std::isfinite(got[i].imag())) << "x / 0 at " << i;
        got[i] = q[i] = 0;
      }
    }
    expect_close(got, q, tol, "div");
    // With real operands and numbers.
    both_ways([&] { return a() * lf::real(b()); }, want([](C x, C y) { return x * y.real(); }), tol, "mul real");
    both_ways([&] { return a() / lf::real(b()); }, want([](C x, C y) { return x / y.real(); }), tol, "div real");
    both_ways([&] { return lf::real(b()) - a(); }, want([](C x, C y) { return y.real() - x; }), tol, "real - complex");
    both_ways([&] { return a() * 2.5 + 1; }, want([](C x, C) { return x * 2.5 + 1.0; }), tol, "numbers");
    both_ways([&] { return 1.0 / a(); }, want([](C x, C) { return 1.0 / x; }), tol, "number / complex");
    both_ways([&] { return a() * C(0, 1) - C(1, -2); }, want([](C x, C) { return x * C(0, 1) - C(1, -2); }), tol,
              "complex numbers");
    both_ways([&] { return -a(); }, want([](C x, C) { return -x; }), tol, "neg");
  }
  // Comparisons: == and != by both parts.
  Tensor a = make({C(1, 2), C(1, 3), C(NAN, 0)}, {3});
  Tensor b = make({C(1, 2), C(1, 2), C(NAN, 0)}, {3});
  EXPECT_EQ((a == b).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ((a != b).to_vector<bool>(), (std::vector<bool>{false, true, true}));
}

TEST(Complex, FunctionsAgainstStdComplex) {
  std::vector<C> v = random_values(40, 4, 3.0);
  v.push_back(C(0, 0));
  v.push_back(C(-4, 0));   // the branch cut of log and sqrt, from above (imag +0)
  v.push_back(C(1e300, 1e300));  // |z| overflows the naive sqrt(re^2 + im^2)
  v.push_back(C(INFINITY, NAN));
  v.push_back(C(NAN, 2));
  const Shape s = {static_cast<int64_t>(v.size())};
  auto z = [&] { return make(v, s); };
  auto real_of = [&](const Tensor& t) {
    std::vector<C> out;
    for (double x : t.to_vector<double>()) out.push_back(x);
    return out;
  };
  expect_close(real_of(lf::abs(z())), map(v, [](C x) { return C(std::abs(x)); }), 1e-14, "abs");
  std::vector<C> ang = map(v, [](C x) { return C(std::arg(x)); });
  expect_close(real_of(lf::angle(z())), ang, 1e-14, "angle");
  both_ways([&] { return lf::conj(z()); }, map(v, [](C x) { return std::conj(x); }), 0, "conj");
  // The rest on finite values of moderate size (std::complex's special cases at inf differ by
  // library; numpy's follow C99 Annex G, which these formulas do not spell out).
  std::vector<C> f(v.begin(), v.begin() + 42);
  const Shape fs = {static_cast<int64_t>(f.size())};
  auto w = [&] { return make(f, fs); };
  both_ways([&] { return lf::exp(w()); }, map(f, [](C x) { return std::exp(x); }), 1e-13, "exp");
  both_ways([&] { return lf::sqrt(w()); }, map(f, [](C x) { return std::sqrt(x); }), 1e-13, "sqrt");
  both_ways([&] { return lf::square(w()); }, map(f, [](C x) { return x * x; }), 1e-13, "square");
  both_ways([&] { return lf::sin(w()); }, map(f, [](C x) { return std::sin(x); }), 1e-13, "sin");
  both_ways([&] { return lf::cos(w()); }, map(f, [](C x) { return std::cos(x); }), 1e-13, "cos");
  both_ways([&] { return lf::pow(w(), 2.5); }, map(f, [](C x) { return std::pow(x, 2.5); }), 1e-12, "pow real");
  // log of 0 is -inf + 0i; the others finite.
  both_ways([&] { return lf::log(w()); }, map(f, [](C x) { return std::log(x); }), 1e-13, "log");
  std::vector<C> e = random_values(f.size(), 5, 1.0);
  e[40] = 0;  // 0^0 = 1
  both_ways([&] { return lf::pow(w(), make(e, fs)); },
            [&] {
              std::vector<C> out;
              for (size_t i = 0; i < f.size(); ++i) out.push_back(f[i] == C(0) ? C(e[i] == C(0) ? 1 : 0) : std::pow(f[i], e[i]));
              return out;
            }(),
            1e-12, "pow complex");
  EXPECT_EQ(lf::isnan(z()).to_vector<bool>().back(), true);
  EXPECT_EQ(lf::isinf(z()).to_vector<bool>()[v.size() - 2], true);
  EXPECT_EQ(lf::isfinite(z()).to_vector<bool>()[0], true);
  EXPECT_EQ(lf::isfinite(z()).to_vector<bool>()[v.size() - 2], false);
  // The real angle: 0 or pi, NaN kept.
  EXPECT_EQ(lf::angle(lf::from_vector(std::vector<double>{-1, 2, 0}, {3})).to_vector<double>(),
            (std::vector<double>{M_PI, 0, 0}));
}

TEST(Complex, Reductions) {
  std::vector<C> v = random_values(2 * 3 * 5, 6, 1.2);
  auto z = [&] { return make(v, {2, 3, 5}); };
  auto reduce = [&](bool prod, int dim) {
    std::vector<C> out;
    const int n[3] = {2, 3, 5};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 5; ++k) {
          int idx[3] = {i, j, k};
          if (idx[dim] != 0) continue;
          C acc = prod ? 1 : 0;
          for (int t = 0; t < n[dim]; ++t) {
            idx[dim] = t;
            C x = v[(idx[0] * 3 + idx[1]) * 5 + idx[2]];
            acc = prod ? acc * x : acc + x;
          }
          out.push_back(acc);
        }
    return out;
  };
  for (int d = 0; d < 3; ++d) {
    both_ways([&] { return z().sum(d); }, reduce(false, d), 1e-13, "sum " + std::to_string(d));
    both_ways([&] { return z().prod(d); }, reduce(true, d), 1e-13, "prod " + std::to_string(d));
  }
  C total = 0;
  for (C x : v) total += x;
  both_ways([&] { return z().sum(); }, {total}, 1e-13, "sum all");
  both_ways([&] { return z().mean(); }, {total / 30.0}, 1e-13, "mean all");
  EXPECT_EQ(z().sum(1, true).shape(), Shape({2, 1, 5}));
  EXPECT_EQ(z().prod(1, true).shape(), Shape({2, 1, 5}));
  // Over a dim of size 0: 0 and 1.
  Tensor e = lf::zeros({2, 0}, DType::Complex64);
  EXPECT_EQ(e.sum(1).to_vector<std::complex<float>>(), (std::vector<std::complex<float>>{0, 0}));
  EXPECT_EQ(e.prod(1).to_vector<std::complex<float>>(), (std::vector<std::complex<float>>{1, 1}));
}

TEST(Complex, Matmul) {
  const int m = 3, k = 4, n = 5;
  std::vector<C> av = random_values(2 * m * k, 7), bv = random_values(k * n, 8);
  std::vector<C> want;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        C acc = 0;
        for (int t = 0; t < k; ++t) acc += av[(b * m + i) * k + t] * bv[t * n + j];
        want.push_back(acc);
      }
  both_ways([&] { return lf::matmul(make(av, {2, m, k}), make(bv, {k, n})); }, want, 1e-13, "batched matmul");
  // A real right operand: its imaginary part 0.
  std::vector<C> bre;
  for (C x : bv) bre.push_back(x.real());
  Tensor real_b = lf::real(make(bv, {k, n}));
  std::vector<C> want_r;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        C acc = 0;
        for (int t = 0; t < k; ++t) acc += av[(b * m + i) * k + t] * bre[t * n + j];
        want_r.push_back(acc);
      }
  both_ways([&] { return lf::matmul(make(av, {2, m, k}), real_b); }, want_r, 1e-13, "complex @ real");
}

TEST(Complex, ProductsAndEinsum) {
  std::vector<C> av = random_values(3, 14), bv = random_values(3, 15);
  Tensor a = make(av, {3}), b = make(bv, {3});
  C dot = 0, vdot = 0;
  for (size_t i = 0; i < 3; ++i) dot += av[i] * bv[i], vdot += std::conj(av[i]) * bv[i];
  expect_close(read(lf::dot(a, b)), {dot}, 1e-14, "dot");
  expect_close(read(lf::vdot(a, b)), {vdot}, 1e-14, "vdot conjugates its first operand");
  std::vector<C> outer;
  for (C x : av)
    for (C y : bv) outer.push_back(x * y);
  expect_close(read(lf::outer(a, b)), outer, 1e-14, "outer");
  expect_close(read(lf::einsum("i,j->ij", {a, b})), outer, 1e-14, "einsum outer");
  expect_close(read(lf::einsum("i,i->", {a, b})), {dot}, 1e-14, "einsum dot");
}

TEST(Complex, ViewsAndShapeOps) {
  std::vector<C> v = random_values(6, 9);
  Tensor z = make(v, {2, 3});
  // transpose, slice with a step, select, reshape, expand, flip, cat, stack, index_select.
  EXPECT_EQ(read(z.t()), (std::vector<C>{v[0], v[3], v[1], v[4], v[2], v[5]}));
  EXPECT_EQ(read(z.slice(1, 0, 3, 2)), (std::vector<C>{v[0], v[2], v[3], v[5]}));
  EXPECT_EQ(read(z.select(0, 1)), (std::vector<C>{v[3], v[4], v[5]}));
  EXPECT_EQ(read(z.reshape({3, 2}).select(1, 1)), (std::vector<C>{v[1], v[3], v[5]}));
  EXPECT_EQ(read(z.select(1, 0).unsqueeze(1).expand({2, 2})), (std::vector<C>{v[0], v[0], v[3], v[3]}));
  EXPECT_EQ(read(lf::flip(z, {1}).select(0, 0)), (std::vector<C>{v[2], v[1], v[0]}));
  EXPECT_EQ(read(lf::cat({z, z.slice(0, 0, 1)}, 0)).size(), 9u);
  EXPECT_EQ(lf::stack({z, z}, 0).shape(), Shape({2, 2, 3}));
  EXPECT_EQ(read(lf::index_select(z, 1, lf::from_vector(std::vector<int64_t>{2, 0}, {2}))),
            (std::vector<C>{v[2], v[0], v[5], v[3]}));
  EXPECT_EQ(read(lf::where(lf::from_vector(std::vector<bool>{true, false, true}, {3}), z, lf::zeros({3}, DType::Complex128))),
            (std::vector<C>{v[0], 0, v[2], v[3], 0, v[5]}));
  // A size-1 dim, a size-0 dim, cat with a real tensor (promoted).
  EXPECT_EQ(z.slice(0, 0, 1).squeeze(0).shape(), Shape({3}));
  EXPECT_EQ(z.slice(1, 0, 0).numel(), 0);
  EXPECT_EQ(lf::cat({z, lf::ones({1, 3}, DType::Float64)}, 0).dtype(), DType::Complex128);
  // Pointers: a transposed view is not contiguous; contiguous() is, with complex strides.
  EXPECT_EQ(z.contiguous().strides(), Shape({3, 1}));
  Tensor zt = z.t().contiguous();
  EXPECT_TRUE(zt.is_contiguous());
  const auto* p = static_cast<const std::complex<double>*>(zt.data_ptr());
  EXPECT_EQ(p[1], v[3]);
}

TEST(Complex, Printing) {
  std::ostringstream os;
  os << lf::complex(lf::from_vector(std::vector<float>{1, -2.5f}, {2}), lf::from_vector(std::vector<float>{2, -1}, {2}));
  EXPECT_EQ(os.str(), "tensor([ 1.0000+2.j, -2.5000-1.j])");
  std::ostringstream os2;
  os2 << lf::full({}, 3.0, DType::Complex128);
  EXPECT_EQ(os2.str(), "tensor(3.+0.j, dtype=lf.complex128)");
}

TEST(Complex, Gradients) {
  // L = sum(|z|^2 * w.re) + sum(re(z * c)): dL/dz = 2 z w.re + conj(c), as PyTorch (dL/dre + i dL/dim).
  std::vector<C> zv = random_values(4, 10), cv = random_values(4, 11);
  Tensor z = make(zv, {4}), c = make(cv, {4});
  Tensor w = lf::from_vector(std::vector<double>{1, 2, 3, 4}, {4});
  Tensor loss = (lf::square(lf::abs(z)) * w).sum() + lf::real(z * c).sum();
  std::vector<Tensor> g = lf::grad(loss, {z});
  ASSERT_EQ(g[0].dtype(), DType::Complex128);
  std::vector<C> want;
  for (size_t i = 0; i < 4; ++i) want.push_back(2.0 * zv[i] * double(i + 1) + std::conj(cv[i]));
  expect_close(read(g[0]), want, 1e-12, "grad");
}

TEST(Complex, UnsupportedOpsNameThemselves) {
  Tensor z = make(random_values(3, 12), {3});
  auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const lf::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { lf::sigmoid(z); }).find("lf::sigmoid: is not defined for complex tensors"), std::string::npos)
      << message([&] { lf::sigmoid(z); });
  EXPECT_NE(message([&] { (void)(z < z); }).find("complex"), std::string::npos);
  EXPECT_NE(message([&] { z.max(); }).find("complex"), std::string::npos);
  EXPECT_NE(message([&] { lf::cumsum(z, 0); }).find("complex"), std::string::npos) << message([&] { lf::cumsum(z, 0); });
  EXPECT_NE(message([&] { z.to_vector<double>(); }).find("std::complex"), std::string::npos);
  EXPECT_NE(message([&] { lf::imag(lf::ones({2})); }).find("lf::imag"), std::string::npos);
  EXPECT_NE(message([&] { lf::view_as_complex(lf::ones({3})); }).find("size 2"), std::string::npos);
}

}  // namespace

namespace {

TEST(Complex, NpyDlpackAndFromBlob) {
  std::vector<C> v = random_values(6, 13);
  Tensor z = make(v, {2, 3});
  const std::string path = ::testing::TempDir() + "/lazyfuse_complex_test.npy";
  // A transposed view saves row-major; both precisions read back as they were written.
  lf::save(path, z.t());
  Tensor back = lf::load(path);
  EXPECT_EQ(back.dtype(), DType::Complex128);
  EXPECT_EQ(back.shape(), Shape({3, 2}));
  EXPECT_EQ(read(back), read(z.t()));
  lf::save(path, z.to(DType::Complex64));
  EXPECT_EQ(lf::load(path).dtype(), DType::Complex64);
  std::remove(path.c_str());
  // DLPack: out and back in, without a copy.
  DLManagedTensor* m = lf::to_dlpack(z);
  EXPECT_EQ(m->dl_tensor.dtype.code, kDLComplex);
  EXPECT_EQ(m->dl_tensor.dtype.bits, 128);
  Tensor in = lf::from_dlpack(m);
  EXPECT_EQ(in.dtype(), DType::Complex128);
  EXPECT_EQ(read(in * 2.0), map(v, [](C x) { return x * 2.0; }));
  // from_blob over std::complex memory, with complex strides (every other column).
  std::vector<std::complex<float>> host = {{1, 2}, {3, 4}, {5, 6}, {7, 8}};
  Tensor b = lf::from_blob(host.data(), {2}, {2}, DType::Complex64);
  EXPECT_EQ(b.to_vector<std::complex<float>>(), (std::vector<std::complex<float>>{{1, 2}, {5, 6}}));
}

}  // namespace
