// The attention rewrite (codegen/fuse/attention.cpp) and the backends' attention kernels, checked
// against the reference executor running the program as written (two matmuls and a softmax), on
// the default device (the CUDA kernel where a GPU is present; sizes span several blocks and tiles).
#include "codegen/fuse/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "codegen/ir/attention.h"
#include "lazyfuse/lazyfuse.h"
#include "runtime/config.h"
#include "tests/codegen/test_util.h"

namespace lf {
namespace {

Tensor uniform(const Shape& s, DType d, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<size_t>(shape_numel(s)));
  for (float& x : v) x = u(g);
  Tensor t = from_vector(v, s);
  return d == DType::Float32 ? t : t.to(d);
}

Tensor bools(const Shape& s, uint32_t seed, double p_true = 0.7) {
  std::mt19937 g(seed);
  std::bernoulli_distribution b(p_true);
  std::vector<bool> v(static_cast<size_t>(shape_numel(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = b(g);
  return from_vector(v, s);
}

enum class Mask { kNone, kAddTT, kAddB1TT, kKeep, kDrop, kCausal, kCausalLe, kCausalDrop };
enum class Scale { kAfter, kBefore, kDivide, kNone, kAfterMask };

struct Program {
  Tensor y;
  Tensor probs;  // kept only when asked
};

// softmax(q @ k^T * s + mask, -1) @ v as a user writes it. q [B, H, Tq, D], k [B, H, Tk, D].
Program attention(const Tensor& q, const Tensor& k, const Tensor& v, Mask mask, Scale scale, const Tensor& m = {},
                  bool keep_probs = false) {
  const int64_t tq = q.size(2), tk = k.size(2);
  const double s = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  const double ninf = -std::numeric_limits<double>::infinity();
  Tensor scores = scale == Scale::kBefore ? matmul(q * s, k.transpose(2, 3)) : matmul(q, k.transpose(2, 3));
  if (scale == Scale::kAfter) scores = scores * s;
  if (scale == Scale::kDivide) scores = scores / std::sqrt(static_cast<double>(q.size(3)));
  Tensor rows = arange(0, static_cast<double>(tq), 1, DType::Int64).unsqueeze(1);
  Tensor cols = arange(0, static_cast<double>(tk), 1, DType::Int64).unsqueeze(0);
  switch (mask) {
    case Mask::kNone:
      break;
    case Mask::kAddTT:
    case Mask::kAddB1TT:
      scores = scores + m;
      break;
    case Mask::kKeep:
      scores = where(m, scores, ninf);
      break;
    case Mask::kDrop:
      scores = masked_fill(scores, m, ninf);
      break;
    case Mask::kCausal:
      scores = where(rows >= cols, scores, ninf);
      break;
    case Mask::kCausalLe:
      scores = where(cols <= rows, scores, ninf);
      break;
    case Mask::kCausalDrop:
      scores = masked_fill(scores, cols > rows, ninf);
      break;
  }
  if (scale == Scale::kAfterMask) scores = scores * s;
  Program p;
  Tensor probs = softmax(scores, -1);
  scores = Tensor();
  p.y = matmul(probs, v);
  if (keep_probs) p.probs = probs;
  return p;
}

// How many attention rewrites the flush of `roots` would make (applied: the nodes change).
int rewrite(const std::vector<Tensor>& roots) {
  std::vector<ir::Node*> r;
  for (const Tensor& t : roots) r.push_back(t.node().get());
  std::vector<ir::NodePtr> keep;
  return fuse::rewrite_attention(ir::topo_order(r), 0, &keep);
}

test::Tolerance tolerance(DType d, int64_t n) { return test::default_tolerance(d, n); }

// Reference first (the program as written), then the rewrite, then the fused value.
void check(const Tensor& y, int expect_rewrites, int64_t n, const std::string& what) {
  test::Values ref = test::reference_values(y);
  EXPECT_EQ(rewrite({y}), expect_rewrites) << what;
  if (expect_rewrites) EXPECT_EQ(y.node()->op, ir::Op::Attention) << what;
  test::Values got = test::fused_values(y);
  std::string diff = test::compare(ref, got, tolerance(y.dtype(), n));
  EXPECT_EQ(diff, "") << what;
}

struct Sizes {
  int64_t b, h, tq, tk, d, dv;
};

void run_case(Sizes z, DType dt, Mask mask, Scale scale, uint32_t seed, const std::string& what) {
  Tensor q = uniform({z.b, z.h, z.tq, z.d}, dt, seed);
  Tensor k = uniform({z.b, z.h, z.tk, z.d}, dt, seed + 1);
  Tensor v = uniform({z.b, z.h, z.tk, z.dv}, dt, seed + 2);
  Tensor m;
  if (mask == Mask::kAddTT) m = uniform({z.tq, z.tk}, dt, seed + 3, -2, 0);
  if (mask == Mask::kAddB1TT) m = uniform({z.b, 1, z.tq, z.tk}, dt, seed + 3, -2, 0);
  if (mask == Mask::kKeep || mask == Mask::kDrop) m = bools({z.b, 1, z.tq, z.tk}, seed + 3);
  Program p = attention(q, k, v, mask, scale, m);
  check(p.y, 1, std::max(z.d, z.tk), what);
}

TEST(Attention, EveryMaskAndScaleForm) {
  const Sizes z{2, 3, 37, 37, 16, 16};
  const Mask masks[] = {Mask::kNone, Mask::kAddTT,  Mask::kAddB1TT,  Mask::kKeep,
                        Mask::kDrop, Mask::kCausal, Mask::kCausalLe, Mask::kCausalDrop};
  const Scale scales[] = {Scale::kAfter, Scale::kBefore, Scale::kDivide, Scale::kNone, Scale::kAfterMask};
  uint32_t seed = 1;
  for (Mask m : masks)
    for (Scale s : scales)
      run_case(z, DType::Float32, m, s, seed += 7,
               "mask " + std::to_string(static_cast<int>(m)) + " scale " + std::to_string(static_cast<int>(s)));
}

// A differential fuzzer of its own (so that tests/codegen/fuzz_test.cpp's seeds keep their graphs):
// random sizes (tails of every tile, Tq != Tk), dtypes, mask and scale forms, and heads read
// through a transpose, each against the program as written.
TEST(Attention, RandomProgramsMatchTheReference) {
  std::mt19937 g(2026);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(g); };
  const DType dtypes[] = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
  const int iters = 40;
  for (int it = 0; it < iters; ++it) {
    Sizes z{pick(1, 3), pick(1, 3), pick(1, 80), pick(1, 80), pick(1, 40), pick(1, 40)};
    DType dt = dtypes[pick(0, 3)];
    Mask mask = static_cast<Mask>(pick(0, 7));
    Scale scale = static_cast<Scale>(pick(0, 4));
    if (mask >= Mask::kCausal && mask <= Mask::kCausalDrop) z.tk = std::max(z.tk, z.tq);  // every row sees a key
    uint32_t seed = static_cast<uint32_t>(1000 + it * 10);
    // q as the transpose of a [B, Tq, H, D] tensor (the layout of a projection split into heads).
    Tensor q = uniform({z.b, z.tq, z.h, z.d}, dt, seed).transpose(1, 2);
    Tensor k = uniform({z.b, z.h, z.tk, z.d}, dt, seed + 1);
    Tensor v = uniform({z.b, z.h, z.tk, z.dv}, dt, seed + 2);
    Tensor m;
    if (mask == Mask::kAddTT) m = uniform({z.tq, z.tk}, dt, seed + 3, -2, 0);
    if (mask == Mask::kAddB1TT) m = uniform({z.b, 1, z.tq, z.tk}, dt, seed + 3, -2, 0);
    if (mask == Mask::kKeep || mask == Mask::kDrop) m = bools({z.b, 1, z.tq, z.tk}, seed + 3, 0.8);
    Program p = attention(q, k, v, mask, scale, m);
    std::ostringstream what;
    what << "iteration " << it << ": B " << z.b << " H " << z.h << " Tq " << z.tq << " Tk " << z.tk << " D " << z.d
         << " Dv " << z.dv << " " << dtype_name(dt) << " mask " << static_cast<int>(mask) << " scale "
         << static_cast<int>(scale);
    check(p.y, 1, std::max(z.d, z.tk), what.str());
  }
}

TEST(Attention, CausalIsDetected) {
  for (Mask m : {Mask::kCausal, Mask::kCausalLe, Mask::kCausalDrop}) {
    Tensor q = uniform({1, 2, 9, 8}, DType::Float32, 3), k = uniform({1, 2, 9, 8}, DType::Float32, 4);
    Tensor v = uniform({1, 2, 9, 8}, DType::Float32, 5);
    Program p = attention(q, k, v, m, Scale::kAfter);
    ASSERT_EQ(rewrite({p.y}), 1);
    ir::AttentionParams a = ir::AttentionParams::of(*p.y.node());
    EXPECT_TRUE(a.causal);
    EXPECT_EQ(a.mask, ir::AttentionParams::kNone);
    EXPECT_EQ(p.y.node()->inputs.size(), 3u);  // no mask operand: the kernels skip masked tiles
  }
  // A strict triangle (j < i) is not causal: it is kept as a bool mask (and row 0 is all -inf).
  Tensor q = uniform({1, 1, 9, 8}, DType::Float32, 3), k = uniform({1, 1, 9, 8}, DType::Float32, 4);
  Tensor v = uniform({1, 1, 9, 8}, DType::Float32, 5);
  Tensor pos = arange(0, 9, 1, DType::Int64);
  Tensor scores = where(pos.unsqueeze(1) > pos.unsqueeze(0), matmul(q, k.transpose(2, 3)) * 0.5,
                        -std::numeric_limits<double>::infinity());
  Tensor y = matmul(softmax(std::move(scores), -1), v);
  test::Values ref = test::reference_values(y);
  ASSERT_EQ(rewrite({y}), 1);
  EXPECT_FALSE(ir::AttentionParams::of(*y.node()).causal);
  test::Values got = test::fused_values(y);
  EXPECT_TRUE(std::isnan(got.f[0]));  // row 0 sees no key: NaN, as the unfused softmax gives
  EXPECT_EQ(test::compare(ref, got, tolerance(DType::Float32, 8)), "");
}

TEST(Attention, SizesAndHeadDims) {
  uint32_t seed = 100;
  for (int64_t d : {16, 32, 64, 128, 256})
    run_case({1, 2, 70, 70, d, d}, DType::Float32, Mask::kCausal, Scale::kAfter, seed += 5, "d " + std::to_string(d));
  run_case({2, 2, 1, 1, 16, 16}, DType::Float32, Mask::kNone, Scale::kAfter, 7, "T = 1");
  run_case({2, 2, 1, 1, 16, 16}, DType::Float32, Mask::kCausal, Scale::kAfter, 8, "T = 1 causal");
  run_case({1, 3, 130, 130, 32, 32}, DType::Float32, Mask::kCausal, Scale::kAfter, 9, "T = 130 causal");
  run_case({1, 3, 130, 130, 32, 32}, DType::Float32, Mask::kKeep, Scale::kAfter, 10, "T = 130 bool mask");
  run_case({2, 2, 45, 300, 24, 40}, DType::Float32, Mask::kNone, Scale::kAfter, 11, "cross attention, Dv != D");
  run_case({2, 2, 45, 300, 24, 40}, DType::Float32, Mask::kCausal, Scale::kAfter, 12, "causal, Tq < Tk");
  run_case({1, 2, 77, 33, 20, 12}, DType::Float32, Mask::kCausal, Scale::kAfter, 13, "causal, Tq > Tk");
}

// No batch dims (rank 2), and three of them with a broadcast one (k and v shared by the batch).
TEST(Attention, BatchRanks) {
  Tensor q = uniform({45, 24}, DType::Float32, 1), k = uniform({45, 24}, DType::Float32, 2);
  Tensor v = uniform({45, 8}, DType::Float32, 3);
  Tensor y = matmul(softmax(matmul(q, k.transpose(0, 1)) * 0.3, -1), v);
  check(y, 1, 45, "rank 2");
  Tensor q5 = uniform({2, 3, 2, 37, 16}, DType::Float32, 4);
  Tensor k5 = uniform({1, 3, 2, 37, 16}, DType::Float32, 5), v5 = uniform({1, 3, 2, 37, 16}, DType::Float32, 6);
  Tensor pos = arange(0, 37, 1, DType::Int64);
  Tensor y5 = matmul(softmax(where(pos.unsqueeze(1) >= pos.unsqueeze(0), matmul(q5, k5.transpose(3, 4)) * 0.25,
                                   -std::numeric_limits<double>::infinity()),
                             -1),
                     v5);
  pos = Tensor();
  check(y5, 1, 37, "rank 5, k and v broadcast over the first batch dim");
}

TEST(Attention, EveryFloatDtype) {
  uint32_t seed = 200;
  for (DType dt : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    run_case({2, 2, 67, 67, 32, 32}, dt, Mask::kCausal, Scale::kAfter, seed += 5,
             std::string(dtype_name(dt)) + " causal");
    run_case({2, 2, 67, 67, 64, 64}, dt, Mask::kAddB1TT, Scale::kAfter, seed += 5,
             std::string(dtype_name(dt)) + " mask");
  }
}

TEST(Attention, FullyMaskedRowsAreNaN) {
  Tensor q = uniform({1, 2, 40, 16}, DType::Float32, 1), k = uniform({1, 2, 40, 16}, DType::Float32, 2);
  Tensor v = uniform({1, 2, 40, 16}, DType::Float32, 3);
  std::vector<bool> keep(40 * 40, true);
  for (int j = 0; j < 40; ++j) keep[5 * 40 + j] = keep[33 * 40 + j] = false;  // rows 5 and 33 see nothing
  Tensor m = from_vector(keep, {40, 40});
  Program p = attention(q, k, v, Mask::kKeep, Scale::kAfter, m);
  test::Values ref = test::reference_values(p.y);
  ASSERT_EQ(rewrite({p.y}), 1);
  test::Values got = test::fused_values(p.y);
  EXPECT_TRUE(std::isnan(ref.f[5 * 16]));
  EXPECT_EQ(test::compare(ref, got, tolerance(DType::Float32, 40)), "");
}

TEST(Attention, NaNAndInfInputs) {
  const Sizes z{1, 2, 130, 130, 16, 16};
  std::vector<float> qv(static_cast<size_t>(2 * 130 * 16), 0.25f), vv(qv.size(), 0.5f);
  std::mt19937 g(5);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& x : qv) x = u(g);
  for (float& x : vv) x = u(g);
  qv[3 * 16 + 2] = std::numeric_limits<float>::quiet_NaN();            // row 3 of head 0: NaN
  vv[129 * 16 + 4] = std::numeric_limits<float>::infinity();           // key 129: masked for all rows but the last
  vv[(130 + 100) * 16 + 7] = std::numeric_limits<float>::quiet_NaN();  // head 1, key 100
  Tensor q = from_vector(qv, {z.b, z.h, z.tq, z.d});
  Tensor k = uniform({z.b, z.h, z.tk, z.d}, DType::Float32, 6);
  Tensor v = from_vector(vv, {z.b, z.h, z.tk, z.dv});
  for (Mask m : {Mask::kCausal, Mask::kNone}) {
    Program p = attention(q, k, v, m, Scale::kAfter);
    check(p.y, 1, 130, "non-finite inputs, mask " + std::to_string(static_cast<int>(m)));
  }
}

// Non-finite values of v at keys that some rows skip (causal: past their diagonal), in the shapes
// the CPU kernel's per-micro-tile skipping and its NaN rule meet: Tq != Tk both ways, head dims
// that are not a multiple of the vector width, float64 and bfloat16, both causal spellings. A row
// before a bad key gets NaN in its column; a row at or after it gets the computed value.
TEST(Attention, NonFiniteValuesAtSkippedKeys) {
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16})
    for (Sizes z : {Sizes{1, 2, 70, 150, 20, 12}, Sizes{1, 2, 150, 70, 20, 12}, Sizes{1, 2, 37, 37, 8, 40}}) {
      std::vector<float> vv(static_cast<size_t>(z.b * z.h * z.tk * z.dv));
      std::mt19937 g(static_cast<uint32_t>(z.tq + z.tk));
      std::uniform_real_distribution<float> u(-1, 1);
      for (float& x : vv) x = u(g);
      auto at = [&](int64_t head, int64_t key, int64_t col) { return static_cast<size_t>((head * z.tk + key) * z.dv + col); };
      vv[at(0, z.tk - 1, 3)] = std::numeric_limits<float>::infinity();     // the last key
      vv[at(0, z.tk / 2, z.dv - 1)] = std::numeric_limits<float>::quiet_NaN();
      vv[at(1, 5, 0)] = -std::numeric_limits<float>::infinity();           // seen by most rows
      vv[at(1, 33, z.dv / 2)] = std::numeric_limits<float>::quiet_NaN();   // inside the first 32-row block's tile
      Tensor q = uniform({z.b, z.h, z.tq, z.d}, dt, 31), k = uniform({z.b, z.h, z.tk, z.d}, dt, 32);
      Tensor v = from_vector(vv, {z.b, z.h, z.tk, z.dv}).to(dt);
      for (Mask m : {Mask::kCausal, Mask::kCausalDrop}) {
        Program p = attention(q, k, v, m, Scale::kAfter);
        check(p.y, 1, std::max(z.d, z.tk),
              std::string(dtype_name(dt)) + " Tq " + std::to_string(z.tq) + " Tk " + std::to_string(z.tk) + " d " +
                  std::to_string(z.d) + " mask " + std::to_string(static_cast<int>(m)));
      }
    }
}

// The heads a transformer makes: q, k, v as permuted slices of one [B, T, 3D] projection.
TEST(Attention, PermutedHeadViews) {
  const int64_t B = 2, T = 50, D = 64, H = 4, Dh = D / H;
  for (DType dt : {DType::Float32, DType::BFloat16}) {
    Tensor qkv = uniform({B, T, 3 * D}, dt, 42);
    lf::sync();  // realized: the heads are strided views of its buffer
    auto head = [&](int64_t i) { return qkv.slice(2, i * D, (i + 1) * D).reshape({B, T, H, Dh}).transpose(1, 2); };
    Program p = attention(head(0), head(1), head(2), Mask::kCausal, Scale::kAfter);
    Tensor o = p.y.transpose(1, 2).reshape({B, T, D});
    test::Values ref = test::reference_values(o);
    EXPECT_EQ(rewrite({o}), 1);
    EXPECT_EQ(test::compare(ref, test::fused_values(o), tolerance(dt, 64)), "") << dtype_name(dt);
  }
}

// Heads merged as a transformer merges them, o.transpose(1, 2).reshape({B, T, D}), with the
// attention's own result not kept: the transpose folds into the attention (its heads written
// interleaved), so the reshape is a view its consumer reads: two kernels (the attention, then the
// consumer), not a copy of the transposed heads between them.
TEST(Attention, MergedHeadsAreWrittenInterleaved) {
  const int64_t B = 2, T = 50, H = 4, Dh = 16;
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    Tensor q = uniform({B, H, T, Dh}, dt, 7), k = uniform({B, H, T, Dh}, dt, 8), v = uniform({B, H, T, Dh}, dt, 9);
    lf::sync();
    auto merged = [&] { return attention(q, k, v, Mask::kCausal, Scale::kAfter).y.transpose(1, 2).reshape({B, T, H * Dh}); };
    Tensor o = merged();
    test::Values ref = test::reference_values(o);
    EXPECT_EQ(rewrite({o}), 2) << dtype_name(dt) << ": the attention and the folded transpose";
    EXPECT_EQ(test::compare(ref, test::fused_values(o), tolerance(dt, 64)), "") << dtype_name(dt);
    Tensor o2 = merged() * 2;  // through the executor
    test::Values ref2 = test::reference_values(o2);
    test::StatsDelta d;
    test::Values got = test::fused_values(o2);
    EXPECT_EQ(d.launched(), 2u) << dtype_name(dt);
    EXPECT_EQ(test::compare(ref2, got, tolerance(dt, 64)), "") << dtype_name(dt);
  }
  // The attention's result kept too: not folded (the handle reads it in its own layout).
  Tensor q = uniform({B, H, T, Dh}, DType::Float32, 7), k = uniform({B, H, T, Dh}, DType::Float32, 8);
  Tensor v = uniform({B, H, T, Dh}, DType::Float32, 9);
  Program p = attention(q, k, v, Mask::kNone, Scale::kAfter);
  Tensor o = p.y.transpose(1, 2).reshape({B, T, H * Dh});
  test::Values ref_y = test::reference_values(p.y), ref_o = test::reference_values(o);
  EXPECT_EQ(rewrite({p.y, o}), 1);
  EXPECT_EQ(test::compare(ref_y, test::fused_values(p.y), tolerance(DType::Float32, 50)), "");
  EXPECT_EQ(test::compare(ref_o, test::fused_values(o), tolerance(DType::Float32, 50)), "");
}

TEST(Attention, KeptProbabilitiesAreNotRewritten) {
  Tensor q = uniform({1, 2, 20, 16}, DType::Float32, 1), k = uniform({1, 2, 20, 16}, DType::Float32, 2);
  Tensor v = uniform({1, 2, 20, 16}, DType::Float32, 3);
  {  // held by a handle
    Program p = attention(q, k, v, Mask::kCausal, Scale::kAfter, {}, /*keep_probs=*/true);
    test::Values ref_y = test::reference_values(p.y), ref_p = test::reference_values(p.probs);
    EXPECT_EQ(rewrite({p.y, p.probs}), 0);
    EXPECT_EQ(p.y.node()->op, ir::Op::Matmul);
    EXPECT_EQ(test::compare(ref_y, test::fused_values(p.y), tolerance(DType::Float32, 20)), "");
    EXPECT_EQ(test::compare(ref_p, test::fused_values(p.probs), tolerance(DType::Float32, 20)), "");
  }
  {  // read by another op that a handle holds
    Tensor scores = matmul(q, k.transpose(2, 3)) * 0.25;
    Tensor probs = softmax(scores, -1);
    scores = Tensor();
    Tensor y = matmul(probs, v);
    Tensor entropy = sum(probs * log(probs), {-1});
    probs = Tensor();
    test::Values ref = test::reference_values(entropy);
    EXPECT_EQ(rewrite({y, entropy}), 0);
    EXPECT_EQ(test::compare(ref, test::fused_values(entropy), tolerance(DType::Float32, 20)), "");
  }
}

TEST(Attention, UnfusedMatchesToo) {
  test::FusionScope off(false);
  Tensor q = uniform({1, 2, 33, 16}, DType::Float32, 1), k = uniform({1, 2, 33, 16}, DType::Float32, 2);
  Tensor v = uniform({1, 2, 33, 16}, DType::Float32, 3);
  Program p = attention(q, k, v, Mask::kCausal, Scale::kAfter);
  test::Values ref = test::reference_values(p.y);
  EXPECT_EQ(test::compare(ref, test::fused_values(p.y), tolerance(DType::Float32, 33)), "");
}

// Through the executor (not the direct rewrite): LAZYFUSE_LOG=1 says what it did and why not.
TEST(Attention, LogSaysWhat) {
  struct LogScope {
    int saved = rt::mutable_config().log_level;
    LogScope() { rt::mutable_config().log_level = 1; }
    ~LogScope() { rt::mutable_config().log_level = saved; }
  } log;
  Tensor q = uniform({1, 2, 20, 16}, DType::Float32, 1), k = uniform({1, 2, 20, 16}, DType::Float32, 2);
  Tensor v = uniform({1, 2, 20, 16}, DType::Float32, 3);
  lf::sync();
  {
    Program p = attention(q, k, v, Mask::kCausal, Scale::kAfter);
    test::Values ref = test::reference_values(p.y);
    testing::internal::CaptureStderr();
    test::Values got = test::fused_values(p.y);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("attention recognized"), std::string::npos) << err;
    EXPECT_NE(err.find("causal"), std::string::npos) << err;
    EXPECT_NE(err.find("group 0: attention"), std::string::npos) << err;
    EXPECT_EQ(test::compare(ref, got, tolerance(DType::Float32, 20)), "");
  }
  {
    Program p = attention(q, k, v, Mask::kNone, Scale::kAfter, {}, /*keep_probs=*/true);
    testing::internal::CaptureStderr();
    lf::sync();
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("attention not rewritten"), std::string::npos) << err;
    EXPECT_NE(err.find("held by a handle"), std::string::npos) << err;
  }
}

}  // namespace
}  // namespace lf
