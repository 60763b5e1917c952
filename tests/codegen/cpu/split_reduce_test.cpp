// Long CPU reductions split over threads (cpu::launch, SplitInfo): which kernels split, values
// against the reference executor around the split threshold and at odd sizes, NaN and integer
// semantics across chunk boundaries, two-level reductions (var, logsumexp), strided and
// multi-dim rows, and determinism (chunks depend on the sizes, not on the threads: child processes
// with other LAZYFUSE_NUM_THREADS give the same bits).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "codegen/cpu/backend.h"
#include "codegen/fuse/fuser.h"
#include "codegen/cpu/llvm/emit.h"
#include "codegen/fuse/lower.h"
#include "codegen/cpu/kernel_of.h"
#include "codegen/test_util.h"

namespace {

using lf::DType;
using lf::Tensor;
using lf::test::expect_matches_reference;
using lf::test::kernel_of;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
const int64_t kMin = lf::cpu::kSplitMinElements;


std::vector<float> data(int64_t n, uint64_t seed = 1) {
  lf::test::Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(rng.uniform(-2, 2));
  return v;
}

Tensor vec(const std::vector<float>& v) { return lf::from_vector(v, {static_cast<int64_t>(v.size())}); }

TEST(SplitReduce, WhichKernelsSplit) {
  Tensor x = vec(data(1000));
  EXPECT_TRUE(lf::kir::split_info(kernel_of(lf::sum(x * x))).splittable);
  EXPECT_TRUE(lf::kir::split_info(kernel_of(lf::argmax(x))).splittable);
  auto var = lf::kir::split_info(kernel_of(lf::var(x)));
  EXPECT_TRUE(var.splittable);
  EXPECT_EQ(var.levels, 2);  // the mean, then the deviations' sum and their squares' sum
  auto lse = lf::kir::split_info(kernel_of(lf::logsumexp(x, {0})));
  EXPECT_TRUE(lse.splittable);
  EXPECT_EQ(lse.levels, 2);
  // Element outputs need the whole row: softmax, x - mean.
  EXPECT_FALSE(lf::kir::split_info(kernel_of(lf::softmax(x, 0))).splittable);
  EXPECT_FALSE(lf::kir::split_info(kernel_of(x - lf::mean(x))).splittable);
  EXPECT_FALSE(lf::kir::split_info(kernel_of(x * 2)).splittable);
}

TEST(SplitReduce, FloatReductionsAroundTheThreshold) {
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{3}, kMin - 1, kMin, kMin + 1, 3 * kMin + 7, int64_t{1000003}}) {
    Tensor x = vec(data(n, static_cast<uint64_t>(n) + 3));
    std::string at = "n=" + std::to_string(n);
    expect_matches_reference(lf::sum(x), n, at + " sum");
    expect_matches_reference(lf::sum(x * x), n, at + " sum(x*x)");
    expect_matches_reference(lf::mean(x), n, at + " mean");
    expect_matches_reference(lf::prod(x * 0.001 + 1), n, at + " prod");
    if (n == 0) continue;  // max, min, argmax, argmin of nothing throw
    expect_matches_reference(lf::max(x), 1, at + " max");
    expect_matches_reference(lf::min(x), 1, at + " min");
    expect_matches_reference(lf::argmax(x), 1, at + " argmax");
    expect_matches_reference(lf::argmin(x), 1, at + " argmin");
    expect_matches_reference(lf::var(x), n, at + " var");
    expect_matches_reference(lf::std(x), n, at + " std");
    expect_matches_reference(lf::logsumexp(x, {0}), n, at + " logsumexp");
  }
}

TEST(SplitReduce, NaNAndInfAcrossChunks) {
  const int64_t n = 5 * kMin + 11;
  std::vector<float> v = data(n);
  v[static_cast<size_t>(3 * kMin + 5)] = kNaN;  // a later chunk
  v[static_cast<size_t>(4 * kMin + 1)] = kNaN;
  Tensor x = vec(v);
  EXPECT_TRUE(std::isnan(lf::sum(x).item<float>()));
  EXPECT_TRUE(std::isnan(lf::max(x).item<float>()));
  EXPECT_TRUE(std::isnan(lf::min(x).item<float>()));
  EXPECT_EQ(lf::argmax(x).item<int64_t>(), 3 * kMin + 5);  // the first NaN wins
  EXPECT_EQ(lf::argmin(x).item<int64_t>(), 3 * kMin + 5);
  std::vector<float> w = data(n);
  w[7] = kInf;
  w[static_cast<size_t>(2 * kMin)] = -kInf;
  Tensor y = vec(w);
  EXPECT_TRUE(std::isnan(lf::sum(y).item<float>()));  // inf + -inf
  EXPECT_EQ(lf::max(y).item<float>(), kInf);
  EXPECT_EQ(lf::min(y).item<float>(), -kInf);
  EXPECT_EQ(lf::argmax(y).item<int64_t>(), 7);
  EXPECT_EQ(lf::argmin(y).item<int64_t>(), 2 * kMin);
}

TEST(SplitReduce, FirstOfEqualExtremaAcrossChunks) {
  const int64_t n = 6 * kMin;
  std::vector<float> v(static_cast<size_t>(n), 1.0f);
  Tensor ones = vec(v);
  EXPECT_EQ(lf::argmax(ones).item<int64_t>(), 0);
  EXPECT_EQ(lf::argmin(ones).item<int64_t>(), 0);
  v[static_cast<size_t>(4 * kMin + 3)] = 5.0f;
  v[static_cast<size_t>(2 * kMin - 1)] = 5.0f;  // last element of an earlier chunk
  v[static_cast<size_t>(5 * kMin)] = -5.0f;
  v[static_cast<size_t>(kMin + 9)] = -5.0f;
  Tensor x = vec(v);
  EXPECT_EQ(lf::argmax(x).item<int64_t>(), 2 * kMin - 1);
  EXPECT_EQ(lf::argmin(x).item<int64_t>(), kMin + 9);
  // All -inf: index 0, as unsplit.
  Tensor neg = lf::full({n}, -kInf);
  EXPECT_EQ(lf::argmax(neg).item<int64_t>(), 0);
}

TEST(SplitReduce, IntegerAndBoolReductions) {
  const int64_t n = 4 * kMin + 3;
  std::vector<int64_t> big(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) big[static_cast<size_t>(i)] = (i % 3 == 0 ? 1 : -1) * (int64_t{1} << 61) + i;
  Tensor b = lf::from_vector(big, {n});
  expect_matches_reference(lf::sum(b), 1, "int64 sum (wraps)");
  expect_matches_reference(lf::max(b), 1, "int64 max");
  expect_matches_reference(lf::argmin(b), 1, "int64 argmin");
  expect_matches_reference(lf::prod(lf::from_vector(std::vector<int64_t>(static_cast<size_t>(n), 3), {n})), 1,
                           "int64 prod (wraps)");
  std::vector<int32_t> small(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) small[static_cast<size_t>(i)] = static_cast<int32_t>(i % 1000) - 500;
  Tensor s = lf::from_vector(small, {n});
  expect_matches_reference(lf::sum(s), 1, "int32 sum");
  expect_matches_reference(lf::argmax(s), 1, "int32 argmax");
  expect_matches_reference(lf::min(s), 1, "int32 min");
  Tensor flags = s > 498;
  expect_matches_reference(lf::max(flags), 1, "bool max (any)");
  expect_matches_reference(lf::min(flags), 1, "bool min (all)");
  expect_matches_reference(lf::sum(flags), 1, "bool sum (count)");
  expect_matches_reference(lf::argmax(flags), 1, "bool argmax");
}

TEST(SplitReduce, RowsStridesAndDims) {
  Tensor a = lf::from_vector(data(3 * 200001), {3, 200001});
  expect_matches_reference(lf::sum(a, {1}), 200001, "3 long rows");
  expect_matches_reference(lf::argmax(a, {1}), 1, "3 long rows, argmax");
  expect_matches_reference(lf::var(a, {1}, true), 200001, "3 long rows, var");
  expect_matches_reference(lf::sum(a, {0}), 3, "many short rows (not split)");
  Tensor t = lf::transpose(lf::from_vector(data(200001 * 3, 9), {200001, 3}), 0, 1);  // rows strided by 3
  expect_matches_reference(lf::sum(t, {1}), 200001, "strided rows");
  expect_matches_reference(lf::max(t, {1}), 1, "strided rows, max");
  Tensor c = lf::permute(lf::from_vector(data(40 * 3 * 5000, 4), {40, 3, 5000}), {1, 0, 2});
  expect_matches_reference(lf::sum(c), 600000, "all of a permuted 3-D tensor (two inner dims)");
  expect_matches_reference(lf::argmin(c, {}), 1, "argmin over a permuted 3-D tensor");
  expect_matches_reference(lf::sum(c, {0, 2}), 200000, "two reduced dims that do not merge");
  expect_matches_reference(lf::sum(lf::zeros({4, 0}), {1}), 1, "empty rows");
  expect_matches_reference(lf::sum(lf::randn({300000})), 300000, "a generated prologue");
  expect_matches_reference(lf::sum(lf::cast(vec(data(300000, 5)), DType::Float16)), 300000, "float16");
  expect_matches_reference(lf::sum(vec(data(300000, 6)), {0}, true) * 2 + 1, 300000, "an epilogue");
}

// Prints the bits of a few split reductions (run by the next test in child processes).
TEST(SplitReduce, DISABLED_PrintBits) {
  lf::manual_seed(7);
  Tensor x = lf::randn({3000001});
  Tensor y = lf::randn({5, 400003});
  std::vector<float> v = {lf::sum(x * x).item<float>(), lf::var(x).item<float>(),
                          lf::logsumexp(x, {0}).item<float>()};
  for (float r : lf::sum(y, {1}).to_vector<float>()) v.push_back(r);
  Tensor z = lf::randn({16384, 80});  // column sums: split in chunks of the reduced dim (ColumnSplit), and rows
  for (float r : lf::sum(z, {0}).to_vector<float>()) v.push_back(r);
  for (float r : lf::sum(lf::slice(z, 0, 0, 600), {0}).to_vector<float>()) v.push_back(r);
  std::printf("bits:");
  for (float r : v) std::printf(" %08x", std::bit_cast<uint32_t>(r));
  std::printf("\n");
}

std::string bits_with_threads(int threads) {
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  // (Without the parent's gtest sharding, which could shard the one test away.)
  std::string cmd = "env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX LAZYFUSE_NUM_THREADS=" + std::to_string(threads) + " '" + self +
                    "' --gtest_also_run_disabled_tests --gtest_filter=SplitReduce.DISABLED_PrintBits 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "popen failed";
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) {
    std::string line = buf;
    if (line.rfind("bits:", 0) == 0) out = line;
  }
  pclose(p);
  return out;
}

// The chunks depend on the sizes only: 1, 2 and 7 threads give the same bits.
TEST(SplitReduce, SameBitsForAnyThreadCount) {
  std::string one = bits_with_threads(1);
  ASSERT_NE(one.find("bits:"), std::string::npos) << one;
  EXPECT_EQ(bits_with_threads(2), one);
  EXPECT_EQ(bits_with_threads(7), one);
}

TEST(SplitReduce, DeterministicAcrossRuns) {
  Tensor x = vec(data(1 << 21, 11));
  uint32_t first = std::bit_cast<uint32_t>(lf::sum(x * x).item<float>());
  uint32_t var = std::bit_cast<uint32_t>(lf::var(x).item<float>());
  for (int run = 0; run < 5; ++run) {
    EXPECT_EQ(std::bit_cast<uint32_t>(lf::sum(x * x).item<float>()), first);
    EXPECT_EQ(std::bit_cast<uint32_t>(lf::var(x).item<float>()), var);
  }
}

}  // namespace
