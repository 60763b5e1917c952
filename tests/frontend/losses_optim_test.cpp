// Losses and optimizers: gradients against float64 central differences (values and gradients
// against PyTorch are in tests/tools/torch_parity), errors, and an optimizer whose learning rate
// changes every step without compiling anything new.
#include <cmath>
#include <random>
#include <vector>

#include <lazyfuse/losses.h>
#include <lazyfuse/optim.h>

#include "frontend/test_util.h"

namespace lf::test {
namespace {

class Losses : public ::testing::Test {};  // on the default device

std::vector<double> values(int64_t n, double lo, double hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = u(rng);
  return v;
}

// d loss / d x by central differences against lf::grad, for a scalar loss of one input.
void check_grad(const std::function<Tensor(const Tensor&)>& loss, const Shape& shape, double lo, double hi) {
  std::vector<double> x0 = values(shape_numel(shape), lo, hi, 5);
  Tensor x = from_vector(x0, shape);
  std::vector<double> g = grad(loss(x), {x})[0].to_vector<double>();
  for (size_t i = 0; i < x0.size(); ++i) {
    std::vector<double> up = x0, down = x0;
    up[i] += 1e-6;
    down[i] -= 1e-6;
    double numeric = (loss(from_vector(up, shape)).item<double>() - loss(from_vector(down, shape)).item<double>()) / 2e-6;
    EXPECT_NEAR(g[i], numeric, 1e-6 * std::max(1.0, std::fabs(numeric))) << "element " << i;
  }
}

TEST_F(Losses, GradientsAgainstFiniteDifferences) {
  Tensor t = from_vector(std::vector<int64_t>{2, 0, -100, 1}, {4});
  Tensor w = from_vector(std::vector<double>{0.5, 2, 1}, {3});
  check_grad([&](const Tensor& x) { return cross_entropy(x, t, w, -100, Reduction::Mean, 0.1); }, {4, 3}, -2, 2);
  Tensor target = from_vector(values(6, 0, 1, 9), {2, 3});
  check_grad([&](const Tensor& x) { return binary_cross_entropy_with_logits(x, target); }, {2, 3}, -5, 5);
  check_grad([&](const Tensor& x) { return binary_cross_entropy(x, target); }, {2, 3}, 0.1, 0.9);
  check_grad([&](const Tensor& x) { return smooth_l1_loss(x, target, Reduction::Sum, 0.5); }, {2, 3}, -2, 2);
  check_grad([&](const Tensor& x) { return huber_loss(x, target); }, {2, 3}, -2, 2);
  check_grad([&](const Tensor& x) { return sum(softplus(x, 1.5)); }, {6}, -3, 3);
  check_grad([&](const Tensor& x) { return sum(logaddexp(x, target)); }, {2, 3}, -3, 3);
}

TEST_F(Losses, ValuesThatAreEasyToCheckByHand) {
  Tensor logits = from_vector(std::vector<double>{0, 0, 0, 0}, {2, 2});
  Tensor t = from_vector(std::vector<int64_t>{1, 0}, {2});
  EXPECT_NEAR(cross_entropy(logits, t).item<double>(), std::log(2.0), 1e-12);
  Tensor a = from_vector(std::vector<double>{1, 2}, {2});
  Tensor b = from_vector(std::vector<double>{2, 4}, {2});
  EXPECT_DOUBLE_EQ(mse_loss(a, b).item<double>(), 2.5);
  EXPECT_DOUBLE_EQ(l1_loss(a, b, Reduction::Sum).item<double>(), 3);
  // Every target ignored: 0 / 0, as PyTorch.
  EXPECT_TRUE(std::isnan(cross_entropy(logits, from_vector(std::vector<int64_t>{-100, -100}, {2})).item<double>()));
  Tensor inf = from_vector(std::vector<double>{INFINITY, -INFINITY}, {2});
  expect_close(logaddexp(inf, inf), {INFINITY, -INFINITY});
}

TEST_F(Losses, BadInput) {
  Tensor x = zeros({2, 3});
  expect_error([&] { cross_entropy(x, from_vector(std::vector<int64_t>{0}, {1})); },
               {"lf::cross_entropy", "target", "[2]"});
  expect_error([&] { cross_entropy(x, from_vector(std::vector<int64_t>{0, 3}, {2})).item<float>(); },
               {"lf::cross_entropy", "index 3", "size 3"});
  expect_error([&] { cross_entropy(x, from_vector(std::vector<int64_t>{0, -2}, {2})).item<float>(); },
               {"lf::cross_entropy", "out of range"});
  expect_error([&] { cross_entropy(x, from_vector(std::vector<int64_t>{0, 1}, {2}), ones({2})); },
               {"lf::cross_entropy", "weight"});
  expect_error([&] { mse_loss(x, zeros({3})); }, {"lf::mse_loss", "same shape"});
  expect_error([&] { nll_loss(x, zeros({2})); }, {"lf::nll_loss", "int32 or int64"});
}

TEST_F(Losses, AnOptimizerStepWithANewLearningRateCompilesNothing) {
  Params p{{"w", from_vector(values(64, -1, 1, 3), {8, 8})}, {"b", zeros({8})}};
  Tensor x = from_vector(values(32, -1, 1, 4), {4, 8});
  Tensor y = from_vector(std::vector<int64_t>{1, 3, 5, 7}, {4});
  optim::Adam adam({.lr = 0.01});
  auto loss_of = value_and_grad([&](const Params& q) { return cross_entropy(linear(x, q.at("w"), q.at("b")), y); });
  double first = 0, last = 0;
  for (int64_t step = 0; step < 30; ++step) {
    if (step == 3) reset_stats();
    adam.options.lr = optim::cosine_lr(0.05, step, 30);
    auto [loss, g] = loss_of(p);
    optim::clip_grad_norm(g, 1.0);
    adam.step(p, g);
    double l = loss.item<double>();
    if (step == 0) first = l;
    last = l;
  }
  EXPECT_LT(last, first * 0.5);
  EXPECT_EQ(cache_stats().kernels_compiled, 0u) << "a new learning rate or step count recompiled";
}

TEST_F(Losses, SchedulesAndClipping) {
  EXPECT_DOUBLE_EQ(optim::step_lr(1, 5, 2, 0.5), 0.25);
  EXPECT_DOUBLE_EQ(optim::cosine_lr(1, 0, 10), 1);
  EXPECT_NEAR(optim::cosine_lr(1, 10, 10, 0.1), 0.1, 1e-15);
  EXPECT_DOUBLE_EQ(optim::linear_warmup(2, 0, 4), 0.5);
  EXPECT_DOUBLE_EQ(optim::linear_warmup(2, 9, 4), 2);
  Params g{{"a", from_vector(std::vector<double>{3}, {1})}, {"b", from_vector(std::vector<double>{4}, {1})}};
  EXPECT_DOUBLE_EQ(optim::clip_grad_norm(g, 1).item<double>(), 5);
  EXPECT_NEAR(g.at("a").item<double>(), 3 / (5 + 1e-6), 1e-12);
  Params small{{"a", from_vector(std::vector<double>{0.3}, {1})}};
  optim::clip_grad_norm(small, 1);
  EXPECT_DOUBLE_EQ(small.at("a").item<double>(), 0.3);  // below the limit: unchanged
}

TEST_F(Losses, Bfloat16ParametersWithFloat32State) {
  Params p{{"w", cast(from_vector(std::vector<double>{1, -2}, {2}), DType::BFloat16)}};
  optim::Adam adam({.lr = 0.1, .state_dtype = DType::Float32});
  auto [loss, g] = value_and_grad([](const Params& q) { return sum(square(cast(q.at("w"), DType::Float32))); })(p);
  adam.step(p, g);
  EXPECT_EQ(p.at("w").dtype(), DType::BFloat16);
  EXPECT_EQ(adam.state.at("m.w").dtype(), DType::Float32);
  expect_close(p.at("w"), {0.9, -1.9}, 1e-2);
}

}  // namespace
}  // namespace lf::test
