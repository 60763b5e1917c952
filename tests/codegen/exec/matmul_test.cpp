// Matmul groups (codegen/fuse/fuser.cpp, executor.cpp, cpu_gemm.cpp): every epilogue pattern and
// operand layout against the reference executor, on random data with NaN and inf, in every dtype;
// batched, broadcast batch dims, 1-D operands, size-1 and size-0 dims, sizes that are not
// multiples of the micro-kernel's tile and K longer than one packed slab.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "codegen/fuse/fuser.h"
#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"
#include "runtime/config.h"
#include "runtime/cuda_driver.h"

namespace {

using lf::DType;
using lf::Shape;
using lf::Tensor;
using lf::test::StatsDelta;

// Uniform data in [-1, 1); with `specials`, a few NaN and ±inf entries.
Tensor random(Shape shape, uint64_t seed, DType dtype = DType::Float32, bool specials = false) {
  lf::test::Rng rng(seed);
  std::vector<double> v(static_cast<size_t>(lf::shape_numel(shape)));
  for (double& x : v) {
    x = lf::is_floating(dtype) ? rng.uniform(-1, 1) : static_cast<double>(rng.range(-9, 9));
    if (specials && rng.chance(0.01)) {
      double s[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                    -std::numeric_limits<double>::infinity()};
      x = s[rng.next() % 3];
    }
  }
  Tensor t = lf::from_vector(v, std::move(shape)).to(dtype);
  lf::sync();  // a buffer, as the tests' inputs (not a cast kernel in the measured flush)
  return t;
}

// A matmul result differs from the double-precision reference by the accumulation's rounding
// (about k * eps * sum|a||b|; operands here are in [-1, 1]) plus the output's own rounding.
lf::test::Tolerance matmul_tolerance(DType d, int64_t k) {
  double acc_eps = d == DType::Float64 ? 2.3e-16 : 1.2e-7;
  lf::test::Tolerance t = lf::test::default_tolerance(d);
  t.atol += 4.0 * acc_eps * static_cast<double>(std::max<int64_t>(k, 1)) * 4.0;
  return t;
}

void expect_matches(const Tensor& t, int64_t k, const std::string& what) {
  lf::test::Values ref = lf::test::reference_values(t);
  lf::test::Values got = lf::test::fused_values(t);
  std::string diff = lf::test::compare(ref, got, matmul_tolerance(t.dtype(), k));
  EXPECT_TRUE(diff.empty()) << what << " " << lf::dtype_name(t.dtype()) << lf::shape_str(t.shape()) << ":\n" << diff;
}

lf::fuse::Partition partition_of(const Tensor& root) {
  auto order = lf::ir::topo_order({root.node().get()});
  return lf::fuse::partition(order, [](const lf::ir::Node& n) { return n.user_refs.load() > 0; }, true);
}

TEST(Matmul, BiasReluIsOneGroupAndNothingElseIsWritten) {
  Tensor x = random({37, 70}, 1), w = random({70, 45}, 2), b = random({45}, 3);
  std::shared_ptr<lf::ir::Node> biased;
  Tensor y;
  {
    Tensor t = lf::matmul(x, w) + b;
    biased = t.node();
    y = lf::relu(t);
  }
  auto p = partition_of(y);
  ASSERT_EQ(p.groups.size(), 1u);
  EXPECT_EQ(p.groups[0].kind, lf::fuse::Group::Kind::Matmul);
  EXPECT_EQ(p.groups[0].nodes.size(), 3u);  // matmul, add, relu
  lf::test::Values ref = lf::test::reference_values(y);
  StatsDelta d;
  lf::test::Values got = lf::test::fused_values(y);
  EXPECT_EQ(lf::test::compare(ref, got, matmul_tolerance(DType::Float32, 70)), "");
  // CPU: the GEMM and its epilogue kernel, run per block of rows. GPU: cuBLASLt's own bias+relu
  // epilogue, one call.
  EXPECT_EQ(d.launched(), y.device().is_cuda() ? 1u : 2u);
  EXPECT_FALSE(biased->realized());
}

// Builds the tensor in a lambda, so the temporaries of its expression (the product among them)
// are gone before the read: otherwise they would be held, hence kept outputs, and the product
// would have to be written.
template <class F>
void expect_built_matches(F build, int64_t k, const std::string& what) {
  Tensor t = build();
  expect_matches(t, k, what);
}

void epilogue_patterns(const std::string& path) {
  Tensor x = random({33, 40}, 4), w = random({40, 29}, 5), b = random({29}, 6), r = random({33, 29}, 7);
  expect_built_matches([&] { return lf::gelu(lf::matmul(x, w) + b) + r; }, 40, path + " gelu(x@w+b)+r");
  expect_built_matches([&] { return lf::sigmoid(lf::matmul(x, w)); }, 40, path + " sigmoid(x@w)");
  expect_built_matches([&] { return lf::matmul(x, w) * 0.125; }, 40, path + " scale");
  expect_built_matches([&] { return lf::matmul(x, w).to(DType::Float16); }, 40, path + " cast to float16");
  expect_built_matches([&] { return lf::where(lf::matmul(x, w) > 0.0, r, b); }, 40, path + " where");
  expect_built_matches([&] { return lf::relu(lf::matmul(x, w) + b); }, 40, path + " relu(x@w+b)");
  // A residual (cuBLASLt's C on the GPU), with a bias and alone, in each float dtype.
  expect_built_matches([&] { return r + (lf::matmul(x, w) + b); }, 40, path + " r+(x@w+b)");
  expect_built_matches([&] { return lf::matmul(x, w) + r; }, 40, path + " x@w+r");
  for (DType d : {DType::Float64, DType::Float16, DType::BFloat16}) {
    Tensor xd = x.to(d), wd = w.to(d), bd = b.to(d), rd = r.to(d);
    lf::sync();
    expect_built_matches([&] { return rd + (lf::matmul(xd, wd) + bd); }, 40, path + " r+(x@w+b) " + lf::dtype_name(d));
  }
  // Batched, a transposed operand, several outputs.
  Tensor a3 = random({2, 3, 40, 33}, 8);
  expect_built_matches([&] { return lf::tanh(lf::matmul(lf::transpose(a3, 2, 3), w) - b); }, 40, path + " batched aT@w");
  Tensor y2, z2;
  {
    Tensor t = lf::matmul(x, w) + b;
    y2 = lf::exp(t * -1.0);
    z2 = t * t;
  }
  expect_matches(y2, 40, path + " two outputs (exp)");
  expect_matches(z2, 40, path + " two outputs (square)");
  // The product itself is kept too: two outputs of one group.
  Tensor m = lf::matmul(x, w);
  Tensor y = lf::tanh(m + b);
  expect_matches(y, 40, path + " tanh(m+b)");
  expect_matches(m, 40, path + " m kept");
}

TEST(Matmul, EpiloguePatterns) { epilogue_patterns("auto"); }

// Each GPU path forced (LAZYFUSE_MATMUL); on the CPU the setting changes nothing.
TEST(Matmul, EpiloguePatternsOnEachPath) {
  std::string saved = lf::rt::mutable_config().matmul;
  for (const char* path : {"generated", "cublaslt"}) {
    lf::rt::mutable_config().matmul = path;
    epilogue_patterns(path);
    for (DType d : {DType::Float64, DType::Float16, DType::BFloat16, DType::Int32, DType::Int64}) {
      Tensor a = random({13, 21}, 30, d), b = random({21, 34}, 31, d), c = random({34}, 32, d);
      expect_built_matches([&] { return lf::matmul(a, b) * 3 + c; }, 21, std::string(path) + " " + lf::dtype_name(d));
    }
    Tensor big = random({64, 120}, 12), b2 = random({50, 27}, 11);
    Tensor sa = lf::slice(lf::slice(big, 0, 1, 63, 2), 1, 3, 103, 2);  // no unit stride: cuBLASLt declines
    expect_built_matches([&] { return lf::sigmoid(lf::matmul(sa, b2)); }, 50, std::string(path) + " sliced");
    Tensor wide = random({300, 3}, 40), tall = random({3, 260}, 41);  // many tiles, short k
    expect_built_matches([&] { return lf::relu(lf::matmul(wide, tall)) * 2; }, 3, std::string(path) + " short k");
  }
  lf::rt::mutable_config().matmul = saved;
}

TEST(Matmul, OperandLayoutsAreStridesNotCopies) {
  Tensor at = random({50, 31}, 8), bt = random({27, 50}, 9);  // used transposed
  Tensor a = random({31, 50}, 10), b = random({50, 27}, 11);
  expect_matches(lf::matmul(lf::transpose(at, 0, 1), b), 50, "aT@b");
  expect_matches(lf::matmul(a, lf::transpose(bt, 0, 1)), 50, "a@bT");
  expect_matches(lf::relu(lf::matmul(lf::transpose(at, 0, 1), lf::transpose(bt, 0, 1))), 50, "aT@bT");
  Tensor big = random({64, 120}, 12);
  Tensor sa = lf::slice(lf::slice(big, 0, 1, 63, 2), 1, 3, 103, 2);  // [31, 50], strides 240 and 2
  expect_matches(lf::matmul(sa, b), 50, "sliced with step");
  // No copy kernel ran for the views: the GEMM reads them in place.
  Tensor y = lf::matmul(lf::transpose(at, 0, 1), lf::transpose(bt, 0, 1));
  StatsDelta d;
  (void)y.to_vector<float>();
  EXPECT_EQ(d.launched(), 1u);
}

TEST(Matmul, BatchedAndBroadcastBatchDims) {
  Tensor a = random({3, 1, 9, 17}, 13), b = random({4, 17, 11}, 14), bias = random({4, 1, 11}, 15);
  expect_matches(lf::relu(lf::matmul(a, b) + bias), 17, "[3,1,9,17]@[4,17,11]+bias");
  Tensor q = random({2, 5, 16, 8}, 16), k = random({2, 5, 16, 8}, 17);
  expect_matches(lf::matmul(lf::transpose(q, 2, 3), k) * 0.35, 16, "transpose(q)@k");
  Tensor w = random({17, 6}, 18);
  expect_matches(lf::matmul(a, w), 17, "batched @ shared weight");
}

// x [B1, B2, T, K] @ w [K, N]: the batch folds into rows (one [B1*B2*T, K] product), with a bias
// and a residual epilogue; and where it must not: A's rows not running on across the batch (a
// slice), a size-1 row dim, B not broadcast.
TEST(Matmul, BatchOverASharedWeightFoldsIntoRows) {
  Tensor x = random({2, 3, 5, 7}, 60), w = random({7, 4}, 61), b = random({4}, 62), r = random({2, 3, 5, 4}, 63);
  expect_built_matches([&] { return r + (lf::matmul(x, w) + b); }, 7, "folded, bias + residual");
  Tensor xs = lf::slice(random({2, 3, 6, 7}, 64), 2, 0, 5);  // rows 0..4 of 6: no run across batches
  expect_built_matches([&] { return lf::matmul(xs, w) * 2; }, 7, "sliced rows");
  Tensor x1 = random({2, 3, 1, 7}, 65);
  expect_built_matches([&] { return lf::matmul(x1, w) + b; }, 7, "one row a batch");
  Tensor x1t = lf::transpose(random({2, 1, 3, 7}, 66), 1, 2);  // [2, 3, 1, 7], rows of stride 7
  expect_built_matches([&] { return lf::matmul(x1t, w) + b; }, 7, "one row a batch, permuted");
  Tensor wb = random({3, 7, 4}, 67);
  expect_built_matches([&] { return lf::matmul(x, wb) + b; }, 7, "a batched weight");
}

TEST(Matmul, OneDimOperands) {
  Tensor v = random({23}, 19), m = random({23, 7}, 20), m2 = random({5, 23}, 21);
  expect_matches(lf::matmul(v, m) + 1.0, 23, "vector @ matrix");
  expect_matches(lf::exp(lf::matmul(m2, v)), 23, "matrix @ vector");
  expect_matches(lf::matmul(v, v), 23, "dot");
}

TEST(Matmul, SizeOneAndSizeZeroDims) {
  for (auto [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1, 1, 1}, {1, 9, 4}, {9, 1, 4}, {6, 5, 1}, {0, 5, 3}, {5, 0, 3}, {4, 5, 0}, {0, 0, 0}}) {
    std::string what = std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    Tensor a = random({m, k}, 22), b = random({k, n}, 23), bias = random({n}, 24);
    Tensor y = lf::relu(lf::matmul(a, b) + bias);
    expect_matches(y, k, what);
    EXPECT_EQ(y.shape(), (Shape{m, n})) << what;
    // An integer product kept as it is (on a GPU the generated kernel stores it: no cuBLASLt
    // integer GEMM), batched with a broadcast batch dim.
    Tensor ia = random({2, m, k}, 25, DType::Int64), ib = random({k, n}, 26, DType::Int64);
    expect_matches(lf::matmul(ia, ib), k, what + " int64 kept");
    expect_matches(lf::matmul(ib.transpose(0, 1), ia.transpose(1, 2)), k, what + " int64 transposed");
  }
  // K = 0: every element is the empty sum, 0 (then the epilogue).
  Tensor z = lf::matmul(lf::zeros({3, 0}), lf::zeros({0, 2})) + 2.0;
  EXPECT_EQ(z.to_vector<float>(), std::vector<float>(6, 2.0f));
}

TEST(Matmul, TilesSlabsAndThreadsAtOddSizes) {
  // Not multiples of 12 x 32, K over two 256-row slabs, enough rows for several tasks.
  Tensor a = random({397, 600}, 25), b = random({600, 131}, 26), bias = random({131}, 27);
  expect_matches(lf::relu(lf::matmul(a, b) + bias), 600, "397x131x600");
  Tensor a64 = random({61, 300}, 28, DType::Float64), b64 = random({300, 35}, 29, DType::Float64);
  expect_matches(lf::matmul(a64, b64) - 1.0, 300, "float64 61x35x300");
}

TEST(Matmul, EveryDtype) {
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32, DType::Int64}) {
    Tensor a = random({13, 21}, 30, d), b = random({21, 34}, 31, d), c = random({34}, 32, d);
    expect_matches(lf::matmul(a, b) + c, 21, "a@b+c");
    expect_matches(lf::matmul(lf::transpose(b, 0, 1), lf::transpose(a, 0, 1)), 21, "bT@aT");
  }
  // Mixed dtypes promote first (a cast kernel feeds the GEMM).
  expect_matches(lf::matmul(random({4, 6}, 33, DType::Int32), random({6, 3}, 34)), 6, "int32 @ float32");
}

// A matrix times a column (n == 1: the CPU's matrix-vector path, gemm.cpp's run_gemv): every
// dtype, K around the 32 lanes of its dot product, NaN and inf, a transposed matrix, a strided
// column, batches, an epilogue, fused and unfused, and the same bits on a second run.
TEST(Matmul, MatrixTimesAColumn) {
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32, DType::Int64}) {
    for (int64_t k : {int64_t{1}, int64_t{31}, int64_t{32}, int64_t{33}, int64_t{64}, int64_t{700}}) {
      for (bool fused : {true, false}) {
        lf::test::FusionScope scope(fused);
        std::string what = std::string(lf::dtype_name(d)) + " k=" + std::to_string(k) + (fused ? " fused" : " unfused");
        Tensor a = random({301, k}, 70 + static_cast<uint64_t>(k), d, true), v = random({k, 1}, 71, d, true);
        expect_matches(lf::matmul(a, v), k, what);
        expect_matches(lf::matmul(v.transpose(0, 1), random({k, 77}, 72, d)), k, what + " (row @ matrix, m == 1)");
        expect_matches(lf::matmul(lf::transpose(random({k, 45}, 73, d), 0, 1), v), k, what + " transposed matrix");
        Tensor wide = random({k, 3}, 74, d);
        expect_matches(lf::matmul(a, lf::slice(wide, 1, 1, 2)), k, what + " strided column");
        expect_matches(lf::matmul(random({3, 40, k}, 75, d), random({3, k, 1}, 76, d)), k, what + " batched");
        if (lf::is_floating(d)) expect_matches(lf::relu(lf::matmul(a, v) * 2 + 1), k, what + " epilogue");
      }
    }
  }
  Tensor a = random({5000, 64}, 80), v = random({64, 1}, 81);
  std::vector<float> first = lf::matmul(a, v).to_vector<float>();
  EXPECT_EQ(lf::matmul(a, v).to_vector<float>(), first);
}

// LAZYFUSE_MATMUL_TF32=1 (PyTorch's allow_tf32): a float32 product in cuBLASLt on TF32 tensor
// cores. Within the TF32 tolerance of the reference (float32's plus 1e-3 sqrt(k) absolute, as the
// TF32 convolutions), less exact than full float32 somewhere (the mode did change the arithmetic),
// and the log says so. A GPU mode: the CPU computes in float32.
TEST(Matmul, Float32OnTf32TensorCoresWhereAllowed) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "TF32 is a GPU mode: the CPU computes float32";
  if (lf::rt::cu::context_of(lf::default_device().index()).info.sm_major < 8) GTEST_SKIP() << "no TF32 before sm_80";
  lf::test::ConfigScope scope;
  lf::rt::mutable_config().matmul_tf32 = true;
  lf::rt::mutable_config().log_level = 1;
  const int64_t k = 300;
  Tensor a = random({200, k}, 60), b = random({k, 130}, 61);
  Tensor y = lf::matmul(a, b);
  lf::test::Values ref = lf::test::reference_values(y);
  testing::internal::CaptureStderr();
  lf::sync();
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("float32 on TF32 tensor cores"), std::string::npos) << log;
  lf::test::Values got = lf::test::fused_values(y);
  lf::test::Tolerance tf32 = matmul_tolerance(DType::Float32, k);
  tf32.atol += 1e-3 * std::sqrt(static_cast<double>(k));
  EXPECT_EQ(lf::test::compare(ref, got, tf32), "");
  EXPECT_NE(lf::test::compare(ref, got, matmul_tolerance(DType::Float32, k)), "") << "as exact as float32";
}

TEST(Matmul, IntegerProductsWrapLikeTheReference) {
  Tensor a = lf::full({2, 3}, 2000000000.0, DType::Int32) + lf::zeros({2, 3}, DType::Int32);
  Tensor b = lf::full({3, 2}, 3.0, DType::Int32) + lf::zeros({3, 2}, DType::Int32);
  expect_matches(lf::matmul(a, b), 3, "int32 overflow");
}

TEST(Matmul, NanAndInfPropagate) {
  Tensor a = random({19, 45}, 35, DType::Float32, true), b = random({45, 23}, 36, DType::Float32, true);
  expect_matches(lf::relu(lf::matmul(a, b)), 45, "specials");
  expect_matches(lf::matmul(a, b) + 1.0, 45, "specials + 1");
}

TEST(Matmul, GeneratorOperands) {
  Tensor a = lf::arange(0.0, 12).reshape({3, 4}) * 0.25;
  expect_matches(lf::matmul(lf::ones({5, 3}), a), 3, "ones @ computed");
  expect_matches(lf::matmul(lf::arange(0.0, 6).reshape({2, 3}), lf::ones({3, 2})), 3, "arange @ ones");
}

TEST(Matmul, UnfusedModeStillUsesTheGemmAndMatches) {
  lf::test::FusionScope off(false);
  Tensor x = random({21, 30}, 37), w = random({30, 19}, 38), b = random({19}, 39);
  Tensor y = lf::relu(lf::matmul(x, w) + b);
  lf::test::Values ref = lf::test::reference_values(y);
  StatsDelta d;
  lf::test::Values got = lf::test::fused_values(y);
  EXPECT_EQ(lf::test::compare(ref, got, matmul_tolerance(DType::Float32, 30)), "");
  EXPECT_EQ(d.launched(), 3u);  // matmul, add, relu
}

TEST(Matmul, NewSizesReuseTheEpilogueKernel) {
  Tensor w = random({24, 16}, 40), b = random({16}, 41);
  (void)lf::relu(lf::matmul(random({5, 24}, 42), w) + b).to_vector<float>();
  StatsDelta d;
  for (int64_t m : {7, 64, 129, 1000}) (void)lf::relu(lf::matmul(random({m, 24}, 43), w) + b).to_vector<float>();
  EXPECT_EQ(d.compiled(), 0u);
  // m = 1 is a broadcast pattern of its own (the bias is no longer broadcast over rows): one new
  // kernel, then reused.
  (void)lf::relu(lf::matmul(random({1, 24}, 44), w) + b).to_vector<float>();
  StatsDelta again;
  (void)lf::relu(lf::matmul(random({1, 24}, 45), w) + b).to_vector<float>();
  EXPECT_EQ(again.compiled(), 0u);
}

}  // namespace

namespace {

// Several slabs of k in the dtypes that go through the compute-type buffer (float16, int32) or
// add integer edge tiles with wrap-around (int64); float32 and float64 are above.
TEST(Matmul, SeveralSlabsInTheOtherDtypes) {
  for (DType d : {DType::Float16, DType::BFloat16, DType::Int32, DType::Int64}) {
    Tensor a = random({197, 600}, 50, d), b = random({600, 45}, 51, d), c = random({45}, 52, d);
    expect_matches(lf::matmul(a, b) + c, 600, std::string("197x45x600 ") + lf::dtype_name(d));
  }
}

}  // namespace
