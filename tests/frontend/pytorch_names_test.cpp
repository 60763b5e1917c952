// PyTorch's conveniences (issue 52 item 4), each against the older form it stands for: an integer
// dim for a dims list, t() / mT() / T(), member elementwise ops, operator[] and index with
// lf::indexing's parts, arange's dtype rule, convolutions without a bias. The static_asserts keep
// the old forms compiling and the braced forms meaning what they meant.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "frontend/test_util.h"

namespace {

using lf::test::expect_error;

// 0..n-1 (+ 0.5 * sign pattern so that max/min/arg* have no ties) as float32 of `shape`.
lf::Tensor data(const lf::Shape& shape) {
  std::vector<float> v(static_cast<size_t>(lf::shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7) % 11) - 4.5f + 0.01f * static_cast<float>(i);
  return lf::from_vector(v, shape);
}

void expect_same(const lf::Tensor& got, const lf::Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < w.size(); ++i) {
    if (std::isnan(w[i]))
      EXPECT_TRUE(std::isnan(g[i])) << i;
    else
      EXPECT_DOUBLE_EQ(g[i], w[i]) << i;
  }
}

// ---- Which forms compile. A braced list never takes the one-dim template: sum({}) is "every
// dim", sum({1}) the list; bool is not a dim.
template <typename T>
concept SumOfInt = requires(T x) { x.sum(1); };
static_assert(SumOfInt<lf::Tensor>);
static_assert(requires(lf::Tensor x, int64_t d, size_t u, int i) {
  x.sum({});
  x.sum({1});
  x.sum({0, 1}, true);
  x.sum(d, true);
  x.sum(u);
  x.mean(i);
  x.var(1, true, 0);
  lf::sum(x, 1);
  lf::sum(x, {1});
  lf::sum(x, {});
  lf::mean(x, -1, true);
  lf::std(x, 1, false, 0);
  lf::logsumexp(x * 2, 1);
  lf::any(x > 0, 1);
  lf::norm(x, 2, 1);
  x.index({0, lf::indexing::Slice{1, 3}, lf::indexing::None, lf::indexing::Ellipsis, x});
  x[0];
  x[lf::indexing::Slice{1}];
  lf::conv2d(x, x, {}, 2, 1);
  lf::conv2d(x, x, 2, 1);
  lf::conv1d(x, x, {}, 2);
  lf::conv1d(x, x, 2);
  lf::conv_transpose2d(x, x, 2);
  lf::arange(5);
  lf::arange(0, 5, 1, lf::DType::Float32);
});
template <typename T>
concept SumOfBool = requires(T x) { x.sum(true); };
static_assert(!SumOfBool<lf::Tensor>);
template <typename T>
concept IndexOfBool = requires(T x) { x[true]; };
static_assert(!IndexOfBool<lf::Tensor>);

// ---- An integer dim.
TEST(PyTorchNames, IntegerDimEqualsTheOneDimList) {
  lf::Tensor x = data({3, 4, 5});
  for (int64_t d : {0, 1, 2, -1, -3}) {
    for (bool keep : {false, true}) {
      SCOPED_TRACE("dim " + std::to_string(d) + (keep ? " keepdim" : ""));
      expect_same(x.sum(d, keep), x.sum({d}, keep));
      expect_same(x.mean(d, keep), x.mean({d}, keep));
      expect_same(x.prod(d, keep), x.prod({d}, keep));
      expect_same(x.max(d, keep), x.max({d}, keep));
      expect_same(x.min(d, keep), x.min({d}, keep));
      expect_same(x.argmax(d, keep), x.argmax({d}, keep));
      expect_same(x.argmin(d, keep), x.argmin({d}, keep));
      expect_same(x.var(d, keep), x.var({d}, keep));
      expect_same(x.var(d, keep, 0), x.var({d}, keep, 0));
      expect_same(x.std(d, keep), x.std({d}, keep));
      expect_same(x.logsumexp(d, keep), x.logsumexp({d}, keep));
      expect_same((x > 0).any(d, keep), lf::any(x > 0, {d}, keep));
      expect_same((x > 0).all(d, keep), lf::all(x > 0, {d}, keep));
      expect_same(x.norm(1, d, keep), lf::norm(x, 1, {d}, keep));
      expect_same(lf::sum(x, d, keep), lf::sum(x, {d}, keep));
      expect_same(lf::mean(x, d, keep), lf::mean(x, {d}, keep));
      expect_same(lf::prod(x, d, keep), lf::prod(x, {d}, keep));
      expect_same(lf::max(x, d, keep), lf::max(x, {d}, keep));
      expect_same(lf::min(x, d, keep), lf::min(x, {d}, keep));
      expect_same(lf::argmax(x, d, keep), lf::argmax(x, {d}, keep));
      expect_same(lf::argmin(x, d, keep), lf::argmin(x, {d}, keep));
      expect_same(lf::var(x, d, keep, 0), lf::var(x, {d}, keep, 0));
      expect_same(lf::std(x, d, keep), lf::std(x, {d}, keep));
      expect_same(lf::logsumexp(x, d, keep), lf::logsumexp(x, {d}, keep));
      expect_same(lf::count_nonzero(x > 0, d, keep), lf::count_nonzero(x > 0, {d}, keep));
      expect_same(lf::norm(x, "fro", d, keep), lf::norm(x, "fro", {d}, keep));
      // Temporaries take the consuming forms.
      expect_same((x * 2).sum(d, keep), lf::sum(x * 2, {d}, keep));
      expect_same(lf::mean(x * 2, d, keep), lf::mean(x * 2, {d}, keep));
    }
  }
  EXPECT_EQ(x.sum(1).shape(), (lf::Shape{3, 5}));
  EXPECT_EQ(x.sum(1, true).shape(), (lf::Shape{3, 1, 5}));
  int i = 2;
  size_t u = 2;
  expect_same(x.sum(i), x.sum({2}));
  expect_same(x.sum(u), x.sum({2}));
  expect_same(x.flip(1), lf::flip(x, {1}));
}

TEST(PyTorchNames, BracedListsKeepTheirMeaning) {
  lf::Tensor x = data({3, 4});
  EXPECT_EQ(x.sum({}).shape(), lf::Shape{});  // every dim, not dim 0
  EXPECT_EQ(lf::sum(x, {}).shape(), lf::Shape{});
  EXPECT_EQ(x.sum({}, true).shape(), (lf::Shape{1, 1}));
  expect_same(x.sum({1}), x.sum(1));
  expect_same(x.sum({0, 1}), x.sum());
  expect_same(lf::argmax(x, {}), x.argmax());
}

TEST(PyTorchNames, IntegerDimErrorsNameTheOp) {
  lf::Tensor x = data({3, 4});
  expect_error([&] { x.sum(2); }, {"sum", "2"});
  expect_error([&] { lf::mean(x, -3); }, {"mean"});
}

// ---- Transposes.
TEST(PyTorchNames, TransposeForms) {
  lf::Tensor m = data({3, 4});
  expect_same(m.t(), lf::transpose(m, 0, 1));
  expect_same(m.mT(), lf::transpose(m, 0, 1));
  expect_same(m.T(), lf::transpose(m, 0, 1));
  expect_same((m * 2).t(), lf::transpose(m * 2, 0, 1));
  lf::Tensor v = data({5});
  expect_same(v.t(), v);  // 0-D and 1-D: as they are, like torch
  expect_same(v.T(), v);
  lf::Tensor s = lf::scalar(3);
  expect_same(s.t(), s);
  lf::Tensor b = data({2, 3, 4});
  expect_same(b.mT(), lf::transpose(b, -2, -1));
  expect_same(b.T(), lf::permute(b, {2, 1, 0}));
  expect_same((b + 1).mT(), lf::transpose(b + 1, 1, 2));
  expect_error([&] { b.t(); }, {"t", "at most 2 dims", "3", "mT()"});
  expect_error([&] { v.mT(); }, {"mT", "at least 2 dims", "1"});
}

// ---- Member forms of the elementwise ops, and a member for every unary row of the op table.
using Unary = std::function<lf::Tensor(const lf::Tensor&)>;
std::map<std::string, std::pair<Unary, Unary>> member_and_free() {
  return {
      {"neg", {[](const lf::Tensor& x) { return x.neg(); }, [](const lf::Tensor& x) { return lf::neg(x); }}},
      {"abs", {[](const lf::Tensor& x) { return x.abs(); }, [](const lf::Tensor& x) { return lf::abs(x); }}},
      {"exp", {[](const lf::Tensor& x) { return x.exp(); }, [](const lf::Tensor& x) { return lf::exp(x); }}},
      {"exp2", {[](const lf::Tensor& x) { return x.exp2(); }, [](const lf::Tensor& x) { return lf::exp2(x); }}},
      {"log", {[](const lf::Tensor& x) { return x.log(); }, [](const lf::Tensor& x) { return lf::log(x); }}},
      {"log2", {[](const lf::Tensor& x) { return x.log2(); }, [](const lf::Tensor& x) { return lf::log2(x); }}},
      {"log1p", {[](const lf::Tensor& x) { return x.log1p(); }, [](const lf::Tensor& x) { return lf::log1p(x); }}},
      {"expm1", {[](const lf::Tensor& x) { return x.expm1(); }, [](const lf::Tensor& x) { return lf::expm1(x); }}},
      {"sqrt", {[](const lf::Tensor& x) { return x.sqrt(); }, [](const lf::Tensor& x) { return lf::sqrt(x); }}},
      {"rsqrt", {[](const lf::Tensor& x) { return x.rsqrt(); }, [](const lf::Tensor& x) { return lf::rsqrt(x); }}},
      {"sin", {[](const lf::Tensor& x) { return x.sin(); }, [](const lf::Tensor& x) { return lf::sin(x); }}},
      {"cos", {[](const lf::Tensor& x) { return x.cos(); }, [](const lf::Tensor& x) { return lf::cos(x); }}},
      {"tan", {[](const lf::Tensor& x) { return x.tan(); }, [](const lf::Tensor& x) { return lf::tan(x); }}},
      {"asin", {[](const lf::Tensor& x) { return x.asin(); }, [](const lf::Tensor& x) { return lf::asin(x); }}},
      {"acos", {[](const lf::Tensor& x) { return x.acos(); }, [](const lf::Tensor& x) { return lf::acos(x); }}},
      {"atan", {[](const lf::Tensor& x) { return x.atan(); }, [](const lf::Tensor& x) { return lf::atan(x); }}},
      {"sinh", {[](const lf::Tensor& x) { return x.sinh(); }, [](const lf::Tensor& x) { return lf::sinh(x); }}},
      {"cosh", {[](const lf::Tensor& x) { return x.cosh(); }, [](const lf::Tensor& x) { return lf::cosh(x); }}},
      {"tanh", {[](const lf::Tensor& x) { return x.tanh(); }, [](const lf::Tensor& x) { return lf::tanh(x); }}},
      {"sigmoid", {[](const lf::Tensor& x) { return x.sigmoid(); }, [](const lf::Tensor& x) { return lf::sigmoid(x); }}},
      {"relu", {[](const lf::Tensor& x) { return x.relu(); }, [](const lf::Tensor& x) { return lf::relu(x); }}},
      {"gelu", {[](const lf::Tensor& x) { return x.gelu(); }, [](const lf::Tensor& x) { return lf::gelu(x); }}},
      {"gelu_tanh",
       {[](const lf::Tensor& x) { return x.gelu(true); }, [](const lf::Tensor& x) { return lf::gelu(x, true); }}},
      {"silu", {[](const lf::Tensor& x) { return x.silu(); }, [](const lf::Tensor& x) { return lf::silu(x); }}},
      {"hardswish",
       {[](const lf::Tensor& x) { return x.hardswish(); }, [](const lf::Tensor& x) { return lf::hardswish(x); }}},
      {"logit", {[](const lf::Tensor& x) { return x.logit(); }, [](const lf::Tensor& x) { return lf::logit(x); }}},
      {"erf", {[](const lf::Tensor& x) { return x.erf(); }, [](const lf::Tensor& x) { return lf::erf(x); }}},
      {"floor", {[](const lf::Tensor& x) { return x.floor(); }, [](const lf::Tensor& x) { return lf::floor(x); }}},
      {"ceil", {[](const lf::Tensor& x) { return x.ceil(); }, [](const lf::Tensor& x) { return lf::ceil(x); }}},
      {"round", {[](const lf::Tensor& x) { return x.round(); }, [](const lf::Tensor& x) { return lf::round(x); }}},
      {"sign", {[](const lf::Tensor& x) { return x.sign(); }, [](const lf::Tensor& x) { return lf::sign(x); }}},
      {"reciprocal",
       {[](const lf::Tensor& x) { return x.reciprocal(); }, [](const lf::Tensor& x) { return lf::reciprocal(x); }}},
      {"square", {[](const lf::Tensor& x) { return x.square(); }, [](const lf::Tensor& x) { return lf::square(x); }}},
      {"isnan", {[](const lf::Tensor& x) { return x.isnan(); }, [](const lf::Tensor& x) { return lf::isnan(x); }}},
      {"isinf", {[](const lf::Tensor& x) { return x.isinf(); }, [](const lf::Tensor& x) { return lf::isinf(x); }}},
      {"isfinite",
       {[](const lf::Tensor& x) { return x.isfinite(); }, [](const lf::Tensor& x) { return lf::isfinite(x); }}},
      {"logical_not",
       {[](const lf::Tensor& x) { return (x > 0).logical_not(); }, [](const lf::Tensor& x) { return !(x > 0); }}},
      {"bitwise_not",
       {[](const lf::Tensor& x) { return x.to(lf::DType::Int32).bitwise_not(); },
        [](const lf::Tensor& x) { return lf::bitwise_not(x.to(lf::DType::Int32)); }}},
      {"copy", {[](const lf::Tensor& x) { return x.contiguous(); }, [](const lf::Tensor& x) { return lf::contiguous(x); }}},
  };
}

std::vector<std::string> unary_rows() {
  std::vector<std::string> names;
#define LF_UNARY(Name, str, rule, expr, grad) names.push_back(str);
#include "codegen/ir/ops.inc"
  return names;
}

TEST(PyTorchNames, EveryUnaryOpOfTheTableHasAMember) {
  auto forms = member_and_free();
  std::vector<std::string> rows = unary_rows();
  ASSERT_GT(rows.size(), 30u);
  lf::Tensor x = lf::from_vector(std::vector<float>{0.1f, 0.25f, 0.5f, 0.75f, 0.9f, -0.3f}, {2, 3});
  for (const std::string& name : rows) {
    SCOPED_TRACE(name);
    auto it = forms.find(name);
    ASSERT_NE(it, forms.end()) << "the op table's unary op '" << name
                               << "' has no member form in lf::Tensor (add it, and here)";
    expect_same(it->second.first(x), it->second.second(x));
  }
  EXPECT_EQ(forms.size(), rows.size()) << "a member form here whose row left the op table";
}

TEST(PyTorchNames, BinaryMembers) {
  lf::Tensor a = data({2, 3}), b = data({3}) + 0.25;
  lf::Tensor p = lf::abs(a) + 0.5, ia = a.to(lf::DType::Int32), ib = b.to(lf::DType::Int32) + 7;
  expect_same(a.add(b), a + b);
  expect_same(a.sub(2), a - 2);
  expect_same(a.mul(b), a * b);
  expect_same(a.div(3), a / 3);
  expect_same(p.pow(2), lf::pow(p, 2));
  expect_same(p.pow(b), lf::pow(p, b));
  expect_same(a.maximum(b), lf::maximum(a, b));
  expect_same(a.minimum(b), lf::minimum(a, b));
  expect_same(a.atan2(b), lf::atan2(a, b));
  expect_same(a.remainder(b), lf::remainder(a, b));
  expect_same(a.fmod(1.5), lf::fmod(a, 1.5));
  expect_same(a.floor_divide(b), lf::floor_divide(a, b));
  expect_same(ia.bitwise_and(ib), ia & ib);
  expect_same(ia.bitwise_or(3), ia | 3);
  expect_same(ia.bitwise_xor(ib), ia ^ ib);
  expect_same(ib.bitwise_left_shift(2), ib << 2);
  expect_same(ib.bitwise_right_shift(1), ib >> 1);
  expect_same((a > 0).logical_and(b > 0), (a > 0) && (b > 0));
  expect_same((a > 0).logical_or(b > 0), (a > 0) || (b > 0));
  expect_same(a.eq(b), a == b);
  expect_same(a.ne(1), a != 1);
  expect_same(a.lt(b), a < b);
  expect_same(a.le(0), a <= 0);
  expect_same(a.gt(b), a > b);
  expect_same(a.ge(0), a >= 0);
  expect_same(a.clamp(-1, 2), lf::clamp(a, -1, 2));
  expect_same(a.clamp(std::nullopt, b), lf::clamp(a, std::nullopt, b));
  expect_same(a.clamp_min(0), lf::clamp_min(a, 0));
  expect_same(a.clamp_max(b), lf::clamp_max(a, b));
  expect_same(a.lerp(b, 0.25), lf::lerp(a, b, 0.25));
  expect_same(a.where(a > 0, b), lf::where(a > 0, a, b));
  expect_same(a.where(a > 0, 0), lf::where(a > 0, a, 0));
  expect_same(a.masked_fill(a > 0, 7), lf::masked_fill(a, a > 0, 7));
  expect_same(a.matmul(data({3, 2})), lf::matmul(a, data({3, 2})));
  expect_same(a.softmax(-1), lf::softmax(a, -1));
  expect_same(a.log_softmax(0), lf::log_softmax(a, 0));
  expect_same(a.cumsum(1), lf::cumsum(a, 1));
  expect_same(a.cumprod(0), lf::cumprod(a, 0));
  expect_same(a.relu().exp().sum(1), lf::sum(lf::exp(lf::relu(a)), {1}));  // they chain
  expect_same(a.select(1, 2), lf::select(a, 1, 2));
  expect_same(a.narrow(1, 1, 2), lf::narrow(a, 1, 1, 2));
  expect_same(data({3, 3}).diagonal(), lf::diagonal(data({3, 3})));
  expect_same(data({2, 3, 4}).movedim(0, 2), lf::movedim(data({2, 3, 4}), {0}, {2}));
}

// ---- operator[] and index.
TEST(PyTorchNames, Subscript) {
  using namespace lf::indexing;
  lf::Tensor x = data({4, 3, 5});
  expect_same(x[1], lf::select(x, 0, 1));
  expect_same(x[-1], lf::select(x, 0, 3));
  expect_same(x[2][1], lf::select(lf::select(x, 0, 2), 0, 1));
  expect_same(x[int64_t{0}], lf::select(x, 0, 0));
  expect_same(x[Slice{1, 3}], lf::slice(x, 0, 1, 3));
  expect_same(x[None], lf::unsqueeze(x, 0));
  lf::Tensor idx = lf::from_vector(std::vector<int64_t>{3, 0, 0}, {3});
  expect_same(x[idx], lf::index_select(x, 0, idx));
  expect_error([&] { x[4]; }, {"select"});
}

TEST(PyTorchNames, IndexWithSlicesIntegersNoneAndEllipsis) {
  using namespace lf::indexing;
  lf::Tensor x = data({4, 3, 5});
  expect_same(x.index({1, Slice{0, 3, 2}}), lf::index(x, lf::index_list(1, lf::slice(0, 3, 2))));
  expect_same(x.index({Slice{}, 2}), lf::select(x, 1, 2));
  expect_same(x.index({Slice{1}, Slice{0, 2}, Slice{1, 5, 3}}),
              lf::slice(lf::slice(lf::slice(x, 0, 1, INT64_MAX), 1, 0, 2), 2, 1, 5, 3));
  expect_same(x.index({Ellipsis, 0}), lf::select(x, 2, 0));
  expect_same(x.index({0, Ellipsis}), lf::select(x, 0, 0));
  expect_same(x.index({1, Ellipsis, 4}), lf::select(lf::select(x, 0, 1), 1, 4));
  expect_same(x.index({Ellipsis}), x);
  expect_same(x.index({}), x);
  EXPECT_EQ(x.index({None, 1, None, Ellipsis, None}).shape(), (lf::Shape{1, 1, 3, 5, 1}));
  expect_same(x.index({Slice{}, None, 2}), lf::unsqueeze(lf::select(x, 1, 2), 1));
  expect_same(x.index({Ellipsis, None}), lf::unsqueeze(x, -1));
  // Index tensors (and numpy's placement of their dims) as lf::index.
  lf::Tensor i = lf::from_vector(std::vector<int64_t>{2, 0}, {2});
  lf::Tensor j = lf::from_vector(std::vector<int32_t>{1, -1}, {2});
  expect_same(x.index({i, Slice{}, j}), lf::index(x, lf::index_list(i, lf::slice(0), j)));
  expect_same(x.index({Slice{}, i, j}), lf::index(x, lf::index_list(lf::slice(0), i, j)));
  expect_same(x.index({1, i}), lf::index(x, lf::index_list(1, i)));
  expect_same(x.index({Ellipsis, j}), lf::index_select(x, 2, j));
  // None before an index tensor: an unsqueezed dim, as numpy and PyTorch.
  EXPECT_EQ(x.index({None, i}).shape(), (lf::Shape{1, 2, 3, 5}));
  EXPECT_EQ(x.index({i, None, j}).shape(), (lf::Shape{2, 1, 5}));  // separated: B first
  // A bool mask covers its dims.
  lf::Tensor m = data({4, 3}) > 0;
  expect_same(x.index({m}), lf::index(x, {lf::Index(m)}));
  expect_same(x.index({m, Ellipsis}), lf::index(x, {lf::Index(m)}));
  lf::Tensor full = data({4, 3, 5}) > 1;
  expect_same(x[full], lf::masked_select(x, full));
  std::vector<TensorIndex> parts{1, Slice{0, 2}};
  expect_same(x.index(parts), x.index({1, Slice{0, 2}}));
}

TEST(PyTorchNames, IndexErrors) {
  using namespace lf::indexing;
  lf::Tensor x = data({4, 3});
  expect_error([&] { x.index({Ellipsis, 0, Ellipsis}); }, {"index", "at most one Ellipsis"});
  expect_error([&] { x.index({0, 1, 2}); }, {"index", "too many indices", "3", "2"});
  expect_error([&] { x.index({Ellipsis, 0, 0, 0}); }, {"too many indices"});
  expect_error([&] { x.index({lf::Tensor()}); }, {"index"});
}

// ---- arange: integers give int64 (torch.arange's rule), a floating bound float32.
TEST(PyTorchNames, ArangeDtypeRule) {
  EXPECT_EQ(lf::arange(0, 5).dtype(), lf::DType::Int64);
  EXPECT_EQ(lf::arange(5).dtype(), lf::DType::Int64);
  int64_t n = 4;
  EXPECT_EQ(lf::arange(1, n).dtype(), lf::DType::Int64);
  EXPECT_EQ(lf::arange(0, 10, 3).to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 6, 9}));
  EXPECT_EQ(lf::arange(5).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(lf::arange(0.0, 5).dtype(), lf::DType::Float32);
  EXPECT_EQ(lf::arange(0, 5.0).dtype(), lf::DType::Float32);
  EXPECT_EQ(lf::arange(5.0).dtype(), lf::DType::Float32);
  EXPECT_EQ(lf::arange(0, 1, 0.25).to_vector<float>(), (std::vector<float>{0, 0.25f, 0.5f, 0.75f}));
  EXPECT_EQ(lf::arange(0, 1, 0.25).dtype(), lf::DType::Float32);
  // An explicit dtype wins, as before.
  EXPECT_EQ(lf::arange(0, 5, 1, lf::DType::Float32).dtype(), lf::DType::Float32);
  EXPECT_EQ(lf::arange(0, 5, 1, lf::DType::Float64).dtype(), lf::DType::Float64);
  EXPECT_EQ(lf::arange(3, lf::DType::Int32).to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2}));
  expect_same(lf::arange(0, 6), lf::arange(0, 6, 1, lf::DType::Int64));
  expect_same(lf::arange(0, 6).to(lf::DType::Float32), lf::arange(0, 6, 1, lf::DType::Float32));
  expect_error([] { lf::arange(0, 5, 0); }, {"arange", "step"});
}

// ---- Convolutions without a bias.
TEST(PyTorchNames, ConvolutionWithoutBias) {
  lf::Tensor x = data({2, 3, 7, 6}), w = data({4, 3, 3, 3}) * 0.1;
  expect_same(lf::conv2d(x, w, 2), lf::conv2d(x, w, {}, 2));
  expect_same(lf::conv2d(x, w, 1, 1), lf::conv2d(x, w, {}, 1, 1));
  expect_same(lf::conv2d(x, w, {2, 1}, {1, 0}, 1, 1), lf::conv2d(x, w, {}, {2, 1}, {1, 0}, 1, 1));
  expect_same(lf::conv2d(x, w, 1, "same"), lf::conv2d(x, w, {}, 1, "same"));
  expect_same(lf::conv2d(x, w), lf::conv2d(x, w, {}));
  lf::Tensor x1 = data({2, 3, 9}), w1 = data({4, 3, 3}) * 0.1;
  expect_same(lf::conv1d(x1, w1, 2), lf::conv1d(x1, w1, {}, 2));
  expect_same(lf::conv1d(x1, w1, 1, 1, 2), lf::conv1d(x1, w1, {}, 1, 1, 2));
  expect_same(lf::conv1d(x1, w1, {}, 2), lf::conv1d(x1, w1, lf::Tensor(), 2));  // {} stays "no bias"
  lf::Tensor wt = data({3, 2, 3, 3}) * 0.1;
  expect_same(lf::conv_transpose2d(x, wt, 2), lf::conv_transpose2d(x, wt, {}, 2));
  expect_same(lf::conv_transpose2d(x, wt, 2, 1, 1), lf::conv_transpose2d(x, wt, {}, 2, 1, 1));
  lf::Tensor b = data({4});
  expect_same(lf::conv2d(x, w, b, 2), lf::conv2d(x, w, 2) + lf::reshape(b, {1, 4, 1, 1}));
}

}  // namespace
