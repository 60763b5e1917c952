// Training-step speed (issue 55): forward + backward + AdamW of a model written in eager style,
// timed step by step. The PyTorch peer is step_torch.py (eager and torch.compile, the same models,
// sizes and optimizer); run both in the same call. Usage:
//   lazyfuse-bench-train <model> [--steps N] [--dtype float32|bfloat16] [key=value ...]
// model: mlp (B x D0-D1-D2-D3-C, ReLU, cross-entropy) or gpt (L pre-LN blocks, B x T tokens, width
// D, H heads, GELU MLP of 4D, causal attention, tied embedding of V, cross-entropy). The sizes are
// key=value overrides (mlp: B D H C; gpt: B T D H L V). Prints one line: the first step's time (the
// compiles, from the cache as it is) and the wait for the GPU's optimized builds after it, the
// median of the steady steps (after 3), the last loss, and the flush plans' replay count.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

namespace {

using lf::DType;
using lf::Params;
using lf::Tensor;

using Sizes = std::map<std::string, int64_t>;

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A parameter of `shape` drawn as PyTorch's default Linear init would scale it (uniform in
// +-1/sqrt(fan_in)); the bench times steps, so only the scale matters, not the exact draw.
Tensor init(lf::Shape shape, int64_t fan_in, DType dtype) {
  const double bound = 1 / std::sqrt(static_cast<double>(fan_in));
  return lf::cast((lf::rand(shape) * 2 - 1) * bound, dtype);
}

struct Model {
  Params params;
  std::function<Tensor(const Params&)> loss;
};

Model mlp(const Sizes& s, DType dtype) {
  const int64_t B = s.at("B"), D = s.at("D"), H = s.at("H"), C = s.at("C");
  Model m;
  const int64_t widths[] = {D, H, H, C};
  for (int l = 0; l < 3; ++l) {
    m.params["w" + std::to_string(l)] = init({widths[l + 1], widths[l]}, widths[l], dtype);
    m.params["b" + std::to_string(l)] = init({widths[l + 1]}, widths[l], dtype);
  }
  Tensor x = lf::cast(lf::randn({B, D}), dtype);
  Tensor y = lf::randint(0, C, {B});
  lf::sync();
  m.loss = [x, y](const Params& q) {
    Tensor h = x;
    for (int l = 0; l < 3; ++l) {
      h = lf::linear(h, q.at("w" + std::to_string(l)), q.at("b" + std::to_string(l)));
      if (l < 2) h = lf::relu(h);
    }
    return lf::cross_entropy(lf::cast(h, DType::Float32), y);
  };
  return m;
}

Model gpt(const Sizes& s, DType dtype) {
  const int64_t B = s.at("B"), T = s.at("T"), D = s.at("D"), H = s.at("H"), L = s.at("L"), V = s.at("V");
  Model m;
  auto& p = m.params;
  p["emb"] = lf::cast(lf::randn({V, D}) * 0.02, dtype);
  p["pos"] = lf::cast(lf::randn({T, D}) * 0.02, dtype);
  for (int64_t l = 0; l < L; ++l) {
    const std::string b = "l" + std::to_string(l) + ".";
    for (const char* n : {"ln1w", "ln2w"}) p[b + n] = lf::ones({D}, dtype);
    for (const char* n : {"ln1b", "ln2b"}) p[b + n] = lf::zeros({D}, dtype);
    for (const char* n : {"wq", "wk", "wv", "wo"}) p[b + n] = init({D, D}, D, dtype);
    p[b + "w1"] = init({4 * D, D}, D, dtype), p[b + "b1"] = init({4 * D}, D, dtype);
    p[b + "w2"] = init({D, 4 * D}, 4 * D, dtype), p[b + "b2"] = init({D}, 4 * D, dtype);
  }
  p["lnfw"] = lf::ones({D}, dtype), p["lnfb"] = lf::zeros({D}, dtype);
  Tensor ids = lf::randint(0, V, {B, T + 1});
  Tensor xb = lf::slice(ids, 1, 0, T), yb = lf::slice(ids, 1, 1, T + 1);
  Tensor causal = lf::triu(lf::ones({T, T}, DType::Bool), 1);
  lf::sync();
  m.loss = [=](const Params& q) {
    Tensor h = lf::embedding(q.at("emb"), xb) + q.at("pos");
    for (int64_t l = 0; l < L; ++l) {
      auto w = [&](const char* n) { return q.at("l" + std::to_string(l) + "." + n); };
      Tensor a = lf::layer_norm(h, 1, w("ln1w"), w("ln1b"));
      auto heads = [&](const char* n) { return lf::transpose(lf::reshape(lf::linear(a, w(n)), {B, T, H, D / H}), 1, 2); };
      Tensor sc = lf::matmul(heads("wq"), lf::transpose(heads("wk"), -1, -2)) * (1 / std::sqrt(double(D / H)));
      sc = lf::masked_fill(sc, causal, -INFINITY);
      Tensor o = lf::reshape(lf::transpose(lf::matmul(lf::softmax(sc, -1), heads("wv")), 1, 2), {B, T, D});
      h = h + lf::linear(o, w("wo"));
      a = lf::layer_norm(h, 1, w("ln2w"), w("ln2b"));
      h = h + lf::linear(lf::gelu(lf::linear(a, w("w1"), w("b1"))), w("w2"), w("b2"));
    }
    h = lf::layer_norm(h, 1, q.at("lnfw"), q.at("lnfb"));
    Tensor logits = lf::matmul(h, lf::transpose(q.at("emb"), 0, 1));
    return lf::cross_entropy(lf::cast(lf::reshape(logits, {B * T, V}), DType::Float32), lf::reshape(yb, {B * T}));
  };
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s mlp|gpt [--steps N] [--dtype float32|bfloat16] [key=value ...]\n", argv[0]);
    return 2;
  }
  const std::string name = argv[1];
  int steps = 20;
  DType dtype = DType::Float32;
  Sizes sizes = name == "mlp" ? Sizes{{"B", 256}, {"D", 512}, {"H", 512}, {"C", 64}}
                              : Sizes{{"B", 8}, {"T", 512}, {"D", 768}, {"H", 12}, {"L", 4}, {"V", 32000}};
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--steps" && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
    } else if (a == "--dtype" && i + 1 < argc) {
      const std::string d = argv[++i];
      dtype = d == "bfloat16" ? DType::BFloat16 : DType::Float32;
    } else if (auto eq = a.find('='); eq != std::string::npos && sizes.count(a.substr(0, eq))) {
      sizes[a.substr(0, eq)] = std::atoll(a.c_str() + eq + 1);
    } else {
      std::fprintf(stderr, "unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  if (name != "mlp" && name != "gpt") {
    std::fprintf(stderr, "unknown model '%s' (mlp, gpt)\n", name.c_str());
    return 2;
  }
  lf::manual_seed(0);
  Model m = name == "mlp" ? mlp(sizes, dtype) : gpt(sizes, dtype);
  // Mixed precision as PyTorch's: bfloat16 parameters keep float32 moments.
  lf::optim::AdamOptions opt{.lr = 1e-3, .weight_decay = 0.01};
  if (dtype == DType::BFloat16) opt.state_dtype = DType::Float32;
  lf::optim::Adam adamw = lf::optim::AdamW(opt);

  const lf::Device device = lf::default_device();
  Tensor loss;
  std::vector<double> ms;
  double optimized_ms = 0;
  lf::reset_stats();
  for (int t = 0; t < steps; ++t) {
    const double start = now_ms();
    auto [value, grads] = lf::value_and_grad(m.loss)(m.params);
    adamw.step(m.params, grads);
    loss = value;
    lf::sync();
    lf::device_synchronize(device);
    ms.push_back(now_ms() - start);
    if (t == 0) {
      // The first step's GPU kernels are quick builds; their optimized builds compile on a
      // background thread and each swap re-records the plans that used it. Wait for them so
      // that the steady steps time the optimized kernels, replayed.
      const double wait_start = now_ms();
      lf::finish_compiles();
      optimized_ms = now_ms() - wait_start;
    }
  }
  const lf::CacheStats stats = lf::cache_stats();
  std::vector<double> steady(ms.begin() + std::min<size_t>(ms.size(), 3), ms.end());
  std::sort(steady.begin(), steady.end());
  const double median = steady.empty() ? NAN : steady[steady.size() / 2];
  std::string config;
  for (const auto& [k, v] : sizes) config += k + "=" + std::to_string(v) + " ";
  std::printf("lazyfuse %s %s %son %s: first step %.1f ms (+%.1f ms for the optimized builds), median step %.3f ms (of %zu after 3), last loss %.5f, "
              "plan replays %llu of %llu flushes\n",
              name.c_str(), dtype == DType::BFloat16 ? "bfloat16" : "float32", config.c_str(), device.str().c_str(),
              ms.empty() ? NAN : ms[0], optimized_ms, median, steady.size(), loss.item<double>(),
              static_cast<unsigned long long>(stats.plans_replayed), static_cast<unsigned long long>(stats.flushes));
  return 0;
}
