// Issue 48's and issue 50's decoder as a user writes it: a Llama-style model (RMSNorm, rotary
// embeddings by slice and cat, grouped-query attention by expand, SwiGLU; random weights), a prompt,
// then greedy decoding with the KV cache grown by cat and each token read as it comes. Runs the
// whole generation several times in one process and prints each run's tokens, whether the runs gave
// the same tokens and the same final logits' bits, and the time per generated token.
//
//   lazyfuse-bench-decoder [--cuda] [--layers L] [--dim D] [--heads H] [--kv-heads K] [--vocab V]
//                          [--prompt P] [--tokens T] [--runs R] [--bf16]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

namespace {

using lf::DType;
using lf::Tensor;

struct Config {
  int64_t layers = 4, dim = 1024, heads = 16, kv_heads = 4, vocab = 32000, prompt = 128, tokens = 64;
  int runs = 3;
  DType dtype = DType::Float32;
};

struct Layer {
  Tensor attn_norm, wq, wk, wv, wo, mlp_norm, w_gate, w_up, w_down;
};

struct Model {
  Config c;
  Tensor embed, final_norm, head;  // head: [D, V]
  std::vector<Layer> layers;
  Tensor cos, sin;                 // [max_T, Dh / 2]
};

Tensor weight(int64_t rows, int64_t cols, DType dtype) {
  return lf::cast(lf::randn({rows, cols}) * static_cast<float>(1.0 / std::sqrt(static_cast<double>(rows))), dtype);
}

Model make_model(const Config& c) {
  lf::manual_seed(1234);
  Model m;
  m.c = c;
  const int64_t dh = c.dim / c.heads, kv = c.kv_heads * dh, hidden = c.dim * 8 / 3 / 64 * 64;
  m.embed = lf::cast(lf::randn({c.vocab, c.dim}), c.dtype);
  m.final_norm = lf::cast(lf::ones({c.dim}), c.dtype);
  m.head = weight(c.dim, c.vocab, c.dtype);
  for (int64_t l = 0; l < c.layers; ++l)
    m.layers.push_back({lf::cast(lf::ones({c.dim}), c.dtype), weight(c.dim, c.dim, c.dtype), weight(c.dim, kv, c.dtype),
                        weight(c.dim, kv, c.dtype), weight(c.dim, c.dim, c.dtype), lf::cast(lf::ones({c.dim}), c.dtype),
                        weight(c.dim, hidden, c.dtype), weight(c.dim, hidden, c.dtype), weight(hidden, c.dim, c.dtype)});
  const int64_t max_t = c.prompt + c.tokens;
  Tensor pos = lf::unsqueeze(lf::arange(0, static_cast<double>(max_t)), 1);
  Tensor freq = lf::unsqueeze(lf::exp(lf::arange(0, static_cast<double>(dh / 2)) * static_cast<float>(-2.0 * std::log(10000.0) / dh)), 0);
  m.cos = lf::cast(lf::cos(pos * freq), c.dtype);
  m.sin = lf::cast(lf::sin(pos * freq), c.dtype);
  lf::sync();
  return m;
}

Tensor rmsnorm(const Tensor& x, const Tensor& w) {
  Tensor xf = lf::cast(x, DType::Float32);
  return lf::cast(xf * lf::rsqrt(lf::mean(xf * xf, {-1}, true) + 1e-5f), x.dtype()) * w;
}

// x [B, H, T, Dh] rotated by the angles of positions start .. start + T (halves, as Llama's).
Tensor rotary(const Tensor& x, const Model& m, int64_t start) {
  const int64_t t = x.shape()[2], half = x.shape()[3] / 2;
  Tensor cos = m.cos.slice(0, start, start + t), sin = m.sin.slice(0, start, start + t);
  Tensor a = x.slice(3, 0, half), b = x.slice(3, half, 2 * half);
  return lf::cat({a * cos - b * sin, a * sin + b * cos}, 3);
}

struct Cache {
  std::vector<Tensor> k, v;  // per layer [B, KVH, T, Dh]
};

// Logits of the last position for tokens `ids` at positions start ..; appends to the cache.
Tensor forward(const Model& m, const std::vector<int64_t>& ids, int64_t start, Cache& cache) {
  const Config& c = m.c;
  const int64_t t = static_cast<int64_t>(ids.size()), dh = c.dim / c.heads, group = c.heads / c.kv_heads;
  Tensor h = lf::embedding(m.embed, lf::from_vector(ids, {1, t}));
  for (size_t l = 0; l < m.layers.size(); ++l) {
    const Layer& w = m.layers[l];
    Tensor x = rmsnorm(h, w.attn_norm);
    Tensor q = lf::permute(lf::reshape(lf::matmul(x, w.wq), {1, t, c.heads, dh}), {0, 2, 1, 3});
    Tensor k = lf::permute(lf::reshape(lf::matmul(x, w.wk), {1, t, c.kv_heads, dh}), {0, 2, 1, 3});
    Tensor v = lf::permute(lf::reshape(lf::matmul(x, w.wv), {1, t, c.kv_heads, dh}), {0, 2, 1, 3});
    q = rotary(q, m, start);
    k = rotary(k, m, start);
    if (start == 0) {
      cache.k.push_back(k);
      cache.v.push_back(v);
    } else {
      cache.k[l] = lf::cat({cache.k[l], k}, 2);
      cache.v[l] = lf::cat({cache.v[l], v}, 2);
    }
    const int64_t total = start + t;
    auto grouped = [&](const Tensor& kv) {  // [1, KVH, T, Dh] -> [1, H, T, Dh] by expand
      return lf::reshape(lf::expand(lf::unsqueeze(kv, 2), {1, c.kv_heads, group, total, dh}), {1, c.heads, total, dh});
    };
    Tensor s = lf::matmul(q, lf::transpose(grouped(cache.k[l]), 2, 3)) * static_cast<float>(1.0 / std::sqrt(static_cast<double>(dh)));
    if (t > 1) {  // causal: query i (position start + i) sees keys up to it
      Tensor i = lf::unsqueeze(lf::arange(static_cast<double>(start), static_cast<double>(total)), 1);
      Tensor j = lf::unsqueeze(lf::arange(0, static_cast<double>(total)), 0);
      s = lf::where(j <= i, s, -std::numeric_limits<float>::infinity());
    }
    Tensor o = lf::matmul(lf::softmax(s, -1), grouped(cache.v[l]));
    h = h + lf::matmul(lf::reshape(lf::permute(o, {0, 2, 1, 3}), {1, t, c.dim}), w.wo);
    Tensor y = rmsnorm(h, w.mlp_norm);
    h = h + lf::matmul(lf::silu(lf::matmul(y, w.w_gate)) * lf::matmul(y, w.w_up), w.w_down);
  }
  Tensor last = rmsnorm(h.slice(1, t - 1, t), m.final_norm);
  return lf::reshape(lf::matmul(last, m.head), {c.vocab});
}

struct Run {
  std::vector<int64_t> tokens;
  std::vector<float> logits;  // the last step's
  double ms_per_token = 0;
};

Run generate(const Model& m) {
  const Config& c = m.c;
  std::vector<int64_t> prompt(static_cast<size_t>(c.prompt));
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = static_cast<int64_t>((i * 7919 + 13) % static_cast<size_t>(c.vocab));
  Cache cache;
  Run r;
  Tensor logits = forward(m, prompt, 0, cache);
  int64_t next = lf::argmax(logits).item<int64_t>();
  auto start = std::chrono::steady_clock::now();
  for (int64_t k = 0; k < c.tokens; ++k) {
    r.tokens.push_back(next);
    logits = forward(m, {next}, c.prompt + k, cache);
    next = lf::argmax(logits).item<int64_t>();
  }
  r.ms_per_token = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
                   static_cast<double>(c.tokens);
  r.logits = lf::cast(logits, DType::Float32).to_vector<float>();
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() { return i + 1 < argc ? std::atoll(argv[++i]) : 0; };
    if (a == "--cuda") lf::set_default_device(lf::Device::cuda(0));
    else if (a == "--bf16") c.dtype = DType::BFloat16;
    else if (a == "--layers") c.layers = next();
    else if (a == "--dim") c.dim = next();
    else if (a == "--heads") c.heads = next();
    else if (a == "--kv-heads") c.kv_heads = next();
    else if (a == "--vocab") c.vocab = next();
    else if (a == "--prompt") c.prompt = next();
    else if (a == "--tokens") c.tokens = next();
    else if (a == "--runs") c.runs = static_cast<int>(next());
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  Model m = make_model(c);
  std::vector<Run> runs;
  for (int r = 0; r < c.runs; ++r) {
    runs.push_back(generate(m));
    std::printf("run %d: %.3f ms a token; tokens", r, runs.back().ms_per_token);
    for (size_t k = 0; k < runs.back().tokens.size() && k < 16; ++k) std::printf(" %lld", static_cast<long long>(runs.back().tokens[k]));
    std::printf("%s\n", runs.back().tokens.size() > 16 ? " ..." : "");
  }
  bool same_tokens = true, same_bits = true;
  for (const Run& r : runs) {
    same_tokens = same_tokens && r.tokens == runs[0].tokens;
    same_bits = same_bits && std::memcmp(r.logits.data(), runs[0].logits.data(), r.logits.size() * 4) == 0;
  }
  std::printf("decoder L%lld D%lld H%lld KV%lld V%lld %s %s: %d runs, same tokens: %s, same final logits' bits: %s\n",
              static_cast<long long>(c.layers), static_cast<long long>(c.dim), static_cast<long long>(c.heads),
              static_cast<long long>(c.kv_heads), static_cast<long long>(c.vocab), lf::dtype_name(c.dtype),
              lf::default_device().is_cuda() ? "cuda" : "cpu", c.runs, same_tokens ? "yes" : "NO", same_bits ? "yes" : "NO");
  return same_tokens && same_bits ? 0 : 1;
}
