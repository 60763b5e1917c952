// The fuser's contract (DESIGN.md, "Fusion rules"), one rule per test: the values match the
// reference executor and each flush launches the expected number of kernels.
#include "codegen/fuse/fuser.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "codegen/test_util.h"

namespace {

using lf::DType;
using lf::Shape;
using lf::Tensor;
using lf::test::StatsDelta;

Tensor input(Shape shape, float start = -2.0f, float step = 0.013f) {
  auto data = lf::test::iota_floats(lf::shape_numel(shape), start, step);
  return lf::from_vector(data, std::move(shape));
}

// The fuser's partition of everything pending below `roots` (the same `wanted` rule as realize).
lf::fuse::Partition partition_of(const std::vector<Tensor>& roots) {
  std::vector<lf::ir::Node*> r;
  for (const Tensor& t : roots) r.push_back(t.node().get());
  auto order = lf::ir::topo_order(r);
  return lf::fuse::partition(
      order, [](const lf::ir::Node& n) { return n.user_refs.load() > 0; }, true);
}

// Reference values first, then one read; returns the kernels launched by that read.
uint64_t check_one(const Tensor& t, int64_t reduce_len = 1) {
  lf::test::Values ref = lf::test::reference_values(t);
  StatsDelta d;
  lf::test::Values got = lf::test::fused_values(t);
  EXPECT_EQ(d.flushes(), 1u);
  std::string diff = lf::test::compare(ref, got, lf::test::default_tolerance(t.dtype(), reduce_len));
  EXPECT_TRUE(diff.empty()) << diff;
  return d.launched();
}

TEST(Fuser, ElementwiseChainIsOneKernel) {
  Tensor x = input({64, 33});
  Tensor y = lf::relu(x * 2.0 + 1.0) * lf::sigmoid(x) - lf::tanh(x) / 3.0;  // 7 ops
  EXPECT_EQ(check_one(y), 1u);
  EXPECT_TRUE(y.is_materialized());
}

TEST(Fuser, FiveOpChainUnfusedIsFiveKernels) {
  lf::test::FusionScope off(false);
  Tensor x = input({16, 9});
  Tensor y = lf::exp(lf::abs(x * 3.0 + 1.0) - 0.5);  // mul, add, abs, sub, exp
  EXPECT_EQ(check_one(y), 5u);
}

TEST(Fuser, BiasGeluIsOneKernel) {
  Tensor x = input({32, 64});
  Tensor b = input({64}, 0.5f, -0.01f);
  Tensor y = lf::gelu(x + b);
  EXPECT_EQ(check_one(y), 1u);
}

TEST(Fuser, SoftmaxIsOneKernel) {
  Tensor x = input({16, 100}, -3.0f, 0.007f);
  Tensor y = lf::softmax(x, -1);
  EXPECT_EQ(check_one(y, 100), 1u);
  // Rows sum to 1.
  auto v = y.sum({1}).to_vector<float>();
  for (float s : v) EXPECT_NEAR(s, 1.0f, 1e-5f);
}

// Reductions of a value its producer's group cannot take (a matmul's output, which the GEMM's
// epilogue writes) share one row group: sum, max and min of x @ w + 1 and their consumer are one
// kernel after the GEMM (join_sibling_reduction; layer_norm's statistics of a residual x + attn @ w
// were a kernel each).
TEST(Fuser, ReductionsOfAMatmulsOutputShareOneRowGroup) {
  Tensor a = input({24, 40}), w = input({40, 48}, 1.0f, -0.002f);
  Tensor h = lf::matmul(a, w) + 1.0;
  Tensor y = lf::sum(h, {1}, true) * lf::max(h, {1}, true) + lf::min(h, {1}, true);
  EXPECT_EQ(partition_of({y}).groups.size(), 2u) << "the GEMM with its epilogue, then one row group";
  check_one(y, 48 * 40);
}

TEST(Fuser, LogSoftmaxOverDim0IsOneKernel) {
  Tensor x = input({40, 6}, -3.0f, 0.07f);
  EXPECT_EQ(check_one(lf::log_softmax(x, 0), 40), 1u);
}

TEST(Fuser, LayerNormIsOneKernel) {
  Tensor x = input({8, 64}, -1.0f, 0.031f);
  Tensor w = input({64}, 0.5f, 0.01f);
  Tensor b = input({64}, -0.2f, 0.003f);
  EXPECT_EQ(check_one(lf::layer_norm(x, 1, w, b), 64), 1u);
}

TEST(Fuser, RmsNormIsOneKernel) {
  Tensor x = input({8, 48}, -1.0f, 0.031f);
  EXPECT_EQ(check_one(lf::rms_norm(x, input({48}, 1.0f, 0.01f)), 48), 1u);
}

TEST(Fuser, SubtractRowMeanIsOneKernel) {
  Tensor x = input({12, 50});
  EXPECT_EQ(check_one(x - lf::mean(x, {1}, true), 50), 1u);
}

TEST(Fuser, SumOfSquaresIsOneKernel) {
  Tensor x = input({300}, -1.5f, 0.01f);
  Tensor s = lf::sum(x * x);
  EXPECT_EQ(check_one(s, 300), 1u);
  Tensor m = input({20, 30}, -1.5f, 0.01f);
  EXPECT_EQ(check_one(lf::sum(m * m, {1}), 30), 1u);
}

TEST(Fuser, TwoKeptOutputsOfOneChainAreOneKernel) {
  Tensor x = input({40, 20});
  Tensor a = lf::exp(x * 0.5);
  Tensor b = lf::relu(a - 1.0) + x;
  lf::test::Values ra = lf::test::reference_values(a), rb = lf::test::reference_values(b);
  StatsDelta d;
  lf::test::Values gb = lf::test::fused_values(b);  // flushes a too: it is held
  EXPECT_EQ(d.launched(), 1u);
  EXPECT_TRUE(a.is_materialized());
  lf::test::Values ga = lf::test::fused_values(a);
  EXPECT_EQ(d.launched(), 1u) << "reading a materialized value launches nothing";
  EXPECT_EQ(lf::test::compare(ra, ga, lf::test::default_tolerance(DType::Float32)), "");
  EXPECT_EQ(lf::test::compare(rb, gb, lf::test::default_tolerance(DType::Float32)), "");
}

TEST(Fuser, ReductionAndItsRowBroadcastKeptTogetherAreOneKernel) {
  Tensor x = input({10, 30});
  Tensor m = lf::max(x, {1}, true);
  Tensor y = lf::exp(x - m);
  auto p = partition_of({m, y});
  EXPECT_EQ(p.groups.size(), 1u);
  lf::test::Values rm = lf::test::reference_values(m), ry = lf::test::reference_values(y);
  StatsDelta d;
  lf::test::Values gy = lf::test::fused_values(y);
  EXPECT_EQ(d.launched(), 1u);
  EXPECT_EQ(lf::test::compare(ry, gy, lf::test::default_tolerance(DType::Float32)), "");
  EXPECT_EQ(lf::test::compare(rm, lf::test::fused_values(m), lf::test::default_tolerance(DType::Float32)), "");
}

TEST(Fuser, TransposedInputFusesWithoutCopy) {
  Tensor x = input({24, 40});
  Tensor y = lf::exp(lf::transpose(x, 0, 1)) + 1.0;
  auto p = partition_of({y});
  ASSERT_EQ(p.groups.size(), 1u);
  for (auto* n : p.groups[0].nodes) EXPECT_NE(n->op, lf::ir::Op::Copy);
  EXPECT_EQ(check_one(y), 1u);
}

TEST(Fuser, PermutedSlicedExpandedInputsFuse) {
  Tensor x = input({6, 8, 10});
  Tensor v = lf::slice(lf::permute(x, {2, 0, 1}), 0, 1, 10, 3);  // [3, 6, 8]
  Tensor c = lf::expand(input({1, 6, 1}, 1.0f, 0.5f), {3, 6, 8});
  EXPECT_EQ(check_one(v * c - 2.0), 1u);
}

TEST(Fuser, DifferentReductionStartsNewKernel) {
  Tensor x = input({16, 24}, -1.0f, 0.005f);
  Tensor e = lf::exp(x);
  Tensor rows = lf::sum(e, {1});
  Tensor cols = lf::sum(e, {0});
  e = Tensor();
  auto p = partition_of({rows, cols});
  EXPECT_EQ(p.groups.size(), 2u);
  EXPECT_GE(p.cuts[static_cast<size_t>(lf::fuse::CutReason::kDifferentReduction)], 1);
  lf::test::Values rr = lf::test::reference_values(rows), rc = lf::test::reference_values(cols);
  StatsDelta d;
  EXPECT_EQ(lf::test::compare(rc, lf::test::fused_values(cols), lf::test::default_tolerance(DType::Float32, 16)), "");
  EXPECT_EQ(lf::test::compare(rr, lf::test::fused_values(rows), lf::test::default_tolerance(DType::Float32, 24)), "");
  EXPECT_EQ(d.launched(), 2u);
}

TEST(Fuser, ReductionOfReducedValueStartsNewKernel) {
  Tensor x = input({16, 24}, -1.0f, 0.005f);
  Tensor r = lf::sum(lf::sum(x * 2.0, {1}) + 1.0);
  EXPECT_EQ(check_one(r, 24 * 16), 2u);
}

TEST(Fuser, DeadIntermediatesAreNeverMaterialized) {
  Tensor x = input({30, 7});
  std::shared_ptr<lf::ir::Node> a_node, b_node;
  Tensor c;
  {
    Tensor a = x * 2.0;
    Tensor b = lf::sin(a) + 1.0;
    c = lf::sqrt(b) * a;
    a_node = a.node();
    b_node = b.node();
  }
  EXPECT_EQ(check_one(c), 1u);
  EXPECT_TRUE(c.is_materialized());
  EXPECT_FALSE(a_node->realized());
  EXPECT_FALSE(b_node->realized());
}

TEST(Fuser, DeadIntermediateReadByTwoReductionsIsStillCorrect) {
  Tensor x = input({9, 11});
  Tensor s0, s1;
  std::shared_ptr<lf::ir::Node> e_node;
  {
    Tensor e = lf::exp(x * 0.1);
    s0 = lf::sum(e, {0});
    s1 = lf::max(e, {1});
    e_node = e.node();
  }
  lf::test::Values r0 = lf::test::reference_values(s0), r1 = lf::test::reference_values(s1);
  EXPECT_EQ(lf::test::compare(r1, lf::test::fused_values(s1), lf::test::default_tolerance(DType::Float32)), "");
  EXPECT_EQ(lf::test::compare(r0, lf::test::fused_values(s0), lf::test::default_tolerance(DType::Float32, 9)), "");
}

TEST(Fuser, MatmulAnchorsAGroupWithItsEpilogue) {
  Tensor a = input({8, 16}, -1.0f, 0.02f);
  Tensor b = input({16, 4}, 0.5f, -0.03f);
  Tensor pre = a * 2.0;
  Tensor y = lf::relu(lf::matmul(pre, b) + 1.0);
  lf::ir::Node* pre_node = pre.node().get();
  pre = Tensor();
  auto p = partition_of({y});
  int matmul_groups = 0;
  for (const auto& g : p.groups) {
    if (g.kind != lf::fuse::Group::Kind::Matmul) continue;
    ++matmul_groups;
    // The matmul first, then its epilogue (+1, relu); the prologue (a * 2) is a kernel of its own.
    ASSERT_EQ(g.nodes.size(), 3u);
    EXPECT_EQ(g.nodes[0]->op, lf::ir::Op::Matmul);
    for (auto* n : g.nodes) EXPECT_NE(n, pre_node);
  }
  EXPECT_EQ(matmul_groups, 1);
  // The prologue, then on the CPU the GEMM and its epilogue kernel; on a GPU the generated
  // matmul kernel with the epilogue inside (cuBLASLt has no "+ scalar" epilogue, and the problem
  // is tiny).
  EXPECT_EQ(check_one(y, 16), y.device().is_cuda() ? 2u : 3u);
}

TEST(Fuser, MatmulEpilogueIntermediatesAreNotMaterialized) {
  Tensor a = input({8, 16}, -1.0f, 0.02f);
  Tensor b = input({16, 4}, 0.5f, -0.03f);
  std::shared_ptr<lf::ir::Node> biased;
  Tensor y;
  {
    Tensor m = lf::matmul(a, b);
    Tensor t = m + 1.0;
    y = lf::relu(t);
    biased = t.node();
  }
  check_one(y, 16);
  EXPECT_FALSE(biased->realized());
}

TEST(Fuser, EpilogueReadingTheProductThroughAViewIsCut) {
  Tensor a = input({6, 6}, -1.0f, 0.05f);
  Tensor m = lf::matmul(a, a);
  Tensor y = lf::transpose(m, 0, 1) + 1.0;
  auto p = partition_of({y});
  EXPECT_EQ(p.groups.size(), 2u);
  EXPECT_EQ(p.cuts[static_cast<size_t>(lf::fuse::CutReason::kViewOfComputed)], 1);
  m = Tensor();
  check_one(y, 6);
}

TEST(Fuser, TwoMatmulsAreTwoGroups) {
  Tensor a = input({6, 5}, -1.0f, 0.05f);
  Tensor b = input({5, 7}, 0.5f, -0.03f);
  Tensor c = input({7, 3}, 0.2f, 0.01f);
  Tensor y = lf::matmul(lf::tanh(lf::matmul(a, b)), c) - 0.5;
  int matmuls = 0;
  for (const auto& g : partition_of({y}).groups) matmuls += g.kind == lf::fuse::Group::Kind::Matmul;
  EXPECT_EQ(matmuls, 2);
  check_one(y, 7);
}

TEST(Fuser, HundredThousandOpTraceIsNearLinear) {
  auto& cfg = lf::rt::mutable_config();
  int64_t saved = cfg.trace_limit;
  cfg.trace_limit = 1 << 20;  // one flush of the whole trace
  constexpr int kOps = 100000;
  Tensor x = lf::from_vector(lf::test::iota_floats(64), {64});
  Tensor y = x;
  for (int k = 0; k < kOps; k += 2) {
    y = y + 3.0;  // exact in float32 for these magnitudes
    y = y - 1.0;
  }
  auto start = std::chrono::steady_clock::now();
  StatsDelta d;
  std::vector<float> v = y.to_vector<float>();
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  cfg.trace_limit = saved;
  lf::sync();  // forgets the trace entries, so the next op does not hit the restored limit
  EXPECT_EQ(d.flushes(), 1u);
  for (int i = 0; i < 64; ++i) ASSERT_EQ(v[static_cast<size_t>(i)], static_cast<float>(i + kOps)) << i;
  // Groups cap at kMaxGroupNodes; the same group shape repeats, so compiled kernels stay few.
  EXPECT_LE(d.compiled(), 4u);
  EXPECT_LT(s, 20.0) << "flushing a 100,000-op trace took " << s << " s";
  std::printf("[ info ] 100,000-op flush: %.2f s, %llu kernels launched\n", s,
              static_cast<unsigned long long>(d.launched()));
}

TEST(Fuser, NewBatchSizesCompileNoNewKernels) {
  auto step = [](int64_t b) {
    Tensor x = lf::from_vector(lf::test::iota_floats(b * 8, -1.0f, 0.01f), {b, 8});
    Tensor bias = lf::from_vector(lf::test::iota_floats(8, 0.1f, 0.1f), {8});
    Tensor y = lf::softmax(lf::relu(x * 2.0 + bias), -1);
    return y.to_vector<float>();
  };
  lf::sync();  // start from an empty trace: a trace-limit flush mid-graph would change the groups
  step(2);  // compiles
  StatsDelta d;
  for (int64_t b = 3; b < 1003; ++b) {
    auto v = step(b);
    ASSERT_EQ(v.size(), static_cast<size_t>(b * 8));
  }
  EXPECT_EQ(d.compiled(), 0u);
  EXPECT_EQ(d.misses(), 0u);
  EXPECT_EQ(d.launched(), 1000u);
}

TEST(Fuser, BatchSizeOneReusesTheKernel) {
  auto step = [](int64_t b) {
    Tensor x = lf::from_vector(lf::test::iota_floats(b * 8, -1.0f, 0.01f), {b, 8});
    return lf::softmax(x * 2.0, -1).to_vector<float>();
  };
  step(5);
  StatsDelta d;
  step(1);
  // Batch size 1 may compile its own kernel: lowering drops size-1 dims, which changes the rank.
  // That is a specialization, not a storm; it must happen at most once.
  EXPECT_LE(d.compiled(), 1u);
  StatsDelta again;
  step(1);
  EXPECT_EQ(again.compiled(), 0u);
}

// ---- Edge cases of the row rules: values must stay right whatever the fuser decides.

TEST(FuserEdge, RowValueBroadcastAlongTheWrongDimOfASquare) {
  Tensor x = input({5, 5});
  Tensor s = lf::sum(x, {1});  // [5], broadcast over rows below (indexed by column)
  check_one(x + s, 5);
  Tensor m = lf::max(x, {0}, true);  // [1, 5]
  check_one(x - lf::transpose(m, 0, 1), 5);
}

TEST(FuserEdge, IndependentSameShapeValuesShareAKernel) {
  Tensor x = input({16, 16});
  Tensor z = input({16, 16}, 1.0f, -0.01f);
  Tensor a = lf::exp(x);
  Tensor b = lf::sin(z) * 2.0;
  lf::test::Values ra = lf::test::reference_values(a), rb = lf::test::reference_values(b);
  lf::sync();
  EXPECT_EQ(lf::test::compare(ra, lf::test::fused_values(a), lf::test::default_tolerance(DType::Float32)), "");
  EXPECT_EQ(lf::test::compare(rb, lf::test::fused_values(b), lf::test::default_tolerance(DType::Float32)), "");
}

TEST(FuserEdge, UnrelatedPointwiseJoiningARowGroup) {
  Tensor x = input({4, 6});
  Tensor z = input({4, 6}, 3.0f, -0.2f);
  Tensor s = lf::softmax(x, 1);
  Tensor w = lf::relu(z) * 2.0;  // same shape, reads only a buffer
  Tensor r = lf::sum(x, {1});
  lf::test::Values rs = lf::test::reference_values(s), rw = lf::test::reference_values(w),
                   rr = lf::test::reference_values(r);
  lf::sync();
  auto tol = lf::test::default_tolerance(DType::Float32, 6);
  EXPECT_EQ(lf::test::compare(rs, lf::test::fused_values(s), tol), "");
  EXPECT_EQ(lf::test::compare(rw, lf::test::fused_values(w), tol), "");
  EXPECT_EQ(lf::test::compare(rr, lf::test::fused_values(r), tol), "");
}

TEST(FuserEdge, RowAndElementOutputsOfOneGroup) {
  Tensor x = input({7, 9});
  Tensor m = lf::mean(x, {1}, true);
  Tensor c = x - m;
  Tensor v = lf::mean(c * c, {1}, true);
  Tensor y = c * lf::rsqrt(v + 1e-5);
  std::vector<Tensor> all{m, c, v, y};
  std::vector<lf::test::Values> refs;
  for (auto& t : all) refs.push_back(lf::test::reference_values(t));
  StatsDelta d;
  lf::sync();
  EXPECT_EQ(d.launched(), 1u);
  for (size_t k = 0; k < all.size(); ++k)
    EXPECT_EQ(lf::test::compare(refs[k], lf::test::fused_values(all[k]), lf::test::default_tolerance(DType::Float32, 9)),
              "")
        << k;
}

// A value another group reads that its readers can compute from what they read anyway is not
// written (Builder::recompute_cheap_outputs): in two heat steps, step 2's `4 * a1` joins step 1's
// group (its producer) but only step 2's kernel reads it, and that kernel reads a1 itself.
TEST(FuserEdge, CheapValueOfAWrittenValueIsRecomputedByItsReaders) {
  const int64_t n = 9;
  Tensor a = input({n, n}, -1.0f, 0.02f);
  auto step = [&](const Tensor& x) {
    Tensor p = lf::pad(x, {1, 1, 1, 1}, lf::PadMode::Replicate);
    auto at = [&](int64_t r0, int64_t c0) { return p.slice(0, r0, r0 + n).slice(1, c0, c0 + n); };
    return x + 0.1 * (at(1, 0) + at(1, 2) + at(2, 1) + at(0, 1) - 4 * x);
  };
  Tensor a2 = step(step(a));
  auto rewritten = [](const std::vector<Tensor>& roots) {  // the executor's rewrites, then the partition
    std::vector<lf::ir::Node*> r;
    for (const Tensor& t : roots) r.push_back(t.node().get());
    auto order = lf::ir::topo_order(r);
    if (lf::fuse::insert_reshape_copies(order) > 0) order = lf::ir::topo_order(r);
    return lf::fuse::partition(order, [](const lf::ir::Node& x) { return x.user_refs.load() > 0; }, true);
  };
  lf::fuse::Partition part = rewritten({a2});
  ASSERT_EQ(part.groups.size(), 2u);
  ASSERT_EQ(part.groups[0].outputs.size(), 1u);  // a1 only, not also 4 * a1
  EXPECT_EQ(part.groups[0].outputs[0]->op, lf::ir::Op::Add);
  EXPECT_EQ(check_one(a2, 4), 2u);
  // Unfused and with the product held by the user (then written), the values are the same.
  Tensor b1 = step(a), b4 = 4 * b1;
  Tensor b2 = b1 + 0.1 * (lf::roll(b1, {1}, {0}) - b4);
  part = rewritten({b2, b4});
  EXPECT_EQ(part.groups[0].outputs.size(), 2u);
  check_one(b2, 4);
  EXPECT_EQ(lf::test::compare(lf::test::reference_values(b4), lf::test::fused_values(b4), lf::test::default_tolerance(DType::Float32, 4)), "");
}

TEST(FuserEdge, SqueezedRowValueUnsqueezedBack) {
  Tensor x = input({7, 9});
  Tensor v = lf::mean(x * x, {1});
  check_one(x * lf::rsqrt(lf::unsqueeze(v, 1) + 1e-5), 9);  // 3 kernels today: the reshape is a cut
}

TEST(FuserEdge, ReductionOverMiddleAndOuterDims) {
  Tensor x = input({3, 4, 5, 6}, -1.0f, 0.003f);
  check_one(lf::sum(lf::exp(x), {0, 2}, true) * 2.0, 15);
  check_one(x / lf::sum(lf::abs(x) + 1.0, {1, 3}, true), 24);
  check_one(lf::argmax(x * -1.0, {2}, false), 5);
  check_one(lf::logsumexp(x, {0, 1, 2, 3}), 360);
}

TEST(FuserEdge, ZeroSizeAndSizeOne) {
  check_one(lf::sum(input({0, 4}) * 2.0, {0}));
  check_one(lf::mean(input({3, 0}), {1}, true) + 1.0);
  check_one(lf::exp(input({1, 1, 1})) + lf::sum(input({1, 7}), {1}, true));
  check_one(lf::softmax(input({4, 1}), 1));
}

TEST(FuserEdge, NaNAndInfSurviveFusion) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  Tensor x = lf::from_vector(std::vector<double>{1, nan, -inf, inf, 0, -0.0, 2, nan, 3, -1, inf, 4}, {3, 4});
  check_one(lf::softmax(x, 1));
  check_one(lf::max(x, {1}) + lf::min(x, {0}, false).sum());
  check_one(lf::argmax(x, {1}));
  check_one(lf::argmin(x, {0}, true));
  check_one(lf::where(lf::isnan(x), 0.0, x) * lf::exp(-x));
  check_one(lf::cast(lf::cast(x, DType::Float16) * 1e4, DType::BFloat16));
  check_one(lf::cast(x, DType::Int32) + lf::cast(x, DType::Int64));
  check_one(lf::cast(x, DType::Bool) || lf::isinf(x));
}

// The trace limit should count pending work; reads (realize) leave their realized entries in the
// trace, so a loop of reads reaches the limit anyway and flushes in the middle of building a graph,
// which cuts it at a different place and compiles new kernels (DESIGN.md's ArrayFire lesson).
TEST(Fuser, ReadLoopDoesNotHitTraceLimit) {
  auto& cfg = lf::rt::mutable_config();
  int64_t saved = cfg.trace_limit;
  lf::sync();
  cfg.trace_limit = 100;
  auto step = [](int64_t b) {
    Tensor x = lf::from_vector(lf::test::iota_floats(b * 8, -1.0f, 0.01f), {b, 8});
    Tensor y = lf::softmax(lf::relu(x * 2.0 + 1.0), -1);
    return y.to_vector<float>();
  };
  step(3);
  StatsDelta d;
  for (int64_t b = 4; b < 60; ++b) step(b);
  uint64_t compiled = d.compiled(), flushes = d.flushes();
  cfg.trace_limit = saved;
  lf::sync();
  EXPECT_EQ(compiled, 0u);
  EXPECT_EQ(flushes, 56u) << "one flush per read, none forced by the trace limit";
}

}  // namespace

namespace {

// Issue 25, case 8: a view (slice, permute, reshape) of an elementwise value no handle holds is
// moved below the elementwise ops by the rewrite before partitioning, so the consumer computes only
// what it reads: no view-of-computed cut, one group, and the values of the reference executor.
lf::fuse::Partition rewritten_partition_of(const std::vector<Tensor>& roots, int* rewrites) {
  std::vector<lf::ir::Node*> r;
  for (const Tensor& t : roots) r.push_back(t.node().get());
  *rewrites = lf::fuse::insert_reshape_copies(lf::ir::topo_order(r));
  return partition_of(roots);
}

TEST(Fuser, ViewOfAnUnheldElementwiseValueIsPushedBelowIt) {
  Tensor m = input({64, 8});
  Tensor s = lf::sum(lf::reshape(lf::cast(m, DType::Int32), {-1, 4}), {1});
  Tensor sliced = lf::transpose(lf::exp(m * 0.5) + m, 0, 1).slice(1, 3, 40, 5);
  lf::test::Values ref_s = lf::test::reference_values(s), ref_sliced = lf::test::reference_values(sliced);
  int rewrites = 0;
  auto p = rewritten_partition_of({s, sliced}, &rewrites);
  EXPECT_GT(rewrites, 0);
  EXPECT_EQ(p.cuts[static_cast<size_t>(lf::fuse::CutReason::kViewOfComputed)], 0);
  EXPECT_EQ(p.groups.size(), 2u);
  for (const auto& g : p.groups) EXPECT_EQ(g.outputs.size(), 1u) << "only the results are written";
  EXPECT_EQ(lf::test::compare(ref_s, lf::test::fused_values(s), lf::test::default_tolerance(DType::Int64)), "");
  EXPECT_EQ(lf::test::compare(ref_sliced, lf::test::fused_values(sliced), lf::test::default_tolerance(DType::Float32)),
            "");
}

TEST(Fuser, ViewOfAHeldValueOrABroadcastIsNotPushed) {
  Tensor m = input({16, 8});
  Tensor held = m * 2.0;
  Tensor y = held.slice(0, 1, 5) + 1.0;
  Tensor small = lf::exp(input({16, 1}));
  Tensor z = small.expand({16, 8}) * m;  // a broadcast would recompute exp 8 times per row
  small = Tensor();
  int rewrites = 0;
  auto p = rewritten_partition_of({y, held, z}, &rewrites);
  EXPECT_EQ(rewrites, 0);
  EXPECT_EQ(p.cuts[static_cast<size_t>(lf::fuse::CutReason::kViewOfComputed)], 2);
  check_one(y);
  check_one(z);
}

// A matmul's epilogue is not pushed below its views: a transformer's qkv projection plus bias, cut
// into heads by slices, reshapes and transposes, is one group (the GEMM and its bias) whose
// result the heads' matmuls read as strides; pushed, each head's bias add would be a kernel of its
// own after the product was stored.
TEST(Fuser, ViewsOfAMatmulEpilogueAreNotPushedBelowIt) {
  const int64_t T = 16, D = 24, H = 2, Dh = D / H;
  Tensor x = input({1, T, D}), w = input({3 * D, D}, -1.0f, 0.004f), b = input({3 * D}, 0.5f, -0.01f);
  Tensor qkv = lf::gelu(lf::matmul(x, w.transpose(0, 1)) + b);
  auto head = [&](int64_t i) { return qkv.slice(2, i * D, (i + 1) * D).reshape({1, T, H, Dh}).transpose(1, 2); };
  Tensor q = head(0), k = head(1);
  qkv = Tensor();
  Tensor scores = lf::matmul(q, k.transpose(2, 3));
  q = k = Tensor();
  lf::test::Values ref = lf::test::reference_values(scores);
  int rewrites = 0;
  auto p = rewritten_partition_of({scores}, &rewrites);
  EXPECT_EQ(rewrites, 0);
  EXPECT_EQ(p.cuts[static_cast<size_t>(lf::fuse::CutReason::kViewOfComputed)], 0);
  ASSERT_EQ(p.groups.size(), 2u) << "the projection with its bias and gelu, then the scores";
  EXPECT_EQ(p.groups[0].nodes.size(), 3u);
  EXPECT_EQ(lf::test::compare(ref, lf::test::fused_values(scores), lf::test::default_tolerance(DType::Float32, D)), "");
}

}  // namespace
