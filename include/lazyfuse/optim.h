// Optimizers, gradient clipping and learning-rate schedules with torch.optim's formulas. Updates
// are lazy like every op: step() records them, so the update fuses with the backward pass that
// made the gradients. The learning rate and the step count enter as numbers (kernel arguments),
// so a schedule never recompiles. Value semantics: step() rebinds the handles in `params`; other
// handles to the old values are untouched.
#pragma once

#include <cstdint>
#include <optional>

#include "lazyfuse/autograd.h"
#include "lazyfuse/types.h"

namespace lf::optim {

struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
};

// torch.optim.SGD: g += weight_decay * p; with momentum, b = momentum * b + (1 - dampening) * g
// (b = g at the first step) and g = nesterov ? g + momentum * b : b; p -= lr * g.
class SGD {
 public:
  explicit SGD(SGDOptions options = {});
  void step(Params& params, const Params& grads);
  SGDOptions options;
  // The momentum buffers by parameter name, for checkpoints (lf::savez / load_npz).
  Params state;
};

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9, beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;
  bool amsgrad = false;
  // The dtype of the moments and of the update's arithmetic (float32 for bfloat16 parameters, as
  // mixed-precision training keeps them); by default each parameter's own.
  std::optional<DType> state_dtype = std::nullopt;
};

// torch.optim.Adam (weight decay added to the gradient) and, with decoupled weight decay, AdamW
// (p *= 1 - lr * weight_decay), bias-corrected, with amsgrad's running maximum of v.
class Adam {
 public:
  explicit Adam(AdamOptions options = {}, bool decoupled_weight_decay = false);
  void step(Params& params, const Params& grads);
  AdamOptions options;
  int64_t steps = 0;
  // "m.<name>", "v.<name>" (and "vmax.<name>" with amsgrad) by parameter, for checkpoints; the step
  // count is `steps`.
  Params state;

 private:
  bool decoupled_;
};

inline Adam AdamW(AdamOptions options = {.weight_decay = 1e-2}) { return Adam(options, true); }

// torch.nn.utils.clip_grad_norm_: scales every gradient by min(1, max_norm / (norm + 1e-6)), norm
// the 2-norm of all of them together; returns that norm. Lazy: no sync point.
Tensor clip_grad_norm(Params& grads, double max_norm);

// Learning rates at step t (from 0) for a base rate: StepLR, CosineAnnealingLR and a linear
// warm-up from 0 over `warmup` steps.
double step_lr(double base, int64_t t, int64_t step_size, double gamma = 0.1);
double cosine_lr(double base, int64_t t, int64_t t_max, double eta_min = 0);
double linear_warmup(double base, int64_t t, int64_t warmup);

}  // namespace lf::optim
