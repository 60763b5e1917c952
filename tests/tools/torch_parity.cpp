// LazyFuse's side of the autograd parity test (torch_parity.py writes PyTorch's side): each case's
// output and gradients, and each optimizer's trajectory, against PyTorch 1.13's in float64.
// Usage: lazyfuse-torch-parity <dir written by torch_parity.py>; runs on the default device.
// Prints "N passed, M failed".
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>
#include <lazyfuse/losses.h>
#include <lazyfuse/optim.h>

namespace {

using lf::Tensor;
using Fn = std::function<Tensor(const std::vector<Tensor>&)>;

// x x^T + 3 I and x + 4 I (torch_parity.py's same functions of the inputs).
Tensor eye_like(const Tensor& x) { return lf::eye(x.size(-1), x.dtype()).to(x.device()); }
Tensor spd(const Tensor& x) { return lf::matmul(x, lf::transpose(x, -2, -1)) + eye_like(x) * 3; }
Tensor shifted(const Tensor& x) { return x + eye_like(x) * 4; }

const std::map<std::string, Fn>& cases() {
  using lf::Reduction;
  static const std::map<std::string, Fn> c = {
      {"cross_entropy", [](auto& x) { return lf::cross_entropy(x[0], x[1]); }},
      {"cross_entropy_weight_ignore", [](auto& x) { return lf::cross_entropy(x[0], x[1], x[2], -100); }},
      {"cross_entropy_smoothing",
       [](auto& x) { return lf::cross_entropy(x[0], x[1], x[2], -100, Reduction::Mean, 0.2); }},
      {"cross_entropy_smoothing_ignore_sum",
       [](auto& x) { return lf::cross_entropy(x[0], x[1], {}, 7, Reduction::Sum, 0.1); }},
      {"cross_entropy_spatial_none", [](auto& x) { return lf::cross_entropy(x[0], x[1], {}, -100, Reduction::None); }},
      {"cross_entropy_probs", [](auto& x) { return lf::cross_entropy(x[0], x[1], {}, -100, Reduction::Mean, 0.1); }},
      {"nll_loss", [](auto& x) { return lf::nll_loss(lf::log_softmax(x[0], 1), x[1]); }},
      {"mse_loss", [](auto& x) { return lf::mse_loss(x[0], x[1]); }},
      {"l1_loss_sum", [](auto& x) { return lf::l1_loss(x[0], x[1], Reduction::Sum); }},
      {"smooth_l1_loss", [](auto& x) { return lf::smooth_l1_loss(x[0], x[1], Reduction::Mean, 0.7); }},
      {"huber_loss", [](auto& x) { return lf::huber_loss(x[0], x[1], Reduction::Mean, 0.6); }},
      {"binary_cross_entropy", [](auto& x) { return lf::binary_cross_entropy(x[0], x[1], x[2]); }},
      {"bce_with_logits",
       [](auto& x) { return lf::binary_cross_entropy_with_logits(x[0], x[1], {}, Reduction::Mean, x[2]); }},
      {"kl_div_batchmean",
       [](auto& x) { return lf::kl_div(lf::log_softmax(x[0], 1), x[1], lf::KLReduction::BatchMean); }},
      {"kl_div_log_target", [](auto& x) { return lf::kl_div(x[0], x[1], lf::KLReduction::Sum, true); }},
      {"softplus", [](auto& x) { return lf::softplus(x[0], 2, 10); }},
      {"logaddexp", [](auto& x) { return lf::logaddexp(x[0], x[1]); }},
      {"linear", [](auto& x) { return lf::linear(x[0], x[1], x[2]); }},
      {"mlp", [](auto& x) { return lf::cross_entropy(lf::linear(lf::gelu(lf::linear(x[0], x[1], x[2])), x[3]), x[4]); }},
      {"attention",
       [](auto& x) { return lf::matmul(lf::softmax(lf::matmul(x[0], lf::transpose(x[1], -1, -2)) * 0.5, -1), x[2]); }},
      {"layer_norm", [](auto& x) { return lf::layer_norm(x[0], 1, x[1], x[2]); }},
      {"group_norm", [](auto& x) { return lf::group_norm(x[0], 2, x[1], x[2]); }},
      {"batch_norm_training", [](auto& x) { return lf::batch_norm_training(x[0], x[1], x[2]).output; }},
      {"conv2d", [](auto& x) { return lf::conv2d(x[0], x[1], x[2], lf::Size2(2, 1), 1, lf::Size2(1, 2), 2); }},
      {"conv_transpose2d", [](auto& x) { return lf::conv_transpose2d(x[0], x[1], {}, 2, 1, 1); }},
      {"max_pool2d", [](auto& x) { return lf::max_pool2d(x[0], 3, 2, 1, true); }},
      {"avg_pool2d", [](auto& x) { return lf::avg_pool2d(x[0], 3, 2, 1, false, false); }},
      {"adaptive_avg_pool2d", [](auto& x) { return lf::adaptive_avg_pool2d(x[0], {3, 2}); }},
      {"interpolate_bilinear", [](auto& x) { return lf::interpolate(x[0], {5, 7}, "bilinear", false); }},
      {"embedding", [](auto& x) { return lf::embedding(x[0], x[1]); }},
      {"embedding_padding_idx", [](auto& x) { return lf::embedding(x[0], x[1], 2); }},
      {"scatter_reduce_amax", [](auto& x) { return lf::scatter_reduce(x[0], 1, x[1], x[2], "amax"); }},
      {"scatter_reduce_amin_no_self", [](auto& x) { return lf::scatter_reduce(x[0], 1, x[1], x[2], "amin", false); }},
      {"scatter_reduce_prod_zeros", [](auto& x) { return lf::scatter_reduce(x[0], 1, x[1], x[2], "prod"); }},
      {"scatter_reduce_prod_no_self", [](auto& x) { return lf::scatter_reduce(x[0], 1, x[1], x[2], "prod", false); }},
      {"amax_ties", [](auto& x) { return lf::max(x[0], {1}); }},
      {"prod_zeros", [](auto& x) { return lf::prod(x[0], {1}); }},
      {"cumprod_zeros", [](auto& x) { return lf::cumprod(x[0], 0); }},
      {"pow_zero_base", [](auto& x) { return lf::pow(x[0], x[1]); }},
      {"relu_kink", [](auto& x) { return lf::relu(x[0]); }},
      {"maximum_ties", [](auto& x) { return lf::maximum(x[0], x[1]); }},
      {"gelu_tanh", [](auto& x) { return lf::gelu(x[0], true); }},
      {"hardswish", [](auto& x) { return lf::hardswish(x[0]); }},
      {"var_std_norm", [](auto& x) { return lf::var(x[0], {1}) + lf::sum(lf::std(x[0], {0})) + lf::norm(x[0], 2, {1}); }},
      {"logsumexp_softmax", [](auto& x) { return lf::logsumexp(x[0], {1}, true) * lf::softmax(x[0], 1); }},
      // einsum and the products around it (issue 49).
      {"einsum_matmul", [](auto& x) { return lf::einsum("ij,jk->ik", x); }},
      {"einsum_implicit", [](auto& x) { return lf::einsum("bi,bj", x); }},
      {"einsum_ellipsis", [](auto& x) { return lf::einsum("...ij,...kj->...ik", x); }},
      {"einsum_ellipsis_summed", [](auto& x) { return lf::einsum("...ij,...j->i", x); }},
      {"einsum_diagonal", [](auto& x) { return lf::einsum("iij,jk->ki", x); }},
      {"einsum_trace", [](auto& x) { return lf::einsum("ii", x); }},
      {"einsum_chain", [](auto& x) { return lf::einsum("ij,jk,kl,lm->im", x); }},
      {"einsum_bilinear", [](auto& x) { return lf::einsum("bi,oij,bj->bo", x); }},
      {"einsum_broadcast_one", [](auto& x) { return lf::einsum("ij,jk", x); }},
      {"tensordot", [](auto& x) { return lf::tensordot(x[0], x[1], {1, 2}, {1, 0}); }},
      {"tensordot_int", [](auto& x) { return lf::tensordot(x[0], x[1], 2); }},
      {"kron", [](auto& x) { return lf::kron(x[0], x[1]); }},
      {"cross", [](auto& x) { return lf::cross(x[0], x[1], 0); }},
      {"cdist", [](auto& x) { return lf::cdist(x[0], x[1]); }},
      {"cdist_p1", [](auto& x) { return lf::cdist(x[0], x[1], 1); }},
      {"cdist_p3", [](auto& x) { return lf::cdist(x[0], x[1], 3); }},
      {"cdist_inf", [](auto& x) { return lf::cdist(x[0], x[1], INFINITY); }},
      {"cdist_matmul_form", [](auto& x) { return lf::cdist(x[0], x[1]); }},
      {"trapezoid_dx", [](auto& x) { return lf::trapezoid(x[0], 0.5, 0); }},
      {"trapezoid_x", [](auto& x) { return lf::trapezoid(x[0], x[1]); }},
      {"cumulative_trapezoid_dx", [](auto& x) { return lf::cumulative_trapezoid(x[0], 0.25); }},
      {"cumulative_trapezoid_x", [](auto& x) { return lf::cumulative_trapezoid(x[0], x[1]); }},
      {"diag_embed", [](auto& x) { return lf::diag_embed(x[0], 1, 0, 2); }},
      // torch.linalg (issue 49 item 2).
      {"linalg_cholesky", [](auto& x) { return lf::linalg::cholesky(spd(x[0])); }},
      {"linalg_cholesky_upper", [](auto& x) { return lf::linalg::cholesky(spd(x[0]), true); }},
      {"linalg_solve", [](auto& x) { return lf::linalg::solve(shifted(x[0]), x[1]); }},
      {"linalg_solve_right", [](auto& x) { return lf::linalg::solve(shifted(x[0]), x[1], false); }},
      {"linalg_solve_vector", [](auto& x) { return lf::linalg::solve(shifted(x[0]), x[1]); }},
      {"linalg_solve_triangular", [](auto& x) { return lf::linalg::solve_triangular(shifted(x[0]), x[1], true); }},
      {"linalg_solve_triangular_right_unit",
       [](auto& x) { return lf::linalg::solve_triangular(x[0], x[1], false, false, true); }},
      {"linalg_cholesky_solve",
       [](auto& x) { return lf::linalg::cholesky_solve(x[1], lf::linalg::cholesky(spd(x[0]))); }},
      {"linalg_inv", [](auto& x) { return lf::linalg::inv(shifted(x[0])); }},
      {"linalg_det", [](auto& x) { return lf::linalg::det(x[0]); }},
      {"linalg_eigh", [](auto& x) {
         Tensor s = x[0] + lf::transpose(x[0], -2, -1);
         auto [w, v] = lf::linalg::eigh(s);
         return lf::cat({lf::reshape(w, {-1}), lf::reshape(v * v, {-1})}, 0);
       }},
      {"linalg_eigvalsh_upper", [](auto& x) { return lf::linalg::eigvalsh(x[0] + lf::transpose(x[0], -2, -1), "U"); }},
      {"linalg_slogdet", [](auto& x) {
         auto [sign, logabsdet] = lf::linalg::slogdet(x[0]);
         return sign * logabsdet;
       }},
      {"linalg_qr", [](auto& x) {
         auto [q, r] = lf::linalg::qr(x[0]);
         return lf::cat({lf::reshape(q * q, {-1}), lf::reshape(r * r, {-1})}, 0);
       }},
      {"linalg_qr_complete_wide", [](auto& x) {
         auto [q, r] = lf::linalg::qr(x[0], "complete");
         return lf::cat({lf::reshape(q * q, {-1}), lf::reshape(r * r, {-1})}, 0);
       }},
      {"linalg_svd", [](auto& x) {
         auto [u, s, vh] = lf::linalg::svd(x[0], false);
         return lf::cat({lf::reshape(u * u, {-1}), lf::reshape(s, {-1}), lf::reshape(vh * vh, {-1})}, 0);
       }},
      {"linalg_svdvals", [](auto& x) { return lf::linalg::svdvals(x[0]); }},
      {"linalg_lstsq", [](auto& x) { return lf::linalg::lstsq(x[0], x[1], std::nullopt, "gelsd").solution; }},
      {"linalg_lstsq_wide", [](auto& x) { return lf::linalg::lstsq(x[0], x[1]).solution; }},
      {"linalg_pinv", [](auto& x) { return lf::linalg::pinv(x[0]); }},
      {"linalg_matrix_norm_svd", [](auto& x) {
         return lf::cat({lf::linalg::matrix_norm(x[0], "nuc"), lf::linalg::matrix_norm(x[0], 2),
                         lf::linalg::matrix_norm(x[0], -2)}, 0);
       }},
      {"linalg_cond", [](auto& x) { return lf::linalg::cond(shifted(x[0])); }},
  };
  return c;
}

using Step = std::function<void(lf::Params&, const lf::Params&)>;
std::map<std::string, std::function<Step()>> optimizers() {
  using namespace lf::optim;
  return {
      {"sgd_momentum_nesterov",
       [] {
         auto o = std::make_shared<SGD>(SGDOptions{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true});
         return Step([o](lf::Params& p, const lf::Params& g) { o->step(p, g); });
       }},
      {"sgd_dampening",
       [] {
         auto o = std::make_shared<SGD>(SGDOptions{.lr = 0.05, .momentum = 0.8, .dampening = 0.3});
         return Step([o](lf::Params& p, const lf::Params& g) { o->step(p, g); });
       }},
      {"adam",
       [] {
         auto o = std::make_shared<Adam>(AdamOptions{.lr = 0.1, .weight_decay = 0.02});
         return Step([o](lf::Params& p, const lf::Params& g) { o->step(p, g); });
       }},
      {"adamw_amsgrad",
       [] {
         auto o = std::make_shared<Adam>(AdamW({.lr = 0.1, .weight_decay = 0.1, .amsgrad = true}));
         return Step([o](lf::Params& p, const lf::Params& g) { o->step(p, g); });
       }},
  };
}

int passed = 0, failed = 0;

// load_npz gives CPU tensors; the cases run on the default device (CUDA where there is one).
std::map<std::string, Tensor> on_default_device(std::map<std::string, Tensor> m) {
  for (auto& [k, v] : m) v = v.to(lf::default_device());
  return m;
}

// Element by element within rtol 1e-8 (float64 on both sides; the sums' orders differ).
bool close(const std::string& what, const Tensor& got, const Tensor& want) {
  if (got.shape() != want.shape()) {
    std::printf("FAIL %s: shape %s, want %s\n", what.c_str(), lf::shape_str(got.shape()).c_str(),
                lf::shape_str(want.shape()).c_str());
    return false;
  }
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    bool ok = std::isnan(w[i]) ? std::isnan(g[i]) : std::fabs(g[i] - w[i]) <= 1e-10 + 1e-8 * std::fabs(w[i]);
    if (!ok) {
      std::printf("FAIL %s: element %zu is %.17g, PyTorch %.17g\n", what.c_str(), i, g[i], w[i]);
      return false;
    }
  }
  return true;
}

void check_case(const std::string& dir, const std::string& name, const Fn& f) {
  std::map<std::string, Tensor> npz = on_default_device(lf::load_npz(dir + "/" + name + ".npz"));
  std::vector<Tensor> xs, floats;
  for (int i = 0; npz.count("x" + std::to_string(i)); ++i) {
    xs.push_back(npz.at("x" + std::to_string(i)));
    if (lf::is_floating(xs.back().dtype())) floats.push_back(xs.back());
  }
  Tensor out;
  {
    lf::KeepGraph keep;  // the output is read (computed) before its gradient is taken
    out = f(xs);
  }
  bool ok = close(name + " output", out, npz.at("out"));
  std::vector<Tensor> grads = lf::grad(lf::sum(out * npz.at("w")), floats);
  for (size_t i = 0, k = 0; i < xs.size(); ++i) {
    if (!lf::is_floating(xs[i].dtype())) continue;
    if (!npz.count("g" + std::to_string(i))) {  // an input PyTorch does not differentiate
      ++k;
      continue;
    }
    ok &= close(name + " gradient of input " + std::to_string(i), grads[k++], npz.at("g" + std::to_string(i)));
  }
  (ok ? passed : failed)++;
}

void check_optimizer(const std::string& dir, const std::string& name, const std::function<Step()>& make) {
  std::map<std::string, Tensor> npz = on_default_device(lf::load_npz(dir + "/optim_" + name + ".npz"));
  lf::Params p{{"p", npz.at("p0")}};
  Tensor c = npz.at("c");
  Step step = make();
  bool ok = true;
  for (int64_t t = 0; t < 5; ++t) {
    auto [loss, g] = lf::value_and_grad([&](const lf::Params& q) { return lf::sum(q.at("p") * q.at("p") * c); })(p);
    step(p, g);
    ok &= close(name + " step " + std::to_string(t + 1), p.at("p"), lf::select(npz.at("traj"), 0, t));
  }
  (ok ? passed : failed)++;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <dir written by torch_parity.py>\n", argv[0]);
    return 2;
  }
  std::printf("device: %s\n", lf::default_device().str().c_str());
  std::string dir = argv[1];
  for (bool fused : {true, false}) {
    lf::set_fusion_enabled(fused);
    for (const auto& [name, f] : cases()) {
      try {
        check_case(dir, name, f);
      } catch (const lf::Error& e) {
        std::printf("FAIL %s: %s\n", name.c_str(), e.what());
        ++failed;
      }
    }
    for (const auto& [name, make] : optimizers()) check_optimizer(dir, name, make);
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
