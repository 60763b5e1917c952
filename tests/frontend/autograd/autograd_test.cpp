// lf::grad against float64 central differences, for every differentiable row of the op table and
// the composites users call (through their primitives), fused and unfused; ties, kinks, errors,
// lf::KeepGraph and value_and_grad.
#include <stdlib.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "codegen/ir/node.h"
#include "frontend/autograd/gradcheck.h"
#include "frontend/test_util.h"

namespace lf::test {
namespace {

// On the default device (CUDA on a GPU machine), fused and unfused.
class Autograd : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    saved_fusion_ = fusion_enabled();
    set_fusion_enabled(GetParam());
  }
  void TearDown() override { set_fusion_enabled(saved_fusion_); }

 private:
  bool saved_fusion_ = true;
};

INSTANTIATE_TEST_SUITE_P(FusedAndUnfused, Autograd, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fused" : "Unfused"; });

Fn unary(Tensor (*op)(const Tensor&)) {
  return [op](const std::vector<Tensor>& x) { return op(x[0]); };
}

TEST_P(Autograd, ElementwiseUnary) {
  const Shape s{2, 3};
  struct Case {
    const char* name;
    Tensor (*op)(const Tensor&);
    double lo, hi;
  };
  const Case cases[] = {
      {"neg", neg, -2, 2},          {"abs", abs, 0.1, 2},          {"exp", exp, -2, 2},
      {"exp2", exp2, -2, 2},        {"log", log, 0.2, 3},          {"log2", log2, 0.2, 3},
      {"log1p", log1p, -0.5, 2},    {"expm1", expm1, -2, 2},       {"sqrt", sqrt, 0.2, 3},
      {"rsqrt", rsqrt, 0.2, 3},     {"sin", sin, -3, 3},           {"cos", cos, -3, 3},
      {"tan", tan, -1, 1},          {"asin", asin, -0.9, 0.9},     {"acos", acos, -0.9, 0.9},
      {"atan", atan, -3, 3},        {"sinh", sinh, -2, 2},         {"cosh", cosh, -2, 2},
      {"tanh", tanh, -2, 2},        {"sigmoid", sigmoid, -3, 3},   {"relu", relu, 0.1, 2},
      {"silu", silu, -3, 3},        {"hardswish", hardswish, -2.9, 2.9}, {"logit", logit, 0.1, 0.9},
      {"erf", erf, -2, 2},          {"reciprocal", reciprocal, 0.3, 2}, {"square", square, -2, 2},
      {"floor", floor, 0.1, 0.9},   {"sign", sign, 0.1, 2},        {"contiguous", contiguous, -2, 2},
  };
  for (const Case& c : cases) gradcheck(c.name, unary(c.op), {{s, c.lo, c.hi}});
  gradcheck("relu below 0", unary(relu), {{s, -2, -0.1}});
  gradcheck("hardswish outside", unary(hardswish), {{s, 3.1, 5}});
  gradcheck("gelu", [](const auto& x) { return gelu(x[0]); }, {{s}});
  gradcheck("gelu tanh", [](const auto& x) { return gelu(x[0], true); }, {{s}});
}

TEST_P(Autograd, ElementwiseBinaryWithBroadcasts) {
  struct Case {
    const char* name;
    Fn f;
    double lo, hi;
  };
  const Case cases[] = {
      {"add", [](const auto& x) { return x[0] + x[1]; }, -2, 2},
      {"sub", [](const auto& x) { return x[0] - x[1]; }, -2, 2},
      {"mul", [](const auto& x) { return x[0] * x[1]; }, -2, 2},
      {"div", [](const auto& x) { return x[0] / x[1]; }, 0.5, 2},
      {"pow", [](const auto& x) { return pow(x[0], x[1]); }, 0.5, 2},
      {"atan2", [](const auto& x) { return atan2(x[0], x[1]); }, 0.5, 2},
      {"remainder", [](const auto& x) { return remainder(x[0] * 3, x[1]); }, 0.6, 0.9},
      {"fmod", [](const auto& x) { return fmod(x[0] * 3, x[1]); }, 0.6, 0.9},
  };
  for (const Case& c : cases) {
    gradcheck(std::string(c.name) + " same shape", c.f, {{{2, 3}, c.lo, c.hi}, {{2, 3}, c.lo, c.hi}});
    gradcheck(std::string(c.name) + " broadcast", c.f, {{{2, 1}, c.lo, c.hi}, {{3}, c.lo, c.hi}});
  }
  gradcheck("scalar operands", [](const auto& x) { return (x[0] * 3 + 1) / 2 - pow(x[0], 2.0); }, {{{4}}});
  gradcheck("maximum", [](const auto& x) { return maximum(x[0], x[1]); }, {{{2, 3}}, {{2, 3}}});
  gradcheck("minimum", [](const auto& x) { return minimum(x[0], x[1]); }, {{{2, 3}}, {{3}}});
  gradcheck("where", [](const auto& x) { return where(x[0] > 0, x[0] * 2, x[1]); }, {{{2, 3}}, {{2, 3}}});
  gradcheck("clamp", [](const auto& x) { return clamp(x[0], -1.0, 1.0); }, {{{6}}}, 1e-6,
            {{-1.5, -0.5, 0.2, 0.7, 1.3, 1.9}});
  gradcheck("lerp", [](const auto& x) { return lerp(x[0], x[1], x[2]); }, {{{3}}, {{3}}, {{3}}});
}

TEST_P(Autograd, Reductions) {
  gradcheck("sum all", [](const auto& x) { return sum(x[0]); }, {{{2, 3}}});
  gradcheck("sum dims", [](const auto& x) { return sum(x[0], {0, 2}); }, {{{2, 3, 2}}});
  gradcheck("sum keepdim", [](const auto& x) { return sum(x[0], {1}, true); }, {{{2, 3}}});
  gradcheck("mean", [](const auto& x) { return mean(x[0], {-1}); }, {{{2, 3}}});
  gradcheck("prod", [](const auto& x) { return prod(x[0], {1}); }, {{{2, 4}}});
  gradcheck("prod with zeros", [](const auto& x) { return prod(x[0], {1}); }, {{{3, 3}}}, 1e-6,
            {{0, 2, 3, 1, 0, 0, 2, 0.5, 4}});
  gradcheck("prod all", [](const auto& x) { return prod(x[0]); }, {{{2, 2}}});
  gradcheck("max", [](const auto& x) { return max(x[0], {1}); }, {{{2, 4}}});
  gradcheck("min keepdim", [](const auto& x) { return min(x[0], {0}, true); }, {{{3, 2}}});
  gradcheck("var", [](const auto& x) { return var(x[0], {1}); }, {{{2, 5}}});
  gradcheck("std", [](const auto& x) { return std(x[0], {0}, false, 0); }, {{{4, 2}}});
  gradcheck("logsumexp", [](const auto& x) { return logsumexp(x[0], {1}); }, {{{2, 4}}});
  gradcheck("norm", [](const auto& x) { return norm(x[0], 2, {1}); }, {{{2, 3}}});
  gradcheck("norm 1", [](const auto& x) { return norm(x[0], 1); }, {{{5}, 0.1, 2}});
}

TEST_P(Autograd, MaxSplitsTiesEvenlyAsPyTorch) {
  Tensor x = from_vector(std::vector<double>{1, 3, 3, 2}, {4});
  expect_close(grad(max(x), {x})[0], {0, 0.5, 0.5, 0});
  Tensor m = from_vector(std::vector<double>{1, kNaN, 2}, {3});
  expect_close(grad(max(m), {m})[0], {0, 1, 0});  // NaN is the maximum
  Tensor y = from_vector(std::vector<double>{2, 2}, {2});
  expect_close(grad(sum(maximum(y, from_vector(std::vector<double>{2, 1}, {2}))), {y})[0], {0.5, 1});
  Tensor r = from_vector(std::vector<double>{-1, 0, 1}, {3});
  expect_close(grad(sum(relu(r)), {r})[0], {0, 0, 1});  // the kink has gradient 0
  Tensor h = from_vector(std::vector<double>{-3, 3}, {2});
  expect_close(grad(sum(hardswish(h)), {h})[0], {0, 1});  // PyTorch 2.x: the outer slopes (1.13: -0.5, 1.5)
}

TEST_P(Autograd, Views) {
  gradcheck("reshape", [](const auto& x) { return reshape(x[0], {3, 2}) * from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {3, 2}); }, {{{2, 3}}});
  gradcheck("transpose", [](const auto& x) { return matmul(transpose(x[0], 0, 1), x[0]); }, {{{2, 3}}});
  gradcheck("permute", [](const auto& x) { return permute(x[0], {2, 0, 1}) * 2; }, {{{2, 3, 2}}});
  gradcheck("slice with step", [](const auto& x) { return slice(x[0], 1, 1, 6, 2); }, {{{2, 6}}});
  gradcheck("slice twice", [](const auto& x) { return slice(x[0], 0, 1, 3) + slice(x[0], 0, 0, 2); }, {{{3, 2}}});
  gradcheck("expand", [](const auto& x) { return expand(x[0], {3, 2, 4}); }, {{{2, 1}}});
  gradcheck("select", [](const auto& x) { return select(x[0], 1, 2); }, {{{2, 3}}});
  gradcheck("diagonal", [](const auto& x) { return diagonal(x[0], 1); }, {{{3, 4}}});
  gradcheck("squeeze unsqueeze", [](const auto& x) { return unsqueeze(squeeze(x[0], 1), 0); }, {{{3, 1}}});
  gradcheck("flip", [](const auto& x) { return flip(x[0], {0, 1}) * x[0]; }, {{{2, 3}}});
  gradcheck("roll", [](const auto& x) { return roll(x[0], {1}, {1}) * x[0]; }, {{{2, 3}}});
  gradcheck("repeat", [](const auto& x) { return repeat(x[0], {2, 3}); }, {{{2, 2}}});
  gradcheck("tile", [](const auto& x) { return tile(x[0], {2}); }, {{{3}}});
  gradcheck("repeat_interleave", [](const auto& x) { return repeat_interleave(x[0], 2, 0); }, {{{3}}});
  gradcheck("tril", [](const auto& x) { return tril(x[0]); }, {{{3, 3}}});
  gradcheck("cat", [](const auto& x) { return cat({x[0], x[1] * 2, x[0]}, 1); }, {{{2, 1}}, {{2, 3}}});
  gradcheck("stack", [](const auto& x) { return stack({x[0], x[1]}, 1); }, {{{3}}, {{3}}});
  gradcheck("split", [](const auto& x) { return split(x[0], 2, 0)[1] * 3; }, {{{5}}});
  for (PadMode mode : {PadMode::Constant, PadMode::Reflect, PadMode::Replicate, PadMode::Circular})
    gradcheck("pad " + std::to_string(static_cast<int>(mode)),
              [mode](const auto& x) { return pad(x[0], {1, 2, 2, 1}, mode, 0.5); }, {{{1, 3, 3}}});
  gradcheck("index_put slices", [](const auto& x) { return index_put(x[0], {slice(1, 3)}, x[1]); }, {{{4, 2}}, {{2}}});
}

TEST_P(Autograd, Matmul) {
  gradcheck("2-d", [](const auto& x) { return matmul(x[0], x[1]); }, {{{3, 4}}, {{4, 2}}});
  gradcheck("batched", [](const auto& x) { return matmul(x[0], x[1]); }, {{{2, 3, 4}}, {{2, 4, 2}}});
  gradcheck("broadcast batch", [](const auto& x) { return matmul(x[0], x[1]); }, {{{2, 3, 4}}, {{4, 2}}});
  gradcheck("vector", [](const auto& x) { return matmul(x[0], x[1]); }, {{{3, 4}}, {{4}}});
  gradcheck("dot", [](const auto& x) { return matmul(x[0], x[1]); }, {{{4}}, {{4}}});
  gradcheck("transposed", [](const auto& x) { return matmul(transpose(x[0], 0, 1), x[1]); }, {{{4, 3}}, {{4, 2}}});
}

TEST_P(Autograd, NeuralNetworkOps) {
  gradcheck("softmax", [](const auto& x) { return softmax(x[0], -1); }, {{{2, 4}}});
  gradcheck("softmax dim 0", [](const auto& x) { return softmax(x[0], 0); }, {{{3, 2}}});
  gradcheck("log_softmax", [](const auto& x) { return log_softmax(x[0], 1); }, {{{2, 4}}});
  gradcheck("layer_norm", [](const auto& x) { return layer_norm(x[0], 1, x[1], x[2]); }, {{{3, 4}}, {{4}}, {{4}}}, 1e-5);
  gradcheck("rms_norm", [](const auto& x) { return rms_norm(x[0], x[1]); }, {{{3, 4}}, {{4}}}, 1e-5);
  gradcheck("group_norm", [](const auto& x) { return group_norm(x[0], 2, x[1], x[2]); },
            {{{2, 4, 3}}, {{4}}, {{4}}}, 1e-5);
  gradcheck("batch_norm training", [](const auto& x) { return batch_norm_training(x[0], x[1], x[2]).output; },
            {{{4, 2, 3}}, {{2}}, {{2}}}, 1e-5);
  gradcheck("batch_norm inference", [](const auto& x) { return batch_norm(x[0], x[1], x[2] * x[2] + 1, x[3]); },
            {{{2, 2, 3}}, {{2}}, {{2}}, {{2}}});
  gradcheck("dropout", [](const auto& x) { manual_seed(7); return dropout(x[0], 0.5); }, {{{16}}});
}

TEST_P(Autograd, Convolution) {
  auto conv = [](Size2 stride, Padding2 padding, Size2 dilation, int64_t groups) {
    return [=](const std::vector<Tensor>& x) { return conv2d(x[0], x[1], x[2], stride, padding, dilation, groups); };
  };
  gradcheck("conv2d", conv(1, 0, 1, 1), {{{2, 2, 5, 5}}, {{3, 2, 3, 3}}, {{3}}}, 1e-5);
  gradcheck("conv2d stride padding", conv(2, 1, 1, 1), {{{1, 2, 6, 5}}, {{2, 2, 3, 2}}, {{2}}}, 1e-5);
  gradcheck("conv2d dilation", conv(1, Padding2(2, 1), Size2(2, 1), 1), {{{1, 1, 6, 6}}, {{2, 1, 3, 3}}, {{2}}}, 1e-5);
  gradcheck("conv2d groups", conv(Size2(1, 2), 1, 1, 2), {{{2, 4, 4, 5}}, {{6, 2, 3, 3}}, {{6}}}, 1e-5);
  gradcheck("conv2d same", conv(1, "same", 1, 1), {{{1, 2, 4, 4}}, {{2, 2, 2, 2}}, {{2}}}, 1e-5);
  gradcheck("conv1d", [](const auto& x) { return conv1d(x[0], x[1], {}, 2, 1); }, {{{2, 2, 7}}, {{3, 2, 3}}}, 1e-5);
  gradcheck("conv_transpose2d", [](const auto& x) { return conv_transpose2d(x[0], x[1], {}, 2, 1); },
            {{{1, 2, 3, 3}}, {{2, 3, 3, 3}}}, 1e-5);
}

TEST_P(Autograd, Pooling) {
  gradcheck("max_pool2d", [](const auto& x) { return max_pool2d(x[0], 2); }, {{{1, 2, 4, 4}}});
  gradcheck("max_pool2d stride padding ceil", [](const auto& x) { return max_pool2d(x[0], 3, 2, 1, true); },
            {{{2, 1, 5, 6}}});
  gradcheck("max_pool2d dilation", [](const auto& x) { return max_pool2d(x[0], 2, 1, 0, false, 2); }, {{{1, 1, 5, 5}}});
  gradcheck("avg_pool2d", [](const auto& x) { return avg_pool2d(x[0], 3, 2, 1); }, {{{1, 2, 5, 5}}});
  gradcheck("avg_pool2d no pad count ceil", [](const auto& x) { return avg_pool2d(x[0], 3, 2, 1, true, false); },
            {{{1, 1, 6, 5}}});
  gradcheck("adaptive_avg_pool2d", [](const auto& x) { return adaptive_avg_pool2d(x[0], {3, 2}); }, {{{1, 2, 5, 7}}});
  gradcheck("adaptive_max_pool2d", [](const auto& x) { return adaptive_max_pool2d(x[0], {2, 3}); }, {{{1, 1, 5, 7}}});
  for (const char* mode : {"nearest", "bilinear", "bicubic", "area"})
    gradcheck(std::string("interpolate ") + mode, [mode](const auto& x) { return interpolate(x[0], {5, 3}, mode); },
              {{{1, 1, 3, 4}}}, 1e-5);
}

TEST_P(Autograd, IndexingAndScans) {
  Tensor idx = from_vector(std::vector<int64_t>{2, 0, 2, -1}, {4});
  gradcheck("index_select", [idx](const auto& x) { return index_select(x[0], 0, idx); }, {{{3, 2}}});
  gradcheck("embedding", [idx](const auto& x) { return embedding(x[0], reshape(idx, {2, 2})); }, {{{4, 3}}});
  Tensor g2 = from_vector(std::vector<int64_t>{0, 2, 1, 1, 0, 0}, {2, 3});
  gradcheck("gather", [g2](const auto& x) { return gather(x[0], 1, g2); }, {{{2, 3}}});
  gradcheck("take", [idx](const auto& x) { return take(x[0], idx); }, {{{2, 2}}});
  gradcheck("scatter_add", [g2](const auto& x) { return scatter_add(x[0], 1, g2, x[1]); }, {{{2, 3}}, {{2, 3}}});
  gradcheck("index_add", [idx](const auto& x) { return index_add(x[0], 0, idx, x[1]); }, {{{4, 2}}, {{4, 2}}});
  gradcheck("scatter", [](const auto& x) {
    return scatter(x[0], 1, from_vector(std::vector<int64_t>{0, 2, 1, 0}, {2, 2}), x[1]); }, {{{2, 3}}, {{2, 2}}});
  gradcheck("scatter_reduce mean", [g2](const auto& x) { return scatter_reduce(x[0], 1, g2, x[1], "mean"); },
            {{{2, 3}}, {{2, 3}}});
  gradcheck("scatter_reduce sum without self", [g2](const auto& x) {
    return scatter_reduce(x[0], 1, g2, x[1], "sum", false); }, {{{2, 3}}, {{2, 3}}});
  gradcheck("scatter_reduce amax", [g2](const auto& x) { return scatter_reduce(x[0], 1, g2, x[1], "amax"); },
            {{{2, 3}}, {{2, 3}}});
  gradcheck("scatter_reduce amin without self", [g2](const auto& x) {
    return scatter_reduce(x[0], 1, g2, x[1], "amin", false); }, {{{2, 3}}, {{2, 3}}});
  gradcheck("scatter_reduce prod", [g2](const auto& x) { return scatter_reduce(x[0], 1, g2, x[1], "prod"); },
            {{{2, 3}, 0.5, 2}, {{2, 3}, 0.5, 2}});
  gradcheck("scatter_reduce prod with a zero", [g2](const auto& x) { return scatter_reduce(x[0], 1, g2, x[1], "prod"); },
            {{{2, 3}}, {{2, 3}}}, 1e-6, {{0, 1.5, 2, -1, 0.5, 3}, {2, 0, 1.5, 3, -2, 0}});
  gradcheck("index_put", [](const auto& x) {
    return index_put(x[0], {from_vector(std::vector<int64_t>{1, 3}, {2})}, x[1], true); }, {{{4, 2}}, {{2, 2}}});
  gradcheck("masked_fill", [](const auto& x) { return masked_fill(x[0], x[0] > 0, 2.0); }, {{{2, 3}}});
  gradcheck("cumsum", [](const auto& x) { return cumsum(x[0], 1); }, {{{2, 4}}});
  gradcheck("cumprod", [](const auto& x) { return cumprod(x[0], 1); }, {{{2, 4}}});
  gradcheck("cumprod with zeros", [](const auto& x) { return cumprod(x[0], 0); }, {{{5}}}, 1e-6, {{2, 0, 3, 0, 1.5}});
  gradcheck("logcumsumexp", [](const auto& x) { return logcumsumexp(x[0], 0); }, {{{5}}});
  gradcheck("cummax values", [](const auto& x) { return cummax(x[0], 0).first; }, {{{5}}});
  gradcheck("sort values", [](const auto& x) { return sort(x[0], 1).first; }, {{{2, 4}}});
  gradcheck("topk values", [](const auto& x) { return topk(x[0], 2).first; }, {{{2, 4}}});
  gradcheck("median", [](const auto& x) { return median(x[0], 1).first; }, {{{2, 5}}});
}

TEST_P(Autograd, SixteenBitAndFloat32Inputs) {
  for (DType d : {DType::Float32, DType::Float16, DType::BFloat16}) {
    Tensor x = cast(from_vector(std::vector<double>{0.5, -1, 2}, {3}), d);
    Tensor g = grad(sum(exp(x) * x), {x})[0];
    EXPECT_EQ(g.dtype(), d);
    double tol = d == DType::Float32 ? 1e-6 : 2e-2;
    expect_close(g, {std::exp(0.5) * 1.5, 0.0, std::exp(2.0) * 3}, tol);
  }
  // A cast between float dtypes passes the gradient back in the input's dtype.
  Tensor h = cast(from_vector(std::vector<double>{1, 2}, {2}), DType::Float16);
  Tensor g = grad(sum(cast(h, DType::Float32) * 3), {h})[0];
  EXPECT_EQ(g.dtype(), DType::Float16);
  expect_close(g, {3, 3});
}

TEST_P(Autograd, SizeZeroAndSizeOne) {
  Tensor e = zeros({0, 3}, DType::Float64);
  Tensor g = grad(sum(exp(e)), {e})[0];
  EXPECT_EQ(g.shape(), (Shape{0, 3}));
  gradcheck("size-1 dims", [](const auto& x) { return sum(x[0] * x[1], {1}); }, {{{1, 1}}, {{1, 4}}});
  gradcheck("rank 0", [](const auto& x) { return x[0] * x[0]; }, {{{}}});
}

TEST_P(Autograd, InputsThatDoNotReachTheOutput) {
  Tensor x = from_vector(std::vector<double>{1, 2}, {2});
  Tensor unused = from_vector(std::vector<double>{3}, {1});
  std::vector<Tensor> g = grad(sum(x * x), {x, unused});
  expect_close(g[0], {2, 4});
  expect_close(g[1], {0});
  expect_error([&] { grad(sum(x * x), {x, unused}, {}, false); }, {"lf::grad", "does not depend on input 1"});
  // An input the output reaches through another input: both gradients, the chain included.
  Tensor y = x * 3;
  std::vector<Tensor> gy = grad(sum(y * x), {x, y});
  expect_close(gy[0], {6, 12});  // d/dx (3 x^2)
  expect_close(gy[1], {1, 2});
}

TEST_P(Autograd, BadInputIsAnErrorAtTheCall) {
  Tensor x = from_vector(std::vector<double>{1, 2}, {2});
  expect_error([&] { grad(x * 2, {x}); }, {"lf::grad", "2 elements", "cotangent"});
  expect_error([&] { grad(argmax(x), {x}); }, {"lf::grad", "int64", "floating-point"});
  expect_error([&] { grad(x * 2, {x}, ones({3}, DType::Float64)); }, {"lf::grad", "cotangent", "float64[3]"});
  Tensor i = from_vector(std::vector<int64_t>{1, 2}, {2});
  expect_error([&] { grad(sum(x), {i}); }, {"lf::grad", "input 0", "int64"});
  expect_error([&] { grad(Tensor(), {x}); }, {"lf::grad", "empty"});
  expect_error([&] { grad(sum(x), {Tensor()}); }, {"lf::grad", "input 0", "empty"});
  // A vector-Jacobian product.
  expect_close(grad(x * x, {x}, from_vector(std::vector<double>{1, -1}, {2}))[0], {2, -4});
}

TEST_P(Autograd, KeepGraphDifferentiatesThroughValuesASyncComputed) {
  Tensor w = from_vector(std::vector<double>{0.5, -1}, {2});
  {
    KeepGraph keep;
    Tensor h = tanh(w * 2);
    Tensor loss = sum(h * h);
    EXPECT_GT(loss.item<double>(), 0);  // a sync point computes h and loss
    std::vector<double> t = tanh(w * 2).to_vector<double>();
    expect_close(grad(loss, {w})[0], {4 * t[0] * (1 - t[0] * t[0]), 4 * t[1] * (1 - t[1] * t[1])});
  }
  // Without it the computed loss is a constant: the graph behind it was freed.
  Tensor loss = sum(w * w);
  loss.item<double>();
  expect_close(grad(loss, {w})[0], {0, 0});
  expect_error([&] { grad(loss, {w}, {}, false); }, {"lf::grad", "sync point"});
}

TEST_P(Autograd, ValueAndGradOverParams) {
  Params p{{"w", from_vector(std::vector<double>{1, 2, 3}, {3})}, {"b", from_vector(std::vector<double>{0.5}, {1})}};
  auto f = value_and_grad([](const Params& q) { return sum(square(q.at("w") * 2 + q.at("b"))); });
  auto [value, g] = f(p);
  EXPECT_NEAR(value.item<double>(), 2.5 * 2.5 + 4.5 * 4.5 + 6.5 * 6.5, 1e-12);
  expect_close(g.at("w"), {2 * 2.5 * 2, 2 * 4.5 * 2, 2 * 6.5 * 2});
  expect_close(g.at("b"), {2 * (2.5 + 4.5 + 6.5)});
  // The value a loop keeps (a list of losses) does not keep the step's graph once computed.
  value.item<double>();
  EXPECT_EQ(value.node()->history, nullptr);
  auto h = value_and_grad([](const std::vector<Tensor>& x) { return sum(x[0] * x[0]); });
  expect_close(h({p.at("w")}).second[0], {2, 4, 6});
}

TEST_P(Autograd, SecondDerivativeOfThePendingGraph) {
  Tensor x = from_vector(std::vector<double>{0.3, 1.2}, {2});
  Tensor dx = grad(sum(x * x * x), {x})[0];
  expect_close(grad(sum(dx), {x})[0], {6 * 0.3, 6 * 1.2});
}

}  // namespace
}  // namespace lf::test

namespace lf::test {
namespace {

TEST(Checkpoints, ParamsAndOptimizerStateRoundTripBothFormats) {
  char tmpl[] = "/tmp/lazyfuse-ckpt-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  Params p{{"w", from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2})}, {"b", cast(ones({2}), DType::BFloat16)}};
  for (const char* ext : {".npz", ".safetensors"}) {
    SCOPED_TRACE(ext);
    const std::string path = dir + "/ckpt" + ext;
    Params saved = p;
    if (std::string(ext) == ".npz") saved["b"] = cast(saved["b"], DType::Float32);  // numpy has no bfloat16
    save_params(path, saved);
    Params back = load_params(path, p);
    EXPECT_EQ(back.at("b").dtype(), DType::BFloat16);
    expect_close(back.at("w"), {1, 2, 3, 4});
    Params wrong{{"w", zeros({4})}, {"b", zeros({2})}};
    expect_error([&] { load_params(path, wrong); }, {"lf::load_params", path, "tensor \"w\"", "[2, 2]", "[4]"});
    Params missing{{"w", zeros({2, 2})}, {"b", zeros({2})}, {"c", zeros({1})}};
    expect_error([&] { load_params(path, missing); }, {"lf::load_params", "no tensor \"c\""});
    Params fewer{{"w", zeros({2, 2})}};
    expect_error([&] { load_params(path, fewer); }, {"tensor \"b\" is not one of the parameters"});
    EXPECT_EQ(load_params(path, fewer, true).size(), 1u);
  }
  std::system(("rm -rf '" + dir + "'").c_str());
}

}  // namespace
}  // namespace lf::test

namespace lf::test {
namespace {

TEST(Detach, IsTheSameValueAndAConstantToGrad) {
  Tensor x = from_vector(std::vector<double>{1, 2, 3}, {3});
  expect_close(grad(sum(detach(x) * x), {x})[0], {1, 2, 3});  // d/dx (c x) at c = x
  Tensor y = x * 2;                                            // pending
  expect_close(grad(sum(detach(y) * y), {x})[0], {4, 8, 12});
  expect_close(detach(y), {2, 4, 6});
}

// embedding's padding_idx: the padding row's lookups give the same values and no gradient.
TEST(Detach, EmbeddingPaddingIdxRowGetsNoGradient) {
  Tensor w = from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor idx = from_vector(std::vector<int64_t>{0, 2, 2, 1}, {4});
  expect_close(embedding(w, idx, 2), {1, 2, 5, 6, 5, 6, 3, 4});
  expect_close(grad(sum(embedding(w, idx, 2)), {w})[0], {1, 1, 1, 1, 0, 0});
  expect_close(grad(sum(embedding(w, idx, -1)), {w})[0], {1, 1, 1, 1, 0, 0});
}

// linear's weight gradient comes out row-major (g^T x, not a transposed view of x^T g that every
// reader copies), with the same values; a transpose's cotangent that is itself a transpose is its
// source (vjp_permute composes them).
TEST(Detach, LinearWeightGradientIsRowMajor) {
  Tensor x = from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor w = from_vector(std::vector<double>{1, -1, 2, 0.5}, {2, 2});
  Tensor loss = sum(square(linear(x, w)));
  Tensor g = grad(loss, {w})[0];
  // d/dw sum((x w^T)^2) = 2 (x w^T)^T x
  Tensor want = matmul(transpose(matmul(x, transpose(w, 0, 1)), 0, 1), x) * 2.0;
  expect_close(g, want.to_vector<double>());
  EXPECT_TRUE(g.is_contiguous());
  // A weight that is itself a transpose: linear(x, w^T) = x w; the gradients 2 y w^T and 2 x^T y.
  Tensor y = matmul(x, w);
  std::vector<Tensor> gs = grad(sum(square(linear(x, transpose(w, 0, 1)))), {x, w});
  expect_close(gs[0], (matmul(y, transpose(w, 0, 1)) * 2.0).to_vector<double>());
  expect_close(gs[1], (matmul(transpose(x, 0, 1), y) * 2.0).to_vector<double>());
}

}  // namespace
}  // namespace lf::test
