// Convolution groups (exec/conv.cpp, cpu/conv.cpp) against the reference executor, and the
// reference convolution and pooling (reference/conv.cpp) against hand-computed values and
// independent formulations (1x1 as matmul, conv1d as a sum of strided slices, pooling with
// non-overlapping windows as a reduction over a reshape): every parameter combination (stride,
// padding incl. "same", dilation, groups incl. depthwise, odd sizes, 1x1, batch 0 and 1), with and
// without the fused epilogue, fusion on and off, every float dtype, NaN and inf.
#include <gtest/gtest.h>

#include <functional>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "codegen/cpu/onednn.h"
#include "codegen/exec/conv_tolerance.h"
#include "codegen/fuse/fuser.h"
#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"
#include "runtime/config.h"

namespace {

using lf::DType;
using lf::Shape;
using lf::Tensor;

Tensor random(Shape shape, uint64_t seed, DType dtype = DType::Float32, bool specials = false) {
  lf::test::Rng rng(seed);
  std::vector<double> v(static_cast<size_t>(lf::shape_numel(shape)));
  for (double& x : v) {
    x = rng.uniform(-1, 1);
    if (specials && rng.chance(0.02)) {
      double s[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                    -std::numeric_limits<double>::infinity()};
      x = s[rng.next() % 3];
    }
  }
  Tensor t = lf::from_vector(v, std::move(shape)).to(dtype);
  lf::sync();
  return t;
}

using lf::test::conv_tolerance;

// `computed_in`: the dtype the convolution ran in, when the result was cast afterwards.
void expect_matches(const Tensor& t, int64_t k, const std::string& what, std::optional<DType> computed_in = {}) {
  lf::test::Values ref = lf::test::reference_values(t);
  lf::test::Values got = lf::test::fused_values(t);
  std::string diff = lf::test::compare(ref, got, conv_tolerance(computed_in.value_or(t.dtype()), k));
  EXPECT_TRUE(diff.empty()) << what << " " << lf::dtype_name(t.dtype()) << lf::shape_str(t.shape()) << ":\n" << diff;
}

void expect_values(const Tensor& t, const std::vector<double>& want, const std::string& what) {
  std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << what << " [" << i << "]";
}

lf::fuse::Partition partition_of(const Tensor& root) {
  auto order = lf::ir::topo_order({root.node().get()});
  return lf::fuse::partition(order, [](const lf::ir::Node& n) { return n.user_refs.load() > 0; }, true);
}

// ---- the reference itself

TEST(ConvReference, HandComputed3x3WithPadding) {
  Tensor x = lf::from_vector(lf::test::iota_floats(16, 1), {1, 1, 4, 4});
  Tensor w = lf::ones({1, 1, 3, 3});
  // Sums of the 3x3 neighbourhoods of 1..16 on a 4x4 grid, zero outside.
  expect_values(lf::conv2d(x, w, {}, 1, 1), {14, 24, 30, 22, 33, 54, 63, 45, 57, 90, 99, 69, 46, 72, 78, 54}, "pad 1");
  expect_values(lf::conv2d(x, w, {}, 2, 1), {14, 30, 57, 99}, "stride 2");
}

TEST(ConvReference, HandComputedPooling) {
  Tensor x = lf::from_vector(lf::test::iota_floats(25, 1), {1, 1, 5, 5});
  expect_values(lf::max_pool2d(x, 2), {7, 9, 17, 19}, "max 2x2");
  expect_values(lf::max_pool2d(x, 2, std::nullopt, 0, true), {7, 9, 10, 17, 19, 20, 22, 24, 25}, "max ceil_mode");
  // ceil_mode windows hanging over the edge divide by the part inside the input (no padding here).
  expect_values(lf::avg_pool2d(x, 2, std::nullopt, 0, true), {4, 6, 7.5, 14, 16, 17.5, 21.5, 23.5, 25}, "avg ceil_mode");
  // Padding 1, 3x3 stride 2: the corner window holds 4 values; count_include_pad divides by 9.
  expect_values(lf::avg_pool2d(x, 3, 2, 1, false, true), {16.0 / 9, 33.0 / 9, 28.0 / 9, 69.0 / 9, 117.0 / 9, 87.0 / 9, 76.0 / 9, 123.0 / 9, 88.0 / 9},
                "avg count_include_pad");
  expect_values(lf::avg_pool2d(x, 3, 2, 1, false, false), {4, 5.5, 7, 11.5, 13, 14.5, 19, 20.5, 22}, "avg exclude pad");
  // Adaptive 5 -> 3: windows [0, 2), [1, 4), [3, 5).
  expect_values(lf::adaptive_avg_pool2d(x, {1, 3}), {11.5, 13, 14.5}, "adaptive");
}

TEST(ConvReference, OneByOneIsMatmul) {
  Tensor x = random({2, 6, 3, 5}, 1), w = random({4, 6, 1, 1}, 2);
  Tensor y = lf::conv2d(x, w);
  Tensor mm = lf::matmul(lf::reshape(w, {4, 6}), lf::reshape(x, {2, 6, 15}));
  lf::test::Values a = lf::test::reference_values(lf::reshape(y, {2, 4, 15}));
  lf::test::Values b = lf::test::reference_values(mm);
  EXPECT_EQ(lf::test::compare(b, a, conv_tolerance(DType::Float32, 6)), "");
}

// conv1d written as a sum over kernel taps of strided slices of the zero-padded input.
TEST(ConvReference, Conv1dIsASumOfSlices) {
  for (int64_t stride : {1, 2, 3})
    for (int64_t dil : {1, 2})
      for (int64_t pad : {0, 2}) {
        Tensor x = random({2, 3, 11}, 3), w = random({5, 3, 3}, 4);
        Tensor y = lf::conv1d(x, w, {}, stride, pad, dil);
        int64_t L = 11 + 2 * pad, out = (L - dil * 2 - 1) / stride + 1;
        Tensor xp = lf::cat({lf::zeros({2, 3, pad}), x, lf::zeros({2, 3, pad})}, 2);
        Tensor acc = lf::zeros({2, 5, out});
        for (int64_t j = 0; j < 3; ++j) {
          Tensor tap = lf::slice(xp, 2, j * dil, j * dil + (out - 1) * stride + 1, stride);       // [2, 3, out]
          Tensor wj = lf::slice(w, 2, j, j + 1);                                                   // [5, 3, 1]
          acc = acc + lf::matmul(lf::reshape(wj, {5, 3}), tap);
        }
        ASSERT_EQ(y.shape(), acc.shape());
        EXPECT_EQ(lf::test::compare(lf::test::reference_values(acc), lf::test::reference_values(y),
                                    conv_tolerance(DType::Float32, 9)), "")
            << "stride " << stride << " dilation " << dil << " pad " << pad;
      }
}

// Non-overlapping windows are a reduction over a reshape: [N, C, OH, k, OW, k].
TEST(ConvReference, PoolingIsAReductionOverWindows) {
  Tensor x = random({2, 3, 8, 6}, 5, DType::Float32, true);
  Tensor win = lf::reshape(x, {2, 3, 4, 2, 3, 2});
  auto same = [](const Tensor& a, const Tensor& b) {
    return lf::test::compare(lf::test::reference_values(b), lf::test::reference_values(a),
                             lf::test::default_tolerance(DType::Float32));
  };
  EXPECT_EQ(same(lf::max_pool2d(x, 2), lf::max(win, {3, 5})), "");
  EXPECT_EQ(same(lf::avg_pool2d(x, 2), lf::mean(win, {3, 5})), "");
  EXPECT_EQ(same(lf::adaptive_avg_pool2d(x, {4, 3}), lf::mean(win, {3, 5})), "");
}

// ---- the CPU convolution against the reference

struct Case {
  Shape x, w;
  lf::Size2 stride = 1;
  lf::Padding2 padding = 0;
  lf::Size2 dilation = 1;
  int64_t groups = 1;
};

std::string describe(const Case& c) {
  return "x" + lf::shape_str(c.x) + " w" + lf::shape_str(c.w) + " stride (" + std::to_string(c.stride.h) + "," +
         std::to_string(c.stride.w) + ") pad " + (c.padding.same ? "same" : std::to_string(c.padding.h) + "," + std::to_string(c.padding.w)) +
         " dil (" + std::to_string(c.dilation.h) + "," + std::to_string(c.dilation.w) + ") groups " + std::to_string(c.groups);
}

std::vector<Case> cases() {
  std::vector<Case> r;
  for (int64_t n : {0, 1, 3})
    for (int64_t stride : {1, 2})
      for (int64_t pad : {0, 1})
        for (int64_t dil : {1, 2}) {
          r.push_back({{n, 4, 9, 7}, {6, 4, 3, 3}, stride, pad, dil, 1});
          r.push_back({{n, 4, 9, 7}, {6, 2, 3, 2}, {stride, 1}, {pad, 0}, {1, dil}, 2});
        }
  r.push_back({{2, 6, 7, 5}, {6, 1, 3, 3}, 1, 1, 1, 6});           // depthwise
  r.push_back({{2, 6, 7, 5}, {12, 1, 5, 3}, 2, {2, 1}, 1, 6});     // depthwise, multiplier 2
  r.push_back({{2, 5, 6, 7}, {3, 5, 1, 1}});                        // 1x1: the input is the GEMM's B
  r.push_back({{2, 6, 6, 7}, {4, 3, 1, 1}, 1, 0, 1, 2});            // grouped 1x1
  r.push_back({{2, 5, 9, 7}, {3, 5, 1, 1}, 2});                     // strided 1x1: im2col
  r.push_back({{1, 3, 8, 8}, {4, 3, 4, 4}, 1, "same"});             // even kernel: padding one more at the end
  r.push_back({{1, 3, 8, 9}, {4, 3, 3, 2}, 1, "same", {2, 3}});
  r.push_back({{2, 3, 5, 5}, {4, 3, 5, 5}});                        // kernel as large as the input: 1x1 output
  r.push_back({{1, 1, 1, 1}, {1, 1, 1, 1}});
  r.push_back({{2, 37, 13, 11}, {33, 37, 3, 3}, 1, 1});            // sizes off the micro-kernel's tile, k = 333
  return r;
}

// LAZYFUSE_CONV for a test's scope: "auto" (the device's library where it is loaded: oneDNN on the
// CPU, cuDNN on a GPU) and "generated" (our own: im2col + the packed GEMM, the NVRTC kernel).
class ConvPath {
 public:
  explicit ConvPath(const char* mode) : saved_(lf::rt::mutable_config().conv) { lf::rt::mutable_config().conv = mode; }
  ~ConvPath() { lf::rt::mutable_config().conv = saved_; }

 private:
  std::string saved_;
};
constexpr const char* kConvPaths[] = {"auto", "generated"};

TEST(Conv, EveryParameterCombinationMatchesTheReference) {
  for (const char* path : kConvPaths)
  for (bool fusion : {true, false}) {
    ConvPath conv_path(path);
    lf::test::FusionScope scope(fusion);
    int i = 0;
    for (const Case& c : cases()) {
      Tensor x = random(c.x, 10 + i), w = random(c.w, 100 + i), b = random({c.w[0]}, 200 + i);
      ++i;
      int64_t k = c.w[1] * c.w[2] * c.w[3];
      std::string what = describe(c) + (fusion ? " fused " : " unfused ") + path;
      expect_matches(lf::conv2d(x, w, {}, c.stride, c.padding, c.dilation, c.groups), k, what + " plain");
      expect_matches(lf::relu(lf::conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups)), k, what + " bias relu");
    }
  }
}

TEST(Conv, EveryFloatDtypeAndNanInf) {
  for (const char* path : kConvPaths)
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(path);
    ConvPath conv_path(path);
    Tensor x = random({2, 5, 9, 8}, 1, d, true), w = random({7, 5, 3, 3}, 2, d), b = random({7}, 3, d);
    expect_matches(lf::conv2d(x, w, b, 1, 1), 45, "3x3 specials");
    expect_matches(lf::conv2d(x, w, b, 2, 0, 2), 45, "strided dilated specials");
    Tensor w1 = random({7, 5, 1, 1}, 4, d, true);
    expect_matches(lf::cast(lf::conv2d(x, w1) * 2, DType::Float32), 5, "1x1 specials, cast", d);
  }
}

TEST(Conv, InputViewsAndNonContiguousWeights) {
  for (const char* path : kConvPaths) {
  SCOPED_TRACE(path);
  ConvPath conv_path(path);
  Tensor base = random({3, 9, 4, 10}, 1);
  Tensor x = lf::permute(base, {0, 2, 3, 1});              // NHWC data read as NCHW: strides only
  x = lf::transpose(x, 1, 3);                              // [3, 9, 10, 4]... then back to channels at 1
  Tensor w = lf::transpose(random({3, 4, 3, 2}, 2), 2, 3);  // [3, 4, 2, 3], a view: copied to OIHW
  Tensor xs = lf::slice(lf::permute(base, {0, 3, 2, 1}), 3, 1, 9, 2);  // [3, 10, 4, 4]
  expect_matches(lf::conv2d(lf::slice(xs, 1, 0, 4), w, {}, 1, 1), 24, "strided input, transposed weights");
  expect_matches(lf::conv2d(lf::slice(xs, 1, 0, 6), random({5, 6, 1, 1}, 3)), 6, "1x1 on a view");
  expect_matches(lf::conv2d(lf::exp(base), random({2, 9, 3, 3}, 4)), 81, "computed input");
  }
}

TEST(Conv, BiasBatchNormReluResidualIsOneConvGroup) {
  Tensor x = random({2, 8, 9, 9}, 1), w = random({8, 8, 3, 3}, 2), b = random({8}, 3);
  Tensor mean = random({8}, 4), var = lf::abs(random({8}, 5)) + 0.5, g = random({8}, 6), be = random({8}, 7);
  lf::sync();
  Tensor y = lf::relu(lf::batch_norm(lf::conv2d(x, w, b, 1, 1), mean, var, g, be) + x);
  lf::fuse::Partition p = partition_of(y);
  int conv_groups = 0;
  for (const auto& gr : p.groups) {
    if (gr.kind != lf::fuse::Group::Kind::Conv) continue;
    ++conv_groups;
    EXPECT_EQ(gr.outputs.size(), 1u);  // only the relu is written
    EXPECT_EQ(gr.outputs[0], y.node().get());
  }
  EXPECT_EQ(conv_groups, 1);
  lf::test::StatsDelta delta;
  expect_matches(y, 72, "conv bias bn residual relu");
  // The per-channel scale and shift, the folded weights and bias (codegen/fuse/conv_fold.h), the
  // convolution, its epilogue.
  EXPECT_LE(delta.launched(), 5u);
  // The formula as written: (conv - mean) / sqrt(var + eps) * g + be.
  Tensor c = lf::conv2d(x, w, b, 1, 1);
  auto ch = [](const Tensor& v) { return lf::reshape(v, {1, 8, 1, 1}); };
  Tensor direct = lf::relu((c - ch(mean)) / lf::sqrt(ch(var) + 1e-5) * ch(g) + ch(be) + x);
  EXPECT_EQ(lf::test::compare(lf::test::reference_values(direct), lf::test::fused_values(y), conv_tolerance(DType::Float32, 72)), "");
}

TEST(Conv, Conv1dAndUnbatchedInputs) {
  Tensor x = random({3, 4, 17}, 1), w = random({6, 2, 3}, 2), b = random({6}, 3);
  for (int64_t stride : {1, 2})
    for (lf::Padding2 pad : {lf::Padding2(0), lf::Padding2(2), lf::Padding2("same")}) {
      if (pad.same && stride != 1) continue;
      expect_matches(lf::relu(lf::conv1d(x, w, b, stride, pad, 2, 2)), 6, "conv1d");
      expect_matches(lf::conv1d(lf::slice(x, 0, 0, 1).squeeze(0), w, b, stride, pad, 1, 2), 6, "conv1d unbatched");
    }
  Tensor img = random({4, 9, 7}, 4);
  Tensor y = lf::conv2d(img, random({5, 4, 3, 3}, 5), {}, 1, 1);
  EXPECT_EQ(y.shape(), (Shape{5, 9, 7}));
  expect_matches(y, 36, "unbatched conv2d");
  Tensor p = lf::avg_pool2d(img, 2, 1, 1, true, false);
  EXPECT_EQ(p.shape(), (Shape{4, 10, 8}));
  expect_matches(p, 1, "unbatched avg_pool2d");
  EXPECT_EQ(lf::adaptive_avg_pool2d(img, {2, 2}).shape(), (Shape{4, 2, 2}));
}

// LAZYFUSE_LOG=1 names the path each convolution and pooling took.
TEST(Conv, LogSaysWhichPathRan) {
  // The CPU's paths (on the GPU machine the default device is CUDA, whose paths differ).
  struct Restore {
    lf::Device saved = lf::default_device();
    ~Restore() { lf::set_default_device(saved); }
  } restore;
  lf::set_default_device(lf::Device::cpu());
  Tensor x = random({2, 4, 6, 6}, 1), w3 = random({5, 4, 3, 3}, 2), w1 = random({5, 4, 1, 1}, 3);
  int saved = lf::rt::mutable_config().log_level;
  lf::rt::mutable_config().log_level = 1;
  {  // oneDNN where it loads, else our own path with the reason
    ConvPath conv_path("auto");
    testing::internal::CaptureStderr();
    Tensor y = lf::relu(lf::conv2d(x, w3, {}, 1, 1));
    lf::sync();
    std::string log = testing::internal::GetCapturedStderr();
    const std::string& missing = lf::cpu::onednn::unavailable();
    if (missing.empty()) {
      EXPECT_NE(log.find("conv2d [2, 4, 6, 6] * [5, 4, 3, 3] float32: oneDNN "), std::string::npos) << log;
      EXPECT_NE(log.find("then the epilogue kernel"), std::string::npos) << log;
    } else {
      EXPECT_NE(log.find("(oneDNN: " + missing + ")"), std::string::npos) << log;
    }
    expect_matches(y, 36, "logged auto");
  }
  ConvPath conv_path("generated");
  testing::internal::CaptureStderr();
  // A 5x5 window: past the windows pooled as views, the pooling kernel.
  Tensor a = lf::relu(lf::conv2d(x, w3, {}, 1, 1)), b = lf::conv2d(x, w1), c = lf::max_pool2d(a, 5, 1, 2);
  lf::sync();
  std::string log = testing::internal::GetCapturedStderr();
  lf::rt::mutable_config().log_level = saved;
  EXPECT_NE(log.find("conv2d [2, 4, 6, 6] * [5, 4, 3, 3] float32: im2col"), std::string::npos) << log;
  EXPECT_NE(log.find("epilogue fused per block of output planes"), std::string::npos) << log;
  EXPECT_NE(log.find("conv2d [2, 4, 6, 6] * [5, 4, 1, 1] float32: 1x1 convolution as one GEMM"), std::string::npos) << log;
  EXPECT_NE(log.find("max_pool2d [2, 5, 6, 6] -> [2, 5, 6, 6] float32: direct loops"), std::string::npos) << log;
  expect_matches(c, 36, "logged pool");
  expect_matches(b, 4, "logged 1x1");
}

TEST(Conv, ErrorsNameTheOpAndShapes) {
  Tensor x = random({2, 4, 5, 5}, 1), w = random({6, 4, 3, 3}, 2);
  auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const lf::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string m = message([&] { (void)lf::conv2d(x, random({6, 3, 3, 3}, 3)); });
  EXPECT_NE(m.find("lf::conv2d"), std::string::npos) << m;
  EXPECT_NE(m.find("float32[2, 4, 5, 5]"), std::string::npos) << m;
  EXPECT_NE(m.find("float32[6, 3, 3, 3]"), std::string::npos) << m;
  EXPECT_NE(message([&] { (void)lf::conv2d(x, w, {}, 1, 0, 3); }).find("smaller than the dilated kernel"), std::string::npos);
  EXPECT_NE(message([&] { (void)lf::conv2d(x, w, {}, 2, "same"); }).find("needs stride 1"), std::string::npos);
  EXPECT_NE(message([&] { (void)lf::conv2d(x, w, {}, 1, 0, 1, 4); }).find("groups"), std::string::npos);
  EXPECT_NE(message([&] { (void)lf::conv2d(x, w, random({5}, 4)); }).find("bias must have shape [6]"), std::string::npos);
  // Parameters whose output-size arithmetic overflows (issue 50: garbage, not an error), conv2d,
  // conv1d and conv_transpose2d alike.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (const std::function<void()>& f : std::vector<std::function<void()>>{
           [&] { (void)lf::conv2d(x, w, {}, 1, 0, kMax); },
           [&] { (void)lf::conv2d(x, w, {}, 1, "same", kMax); },
           [&] { (void)lf::conv2d(x, w, {}, 1, kMax); },
           [&] { (void)lf::conv2d(x, w, {}, kMax); },
           [&] { (void)lf::conv1d(lf::reshape(x, {2, 4, 25}), lf::reshape(w, {6, 4, 9}), {}, 1, 0, kMax); },
           [&] { (void)lf::conv_transpose2d(x, lf::permute(w, {1, 0, 2, 3}), {}, kMax); },
           [&] { (void)lf::conv_transpose2d(x, lf::permute(w, {1, 0, 2, 3}), {}, 1, 0, 0, 1, kMax); }}) {
    std::string e = message(f);
    EXPECT_NE(e.find("overflow the output size's arithmetic"), std::string::npos) << e;
  }
  EXPECT_NE(message([&] { (void)lf::conv2d(x.to(DType::Int32), w); }).find("floating-point"), std::string::npos);
  EXPECT_NE(message([&] { (void)lf::conv2d(x, w.to(DType::Float64)); }).find("one dtype"), std::string::npos);
  EXPECT_NE(message([&] { (void)lf::max_pool2d(x, 3, 1, 2); }).find("lf::max_pool2d: padding"), std::string::npos);
  EXPECT_NE(message([&] { (void)lf::avg_pool2d(x, 7); }).find("smaller than the kernel"), std::string::npos);
  EXPECT_NE(message([&] { (void)lf::max_pool2d(lf::reshape(x, {50, 4}), 2); }).find("4-D"), std::string::npos);
  EXPECT_NE(message([&] { (void)lf::group_norm(x, 3); }).find("must divide"), std::string::npos);
  EXPECT_NE(message([&] { (void)lf::batch_norm(x, random({5}, 5), random({4}, 6)); }).find("running_mean must have shape [4]"),
            std::string::npos);
}

// ---- pooling and normalization

// Windows of at most 16 places pool as elementwise ops over strided views: one kernel with an
// elementwise producer and consumer, where the pooling kernel made three. With padding too: a
// producer of a few elementwise ops over memory is computed again per window place (cheap), not
// stored padded first.
TEST(Pool, SmallWindowsJoinTheirNeighbours) {
  Tensor x = random({2, 3, 9, 8}, 5);
  for (DType d : {DType::Float32, DType::Float16, DType::BFloat16, DType::Float64}) {
    Tensor xd = x.to(d);
    lf::sync();
    // Built inside: a temporary of the caller's expression would be held, hence stored.
    auto run = [&](const std::function<Tensor()>& build, uint64_t kernels, const std::string& what) {
      Tensor y = build();
      lf::test::Values ref = lf::test::reference_values(y);
      lf::test::StatsDelta delta;
      lf::test::Values got = lf::test::fused_values(y);
      EXPECT_EQ(delta.launched(), kernels) << what << " " << lf::dtype_name(d);
      EXPECT_EQ(lf::test::compare(ref, got, lf::test::default_tolerance(d, 9)), "") << what << " " << lf::dtype_name(d);
    };
    run([&] { return lf::max_pool2d(lf::relu(xd), 2) * 2; }, 1, "max 2x2");
    run([&] { return lf::avg_pool2d(lf::relu(xd), lf::Size2(3, 2), lf::Size2(3, 2)) * 2; }, 1, "avg 3x2");
    run([&] { return lf::max_pool2d(xd, 3, 2, 1, true) - 1; }, 1, "max 3x3 s2 p1 ceil, stored input");
    run([&] { return lf::avg_pool2d(xd, 3, 2, 1, true, false) + 1; }, 1, "avg 3x3 exclude pad ceil, stored input");
    run([&] { return lf::max_pool2d(lf::exp(xd), 3, 2, 1, true) - 1; }, 1, "max 3x3 s2 p1 ceil");
    run([&] { return lf::avg_pool2d(xd * 3, 3, 2, 1, true, false) + 1; }, 1, "avg 3x3 exclude pad ceil");
    run([&] { return lf::avg_pool2d(lf::abs(xd), 2, 1, 1, false, true); }, 1, "avg 2x2 s1 include pad");
  }
}

TEST(Pool, EveryOptionFusedAndUnfused) {
  for (bool fusion : {true, false}) {
    lf::test::FusionScope scope(fusion);
    Tensor x = random({2, 3, 9, 8}, 1, DType::Float32, true);
    for (int64_t k : {1, 2, 3})
      for (int64_t s : {1, 2, 3})
        for (int64_t pad = 0; 2 * pad <= k; ++pad)
          for (bool ceil : {false, true}) {
            std::string what = "k" + std::to_string(k) + " s" + std::to_string(s) + " p" + std::to_string(pad) +
                               (ceil ? " ceil" : "");
            // An elementwise producer and consumer on each side of the pool.
            expect_matches(lf::max_pool2d(lf::relu(x), k, s, pad, ceil) * 2, 1, what + " max");
            expect_matches(lf::avg_pool2d(x * 3, k, s, pad, ceil, true) + 1, 1, what + " avg incl");
            expect_matches(lf::avg_pool2d(x, k, s, pad, ceil, false), 1, what + " avg excl");
          }
    for (lf::Size2 o : {lf::Size2(1), lf::Size2(4, 3), lf::Size2(9, 8), lf::Size2(5, 7)})
      expect_matches(lf::adaptive_avg_pool2d(x, o), 1, "adaptive");
  }
}

TEST(Pool, MaxPropagatesNanAndKeepsInf) {
  std::vector<float> v{1, NAN, 3, 4, -INFINITY, -INFINITY, -INFINITY, -INFINITY, INFINITY, 0, 1, 2};
  Tensor x = lf::from_vector(v, {1, 3, 2, 2});
  std::vector<double> got = lf::max_pool2d(x, 2).to_vector<double>();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_EQ(got[1], -INFINITY);
  EXPECT_EQ(got[2], INFINITY);
}

TEST(Norm, BatchNormTrainingStatistics) {
  Tensor x = random({4, 3, 5, 6}, 1) * 3 + 1;
  Tensor w = random({3}, 2), b = random({3}, 3);
  lf::BatchNormOutput r = lf::batch_norm_training(x, w, b);
  // The statistics against a plain double computation.
  std::vector<double> xv = x.to_vector<double>(), mean(3, 0), var(3, 0);
  for (size_t i = 0; i < xv.size(); ++i) mean[(i / 30) % 3] += xv[i] / 120;
  for (size_t i = 0; i < xv.size(); ++i) var[(i / 30) % 3] += (xv[i] - mean[(i / 30) % 3]) * (xv[i] - mean[(i / 30) % 3]) / 120;
  expect_values(r.mean, mean, "mean");
  expect_values(r.var, var, "biased var");
  std::vector<double> y = r.output.to_vector<double>(), wv = w.to_vector<double>(), bv = b.to_vector<double>();
  for (size_t i = 0; i < y.size(); ++i) {
    size_t c = (i / 30) % 3;
    EXPECT_NEAR(y[i], (xv[i] - mean[c]) / std::sqrt(var[c] + 1e-5) * wv[c] + bv[c], 1e-4) << i;
  }
  expect_matches(r.output, 120, "training output");
}

TEST(Norm, GroupNormAgainstLayerNormAndInstanceNorm) {
  Tensor x = random({2, 6, 4, 5}, 1, DType::Float32, true);
  Tensor clean = random({2, 6, 4, 5}, 2);
  auto same = [](const Tensor& a, const Tensor& b) {
    return lf::test::compare(lf::test::reference_values(b), lf::test::fused_values(a), lf::test::default_tolerance(DType::Float32, 120));
  };
  // One group: layer norm over [C, H, W]; C groups: each channel alone (instance norm).
  EXPECT_EQ(same(lf::group_norm(clean, 1), lf::layer_norm(clean, 3)), "");
  Tensor inst = lf::reshape(lf::layer_norm(lf::reshape(clean, {2, 6, 20}), 1), {2, 6, 4, 5});
  EXPECT_EQ(same(lf::group_norm(clean, 6), inst), "");
  Tensor w = random({6}, 3), b = random({6}, 4);
  expect_matches(lf::group_norm(x, 3, w, b), 40, "group norm specials");
  expect_matches(lf::relu(lf::group_norm(lf::conv2d(clean, random({6, 6, 3, 3}, 5), {}, 1, 1), 2, w, b)), 54, "conv group norm");
}

}  // namespace
