// The GPU convolution and pooling paths (codegen/cuda/conv.cpp) against the reference executor, at
// sizes that take many blocks of the generated kernels (output tiles of 64 x 64, k in slices of
// 16, more than 65535 (image, group) planes, pooling over several blocks): both convolution paths,
// cuDNN (LAZYFUSE_CONV=auto) and the generated kernel (LAZYFUSE_CONV=generated), every float dtype,
// strides, padding incl. asymmetric "same" and groups that are not depthwise (which cuDNN
// declines), dilation, depthwise, 1x1,
// batch 0 and 1, an NHWC view, NaN and inf, with the fused epilogue; the log names the path; cuDNN's
// fused convolution + bias + activation after a folded batch norm.
// Skipped without a GPU (the default device is then the CPU, whose paths conv_test.cpp checks).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "codegen/cuda/cudnn.h"
#include "codegen/exec/conv_tolerance.h"
#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"
#include "runtime/config.h"

namespace {

using lf::DType;
using lf::Shape;
using lf::Tensor;

Tensor random(Shape shape, uint64_t seed, DType dtype, bool specials = false) {
  lf::test::Rng rng(seed);
  std::vector<double> v(static_cast<size_t>(lf::shape_numel(shape)));
  for (double& x : v) {
    x = rng.uniform(-1, 1);
    if (specials && rng.chance(0.01)) {
      double s[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                    -std::numeric_limits<double>::infinity()};
      x = s[rng.next() % 3];
    }
  }
  Tensor t = lf::from_vector(v, std::move(shape)).to(dtype);
  lf::sync();
  return t;
}

// LAZYFUSE_CONV and LAZYFUSE_LOG=1 for a scope; log() is what the flushes printed.
class PathScope {
 public:
  explicit PathScope(const std::string& conv) : saved_conv_(lf::rt::config().conv), saved_log_(lf::rt::config().log_level) {
    lf::rt::mutable_config().conv = conv;
    lf::rt::mutable_config().log_level = 1;
    testing::internal::CaptureStderr();
  }
  ~PathScope() {
    if (!done_) (void)log();
    lf::rt::mutable_config().conv = saved_conv_;
  }
  std::string log() {
    done_ = true;
    lf::rt::mutable_config().log_level = saved_log_;
    return testing::internal::GetCapturedStderr();
  }

 private:
  std::string saved_conv_;
  int saved_log_;
  bool done_ = false;
};

struct Case {
  Shape x, w;
  lf::Size2 stride = 1;
  lf::Padding2 padding = 0;
  lf::Size2 dilation = 1;
  int64_t groups = 1;
  bool nhwc = false;     // x read through a permuted NHWC buffer
  bool cudnn = true;     // cuDNN takes it (not: asymmetric padding)
};

std::vector<Case> cases() {
  return {
      {{2, 32, 33, 35}, {80, 32, 3, 3}, 1, 1},                       // 19 x 2 tiles, k = 288: 18 slices
      {{3, 16, 40, 37}, {24, 16, 3, 3}, 2, 2, 2},                    // strided, dilated
      {{2, 16, 29, 31}, {40, 16, 5, 3}, {1, 2}, {2, 1}, {2, 1}},     // every parameter per dim
      {{3, 32, 20, 20}, {64, 8, 3, 3}, 1, 1, 1, 4, false, false},    // groups (not depthwise: cuDNN declines)
      {{2, 64, 30, 30}, {64, 1, 3, 3}, 1, 1, 1, 64},                 // depthwise
      {{2, 32, 19, 23}, {96, 1, 3, 3}, 2, 1, 1, 32},                 // depthwise, multiplier 3
      {{2, 128, 14, 14}, {72, 128, 1, 1}},                           // 1x1, k = 128
      {{2, 24, 15, 17}, {70, 24, 3, 3}, 1, 1, 1, 1, true},           // NHWC input
      {{2, 8, 16, 16}, {16, 8, 4, 4}, 1, "same", 1, 1, false, false},  // asymmetric padding
      {{0, 8, 9, 9}, {16, 8, 3, 3}, 1, 1},                           // batch 0
      {{1, 5, 7, 7}, {3, 5, 7, 7}},                                  // batch 1, a 1x1 output
      {{70000, 1, 1, 1}, {2, 1, 1, 1}},                              // 70000 planes: past gridDim.z
  };
}

void run_cases(const std::string& mode, DType d) {
  bool cudnn_loaded = lf::cuda::cudnn_status().rfind("cuDNN ", 0) == 0;
  int i = 0;
  for (const Case& c : cases()) {
    ++i;
    Tensor x = random(c.x, 10 + i, d, /*specials=*/i == 1);
    if (c.nhwc) x = lf::permute(random({c.x[0], c.x[2], c.x[3], c.x[1]}, 10 + i, d), {0, 3, 1, 2});
    Tensor w = random(c.w, 100 + i, d), b = random({c.w[0]}, 200 + i, d);
    int64_t k = c.w[1] * c.w[2] * c.w[3];
    std::string what = mode + " " + lf::dtype_name(d) + " x" + lf::shape_str(c.x) + " w" + lf::shape_str(c.w);
    PathScope scope(mode);
    Tensor y = lf::relu(lf::conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups));
    lf::test::Values ref = lf::test::reference_values(y);
    lf::test::Values got = lf::test::fused_values(y);
    std::string log = scope.log();
    EXPECT_EQ(lf::test::compare(ref, got, lf::test::conv_tolerance(d, k)), "") << what;
    if (lf::shape_numel(y.shape()) == 0) continue;
    bool want_cudnn = mode != "generated" && c.cudnn && cudnn_loaded;
    EXPECT_NE(log.find(want_cudnn ? ": cuDNN " : ": generated implicit-GEMM kernel lf_conv2d_"), std::string::npos)
        << what << "\n" << log;
    // relu(conv + bias): cuDNN's fused call where it takes it, else the epilogue kernel saying why not.
    bool fused = log.find(": cuDNN fused convolution + bias + relu") != std::string::npos;
    EXPECT_TRUE(want_cudnn ? fused || log.find("then the epilogue kernel (not cuDNN's fused") != std::string::npos
                           : log.find("then the epilogue kernel") != std::string::npos)
        << what << "\n" << log;
    if (!c.cudnn && mode != "generated" && cudnn_loaded) {
      EXPECT_NE(log.find(c.groups > 1 ? "not depthwise" : "asymmetric padding"), std::string::npos) << what << "\n" << log;
    }
  }
}

TEST(ConvGpu, GeneratedKernelMatchesTheReference) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) run_cases("generated", d);
}

TEST(ConvGpu, CudnnMatchesTheReference) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  // Where cuDNN is not found the generated kernel runs (and the log check expects it).
  if (lf::cuda::cudnn_status().rfind("cuDNN ", 0) != 0) std::printf("cuDNN unavailable: %s\n", lf::cuda::cudnn_status().c_str());
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) run_cases("auto", d);
}

// Few input channels (a network's stem) with NaN and inf in x, every 16-bit float and float32, on
// both paths: plain, and with a bias. cuDNN's NHWC float16 engine lost -inf (gave 0) at 3, 4 and 8
// channels on the H200 (2026-11-28): below 16 they run NCHW (cudnn.cpp, find_plan).
TEST(ConvGpu, FewChannelsWithNonFiniteInputs) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  for (const char* mode : {"auto", "generated"})
    for (DType d : {DType::Float32, DType::Float16, DType::BFloat16})
      for (int64_t c : {1, 3, 4, 8, 16, 24}) {
        Tensor x = random({2, c, 12, 12}, 30 + static_cast<uint64_t>(c), d, /*specials=*/true);
        Tensor w = random({16, c, 5, 5}, 40, d), b = random({16}, 41, d);
        const int64_t k = c * 25;
        const std::string what = std::string(mode) + " " + lf::dtype_name(d) + " C=" + std::to_string(c);
        PathScope scope(mode);
        Tensor plain = lf::conv2d(x, w, {}, 2, 2), biased = lf::conv2d(x, w, b, 1, 2);
        lf::test::Values ref_plain = lf::test::reference_values(plain), ref_biased = lf::test::reference_values(biased);
        lf::test::Values got_plain = lf::test::fused_values(plain), got_biased = lf::test::fused_values(biased);
        std::string log = scope.log();
        EXPECT_EQ(lf::test::compare(ref_plain, got_plain, lf::test::conv_tolerance(d, k)), "") << what << " plain\n" << log;
        EXPECT_EQ(lf::test::compare(ref_biased, got_biased, lf::test::conv_tolerance(d, k)), "") << what << " bias\n" << log;
      }
}

// The same with groups: few channels a group (depthwise included) among many in all, where the
// engine sees each group's channels.
TEST(ConvGpu, FewChannelsAGroupWithNonFiniteInputs) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  struct Case {
    int64_t channels, groups;
  };
  for (const char* mode : {"auto", "generated"})
    for (DType d : {DType::Float32, DType::Float16, DType::BFloat16})
      for (Case g : {Case{16, 4}, Case{24, 3}, Case{32, 8}, Case{32, 32}, Case{64, 4}}) {
        const int64_t per = g.channels / g.groups;
        Tensor x = random({2, g.channels, 12, 12}, 50 + static_cast<uint64_t>(g.channels + g.groups), d, /*specials=*/true);
        Tensor w = random({g.channels, per, 3, 3}, 60, d), b = random({g.channels}, 61, d);
        const std::string what = std::string(mode) + " " + lf::dtype_name(d) + " C=" + std::to_string(g.channels) +
                                 " groups=" + std::to_string(g.groups);
        PathScope scope(mode);
        Tensor y = lf::conv2d(x, w, b, 1, 1, 1, g.groups);
        lf::test::Values ref = lf::test::reference_values(y), got = lf::test::fused_values(y);
        EXPECT_EQ(lf::test::compare(ref, got, lf::test::conv_tolerance(d, per * 9)), "") << what << "\n" << scope.log();
      }
}

// cuDNN's fused convolution + bias + activation (issue 22) after the batch-norm fold: conv-bn-relu
// (relu), conv-bn (identity: implicit precomputed GEMM) and conv-bn-add-relu (residual), at
// ResNet sizes (many blocks), NaN and inf in the input, every float dtype. float32 must take the
// fused call, float64 takes it or says why not (cuDNN's configurations vary by version). A 16-bit
// batch norm is not folded (it computes in float32): conv-bn and conv-bn-add-relu must take the
// graph API's call with the scale, conv-bias-bn-relu runs cuDNN and the epilogue kernel.
TEST(ConvGpu, FusedBiasActivationAfterBatchNorm) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  if (lf::cuda::cudnn_status().rfind("cuDNN ", 0) != 0) GTEST_SKIP() << lf::cuda::cudnn_status();
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    Tensor x = random({8, 64, 28, 28}, 1, d, /*specials=*/true), w = random({64, 64, 3, 3}, 2, d);
    Tensor mean = random({64}, 3, d), var = lf::abs(random({64}, 4, d)) + 0.5, g = random({64}, 5, d);
    Tensor be = random({64}, 6, d), b = random({64}, 7, d);
    lf::sync();
    struct Form {
      const char* what;
      const char* log;
    };
    const bool narrow = lf::dtype_size(d) == 2;
    for (Form f : {Form{"conv bias bn relu", narrow ? "then the epilogue kernel" : "cuDNN fused convolution + bias + relu"},
                   Form{"conv bn", narrow ? "cuDNN graph: convolution * scale + bias in float32"
                                          : "cuDNN fused convolution + bias, implicit precomputed GEMM"},
                   Form{"conv bn add relu", narrow ? "cuDNN graph: convolution * scale + bias + residual + relu in float32"
                                                   : "cuDNN fused convolution + bias + residual + relu"}}) {
      std::string what = std::string(f.what) + " " + lf::dtype_name(d);
      PathScope scope("auto");
      Tensor y;
      if (what.rfind("conv bias bn relu", 0) == 0) y = lf::relu(lf::batch_norm(lf::conv2d(x, w, b, 1, 1), mean, var, g, be));
      else if (what.rfind("conv bn add", 0) == 0) y = lf::relu(lf::batch_norm(lf::conv2d(x, w, {}, 1, 1), mean, var, g, be) + x);
      else y = lf::batch_norm(lf::conv2d(x, w, {}, 1, 1), mean, var, g, be);
      lf::test::Values ref = lf::test::reference_values(y);
      lf::test::Values got = lf::test::fused_values(y);
      std::string log = scope.log();
      lf::test::Tolerance tol = lf::test::conv_tolerance(d, 576);
      tol.atol += 2 * tol.rtol * 24;  // the fold's reassociation (conv_fold_test.cpp)
      EXPECT_EQ(lf::test::compare(ref, got, tol), "") << what;
      EXPECT_EQ(log.find("batch norm folded into conv2d#") != std::string::npos, !narrow) << what << "\n" << log;
      bool fused = log.find(f.log) != std::string::npos;
      // The graph call, or its timed refusal (slower than the plain convolution and a pass).
      if (narrow && !fused) fused = log.find("not cuDNN's fused epilogue: the graph's fastest engine") != std::string::npos;
      if (d != DType::Float64) EXPECT_TRUE(fused) << what << "\n" << log;
      else if (!fused) std::printf("%s: not fused here:\n%s\n", what.c_str(), log.c_str());
    }
  }
}

// Flush plans with cuDNN calls and pooling (codegen/cuda/conv.cpp records them): a ResNet block
// (two fused calls after the batch-norm fold), a convolution with an epilogue cuDNN cannot take
// (cuDNN + the epilogue kernel), conv + relu + max pool, an average pool of a view, each run 4 times on new inputs: the third and fourth are replays (a CUDA
// graph captured over the cuDNN calls, or step by step where the capture fails), every one equal
// to the reference.
TEST(ConvGpu, CudnnCallsReplayInFlushPlans) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  if (lf::cuda::cudnn_status().rfind("cuDNN ", 0) != 0) GTEST_SKIP() << lf::cuda::cudnn_status();
  // bfloat16: the ResNet block's batch norms in float32 in the graph API's calls (cudnn.h), whose
  // replays pass the scale's address too.
  for (DType d : {DType::Float32, DType::BFloat16}) {
    Tensor w1 = random({64, 64, 3, 3}, 1, d), w2 = random({64, 64, 3, 3}, 2, d), b = random({64}, 3, d);
    Tensor mean = random({64}, 4, d), var = lf::abs(random({64}, 5, d)) + 0.5, g = random({64}, 6, d);
    Tensor be = random({64}, 7, d);
    lf::sync();
    for (int form = 0; form < (d == DType::Float32 ? 4 : 1); ++form) {
      uint64_t replayed = lf::cache_stats().plans_replayed;
      for (int step = 0; step < 4; ++step) {
        Tensor x = random({4, 64, 28, 28}, 20 + static_cast<uint64_t>(step), d, /*specials=*/step == 3);
        Tensor y;
        if (form == 0) {
          Tensor h = lf::relu(lf::batch_norm(lf::conv2d(x, w1, {}, 1, 1), mean, var, g, be));
          y = lf::relu(lf::batch_norm(lf::conv2d(h, w2, {}, 1, 1), mean, var, g, be) + x);
        } else if (form == 1) {
          y = lf::gelu(lf::conv2d(x, w1, b, 1, 1));  // gelu: not cuDNN's activation
        } else if (form == 2) {
          y = lf::max_pool2d(lf::relu(lf::conv2d(x, w1, b, 1, 1)), 2);  // the generated pooling kernel recorded too
        } else {
          y = lf::adaptive_avg_pool2d(lf::permute(x, {0, 1, 3, 2}), 1) * 2.0;  // a strided input
        }
        lf::test::Values ref = lf::test::reference_values(y);
        lf::test::Tolerance tol = lf::test::conv_tolerance(d, 576);
        tol.atol = 4 * tol.atol + 2 * tol.rtol * 24;  // two convolutions, the fold's reassociation
        EXPECT_EQ(lf::test::compare(ref, lf::test::fused_values(y), tol), "")
            << lf::dtype_name(d) << " form " << form << " step " << step;
      }
      EXPECT_GE(lf::cache_stats().plans_replayed - replayed, 2u) << lf::dtype_name(d) << " form " << form;
    }
  }
}

// cuDNN's fused call without a residual reads its output buffer as z (scaled by 0): LazyFuse
// zeroes it first, so a reused block that held NaN changes nothing. The NaN buffer of the output's
// size is freed just before, so that the caching allocator hands its block to the output.
TEST(ConvGpu, FusedCallIgnoresTheOutputBuffersOldContents) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  if (lf::cuda::cudnn_status().rfind("cuDNN ", 0) != 0) GTEST_SKIP() << lf::cuda::cudnn_status();
  Tensor x = random({4, 32, 20, 20}, 1, DType::Float32), w = random({32, 32, 3, 3}, 2, DType::Float32);
  Tensor b = random({32}, 3, DType::Float32);
  for (int i = 0; i < 3; ++i) {
    {
      Tensor junk = lf::full({4, 32, 20, 20}, std::numeric_limits<double>::quiet_NaN()) + 0.0;
      lf::sync();
    }
    PathScope scope("auto");
    Tensor y = lf::relu(lf::conv2d(x, w, b, 1, 1));
    lf::test::Values ref = lf::test::reference_values(y);
    lf::test::Values got = lf::test::fused_values(y);
    std::string log = scope.log();
    EXPECT_EQ(lf::test::compare(ref, got, lf::test::conv_tolerance(DType::Float32, 288)), "") << "round " << i;
    // Round 0 fuses and logs the call; rounds 1 and 2 replay its flush plan (the same call).
    const bool fused = log.find("cuDNN fused convolution + bias + relu") != std::string::npos;
    EXPECT_TRUE(fused || (i > 0 && log.find("replayed from a plan") != std::string::npos)) << log;
  }
}

TEST(ConvGpu, FullFloat32WithoutTf32) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  bool saved = lf::rt::config().conv_tf32;
  lf::rt::mutable_config().conv_tf32 = false;  // LAZYFUSE_CONV_TF32=0: the float32 tolerance alone
  Tensor x = random({2, 64, 28, 28}, 1, DType::Float32), w = random({64, 64, 3, 3}, 2, DType::Float32);
  Tensor y = lf::conv2d(x, w, {}, 1, 1);
  std::string diff = lf::test::compare(lf::test::reference_values(y), lf::test::fused_values(y),
                                       lf::test::conv_tolerance(DType::Float32, 576));
  lf::rt::mutable_config().conv_tf32 = saved;
  EXPECT_EQ(diff, "");
}

// LAZYFUSE_CONV_BENCHMARK=1: cuDNN's algorithm is the fastest one timed on the shape (a plan of its
// own, apart from the heuristic's), for the plain and the fused call alike; results are the
// reference's whatever it picks, and the log says how it was chosen.
TEST(ConvGpu, BenchmarkedAlgorithms) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  bool saved = lf::rt::config().conv_benchmark;
  lf::rt::mutable_config().conv_benchmark = true;
  for (DType d : {DType::Float32, DType::BFloat16}) {
    Tensor x = random({4, 32, 30, 30}, 3, d), w = random({48, 32, 3, 3}, 4, d), b = random({48}, 5, d);
    lf::sync();
    PathScope scope("auto");
    Tensor plain = lf::conv2d(x, w, {}, 2, 1);
    Tensor fused = lf::relu(lf::conv2d(x, w, b, 1, 1));
    lf::test::Values ref_plain = lf::test::reference_values(plain), ref_fused = lf::test::reference_values(fused);
    lf::test::Values got_plain = lf::test::fused_values(plain), got_fused = lf::test::fused_values(fused);
    std::string log = scope.log();
    EXPECT_EQ(lf::test::compare(ref_plain, got_plain, lf::test::conv_tolerance(d, 288)), "") << dtype_name(d);
    EXPECT_EQ(lf::test::compare(ref_fused, got_fused, lf::test::conv_tolerance(d, 288)), "") << dtype_name(d);
    EXPECT_NE(log.find("the fastest of every algorithm timed (LAZYFUSE_CONV_BENCHMARK=1)"), std::string::npos) << log;
  }
  lf::rt::mutable_config().conv_benchmark = saved;
}

// cuDNN writes NHWC (cudnn.h) for float32, float16 and bfloat16, NCHW for float64 and with
// LAZYFUSE_CONV_NHWC=0; the pointwise ops after it keep the layout (the epilogue, a pooling as
// index math), reductions and flattens give what they always do, and the next convolution reads
// NHWC as it is. Every result against the reference, in the same flush and in the next one.
TEST(ConvGpu, CudnnWritesNhwcAndItsConsumersKeepIt) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  if (lf::cuda::cudnn_status().rfind("cuDNN ", 0) != 0) GTEST_SKIP() << lf::cuda::cudnn_status();
  bool saved = lf::rt::config().conv_nhwc;
  for (bool nhwc_on : {true, false}) {
    lf::rt::mutable_config().conv_nhwc = nhwc_on;
    for (DType d : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64}) {
      std::string what = std::string(nhwc_on ? "NHWC on " : "NHWC off ") + lf::dtype_name(d);
      Tensor x = random({4, 24, 18, 20}, 1, d, /*specials=*/true), w1 = random({32, 24, 3, 3}, 2, d);
      Tensor w2 = random({16, 32, 3, 3}, 3, d), b = random({32}, 4, d);
      lf::sync();
      PathScope scope("auto");
      Tensor h = lf::relu(lf::conv2d(x, w1, b, 1, 1));         // cuDNN's fused call
      Tensor p = lf::max_pool2d(h, 3, 2, 1);                    // pooling after it
      Tensor y = lf::conv2d(lf::sigmoid(p), w2, {}, 1, 1) * 0.5;  // the next convolution, its epilogue
      Tensor flat = lf::reshape(h, {h.shape()[0], -1}) + 1.0;                    // a reshape of an NHWC value
      Tensor pooled = lf::adaptive_avg_pool2d(y, 1);            // a reduction
      Tensor gn = lf::group_norm(h, 4);                         // a row kernel over an NHWC input
      std::vector<std::pair<std::string, Tensor>> outs = {{"h", h}, {"p", p}, {"y", y}, {"flat", flat}, {"pooled", pooled}, {"gn", gn}};
      std::vector<lf::test::Values> refs;
      for (auto& o : outs) refs.push_back(lf::test::reference_values(o.second));
      lf::sync();
      std::string log = scope.log();
      lf::test::Tolerance tol = lf::test::conv_tolerance(d, 288);
      tol.atol *= 4;
      for (size_t i = 0; i < outs.size(); ++i)
        EXPECT_EQ(lf::test::compare(refs[i], lf::test::fused_values(outs[i].second), tol), "") << what << " " << outs[i].first;
      bool want = nhwc_on && d != DType::Float64;
      for (const Tensor& t : {h, p, y}) {
        Shape s = t.shape();
        Shape nhwc{s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]};
        EXPECT_EQ(t.strides() == nhwc, want) << what << " " << lf::shape_str(s) << " strides " << lf::shape_str(t.strides());
      }
      EXPECT_TRUE(flat.is_contiguous() && pooled.is_contiguous() && gn.is_contiguous()) << what;
      EXPECT_EQ(log.find(", NHWC") != std::string::npos, want) << what << "\n" << log;
      EXPECT_EQ(log.find(", NCHW") != std::string::npos, !want) << what << "\n" << log;
      // Moved to the host (contiguous() first: a copy where the value is NHWC), and the row-major
      // pointer of a pending NHWC value.
      Tensor on_host = lf::relu(lf::conv2d(x, w1, b, 1, 1)).to(lf::Device::cpu());
      EXPECT_EQ(lf::test::compare(refs[0], lf::test::fused_values(on_host), tol), "") << what << " to(cpu)";
      Tensor rows = (lf::relu(lf::conv2d(x, w1, b, 1, 1)) * 1.0).contiguous();
      EXPECT_EQ(lf::test::compare(refs[0], lf::test::fused_values(rows), tol), "") << what << " contiguous()";
      rows.data_ptr();
      EXPECT_TRUE(rows.is_contiguous()) << what;
      // The layout known now: a flatten in a new flush reads it through a copy or a view, rightly.
      Tensor again = lf::reshape(h, {h.shape()[0], -1}) * 2.0;
      EXPECT_EQ(lf::test::compare(lf::test::reference_values(again), lf::test::fused_values(again), tol), "") << what;
    }
  }
  lf::rt::mutable_config().conv_nhwc = saved;
}

// The batch-norm fold writes the folded filter as KRSC on a GPU (conv_fold.cpp), so cuDNN's NHWC
// call takes it as it is, where a user's OIHW filter is transformed each call; a grouped
// convolution cuDNN declines gets the KRSC filter copied back to OIHW for the generated kernel;
// with LAZYFUSE_CONV_NHWC=0 the fold writes OIHW. Each against the reference, in flush plans too.
// float32 only: a 16-bit batch norm is not folded (FusedBiasActivationAfterBatchNorm).
TEST(ConvGpu, FoldedFiltersAreKrsc) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  if (lf::cuda::cudnn_status().rfind("cuDNN ", 0) != 0) GTEST_SKIP() << lf::cuda::cudnn_status();
  bool saved = lf::rt::config().conv_nhwc;
  for (bool nhwc_on : {true, false}) {
    lf::rt::mutable_config().conv_nhwc = nhwc_on;
    for (DType d : {DType::Float32}) {
      Tensor mean = random({32}, 3, d), var = lf::abs(random({32}, 4, d)) + 0.5, g = random({32}, 5, d);
      Tensor be = random({32}, 6, d), w = random({32, 16, 3, 3}, 7, d), wg = random({32, 4, 3, 3}, 8, d);
      lf::sync();
      for (int step = 0; step < 3; ++step) {
        std::string what = std::string(nhwc_on ? "NHWC " : "NCHW ") + lf::dtype_name(d) + " step " + std::to_string(step);
        Tensor x = random({2, 16, 15, 17}, 20 + static_cast<uint64_t>(step), d);
        PathScope scope("auto");
        Tensor folded = lf::relu(lf::batch_norm(lf::conv2d(x, w, {}, 1, 1), mean, var, g, be));
        Tensor plain = lf::conv2d(x, w, {}, 1, 1) * 2.0;
        Tensor grouped = lf::batch_norm(lf::conv2d(x, wg, {}, 1, 1, 1, 4), mean, var, g, be);  // cuDNN declines groups of 4
        lf::test::Values rf = lf::test::reference_values(folded), rp = lf::test::reference_values(plain);
        lf::test::Values rg = lf::test::reference_values(grouped);
        lf::sync();
        std::string log = scope.log();
        lf::test::Tolerance tol = lf::test::conv_tolerance(d, 144);
        tol.atol += 2 * tol.rtol * 24;  // the fold's reassociation
        EXPECT_EQ(lf::test::compare(rf, lf::test::fused_values(folded), tol), "") << what;
        EXPECT_EQ(lf::test::compare(rp, lf::test::fused_values(plain), tol), "") << what;
        EXPECT_EQ(lf::test::compare(rg, lf::test::fused_values(grouped), tol), "") << what;
        if (step > 0) continue;  // replays log nothing
        // The fused call's line names no filter transform; the plain call's does (NHWC only).
        size_t fused_at = log.find("cuDNN fused convolution + bias + relu");
        ASSERT_NE(fused_at, std::string::npos) << what << "\n" << log;
        std::string fused_line = log.substr(fused_at, log.find('\n', fused_at) - fused_at);
        EXPECT_EQ(fused_line.find("the filter transformed"), std::string::npos) << what << "\n" << log;
        EXPECT_EQ(log.find("the filter transformed to KRSC") != std::string::npos, nhwc_on) << what << "\n" << log;
        EXPECT_NE(log.find("generated implicit-GEMM kernel"), std::string::npos) << what << "\n" << log;
      }
    }
  }
  lf::rt::mutable_config().conv_nhwc = saved;
}

TEST(PoolGpu, EveryKindMatchesTheReference) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    Tensor base = random({4, 37, 41, 16}, 1, d, true);
    Tensor x = lf::permute(base, {0, 3, 1, 2});  // [4, 16, 37, 41] read through NHWC strides
    PathScope scope("auto");
    std::vector<std::pair<std::string, Tensor>> outs = {
        {"max 3 s2 p1", lf::max_pool2d(x, 3, 2, 1)},
        {"max 2 ceil", lf::max_pool2d(x, 2, std::nullopt, 0, true)},
        {"avg 3 s2 p1 incl", lf::avg_pool2d(x, 3, 2, 1, false, true)},
        {"avg 3 s2 p1 excl ceil", lf::avg_pool2d(x, 3, 2, 1, true, false)},
        {"adaptive 7x5", lf::adaptive_avg_pool2d(x, {7, 5})},
        {"adaptive 1", lf::adaptive_avg_pool2d(x, 1)},
    };
    for (auto& [what, t] : outs) {
      std::string diff = lf::test::compare(lf::test::reference_values(t), lf::test::fused_values(t),
                                           lf::test::default_tolerance(d));
      EXPECT_EQ(diff, "") << what << " " << lf::dtype_name(d);
    }
    std::string log = scope.log();
    EXPECT_NE(log.find("generated kernel lf_pool2d_"), std::string::npos) << log;
    EXPECT_EQ(log.find("reference executor's pooling"), std::string::npos) << log;
  }
}

}  // namespace
