// The same program on the same inputs gives the same bits every run (issue 50, item 16): programs
// like the suite's (an MLP's training step, a pre-LN transformer block, a Llama-style decoder
// layer, a convolution stack, reductions and sorts) run twice in this process, with allocations
// of odd sizes between the runs so that every buffer lands elsewhere, and once in a child process;
// fused and unfused each give one digest of every output bit. (Fused and unfused may differ from
// each other in the last bits: another summation order. Each must repeat itself.)
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

namespace {

using lf::DType;
using lf::Params;
using lf::Tensor;

// FNV-1a over every output's dtype, shape and values (integers as int64, the rest as float64
// bits: a float64 holds each float dtype's value exactly).
struct Digest {
  uint64_t h = 1469598103934665603ull;
  void add(uint64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 1099511628211ull;
  }
  void add(const Tensor& t) {
    add(static_cast<uint64_t>(t.dtype()));
    for (int64_t s : t.shape()) add(static_cast<uint64_t>(s));
    if (lf::is_floating(t.dtype())) {
      for (double d : lf::cast(t, DType::Float64).to_vector<double>()) {
        uint64_t u;
        std::memcpy(&u, &d, sizeof u);
        add(u);
      }
    } else {
      for (int64_t i : lf::cast(t, DType::Int64).to_vector<int64_t>()) add(static_cast<uint64_t>(i));
    }
  }
};

using Program = std::function<std::vector<Tensor>()>;

Tensor param(lf::Shape shape, double scale) { return lf::randn(shape) * scale; }

std::vector<Tensor> mlp_step() {
  Params p = {{"w1", param({64, 32}, 0.2)}, {"b1", param({64}, 0.1)}, {"w2", param({10, 64}, 0.2)}, {"b2", param({10}, 0.1)}};
  Tensor x = lf::randn({48, 32});
  Tensor y = lf::randint(0, 10, {48});
  lf::optim::Adam adam = lf::optim::AdamW({.lr = 1e-2, .weight_decay = 0.01});
  std::vector<Tensor> out;
  for (int step = 0; step < 3; ++step) {
    auto [loss, g] = lf::value_and_grad([&](const Params& q) {
      Tensor h = lf::gelu(lf::linear(x, q.at("w1"), q.at("b1")));
      return lf::cross_entropy(lf::linear(h, q.at("w2"), q.at("b2")), y);
    })(p);
    adam.step(p, g);
    out.push_back(loss);
  }
  for (auto& [k, v] : p) out.push_back(v);
  return out;
}

std::vector<Tensor> transformer_block() {
  const int64_t B = 2, T = 37, D = 48, H = 4;
  Tensor x = lf::randn({B, T, D});
  Tensor wq = param({D, D}, 0.15), wk = param({D, D}, 0.15), wv = param({D, D}, 0.15), wo = param({D, D}, 0.15);
  Tensor w1 = param({4 * D, D}, 0.1), w2 = param({D, 4 * D}, 0.1);
  Tensor causal = lf::triu(lf::ones({T, T}, DType::Bool), 1);
  Tensor a = lf::layer_norm(x, 1);
  auto heads = [&](const Tensor& w) { return lf::transpose(lf::reshape(lf::linear(a, w), {B, T, H, D / H}), 1, 2); };
  Tensor s = lf::masked_fill(lf::matmul(heads(wq), lf::transpose(heads(wk), -1, -2)) * (1 / std::sqrt(D / H)), causal,
                             -INFINITY);
  Tensor o = lf::reshape(lf::transpose(lf::matmul(lf::softmax(s, -1), heads(wv)), 1, 2), {B, T, D});
  Tensor h = x + lf::linear(o, wo);
  h = h + lf::linear(lf::gelu(lf::linear(lf::layer_norm(h, 1), w1)), w2);
  return {h, lf::logsumexp(h, {-1})};
}

std::vector<Tensor> decoder_layer() {
  // RMSNorm, rotary embeddings by slice and cat, grouped-query attention by expand, SwiGLU.
  const int64_t T = 29, D = 64, H = 4, KV = 2, Dh = D / H;
  Tensor x = lf::randn({1, T, D});
  Tensor wq = param({D, D}, 0.12), wk = param({KV * Dh, D}, 0.12), wv = param({KV * Dh, D}, 0.12);
  Tensor wg = param({96, D}, 0.12), wu = param({96, D}, 0.12), wd = param({D, 96}, 0.1);
  Tensor pos = lf::unsqueeze(lf::arange(0.0, T), 1) * lf::unsqueeze(lf::exp(lf::arange(0.0, Dh / 2) * -0.5), 0);
  Tensor cos = lf::cos(pos), sin = lf::sin(pos);
  auto rotary = [&](const Tensor& t) {  // t [1, heads, T, Dh]
    Tensor a = lf::slice(t, -1, 0, Dh / 2), b = lf::slice(t, -1, Dh / 2, Dh);
    return lf::cat({a * cos - b * sin, a * sin + b * cos}, -1);
  };
  Tensor n = lf::rms_norm(x);
  auto split = [&](const Tensor& w, int64_t heads) { return lf::transpose(lf::reshape(lf::linear(n, w), {1, T, heads, Dh}), 1, 2); };
  Tensor q = rotary(split(wq, H)), k = rotary(split(wk, KV)), v = split(wv, KV);
  auto widen = [&](const Tensor& t) {
    return lf::reshape(lf::expand(lf::unsqueeze(t, 2), {1, KV, H / KV, T, Dh}), {1, H, T, Dh});
  };
  Tensor s = lf::matmul(q, lf::transpose(widen(k), -1, -2)) * (1 / std::sqrt(double(Dh)));
  s = lf::masked_fill(s, lf::triu(lf::ones({T, T}, DType::Bool), 1), -INFINITY);
  Tensor h = x + lf::reshape(lf::transpose(lf::matmul(lf::softmax(s, -1), widen(v)), 1, 2), {1, T, D});
  Tensor m = lf::rms_norm(h);
  Tensor out = h + lf::linear(lf::silu(lf::linear(m, wg)) * lf::linear(m, wu), wd);
  return {out, lf::argmax(out, {-1})};
}

std::vector<Tensor> conv_stack() {
  Tensor x = lf::randn({2, 3, 17, 17});
  Tensor w1 = param({8, 3, 3, 3}, 0.3), b1 = param({8}, 0.1), w2 = param({8, 8, 3, 3}, 0.2);
  Tensor h = lf::max_pool2d(lf::relu(lf::conv2d(x, w1, b1, 1, 1)), 2);
  h = lf::relu(lf::conv2d(h, w2, {}, 2, 1));
  return {h, lf::mean(h, {2, 3})};
}

std::vector<Tensor> reductions_and_sorts() {
  Tensor x = lf::randn({33, 1000}) * 3 + 1;
  Tensor col = lf::sum(x * lf::randn({33, 1}), {0});
  auto [vals, idx] = lf::topk(x, 5);
  auto [sorted, order] = lf::sort(lf::slice(x, 0, 0, 4), -1);
  return {lf::var(x, {1}), lf::softmax(x, 0), lf::cumsum(x, 1), col, lf::argmax(x, {1}), vals, idx, sorted, order,
          lf::sum(x), lf::norm(x)};
}

const std::map<std::string, Program>& programs() {
  static const std::map<std::string, Program> p = {{"mlp_step", mlp_step},
                                                    {"transformer_block", transformer_block},
                                                    {"decoder_layer", decoder_layer},
                                                    {"conv_stack", conv_stack},
                                                    {"reductions_and_sorts", reductions_and_sorts}};
  return p;
}

// name@fused -> digest, for every program, fused and unfused, from seed 1.
std::map<std::string, uint64_t> digests() {
  std::map<std::string, uint64_t> out;
  const bool saved = lf::fusion_enabled();
  for (bool fused : {true, false}) {
    lf::set_fusion_enabled(fused);
    for (const auto& [name, program] : programs()) {
      lf::manual_seed(1);
      Digest d;
      for (const Tensor& t : program()) d.add(t);
      out[name + (fused ? "@fused" : "@unfused")] = d.h;
    }
  }
  lf::set_fusion_enabled(saved);
  return out;
}

std::string format(const std::map<std::string, uint64_t>& d) {
  std::string s;
  for (const auto& [k, v] : d) s += k + " " + std::to_string(v) + "\n";
  return s;
}

TEST(Determinism, TwiceInOneProcess) {
  std::map<std::string, uint64_t> first = digests();
  // Move every later buffer: hold blocks of odd sizes, so that the allocator hands out others.
  std::vector<Tensor> hold;
  for (int64_t n : {7, 129, 4099, 65537}) hold.push_back(lf::zeros({n}) + 1);
  lf::sync();
  std::map<std::string, uint64_t> second = digests();
  EXPECT_EQ(format(first), format(second));
}

// The child: prints the digests to the file its parent names.
TEST(Determinism, ChildPrintsDigests) {
  const char* path = std::getenv("LAZYFUSE_DETERMINISM_OUT");
  if (!path) GTEST_SKIP() << "run by Determinism.TheSameInAnotherProcess";
  FILE* f = std::fopen(path, "w");
  ASSERT_NE(f, nullptr);
  std::fputs(format(digests()).c_str(), f);
  std::fclose(f);
}

TEST(Determinism, TheSameInAnotherProcess) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) GTEST_SKIP() << "no /proc/self/exe";
  self[n] = 0;
  char tmpl[] = "/tmp/lazyfuse-determinism-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  const std::string cmd = std::string("env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX LAZYFUSE_DETERMINISM_OUT=") + tmpl + " '" +
                          self + "' --gtest_filter=Determinism.ChildPrintsDigests >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::string child;
  if (FILE* f = std::fopen(tmpl, "r")) {
    char buf[4096];
    size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) child.append(buf, got);
    std::fclose(f);
  }
  std::remove(tmpl);
  EXPECT_EQ(format(digests()), child);
}

}  // namespace
