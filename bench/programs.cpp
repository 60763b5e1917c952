// Whole programs (issue 20, part 1): each written the way a user writes it with LazyFuse's public
// API (<lazyfuse/lazyfuse.h> only), measured as
//   - steady state per iteration (CPU: median over iterations; GPU: calls back to back, divided),
//   - the first call with an empty kernel cache (a fresh LAZYFUSE_CACHE_DIR, a new process),
//   - the first call of a second process on the same cache directory (kernels come from disk),
//   - kernels launched per iteration (lf::cache_stats().kernels_launched),
//   - host time per iteration (CPU: recording the program's ops, up to its sync point; GPU: until
//     lf::sync() returns, i.e. recording, fusing or replaying and launching, kernels still running),
//   - peak memory (CPU: the process's peak resident set above what it held before the program,
//     inputs made; GPU: device memory the caching allocator holds after the iterations, above before),
// fused and unfused (lf::set_fusion_enabled(false), what LAZYFUSE_FUSION=0 gives), and in Eigen
// (CPU, where the program can be written with it). numpy and PyTorch run the same programs in
// bench/programs_peers.py, which also checks LazyFuse's outputs (dumped by --dump) against a
// float64 reference of its own.
//
// Programs that the public API cannot express yet are in the registry with the ops they wait for
// (`needs`) and no body: they are listed in the table and the CSV as "waiting", never left out. When
// the ops land, give the entry a body and empty its `needs`.
//
// Each program runs in two child processes of this one (re-executing itself): a cold one (fresh
// cache directory: first call, steady state, unfused, Eigen, the dump) and a warm one (same
// directory: first call, peak memory). Nothing is shared between programs, so every first call is
// that program's own.
//
//   lazyfuse-programs [--device cpu|cuda] [--csv FILE] [--dump DIR] [--only SUBSTRING[,...]] [--skip SUBSTRING]
//                     [--quick] [--list]
//     --device: default LAZYFUSE_DEVICE, else cpu (this is a CPU benchmark unless told otherwise)
//     --csv:    one line per (program, config, dtype, impl), columns as bench/programs_peers.py writes
//     --dump:   writes every program's inputs and outputs (fused and unfused) under DIR for the check
//   lazyfuse-programs [--device cpu|cuda] --pair A,B [--pairs N]
//     Times two programs (the first whose key contains A, and B) in one process, one iteration of
//     each in turn, N pairs (default 150): the medians and the median of the pairs' ratios A / B.
//     On a machine whose speed drifts (the 2-core one: the same program 2x slower from one run to
//     the next), a ratio of interleaved iterations holds where two separate timings do not; issue
//     21's CPU target (the transformer block within 1.15x of its matmuls) is measured so.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#ifdef LAZYFUSE_HAVE_EIGEN
#include <Eigen/Dense>
#include <unsupported/Eigen/SpecialFunctions>  // Array::erf
#endif

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// ---------------------------------------------------------------------------------------------
// The registry.

// Named tensors: a program's inputs, or its outputs.
struct Vars {
  std::vector<std::pair<std::string, lf::Tensor>> v;
  void add(const std::string& name, lf::Tensor t) { v.emplace_back(name, std::move(t)); }
  const lf::Tensor& operator[](const std::string& name) const {
    for (const auto& [n, t] : v)
      if (n == name) return t;
    throw std::runtime_error("no variable " + name);
  }
};

struct Program {
  std::string name;    // CSV key, the same in bench/programs_peers.py
  std::string config;  // sizes, e.g. B1_T128_D512_H8
  lf::DType dtype = lf::DType::Float32;
  std::vector<std::string> needs;  // ops the public API lacks; non-empty: waiting, no body
  bool gpu_only = false;           // sizes too large for the 2-core CPU suite
  std::string note;
  std::function<Vars()> setup;                    // inputs, made on the host (no kernel) where possible
  std::function<Vars(const Vars&)> body;          // records the program; returns what it keeps
  std::function<std::function<void()>(const Vars&)> eigen;  // prepares Eigen's version, returns one iteration
  std::string key() const { return name + " " + config + " " + lf::dtype_name(dtype); }
};

// Host-made inputs: a normal or uniform float32 tensor from a seeded generator (no LazyFuse kernel
// runs, so the first call pays for everything it compiles, loading LLVM included), cast on the
// device to a 16-bit dtype where asked (that cast is a kernel, made before the first call).
struct HostRng {
  std::mt19937_64 gen;
  explicit HostRng(uint64_t seed) : gen(seed) {}
  lf::Tensor normal(lf::Shape shape, double scale = 1.0, lf::DType dtype = lf::DType::Float32) {
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> v(static_cast<size_t>(lf::shape_numel(shape)));
    for (float& x : v) x = float(d(gen) * scale);
    return finish(lf::from_vector(v, shape), dtype);
  }
  lf::Tensor uniform(lf::Shape shape, double lo, double hi, lf::DType dtype = lf::DType::Float32) {
    std::uniform_real_distribution<float> d{float(lo), float(hi)};
    std::vector<float> v(static_cast<size_t>(lf::shape_numel(shape)));
    for (float& x : v) x = d(gen);
    return finish(lf::from_vector(v, shape), dtype);
  }
  lf::Tensor integers(lf::Shape shape, int64_t hi) {
    std::uniform_int_distribution<int64_t> d(0, hi - 1);
    std::vector<int64_t> v(static_cast<size_t>(lf::shape_numel(shape)));
    for (int64_t& x : v) x = d(gen);
    return lf::from_vector(v, shape);
  }
  static lf::Tensor finish(lf::Tensor t, lf::DType dtype) { return dtype == lf::DType::Float32 ? t : t.to(dtype); }
};

#ifdef LAZYFUSE_HAVE_EIGEN
using RowMatrixXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowArrayXXf = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
RowMatrixXf emat(const lf::Tensor& t, int64_t r, int64_t c) {
  std::vector<float> v = t.to_vector<float>();
  return Eigen::Map<RowMatrixXf>(v.data(), r, c);
}
Eigen::RowVectorXf erow(const lf::Tensor& t) {
  std::vector<float> v = t.to_vector<float>();
  return Eigen::Map<Eigen::RowVectorXf>(v.data(), Eigen::Index(v.size()));
}
// Rows normalized to mean 0, variance 1 (biased), then scaled and shifted.
void eigen_layer_norm(const RowMatrixXf& x, const Eigen::RowVectorXf& w, const Eigen::RowVectorXf& b, RowMatrixXf& y) {
  y = x;
  Eigen::VectorXf mean = y.rowwise().mean();
  y.colwise() -= mean;
  Eigen::ArrayXf inv = (y.array().square().rowwise().mean() + 1e-5f).rsqrt();
  y = (y.array().colwise() * inv).matrix();
  y = ((y.array().rowwise() * w.array()).rowwise() + b.array()).matrix();
}
void eigen_softmax_rows(RowMatrixXf& s) {
  Eigen::VectorXf mx = s.rowwise().maxCoeff();
  s = (s.colwise() - mx).array().exp().matrix();
  Eigen::ArrayXf sum = s.rowwise().sum();
  s = (s.array().colwise() / sum).matrix();
}
#endif

// ---- The transformer encoder block (pre-LN, causal, GELU MLP). Weights as nn.Linear keeps them,
// [out, in], applied as x @ w^T + b.
Program transformer(int64_t B, int64_t T, int64_t D, int64_t H, lf::DType dtype, bool gpu_only) {
  Program p;
  p.name = "transformer_block";
  p.config = "B" + std::to_string(B) + "_T" + std::to_string(T) + "_D" + std::to_string(D) + "_H" + std::to_string(H);
  p.dtype = dtype;
  p.gpu_only = gpu_only;
  p.setup = [=] {
    HostRng r(1);
    const double s = 1.0 / std::sqrt(double(D));
    Vars in;
    in.add("x", r.normal({B, T, D}, 1.0, dtype));
    in.add("ln1_w", r.uniform({D}, 0.5, 1.5, dtype));
    in.add("ln1_b", r.normal({D}, 0.1, dtype));
    in.add("w_qkv", r.normal({3 * D, D}, s, dtype));
    in.add("b_qkv", r.normal({3 * D}, 0.1, dtype));
    in.add("w_o", r.normal({D, D}, s, dtype));
    in.add("b_o", r.normal({D}, 0.1, dtype));
    in.add("ln2_w", r.uniform({D}, 0.5, 1.5, dtype));
    in.add("ln2_b", r.normal({D}, 0.1, dtype));
    in.add("w_1", r.normal({4 * D, D}, s, dtype));
    in.add("b_1", r.normal({4 * D}, 0.1, dtype));
    in.add("w_2", r.normal({D, 4 * D}, 0.5 * s, dtype));
    in.add("b_2", r.normal({D}, 0.1, dtype));
    return in;
  };
  p.body = [=](const Vars& in) {
    const int64_t Dh = D / H;
    auto linear = [](const lf::Tensor& x, const lf::Tensor& w, const lf::Tensor& b) {
      return lf::matmul(x, w.transpose(0, 1)) + b;
    };
    const lf::Tensor& x = in["x"];
    // Attention: one projection to q, k, v; heads by reshape and transpose.
    lf::Tensor h = lf::layer_norm(x, 1, in["ln1_w"], in["ln1_b"]);
    lf::Tensor qkv = linear(h, in["w_qkv"], in["b_qkv"]);  // [B, T, 3D]
    auto head = [&](int64_t i) { return qkv.slice(2, i * D, (i + 1) * D).reshape({B, T, H, Dh}).transpose(1, 2); };
    lf::Tensor q = head(0), k = head(1), v = head(2);  // [B, H, T, Dh]
    lf::Tensor scores = lf::matmul(q, k.transpose(2, 3)) * (1.0 / std::sqrt(double(Dh)));  // [B, H, T, T]
    lf::Tensor pos = lf::arange(0, double(T), 1, lf::DType::Int64);
    lf::Tensor causal = pos.unsqueeze(1) >= pos.unsqueeze(0);  // [T, T]: query i sees keys j <= i
    lf::Tensor attn = lf::softmax(lf::where(causal, scores, -std::numeric_limits<double>::infinity()), -1);
    lf::Tensor o = lf::matmul(attn, v).transpose(1, 2).reshape({B, T, D});
    lf::Tensor x1 = x + linear(o, in["w_o"], in["b_o"]);
    // MLP.
    lf::Tensor m = lf::gelu(linear(lf::layer_norm(x1, 1, in["ln2_w"], in["ln2_b"]), in["w_1"], in["b_1"]));
    Vars out;
    out.add("y", x1 + linear(m, in["w_2"], in["b_2"]));
    return out;
  };
#ifdef LAZYFUSE_HAVE_EIGEN
  if (dtype == lf::DType::Float32) {
    p.eigen = [=](const Vars& in) -> std::function<void()> {
      struct State {
        std::vector<RowMatrixXf> x;
        RowMatrixXf wqkv_t, wo_t, w1_t, w2_t, y;
        Eigen::RowVectorXf ln1w, ln1b, bqkv, bo, ln2w, ln2b, b1, b2;
      };
      auto st = std::make_shared<State>();
      RowMatrixXf all = emat(in["x"], B * T, D);
      for (int64_t b = 0; b < B; ++b) st->x.push_back(all.block(b * T, 0, T, D));
      st->wqkv_t = emat(in["w_qkv"], 3 * D, D).transpose();
      st->wo_t = emat(in["w_o"], D, D).transpose();
      st->w1_t = emat(in["w_1"], 4 * D, D).transpose();
      st->w2_t = emat(in["w_2"], D, 4 * D).transpose();
      st->ln1w = erow(in["ln1_w"]), st->ln1b = erow(in["ln1_b"]), st->bqkv = erow(in["b_qkv"]);
      st->bo = erow(in["b_o"]), st->ln2w = erow(in["ln2_w"]), st->ln2b = erow(in["ln2_b"]);
      st->b1 = erow(in["b_1"]), st->b2 = erow(in["b_2"]);
      return [=] {
        const int64_t Dh = D / H;
        const float scale = 1.0f / std::sqrt(float(Dh));
        RowMatrixXf h, qkv, s, o(T, D), x1, m;
        for (int64_t b = 0; b < B; ++b) {
          const RowMatrixXf& x = st->x[size_t(b)];
          eigen_layer_norm(x, st->ln1w, st->ln1b, h);
          qkv.noalias() = h * st->wqkv_t;
          qkv.rowwise() += st->bqkv;
          for (int64_t hd = 0; hd < H; ++hd) {
            auto q = qkv.block(0, hd * Dh, T, Dh);
            auto k = qkv.block(0, D + hd * Dh, T, Dh);
            auto v = qkv.block(0, 2 * D + hd * Dh, T, Dh);
            s.noalias() = (q * k.transpose()) * scale;
            for (int64_t i = 0; i < T; ++i) s.row(i).tail(T - 1 - i).setConstant(-std::numeric_limits<float>::infinity());
            eigen_softmax_rows(s);
            o.block(0, hd * Dh, T, Dh).noalias() = s * v;
          }
          x1.noalias() = o * st->wo_t;
          x1.rowwise() += st->bo;
          x1 += x;
          eigen_layer_norm(x1, st->ln2w, st->ln2b, h);
          m.noalias() = h * st->w1_t;
          m.rowwise() += st->b1;
          m = (0.5f * m.array() * (1 + (m.array() * float(M_SQRT1_2)).erf())).matrix();
          st->y.noalias() = m * st->w2_t;
          st->y.rowwise() += st->b2;
          st->y += x1;
        }
      };
    };
  }
#endif
  return p;
}

// ---- MLP forward: softmax(relu(relu(x@w1+b1)@w2+b2)@w3+b3), the cpu_bench MLP at its large size.
Program mlp() {
  const int64_t Bt = 256, I = 512, Hd = 512, O = 64;
  Program p;
  p.name = "mlp";
  p.config = "B256_512-512-512-64";
  p.setup = [=] {
    HostRng r(1);
    Vars in;
    in.add("x", r.normal({Bt, I}));
    in.add("w1", r.normal({I, Hd}, 0.05)), in.add("b1", r.normal({Hd}, 0.05));
    in.add("w2", r.normal({Hd, Hd}, 0.05)), in.add("b2", r.normal({Hd}, 0.05));
    in.add("w3", r.normal({Hd, O}, 0.05)), in.add("b3", r.normal({O}, 0.05));
    return in;
  };
  p.body = [](const Vars& in) {
    lf::Tensor h1 = lf::relu(lf::matmul(in["x"], in["w1"]) + in["b1"]);
    lf::Tensor h2 = lf::relu(lf::matmul(h1, in["w2"]) + in["b2"]);
    Vars out;
    out.add("y", lf::softmax(lf::matmul(h2, in["w3"]) + in["b3"], -1));
    return out;
  };
#ifdef LAZYFUSE_HAVE_EIGEN
  p.eigen = [=](const Vars& in) -> std::function<void()> {
    struct S {
      RowMatrixXf x, w1, w2, w3, h1, h2, y;
      Eigen::RowVectorXf b1, b2, b3;
    };
    auto s = std::make_shared<S>();
    s->x = emat(in["x"], Bt, I), s->w1 = emat(in["w1"], I, Hd), s->w2 = emat(in["w2"], Hd, Hd), s->w3 = emat(in["w3"], Hd, O);
    s->b1 = erow(in["b1"]), s->b2 = erow(in["b2"]), s->b3 = erow(in["b3"]);
    return [s] {
      s->h1.noalias() = s->x * s->w1;
      s->h1 = (s->h1.rowwise() + s->b1).cwiseMax(0.0f);
      s->h2.noalias() = s->h1 * s->w2;
      s->h2 = (s->h2.rowwise() + s->b2).cwiseMax(0.0f);
      s->y.noalias() = s->h2 * s->w3;
      s->y.rowwise() += s->b3;
      eigen_softmax_rows(s->y);
    };
  };
#endif
  return p;
}

// ---- Softmax cross-entropy over class indices, mean over the batch. Without a gather, the label's
// log-probability is picked by a one-hot mask from comparing the labels with arange(C) (the JAX /
// optax spelling: jax.nn.one_hot is that comparison); it costs one pass over the logits, as
// log_softmax does, not a matmul.
Program cross_entropy() {
  const int64_t N = 4096, C = 1000;
  Program p;
  p.name = "cross_entropy";
  p.config = "N4096_C1000";
  p.note = "one-hot by comparison with arange (no gather yet)";
  p.setup = [=] {
    HostRng r(1);
    Vars in;
    in.add("logits", r.normal({N, C}, 2.0));
    in.add("labels", r.integers({N}, C));
    return in;
  };
  p.body = [=](const Vars& in) {
    lf::Tensor logp = lf::log_softmax(in["logits"], -1);
    lf::Tensor onehot = in["labels"].unsqueeze(1) == lf::arange(0, double(C), 1, lf::DType::Int64).unsqueeze(0);
    Vars out;
    out.add("loss", -lf::where(onehot, logp, 0.0).sum({1}).mean());
    return out;
  };
#ifdef LAZYFUSE_HAVE_EIGEN
  p.eigen = [=](const Vars& in) -> std::function<void()> {
    auto logits = std::make_shared<RowMatrixXf>(emat(in["logits"], N, C));
    auto labels = std::make_shared<std::vector<int64_t>>(in["labels"].to_vector<int64_t>());
    return [=] {
      Eigen::VectorXf mx = logits->rowwise().maxCoeff();
      Eigen::ArrayXf lse = (logits->colwise() - mx).array().exp().rowwise().sum().log() + mx.array();
      double total = 0;
      for (int64_t i = 0; i < N; ++i) total += lse(i) - (*logits)(i, (*labels)[size_t(i)]);
      volatile float loss = float(total / N);
      (void)loss;
    };
  };
#endif
  return p;
}

// ---- Stencils over a square grid, 50 steps. jacobi2d keeps the boundary: each step is a slice
// assignment in value semantics, a = index_put(a, {1:-1, 1:-1}, 0.2 * (5-point sum)). heat2d has
// an insulated (Neumann) boundary: the grid padded by replicating its edges (lf::pad), then
// a + 0.1 * (4-neighbour Laplacian) over the whole grid. Each step is one kernel (issue 23's
// shape ops: index math in the kernel). Nothing syncs inside the loop.
constexpr int kSteps = 50;

Program stencil(const std::string& kind, int64_t n) {
  Program p;
  p.name = kind;  // "jacobi2d" or "heat2d"
  p.config = std::to_string(n) + "x" + std::to_string(n) + "_50steps";
  p.setup = [=] {
    HostRng r(1);
    Vars in;
    in.add("a", r.normal({n, n}));
    return in;
  };
  const bool heat = kind == "heat2d", with_cat = kind == "jacobi2d_cat";
  if (with_cat) p.note = "jacobi2d written with cat, as without slice assignment: the fixed edges and the new interior";
  p.body = [=](const Vars& in) {
    lf::Tensor a = in["a"];
    for (int t = 0; t < kSteps; ++t) {
      if (with_cat) {
        auto at = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) { return a.slice(0, r0, r1).slice(1, c0, c1); };
        lf::Tensor inner = 0.2 * (at(1, n - 1, 1, n - 1) + at(1, n - 1, 0, n - 2) + at(1, n - 1, 2, n) +
                                  at(2, n, 1, n - 1) + at(0, n - 2, 1, n - 1));
        lf::Tensor mid = lf::cat({at(1, n - 1, 0, 1), inner, at(1, n - 1, n - 1, n)}, 1);
        inner = lf::Tensor();  // temporaries: read inside the step's kernel
        a = lf::cat({at(0, 1, 0, n), mid, at(n - 1, n, 0, n)}, 0);
      } else if (heat) {
        lf::Tensor p = lf::pad(a, {1, 1, 1, 1}, lf::PadMode::Replicate);
        auto at = [&](int64_t r0, int64_t c0) { return p.slice(0, r0, r0 + n).slice(1, c0, c0 + n); };
        lf::Tensor lap = at(1, 0) + at(1, 2) + at(2, 1) + at(0, 1) - 4 * a;
        p = lf::Tensor();  // a temporary: only its slices are read, inside the step's kernel
        a = a + 0.1 * lap;
      } else {
        auto at = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) { return a.slice(0, r0, r1).slice(1, c0, c1); };
        lf::Tensor c = at(1, n - 1, 1, n - 1), w = at(1, n - 1, 0, n - 2), e = at(1, n - 1, 2, n),
                   s = at(2, n, 1, n - 1), nn = at(0, n - 2, 1, n - 1);
        a = lf::index_put(a, {lf::slice(1, -1), lf::slice(1, -1)}, 0.2 * (c + w + e + s + nn));
      }
    }
    Vars out;
    out.add("a", a);
    return out;
  };
#ifdef LAZYFUSE_HAVE_EIGEN
  p.eigen = [=](const Vars& in) -> std::function<void()> {
    std::vector<float> av = in["a"].to_vector<float>();
    auto A0 = std::make_shared<RowArrayXXf>(Eigen::Map<RowArrayXXf>(av.data(), n, n));
    auto A = std::make_shared<RowArrayXXf>(), B = std::make_shared<RowArrayXXf>();
    auto P = std::make_shared<RowArrayXXf>(n + 2, n + 2);
    return [=] {
      *A = *A0;
      *B = *A0;
      const int64_t m = n - 2;
      for (int t = 0; t < kSteps; ++t) {
        if (heat) {  // the edge-replicated padding, then the Laplacian over the whole grid
          P->block(1, 1, n, n) = *A;
          P->block(0, 1, 1, n) = A->row(0);
          P->block(n + 1, 1, 1, n) = A->row(n - 1);
          P->col(0) = P->col(1);
          P->col(n + 1) = P->col(n);
          *B = *A + 0.1f * (P->block(1, 0, n, n) + P->block(1, 2, n, n) + P->block(2, 1, n, n) +
                            P->block(0, 1, n, n) - 4 * *A);
        } else {
          B->block(1, 1, m, m) = 0.2f * (A->block(1, 1, m, m) + A->block(1, 0, m, m) + A->block(1, 2, m, m) +
                                         A->block(2, 1, m, m) + A->block(0, 1, m, m));
        }
        A->swap(*B);
      }
    };
  };
#endif
  return p;
}

// ---- Monte Carlo pi: xy = rand({2^22, 2}) (kept: the program returns it), inside = x^2 + y^2 < 1.
Program monte_carlo_pi() {
  const int64_t n = int64_t{1} << 22;
  Program p;
  p.name = "monte_carlo_pi";
  p.config = "2^22";
  p.setup = [] { return Vars{}; };
  p.body = [=](const Vars&) {
    lf::manual_seed(42);  // the same points every iteration
    lf::Tensor xy = lf::rand({n, 2});
    lf::Tensor inside = lf::sum(lf::square(xy), {1}) < 1;
    Vars out;
    lf::Tensor count = lf::sum(inside);  // int64
    out.add("count", count);
    out.add("pi", count * (4.0 / double(n)));
    out.add("xy", xy);
    return out;
  };
  return p;
}

// ---- Black-Scholes, call and put.
Program black_scholes() {
  const int64_t n = int64_t{1} << 22;
  Program p;
  p.name = "black_scholes";
  p.config = "2^22";
  p.setup = [=] {
    HostRng r(1);
    Vars in;
    in.add("S", r.uniform({n}, 10, 100));
    in.add("K", r.uniform({n}, 10, 100));
    in.add("T", r.uniform({n}, 0.1, 2.1));
    return in;
  };
  const float rate = 0.02f, vol = 0.3f;
  p.body = [=](const Vars& in) {
    const lf::Tensor &S = in["S"], &K = in["K"], &T = in["T"];
    lf::Tensor sqrt_t = lf::sqrt(T);
    lf::Tensor d1 = (lf::log(S / K) + (rate + 0.5 * vol * vol) * T) / (vol * sqrt_t);
    lf::Tensor d2 = d1 - vol * sqrt_t;
    auto cdf = [](const lf::Tensor& z) { return 0.5 * (1 + lf::erf(z * 0.70710678118654752)); };
    lf::Tensor disc = K * lf::exp(-rate * T);
    Vars out;
    out.add("call", S * cdf(d1) - disc * cdf(d2));
    out.add("put", disc * cdf(-d2) - S * cdf(-d1));
    return out;
  };
#ifdef LAZYFUSE_HAVE_EIGEN
  p.eigen = [=](const Vars& in) -> std::function<void()> {
    struct St {
      Eigen::ArrayXf S, K, T, call, put;
    };
    auto s = std::make_shared<St>();
    auto arr = [](const lf::Tensor& t) {
      std::vector<float> v = t.to_vector<float>();
      return Eigen::ArrayXf(Eigen::Map<Eigen::ArrayXf>(v.data(), Eigen::Index(v.size())));
    };
    s->S = arr(in["S"]), s->K = arr(in["K"]), s->T = arr(in["T"]);
    return [=] {
      Eigen::ArrayXf sqrt_t = s->T.sqrt();
      Eigen::ArrayXf d1 = ((s->S / s->K).log() + (rate + 0.5f * vol * vol) * s->T) / (vol * sqrt_t);
      Eigen::ArrayXf d2 = d1 - vol * sqrt_t;
      Eigen::ArrayXf disc = s->K * (-rate * s->T).exp();
      const float k = float(M_SQRT1_2);
      s->call = s->S * 0.5f * (1 + (d1 * k).erf()) - disc * 0.5f * (1 + (d2 * k).erf());
      s->put = disc * 0.5f * (1 + (-d2 * k).erf()) - s->S * 0.5f * (1 + (-d1 * k).erf());
    };
  };
#endif
  return p;
}

// ---- Convolutional programs (issue 22), inputs named as bench/programs_peers.py's. Inference
// batch norm after each convolution; every elementwise op after a convolution is its epilogue.
// Inference batch norm's parameters of one convolution's output channels, named <prefix>_g/_be/_m/_v.
void add_bn(Vars& in, HostRng& r, const std::string& prefix, int64_t c, lf::DType dtype) {
  in.add(prefix + "_g", r.uniform({c}, 0.5, 1.5, dtype));
  in.add(prefix + "_be", r.normal({c}, 0.1, dtype));
  in.add(prefix + "_m", r.normal({c}, 0.1, dtype));
  in.add(prefix + "_v", r.uniform({c}, 0.5, 1.5, dtype));
}
lf::Tensor conv_bn(const Vars& in, const lf::Tensor& x, const std::string& prefix, int64_t stride, int64_t pad) {
  return lf::batch_norm(lf::conv2d(x, in[prefix + "_w"], {}, stride, pad), in[prefix + "_m"], in[prefix + "_v"],
                        in[prefix + "_g"], in[prefix + "_be"]);
}

Program resnet_basic_block(lf::DType dtype) {
  const int64_t N = 32, C = 64, H = 56;
  Program p;
  p.name = "resnet_basic_block";
  p.config = "32x64x56x56";
  p.dtype = dtype;
  p.note = "relu(bn2(conv3x3(relu(bn1(conv3x3(x))))) + x), inference batch norm";
  p.setup = [=] {
    HostRng r(1);
    Vars in;
    double s = 1 / std::sqrt(double(C * 9));
    in.add("x", r.normal({N, C, H, H}, 1.0, dtype));
    for (const char* k : {"1", "2"}) {
      in.add(std::string("w") + k, r.normal({C, C, 3, 3}, s, dtype));
      in.add(std::string("g") + k, r.uniform({C}, 0.5, 1.5, dtype));
      in.add(std::string("be") + k, r.normal({C}, 0.1, dtype));
      in.add(std::string("m") + k, r.normal({C}, 0.1, dtype));
      in.add(std::string("v") + k, r.uniform({C}, 0.5, 1.5, dtype));
    }
    return in;
  };
  p.body = [](const Vars& in) {
    lf::Tensor h = lf::relu(lf::batch_norm(lf::conv2d(in["x"], in["w1"], {}, 1, 1), in["m1"], in["v1"], in["g1"], in["be1"]));
    h = lf::batch_norm(lf::conv2d(h, in["w2"], {}, 1, 1), in["m2"], in["v2"], in["g2"], in["be2"]);
    Vars out;
    out.add("y", lf::relu(h + in["x"]));
    return out;
  };
  return p;
}

// ResNet-18's forward pass (inference, torchvision's layout): conv7x7/2 + bn + relu, maxpool3x3/2,
// four stages of two basic blocks (64, 128, 256, 512 channels; the first block of stages 2-4
// strided, its shortcut a 1x1/2 convolution + bn), global average pool, fully connected 512 -> 1000.
// Parameters named as bench/programs_peers.py's resnet18_torch reads them.
Program resnet18(lf::DType dtype) {
  const int64_t N = 32, R = 224;
  Program p;
  p.name = "resnet18";
  p.config = "B32_224x224";
  p.dtype = dtype;
  p.gpu_only = true;
  p.note = "inference; batch norm folded into the convolutions (float32), in their cuDNN epilogue (16-bit)";
  p.setup = [=] {
    HostRng r(1);
    Vars in;
    auto conv = [&](const std::string& prefix, int64_t o, int64_t c, int64_t k) {
      in.add(prefix + "_w", r.normal({o, c, k, k}, std::sqrt(2.0 / double(c * k * k)), dtype));  // He
      add_bn(in, r, prefix, o, dtype);
    };
    in.add("x", r.normal({N, 3, R, R}, 1.0, dtype));
    conv("conv1", 64, 3, 7);
    int64_t c = 64;
    for (int64_t stage = 1; stage <= 4; ++stage) {
      int64_t o = 64 << (stage - 1);
      for (int64_t b = 0; b < 2; ++b) {
        std::string pre = "l" + std::to_string(stage) + "_" + std::to_string(b);
        conv(pre + "_c1", o, b == 0 ? c : o, 3);
        conv(pre + "_c2", o, o, 3);
        if (b == 0 && stage > 1) conv(pre + "_ds", o, c, 1);
      }
      c = o;
    }
    in.add("fc_w", r.normal({1000, 512}, 1 / std::sqrt(512.0), dtype));
    in.add("fc_b", r.normal({1000}, 0.01, dtype));
    return in;
  };
  p.body = [=](const Vars& in) {
    lf::Tensor h = lf::relu(conv_bn(in, in["x"], "conv1", 2, 3));
    h = lf::max_pool2d(h, 3, 2, 1);
    for (int64_t stage = 1; stage <= 4; ++stage)
      for (int64_t b = 0; b < 2; ++b) {
        std::string pre = "l" + std::to_string(stage) + "_" + std::to_string(b);
        int64_t stride = b == 0 && stage > 1 ? 2 : 1;
        lf::Tensor y = lf::relu(conv_bn(in, h, pre + "_c1", stride, 1));
        y = conv_bn(in, y, pre + "_c2", 1, 1);
        lf::Tensor shortcut = stride == 2 ? conv_bn(in, h, pre + "_ds", 2, 0) : h;
        h = lf::relu(y + shortcut);
      }
    h = lf::reshape(lf::adaptive_avg_pool2d(h, 1), {N, 512});
    Vars out;
    out.add("logits", lf::matmul(h, in["fc_w"].transpose(0, 1)) + in["fc_b"]);
    return out;
  };
  return p;
}

Program conv_relu_maxpool() {
  const int64_t N = 8, C = 32, H = 56, O = 64;
  Program p;
  p.name = "conv_relu_maxpool";
  p.config = "8x32x56x56_to_64";
  p.note = "maxpool2x2(relu(conv3x3(x) + bias)); the pool is a kernel of its own (not fused yet)";
  p.setup = [=] {
    HostRng r(1);
    Vars in;
    in.add("x", r.normal({N, C, H, H}));
    in.add("w", r.normal({O, C, 3, 3}, 1 / std::sqrt(double(C * 9))));
    in.add("b", r.normal({O}, 0.1));
    return in;
  };
  p.body = [](const Vars& in) {
    Vars out;
    out.add("y", lf::max_pool2d(lf::relu(lf::conv2d(in["x"], in["w"], in["b"], 1, 1)), 2));
    return out;
  };
  return p;
}

// ---- Indexing, scatter, scans and sorting (issue 23).

// Token embedding then layer norm: the gather is index math inside the layer norm's row kernel.
Program embedding_layernorm(int64_t B, int64_t T, int64_t V, int64_t D) {
  Program p;
  p.name = "embedding_layernorm";
  p.config = "B" + std::to_string(B) + "_T" + std::to_string(T) + "_V" + std::to_string(V) + "_D" + std::to_string(D);
  p.setup = [=] {
    HostRng r(1);
    Vars in;
    in.add("ids", r.integers({B, T}, V));
    in.add("table", r.normal({V, D}));
    in.add("w", r.uniform({D}, 0.5, 1.5));
    in.add("b", r.normal({D}, 0.1));
    return in;
  };
  p.body = [=](const Vars& in) {
    Vars out;
    out.add("y", lf::layer_norm(lf::embedding(in["table"], in["ids"]), 1, in["w"], in["b"]));
    return out;
  };
  return p;
}

// One k-means step: distances by broadcasting, argmin, per-cluster sums (index_add) and counts
// (bincount: its size is data, so it reads max and min of the assignments, a sync point).
Program kmeans_step(int64_t N = 65536) {
  const int64_t D = 16, K = 64;
  Program p;
  p.name = "kmeans_step";
  p.config = "N" + std::to_string(N) + "_D16_K64";
  p.note = "bincount reads the assignments' max and min (a sync point inside the step)";
  p.setup = [=] {
    HostRng r(1);
    Vars in;
    in.add("X", r.normal({N, D}));
    in.add("C", r.normal({K, D}));
    return in;
  };
  p.body = [=](const Vars& in) {
    const lf::Tensor &X = in["X"], &C = in["C"];
    // The distances are not held by a name: held across the step's sync point (bincount's),
    // they would have to be written, and the argmin would read them back (README, "Indexing").
    lf::Tensor a = lf::argmin(lf::sum(lf::square(X.unsqueeze(1) - C.unsqueeze(0)), {-1}), {1});
    lf::Tensor sums = lf::index_add(lf::zeros({K, D}), 0, a, X);
    lf::Tensor counts = lf::bincount(a, {}, K);
    Vars out;
    out.add("centroids", sums / lf::cast(lf::clamp(counts, 1, std::numeric_limits<int64_t>::max()), lf::DType::Float32).unsqueeze(1));
    out.add("counts", counts);
    return out;
  };
  return p;
}

Program cumsum_program() {
  Program p;
  p.name = "cumsum";
  p.config = "4096x4096_dim1";
  p.setup = [] {
    HostRng r(1);
    Vars in;
    in.add("x", r.normal({4096, 4096}));
    return in;
  };
  p.body = [](const Vars& in) {
    Vars out;
    out.add("y", lf::cumsum(in["x"], 1));
    return out;
  };
  return p;
}

// A running mean (issue 23: a scan fused with its producer and consumer), along the last dim
// ([32768, 256]: one kernel on either device) or a middle one ([64, 256, 512]: one kernel on a
// GPU, a thread a line side by side; on the CPU the library's scan between two kernels,
// fuse::fused_scan).
Program running_mean_program(bool last) {
  Program p;
  p.name = "running_mean";
  p.config = last ? "32768x256_dim1" : "64x256x512_dim1";
  p.setup = [=] {
    HostRng r(1);
    Vars in;
    in.add("x", last ? r.normal({32768, 256}) : r.normal({64, 256, 512}));
    return in;
  };
  p.body = [=](const Vars& in) {
    Vars out;
    lf::Tensor count = last ? lf::arange(1.0, 257).reshape({1, 256}) : lf::arange(1.0, 257).reshape({1, 256, 1});
    out.add("y", lf::cumsum(lf::relu(in["x"]) * 0.5f, 1) / count);
    return out;
  };
  return p;
}

// One long line: on a GPU the single-pass decoupled look-back scan, on the CPU the two-pass
// chunked scan over the thread pool.
Program cumsum_long_program(int log2n = 24) {
  const int64_t N = int64_t{1} << log2n;
  Program p;
  p.name = "cumsum_1d";
  p.config = "2^" + std::to_string(log2n);
  p.setup = [=] {
    HostRng r(1);
    Vars in;
    in.add("x", r.uniform({N}, 0, 1));
    return in;
  };
  p.body = [](const Vars& in) {
    Vars out;
    out.add("y", lf::cumsum(in["x"], 0));
    return out;
  };
  return p;
}

// 2^24 weighted values into 2^16 bins (a histogram): GPU atomics, CPU per-chunk bins.
Program scatter_add_program() {
  const int64_t N = int64_t{1} << 24, B = int64_t{1} << 16;
  Program p;
  p.name = "scatter_add";
  p.config = "2^24_into_2^16";
  p.setup = [=] {
    HostRng r(1);
    Vars in;
    in.add("index", r.integers({N}, B));
    in.add("src", r.uniform({N}, 0, 1));
    return in;
  };
  p.body = [=](const Vars& in) {
    Vars out;
    out.add("y", lf::scatter_add(lf::zeros({B}), 0, in["index"], in["src"]));
    return out;
  };
  return p;
}

// Many rows: each sorted by a block of its own on a GPU (rows of 4096 and of 256), or by the radix
// sort's passes, the rows side by side (rows of 65536).
Program sort_program(int64_t rows, int64_t n) {
  Program p;
  p.name = "sort";
  p.config = std::to_string(rows) + "x" + std::to_string(n) + "_dim1";
  p.setup = [=] {
    HostRng r(1);
    Vars in;
    in.add("x", r.normal({rows, n}));
    return in;
  };
  p.body = [](const Vars& in) {
    auto [values, indices] = lf::sort(in["x"], 1);
    Vars out;
    out.add("values", values);
    out.add("indices", indices);
    return out;
  };
  return p;
}

// One long row (issue 23's GPU target: 2^24 float32 keys, sorted with their int64 positions).
Program sort_long_program() {
  const int64_t N = int64_t{1} << 24;
  Program p;
  p.name = "sort_1d";
  p.config = "2^24";
  p.setup = [=] {
    HostRng r(1);
    Vars in;
    in.add("x", r.normal({N}));
    return in;
  };
  p.body = [](const Vars& in) {
    auto [values, indices] = lf::sort(in["x"], 0);
    Vars out;
    out.add("values", values);
    out.add("indices", indices);
    return out;
  };
  return p;
}

// Small k over many long rows (issue 23's GPU target: the 16 largest of each of 4096 rows of 4096).
Program topk_many_rows_program() {
  const int64_t R = 4096, N = 4096, K = 16;
  Program p;
  p.name = "topk";
  p.config = "4096x4096_k16";
  p.setup = [=] {
    HostRng r(1);
    Vars in;
    in.add("x", r.normal({R, N}));
    return in;
  };
  p.body = [=](const Vars& in) {
    auto [values, indices] = lf::topk(in["x"], K, 1);
    Vars out;
    out.add("values", values);
    out.add("indices", indices);
    return out;
  };
  return p;
}

Program topk_program() {
  Program p;
  p.name = "topk";
  p.config = "256x32000_k50";
  p.note = "a selection per row (Backend::sort: CPU nth_element, GPU radix select), then the 50 sorted";
  p.setup = [] {
    HostRng r(1);
    Vars in;
    in.add("x", r.normal({256, 32000}));
    return in;
  };
  p.body = [](const Vars& in) {
    auto [values, indices] = lf::topk(in["x"], 50, 1);
    Vars out;
    out.add("values", values);
    out.add("indices", indices);
    return out;
  };
  return p;
}

// ---- Attention alone (issue 21): softmax(q @ k^T / sqrt(d) masked causal) @ v over [B, H, T, d]
// heads, written as a user writes it; the attention rewrite (codegen/fuse/attention.cpp) makes it
// one attention kernel.
Program attention_program(int64_t B, int64_t H, int64_t T, int64_t Dh, lf::DType dtype, bool gpu_only) {
  Program p;
  p.name = "attention";
  p.config = "B" + std::to_string(B) + "_H" + std::to_string(H) + "_T" + std::to_string(T) + "_d" + std::to_string(Dh) +
             "_causal";
  p.dtype = dtype;
  p.gpu_only = gpu_only;
  p.setup = [=] {
    HostRng r(7);
    Vars in;
    for (const char* n : {"q", "k", "v"}) in.add(n, r.normal({B, H, T, Dh}, 1.0, dtype));
    return in;
  };
  p.body = [=](const Vars& in) {
    lf::Tensor pos = lf::arange(0, double(T), 1, lf::DType::Int64);
    lf::Tensor causal = pos.unsqueeze(1) >= pos.unsqueeze(0);  // [T, T]: query i sees keys j <= i
    // Temporaries only: a named scores or probabilities tensor would be kept, and not rewritten.
    Vars out;
    out.add("y", lf::matmul(lf::softmax(lf::where(causal, lf::matmul(in["q"], in["k"].transpose(2, 3)) *
                                                              (1.0 / std::sqrt(double(Dh))),
                                                  -std::numeric_limits<double>::infinity()),
                                        -1),
                            in["v"]));
    return out;
  };
  return p;
}

// ---- The transformer block's matmuls alone (issue 21's CPU yardstick: the block within 1.15x of
// the time its GEMMs take by themselves, in the same run): the four projections and the two
// attention products at the block's sizes, over stored inputs, no epilogues, the full T x T
// products. Each result is kept, so each is its own GEMM.
Program transformer_matmuls(int64_t B, int64_t T, int64_t D, int64_t H, lf::DType dtype) {
  Program p;
  p.name = "transformer_matmuls";
  p.config = "B" + std::to_string(B) + "_T" + std::to_string(T) + "_D" + std::to_string(D) + "_H" + std::to_string(H);
  p.dtype = dtype;
  const int64_t Dh = D / H;
  p.setup = [=] {
    HostRng r(1);
    const double s = 1.0 / std::sqrt(double(D));
    Vars in;
    in.add("x", r.normal({B, T, D}, 1.0, dtype));
    in.add("w_qkv", r.normal({3 * D, D}, s, dtype));
    in.add("w_o", r.normal({D, D}, s, dtype));
    in.add("w_1", r.normal({4 * D, D}, s, dtype));
    in.add("w_2", r.normal({D, 4 * D}, 0.5 * s, dtype));
    in.add("q", r.normal({B, H, T, Dh}, 1.0, dtype));
    in.add("k", r.normal({B, H, T, Dh}, 1.0, dtype));
    in.add("v", r.normal({B, H, T, Dh}, 1.0, dtype));
    in.add("p", r.uniform({B, H, T, T}, 0.0, 1.0 / double(T), dtype));
    in.add("m", r.normal({B, T, 4 * D}, 1.0, dtype));
    return in;
  };
  p.body = [=](const Vars& in) {
    Vars out;
    out.add("qkv", lf::matmul(in["x"], in["w_qkv"].transpose(0, 1)));
    out.add("scores", lf::matmul(in["q"], in["k"].transpose(2, 3)));
    out.add("pv", lf::matmul(in["p"], in["v"]));
    out.add("o", lf::matmul(in["x"], in["w_o"].transpose(0, 1)));
    out.add("h1", lf::matmul(in["x"], in["w_1"].transpose(0, 1)));
    out.add("y", lf::matmul(in["m"], in["w_2"].transpose(0, 1)));
    return out;
  };
  return p;
}

// ---- Programs that wait for ops. Their PyTorch spelling is in bench/programs_peers.py, which
// measures the peers; the LazyFuse body is written when the ops land.
Program waiting(const std::string& name, const std::string& config, std::vector<std::string> needs, std::string note) {
  Program p;
  p.name = name;
  p.config = config;
  p.needs = std::move(needs);
  p.note = std::move(note);
  return p;
}

std::vector<Program> registry() {
  std::vector<Program> r;
  for (lf::DType dt : {lf::DType::Float32, lf::DType::BFloat16}) {
    r.push_back(transformer(1, 128, 512, 8, dt, false));
    r.push_back(transformer(4, 128, 256, 8, dt, false));
    if (dt == lf::DType::Float32) r.push_back(transformer_matmuls(4, 128, 256, 8, dt));
    r.push_back(transformer(8, 512, 1024, 16, dt, true));
  }
  for (lf::DType dt : {lf::DType::Float32, lf::DType::BFloat16}) {
    r.push_back(attention_program(4, 8, 128, 32, dt, false));  // the heads of transformer_block B4_T128_D256_H8
    r.push_back(attention_program(8, 16, 512, 64, dt, true));
    // Issue 21's other sizes: a long sequence, and the tensor-core kernels' other head dims.
    r.push_back(attention_program(1, 8, 2048, 64, dt, true));
    r.push_back(attention_program(8, 16, 512, 32, dt, true));
    r.push_back(attention_program(8, 16, 512, 128, dt, true));
  }
  r.push_back(mlp());
  r.push_back(cross_entropy());
  r.push_back(embedding_layernorm(32, 512, 32000, 512));
  r.push_back(embedding_layernorm(16, 512, 50000, 1024));  // issue 23's size
  for (lf::DType dt : {lf::DType::Float32, lf::DType::BFloat16}) r.push_back(resnet_basic_block(dt));
  r.push_back(conv_relu_maxpool());
  for (lf::DType dt : {lf::DType::Float32, lf::DType::BFloat16}) r.push_back(resnet18(dt));
  r.push_back(kmeans_step());
  r.push_back(kmeans_step(int64_t{1} << 20));  // issue 23's GPU target size
  r.push_back(stencil("jacobi2d", 64));
  r.push_back(stencil("jacobi2d", 2048));
  r.push_back(stencil("jacobi2d_cat", 64));
  r.push_back(stencil("jacobi2d_cat", 2048));
  r.push_back(stencil("heat2d", 64));
  r.push_back(stencil("heat2d", 2048));
  r.push_back(monte_carlo_pi());
  r.push_back(black_scholes());
  r.push_back(cumsum_program());
  r.push_back(running_mean_program(true));
  r.push_back(running_mean_program(false));
  r.push_back(cumsum_long_program());
  r.push_back(cumsum_long_program(26));  // issue 23's GPU target: 1.1x the copy floor
  r.push_back(scatter_add_program());
  r.push_back(sort_program(1024, 4096));
  r.push_back(sort_program(16384, 256));
  r.push_back(sort_program(128, 65536));  // rows longer than a block sorts: the radix sort, rows side by side
  r.push_back(sort_long_program());
  r.push_back(topk_program());
  r.push_back(topk_many_rows_program());
  return r;
}

// ---------------------------------------------------------------------------------------------
// Measuring, in a child process.

lf::Device g_device = lf::Device::cpu();
bool g_quick = false;

void device_sync() {
  if (g_device.is_cuda()) lf::device_synchronize(g_device);
}

// Peak resident set (CPU): the kernel's high-water mark, reset by writing 5 to clear_refs.
long proc_status_kb(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const size_t len = std::strlen(field);
  while (std::getline(f, line))
    if (line.compare(0, len, field) == 0) return std::atol(line.c_str() + len + 1);
  return -1;
}
bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  return bool(f);
}

// Device memory in use (GPU), from the driver: cuMemGetInfo on the primary context LazyFuse uses.
double device_used_mb() {
  using CUresult = int;
  static void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return -1;
  static auto init = reinterpret_cast<CUresult (*)(unsigned)>(dlsym(lib, "cuInit"));
  static auto get = reinterpret_cast<CUresult (*)(int*, int)>(dlsym(lib, "cuDeviceGet"));
  static auto retain = reinterpret_cast<CUresult (*)(void**, int)>(dlsym(lib, "cuDevicePrimaryCtxRetain"));
  static auto set = reinterpret_cast<CUresult (*)(void*)>(dlsym(lib, "cuCtxSetCurrent"));
  static auto info = reinterpret_cast<CUresult (*)(size_t*, size_t*)>(dlsym(lib, "cuMemGetInfo_v2"));
  if (!init || !get || !retain || !set || !info) return -1;
  static void* ctx = nullptr;
  if (!ctx) {
    int dev = 0;
    if (init(0) != 0 || get(&dev, g_device.index()) != 0 || retain(&ctx, dev) != 0) return -1;
  }
  size_t free = 0, total = 0;
  if (set(ctx) != 0 || info(&free, &total) != 0) return -1;
  return double(total - free) / (1 << 20);
}

void emit(const std::string& impl, const std::string& field, const std::string& value) {
  std::printf("R %s %s %s\n", impl.c_str(), field.c_str(), value.c_str());
  std::fflush(stdout);
}
void emit(const std::string& impl, const std::string& field, double value) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", value);
  emit(impl, field, std::string(b));
}

struct Timing {
  double ms = 0, host_ms = 0, kernels = 0;
};

// One iteration: record the program (host time on the CPU), sync.
Timing steady(const Program& p, const Vars& in, double budget_ms) {
  Timing t;
  if (!g_device.is_cuda()) {
    std::vector<double> total, host;
    auto start = Clock::now();
    lf::CacheStats before = lf::cache_stats();
    while (total.size() < 3 || (ms_since(start) < budget_ms && total.size() < 2000)) {
      auto s = Clock::now();
      {
        Vars out = p.body(in);
        host.push_back(ms_since(s));
        lf::sync();
      }
      total.push_back(ms_since(s));
    }
    t.kernels = double(lf::cache_stats().kernels_launched - before.kernels_launched) / double(total.size());
    std::sort(total.begin(), total.end());
    std::sort(host.begin(), host.end());
    t.ms = total[total.size() / 2];
    t.host_ms = host[host.size() / 2];
    return t;
  }
  // GPU: calls back to back (the device runs asynchronously), 5 trials, median of time a call.
  auto call = [&] {
    Vars out = p.body(in);
    lf::sync();
  };
  for (int i = 0; i < 3; ++i) call();
  lf::finish_compiles();
  device_sync();
  auto s = Clock::now();
  int warm = 0;
  do {
    call();
    ++warm;
  } while (ms_since(s) < 25);
  device_sync();
  const double one = ms_since(s) / warm;
  const int reps = std::clamp(int(budget_ms / 5 / std::max(one, 1e-3)), 2, 2000);
  std::vector<double> total, host;
  lf::CacheStats before = lf::cache_stats();
  for (int trial = 0; trial < 5; ++trial) {
    auto s0 = Clock::now();
    for (int i = 0; i < reps; ++i) call();
    host.push_back(ms_since(s0) / reps);
    device_sync();
    total.push_back(ms_since(s0) / reps);
  }
  t.kernels = double(lf::cache_stats().kernels_launched - before.kernels_launched) / (5.0 * reps);
  std::sort(total.begin(), total.end());
  std::sort(host.begin(), host.end());
  t.ms = total[2];
  t.host_ms = host[2];
  return t;
}

// LAZYFUSE_PROGRAMS_HOST=1: where a fused call's host time goes, to stderr. Per call, the
// medians over 200 calls of recording the program (body) and of its sync point (the flush: plan
// lookup and launch; on a CPU also the kernels), the device left to run asynchronously.
void host_split(const Program& p, const Vars& in) {
  std::vector<double> body, flush;
  for (int i = 0; i < 210; ++i) {
    auto s = Clock::now();
    Vars out = p.body(in);
    const double b = ms_since(s);
    lf::sync();
    if (i >= 10) body.push_back(b), flush.push_back(ms_since(s) - b);
  }
  device_sync();
  std::sort(body.begin(), body.end());
  std::sort(flush.begin(), flush.end());
  std::fprintf(stderr, "host split of %s %s: body %.4f ms, sync %.4f ms (medians of %zu calls)\n", p.name.c_str(),
               p.config.c_str(), body[body.size() / 2], flush[flush.size() / 2], body.size());
}

// Writes a tensor's values as raw little-endian data (float32 for every float dtype but float64,
// int64 for integers, uint8 for bool) and a manifest line for bench/programs_peers.py.
void dump(const std::filesystem::path& dir, std::ofstream& manifest, const std::string& role, const std::string& name,
          const lf::Tensor& t) {
  std::string file = role + "_" + name + ".bin";
  std::ofstream f(dir / file, std::ios::binary);
  std::string stored;
  if (t.dtype() == lf::DType::Float64) {
    auto v = t.to_vector<double>();
    f.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(double)));
    stored = "float64";
  } else if (lf::is_floating(t.dtype())) {
    auto v = t.to_vector<float>();
    f.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(float)));
    stored = "float32";
  } else if (t.dtype() == lf::DType::Bool) {
    auto v = t.to_vector<bool>();
    std::vector<uint8_t> b(v.begin(), v.end());
    f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
    stored = "bool";
  } else {
    auto v = t.to_vector<int64_t>();
    f.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(int64_t)));
    stored = "int64";
  }
  manifest << role << " " << name << " " << lf::dtype_name(t.dtype()) << " " << stored << " " << file;
  for (int64_t d : t.shape()) manifest << " " << d;
  manifest << "\n";
}

void dump_outputs(const std::filesystem::path& dir, std::ofstream& m, const std::string& role, const Vars& out) {
  for (const auto& [n, t] : out.v) dump(dir, m, role, n, t);
}

// --pair A,B: one fused iteration of each in turn (after a warm-up), in this process.
int pair(const std::vector<Program>& progs, const std::string& keys, int pairs) {
  const size_t comma = keys.find(',');
  if (comma == std::string::npos) {
    std::fprintf(stderr, "--pair needs two keys: A,B\n");
    return 2;
  }
  const Program* ab[2] = {nullptr, nullptr};
  for (int k = 0; k < 2; ++k) {
    const std::string want = k == 0 ? keys.substr(0, comma) : keys.substr(comma + 1);
    for (const Program& p : progs)
      if (p.needs.empty() && p.key().find(want) != std::string::npos) {
        ab[k] = &p;
        break;
      }
    if (!ab[k]) {
      std::fprintf(stderr, "--pair: no runnable program matches %s\n", want.c_str());
      return 2;
    }
  }
  lf::set_default_device(g_device);
  Vars in[2] = {ab[0]->setup(), ab[1]->setup()};
  lf::sync();
  device_sync();
  auto once = [&](int k) {
    auto s = Clock::now();
    {
      Vars out = ab[k]->body(in[k]);
      lf::sync();
    }
    device_sync();
    return ms_since(s);
  };
  for (int i = 0; i < 5; ++i) once(0), once(1);
  lf::finish_compiles();
  std::vector<double> ta, tb, ratio;
  for (int i = 0; i < pairs; ++i) {
    ta.push_back(once(0));
    tb.push_back(once(1));
    ratio.push_back(ta.back() / tb.back());
  }
  auto at = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
  };
  std::printf("A: %s\nB: %s\n%d pairs, one iteration of each in turn: A median %.3f ms, B median %.3f ms, "
              "A / B median of the pairs %.3f (quartiles %.3f, %.3f)\n",
              ab[0]->key().c_str(), ab[1]->key().c_str(), pairs, at(ta, 0.5), at(tb, 0.5), at(ratio, 0.5),
              at(ratio, 0.25), at(ratio, 0.75));
  return 0;
}

int child(const Program& p, const std::string& phase, const std::string& dump_dir) {
  const std::string F = "lazyfuse_fused", U = "lazyfuse_unfused";
  Vars in = p.setup();
  lf::sync();
  device_sync();
  const double budget = g_quick ? 150 : 500;
  auto first_call = [&](bool fused) {
    lf::set_fusion_enabled(fused);
    lf::reset_stats();
    auto s = Clock::now();
    Vars out = p.body(in);
    lf::sync();
    device_sync();
    double ms = ms_since(s);
    lf::CacheStats st = lf::cache_stats();
    lf::set_fusion_enabled(true);
    return std::make_tuple(out, ms, st);
  };
  if (phase == "cold") {
    auto [out, ms, st] = first_call(true);
    emit(F, "first_ms", ms);
    emit(F, "compiled", double(st.kernels_compiled));
    std::filesystem::path dir;
    std::ofstream manifest;
    if (!dump_dir.empty()) {
      dir = std::filesystem::path(dump_dir) / (p.name + "__" + p.config + "__" + lf::dtype_name(p.dtype));
      std::filesystem::create_directories(dir);
      manifest.open(dir / "manifest.txt");
      for (const auto& [n, t] : in.v) dump(dir, manifest, "input", n, t);
      dump_outputs(dir, manifest, "fused", out);
    }
    out = Vars{};
    // LAZYFUSE_PROGRAMS_PROFILE=1: the kernel table of the fused steady state, to stderr (the
    // profile times each launch, so the row's figures are left for a run without it).
    const char* prof = std::getenv("LAZYFUSE_PROGRAMS_PROFILE");
    const bool profile = prof && std::string(prof) == "1";
    if (profile) lf::profile_begin();
    if (const char* h = std::getenv("LAZYFUSE_PROGRAMS_HOST"); h && std::string(h) == "1") host_split(p, in);
    Timing f = steady(p, in, budget);
    if (profile) std::fprintf(stderr, "profile of %s %s (fused, steady state):\n%s\n", p.name.c_str(), p.config.c_str(),
                              lf::profile_report().c_str());
    emit(F, "ms", f.ms), emit(F, "host_ms", f.host_ms), emit(F, "kernels", f.kernels);
    emit(F, "status", "ok");
    auto [uout, ums, ust] = first_call(false);
    emit(U, "first_ms", ums);
    emit(U, "compiled", double(ust.kernels_compiled));
    if (manifest.is_open()) dump_outputs(dir, manifest, "unfused", uout);
    uout = Vars{};
    lf::set_fusion_enabled(false);
    Timing u = steady(p, in, budget * 0.6);
    lf::set_fusion_enabled(true);
    emit(U, "ms", u.ms), emit(U, "host_ms", u.host_ms), emit(U, "kernels", u.kernels);
    emit(U, "status", "ok");
    if (p.eigen && !g_device.is_cuda()) {
      std::function<void()> e = p.eigen(in);
      auto s = Clock::now();
      e();
      emit("eigen", "first_ms", ms_since(s));
      std::vector<double> t;
      auto start = Clock::now();
      while (t.size() < 3 || (ms_since(start) < budget && t.size() < 2000)) {
        auto s0 = Clock::now();
        e();
        t.push_back(ms_since(s0));
      }
      std::sort(t.begin(), t.end());
      emit("eigen", "ms", t[t.size() / 2]);
      emit("eigen", "status", "ok");
    }
  } else {  // warm: a second process on the same cache directory
    double base = g_device.is_cuda() ? (lf::empty_cache(), device_used_mb()) : proc_status_kb("VmRSS:") / 1024.0;
    bool can_peak = g_device.is_cuda() ? base >= 0 : reset_peak_rss();
    auto [out, ms, st] = first_call(true);
    emit(F, "warm_first_ms", ms);
    emit(F, "disk_hits", double(st.disk_hits));
    out = Vars{};
    for (int i = 0; i < 3; ++i) {
      Vars o = p.body(in);
      lf::sync();
    }
    device_sync();
    auto peak = [&] {
      return g_device.is_cuda() ? device_used_mb() - base : proc_status_kb("VmHWM:") / 1024.0 - base;
    };
    if (can_peak) emit(F, "peak_mb", peak());
    lf::empty_cache();
    base = g_device.is_cuda() ? device_used_mb() : proc_status_kb("VmRSS:") / 1024.0;
    if (!g_device.is_cuda()) can_peak = reset_peak_rss();
    auto [uout, ums, ust] = first_call(false);
    emit(U, "warm_first_ms", ums);
    uout = Vars{};
    lf::set_fusion_enabled(false);
    for (int i = 0; i < 3; ++i) {
      Vars o = p.body(in);
      lf::sync();
    }
    device_sync();
    lf::set_fusion_enabled(true);
    if (can_peak) emit(U, "peak_mb", peak());
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// The parent: runs each program's two children, writes the CSV and the table.

const char* kColumns = "program,config,dtype,device,impl,status,ms,first_ms,warm_first_ms,kernels,host_ms,peak_mb,compiled,check,err,needs,note";

struct Result {
  std::map<std::string, std::string> f;  // field -> value
};

std::string csv_field(std::string s) {
  for (char& c : s)
    if (c == ',' || c == '\n') c = ';';
  return s;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs a child; its "R impl field value" lines go into `results`, everything else to stderr.
// Returns "" or what went wrong (exit status, signal).
std::string run_child(const std::string& cmd, std::map<std::string, Result>& results) {
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return "cannot start a child process";
  char buf[8192];
  while (std::fgets(buf, sizeof buf, pipe)) {
    std::string line(buf);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    if (line.rfind("R ", 0) == 0) {
      std::istringstream ss(line.substr(2));
      std::string impl, field, value;
      ss >> impl >> field;
      std::getline(ss, value);
      if (!value.empty() && value[0] == ' ') value.erase(0, 1);
      results[impl].f[field] = value;
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }
  int status = pclose(pipe);
  if (status == -1) return "lost the child process";
  if (WIFSIGNALED(status)) return "crashed (signal " + std::to_string(WTERMSIG(status)) + ")";
  if (WIFEXITED(status) && WEXITSTATUS(status) == 124) return "timed out";
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "";
}

}  // namespace

// --only A,B: a key that contains A or B.
bool matches_any(const std::string& key, const std::string& list) {
  for (size_t at = 0; at <= list.size();) {
    size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at && key.find(list.substr(at, comma - at)) != std::string::npos) return true;
    at = comma + 1;
  }
  return false;
}

int main(int argc, char** argv) {
  std::string csv_path, dump_dir, only, skip, child_key, phase, pair_keys;
  int pairs = 150;
  bool list = false;
  const char* env_dev = std::getenv("LAZYFUSE_DEVICE");
  std::string device = env_dev && *env_dev ? env_dev : "cpu";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--csv") csv_path = next();
    else if (a == "--dump") dump_dir = next();
    else if (a == "--only") only = next();
    else if (a == "--skip") skip = next();
    else if (a == "--device") device = next();
    else if (a == "--quick") g_quick = true;
    else if (a == "--list") list = true;
    else if (a == "--child") child_key = next();
    else if (a == "--phase") phase = next();
    else if (a == "--pair") pair_keys = next();
    else if (a == "--pairs") pairs = std::max(1, std::atoi(next().c_str()));
    else {
      std::fprintf(stderr, "usage: %s [--device cpu|cuda] [--csv FILE] [--dump DIR] [--only SUBSTRING] [--skip SUBSTRING] [--quick] [--list]\n"
                   "       %s [--device cpu|cuda] --pair A,B [--pairs N]\n",
                   argv[0], argv[0]);
      return 2;
    }
  }
  if (device.rfind("cuda", 0) == 0) {
    int idx = device.size() > 5 ? std::atoi(device.c_str() + 5) : 0;
    g_device = lf::Device::cuda(idx);
  } else if (device != "cpu") {
    std::fprintf(stderr, "unknown device %s\n", device.c_str());
    return 2;
  }
  const bool gpu = g_device.is_cuda();
  std::vector<Program> progs = registry();

  if (!child_key.empty()) {
    lf::set_default_device(g_device);
    for (const Program& p : progs) {
      if (p.key() != child_key) continue;
      const std::string F = "lazyfuse_fused";
      try {
        return child(p, phase, dump_dir);
      } catch (const std::exception& e) {
        std::string msg = e.what();
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        emit(F, "status", "failed");
        emit(F, "error", msg);
        std::fprintf(stderr, "%s (%s): %s\n", child_key.c_str(), phase.c_str(), msg.c_str());
        return 0;
      }
    }
    std::fprintf(stderr, "no program %s\n", child_key.c_str());
    return 2;
  }

  if (!pair_keys.empty()) return pair(progs, pair_keys, pairs);

  if (list) {
    for (const Program& p : progs)
      std::printf("%-45s %s%s\n", p.key().c_str(), p.needs.empty() ? "runnable" : ("waiting for " + join(p.needs, ", ")).c_str(),
                  p.gpu_only ? " (GPU suite only)" : "");
    return 0;
  }
  if (gpu && !lf::cuda_available()) {
    std::fprintf(stderr, "--device %s: no CUDA device here\n", device.c_str());
    return 1;
  }
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) {
    std::fprintf(stderr, "cannot find my own executable\n");
    return 1;
  }
  self[len] = 0;
  FILE* csv = nullptr;
  if (!csv_path.empty()) {
    csv = std::fopen(csv_path.c_str(), "w");
    if (!csv) {
      std::fprintf(stderr, "cannot write %s\n", csv_path.c_str());
      return 1;
    }
    std::fprintf(csv, "%s\n", kColumns);
  }
  const std::string dev_name = gpu ? "cuda" : "cpu";
  std::printf("LazyFuse whole programs on %s\n\n", gpu ? g_device.str().c_str() : "the CPU");
  if (gpu) {
    // Read by the library in runtime/config.cpp; here only to say which in the output.
    const char* tf32 = std::getenv("LAZYFUSE_CONV_TF32");
    bool on = !tf32 || !*tf32 || std::strcmp(tf32, "0") != 0;
    std::printf("float32 convolutions: %s (LAZYFUSE_CONV_TF32=%s)\n\n", on ? "TF32 tensor cores" : "full float32",
                on ? "1" : "0");
  }
  std::printf("| program | config | dtype | fused ms | unfused ms | fused/unfused | kernels/iter | host ms/iter | "
              "first call cold ms (compiled) | first call warm ms | peak MB | Eigen ms |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  auto get = [](std::map<std::string, Result>& r, const std::string& impl, const std::string& field) {
    auto it = r[impl].f.find(field);
    return it == r[impl].f.end() ? std::string() : it->second;
  };
  for (const Program& p : progs) {
    if (p.gpu_only && !gpu) continue;
    if (!only.empty() && !matches_any(p.key(), only)) continue;
    if (!skip.empty() && p.key().find(skip) != std::string::npos) {
      std::printf("| %s | %s | %s | skipped (--skip %s) |\n", p.name.c_str(), p.config.c_str(), lf::dtype_name(p.dtype),
                  skip.c_str());
      continue;
    }
    std::map<std::string, Result> res;
    std::string cold_err, warm_err;
    if (p.needs.empty()) {
      char tmpl[] = "/tmp/lazyfuse-programs-cache-XXXXXX";
      const char* cache = mkdtemp(tmpl);
      if (!cache) {
        std::fprintf(stderr, "mkdtemp failed\n");
        return 1;
      }
      std::string base = "LAZYFUSE_CACHE_DIR=" + shell_quote(cache) + " timeout 300 " + shell_quote(self) +
                         " --device " + dev_name + " --child " + shell_quote(p.key()) + (g_quick ? " --quick" : "");
      std::fprintf(stderr, "== %s\n", p.key().c_str());
      cold_err = run_child(base + " --phase cold" + (dump_dir.empty() ? "" : " --dump " + shell_quote(dump_dir)), res);
      if (cold_err.empty() && get(res, "lazyfuse_fused", "status") == "ok")
        warm_err = run_child(base + " --phase warm", res);
      std::filesystem::remove_all(cache);
    }
    // Rows: fused, unfused, Eigen.
    std::vector<std::string> impls = {"lazyfuse_fused", "lazyfuse_unfused"};
    if (res.count("eigen")) impls.push_back("eigen");
    for (const std::string& impl : impls) {
      std::string status = get(res, impl, "status"), note = p.note;
      if (!p.needs.empty()) status = "waiting";
      else if (!cold_err.empty() && status != "ok") status = "failed", note = "cold process " + cold_err;
      else if (status.empty()) status = "failed";
      if (!get(res, impl, "error").empty()) note = get(res, impl, "error");
      if (!warm_err.empty() && impl != "eigen") note += (note.empty() ? "" : "; ") + std::string("warm process ") + warm_err;
      if (csv)
        std::fprintf(csv, "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,,,%s,%s\n", p.name.c_str(), p.config.c_str(),
                     lf::dtype_name(p.dtype), dev_name.c_str(), impl.c_str(), status.c_str(), get(res, impl, "ms").c_str(),
                     get(res, impl, "first_ms").c_str(), get(res, impl, "warm_first_ms").c_str(),
                     get(res, impl, "kernels").c_str(), get(res, impl, "host_ms").c_str(), get(res, impl, "peak_mb").c_str(),
                     get(res, impl, "compiled").c_str(), csv_field(join(p.needs, ";")).c_str(), csv_field(note).c_str());
    }
    if (csv) std::fflush(csv);
    auto num = [&](const std::string& impl, const std::string& field, const char* fmt) -> std::string {
      std::string v = get(res, impl, field);
      if (v.empty()) return "-";
      char b[64];
      std::snprintf(b, sizeof b, fmt, std::atof(v.c_str()));
      return b;
    };
    if (!p.needs.empty()) {
      std::printf("| %s | %s | %s | waiting for %s | | | | | | | | |\n", p.name.c_str(), p.config.c_str(),
                  lf::dtype_name(p.dtype), join(p.needs, ", ").c_str());
    } else if (get(res, "lazyfuse_fused", "status") != "ok") {
      std::string why = get(res, "lazyfuse_fused", "error");
      std::printf("| %s | %s | %s | FAILED: %s | | | | | | | | |\n", p.name.c_str(), p.config.c_str(),
                  lf::dtype_name(p.dtype), (why.empty() ? cold_err : why).c_str());
    } else {
      double f = std::atof(get(res, "lazyfuse_fused", "ms").c_str()), u = std::atof(get(res, "lazyfuse_unfused", "ms").c_str());
      std::string ratio = "-";
      if (f > 0 && u > 0) {
        char b[32];
        std::snprintf(b, sizeof b, "%.2f", f / u);
        ratio = b;
      }
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s (%s) | %s | %s | %s |\n", p.name.c_str(), p.config.c_str(),
                  lf::dtype_name(p.dtype), num("lazyfuse_fused", "ms", "%.3f").c_str(),
                  num("lazyfuse_unfused", "ms", "%.3f").c_str(), ratio.c_str(),
                  num("lazyfuse_fused", "kernels", "%.0f").c_str(), num("lazyfuse_fused", "host_ms", "%.3f").c_str(),
                  num("lazyfuse_fused", "first_ms", "%.1f").c_str(), num("lazyfuse_fused", "compiled", "%.0f").c_str(),
                  num("lazyfuse_fused", "warm_first_ms", "%.1f").c_str(), num("lazyfuse_fused", "peak_mb", "%.1f").c_str(),
                  num("eigen", "ms", "%.3f").c_str());
    }
    std::fflush(stdout);
  }
  if (csv) std::fclose(csv);
  std::printf("\nhost ms/iter: %s. peak MB: %s (fused, in the warm process).\n",
              gpu ? "until lf::sync() returns (recording, fusing or replaying, launching; the kernels still running)"
                  : "recording the program's ops, up to its sync point",
              gpu ? "device memory held above before the first call, caching allocator included"
                  : "the process's peak resident set above the one before the first call (inputs made)");
  return 0;
}
