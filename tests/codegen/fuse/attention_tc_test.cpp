// Attention in float16, bfloat16 and float32 at the head dims of the GPU's tensor-core kernels
// (codegen/cuda/attention_tc.cpp and attention_f32.cpp: d 32, 64, 128), against the reference
// executor running the program as written. On a GPU machine the default device is CUDA, so these
// run those kernels (several blocks of 64 query rows and tiles of 32-64 keys: T up to 257); on the
// CPU they check the CPU kernel at the same tolerance. The tolerance of the 16-bit floats is 4x the
// dtype's elementwise one, not scaled by the reduction length: both sides accumulate in float32
// and the reference rounds its scores and probabilities to the dtype once each (the tensor-core
// kernel rounds its probabilities too), so the error is a few roundings of values of magnitude
// <= max |v| whatever the length. float32 takes the elementwise tolerance itself (1e-5 absolute):
// the kernel's three TF32 products keep float32's accuracy, which one TF32 product (10 bits,
// about 1e-4 on these outputs) would not.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <utility>

#include "codegen/fuse/attention.h"
#include "codegen/ir/attention.h"
#include "lazyfuse/lazyfuse.h"
#include "runtime/config.h"
#include "runtime/cuda_driver.h"
#include "tests/codegen/test_util.h"

namespace lf {
namespace {

const double kInf = std::numeric_limits<double>::infinity();

std::vector<float> uniform_values(int64_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(g);
  return v;
}

Tensor uniform(const Shape& s, DType d, uint32_t seed, float lo = -1, float hi = 1) {
  return from_vector(uniform_values(shape_numel(s), seed, lo, hi), s).to(d);
}

enum class Mask { kNone, kCausal, kAdd, kKeep, kDrop };

// softmax(q @ k^T * s `mask`, -1) @ v as a user writes it; q [.., Tq, D], k [.., Tk, D].
Tensor attention(const Tensor& q, const Tensor& k, const Tensor& v, Mask mask, const Tensor& m = {}) {
  const int64_t r = q.dim();
  Tensor scores = matmul(q, k.transpose(r - 2, r - 1)) * (1.0 / std::sqrt(static_cast<double>(q.size(r - 1))));
  if (mask == Mask::kCausal) {
    Tensor rows = arange(0, static_cast<double>(q.size(r - 2)), 1, DType::Int64).unsqueeze(1);
    Tensor cols = arange(0, static_cast<double>(k.size(r - 2)), 1, DType::Int64).unsqueeze(0);
    scores = where(rows >= cols, scores, -kInf);
  }
  if (mask == Mask::kAdd) scores = scores + m;
  if (mask == Mask::kKeep) scores = where(m, scores, -kInf);
  if (mask == Mask::kDrop) scores = masked_fill(scores, m, -kInf);
  Tensor p = softmax(std::move(scores), -1);
  return matmul(p, v);
}

test::Tolerance tolerance(DType d) {
  test::Tolerance t = test::default_tolerance(d, 1);
  if (d == DType::Float32) return t;
  t.rtol *= 4;
  t.atol *= 4;
  return t;
}

// The reference first (the program as written), then the rewrite and the fused value.
void check(const Tensor& y, const std::string& what) {
  test::Values ref = test::reference_values(y);
  std::vector<ir::NodePtr> keep;
  EXPECT_EQ(fuse::rewrite_attention(ir::topo_order({y.node().get()}), 0, &keep), 1) << what;
  EXPECT_EQ(y.node()->op, ir::Op::Attention) << what;
  EXPECT_EQ(test::compare(ref, test::fused_values(y), tolerance(y.dtype())), "") << what;
}

std::string name(DType dt, int64_t d, const std::string& what) {
  return std::string(dtype_name(dt)) + " d " + std::to_string(d) + ": " + what;
}

// Causal tails, added masks, Tq != Tk and T = 1 at one dtype and head dim.
void check_masks_and_tails(DType dt, int64_t d, uint32_t& seed) {
  auto qkv = [&](int64_t b, int64_t h, int64_t tq, int64_t tk) {
    seed += 4;
    return std::array<Tensor, 3>{uniform({b, h, tq, d}, dt, seed), uniform({b, h, tk, d}, dt, seed + 1),
                                 uniform({b, h, tk, d}, dt, seed + 2)};
  };
  {  // 5 blocks of 64 rows, the last one partial; key tiles with a tail
    auto [q, k, v] = qkv(1, 2, 257, 257);
    check(attention(q, k, v, Mask::kCausal), name(dt, d, "causal T = 257"));
  }
  {
    auto [q, k, v] = qkv(2, 1, 100, 100);
    Tensor m = uniform({2, 1, 100, 100}, dt, seed + 3, -3, 0);
    check(attention(q, k, v, Mask::kAdd, m), name(dt, d, "added [B, 1, T, T] mask T = 100"));
    Tensor m2 = uniform({100, 100}, dt, seed + 5, -3, 0);
    check(attention(q, k, v, Mask::kAdd, m2), name(dt, d, "added [T, T] mask T = 100"));
  }
  {  // cross attention, Tq != Tk; causal with Tq < Tk and Tq > Tk
    auto [q, k, v] = qkv(1, 2, 70, 200);
    check(attention(q, k, v, Mask::kNone), name(dt, d, "Tq 70 Tk 200"));
    check(attention(q, k, v, Mask::kCausal), name(dt, d, "causal Tq 70 Tk 200"));
    auto [q2, k2, v2] = qkv(1, 2, 150, 40);
    check(attention(q2, k2, v2, Mask::kCausal), name(dt, d, "causal Tq 150 Tk 40"));
  }
  {
    auto [q, k, v] = qkv(2, 2, 1, 1);
    check(attention(q, k, v, Mask::kCausal), name(dt, d, "T = 1 causal"));
    check(attention(q, k, v, Mask::kNone), name(dt, d, "T = 1"));
  }
}

TEST(AttentionTc, HeadDimsMasksAndTails) {
  uint32_t seed = 500;
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32})
    for (int64_t d : {32, 64, 128}) check_masks_and_tails(dt, d, seed);
}

// Head dims of q/k and v that differ (d 32 / dv 128, d 128 / dv 64, d 64 / dv 128): the kernels' Q and K tiles
// and their V and O tiles are sized apart.
void check_head_dims_differ(DType dt, int64_t d, int64_t dv, uint32_t& seed) {
  seed += 3;
  Tensor q = uniform({1, 2, 130, d}, dt, seed), k = uniform({1, 2, 130, d}, dt, seed + 1);
  Tensor v = uniform({1, 2, 130, dv}, dt, seed + 2);
  check(attention(q, k, v, Mask::kCausal), name(dt, d, "causal, dv " + std::to_string(dv)));
  check(attention(q, k, v, Mask::kNone), name(dt, d, "dv " + std::to_string(dv)));
}

TEST(AttentionTc, QueryAndValueHeadDimsDiffer) {
  uint32_t seed = 900;
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32})
    for (auto [d, dv] : {std::pair<int64_t, int64_t>{32, 128}, {128, 64}, {64, 128}})
      check_head_dims_differ(dt, d, dv, seed);
}

void check_bool_masks(DType dt) {
  const int64_t T = 90, d = 64;
  Tensor q = uniform({1, 2, T, d}, dt, 1), k = uniform({1, 2, T, d}, dt, 2), v = uniform({1, 2, T, d}, dt, 3);
  std::mt19937 g(7);
  std::bernoulli_distribution b(0.7);
  std::vector<bool> keep(T * T);
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = b(g);
  for (int64_t j = 0; j < T; ++j) keep[5 * T + j] = keep[70 * T + j] = false;  // rows 5 and 70 see nothing
  Tensor m = from_vector(keep, {T, T});
  Tensor y = attention(q, k, v, Mask::kKeep, m);
  test::Values ref = test::reference_values(y);
  ASSERT_TRUE(std::isnan(ref.f[5 * d]));
  check(y, name(dt, d, "bool mask (true keeps), rows 5 and 70 fully masked"));
  std::vector<bool> drop(keep.size());
  for (size_t i = 0; i < keep.size(); ++i) drop[i] = !keep[i];
  check(attention(q, k, v, Mask::kDrop, from_vector(drop, {T, T})), name(dt, d, "masked_fill (true masks)"));
}

TEST(AttentionTc, BoolMasksAndFullyMaskedRows) {
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32}) check_bool_masks(dt);
}

// NaN in q (its row), NaN and inf in v: inside a computed tile at a key masked for some rows (the
// tensor cores' 0 * NaN), and past the diagonal of the first blocks (the skipped tiles' check).
// inf in q (a NaN row either way) and in k: the rows whose score of that key is -inf keep finite
// outputs, which float32's split products must not turn into NaN (inf * 0 of a small part); and inf
// in v at a key of weight 1 (a single unmasked key: row 0 of a causal head).
void check_non_finite(DType dt, int64_t d) {
  const int64_t T = 200;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> qv = uniform_values(2 * T * d, 11), vv = uniform_values(2 * T * d, 12);
  std::vector<float> kv = uniform_values(2 * T * d, 13);
  qv[3 * d + 2] = nan;              // head 0, row 3
  qv[(T + 120) * d + 5] = -inf;     // head 1, row 120
  vv[100 * d + 4] = nan;            // head 0, key 100
  vv[(T + 190) * d + 7] = inf;      // head 1, key 190
  vv[(T + 30) * d + d - 1] = -inf;  // head 1, key 30
  vv[(T + 0) * d + 3] = inf;        // head 1, key 0
  kv[(T + 150) * d + 1] = -inf;     // head 1, key 150: -inf scores where q's column 1 > 0
  Tensor q = from_vector(qv, {1, 2, T, d}).to(dt), v = from_vector(vv, {1, 2, T, d}).to(dt);
  Tensor k = from_vector(kv, {1, 2, T, d}).to(dt);
  check(attention(q, k, v, Mask::kCausal), name(dt, d, "non-finite inputs, causal"));
  check(attention(q, k, v, Mask::kNone), name(dt, d, "non-finite inputs"));
}

// Non-finite values of v far past the diagonal of the first blocks, which skip those keys' tiles
// and check them instead: T = 700 gives the first block 636 keys to check, many rounds of the GPU
// check's loads at every head dim (4 keys a thread a round). In pairs of query blocks (11 of them:
// the middle one alone), the light block's keys up to the heavy one's diagonal are checked in the
// heavy one's tiles.
void check_far_past_diagonal(DType dt, int64_t d) {
  const int64_t T = 700;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> vv = uniform_values(2 * T * d, 21);
  vv[690 * d + 5] = inf;               // head 0, key 690 (the last batch)
  vv[400 * d + d - 1] = nan;           // head 0, key 400
  vv[(T + 333) * d + 0] = -inf;        // head 1, key 333
  vv[(T + 699) * d + d / 2] = nan;     // head 1, the last key
  Tensor q = uniform({1, 2, T, d}, dt, 22), k = uniform({1, 2, T, d}, dt, 23);
  Tensor v = from_vector(vv, {1, 2, T, d}).to(dt);
  check(attention(q, k, v, Mask::kCausal), name(dt, d, "non-finite v far past the diagonal, causal"));
}

TEST(AttentionTc, NonFiniteValuesFarPastTheDiagonal) {
  for (int64_t d : {32, 64, 128}) check_far_past_diagonal(DType::BFloat16, d);
  check_far_past_diagonal(DType::Float16, 64);
  check_far_past_diagonal(DType::Float32, 64);
}

TEST(AttentionTc, NaNAndInfInputs) {
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32})
    for (int64_t d : {32, 128}) check_non_finite(dt, d);
}

// The heads a transformer makes: permuted slices of one [B, T, 3 D] projection (16-byte aligned
// rows: the kernel's cp.async loads), of a [B, T, 3 D + 1] one (odd row strides: element loads),
// and a key read through a transpose of [B, H, Dh, T] (column stride T).
void check_strided_heads(DType dt, int64_t dh) {
  const int64_t B = 2, T = 130, H = 2;
  const int64_t D = H * dh;
  for (int64_t pad : {0, 1}) {
    Tensor qkv = uniform({B, T, 3 * D + pad}, dt, 40 + static_cast<uint32_t>(dh + pad));
    lf::sync();  // realized: the heads are strided views of its buffer
    auto head = [&](int64_t i) {
      return qkv.slice(2, pad + i * D, pad + (i + 1) * D).reshape({B, T, H, dh}).transpose(1, 2);
    };
    Tensor o = attention(head(0), head(1), head(2), Mask::kCausal).transpose(1, 2).reshape({B, T, D});
    test::Values ref = test::reference_values(o);
    std::vector<ir::NodePtr> keep;
    // The attention, and the heads' transpose folded into it (its output written interleaved).
    EXPECT_EQ(fuse::rewrite_attention(ir::topo_order({o.node().get()}), 0, &keep), 2);
    EXPECT_EQ(test::compare(ref, test::fused_values(o), tolerance(dt)), "")
        << name(dt, dh, pad ? "heads of a [B, T, 3D + 1] projection" : "heads of a [B, T, 3D] projection");
  }
  Tensor q = uniform({B, H, T, dh}, dt, 60), v = uniform({B, H, T, dh}, dt, 61);
  Tensor kt = uniform({B, H, dh, T}, dt, 62);
  lf::sync();
  check(attention(q, kt.transpose(2, 3), v, Mask::kNone), name(dt, dh, "k as a transposed view"));
}

TEST(AttentionTc, StridedHeads) {
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32})
    for (int64_t dh : {32, 64, 128}) check_strided_heads(dt, dh);
}

// Every kernel the GPU can pick for 16-bit attention at head dim 64, forced through the config: on
// an sm_90 GPU the wgmma kernel with 64-key tiles (the large grids' choice, which the other tests'
// small grids do not take) and with 128-key tiles, and mma.sync (LAZYFUSE_ATTENTION_WGMMA=0, every
// other GPU's kernel). Elsewhere each pass checks the one kernel again.
struct RestoreAttentionConfig {
  int wgmma = rt::config().attention_wgmma;
  int keys = rt::config().attention_keys, pairs = rt::config().attention_pairs;
  ~RestoreAttentionConfig() {
    rt::mutable_config().attention_wgmma = wgmma;
    rt::mutable_config().attention_keys = keys;
    rt::mutable_config().attention_pairs = pairs;
  }
};

TEST(AttentionTc, EveryKernelChoiceAtHeadDim64) {
  RestoreAttentionConfig restore;
  for (auto [wgmma, keys] : {std::pair<bool, int>{true, 64}, {true, 128}, {false, 0}}) {
    SCOPED_TRACE(wgmma ? "wgmma, " + std::to_string(keys) + "-key tiles" : std::string("mma.sync"));
    rt::mutable_config().attention_wgmma = wgmma;
    rt::mutable_config().attention_keys = keys;
    uint32_t seed = 1300;
    check_masks_and_tails(DType::BFloat16, 64, seed);
    check_head_dims_differ(DType::Float16, 64, 128, seed);
    check_bool_masks(DType::BFloat16);
    check_non_finite(DType::BFloat16, 64);
    check_far_past_diagonal(DType::BFloat16, 64);
    check_strided_heads(DType::Float16, 64);
  }
}

// Both float32 kernels the GPU can pick, forced through the config: on an sm_90 GPU the wgmma one
// (LAZYFUSE_ATTENTION_WGMMA=1: these small grids would take mma.sync by default; V transposed in
// shared memory; mma.sync for tiles with inf or NaN) and mma.sync (LAZYFUSE_ATTENTION_WGMMA=0,
// every other GPU's kernel), at every head dim. Elsewhere each pass checks the one kernel again.
TEST(AttentionTc, EveryFloat32KernelChoice) {
  RestoreAttentionConfig restore;
  for (int wgmma : {1, 0}) {
    SCOPED_TRACE(wgmma ? "wgmma" : "mma.sync");
    rt::mutable_config().attention_wgmma = wgmma;
    uint32_t seed = 1500;
    for (int64_t d : {32, 64, 128}) {
      check_masks_and_tails(DType::Float32, d, seed);
      check_non_finite(DType::Float32, d);
    }
    check_head_dims_differ(DType::Float32, 32, 128, seed);
    check_head_dims_differ(DType::Float32, 128, 64, seed);
    check_bool_masks(DType::Float32);
    check_far_past_diagonal(DType::Float32, 64);
    check_strided_heads(DType::Float32, 64);
  }
}

// Causal grids in pairs of query blocks (LAZYFUSE_ATTENTION_PAIRS=1; auto pairs only grids of 3
// blocks an SM), on every kernel of the GPU: even and odd query block counts (the middle block of
// an odd count alone), Tq != Tk both ways, T = 1 (one block: nothing to pair), and non-finite values
// of v that the light block of a pair sees in the heavy one's tiles (T = 512, 64-row blocks: keys
// 64 to 511 for the pair (7, 0), 256 to 319 for (4, 3)), just before a light block's diagonal (key
// 255, computed by block 3 itself), and past the heavy one's (key 480, in another column than key
// 290's: the light blocks take both checks).
TEST(AttentionTc, PairedQueryBlocks) {
  RestoreAttentionConfig restore;
  rt::mutable_config().attention_pairs = 1;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (auto [wgmma, keys] : {std::pair<bool, int>{true, 64}, {true, 128}, {false, 0}}) {
    SCOPED_TRACE(wgmma ? "wgmma, " + std::to_string(keys) + "-key tiles" : std::string("mma.sync"));
    rt::mutable_config().attention_wgmma = wgmma;
    rt::mutable_config().attention_keys = keys;
    for (int64_t d : {32, 64, 128}) {
      const DType dt = d == 64 ? DType::Float16 : DType::BFloat16;
      const int64_t T = 512;
      std::vector<float> vv = uniform_values(3 * T * d, 31);
      vv[300 * d + 1] = nan;             // head 0, key 300
      vv[(T + 64) * d + d - 1] = -inf;   // head 1, key 64
      vv[(T + 255) * d + 2] = inf;       // head 1, key 255
      vv[(2 * T + 480) * d + 0] = nan;   // head 2, key 480
      vv[(2 * T + 290) * d + d - 1] = inf;  // head 2, key 290: light blocks only
      Tensor q = uniform({1, 3, T, d}, dt, 32), k = uniform({1, 3, T, d}, dt, 33);
      Tensor v = from_vector(vv, {1, 3, T, d}).to(dt);
      check(attention(q, k, v, Mask::kCausal), name(dt, d, "pairs, non-finite v, T 512"));
      uint32_t seed = 1400;
      check_masks_and_tails(dt, d, seed);
      check_far_past_diagonal(dt, d);
    }
  }
}

// A grid of at least 4 blocks an SM (320 batch-heads of 2 blocks; 132 SMs on the H100 and H200),
// where the wgmma kernel takes 64-key tiles: two tiles a row, the second of one key; and where the
// float32 kernel reads Q from shared memory (3 blocks an SM, head dims 32 and 64).
TEST(AttentionTc, ManyBlocks) {
  for (auto [dt, d] : {std::pair<DType, int64_t>{DType::BFloat16, 64}, {DType::Float16, 64}, {DType::Float32, 64},
                       {DType::Float32, 32}}) {
    Tensor q = uniform({8, 40, 65, d}, dt, 11), k = uniform({8, 40, 65, d}, dt, 12),
           v = uniform({8, 40, 65, d}, dt, 13);
    check(attention(q, k, v, Mask::kCausal), name(dt, d, "causal, 640 blocks"));
    check(attention(q, k, v, Mask::kNone), name(dt, d, "640 blocks"));
  }
  // 200 heads of 3 query blocks: 400 blocks in pairs, which the H200's 132 SMs take by default
  // (at least 3 an SM, the wgmma kernel); a NaN in v past the diagonal of the first pair's light block.
  std::vector<float> vv = uniform_values(200 * 192 * 64, 14);
  vv[150 * 64 + 9] = std::numeric_limits<float>::quiet_NaN();
  Tensor q = uniform({2, 100, 192, 64}, DType::BFloat16, 15), k = uniform({2, 100, 192, 64}, DType::BFloat16, 16);
  Tensor v = from_vector(vv, {2, 100, 192, 64}).to(DType::BFloat16);
  check(attention(q, k, v, Mask::kCausal), name(DType::BFloat16, 64, "causal, 400 blocks in pairs"));
}

// On a GPU, LAZYFUSE_LOG=1 names the kernel that ran: the tensor-core ones for 16-bit and float32
// head dims 32-128 (cp.async, 16-byte or element loads), the SIMT one (and why) otherwise.
TEST(AttentionTc, LogNamesTheKernel) {
  if (!default_device().is_cuda()) GTEST_SKIP() << "the CPU has one attention kernel";
  struct LogScope {
    int saved = rt::mutable_config().log_level;
    LogScope() { rt::mutable_config().log_level = 1; }
    ~LogScope() { rt::mutable_config().log_level = saved; }
  } log;
  auto run = [](DType dt, int64_t d) {
    Tensor q = uniform({1, 2, 80, d}, dt, 1), k = uniform({1, 2, 80, d}, dt, 2), v = uniform({1, 2, 80, d}, dt, 3);
    lf::sync();
    Tensor y = attention(q, k, v, Mask::kCausal);
    testing::internal::CaptureStderr();
    lf::sync();
    return testing::internal::GetCapturedStderr();
  };
  std::string tc = run(DType::BFloat16, 64);
  EXPECT_NE(tc.find("tensor-core flash attention kernel"), std::string::npos) << tc;
  EXPECT_NE(tc.find("cp.async loads"), std::string::npos) << tc;
  // wgmma on an sm_90 GPU (its 2 blocks are few: 128-key tiles), else the reason it is not.
  if (tc.find("(wgmma") != std::string::npos)
    EXPECT_NE(tc.find("key tiles of 128"), std::string::npos) << tc;
  else
    EXPECT_NE(tc.find("(no wgmma: "), std::string::npos) << tc;
  std::string simt = run(DType::Float16, 48);
  EXPECT_NE(simt.find("no tensor cores: head dims other than 32, 64, 128"), std::string::npos) << simt;
  // Float32: mma.sync on a grid this small, and why not wgmma; wgmma where asked on an sm_90 GPU.
  std::string f32 = run(DType::Float32, 64);
  EXPECT_NE(f32.find("float32 as three TF32 mma.sync products"), std::string::npos) << f32;
  EXPECT_NE(f32.find("16-byte loads (no wgmma: "), std::string::npos) << f32;
  if (tc.find("(wgmma") != std::string::npos) {
    EXPECT_NE(f32.find("mma.sync is the faster"), std::string::npos) << f32;
    RestoreAttentionConfig restore;
    rt::mutable_config().attention_wgmma = 1;
    f32 = run(DType::Float32, 64);
    EXPECT_NE(f32.find("float32 as three TF32 wgmma products"), std::string::npos) << f32;
  }
  std::string f32_simt = run(DType::Float32, 48);
  EXPECT_NE(f32_simt.find("no tensor cores: head dims other than 32, 64, 128"), std::string::npos) << f32_simt;
  std::string f64 = run(DType::Float64, 64);
  EXPECT_NE(f64.find("no tensor cores: float64"), std::string::npos) << f64;
}

// LAZYFUSE_MATMUL_TF32=1 (the user allows TF32, as PyTorch's allow_tf32): float32 attention takes
// one TF32 product a product. Within TF32's tolerance of the reference (operands rounded to 10
// bits: about 1e-4 on these outputs), NaN and inf where the program puts them, and less exact than
// the default's three products somewhere (the mode did change the arithmetic); the log names it.
TEST(AttentionTc, Float32OnOneTf32ProductWhereAllowed) {
  if (!default_device().is_cuda()) GTEST_SKIP() << "TF32 is a GPU mode: the CPU computes float32";
  if (rt::cu::context_of(default_device().index()).info.sm_major < 8) GTEST_SKIP() << "no tensor-core kernel before sm_80";
  test::ConfigScope scope;
  rt::mutable_config().matmul_tf32 = true;
  rt::mutable_config().log_level = 1;
  for (int64_t d : {32, 64, 128}) {
    std::vector<float> qv = uniform_values(2 * 2 * 100 * d, 70), kv = uniform_values(2 * 2 * 100 * d, 71);
    qv[static_cast<size_t>(5 * d + 3)] = std::nanf("");                     // a NaN query row
    kv[static_cast<size_t>((100 + 7) * d + 2)] = std::numeric_limits<float>::infinity();  // head 1: an inf key
    Tensor q = from_vector(qv, {2, 2, 100, d}), k = from_vector(kv, {2, 2, 100, d});
    Tensor v = uniform({2, 2, 100, d}, DType::Float32, 72);
    lf::sync();
    Tensor y = attention(q, k, v, Mask::kCausal);
    test::Values ref = test::reference_values(y);
    testing::internal::CaptureStderr();
    lf::sync();
    const std::string log = testing::internal::GetCapturedStderr();
    EXPECT_TRUE(log.find("float32 as one TF32 mma.sync product") != std::string::npos ||
                log.find("float32 as one TF32 wgmma product") != std::string::npos)
        << log;
    test::Tolerance tf32{2e-3, 2e-3};
    test::Values got = test::fused_values(y);
    EXPECT_EQ(test::compare(ref, got, tf32), "") << "d " << d;
    EXPECT_NE(test::compare(ref, got, tolerance(DType::Float32)), "") << "d " << d << ": as exact as three products";
  }
}

}  // namespace
}  // namespace lf
