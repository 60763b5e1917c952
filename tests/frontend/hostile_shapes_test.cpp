// Hostile sizes (issue 25): shape products, byte sizes, slice steps and arange counts past int64
// are an lf::Error naming the op, never a wrapped size, a crash or a hang; and a property test
// drives every op's shape rule with extreme sizes (it runs under UBSan in CI, where any signed
// overflow left in a shape rule fails it).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "frontend/test_util.h"
#include "runtime/checked.h"

namespace {

using lf::DType;
using lf::Shape;
using lf::Tensor;
using lf::test::expect_error;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

#define EXPECT_LF_ERROR(stmt, ...)                      \
  do {                                                  \
    SCOPED_TRACE(#stmt);                                \
    expect_error([&] { (void)(stmt); }, {__VA_ARGS__}); \
  } while (0)

TEST(HostileShapes, ShapeProductsOverflow) {  // issue 25, case 1
  EXPECT_LF_ERROR(lf::ones({1LL << 32, 1LL << 32}), "lf::ones", "[4294967296, 4294967296]", "int64");
  EXPECT_LF_ERROR(lf::ones({1LL << 31, 3, 1LL << 31}), "lf::ones", "int64");
  Tensor one = lf::ones({1, 1});
  EXPECT_LF_ERROR(one.expand({1LL << 40, 1LL << 40}), "lf::expand", "[1099511627776, 1099511627776]",
                  "float32[1, 1]");
  EXPECT_LF_ERROR(lf::ones({1, 1, 1}).expand({kMax, 2, 3}), "lf::expand", "9223372036854775807");
  EXPECT_LF_ERROR(lf::ones({1}).reshape({1LL << 40, 1LL << 40}), "lf::reshape", "int64");
  // A broadcast names the op the user called.
  EXPECT_LF_ERROR(lf::ones({1LL << 40, 1}) + lf::ones({1, 1LL << 40}), "lf::add", "broadcast");
  EXPECT_LF_ERROR(lf::matmul(lf::ones({1LL << 40, 1}), lf::ones({1, 1LL << 40})), "lf::matmul");
  EXPECT_LF_ERROR(lf::cat({lf::ones({1LL << 62}, DType::Bool), lf::ones({1LL << 62}, DType::Bool)}, 0), "lf::cat");
  EXPECT_LF_ERROR(lf::rand({1LL << 62, 4}), "lf::rand");
  EXPECT_LF_ERROR(lf::from_vector(std::vector<float>{1}, {1LL << 62, 1LL << 62}), "lf::from_vector");
  // Empty shapes count their non-zero sizes, so their strides fit too.
  EXPECT_LF_ERROR(lf::zeros({0, 1LL << 40, 1LL << 40}), "lf::zeros");
  // Big but representable: fine, and exact.
  EXPECT_EQ(lf::ones({1LL << 31, 1LL << 31}, DType::Bool).numel(), 1LL << 62);
  EXPECT_EQ(lf::zeros({0, 1LL << 40}).numel(), 0);
  EXPECT_EQ(lf::zeros({0, 1LL << 40}).sum().item<float>(), 0.0f);
  EXPECT_THROW(lf::shape_numel({1LL << 32, 1LL << 32}), lf::Error);
}

TEST(HostileShapes, ByteSizesOverflow) {  // issue 25, case 2
  // 2^62 float32 is 2^64 bytes: the size that wrapped to 0 and let kernels write past a tiny buffer.
  EXPECT_LF_ERROR(lf::zeros({1LL << 62}), "lf::zeros", "[4611686018427387904]", "bytes", "float32");
  Tensor x = lf::ones({2, 3});
  EXPECT_LF_ERROR(x.expand({1LL << 62, 2, 3}), "lf::expand", "elements");
  EXPECT_LF_ERROR(x.expand({1LL << 60, 2, 3}), "lf::expand", "bytes");
  EXPECT_LF_ERROR(lf::zeros({1LL << 61}, DType::Int64), "lf::zeros", "bytes");
  // Representable but not available: the allocation says so at the sync point (AddressSanitizer
  // aborts on a request past its own limit instead of failing it).
#ifndef __SANITIZE_ADDRESS__
  EXPECT_LF_ERROR(lf::zeros({1LL << 40}).to_vector<float>(), "memory");
#endif
}

TEST(HostileShapes, HugeSliceStep) {  // issue 25, case 3
  Tensor x = lf::arange(0.0, 6).reshape({2, 3});
  Tensor s = x.slice(1, 0, 3, kMax);
  EXPECT_EQ(s.shape(), (Shape{2, 1}));
  EXPECT_EQ(s.sum().item<float>(), 3.0f);
  std::ostringstream os;
  os << s.to(lf::Device::cpu());  // printed as a host tensor whatever the default device
  EXPECT_EQ(os.str(), "tensor([[0.],\n        [3.]])");
  Tensor t = x.slice(1, kMin, kMax, kMax);
  EXPECT_EQ(t.shape(), (Shape{2, 1}));
  EXPECT_EQ(t.sum().item<float>(), 3.0f);
  EXPECT_EQ(x.slice(1, 1, kMax, kMax - 1).to_vector<float>(), (std::vector<float>{1, 4}));
  EXPECT_EQ(x.slice(1, kMax, kMax, 1).numel(), 0);
  EXPECT_EQ(x.slice(1, kMin, kMin, 1).numel(), 0);
}

TEST(HostileShapes, ArangePastInt64) {  // issue 25, case 4
  EXPECT_LF_ERROR(lf::arange(0, 1e300), "lf::arange", "int64");
  EXPECT_LF_ERROR(lf::arange(0, 1e19, 1, DType::Int64), "lf::arange", "int64");
  EXPECT_LF_ERROR(lf::arange(-1e308, 1e308, 1), "lf::arange");
  EXPECT_LF_ERROR(lf::arange(0, 1e300, 1e-300), "lf::arange");
  EXPECT_LF_ERROR(lf::arange(0, 0x1p62), "lf::arange", "bytes");  // 2^62 float32
  EXPECT_LF_ERROR(lf::arange(0, 0x1p62, 1, DType::Float16), "lf::arange", "bytes");
  EXPECT_EQ(lf::arange(0, 0x1p61, 1, DType::Float16).numel(), 1LL << 61);
  EXPECT_EQ(lf::arange(0, 1e300, 1e290).numel(), 10000000000LL);
}

TEST(HostileShapes, EmptyHandleThrowsWhenPrinted) {  // issue 25, case 11 (second part)
  Tensor empty;
  std::ostringstream os;
  EXPECT_LF_ERROR(os << empty, "lf::print", "empty Tensor");
}

TEST(Checked, Arithmetic) {
  EXPECT_EQ(lf::rt::mul(1LL << 31, 1LL << 31), std::optional<int64_t>(1LL << 62));
  EXPECT_FALSE(lf::rt::mul(1LL << 32, 1LL << 31));
  EXPECT_FALSE(lf::rt::mul(kMin, -1));
  EXPECT_FALSE(lf::rt::add(kMax, 1));
  EXPECT_FALSE(lf::rt::sub(kMin, 1));
  EXPECT_EQ(lf::rt::numel({0, kMax}), std::optional<int64_t>(0));
  EXPECT_FALSE(lf::rt::numel({0, kMax, 2}));
  EXPECT_FALSE(lf::rt::numel({-1}));
  EXPECT_EQ(lf::rt::shape_problem({1LL << 59}, 8), "");
  EXPECT_NE(lf::rt::shape_problem({1LL << 60}, 8).find("bytes"), std::string::npos);
  EXPECT_NE(lf::rt::shape_problem({2, -3}, 4).find("negative"), std::string::npos);
  EXPECT_THROW(lf::rt::checked_bytes("op", {1LL << 62}, 4), lf::Error);
  EXPECT_EQ(lf::rt::checked_bytes("op", {1LL << 20, 3}, 4), size_t{12} << 20);
  EXPECT_THROW(lf::rt::checked_mul("op", "x", kMax, 2), lf::Error);
  EXPECT_THROW(lf::rt::checked_add("op", "x", kMax, 1), lf::Error);
}

// The property: for every op and every operand shape made of extreme sizes, the op either throws
// lf::Error naming itself, or returns a tensor whose shape is valid (no negative size; element
// count and byte size fit int64) and whose numel() is the exact product. Nothing is computed: the
// operands are pending generators that no sync point reads.
const std::vector<int64_t> kSizes = {0, 1, 2, 3, 1LL << 31, 1LL << 62, kMax, -1, -2, kMin};

std::vector<Shape> shapes() {
  std::vector<Shape> out{{}};
  for (int64_t a : kSizes) out.push_back({a});
  for (int64_t a : kSizes)
    for (int64_t b : kSizes) out.push_back({a, b});
  for (int64_t a : std::vector<int64_t>{0, 2, 1LL << 31, kMax})
    for (int64_t b : std::vector<int64_t>{1, 3, 1LL << 31})
      for (int64_t c : std::vector<int64_t>{0, 1, 1LL << 62, -1}) out.push_back({a, b, c});
  return out;
}

struct Checker {
  int64_t ok = 0, errors = 0;
  void check(const char* op, const std::function<Tensor()>& f) {
    try {
      Tensor t = f();
      ASSERT_TRUE(t.defined()) << op;
      auto n = lf::rt::numel(t.shape());
      ASSERT_TRUE(n.has_value()) << op << " returned shape " << lf::shape_str(t.shape());
      ASSERT_EQ(lf::rt::shape_problem(t.shape(), lf::dtype_size(t.dtype())), "") << op;
      ASSERT_EQ(t.numel(), *n) << op;
      ++ok;
    } catch (const lf::Error& e) {
      std::string msg = e.what();
      ASSERT_EQ(msg.rfind("lf::", 0), 0u) << op << ": " << msg;
      ++errors;
    } catch (const std::exception& e) {
      FAIL() << op << " threw a non-lf::Error: " << e.what();
    }
  }
};

TEST(HostileShapes, EveryShapeRuleWithExtremeSizes) {
  lf::reset_stats();
  Checker c;
  const std::vector<Shape> all = shapes();
  std::vector<Shape> valid;  // operands for the ops that take tensors
  for (const Shape& s : all) {
    c.check("zeros", [&] { return lf::zeros(s); });
    c.check("full", [&] { return lf::full(s, 2.0, DType::Int64); });
    c.check("ones", [&] { return lf::ones(s, DType::Bool); });
    c.check("rand", [&] { return lf::rand(s); });
    c.check("randn", [&] { return lf::randn(s, DType::Float16); });
    if (lf::rt::shape_problem(s, 1).empty()) valid.push_back(s);
  }
  for (double end : {0.0, 1.0, 0x1p31, 0x1p62, 0x1p63, 1e300})
    for (double step : {1.0, 0x1p-40, 1e-300, 0x1p62})
      for (DType d : {DType::Float16, DType::Int64}) c.check("arange", [&] { return lf::arange(0, end, step, d); });
  for (const Shape& xs : valid) {
    Tensor x = lf::ones(xs, DType::Bool);
    c.check("neg", [&] { return -lf::ones(xs, DType::Int32); });
    c.check("cast", [&] { return lf::cast(x, DType::Float32); });
    c.check("sum", [&] { return lf::sum(x); });
    c.check("sum", [&] { return lf::sum(x, {-1}, true); });
    c.check("argmax", [&] { return lf::argmax(lf::ones(xs, DType::Int32), {0}); });
    c.check("softmax", [&] { return lf::softmax(lf::ones(xs, DType::Float16), -1); });
    c.check("flatten", [&] { return lf::flatten(x); });
    c.check("transpose", [&] { return lf::transpose(x, 0, -1); });
    c.check("unsqueeze", [&] { return lf::unsqueeze(x, 0); });
    c.check("squeeze", [&] { return lf::squeeze(x, 0); });
    c.check("contiguous", [&] { return lf::contiguous(x); });
    // lf::linalg's packed results stack blocks as large as the input's dims (svd's U, S and Vh:
    // m + 1 + n rows); pinv, matrix_rank and cond are composites over them.
    if (lf::rt::shape_problem(xs, 8).empty()) {
      Tensor f = lf::ones(xs, DType::Float64);
      for (const char* mode : {"reduced", "complete", "r"})
        c.check("linalg.qr", [&] { return lf::linalg::qr(f, mode).R; });
      c.check("linalg.svd", [&] { return lf::linalg::svd(f).Vh; });
      c.check("linalg.svd", [&] { return lf::linalg::svd(f, false).U; });
      c.check("linalg.svdvals", [&] { return lf::linalg::svdvals(f); });
      c.check("linalg.lstsq", [&] { return lf::linalg::lstsq(f, f, std::nullopt, "gelsd").solution; });
      c.check("linalg.pinv", [&] { return lf::linalg::pinv(f); });
      c.check("linalg.matrix_rank", [&] { return lf::linalg::matrix_rank(f); });
      c.check("linalg.cond", [&] { return lf::linalg::cond(f); });
      c.check("linalg.lu_factor", [&] { return lf::linalg::lu_factor(f).LU; });
      c.check("linalg.eigh", [&] { return lf::linalg::eigh(f).eigenvectors; });
    }
    for (int64_t a : kSizes) {
      c.check("slice", [&] { return lf::slice(x, 0, a, kMax, 1); });
      c.check("slice", [&] { return lf::slice(x, -1, kMin, a, 2); });
      for (int64_t step : std::vector<int64_t>{1, 3, 1LL << 62, kMax, 0, -1})
        c.check("slice", [&] { return lf::slice(x, 0, a, kMax, step); });
    }
    for (const Shape& ys : all) {
      c.check("reshape", [&] { return lf::reshape(x, ys); });
      c.check("expand", [&] { return lf::expand(x, ys); });
      if (lf::rt::shape_problem(ys, 1).empty()) {
        Tensor y = lf::ones(ys, DType::Bool);
        c.check("or", [&] { return x || y; });
        c.check("where", [&] { return lf::where(x, y, lf::ones(xs, DType::Int32)); });
        c.check("add", [&] { return lf::ones(xs, DType::Int64) + lf::ones(ys, DType::Int64); });
        c.check("matmul", [&] { return lf::matmul(lf::ones(xs, DType::Float16), lf::ones(ys, DType::Float16)); });
        c.check("cat", [&] { return lf::cat({x, y}, 0); });
      }
    }
    Shape minus = xs;
    if (!minus.empty()) minus[0] = -1;
    c.check("reshape", [&] { return lf::reshape(x, minus); });
    c.check("expand", [&] { return lf::expand(x, minus); });
  }
  EXPECT_GT(c.ok, 1000);
  EXPECT_GT(c.errors, 1000);
  EXPECT_EQ(lf::cache_stats().flushes, 0) << "a shape rule ran a computation";
}

}  // namespace

namespace {

// Issue 25, case 8: a view of a value no handle holds computes only what its consumer reads.
// bytes_moved counts the bytes every kernel wrote, and the whole of every buffer it read from:
// storing the whole producer first would add it twice (written, then read) and a kernel.
TEST(ViewsOfPendingValues, SliceOfAGeneratorComputesOnlyTheSlice) {
  lf::reset_stats();
  constexpr int64_t kN = 1 << 22;
  EXPECT_EQ(lf::arange(0, kN).slice(0, 5, 6).item<float>(), 5.0f);
  EXPECT_LT(lf::cache_stats().bytes_moved, 1024u) << "the whole arange was stored";
  lf::reset_stats();
  EXPECT_EQ(lf::slice(lf::arange(0, kN), 0, kN - 2, kN, 1).sum().item<float>(), 2.0f * kN - 3);
  EXPECT_LT(lf::cache_stats().bytes_moved, 1024u);
}

TEST(ViewsOfPendingValues, ViewsOfElementwiseValuesAreIndexMath) {
  constexpr int64_t kRows = 1 << 16;
  Tensor m = lf::from_vector(std::vector<float>(kRows * 8, 1.5f), {kRows, 8});
  const uint64_t m_bytes = kRows * 8 * 4, out_bytes = kRows * 2 * 8;
  // The cast is read through a reshape: one kernel reads m and writes the sums.
  lf::reset_stats();
  Tensor s = lf::cast(m, DType::Int32).reshape({-1, 4}).sum({1});
  std::vector<int64_t> got = s.to_vector<int64_t>();
  ASSERT_EQ(got.size(), static_cast<size_t>(kRows * 2));
  EXPECT_EQ(got[0], 4);
  EXPECT_EQ(got.back(), 4);
  EXPECT_LE(lf::cache_stats().bytes_moved, m_bytes + out_bytes) << "the cast was stored";
  EXPECT_EQ(lf::cache_stats().kernels_launched, 1u);
  // A slice of an elementwise chain: only the sliced rows are computed.
  lf::reset_stats();
  Tensor row = (lf::exp(m * 0.0) + m).slice(0, 7, 8);
  EXPECT_EQ(row.to_vector<float>(), std::vector<float>(8, 2.5f));
  EXPECT_LE(lf::cache_stats().bytes_moved, m_bytes + 1024) << "the whole product was stored";
  EXPECT_EQ(lf::cache_stats().kernels_launched, 1u);
  // A held view of an unheld elementwise value, transposed and sliced, read by a reduction.
  lf::reset_stats();
  Tensor t = (m * 2).transpose(0, 1).slice(1, 0, 4);
  EXPECT_EQ(t.sum().item<float>(), 8 * 4 * 3.0f);
  EXPECT_LE(lf::cache_stats().bytes_moved, m_bytes + 1024) << "the whole product was stored";
  EXPECT_EQ(lf::cache_stats().kernels_launched, 1u);  // the held view and its sum, one kernel
  // Values held by a handle are stored as before, and read through the view.
  Tensor held = m * 3;
  EXPECT_EQ(held.slice(0, 1, 2).sum().item<float>(), 8 * 4.5f);
  EXPECT_TRUE(held.is_materialized());
}

}  // namespace

namespace {

// Hostile input, round two (item 12): a huge output_size is an lf::Error naming the op, not
// std::bad_alloc or std::length_error.
TEST(HostileShapes, AdaptiveMaxPoolHugeOutputSize) {
  Tensor x = lf::ones({1, 1, 4, 4});
  expect_error([&] { lf::adaptive_max_pool2d(x, {int64_t{1} << 40, 1}); }, {"lf::adaptive_max_pool2d", "output_size"});
  expect_error([&] { lf::adaptive_max_pool2d(x, {INT64_MAX, 1}); }, {"lf::adaptive_max_pool2d"});
}

}  // namespace
