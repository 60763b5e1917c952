// Optimizers (include/lazyfuse/optim.h), in torch.optim's formulas (1.13, the single-tensor
// paths), recorded as elementwise ops: each parameter's update is one fused kernel with its
// gradient's last ops.
#include "lazyfuse/optim.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "frontend/record.h"
#include "frontend/trace.h"
#include "lazyfuse/ops.h"

namespace lf::optim {
namespace {

const Tensor& grad_of(const char* op, const Params& grads, const std::string& name, const Tensor& p) {
  auto it = grads.find(name);
  if (it == grads.end()) detail::fail(op, "no gradient for parameter \"" + name + "\"", {&p});
  const Tensor& g = it->second;
  if (!g.defined() || g.shape() != p.shape())
    detail::fail(op, "the gradient of \"" + name + "\" does not have its parameter's shape", {&g, &p});
  return g;
}

// The updated values are computed with the next sync point's work (the loss read), not left to
// grow a chain of pending updates no read ever asks for.
void at_next_sync(const Params& params, const Params& state) {
  for (const auto& [name, t] : params) detail::compute_at_next_sync(t.node());
  for (const auto& [name, t] : state) detail::compute_at_next_sync(t.node());
}

}  // namespace

SGD::SGD(SGDOptions o) : options(o) {}

void SGD::step(Params& params, const Params& grads) {
  const SGDOptions& o = options;
  for (auto& [name, p] : params) {
    Tensor d = cast(grad_of("optim::SGD", grads, name, p), p.dtype());
    if (o.weight_decay != 0) d = d + p * o.weight_decay;
    if (o.momentum != 0) {
      auto it = state.find(name);
      Tensor buf = it == state.end() ? d : it->second * o.momentum + d * (1 - o.dampening);
      state[name] = buf;
      d = o.nesterov ? d + buf * o.momentum : buf;
    }
    p = p - d * o.lr;
  }
  at_next_sync(params, state);
}

Adam::Adam(AdamOptions o, bool decoupled_weight_decay) : options(o), decoupled_(decoupled_weight_decay) {}

void Adam::step(Params& params, const Params& grads) {
  const AdamOptions& o = options;
  ++steps;
  const double t = static_cast<double>(steps);
  const double step_size = o.lr / (1 - std::pow(o.beta1, t));
  const double bc2_sqrt = std::sqrt(1 - std::pow(o.beta2, t));
  for (auto& [name, p] : params) {
    const DType sd = o.state_dtype.value_or(p.dtype());
    Tensor w = cast(p, sd);
    Tensor g = cast(grad_of(decoupled_ ? "optim::AdamW" : "optim::Adam", grads, name, p), sd);
    if (o.weight_decay != 0) {
      if (decoupled_) w = w * (1 - o.lr * o.weight_decay);
      else g = g + w * o.weight_decay;
    }
    auto moment = [&](const std::string& key) {
      auto it = state.find(key);
      return it == state.end() ? zeros_like(w) : it->second;
    };
    Tensor m = moment("m." + name) * o.beta1 + g * (1 - o.beta1);
    Tensor v = moment("v." + name) * o.beta2 + g * g * (1 - o.beta2);
    state["m." + name] = m;
    state["v." + name] = v;
    if (o.amsgrad) {
      v = maximum(moment("vmax." + name), v);
      state["vmax." + name] = v;
    }
    Tensor denom = sqrt(v) / bc2_sqrt + o.eps;
    p = cast(w - m / denom * step_size, p.dtype());
  }
  at_next_sync(params, state);
}

Tensor clip_grad_norm(Params& grads, double max_norm) {
  if (grads.empty()) detail::fail("optim::clip_grad_norm", "no gradients");
  DType acc = DType::Float32;
  for (const auto& [name, g] : grads)
    if (g.dtype() == DType::Float64) acc = DType::Float64;
  Tensor total;
  for (const auto& [name, g] : grads) {
    Tensor s = sum(square(cast(g, acc)));
    total = total.defined() ? total + s : s;
  }
  Tensor norm = sqrt(total);
  Tensor scale = clamp_max(max_norm / (norm + 1e-6), 1.0);
  for (auto& [name, g] : grads) g = cast(g * cast(scale, g.dtype()), g.dtype());
  return norm;
}

double step_lr(double base, int64_t t, int64_t step_size, double gamma) {
  return base * std::pow(gamma, static_cast<double>(t / std::max<int64_t>(step_size, 1)));
}

double cosine_lr(double base, int64_t t, int64_t t_max, double eta_min) {
  double phase = std::numbers::pi * static_cast<double>(t) / static_cast<double>(std::max<int64_t>(t_max, 1));
  return eta_min + (base - eta_min) * (1 + std::cos(phase)) / 2;
}

double linear_warmup(double base, int64_t t, int64_t warmup) {
  if (warmup <= 0 || t + 1 >= warmup) return base;
  return base * static_cast<double>(t + 1) / static_cast<double>(warmup);
}

}  // namespace lf::optim
