// The products around einsum (issue 49: tensordot, outer, kron, cross, dot, vdot, trace, diag,
// diag_embed, trapezoid, cumulative_trapezoid, cdist) against float64 loops written here; their
// dtypes, size-0 and broadcast cases, errors, and gradients against central differences.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "frontend/autograd/gradcheck.h"
#include "frontend/einsum_util.h"

namespace lf::test {
namespace {

TEST(Tensordot, IntAndListForms) {
  Array a = random_array({2, 3, 4}, 21), b = random_array({3, 4, 5}, 22), c = random_array({4, 3, 5}, 23);
  expect_array(tensordot(tensor_of(a), tensor_of(b)), naive_einsum({"ijk", "jkl"}, "il", {a, b}));
  expect_array(tensordot(tensor_of(a), tensor_of(b), 0), naive_einsum({"ijk", "lmn"}, "ijklmn", {a, b}));
  expect_array(tensordot(tensor_of(a), tensor_of(c), 1), naive_einsum({"ijk", "klm"}, "ijlm", {a, c}));
  expect_array(tensordot(tensor_of(a), tensor_of(c), {1, 2}, {1, 0}), naive_einsum({"ijk", "kjl"}, "il", {a, c}));
  expect_array(tensordot(tensor_of(a), tensor_of(c), {-1, 1}, {0, -2}), naive_einsum({"ijk", "kjl"}, "il", {a, c}));
}

TEST(Tensordot, Errors) {
  Tensor a = zeros({2, 3}), b = zeros({3, 4});
  expect_error([&] { tensordot(a, b, 3); }, {"lf::tensordot", "dims must be in [0, 2], not 3", "float32[2, 3]"});
  expect_error([&] { tensordot(a, b, {0}, {0}); }, {"lf::tensordot", "dim 0 of a has 2, dim 0 of b has 3"});
  expect_error([&] { tensordot(a, b, {1, 1}, {0, 0}); }, {"lf::tensordot", "twice"});
  expect_error([&] { tensordot(a, b, {1}, {}); }, {"lf::tensordot", "differ in length"});
  expect_error([&] { tensordot(a > 0, b > 0, 1); }, {"lf::tensordot", "bool"});
}

TEST(Products, OuterDotVdotTrace) {
  Array a = random_array({4}, 31), b = random_array({3}, 32), c = random_array({4}, 33), m = random_array({3, 5}, 34);
  Array outer_ref{{4, 3}, {}};
  for (double x : a.v)
    for (double y : b.v) outer_ref.v.push_back(x * y);
  expect_array(outer(tensor_of(a), tensor_of(b)), outer_ref);
  double d = 0;
  for (size_t i = 0; i < 4; ++i) d += a.v[i] * c.v[i];
  expect_array(dot(tensor_of(a), tensor_of(c)), {{}, {d}});
  expect_array(vdot(tensor_of(a), tensor_of(c)), {{}, {d}});
  expect_array(dot(zeros({0}, DType::Float64), zeros({0}, DType::Float64)), {{}, {0}});
  double t = 0;
  for (int64_t i = 0; i < 3; ++i) t += m.v[static_cast<size_t>(i * 5 + i)];
  expect_array(trace(tensor_of(m)), {{}, {t}});
  Tensor it = trace(cast(tensor_of(integer_array({3, 3}, 35)), DType::Int32));
  EXPECT_EQ(it.dtype(), DType::Int64);  // as PyTorch's sum
  Array im = integer_array({3, 3}, 35);
  expect_array(it, {{}, {im.v[0] + im.v[4] + im.v[8]}}, 0);
  Tensor id = dot(cast(tensor_of(im), DType::Int32).flatten(), cast(tensor_of(im), DType::Int32).flatten());
  EXPECT_EQ(id.dtype(), DType::Int32);
  double sq = 0;
  for (double x : im.v) sq += x * x;
  expect_array(id, {{}, {sq}}, 0);
  Tensor ob = outer(tensor_of(a) > 0, tensor_of(b) > 0);
  EXPECT_EQ(ob.dtype(), DType::Bool);
  expect_error([&] { outer(tensor_of(m), tensor_of(b)); }, {"lf::outer", "1-D", "float64[3, 5]"});
  expect_error([&] { dot(tensor_of(a), tensor_of(b)); }, {"lf::dot", "one size", "float64[4], float64[3]"});
  expect_error([&] { vdot(tensor_of(m), tensor_of(m)); }, {"lf::vdot", "1-D"});
  expect_error([&] { dot(tensor_of(a) > 0, tensor_of(a) > 0); }, {"lf::dot", "bool"});
  expect_error([&] { trace(tensor_of(a)); }, {"lf::trace", "2-D", "float64[4]"});
}

TEST(Products, Kron) {
  Array a = random_array({2, 3}, 41), b = random_array({4, 2}, 42), v = random_array({3}, 43);
  auto kron_ref = [](const Array& x, const Array& y) {
    size_t r = std::max(x.shape.size(), y.shape.size());
    Shape sx(r - x.shape.size(), 1), sy(r - y.shape.size(), 1);
    sx.insert(sx.end(), x.shape.begin(), x.shape.end());
    sy.insert(sy.end(), y.shape.begin(), y.shape.end());
    Array out;
    for (size_t d = 0; d < r; ++d) out.shape.push_back(sx[d] * sy[d]);
    for_each_index(out.shape, [&](const std::vector<int64_t>& idx) {
      std::vector<int64_t> ix, iy;
      for (size_t d = 0; d < r; ++d) ix.push_back(idx[d] / sy[d]), iy.push_back(idx[d] % sy[d]);
      out.v.push_back(at_index({sx, x.v}, ix) * at_index({sy, y.v}, iy));
    });
    return out;
  };
  expect_array(kron(tensor_of(a), tensor_of(b)), kron_ref(a, b));
  expect_array(kron(tensor_of(a), tensor_of(v)), kron_ref(a, v));
  expect_array(kron(tensor_of(v), tensor_of(a)), kron_ref(v, a));
  Array s{{}, {2.5}};
  expect_array(kron(tensor_of(s), tensor_of(v)), kron_ref(s, v));
  Array z = random_array({0, 2}, 44);
  expect_array(kron(tensor_of(z), tensor_of(a)), kron_ref(z, a));
  Tensor ki = kron(cast(tensor_of(integer_array({2, 2}, 45)), DType::Int32), tensor_of(b));
  EXPECT_EQ(ki.dtype(), DType::Float64);
  expect_array(ki, kron_ref(integer_array({2, 2}, 45), b));
}

TEST(Products, Cross) {
  auto cross_ref = [](const Array& x, const Array& y, int64_t dim) {
    Array out{x.shape, {}};  // same shapes here, dim non-negative
    for_each_index(x.shape, [&](const std::vector<int64_t>& idx) {
      auto comp = [&](const Array& t, int64_t k) {
        std::vector<int64_t> j = idx;
        j[static_cast<size_t>(dim)] = k;
        return at_index(t, j);
      };
      int64_t i = idx[static_cast<size_t>(dim)], i1 = (i + 1) % 3, i2 = (i + 2) % 3;
      out.v.push_back(comp(x, i1) * comp(y, i2) - comp(x, i2) * comp(y, i1));
    });
    return out;
  };
  Array a = random_array({4, 3}, 51), b = random_array({4, 3}, 52), c = random_array({3, 2, 2}, 53),
        d = random_array({3, 2, 2}, 54);
  expect_array(cross(tensor_of(a), tensor_of(b)), cross_ref(a, b, 1));
  expect_array(cross(tensor_of(c), tensor_of(d), 0), cross_ref(c, d, 0));
  expect_array(cross(tensor_of(c), tensor_of(d), -3), cross_ref(c, d, 0));
  // Batch dims broadcast (torch.linalg.cross of PyTorch 2).
  Array row{{1, 3}, {a.v[3], a.v[4], a.v[5]}};
  Array rows{{4, 3}, {}};
  for (int k = 0; k < 4; ++k) rows.v.insert(rows.v.end(), row.v.begin(), row.v.end());
  expect_array(cross(tensor_of(row), tensor_of(b)), cross_ref(rows, b, 1));
  expect_array(cross(reshape(tensor_of(row), {3}), tensor_of(b)), cross_ref(rows, b, 1));
  Array ia = integer_array({2, 3}, 55), ib = integer_array({2, 3}, 56);
  Tensor ci = cross(cast(tensor_of(ia), DType::Int64), cast(tensor_of(ib), DType::Int64));
  EXPECT_EQ(ci.dtype(), DType::Int64);
  expect_array(ci, cross_ref(ia, ib, 1), 0);
  expect_array(cross(transpose(tensor_of(c), 0, 2), transpose(tensor_of(d), 0, 2), -1),
               cross_ref({{2, 2, 3}, transpose(tensor_of(c), 0, 2).to_vector<double>()},
                         {{2, 2, 3}, transpose(tensor_of(d), 0, 2).to_vector<double>()}, 2));
  expect_error([&] { cross(zeros({2, 4}), zeros({2, 4})); }, {"lf::cross", "size 3 along dim 1", "float32[2, 4]"});
  expect_error([&] { cross(zeros({3, 2}), zeros({1, 2}), 0); }, {"lf::cross", "size 3"});
  expect_error([&] { cross(zeros({3}) > 0, zeros({3}) > 0); }, {"lf::cross", "bool"});
  expect_error([&] { cross(zeros({2, 3}), zeros({4, 3})); }, {"lf::cross"});
}

TEST(Products, DiagAndDiagEmbed) {
  Array v = random_array({3}, 61), m = random_array({3, 4}, 62), x = random_array({2, 3}, 63);
  for (int64_t k : {0, 1, 2, -1, -3}) {
    SCOPED_TRACE(k);
    int64_t n = 3 + std::abs(k);
    Array want{{n, n}, std::vector<double>(static_cast<size_t>(n * n), 0)};
    for (int64_t i = 0; i < 3; ++i)
      want.v[static_cast<size_t>((k >= 0 ? i : i - k) * n + (k >= 0 ? i + k : i))] = v.v[static_cast<size_t>(i)];
    expect_array(diag(tensor_of(v), k), want);
    Array d{{}, {}};
    for (int64_t i = 0; i < 3; ++i)
      if (i - std::min<int64_t>(k, 0) < 3 && i + std::max<int64_t>(k, 0) < 4)
        d.v.push_back(m.v[static_cast<size_t>((i - std::min<int64_t>(k, 0)) * 4 + i + std::max<int64_t>(k, 0))]);
    d.shape = {static_cast<int64_t>(d.v.size())};
    expect_array(diag(tensor_of(m), k), d);
  }
  expect_array(diag(zeros({0}, DType::Float64)), {{0, 0}, {}});
  // diag_embed: out's (dim1, dim2) planes hold x's last dim on the offset-th diagonal.
  struct Case {
    int64_t offset, dim1, dim2;
  };
  for (Case c : {Case{0, -2, -1}, Case{1, -2, -1}, Case{-2, -2, -1}, Case{1, 0, 2}, Case{-1, 2, 0}, Case{2, 1, 0}}) {
    SCOPED_TRACE(std::to_string(c.offset) + " " + std::to_string(c.dim1) + " " + std::to_string(c.dim2));
    Tensor got = diag_embed(tensor_of(x), c.offset, c.dim1, c.dim2);
    int64_t d1 = c.dim1 < 0 ? c.dim1 + 3 : c.dim1, d2 = c.dim2 < 0 ? c.dim2 + 3 : c.dim2;
    int64_t n = 3 + std::abs(c.offset);
    Array want{{}, {}};
    size_t other = 3 - static_cast<size_t>(d1) - static_cast<size_t>(d2);
    want.shape.assign(3, n);
    want.shape[other] = 2;
    for_each_index(want.shape, [&](const std::vector<int64_t>& idx) {
      int64_t p = idx[static_cast<size_t>(d1)], q = idx[static_cast<size_t>(d2)];
      want.v.push_back(q - p == c.offset ? x.v[static_cast<size_t>(idx[other] * 3 + (c.offset >= 0 ? p : q))] : 0);
    });
    expect_array(got, want);
  }
  Tensor nan_diag = diag_embed(from_vector(std::vector<double>{kNaN, kInf}, {2}));
  expect_close(nan_diag, {kNaN, 0, 0, kInf});  // where, not a multiply by an identity
  EXPECT_EQ(diag_embed(cast(tensor_of(x), DType::Int32)).dtype(), DType::Int32);
  EXPECT_EQ(diag_embed(tensor_of(x) > 0).dtype(), DType::Bool);
  expect_error([&] { diag(zeros({2, 2, 2})); }, {"lf::diag", "1-D or 2-D", "float32[2, 2, 2]"});
  expect_error([&] { diag_embed(scalar(1)); }, {"lf::diag_embed", "at least one dim"});
  expect_error([&] { diag_embed(zeros({2, 3}), 0, 1, -2); }, {"lf::diag_embed", "dim1 and dim2 must differ"});
}

TEST(Products, TrapezoidAndCumulative) {
  Array y = random_array({3, 5}, 71), xs = random_array({5}, 72), xb = random_array({3, 5}, 73);
  std::sort(xs.v.begin(), xs.v.end());
  auto ref = [&](const Array& yy, const std::function<double(int64_t, int64_t)>& dx, bool cumulative) {
    Array out{{3, cumulative ? 4 : 1}, {}};
    if (!cumulative) out.shape = {3};
    for (int64_t r = 0; r < 3; ++r) {
      double acc = 0;
      for (int64_t i = 1; i < 5; ++i) {
        acc += dx(r, i) * (yy.v[static_cast<size_t>(r * 5 + i)] + yy.v[static_cast<size_t>(r * 5 + i - 1)]) / 2;
        if (cumulative) out.v.push_back(acc);
      }
      if (!cumulative) out.v.push_back(acc);
    }
    return out;
  };
  auto spacing = [](double h) { return [h](int64_t, int64_t) { return h; }; };
  auto points = [&](int64_t, int64_t i) { return xs.v[static_cast<size_t>(i)] - xs.v[static_cast<size_t>(i - 1)]; };
  auto rows = [&](int64_t r, int64_t i) {
    return xb.v[static_cast<size_t>(r * 5 + i)] - xb.v[static_cast<size_t>(r * 5 + i - 1)];
  };
  expect_array(trapezoid(tensor_of(y)), ref(y, spacing(1), false));
  expect_array(trapezoid(tensor_of(y), 0.25), ref(y, spacing(0.25), false));
  expect_array(trapezoid(tensor_of(y), tensor_of(xs)), ref(y, points, false));
  expect_array(trapezoid(tensor_of(y), tensor_of(xb)), ref(y, rows, false));
  expect_array(cumulative_trapezoid(tensor_of(y)), ref(y, spacing(1), true));
  expect_array(cumulative_trapezoid(tensor_of(y), 0.25), ref(y, spacing(0.25), true));
  expect_array(cumulative_trapezoid(tensor_of(y), tensor_of(xs)), ref(y, points, true));
  expect_array(cumulative_trapezoid(tensor_of(y), tensor_of(xb)), ref(y, rows, true));
  // Along dim 0 of the transpose: the same numbers.
  Tensor yt = transpose(tensor_of(y), 0, 1);
  expect_array(trapezoid(yt, 0.25, 0), ref(y, spacing(0.25), false));
  expect_array(trapezoid(yt, tensor_of(xs), 0), ref(y, points, false));
  expect_array(transpose(cumulative_trapezoid(yt, tensor_of(xs), 0), 0, 1), ref(y, points, true));
  // Few samples: 0 (and an empty cumulative result).
  expect_array(trapezoid(zeros({2, 0}, DType::Float64)), {{2}, {0, 0}});
  expect_array(trapezoid(ones({2, 1}, DType::Float64)), {{2}, {0, 0}});
  expect_array(trapezoid(zeros({2, 0}, DType::Float64), zeros({0}, DType::Float64)), {{2}, {0, 0}});
  EXPECT_EQ(cumulative_trapezoid(zeros({2, 0})).shape(), (Shape{2, 0}));
  EXPECT_EQ(cumulative_trapezoid(zeros({2, 1})).shape(), (Shape{2, 0}));
  // Integers give float32.
  Tensor yi = from_vector(std::vector<int32_t>{1, 2, 3}, {3});
  EXPECT_EQ(trapezoid(yi).dtype(), DType::Float32);
  expect_close(trapezoid(yi), {4});
  expect_close(trapezoid(yi, from_vector(std::vector<int64_t>{0, 1, 3}, {3})), {6.5});
  expect_close(cumulative_trapezoid(yi), {1.5, 4});
  expect_close(cumulative_trapezoid(yi, from_vector(std::vector<int64_t>{0, 1, 3}, {3})), {1.5, 6.5});
  expect_error([&] { trapezoid(scalar(1)); }, {"lf::trapezoid", "at least one dim"});
  expect_error([&] { trapezoid(zeros({2, 3}), zeros({2})); }, {"lf::trapezoid", "one x for each sample"});
  expect_error([&] { trapezoid(zeros({2, 3}), zeros({2, 1})); }, {"lf::trapezoid", "float32[2, 3], float32[2, 1]"});
  expect_error([&] { cumulative_trapezoid(zeros({2, 3}), zeros({4})); }, {"lf::cumulative_trapezoid", "one x"});
  expect_error([&] { trapezoid(zeros({2, 3}), 1.0, 2); }, {"lf::trapezoid"});
  expect_error([&] { trapezoid(zeros({3}) > 0, zeros({3})); }, {"lf::trapezoid", "bool"});
}

TEST(Products, Cdist) {
  auto cdist_ref = [](const Array& x1, const Array& x2, double p) {
    // x1 [B, P, M], x2 [B, R, M] (B may be 1 in one of them).
    int64_t b = std::max(x1.shape[0], x2.shape[0]), np = x1.shape[1], nr = x2.shape[1], m = x1.shape[2];
    Array out{{b, np, nr}, {}};
    for (int64_t k = 0; k < b; ++k)
      for (int64_t i = 0; i < np; ++i)
        for (int64_t j = 0; j < nr; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < m; ++c) {
            double d = std::fabs(at_index(x1, {k, i, c}) - at_index(x2, {k, j, c}));
            if (p == 0)
              acc += d != 0;
            else if (std::isinf(p))
              acc = std::max(acc, d);
            else
              acc += std::pow(d, p);
          }
          out.v.push_back(p == 0 || std::isinf(p) ? acc : std::pow(acc, 1 / p));
        }
    return out;
  };
  Array a = random_array({2, 4, 3}, 81), b = random_array({2, 5, 3}, 82), c = random_array({1, 5, 3}, 83);
  for (double p : {0.0, 1.0, 2.0, 3.0, 0.5, kInf}) {
    SCOPED_TRACE(p);
    expect_array(cdist(tensor_of(a), tensor_of(b), p), cdist_ref(a, b, p));
    expect_array(cdist(tensor_of(a), tensor_of(c), p), cdist_ref(a, c, p));
    expect_array(cdist(tensor_of(a), reshape(tensor_of(c), {5, 3}), p), cdist_ref(a, c, p));
  }
  // Over 25 rows, p = 2 takes PyTorch's matmul form: equal to rounding.
  Array big1 = random_array({1, 30, 4}, 84), big2 = random_array({1, 7, 4}, 85);
  expect_array(cdist(tensor_of(big1), tensor_of(big2)), cdist_ref(big1, big2, 2), 1e-10);
  Tensor f32 = cdist(cast(tensor_of(a), DType::Float32), cast(tensor_of(b), DType::Float32));
  EXPECT_EQ(f32.dtype(), DType::Float32);
  expect_array(f32, cdist_ref(a, b, 2), 1e-5);
  // Identical rows: distance 0.
  expect_close(cdist(tensor_of(a), tensor_of(a)), cdist_ref(a, a, 2).v, 1e-12);
  // No coordinates, or no rows.
  expect_array(cdist(zeros({2, 0}, DType::Float64), zeros({3, 0}, DType::Float64), kInf),
               {{2, 3}, std::vector<double>(6, 0)});
  EXPECT_EQ(cdist(zeros({0, 3}), zeros({4, 3})).shape(), (Shape{0, 4}));
  expect_error([&] { cdist(zeros({3}), zeros({4, 3})); }, {"lf::cdist", "at least 2 dims", "float32[3]"});
  expect_error([&] { cdist(zeros({2, 3}), zeros({4, 2})); }, {"lf::cdist", "rows of one length"});
  expect_error([&] { cdist(zeros({2, 3}, DType::Int64), zeros({4, 3}, DType::Int64)); }, {"lf::cdist", "floating"});
  expect_error([&] { cdist(zeros({2, 3}), zeros({4, 3}), -1); }, {"lf::cdist", "p >= 0"});
}

// ---- Gradients: composed of differentiable ops, checked against float64 central differences.

TEST(ProductGradients, AgainstFiniteDifferences) {
  gradcheck("tensordot",
            [](const auto& x) {
              return tensordot(x[0], x[1], {1, 2}, {1, 0});
            },
            {{{2, 3, 4}}, {{4, 3, 2}}});
  gradcheck("tensordot 1", [](const auto& x) { return tensordot(x[0], x[1], 1); }, {{{2, 3}}, {{3, 2}}});
  gradcheck("kron", [](const auto& x) { return kron(x[0], x[1]); }, {{{2, 3}}, {{2, 2}}});
  gradcheck("cross", [](const auto& x) { return cross(x[0], x[1]); }, {{{2, 3}}, {{2, 3}}});
  gradcheck("cross dim 0 broadcast", [](const auto& x) { return cross(x[0], x[1], 0); }, {{{3, 2}}, {{3, 1}}});
  gradcheck("outer", [](const auto& x) { return outer(x[0], x[1]); }, {{{3}}, {{2}}});
  gradcheck("dot", [](const auto& x) { return dot(x[0], x[1]); }, {{{4}}, {{4}}});
  gradcheck("trace", [](const auto& x) { return trace(x[0]); }, {{{3, 4}}});
  gradcheck("diag_embed", [](const auto& x) { return diag_embed(x[0], 1, 0, 2); }, {{{2, 3}}});
  gradcheck("trapezoid dx", [](const auto& x) { return trapezoid(x[0], 0.5); }, {{{2, 5}}});
  gradcheck("trapezoid x", [](const auto& x) { return trapezoid(x[0], x[1]); }, {{{2, 5}}, {{5}}});
  gradcheck("trapezoid x rows", [](const auto& x) { return trapezoid(x[0], x[1], 0); }, {{{4, 2}}, {{4, 2}}});
  gradcheck("cumulative_trapezoid x", [](const auto& x) { return cumulative_trapezoid(x[0], x[1]); },
            {{{2, 5}}, {{5}}});
  for (double p : {1.0, 2.0, 3.0, kInf}) {
    gradcheck("cdist p=" + std::to_string(p), [p](const auto& x) { return cdist(x[0], x[1], p); },
              {{{2, 3, 4}}, {{1, 2, 4}}});
  }
  gradcheck("cdist matmul form", [](const auto& x) { return cdist(x[0], x[1]); }, {{{26, 2}}, {{3, 2}}});
  // A distance of 0 has gradient 0 (PyTorch's), not NaN.
  Tensor x = from_vector(std::vector<double>{1, 2, 3, 4}, {2, 2});
  std::vector<Tensor> g = grad(sum(cdist(x, x)), {x});
  for (double v : g[0].to_vector<double>()) EXPECT_TRUE(std::isfinite(v));
}

}  // namespace
}  // namespace lf::test
