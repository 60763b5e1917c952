// Row kernels whose rows are columns of memory (kir::column_blocks; cpu/llvm/emit_columns.cpp):
// `sum(x, {0})` runs blocks of neighbouring rows in the innermost loop, and long reduced dims in
// chunks over every row (LaunchPlan::Mode::ColumnSplit). Which kernels take it, and values
// against the reference executor: every reduction and dtype, NaN, inf and ties, sizes around the
// blocks and the split, 3-D rows that cross the kept dim's end, views, fused and unfused.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "codegen/cpu/backend.h"
#include "codegen/fuse/fuser.h"
#include "codegen/fuse/lower.h"
#include "codegen/kir/split.h"
#include "codegen/cpu/kernel_of.h"
#include "codegen/test_util.h"

namespace {

using lf::DType;
using lf::Tensor;
using lf::test::expect_matches_reference;
using lf::test::kernel_of;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();


Tensor random(lf::Shape shape, uint64_t seed, bool specials = true) {
  lf::test::Rng rng(seed);
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(rng.range(-8, 8)) * 0.25f;  // ties
  if (specials && n > 10) {
    v[static_cast<size_t>(n / 3)] = kNaN;
    v[static_cast<size_t>(n / 2)] = kInf;
    v[static_cast<size_t>(n / 2 + 1)] = -kInf;
  }
  return lf::from_vector(v, std::move(shape));
}

TEST(ColumnBlocks, WhichKernels) {
  Tensor x = random({64, 48}, 1), g = random({64, 1}, 2);
  EXPECT_TRUE(lf::kir::column_blocks(kernel_of(lf::sum(x, {0}))));
  EXPECT_TRUE(lf::kir::column_blocks(kernel_of(lf::sum(x * g, {0}))));
  EXPECT_TRUE(lf::kir::column_blocks(kernel_of(lf::argmax(x, {0}))));
  EXPECT_TRUE(lf::kir::column_blocks(kernel_of(lf::sum(lf::transpose(x, 0, 1), {1}))));
  EXPECT_FALSE(lf::kir::column_blocks(kernel_of(lf::sum(x, {1}))));
  EXPECT_FALSE(lf::kir::column_blocks(kernel_of(lf::softmax(x, 0))));  // element outputs
  EXPECT_FALSE(lf::kir::column_blocks(kernel_of(lf::var(x, {0}))));     // a second level
}

// Long reduced dims split in chunks over every row; short ones and few elements run rows.
TEST(ColumnBlocks, LaunchPlans) {
  Tensor x = random({4096, 1000}, 3, false);
  lf::kir::Kernel k = kernel_of(lf::sum(x, {0}));
  lf::kir::LaunchArgs a;
  a.outer_rank = 1;
  a.sizes = {1000, 4096};
  auto plan = lf::cpu::plan_launch(k, a, true, 2, true);
  EXPECT_EQ(plan.mode, lf::cpu::LaunchPlan::Mode::ColumnSplit);
  EXPECT_EQ(plan.per_row, 15);  // 1000 x 4096 / kColumnGrain
  EXPECT_EQ(lf::cpu::plan_launch(k, a, true, 7, true).per_row, 15);  // the same for any thread count
  a.sizes = {1000, 100};
  plan = lf::cpu::plan_launch(k, a, true, 2, true);
  EXPECT_EQ(plan.mode, lf::cpu::LaunchPlan::Mode::Rows);
  EXPECT_EQ(plan.align, lf::cpu::kColumnAlign);
}

TEST(ColumnBlocks, ValuesAgainstTheReference) {
  const std::vector<lf::Shape> shapes = {{5, 1}, {1, 17}, {3, 16}, {63, 17}, {100, 1000}, {7, 2049},
                                         {4096, 40}, {int64_t{1} << 17, 5}, {16384, 80}};  // the last two split
  uint64_t seed = 10;
  for (const lf::Shape& shape : shapes) {
    Tensor base = random(shape, ++seed);
    Tensor g = random({shape[0], 1}, ++seed, false);
    for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16, DType::Float16, DType::Int32, DType::Int64,
                     DType::Bool}) {
      Tensor x = lf::cast(base, dt);
      for (bool fused : {true, false}) {
        lf::test::FusionScope scope(fused);
        std::string at = std::string(lf::dtype_name(dt)) + lf::shape_str(shape) + (fused ? " fused" : " unfused");
        expect_matches_reference(lf::sum(x, {0}), shape[0], at + " sum");
        expect_matches_reference(lf::max(x, {0}), 1, at + " max");
        expect_matches_reference(lf::min(x, {0}), 1, at + " min");
        expect_matches_reference(lf::argmax(x, {0}), 1, at + " argmax");
        expect_matches_reference(lf::argmin(x, {0}), 1, at + " argmin");
        if (dt == DType::Bool) continue;
        expect_matches_reference(lf::sum(x * lf::cast(g, dt), {0}), shape[0], at + " sum(x * g)");
        if (!lf::is_floating(dt)) continue;
        expect_matches_reference(lf::mean(x, {0}, true) * 2 + 1, shape[0], at + " mean, an epilogue");
        expect_matches_reference(lf::prod(x * 0.01 + 1, {0}), shape[0], at + " prod");
        expect_matches_reference(lf::var(x, {0}), shape[0], at + " var (two levels: rows)");
      }
    }
  }
}

TEST(ColumnBlocks, ViewsAndDims) {
  Tensor x = random({30, 50, 40}, 40);
  expect_matches_reference(lf::sum(x, {1}), 50, "3-D, the middle dim");
  expect_matches_reference(lf::argmax(x, {1}), 1, "3-D argmax, the middle dim");
  expect_matches_reference(lf::sum(x, {0, 1}), 1500, "3-D, two outer dims");
  expect_matches_reference(lf::sum(lf::transpose(random({900, 300}, 41), 0, 1), {1}), 900, "a transposed input");
  expect_matches_reference(lf::sum(lf::slice(random({300, 90}, 42), 1, 0, 90, 3), {0}), 300, "a strided kept dim");
  expect_matches_reference(lf::sum(lf::zeros({0, 40}), {0}), 1, "no reduced rows");
  expect_matches_reference(lf::sum(lf::zeros({40, 0}), {0}), 1, "no kept rows");
  expect_matches_reference(lf::sum(lf::randn({5000, 70}), {0}), 5000, "a generated prologue");
}

// A row kernel walks its reduced dims, and the rows of one with per-row outputs only, in its
// input's memory order (lower.cpp order_row_dims): x.t().sum() is one dense run (it strode a
// row of x an element, 40x slower than x.sum()), a kept dim contiguous in memory makes column
// blocks. argmax / argmin keep the logical order of their reduced dims (the first of equal
// values); values as the reference's with ties, NaN and inf, permuted, flipped and size-1 dims.
TEST(ColumnBlocks, RowKernelsWalkTheirInputsMemoryOrder) {
  Tensor x = random({64, 48}, 50);
  lf::kir::Kernel full = kernel_of(lf::sum(lf::transpose(x, 0, 1)));
  EXPECT_EQ(full.inner_rank, 1) << "the transposed dims merge into one run";
  EXPECT_EQ(full.operands[0].strides.back(), lf::kir::StrideClass::Unit);
  Tensor x3 = random({16, 32, 24}, 51);
  EXPECT_TRUE(lf::kir::column_blocks(kernel_of(lf::sum(lf::transpose(x3, 1, 2), {0}))))
      << "kept dims in memory order: the contiguous one last";
  lf::kir::Kernel one = kernel_of(lf::max(lf::unsqueeze(lf::transpose(x, 0, 1), 0), {0}));
  EXPECT_EQ(one.operands[0].strides[static_cast<size_t>(one.outer_rank) - 1], lf::kir::StrideClass::Any)
      << "rows of one element keep their logical order (the output's)";
  EXPECT_EQ(kernel_of(lf::sum(lf::permute(x3, {2, 0, 1}), {0, 2})).inner_rank, 1)
      << "x3's last two dims, permuted apart, merge in memory order";
  for (bool fused : {true, false}) {
    lf::test::FusionScope scope(fused);
    const std::string at = fused ? " fused" : " unfused";
    Tensor t = lf::transpose(x, 0, 1);
    expect_matches_reference(lf::sum(t), 64 * 48, "sum(x.t())" + at);
    expect_matches_reference(lf::mean(t), 64 * 48, "mean(x.t())" + at);
    expect_matches_reference(lf::max(t), 1, "max(x.t())" + at);
    expect_matches_reference(lf::min(t), 1, "min(x.t())" + at);
    expect_matches_reference(lf::var(t), 64 * 48, "var(x.t())" + at);
    expect_matches_reference(lf::logsumexp(t, {0, 1}), 64 * 48, "logsumexp(x.t())" + at);
    expect_matches_reference(lf::prod(t * 0.01 + 1), 64 * 48, "prod(x.t())" + at);
    expect_matches_reference(lf::argmax(t), 1, "argmax(x.t()), ties" + at);
    expect_matches_reference(lf::argmin(t), 1, "argmin(x.t()), ties" + at);
    Tensor p = lf::permute(x3, {2, 0, 1});
    for (std::vector<int64_t> dims : std::vector<std::vector<int64_t>>{{0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}}) {
      std::string d = " over " + std::to_string(dims[0]) + (dims.size() > 1 ? "," + std::to_string(dims[1]) : "");
      int64_t len = 1;
      for (int64_t k : dims) len *= p.shape()[static_cast<size_t>(k)];
      expect_matches_reference(lf::sum(p, dims), len, "sum(permuted)" + d + at);
      expect_matches_reference(lf::max(p, dims), 1, "max(permuted)" + d + at);
      expect_matches_reference(lf::var(p, dims), len, "var(permuted)" + d + at);
      expect_matches_reference(lf::softmax(p, dims[0]), len, "softmax(permuted)" + d + at);
      if (dims.size() == 1) expect_matches_reference(lf::argmax(p, dims), 1, "argmax(permuted)" + d + at);
    }
    expect_matches_reference(lf::sum(lf::flip(t, {0, 1})), 64 * 48, "sum of a flipped x.t()" + at);
    expect_matches_reference(lf::sum(lf::unsqueeze(t, 1), {0, 2}), 64 * 48, "a size-1 dim between" + at);
    expect_matches_reference(lf::sum(lf::transpose(x3, 0, 2) * 2 + 1), 16 * 32 * 24, "a prologue" + at);
  }
}

// The pointwise kernels beside the column blocks (softmax(x.t(), 1)'s exp(x - max), written in
// logical order from a transposed x) walk tiles (lower.cpp tile_transposed): values as the
// reference's, with NaN and inf, sizes that tile and sizes that do not, broadcast row values,
// 3-D, fused and unfused.
TEST(ColumnBlocks, TransposedPointwiseTiles) {
  Tensor x = random({256, 512}, 70);
  Tensor t = lf::transpose(x, 0, 1);  // 512 x 256, unit stride along dim 0
  lf::kir::Kernel k = kernel_of(lf::exp(t) * 2);
  EXPECT_EQ(k.outer_rank + k.inner_rank, 4) << "split into (b_hi, a_hi, b_lo, a_lo)";
  EXPECT_EQ(kernel_of(lf::exp(lf::transpose(random({250, 512}, 71), 0, 1))).outer_rank + 1, 2) << "250 does not tile";
  for (bool fused : {true, false}) {
    lf::test::FusionScope scope(fused);
    const std::string at = fused ? " fused" : " unfused";
    expect_matches_reference(lf::exp(t) * 2 + 1, 1, "exp(x.t())" + at);
    expect_matches_reference(t - lf::max(t, {1}, true), 1, "x.t() - max" + at);
    expect_matches_reference(lf::softmax(t, 1), 256, "softmax(x.t(), 1)" + at);
    expect_matches_reference(lf::var(t, {1}), 256, "var(x.t(), {1})" + at);
    Tensor odd = lf::transpose(random({250, 520}, 72), 0, 1);
    expect_matches_reference(lf::exp(odd) + odd, 1, "sizes that do not tile" + at);
    Tensor t3 = lf::transpose(random({4, 128, 192}, 73), 1, 2);  // 4 x 192 x 128
    expect_matches_reference(lf::sigmoid(t3) * t3, 1, "3-D" + at);
    expect_matches_reference(lf::sigmoid(t3) + lf::transpose(t3, 1, 2).transpose(1, 2), 1, "two views" + at);
  }
}

}  // namespace
