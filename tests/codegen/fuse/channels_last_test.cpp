// Memory format propagation (codegen/fuse/lower.h, out_strides): a pointwise output of rank 4 that
// reads a channels-last buffer is written channels-last, in one dense run; everything else stays
// contiguous. Checked on the CPU backend (a channels-last buffer from from_blob) against the
// reference executor: the strides the results get, fused and in replayed flush plans, and reshapes
// of such values, which cannot always view them (fuse::insert_reshape_copies copies first).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"
#include "runtime/config.h"

namespace {

using lf::DType;
using lf::Shape;
using lf::Tensor;

Shape channels_last(const Shape& s) { return {s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]}; }
Shape contiguous(const Shape& s) { return {s[1] * s[2] * s[3], s[2] * s[3], s[3], 1}; }

// A realized [N, C, H, W] CPU tensor stored NHWC, with random values (a NaN and an inf among them).
struct NhwcInput {
  std::vector<float> data;
  Tensor t;
  NhwcInput(const Shape& s, uint64_t seed) : data(static_cast<size_t>(lf::shape_numel(s))) {
    lf::test::Rng rng(seed);
    for (float& v : data) v = static_cast<float>(rng.uniform(-2, 2));
    if (data.size() > 7) {
      data[3] = std::numeric_limits<float>::quiet_NaN();
      data[7] = std::numeric_limits<float>::infinity();
    }
    t = lf::from_blob(data.data(), s, channels_last(s), DType::Float32, lf::Device::cpu());
  }
};

void expect_same(const Tensor& y, const std::string& what) {
  lf::test::Values ref = lf::test::reference_values(y);
  EXPECT_EQ(lf::test::compare(ref, lf::test::fused_values(y), lf::test::Tolerance{1e-6, 1e-6}), "") << what;
}

TEST(ChannelsLast, PointwiseOutputsFollowAChannelsLastInput) {
  const Shape s{2, 5, 3, 4};
  NhwcInput x(s, 1);
  const lf::Device cpu = lf::Device::cpu();
  Tensor bias = lf::rand({1, 5, 1, 1}).to(cpu);
  Tensor plain = lf::rand(s).to(cpu) + 0.0f;  // contiguous, computed
  lf::sync();
  Tensor y = lf::relu(x.t * 2.0f + bias);
  Tensor z = lf::exp(plain) + x.t;                 // one input of each layout
  Tensor w = lf::sum(x.t, {2, 3}, /*keepdim=*/true);  // a reduction: contiguous
  Tensor u = lf::exp(plain);                       // no channels-last input: contiguous
  for (const Tensor& t : {y, z, w, u}) expect_same(t, "value");
  EXPECT_EQ(y.strides(), channels_last(s));
  EXPECT_EQ(z.strides(), channels_last(s));
  EXPECT_FALSE(y.is_contiguous());
  EXPECT_TRUE(w.is_contiguous());
  EXPECT_TRUE(u.is_contiguous());
  // contiguous() copies it back to row-major, with the same values.
  Tensor c = y.contiguous();
  EXPECT_EQ(c.strides(), contiguous(s));
  EXPECT_EQ(lf::test::compare(lf::test::fused_values(y), lf::test::fused_values(c), lf::test::Tolerance{}), "");
}

// Size-1 channels or a 1x1 image: channels-last and contiguous are the same memory; the output
// stays contiguous.
TEST(ChannelsLast, DegenerateShapesStayContiguous) {
  for (Shape s : {Shape{2, 1, 3, 4}, Shape{3, 6, 1, 1}, Shape{0, 4, 2, 2}}) {
    NhwcInput x(s, 2);
    Tensor y = x.t + 1.0f;
    expect_same(y, lf::shape_str(s));
    EXPECT_TRUE(y.is_contiguous()) << lf::shape_str(s);
  }
}

// A reshape of a value computed channels-last in the same flush: the merge of C with H and W
// cannot view NHWC memory, so a copy is made first; views that can (a split of N, a flatten of a
// 1x1 image) are taken as they are. Each compared with the reference, also after further ops.
TEST(ChannelsLast, ReshapesOfChannelsLastValuesAreRight) {
  const Shape s{4, 3, 5, 2};
  NhwcInput x(s, 3);
  Tensor a = lf::relu(x.t);
  expect_same(lf::reshape(a, {4, -1}), "flatten");
  expect_same(lf::reshape(a, {2, 2, 3, 10}) * 3.0f, "merge of H and W");
  expect_same(lf::reshape(lf::permute(a, {0, 2, 3, 1}), {4, 10, 3}) + 1.0f, "NHWC flattened");
  expect_same(lf::reshape(lf::sigmoid(x.t) - 0.5f, {-1}), "all");
  Tensor b = lf::mean(lf::relu(x.t), {2, 3}, true);
  expect_same(lf::reshape(b, {4, 3}), "flatten of a pooled value");
  // A value computed from a contiguous() copy of x, fused with the copy: it reads x's NHWC buffer
  // and is stored in its order, though the copy is row-major (found by the fuzzer, seed 1405269).
  Tensor c = x.t.contiguous();
  Tensor t = lf::tanh(c);
  expect_same(lf::reshape(t, {-1}) - lf::reshape(c, {-1}), "flatten of a value computed from a copy");
  // The same programs after the values are realized (the layout known), in a new flush.
  Tensor r = lf::relu(x.t) * 1.0f;
  lf::sync();
  EXPECT_EQ(r.strides(), channels_last(s));
  expect_same(lf::reshape(r, {4, -1}) + 0.0f, "flatten of a realized channels-last value");
}

// contiguous() of a pending value that will be computed channels-last copies it: its data_ptr is
// row-major, as documented (a pending value of another shape is returned as it is).
TEST(ChannelsLast, ContiguousOfAPendingValueIsRowMajor) {
  const Shape s{2, 3, 4, 5};
  NhwcInput x(s, 9);
  Tensor y = lf::relu(x.t) + 1.0f;
  lf::test::Values ref = lf::test::reference_values(y);
  Tensor c = y.contiguous();
  const float* p = c.data_ptr<float>();  // a sync point
  EXPECT_EQ(c.strides(), contiguous(s));
  std::vector<double> got(p, p + lf::shape_numel(s));
  lf::test::Values v = ref;
  v.f = got;
  EXPECT_EQ(lf::test::compare(ref, v, lf::test::Tolerance{1e-6, 1e-6}), "");
  EXPECT_EQ(y.strides(), channels_last(s));  // the value itself, realized by the same flush
  Tensor flat = lf::exp(lf::reshape(x.t, {2, 60}));  // 2-D: no copy made
  EXPECT_EQ(flat.contiguous().node(), flat.node());
}

// A flush replayed from its plan hands its outputs the layout they were recorded with.
TEST(ChannelsLast, ReplayedPlansKeepTheLayout) {
  const Shape s{3, 8, 6, 5};
  NhwcInput x(s, 4);
  uint64_t replayed = lf::cache_stats().plans_replayed;
  for (int i = 0; i < 4; ++i) {
    for (float& v : x.data) v += 0.25f;  // new data in the borrowed buffer, the same program
    Tensor y = lf::tanh(x.t * 2.0f);
    Tensor flat = lf::reshape(y, {3, -1}) * 2.0f;
    lf::test::Values ry = lf::test::reference_values(y), rf = lf::test::reference_values(flat);
    lf::sync();
    EXPECT_EQ(y.strides(), channels_last(s)) << "iteration " << i;
    EXPECT_EQ(lf::test::compare(ry, lf::test::fused_values(y), lf::test::Tolerance{1e-6, 1e-6}), "") << i;
    EXPECT_EQ(lf::test::compare(rf, lf::test::fused_values(flat), lf::test::Tolerance{1e-6, 1e-6}), "") << i;
  }
  if (lf::rt::config().flush_plans) {
    EXPECT_GE(lf::cache_stats().plans_replayed - replayed, 2u);
  }
}

}  // namespace
