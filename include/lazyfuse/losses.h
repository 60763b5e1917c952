// Losses and the functions around them, with torch.nn.functional's names, arguments and semantics.
// Each is a composite of recorded ops: it fuses with its neighbours and lf::grad differentiates it.
#pragma once

#include "lazyfuse/tensor.h"

namespace lf {

enum class Reduction { None, Mean, Sum };

// F.cross_entropy. input: logits [N, C] (or [C], or [N, C, d1, ...]); target: class indices (int32
// or int64, input's shape without C) or class probabilities (input's shape and dtype). weight: [C]
// or empty. With indices, targets equal to ignore_index count for nothing (Mean divides by the
// summed weights of the others); an index outside [0, C) is an lf::Error at the sync point.
// label_smoothing mixes the target with the uniform distribution.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {}, int64_t ignore_index = -100,
                     Reduction reduction = Reduction::Mean, double label_smoothing = 0);
// F.nll_loss: input holds log-probabilities [N, C] (or [C], [N, C, d1, ...]), target class indices.
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = {}, int64_t ignore_index = -100,
                Reduction reduction = Reduction::Mean);
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta 0: l1_loss).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                      double beta = 1);
// 0.5 d^2 where |d| <= delta, else delta (|d| - 0.5 delta).
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean, double delta = 1);
// input: probabilities in [0, 1]; each log is clamped at -100, as PyTorch's.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                            Reduction reduction = Reduction::Mean);
// The same of sigmoid(input), computed stably from the logits; pos_weight ([C] or empty) weights
// the positive term.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                                        Reduction reduction = Reduction::Mean, const Tensor& pos_weight = {});
// F.kl_div: input log-probabilities, target probabilities (log-probabilities with log_target).
// batchmean: the sum divided by the batch size (the first dim), the mathematically right mean.
enum class KLReduction { None, Mean, Sum, BatchMean };
Tensor kl_div(const Tensor& input, const Tensor& target, KLReduction reduction = KLReduction::Mean,
              bool log_target = false);

// log(1 + exp(beta x)) / beta, x itself where beta x > threshold (F.softplus).
Tensor softplus(const Tensor& x, double beta = 1, double threshold = 20);
Tensor logaddexp(const Tensor& a, const Tensor& b);  // log(exp(a) + exp(b)) without overflow
// F.linear: x @ weight^T + bias, weight [out, in], bias [out] or empty.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = {});

}  // namespace lf
