// Losses (include/lazyfuse/losses.h): composites of recorded ops, in PyTorch's formulas (1.13's
// aten/src/ATen/native/Loss.cpp and LossNLL.cpp), so that values and gradients match it.
#include "lazyfuse/losses.h"

#include <limits>
#include <string>

#include "frontend/record.h"
#include "lazyfuse/ops.h"

namespace lf {
namespace {

using detail::fail;

Tensor reduce(const Tensor& loss, Reduction r) {
  switch (r) {
    case Reduction::None: return loss;
    case Reduction::Sum: return sum(loss);
    case Reduction::Mean: return mean(loss);
  }
  return loss;
}

void check_float(const char* op, const Tensor& x, std::initializer_list<const Tensor*> args) {
  if (!is_floating(x.dtype())) fail(op, "needs a floating-point input, not " + std::string(dtype_name(x.dtype())), args);
}

void check_same_shape(const char* op, const Tensor& input, const Tensor& target) {
  detail::check_defined(op, {&input, &target});
  detail::check_same_device(op, {&input, &target});
  check_float(op, input, {&input, &target});
  if (input.shape() != target.shape())
    fail(op, "input and target must have the same shape", {&input, &target});
}

// The class dim of an [N, C, ...] (or [C]) input: 1, or 0 for a single sample.
int64_t class_dim(const Tensor& input) { return input.dim() == 1 ? 0 : 1; }

// weight [C] viewed to multiply along the class dim of `like`.
Tensor along_classes(const Tensor& weight, const Tensor& like) {
  Shape s(static_cast<size_t>(like.dim()), 1);
  s[static_cast<size_t>(class_dim(like))] = weight.numel();
  return reshape(weight, s);
}

void check_weight(const char* op, const Tensor& weight, const Tensor& input) {
  if (!weight.defined()) return;
  int64_t c = input.size(class_dim(input));
  if (weight.dim() != 1 || weight.numel() != c)
    fail(op, "weight must be 1-D with one element per class (" + std::to_string(c) + ")", {&weight, &input});
}

// The per-element negative log-likelihood of class-index targets and the weight each counts with
// (0 where the target is ignore_index).
struct Picked {
  Tensor loss, weight;
};
Picked pick(const char* op, ir::GatherOp gop, const Tensor& logp, const Tensor& target, const Tensor& weight,
            int64_t ignore_index) {
  if (target.dtype() != DType::Int64 && target.dtype() != DType::Int32)
    fail(op, "class-index targets must be int32 or int64 (or probabilities of the input's shape and dtype)",
         {&logp, &target});
  const int64_t cd = class_dim(logp);
  Shape want = logp.shape();
  want.erase(want.begin() + cd);
  if (target.shape() != want)
    fail(op, "target must have the input's shape without the class dim (" + shape_str(want) + ")", {&logp, &target});
  Tensor t = cast(target, DType::Int64);
  Tensor valid = t != ignore_index;
  // A negative target is an error, as PyTorch's (a gather would count it from the end): moved
  // below -C, it is out of range.
  const int64_t c = logp.size(cd);
  Tensor safe = where(valid, where(t < 0, t - c, t), 0);
  Tensor picked = squeeze(detail::record_gather(logp, cd, unsqueeze(safe, cd), gop), cd);
  Tensor w = weight.defined() ? reshape(index_select(weight, 0, reshape(where(valid, safe, 0), {-1})), want)
                              : ones_like(picked);
  w = where(valid, w, 0);
  return {-picked * w, w};
}

Tensor reduce_picked(const Picked& p, Reduction r) {
  if (r == Reduction::Mean) return sum(p.loss) / sum(p.weight);
  return reduce(p.loss, r);
}

}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                Reduction reduction) {
  detail::UserOp user("nll_loss");
  detail::check_defined("nll_loss", {&input, &target});
  check_float("nll_loss", input, {&input, &target});
  if (input.dim() == 0) fail("nll_loss", "input must have a class dim", {&input});
  check_weight("nll_loss", weight, input);
  return reduce_picked(pick("nll_loss", ir::GatherOp::NllLoss, input, target, weight, ignore_index), reduction);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, int64_t ignore_index,
                     Reduction reduction, double label_smoothing) {
  detail::UserOp user("cross_entropy");
  const char* op = "cross_entropy";
  detail::check_defined(op, {&input, &target});
  detail::check_same_device(op, {&input, &target});
  check_float(op, input, {&input, &target});
  if (input.dim() == 0) fail(op, "input must have a class dim", {&input});
  check_weight(op, weight, input);
  if (label_smoothing < 0 || label_smoothing > 1)
    fail(op, "label_smoothing must be in [0, 1], not " + std::to_string(label_smoothing));
  const int64_t cd = class_dim(input);
  const double n_classes = static_cast<double>(input.size(cd));
  Tensor logp = log_softmax(input, cd);
  Tensor wlogp = weight.defined() ? logp * along_classes(weight, logp) : logp;
  if (is_floating(target.dtype())) {  // class probabilities
    if (target.shape() != input.shape() || target.dtype() != input.dtype())
      fail(op, "probability targets must have the input's shape and dtype", {&input, &target});
    Tensor p = label_smoothing > 0 ? target * (1 - label_smoothing) + label_smoothing / n_classes : target;
    Tensor loss = -sum(wlogp * p, {cd});
    return reduce(loss, reduction);
  }
  Picked nll = pick(op, ir::GatherOp::CrossEntropy, logp, target, weight, ignore_index);
  Tensor ret = reduce_picked(nll, reduction);
  if (label_smoothing == 0) return ret;
  Tensor smooth = where(target != ignore_index, -sum(wlogp, {cd}), 0);
  Tensor s = reduction == Reduction::Mean ? sum(smooth) / sum(nll.weight) : reduce(smooth, reduction);
  return ret * (1 - label_smoothing) + s * (label_smoothing / n_classes);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  detail::UserOp user("mse_loss");
  check_same_shape("mse_loss", input, target);
  Tensor d = input - target;
  return reduce(d * d, reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_same_shape("l1_loss", input, target);
  return reduce(abs(input - target), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  check_same_shape("smooth_l1_loss", input, target);
  if (beta < 0) fail("smooth_l1_loss", "beta must be non-negative, not " + std::to_string(beta));
  if (beta == 0) return l1_loss(input, target, reduction);
  Tensor d = input - target;
  Tensor ad = abs(d);
  return reduce(where(ad < beta, d * d * (0.5 / beta), ad - 0.5 * beta), reduction);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta) {
  check_same_shape("huber_loss", input, target);
  if (delta <= 0) fail("huber_loss", "delta must be positive, not " + std::to_string(delta));
  Tensor d = input - target;
  Tensor ad = abs(d);
  return reduce(where(ad < delta, d * d * 0.5, (ad - 0.5 * delta) * delta), reduction);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction) {
  check_same_shape("binary_cross_entropy", input, target);
  Tensor loss = -(target * clamp_min(log(input), -100.0) + (1 - target) * clamp_min(log(1 - input), -100.0));
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        Reduction reduction, const Tensor& pos_weight) {
  check_same_shape("binary_cross_entropy_with_logits", input, target);
  // (1 - t) x + lw log(1 + exp(-x)), lw = 1 + (pos_weight - 1) t, with log(1 + exp(-x)) written
  // so that no exp overflows.
  Tensor softplus_neg = log1p(exp(-abs(input))) + relu(-input);
  Tensor lw = pos_weight.defined() ? (pos_weight - 1) * target + 1 : Tensor();
  Tensor loss = (1 - target) * input + (lw.defined() ? lw * softplus_neg : softplus_neg);
  if (weight.defined()) loss = loss * weight;
  return reduce(loss, reduction);
}

Tensor kl_div(const Tensor& input, const Tensor& target, KLReduction reduction, bool log_target) {
  check_same_shape("kl_div", input, target);
  // target * (log(target) - input), 0 where target is 0 (xlogy's convention).
  Tensor loss = log_target ? exp(target) * (target - input)
                           : where(target == 0, 0, target * log(where(target == 0, 1, target))) - target * input;
  switch (reduction) {
    case KLReduction::None: return loss;
    case KLReduction::Sum: return sum(loss);
    case KLReduction::Mean: return mean(loss);
    case KLReduction::BatchMean: return input.dim() == 0 ? sum(loss) : sum(loss) / static_cast<double>(input.size(0));
  }
  return loss;
}

Tensor softplus(const Tensor& x, double beta, double threshold) {
  detail::UserOp user("softplus");
  detail::check_defined("softplus", {&x});
  Tensor bx = x * beta;
  return where(bx > threshold, x, log1p(exp(bx)) / beta);
}

Tensor logaddexp(const Tensor& a, const Tensor& b) {
  detail::check_defined("logaddexp", {&a, &b});
  Tensor m = maximum(a, b);
  // Equal infinities: their difference is NaN, the answer is the infinity itself.
  return where(isinf(a) && (a == b), a, m + log1p(exp(-abs(a - b))));
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  detail::UserOp user("linear");
  detail::check_defined("linear", {&x, &weight});
  if (weight.dim() > 2) fail("linear", "weight must be 1-D or 2-D [out, in]", {&x, &weight});
  Tensor y = matmul(x, weight.dim() == 2 ? transpose(weight, 0, 1) : weight);
  return bias.defined() ? y + bias : y;
}

}  // namespace lf
