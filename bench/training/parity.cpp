// Training parity with PyTorch: the four models of parity.py trained with LazyFuse from the same
// initial weights on the same data (float32, the same optimizer formulas), their loss curves
// compared with PyTorch's step by step. Usage: lazyfuse-train-parity <dir written by parity.py>
// [model ...]. Prints, per model, the largest difference of the losses over the steps (absolute,
// and relative to PyTorch's loss), the first step that differs by more than 1e-4 relative, the
// final losses and training accuracies, and the time a step took.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

namespace {

using lf::Params;
using lf::Tensor;

struct Model {
  std::map<std::string, Tensor> data;
  Params params;
  std::vector<double> torch_loss;
  double torch_acc = 0;
};

Model load(const std::string& path) {
  Model m;
  for (auto& [k, npy] : lf::load_npz(path)) {
    Tensor v = npy.to(lf::default_device());
    if (k.rfind("w.", 0) == 0) m.params[k.substr(2)] = v;
    else if (k == "torch_loss") m.torch_loss = v.to_vector<double>();
    else if (k == "torch_acc") m.torch_acc = v.item<double>();
    else m.data[k] = v;
  }
  return m;
}

double accuracy(const Tensor& predicted, const Tensor& y) {
  return lf::mean(lf::cast(predicted == y, lf::DType::Float64)).item<double>();
}

// step(t) returns the loss of step t after updating the parameters.
struct Run {
  std::vector<double> loss;
  double acc = NAN;
  double ms_per_step = 0;
};

template <typename Loss, typename Step>
Run train(int64_t steps, Params& p, Loss loss_of, Step update) {
  Run r;
  auto start = std::chrono::steady_clock::now();
  for (int64_t t = 0; t < steps; ++t) {
    std::pair<Tensor, Params> vg = lf::value_and_grad([&](const Params& q) -> Tensor { return loss_of(q, t); })(p);
    update(p, vg.second);
    r.loss.push_back(vg.first.item<double>());
  }
  r.ms_per_step = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
                  static_cast<double>(steps);
  return r;
}

Run logreg(Model& m) {
  Tensor x = m.data.at("x"), y = m.data.at("y");
  auto logits = [&](const Params& q) { return lf::squeeze(lf::linear(x, q.at("w"), q.at("b")), 1); };
  lf::optim::SGD sgd({.lr = 0.5});
  Run r = train(200, m.params, [&](const Params& q, int64_t) { return lf::binary_cross_entropy_with_logits(logits(q), y); },
                [&](Params& p, const Params& g) { sgd.step(p, g); });
  r.acc = accuracy(lf::cast(logits(m.params) > 0, lf::DType::Float32), y);
  return r;
}

Run mlp(Model& m) {
  Tensor x = m.data.at("x"), y = m.data.at("y");
  auto fwd = [&](const Params& q) {
    Tensor h = lf::relu(lf::linear(x, q.at("w1"), q.at("b1")));
    h = lf::relu(lf::linear(h, q.at("w2"), q.at("b2")));
    return lf::linear(h, q.at("w3"), q.at("b3"));
  };
  lf::optim::Adam adam({.lr = 3e-3});
  Run r = train(300, m.params, [&](const Params& q, int64_t) { return lf::cross_entropy(fwd(q), y); },
                [&](Params& p, const Params& g) { adam.step(p, g); });
  r.acc = accuracy(lf::argmax(fwd(m.params), {1}), y);
  return r;
}

Run cnn(Model& m) {
  Tensor x = m.data.at("x"), y = m.data.at("y");
  auto fwd = [&](const Params& q) {
    Tensor h = lf::max_pool2d(lf::relu(lf::conv2d(x, q.at("c1"), q.at("cb1"), 1, 1)), 2);
    h = lf::relu(lf::conv2d(h, q.at("c2"), q.at("cb2"), 1, 1));
    h = lf::flatten(lf::adaptive_avg_pool2d(h, 1));
    h = lf::reshape(h, {x.size(0), -1});
    return lf::linear(h, q.at("fc"), q.at("fb"));
  };
  lf::optim::Adam adam({.lr = 1e-2});
  Run r = train(300, m.params, [&](const Params& q, int64_t) { return lf::cross_entropy(fwd(q), y); },
                [&](Params& p, const Params& g) { adam.step(p, g); });
  r.acc = accuracy(lf::argmax(fwd(m.params), {1}), y);
  return r;
}

Run char_lm(Model& m) {
  std::vector<int64_t> d = m.data.at("dims").to_vector<int64_t>();
  const int64_t V = d[0], D = d[1], T = d[2], B = d[3], H = d[4];
  Tensor ids = m.data.at("ids"), offsets = m.data.at("offsets");
  Tensor steps_t = lf::arange(0, static_cast<double>(T), 1, lf::DType::Int64);
  Tensor causal = lf::triu(lf::ones({T, T}, lf::DType::Bool), 1);
  auto loss_at = [&](const Params& q, int64_t t) {
    Tensor idx = lf::unsqueeze(lf::select(offsets, 0, t), 1) + lf::unsqueeze(steps_t, 0);  // [B, T]
    Tensor xb = lf::take(ids, idx), yb = lf::take(ids, idx + 1);
    Tensor h = lf::embedding(q.at("emb"), xb) + q.at("pos");
    for (int l = 0; l < 2; ++l) {
      auto w = [&](const char* n) { return q.at("l" + std::to_string(l) + "." + n); };
      Tensor a = lf::layer_norm(h, 1, w("ln1w"), w("ln1b"));
      auto heads = [&](const char* n) { return lf::transpose(lf::reshape(lf::linear(a, w(n)), {B, T, H, D / H}), 1, 2); };
      Tensor s = lf::matmul(heads("wq"), lf::transpose(heads("wk"), -1, -2)) * (1 / std::sqrt(double(D / H)));
      s = lf::masked_fill(s, causal, -INFINITY);
      Tensor o = lf::reshape(lf::transpose(lf::matmul(lf::softmax(s, -1), heads("wv")), 1, 2), {B, T, D});
      h = h + lf::linear(o, w("wo"));
      a = lf::layer_norm(h, 1, w("ln2w"), w("ln2b"));
      h = h + lf::linear(lf::gelu(lf::linear(a, w("w1"), w("b1"))), w("w2"), w("b2"));
    }
    h = lf::layer_norm(h, 1, q.at("lnfw"), q.at("lnfb"));
    Tensor logits = lf::matmul(h, lf::transpose(q.at("emb"), 0, 1));
    return lf::cross_entropy(lf::reshape(logits, {B * T, V}), lf::reshape(yb, {B * T}));
  };
  lf::optim::Adam adamw = lf::optim::AdamW({.lr = 3e-3, .weight_decay = 0.01});
  return train(300, m.params, loss_at, [&](Params& p, const Params& g) { adamw.step(p, g); });
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <dir written by parity.py> [model ...]\n", argv[0]);
    return 2;
  }
  std::map<std::string, std::function<Run(Model&)>> models = {
      {"logreg", logreg}, {"mlp", mlp}, {"cnn", cnn}, {"char_lm", char_lm}};
  std::vector<std::string> names;
  for (int i = 2; i < argc; ++i) names.push_back(argv[i]);
  if (names.empty()) names = {"logreg", "mlp", "cnn", "char_lm"};
  std::printf("device: %s\n", lf::default_device().str().c_str());
  std::printf("| model | steps | loss PyTorch -> LazyFuse (last step) | max abs diff | max rel diff | first step off by > 1e-4 rel | accuracy PyTorch / LazyFuse | ms/step |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const std::string& name : names) {
    Model m = load(std::string(argv[1]) + "/" + name + ".npz");
    Run r = models.at(name)(m);
    double max_abs = 0, max_rel = 0;
    int64_t first_off = -1;
    for (size_t t = 0; t < r.loss.size(); ++t) {
      double a = std::fabs(r.loss[t] - m.torch_loss[t]), rel = a / std::max(std::fabs(m.torch_loss[t]), 1e-30);
      max_abs = std::max(max_abs, a);
      max_rel = std::max(max_rel, rel);
      if (rel > 1e-4 && first_off < 0) first_off = static_cast<int64_t>(t);
    }
    std::printf("| %s | %zu | %.6g -> %.6g | %.3g | %.3g | %s | %.4f / %.4f | %.2f |\n", name.c_str(), r.loss.size(),
                m.torch_loss.back(), r.loss.back(), max_abs, max_rel,
                first_off < 0 ? "none" : std::to_string(first_off).c_str(), m.torch_acc, r.acc, r.ms_per_step);
  }
  return 0;
}
