// Every public op's integer parameters at their extremes (issue 50): with small valid operands and
// one parameter set to 0, +-1, +-2, 3, +-2^31, +-2^62, INT64_MAX or INT64_MIN, an op either throws
// an lf::Error that names it, or returns tensors of a valid shape; those small enough to compute
// are computed twice fused, with the same bits, and unfused, with the same integers and floats
// within a few ulps (a GPU's fused kernels may contract a * b + c). Never a crash, a hang, a foreign
// exception or a wrapped size (CI runs this under AddressSanitizer and UBSan, where a signed
// overflow left in an op's parameter arithmetic fails it).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "frontend/test_util.h"
#include "runtime/checked.h"

namespace {

using lf::DType;
using lf::Tensor;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
const std::vector<int64_t> kValues = {0, 1, -1, 2, -2, 3, 1LL << 31, -(1LL << 31), 1LL << 62, -(1LL << 62), kMax, kMin};

// Results past this many bytes are only checked for a valid shape, not computed.
constexpr int64_t kComputeBytes = int64_t{1} << 24;

using Op = std::function<std::vector<Tensor>(int64_t)>;

struct Row {
  const char* name;  // what its errors must name, as "lf::<name>"
  Op op;
};

Op one(std::function<Tensor(int64_t)> f) {
  return [f = std::move(f)](int64_t v) { return std::vector<Tensor>{f(v)}; };
}
Op pair(std::function<std::pair<Tensor, Tensor>(int64_t)> f) {
  return [f = std::move(f)](int64_t v) {
    auto [a, b] = f(v);
    return std::vector<Tensor>{a, b};
  };
}

// An int64 index tensor of n copies of `value` (exact: full() takes a double).
Tensor index_of(int64_t value, int64_t n) {
  return lf::from_vector(std::vector<int64_t>(static_cast<size_t>(n), value), {n});
}

// A tensor's values in a form that keeps every bit: integers as int64, the rest as float64.
std::vector<uint64_t> bits(const Tensor& t) {
  std::vector<uint64_t> out;
  if (lf::is_floating(t.dtype())) {
    for (double d : lf::cast(t, DType::Float64).to_vector<double>()) {
      uint64_t u;
      std::memcpy(&u, &d, sizeof u);
      out.push_back(u);
    }
  } else {
    for (int64_t i : lf::cast(t, DType::Int64).to_vector<int64_t>()) out.push_back(static_cast<uint64_t>(i));
  }
  return out;
}

struct Outcome {
  bool threw = false;
  std::string message;
  std::vector<std::vector<uint64_t>> values;  // empty for a result too big to compute
  std::vector<lf::Shape> shapes;
  std::vector<bool> floating;  // per result
};

Outcome run(const Row& row, int64_t v, bool fusion) {
  lf::set_fusion_enabled(fusion);
  lf::manual_seed(7);  // randint draws the same numbers in both runs
  Outcome o;
  try {
    std::vector<Tensor> results = row.op(v);
    int64_t bytes = 0;
    for (const Tensor& t : results) {
      EXPECT_TRUE(t.defined());
      auto n = lf::rt::numel(t.shape());
      EXPECT_TRUE(n.has_value()) << lf::shape_str(t.shape());
      EXPECT_EQ(lf::rt::shape_problem(t.shape(), lf::dtype_size(t.dtype())), "");
      o.shapes.push_back(t.shape());
      // Each term fits int64 (shape_problem passed); the sum stops growing past the limit.
      if (n && bytes <= kComputeBytes) bytes += *n * static_cast<int64_t>(lf::dtype_size(t.dtype()));
    }
    if (bytes <= kComputeBytes)
      for (const Tensor& t : results) {
        o.values.push_back(bits(t));
        o.floating.push_back(lf::is_floating(t.dtype()));
      }
  } catch (const lf::Error& e) {
    o.threw = true;
    o.message = e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a foreign exception: " << e.what();
  }
  lf::set_fusion_enabled(true);
  return o;
}

// "" when a's values equal b's: integers exactly, floats within 1e-5 relative (NaN matches NaN).
std::string close(const Outcome& a, const Outcome& b) {
  if (a.values.size() != b.values.size()) return "a different number of results";
  for (size_t t = 0; t < a.values.size(); ++t) {
    if (a.values[t].size() != b.values[t].size()) return "result " + std::to_string(t) + ": different sizes";
    for (size_t i = 0; i < a.values[t].size(); ++i) {
      if (a.values[t][i] == b.values[t][i]) continue;
      if (!a.floating[t]) return "result " + std::to_string(t) + " element " + std::to_string(i);
      double x, y;
      std::memcpy(&x, &a.values[t][i], sizeof x);
      std::memcpy(&y, &b.values[t][i], sizeof y);
      if (!(std::fabs(x - y) <= 1e-5 * (std::fabs(y) + 1)))
        return "result " + std::to_string(t) + " element " + std::to_string(i) + ": " + std::to_string(x) + " against " +
               std::to_string(y);
    }
  }
  return "";
}

std::vector<Row> rows() {
  const Tensor x = lf::arange(0.0, 12).reshape({3, 4});
  const Tensor v = lf::arange(0.0, 5);
  const Tensor img = lf::rand({1, 2, 5, 5});
  const Tensor w = lf::rand({2, 2, 3, 3});
  const Tensor w1 = lf::rand({2, 2, 3});
  const Tensor seq = lf::rand({1, 2, 7});
  const Tensor labels = lf::from_vector(std::vector<int64_t>{0, 2, 1}, {3});
  const Tensor idx = lf::from_vector(std::vector<int64_t>{0, 1}, {2});
  const Tensor table = lf::rand({4, 3});
  std::vector<Row> r = {
      {"narrow", one([=](int64_t a) { return lf::narrow(x, 0, a, 1); })},
      {"narrow", one([=](int64_t a) { return lf::narrow(x, 1, 0, a); })},
      {"narrow", one([=](int64_t a) { return lf::narrow(x, a, 0, 1); })},
      {"select", one([=](int64_t a) { return lf::select(x, 0, a); })},
      {"select", one([=](int64_t a) { return lf::select(x, a, 0); })},
      {"diagonal", one([=](int64_t a) { return lf::diagonal(x, a); })},
      {"diagonal", one([=](int64_t a) { return lf::diagonal(x, 0, a, 1); })},
      {"diag", one([=](int64_t a) { return lf::diag(v, a); })},
      {"diag", one([=](int64_t a) { return lf::diag(x, a); })},
      {"diag_embed", one([=](int64_t a) { return lf::diag_embed(v, a); })},
      {"triu", one([=](int64_t a) { return lf::triu(x, a); })},
      {"tril", one([=](int64_t a) { return lf::tril(x, a); })},
      {"roll", one([=](int64_t a) { return lf::roll(x, {a}, {0}); })},
      {"roll", one([=](int64_t a) { return lf::roll(x, {a}); })},
      {"roll", one([=](int64_t a) { return lf::roll(x, {1}, {a}); })},
      {"repeat", one([=](int64_t a) { return lf::repeat(x, {a, 1}); })},
      {"tile", one([=](int64_t a) { return lf::tile(x, {1, a}); })},
      {"repeat_interleave", one([=](int64_t a) { return lf::repeat_interleave(x, a, 0); })},
      {"repeat_interleave", one([=](int64_t a) { return lf::repeat_interleave(x, 2, a); })},
      {"flip", one([=](int64_t a) { return lf::flip(x, {a}); })},
      {"movedim", one([=](int64_t a) { return lf::movedim(x, {a}, {0}); })},
      {"transpose", one([=](int64_t a) { return lf::transpose(x, a, 0); })},
      {"unsqueeze", one([=](int64_t a) { return lf::unsqueeze(x, a); })},
      {"squeeze", one([=](int64_t a) { return lf::squeeze(x, a); })},
      {"stack", one([=](int64_t a) { return lf::stack({x, x}, a); })},
      {"cat", one([=](int64_t a) { return lf::cat({x, x}, a); })},
      {"split", one([=](int64_t a) { return lf::split(x, a, 1).at(0); })},
      {"chunk", one([=](int64_t a) { return lf::chunk(x, a, 1).at(0); })},
      {"unbind", one([=](int64_t a) { return lf::unbind(x, a).at(0); })},
      {"pad", one([=](int64_t a) { return lf::pad(x, {a, 0}); })},
      {"pad", one([=](int64_t a) { return lf::pad(x, {1, 1, a, 0}, lf::PadMode::Reflect); })},
      {"sum", one([=](int64_t a) { return lf::sum(x, {a}); })},
      {"softmax", one([=](int64_t a) { return lf::softmax(x, a); })},
      {"argmax", one([=](int64_t a) { return lf::argmax(x, {a}); })},
      {"var", one([=](int64_t a) { return lf::var(x, {1}, false, a); })},
      {"std", one([=](int64_t a) { return lf::std(x, {}, false, a); })},
      {"cumsum", one([=](int64_t a) { return lf::cumsum(x, a); })},
      {"logcumsumexp", one([=](int64_t a) { return lf::logcumsumexp(x, a); })},
      {"cummax", pair([=](int64_t a) { return lf::cummax(x, a); })},
      {"sort", pair([=](int64_t a) { return lf::sort(x, a); })},
      {"topk", pair([=](int64_t a) { return lf::topk(x, a); })},
      {"topk", pair([=](int64_t a) { return lf::topk(x, 1, a); })},
      {"kthvalue", pair([=](int64_t a) { return lf::kthvalue(x, a); })},
      {"median", pair([=](int64_t a) { return lf::median(x, a); })},
      {"gather", one([=](int64_t a) { return lf::gather(x, a, lf::zeros({1, 1}, DType::Int64)); })},
      {"index_select", one([=](int64_t a) { return lf::index_select(x, a, idx); })},
      {"index_select", one([=](int64_t a) { return lf::index_select(x, 0, index_of(a, 1)); })},
      {"take", one([=](int64_t a) { return lf::take(x, index_of(a, 1)); })},
      {"embedding", one([=](int64_t a) { return lf::embedding(table, index_of(a, 2)); })},
      {"scatter", one([=](int64_t a) { return lf::scatter(x, a, lf::zeros({1, 1}, DType::Int64), 1.0); })},
      {"index_fill", one([=](int64_t a) { return lf::index_fill(x, a, idx, 7.0); })},
      {"one_hot", one([=](int64_t a) { return lf::one_hot(labels, a); })},
      {"bincount", one([=](int64_t a) { return lf::bincount(labels, {}, a); })},
      {"histc", one([=](int64_t a) { return lf::histc(v, a); })},
      {"eye", one([=](int64_t a) { return lf::eye(a, DType::Bool); })},
      {"eye", one([=](int64_t a) { return lf::eye(3, a); })},
      {"linspace", one([=](int64_t a) { return lf::linspace(0, 1, a); })},
      {"logspace", one([=](int64_t a) { return lf::logspace(0, 1, a); })},
      {"randint", one([=](int64_t a) { return lf::randint(0, a, {4}); })},
      {"randint", one([=](int64_t a) { return lf::randint(a, 0, {4}); })},
      {"tensordot", one([=](int64_t a) { return lf::tensordot(x, x, a); })},
      {"conv2d", one([=](int64_t a) { return lf::conv2d(img, w, {}, a); })},
      {"conv2d", one([=](int64_t a) { return lf::conv2d(img, w, {}, 1, a); })},
      {"conv2d", one([=](int64_t a) { return lf::conv2d(img, w, {}, 1, 0, a); })},
      {"conv2d", one([=](int64_t a) { return lf::conv2d(img, w, {}, 1, 0, 1, a); })},
      {"conv1d", one([=](int64_t a) { return lf::conv1d(seq, w1, {}, a); })},
      {"conv1d", one([=](int64_t a) { return lf::conv1d(seq, w1, {}, 1, a); })},
      {"conv_transpose2d", one([=](int64_t a) { return lf::conv_transpose2d(img, w, {}, a); })},
      {"conv_transpose2d", one([=](int64_t a) { return lf::conv_transpose2d(img, w, {}, 2, 0, a); })},
      {"max_pool2d", one([=](int64_t a) { return lf::max_pool2d(img, a); })},
      {"max_pool2d", one([=](int64_t a) { return lf::max_pool2d(img, 2, a); })},
      {"max_pool2d", one([=](int64_t a) { return lf::max_pool2d(img, 3, 1, a); })},
      {"avg_pool2d", one([=](int64_t a) { return lf::avg_pool2d(img, a); })},
      {"avg_pool2d", one([=](int64_t a) { return lf::avg_pool2d(img, 2, a); })},
      {"adaptive_avg_pool2d", one([=](int64_t a) { return lf::adaptive_avg_pool2d(img, a); })},
      {"interpolate", one([=](int64_t a) { return lf::interpolate(img, {a, 3}); })},
      {"interpolate", one([=](int64_t a) { return lf::interpolate(img, {3, a}, "bilinear"); })},
      {"group_norm", one([=](int64_t a) { return lf::group_norm(img, a); })},
  };
  return r;
}

TEST(ParamExtremes, EveryParameterAtItsExtremes) {
  int64_t errors = 0, computed = 0, shaped = 0;
  for (const Row& row : rows()) {
    for (int64_t v : kValues) {
      SCOPED_TRACE(std::string(row.name) + " with " + std::to_string(v));
      Outcome fused = run(row, v, true);
      Outcome again = run(row, v, true);
      Outcome unfused = run(row, v, false);
      EXPECT_EQ(fused.values, again.values) << "two fused runs differ";
      EXPECT_EQ(fused.threw, unfused.threw) << fused.message << unfused.message;
      if (fused.threw) {
        ++errors;
        EXPECT_NE(fused.message.find(std::string("lf::") + row.name), std::string::npos) << fused.message;
        continue;
      }
      EXPECT_EQ(fused.shapes, unfused.shapes);
      EXPECT_EQ(close(fused, unfused), "") << "fused and unfused differ";
      ++(fused.values.empty() ? shaped : computed);
    }
  }
  // Both outcomes occur often: the table is not all refusals, nor all accepted.
  EXPECT_GT(errors, 200);
  EXPECT_GT(computed, 200);
  std::printf("%lld refused, %lld computed, %lld shaped only\n", static_cast<long long>(errors),
              static_cast<long long>(computed), static_cast<long long>(shaped));
}

}  // namespace
