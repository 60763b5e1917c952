// Flush plans with library calls: a flush with a matmul, a conv2d or a pooling replays its
// library calls (backend::RecordedCall) with the kernels around them, on new buffers each time.
// Every iteration's results are checked against the reference executor, on inputs that change
// each iteration. On a GPU (the default device there) these run through the CUDA backend and
// replay there too: cuBLASLt, the generated matmul kernel, cuDNN, the pooling kernel, epilogue
// kernels (not the generated convolution, where cuDNN is missing).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "codegen/cuda/cudnn.h"
#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"
#include "runtime/config.h"

namespace {

using lf::Tensor;

std::vector<float> data(int64_t n, int iteration, float scale = 0.25f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<float>((i * 37 + 11 * static_cast<size_t>(iteration)) % 23) * scale - 2.5f * scale * 4;
  return v;
}

Tensor input(const lf::Shape& shape, int iteration) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  // On a GPU the leaves live there (a from_vector is a host buffer copied over).
  return lf::from_vector(data(n, iteration, 0.0625f), shape).to(lf::default_device());
}

// Tiered compiling off (restored at the end): an optimized build landing during a loop replaces a
// kernel and drops the plans recorded before, so replay counts would depend on compile timing.
struct NoTiers {
  bool saved = lf::rt::config().tiered_compile;
  NoTiers() { lf::rt::mutable_config().tiered_compile = false; }
  ~NoTiers() { lf::rt::mutable_config().tiered_compile = saved; }
};

// Runs `body` (which returns the tensors to check) `iterations` times, each against the reference
// executor with a tolerance for sums of `reduce` terms; returns the flushes replayed from a plan.
uint64_t check_loop(int iterations, int64_t reduce, const std::function<std::vector<Tensor>(int)>& body) {
  uint64_t before = lf::cache_stats().plans_replayed;
  for (int it = 0; it < iterations; ++it) {
    std::vector<Tensor> out = body(it);
    std::vector<lf::test::Values> refs;
    for (const Tensor& t : out) refs.push_back(lf::test::reference_values(t));
    lf::sync();
    for (size_t k = 0; k < out.size(); ++k) {
      std::string diff = lf::test::compare(refs[k], lf::test::fused_values(out[k]),
                                           lf::test::default_tolerance(out[k].dtype(), reduce));
      EXPECT_TRUE(diff.empty()) << "iteration " << it << ", output " << k << ":\n" << diff;
    }
  }
  return lf::cache_stats().plans_replayed - before;
}

// A number new to this process, so that each loop computes something of its own. (Numbers are not
// part of a flush's signature, flush_plan.h: a loop that counts its replays from a first sighting
// has a structure no other loop of this binary has.)
float fresh_number() {
  static int runs = 0;
  return 1.0f + 0.125f * static_cast<float>(runs++);
}

// The inputs are made and synced before the loop's flush: the flush then holds only the program.
std::vector<Tensor> synced(std::vector<Tensor> v) {
  lf::sync();
  return v;
}

TEST(LibraryPlan, MatmulWithEpiloguesReplaysOnNewData) {
  NoTiers no_tiers;
  const float c = fresh_number();
  // A linear layer with bias and gelu (an epilogue), a kept product with a residual epilogue, and a
  // batched product of transposed views (attention's scores), 96 x 80 x 72: several 128-wide tiles
  // on a GPU only in the batch, several row blocks on the CPU.
  uint64_t replayed = check_loop(6, 80, [&](int it) {
    auto in = synced({input({96, 80}, it), input({80, 72}, it + 1), input({72}, it + 2), input({3, 40, 16}, it + 3)});
    Tensor h = lf::gelu(lf::matmul(in[0], in[1]) + in[2] * c);
    Tensor p = lf::matmul(in[0], in[1]);
    Tensor r = p * 0.5f + h;
    Tensor q = in[3];
    Tensor scores = lf::matmul(q, lf::transpose(q, 1, 2)) * 0.25f;
    return std::vector<Tensor>{h, p, r, lf::softmax(scores, -1)};
  });
  EXPECT_EQ(replayed, 4u) << "first sighting, then recorded, then replayed";
}

TEST(LibraryPlan, MatmulPlansInOtherDtypes) {
  NoTiers no_tiers;
  for (lf::DType dt : {lf::DType::Float64, lf::DType::Float16, lf::DType::BFloat16, lf::DType::Int32}) {
    const float c = fresh_number();
    uint64_t replayed = check_loop(5, 48, [&](int it) {
      auto in = synced({input({33, 48}, it), input({48, 17}, it + 1)});
      Tensor y = lf::matmul(in[0].to(dt), in[1].to(dt));  // casts in the flush: a view-free operand is a kernel's output
      if (lf::is_floating(dt)) y = lf::relu(y * c);
      else y = y + 3;
      return std::vector<Tensor>{y};
    });
    EXPECT_EQ(replayed, 3u) << lf::dtype_name(dt);
  }
}

// Integer products that are kept (alone, and beside an epilogue that reads them): cuBLASLt has no
// integer GEMM, so on a GPU the generated matmul kernel stores the product (once the host computed
// it with the reference executor and such flushes never replayed). The log names the path there.
TEST(LibraryPlan, KeptIntegerProductsReplayOnTheirDevice) {
  NoTiers no_tiers;
  for (lf::DType dt : {lf::DType::Int32, lf::DType::Int64}) {
    const float c = fresh_number();
    // Every iteration's inputs made first: the loop's flushes are the products' alone.
    std::vector<std::vector<Tensor>> inputs;
    for (int it = 0; it < 6; ++it)
      inputs.push_back(synced({input({33, 48}, it).to(dt), input({48, 17}, it + 1).to(dt), input({17, 130}, it + 2).to(dt)}));
    auto body = [&](int it) {
      const std::vector<Tensor>& in = inputs[static_cast<size_t>(it)];
      Tensor alone = lf::matmul(in[0], in[1]);
      Tensor kept = lf::matmul(in[1], in[2]);
      Tensor scaled = kept * static_cast<int64_t>(c * 8) + 1;
      return std::vector<Tensor>{alone, kept, scaled};
    };
    // One flush logged first (plans stay on while logging: it is the loop's first sighting).
    const int saved_log = lf::rt::config().log_level;
    lf::rt::mutable_config().log_level = 1;
    testing::internal::CaptureStderr();
    const std::vector<Tensor> logged = body(5);  // held: a dropped result is never computed
    lf::sync();
    lf::rt::mutable_config().log_level = saved_log;
    const std::string log = testing::internal::GetCapturedStderr();
    EXPECT_EQ(check_loop(5, 48, body), 4u) << lf::dtype_name(dt) << ": seen logged, recorded, then replayed";
    if (lf::default_device().is_cuda()) {
      EXPECT_NE(log.find("with the product stored"), std::string::npos) << log;
      EXPECT_NE(log.find("with the epilogue inside, the product stored too"), std::string::npos) << log;
      EXPECT_EQ(log.find("reference executor"), std::string::npos) << log;
    }
  }
}

// A transformer-like chain: matmuls whose operands are outputs of earlier kernels of the same
// flush, intermediates freed midway (the replay hands their buffers on, as the recorded flush
// did), a cat of two heads' outputs, and the weights the same buffers every iteration.
TEST(LibraryPlan, ChainsWithFreedIntermediatesAndCat) {
  NoTiers no_tiers;
  const float c = fresh_number();
  auto w = synced({input({64, 64}, 100), input({64, 64}, 101), input({64}, 102)});
  uint64_t replayed = check_loop(6, 64, [&](int it) {
    auto x = synced({input({2, 32, 64}, it)});
    Tensor h = lf::layer_norm(x[0], 1) * c;
    Tensor a = lf::relu(lf::matmul(h, w[0]) + w[2]);
    Tensor b = lf::matmul(a, w[1]) + x[0];  // a is freed after this; b's product may take its block
    Tensor heads = lf::cat({lf::matmul(b.slice(2, 0, 32), w[0].slice(0, 0, 32)),
                            lf::matmul(b.slice(2, 32, 64), w[1].slice(0, 32, 64))}, 2);
    return std::vector<Tensor>{lf::sum(heads * heads, {2}), b};
  });
  EXPECT_EQ(replayed, 4u);
}

// Flushes the fuser rewrites before partitioning (a reshape of a transposed product needs a copy;
// a slice of an unheld elementwise value is pushed below it) are recorded over the rewritten
// graph and rewritten alike before each replay: attention's heads put back together.
TEST(LibraryPlan, RewrittenFlushesReplay) {
  NoTiers no_tiers;
  const float c = fresh_number();
  uint64_t replayed = check_loop(6, 16, [&](int it) {
    auto in = synced({input({2, 4, 24, 16}, it), input({64, 32}, it + 1), input({24, 32}, it + 2)});
    Tensor o = lf::softmax(lf::matmul(in[0] * c, in[0].transpose(2, 3)), -1);  // [2, 4, 24, 24]
    Tensor heads = lf::matmul(o, in[0]).transpose(1, 2).reshape({2, 24, 64});  // a copy: no view
    Tensor y = lf::matmul(heads, in[1]);
    Tensor z = (lf::exp(in[2] * 0.5f) + c).transpose(0, 1).slice(1, 3, 20, 2);  // pushed below exp
    return std::vector<Tensor>{y, z * 2};
  });
  EXPECT_EQ(replayed, 4u);
}

// A causal attention as a transformer writes it (heads by permute, the triangle from arange
// comparisons, a where with -inf): rewritten into one attention call, which a plan replays.
TEST(LibraryPlan, AttentionReplaysOnNewData) {
  NoTiers no_tiers;
  const float c = fresh_number();
  const int64_t B = 2, T = 40, H = 3, d = 16;
  uint64_t launched = 0;
  uint64_t replayed = check_loop(6, T, [&](int it) {
    auto in = synced({input({B, T, H * d}, it), input({B, T, H * d}, it + 1), input({B, T, H * d}, it + 2)});
    auto heads = [&](const Tensor& x) { return lf::permute(lf::reshape(x, {B, T, H, d}), {0, 2, 1, 3}); };
    // The intermediates die with the lambda, as in a user's function: a value still held at the
    // sync is computed (and kept) and the rewrite then leaves the scores alone.
    Tensor y = [&] {
      Tensor q = heads(in[0]), k = heads(in[1]), v = heads(in[2]);
      Tensor i = lf::reshape(lf::arange(0, static_cast<double>(T)), {T, 1});
      Tensor j = lf::reshape(lf::arange(0, static_cast<double>(T)), {1, T});
      Tensor s = lf::matmul(q, lf::transpose(k, 2, 3)) * (0.25f * c);
      Tensor p = lf::softmax(lf::where(j <= i, s, -std::numeric_limits<float>::infinity()), -1);
      return lf::reshape(lf::permute(lf::matmul(p, v), {0, 2, 1, 3}), {B, T, H * d}) + 1.0f;
    }();
    uint64_t before = lf::cache_stats().kernels_launched;
    lf::sync();
    launched = lf::cache_stats().kernels_launched - before;
    return std::vector<Tensor>{y};
  });
  EXPECT_EQ(replayed, 4u);
  // The attention call and the output's epilogue: the scores never had a kernel of their own.
  EXPECT_LE(launched, 3u);
}

// The same in bfloat16 at head dim 32: on a GPU the tensor-core attention kernel, whose replay
// re-checks the new addresses' alignment for its cp.async loads.
TEST(LibraryPlan, AttentionInBFloat16ReplaysOnNewData) {
  NoTiers no_tiers;
  const float c = fresh_number();
  const int64_t B = 2, T = 70, H = 2, d = 32;
  uint64_t replayed = check_loop(6, T, [&](int it) {
    auto in = synced({input({B, T, H * d}, it).to(lf::DType::BFloat16), input({B, T, H * d}, it + 1).to(lf::DType::BFloat16),
                      input({B, T, H * d}, it + 2).to(lf::DType::BFloat16)});
    auto heads = [&](const Tensor& x) { return lf::permute(lf::reshape(x, {B, T, H, d}), {0, 2, 1, 3}); };
    Tensor y = [&] {
      Tensor q = heads(in[0]), k = heads(in[1]), v = heads(in[2]);
      Tensor i = lf::reshape(lf::arange(0, static_cast<double>(T)), {T, 1});
      Tensor j = lf::reshape(lf::arange(0, static_cast<double>(T)), {1, T});
      Tensor s = lf::matmul(q, lf::transpose(k, 2, 3)) * (0.25f * c);
      Tensor p = lf::softmax(lf::where(j <= i, s, -std::numeric_limits<float>::infinity()), -1);
      return lf::reshape(lf::permute(lf::matmul(p, v), {0, 2, 1, 3}), {B, T, H * d});
    }();
    return std::vector<Tensor>{y};
  });
  EXPECT_GE(replayed, 4u);  // the attention's flush (and the casts' flush before it) from the third iteration
}

TEST(LibraryPlan, NewShapesAreNewPlans) {
  NoTiers no_tiers;
  const float c = fresh_number();
  // Alternating inner and outer sizes: each plan only ever runs its own shapes.
  uint64_t replayed = check_loop(12, 40, [&](int it) {
    int64_t m = it % 3 == 0 ? 20 : 21, k = it % 2 ? 40 : 39;
    auto in = synced({input({m, k}, it), input({k, 24}, it + 1)});
    return std::vector<Tensor>{lf::matmul(in[0], in[1]) * c};
  });
  // (m, k) by iteration: (20, 39) twice, (20, 40) twice, (21, 40) and (21, 39) four times each:
  // recorded at the second sighting, replayed from the third.
  EXPECT_EQ(replayed, 4u);
  const float d = fresh_number();
  replayed = check_loop(6, 40, [&](int it) {
    auto in = synced({input({it < 3 ? 20 : 21, 41}, it), input({41, 24}, it + 1)});  // sizes the loop above had not
    return std::vector<Tensor>{lf::matmul(in[0], in[1]) * d};
  });
  EXPECT_EQ(replayed, 2u) << "each size: seen, recorded, replayed";
}

TEST(LibraryPlan, SpecialValuesAndEmptyProducts) {
  NoTiers no_tiers;
  const float c = fresh_number();
  check_loop(5, 8, [&](int it) {
    std::vector<float> v = data(6 * 8, it);
    v[static_cast<size_t>(it)] = std::numeric_limits<float>::quiet_NaN();
    v[20] = std::numeric_limits<float>::infinity();
    Tensor a = lf::from_vector(v, {6, 8}).to(lf::default_device());
    auto in = synced({a, input({8, 5}, it), input({6, 0}, it), input({0, 5}, it)});
    Tensor empty_k = lf::matmul(in[2], in[3]) + c;  // k = 0: zeros, then the epilogue
    return std::vector<Tensor>{lf::matmul(in[0], in[1]) * c, empty_k, lf::matmul(in[1].slice(0, 0, 0).transpose(0, 1), in[2].transpose(0, 1))};
  });
}

// An operand the executor computes on the host first (a generator): the flush is not recorded,
// and runs normally every time.
TEST(LibraryPlan, OperandsComputedFirstAreNotRecorded) {
  NoTiers no_tiers;
  const float c = fresh_number();
  uint64_t replayed = check_loop(5, 16, [&](int it) {
    auto in = synced({input({16, 16}, it)});
    Tensor ramp = lf::arange(0.0, 16 * 8).reshape({16, 8});  // on the default device
    return std::vector<Tensor>{lf::matmul(in[0], ramp) * c};
  });
  EXPECT_EQ(replayed, 0u);
}

TEST(LibraryPlan, ConvAndPoolReplay) {
  NoTiers no_tiers;
  const float c = fresh_number();
  auto w = synced({input({8, 3, 3, 3}, 200), input({8}, 201), input({8, 8, 1, 1}, 202)});
  uint64_t replayed = check_loop(6, 27, [&](int it) {
    auto x = synced({input({2, 3, 12, 10}, it)});
    Tensor y = lf::relu(lf::conv2d(x[0] * c, w[0], w[1], 1, 1));  // im2col, bias + relu epilogue
    Tensor z = lf::conv2d(y, w[2]) + y;                              // 1x1: the image is the GEMM's B
    Tensor m = lf::max_pool2d(z, 2);
    Tensor a = lf::avg_pool2d(y, 3, 2, 1);
    Tensor g = lf::adaptive_avg_pool2d(z, {3, 2});
    return std::vector<Tensor>{m * 2, a, g};
  });
  // On a GPU, cuDNN's calls and the pooling kernel replay alike; the generated convolution (no
  // cuDNN) is not recorded, and those flushes run afresh.
  const bool cudnn = lf::cuda::cudnn_status().rfind("cuDNN ", 0) == 0;
  if (lf::default_device().is_cpu() || cudnn) EXPECT_EQ(replayed, 4u);
  else EXPECT_EQ(replayed, 0u);
}

// Scans are library calls a plan replays (cuda/scan.cpp, cpu/scan.cpp): short and long lines, lines
// side by side, a transposed input, a scan of a value the flush computed, the positions of cummax,
// and a long line (the CPU's chunked two-pass scan, the GPU's tiles with their look-back scratch).
TEST(LibraryPlan, ScansReplayOnNewData) {
  NoTiers no_tiers;
  const float c = fresh_number();
  uint64_t replayed = check_loop(6, 50000, [&](int it) {
    auto x = synced({input({3, 200}, it), input({50000}, 100 + it), input({40, 70}, 200 + it)});
    Tensor a = lf::cumsum(x[0], 1) * c;
    Tensor b = lf::cumprod(x[0] * 0.125f + 1, 0);
    Tensor l = lf::logcumsumexp(x[1], 0);
    Tensor m = lf::cummax(x[2].transpose(0, 1), 1).second;
    Tensor s = lf::cumsum(x[2], 0);
    return std::vector<Tensor>{a, b, l, m, s};
  });
  EXPECT_EQ(replayed, 4u);
}

// Sorts are library calls a plan replays with their values (cuda/sort.cpp, cpu/sort.cpp): the
// GPU's selection, block sort and radix sort (its scratch kept by the plan), a strided row, and a
// computed key; positions and values checked against the reference every iteration.
TEST(LibraryPlan, SortsReplayOnNewData) {
  NoTiers no_tiers;
  const float c = fresh_number();
  uint64_t replayed = check_loop(6, 1, [&](int it) {
    auto x = synced({input({4, 300}, it), input({20000}, 100 + it)});
    auto [v, i] = lf::sort(x[0] * c, 1, true);
    auto [tv, ti] = lf::topk(x[0].transpose(0, 1), 5, 0);
    auto [lv, li] = lf::sort(x[1], 0);
    return std::vector<Tensor>{v, i, tv, ti, lv, li, lf::argsort(x[1], 0, true)};
  });
  EXPECT_EQ(replayed, 4u);
}

// An int64 index tensor of n entries in [0, size) that changes with the iteration (negative ones too:
// -1 is size - 1), on the default device.
Tensor indices(int64_t n, int64_t size, int iteration) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t k = static_cast<int64_t>((i * 7 + 3 * static_cast<size_t>(iteration) + i / 5) % static_cast<size_t>(size));
    v[i] = (i % 11 == 3) ? k - size : k;
  }
  return lf::from_vector(v, {n}).to(lf::default_device());
}

// Scatters are library calls a plan replays (cuda/scatter.cpp, cpu/scatter.cpp), with indices that
// change every iteration: bincount (a zeros() self, weights of one: a clear and a constant on a
// GPU), index_add of rows (k-means' sums; the GPU's shared-memory bins), index_put with
// accumulate, scatter_reduce's amax and mean (their scratch kept by the plan), and scatter's
// assignment over a computed self.
TEST(LibraryPlan, ScattersReplayOnNewData) {
  NoTiers no_tiers;
  const float c = fresh_number();
  uint64_t replayed = check_loop(6, 4096, [&](int it) {
    Tensor idx = indices(70000, 64, it);
    Tensor row_idx = indices(300, 16, it + 1);
    Tensor small_idx = indices(40, 9, it + 2);
    auto x = synced({input({300, 8}, it), input({40}, 100 + it), input({9}, 200 + it), idx, row_idx, small_idx});
    Tensor counts = lf::bincount(lf::remainder(x[3], 64), {}, 64);
    Tensor sums = lf::index_add(lf::zeros({16, 8}), 0, x[4], x[0] * c);
    Tensor acc = lf::index_put(x[2], {x[5]}, x[1], /*accumulate=*/true);
    Tensor amax = lf::scatter_reduce(x[2] * c, 0, x[5], x[1], "amax");
    Tensor mean = lf::scatter_reduce(x[2], 0, x[5], x[1] + 1, "mean", /*include_self=*/false);
    Tensor assigned = lf::scatter(x[2] + 1, 0, lf::remainder(x[5] * 2, 9), x[1]);
    return std::vector<Tensor>{counts, sums, acc, amax, mean, assigned};
  });
  EXPECT_EQ(replayed, 8u);  // bincount's length is data: the index's max is a flush of its own
}

// An index out of range in a replayed scatter is the same error at the same sync point as outside
// plans (a GPU's error word, read after the replay's launches; a CPU's check as it runs), the
// values stay pending, and the plan replays correctly again after it. The indices are handed out
// (data_ptr), so the host no longer vouches for them: indices it wrote itself and knows in range
// make a plan of their own that reads nothing back, which a bad index does not replay.
TEST(LibraryPlan, ScatterIndexErrorsInAReplay) {
  NoTiers no_tiers;
  const float c = fresh_number();
  auto step = [&](int it, int64_t bad) {
    std::vector<int64_t> v(5000);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>((i + static_cast<size_t>(it)) % 10);
    if (bad != 0) v[1234] = bad;
    auto x = synced({input({5000}, it), lf::from_vector(v, {5000}).to(lf::default_device())});
    x[1].data_ptr();
    return lf::scatter_add(lf::zeros({10}), 0, x[1], x[0] * c);
  };
  // First sighting, recorded, replayed.
  EXPECT_EQ(check_loop(3, 5000, [&](int it) { return std::vector<Tensor>{step(it, 0)}; }), 1u);
  uint64_t before = lf::cache_stats().plans_replayed;
  {
    Tensor y = step(3, 17);
    try {
      lf::sync();
      ADD_FAILURE() << "no error for index 17";
    } catch (const lf::Error& e) {
      EXPECT_NE(std::string(e.what()).find("lf::scatter_add: index 17 is out of range for dim 0 of size 10"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(lf::cache_stats().plans_replayed - before, 1u);  // the error came from a replay
  }  // y, still pending, goes: the next sync would raise its error again
  EXPECT_EQ(check_loop(2, 5000, [&](int it) { return std::vector<Tensor>{step(4 + it, 0)}; }), 2u);
}

// A gather's bad index in a step before a scatter's: the gather's error comes first, as outside
// plans (where each group's check follows it), and neither error word is left set for the next
// replay, which then runs clean. Both index tensors are handed out (data_ptr), so neither is known
// in range and the bad steps replay the checked plan.
TEST(LibraryPlan, IndexErrorsOfAGatherAndAScatterInOneReplay) {
  NoTiers no_tiers;
  const float c = fresh_number();
  auto step = [&](int it, int64_t bad_gather, int64_t bad_scatter) {
    std::vector<int64_t> g(3000), t(3000);
    for (size_t i = 0; i < g.size(); ++i) {
      g[i] = static_cast<int64_t>((i * 7 + static_cast<size_t>(it)) % 500);
      t[i] = static_cast<int64_t>((i + static_cast<size_t>(it)) % 10);
    }
    if (bad_gather != 0) g[100] = bad_gather;
    if (bad_scatter != 0) t[2000] = bad_scatter;
    auto x = synced({input({500}, it), lf::from_vector(g, {3000}).to(lf::default_device()),
                     lf::from_vector(t, {3000}).to(lf::default_device())});
    x[1].data_ptr();
    x[2].data_ptr();
    return lf::scatter_add(lf::zeros({10}), 0, x[2], lf::take(x[0], x[1]) * c);
  };
  EXPECT_EQ(check_loop(3, 3000, [&](int it) { return std::vector<Tensor>{step(it, 0, 0)}; }), 1u);
  {
    Tensor y = step(3, 777, 55);
    const uint64_t before = lf::cache_stats().plans_replayed;
    std::string message = lf::test::error_message([] { lf::sync(); });
    EXPECT_NE(message.find("lf::take: index 777 is out of range for size 500"), std::string::npos) << message;
    EXPECT_EQ(lf::cache_stats().plans_replayed - before, 1u) << "the error came from a replay";
  }
  {
    Tensor y = step(4, 0, 55);
    const uint64_t before = lf::cache_stats().plans_replayed;
    std::string message = lf::test::error_message([] { lf::sync(); });
    EXPECT_NE(message.find("lf::scatter_add: index 55 is out of range for dim 0 of size 10"), std::string::npos)
        << message;
    EXPECT_EQ(lf::cache_stats().plans_replayed - before, 1u) << "the error came from a replay";
  }
  EXPECT_EQ(check_loop(2, 3000, [&](int it) { return std::vector<Tensor>{step(5 + it, 0, 0)}; }), 2u);
}

// A replayed flush counts what the recorded one did: the library calls' launches (GEMM and
// epilogue) and bytes, and every kernel it looked up as a hit.
TEST(LibraryPlan, ReplayCountersMatchARunThatIsNotReplayed) {
  NoTiers no_tiers;
  const float c = fresh_number();
  auto w = synced({input({32, 48}, 300), input({48}, 301)});
  auto body = [&](int it) {
    auto x = synced({input({40, 32}, it)});
    Tensor y = lf::softmax(lf::matmul(x[0] * c, w[0]) + w[1], -1);
    return std::vector<Tensor>{y};
  };
  check_loop(3, 32, body);  // seen, recorded, replayed
  lf::CacheStats s0 = lf::cache_stats();
  { std::vector<Tensor> out = body(7); lf::sync(); }
  lf::CacheStats s1 = lf::cache_stats();
  ASSERT_EQ(s1.plans_replayed - s0.plans_replayed, 1u);
  auto& config = lf::rt::mutable_config();
  bool saved = config.flush_plans;
  config.flush_plans = false;
  { std::vector<Tensor> out = body(8); lf::sync(); }
  config.flush_plans = saved;
  lf::CacheStats s2 = lf::cache_stats();
  EXPECT_EQ(s1.kernels_launched - s0.kernels_launched, s2.kernels_launched - s1.kernels_launched);
  EXPECT_EQ(s1.bytes_moved - s0.bytes_moved, s2.bytes_moved - s1.bytes_moved);
  EXPECT_EQ(s1.hits - s0.hits, (s2.hits + s2.misses) - (s1.hits + s1.misses));
  EXPECT_EQ(s1.nodes_executed - s0.nodes_executed, s2.nodes_executed - s1.nodes_executed);
  EXPECT_EQ(s1.flushes - s0.flushes, s2.flushes - s1.flushes);
}

// ---- On a GPU: a replayed plan with library calls is one captured CUDA graph (cuda/capture.cpp).

// Replays and graph launches of `iterations` checked iterations after a first checked one whose
// kernels are in place (optimized builds included).
struct Replays {
  uint64_t replayed = 0, graphs = 0;
};
Replays warm_loop(int iterations, int64_t reduce, const std::function<std::vector<Tensor>(int)>& body) {
  check_loop(1, reduce, [&](int) { return body(iterations); });
  lf::finish_compiles();
  uint64_t graphs = lf::cache_stats().graph_launches;
  uint64_t replayed = check_loop(iterations, reduce, body);
  return {replayed, lf::cache_stats().graph_launches - graphs};
}

TEST(LibraryPlanGraph, EveryMatmulPathReplaysAsOneCapturedGraph) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  NoTiers no_tiers;
  struct Restore {
    std::string matmul = lf::rt::config().matmul;
    bool graphs = lf::rt::config().cuda_graphs;
    ~Restore() {
      lf::rt::mutable_config().matmul = matmul;
      lf::rt::mutable_config().cuda_graphs = graphs;
    }
  } restore;
  // 400 x 160 x 96 products (several 128 x 128 tiles), softmax rows of 160, and a batched product.
  auto in = synced({input({400, 96}, 1), input({96, 160}, 2), input({160}, 3), input({4, 130, 64}, 4)});
  for (const char* path : {"auto", "cublaslt", "generated"}) {
    lf::rt::mutable_config().matmul = path;
    for (bool graphs : {true, false}) {
      lf::rt::mutable_config().cuda_graphs = graphs;
      const float c = fresh_number();
      auto body = [&](int) {
        Tensor a = lf::relu(lf::matmul(in[0], in[1]) + in[2]);  // cuBLASLt's bias + relu epilogue
        Tensor b = lf::softmax(lf::matmul(in[0], in[1]) * c + in[2], -1);
        Tensor q = in[3];
        Tensor s = lf::matmul(q, q.transpose(1, 2)) * 0.125f;
        return std::vector<Tensor>{a, b, s};
      };
      // The same buffers each iteration: captured once, then launched.
      Replays r = warm_loop(5, 96, body);
      EXPECT_GE(r.replayed, 4u) << path;
      EXPECT_EQ(r.graphs, graphs ? r.replayed : 0u) << path << (graphs ? ", graphs on" : ", graphs off");
    }
  }
  // New buffers each iteration (pointers move: captured again, a few graphs kept per plan).
  lf::rt::mutable_config().matmul = "auto";
  lf::rt::mutable_config().cuda_graphs = true;
  const float c = fresh_number();
  Replays r = warm_loop(8, 96, [&](int it) {
    auto x = synced({input({400, 96}, it)});
    return std::vector<Tensor>{lf::gelu(lf::matmul(x[0], in[1]) * c + in[2])};
  });
  EXPECT_GE(r.replayed, 7u);
}

// A loop whose intermediates are freed inside its flush and whose result is held into the next
// iteration (a program assigning its new result over the old one): its replays keep the
// intermediates' addresses (exec/replay.cpp, release_slots), so the result's alternating buffers
// are the only pointer sets and every replay launches one captured graph.
TEST(LibraryPlanGraph, AChainOfMatmulsKeepsItsAddressesAcrossReplays) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  NoTiers no_tiers;
  auto in = synced({input({256, 128}, 11), input({128, 128}, 12), input({128}, 13), input({128, 64}, 14)});
  const float c = fresh_number();
  auto step = [&] {
    Tensor h1 = lf::relu(lf::matmul(in[0], in[1]) + in[2]);
    Tensor h2 = lf::relu(lf::matmul(h1, in[1]) * c + in[2]);
    return lf::softmax(lf::matmul(h2, in[3]), -1);
  };
  Tensor held;
  auto run = [&](int iterations) {
    for (int it = 0; it < iterations; ++it) {
      Tensor y = step();
      lf::sync();
      held = y;  // the previous result freed only now
    }
  };
  run(3);  // recorded, then replayed
  lf::finish_compiles();
  run(2);
  lf::CacheStats s0 = lf::cache_stats();
  run(40);
  lf::CacheStats s1 = lf::cache_stats();
  EXPECT_EQ(s1.plans_replayed - s0.plans_replayed, 40u);
  EXPECT_EQ(s1.graph_launches - s0.graph_launches, 40u);
  lf::test::expect_matches_reference(step(), 128, "the chain after the loop");
}

}  // namespace
