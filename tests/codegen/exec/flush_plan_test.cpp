// Flush plans: a flush with the structure of an earlier one replays its kernels on new buffers.
// Every replay is checked against the reference executor, on data that changes each iteration.
#include "codegen/exec/flush_plan.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "codegen/cache/kernel_cache.h"
#include "lazyfuse/lazyfuse.h"
#include "runtime/config.h"
#include "codegen/test_util.h"

namespace {

using lf::Tensor;

std::vector<float> data(int64_t n, int iteration) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37 + 11 * iteration) % 23) * 0.25f - 2.5f;
  return v;
}

// Runs `body` (which returns the tensors to check) `iterations` times and compares each result with
// the reference executor; returns how many flushes were replayed from a plan.
uint64_t check_loop(int iterations, const std::function<std::vector<Tensor>(int)>& body) {
  uint64_t before = lf::cache_stats().plans_replayed;
  for (int it = 0; it < iterations; ++it) {
    std::vector<Tensor> out = body(it);
    std::vector<lf::test::Values> refs;
    for (const Tensor& t : out) refs.push_back(lf::test::reference_values(t));
    lf::sync();
    for (size_t k = 0; k < out.size(); ++k) {
      std::string diff = lf::test::compare(refs[k], lf::test::fused_values(out[k]),
                                           lf::test::default_tolerance(out[k].dtype(), 64));
      EXPECT_TRUE(diff.empty()) << "iteration " << it << ", output " << k << ":\n" << diff;
    }
  }
  return lf::cache_stats().plans_replayed - before;
}

// Tiered compiling off for a test's scope, once the optimized builds already queued have landed,
// so that a loop's replays do not depend on when a build lands. (Until 2026-12-04 a build landing
// during a loop dropped its plan and a replay was counted short, on the H100 on 2026-11-24; a plan
// now takes the swapped-in build: PlanCache::find.)
struct TieredCompileOff {
  bool saved = lf::rt::config().tiered_compile;
  TieredCompileOff() {
    lf::rt::mutable_config().tiered_compile = false;
    lf::finish_compiles();
  }
  ~TieredCompileOff() { lf::rt::mutable_config().tiered_compile = saved; }
};

TEST(FlushPlan, ALoopReplaysOnNewData) {
  // A size new to this process (part of the signature), so that the count below starts from a
  // first sighting however the tests are ordered or repeated.
  TieredCompileOff tiered_off;
  static int runs = 0;
  const int64_t n = 4096 + 8 * runs++;
  uint64_t replayed = check_loop(6, [&](int it) {
    Tensor x = lf::from_vector(data(n, it), {n});
    Tensor y = lf::relu(x * 2 + 1) * lf::sigmoid(x) - lf::tanh(x) / 3;
    return std::vector<Tensor>{y};
  });
  // The first sighting runs normally, the second records a plan, the rest replay it.
  EXPECT_EQ(replayed, 4u);
}

// A flush with a cat (copy kernels writing slabs of one buffer) replays too: a stencil step built
// from slices and cat, and a cat that is itself an output, on new data each iteration.
TEST(FlushPlan, CatFlushesReplay) {
  static int runs = 0;
  const int64_t cols = 12 + runs++;  // a size new to this process: a first sighting
  const float scale = 0.25f;
  uint64_t replayed = check_loop(6, [&](int it) {
    Tensor x = lf::from_vector(data(10 * cols, it), {10, cols});
    Tensor inner = (x.slice(0, 0, 8) + x.slice(0, 2, 10)) * scale;
    Tensor step = lf::cat({x.slice(0, 0, 1), inner, x.slice(0, 9, 10)}, 0) * 2 - x;
    Tensor both = lf::cat({x, x * 3}, 1);
    return std::vector<Tensor>{step, both};
  });
  EXPECT_EQ(replayed, 4u);
}

TEST(FlushPlan, RowKernelsAndSeveralOutputs) {
  uint64_t replayed = check_loop(5, [](int it) {
    Tensor x = lf::from_vector(data(64 * 33, it), {64, 33});
    Tensor r = lf::from_vector(data(33, it + 1), {33});
    Tensor h = x + r;
    Tensor s = lf::softmax(h, -1);
    Tensor m = lf::mean(h * h, {1});
    return std::vector<Tensor>{h, s, m};
  });
  EXPECT_GE(replayed, 3u);
}

TEST(FlushPlan, OtherSizesValuesAndLayoutsNeverReplayAStrangersPlan) {
  // Alternating structures: each one's plan must only ever run its own kind of flush.
  check_loop(12, [](int it) {
    int64_t n = it % 3 == 0 ? 100 : it % 3 == 1 ? 101 : 64;
    Tensor base = lf::from_vector(data(2 * n, it), {2, n});
    float c = it % 2 ? 0.25f : 0.75f;  // the number is a launch argument: part of the signature
    Tensor a = it % 4 < 2 ? lf::slice(base, 1, 1, n) : lf::slice(base, 1, 0, n - 1);  // offset 1 or 0
    Tensor b = it % 4 == 0 ? lf::transpose(lf::transpose(base, 0, 1), 0, 1) : base;
    return std::vector<Tensor>{a * c + 1, lf::sum(b * b, {1})};
  });
}

// The signature of the flush that would compute `t` alone.
lf::plan::Signature signature_of(const Tensor& t) {
  std::vector<lf::ir::Node*> order = lf::ir::topo_order({t.node().get()});
  lf::plan::Signature sig;
  lf::plan::describe(order, [](const lf::ir::Node&) { return true; }, true, &sig);
  return sig;
}

std::vector<int64_t> words_of(const Tensor& t) { return signature_of(t).words; }

// ---- Numbers (flush_plan.h): scalars, arange bounds and random counters that change every
// iteration are patched into the replayed launches; numbers read otherwise are pinned.

// Counts check_loop's replays fused and unfused over sizes new to this process (so that each count
// starts from a first sighting however the tests are ordered or repeated).
template <typename Body>
void expect_replays(int iterations, uint64_t expected, const Body& body) {
  TieredCompileOff tiered_off;
  static int64_t runs = 0;
  for (bool fusion : {true, false}) {
    lf::test::FusionScope scope(fusion);
    const int64_t n = 700 + runs++;
    uint64_t replayed = check_loop(iterations, [&](int it) { return body(it, n); });
    EXPECT_EQ(replayed, expected) << "fusion " << (fusion ? "on" : "off");
  }
}

TEST(FlushPlanNumbers, ChangingScalarsReplay) {
  // The first sighting runs normally, the second records a plan, the other six replay it.
  expect_replays(8, 6, [](int it, int64_t n) {
    Tensor x = lf::from_vector(data(n, it), {n});
    const float s = 0.5f + 0.25f * static_cast<float>(it), t = -1.0f - static_cast<float>(it);
    Tensor i = lf::from_vector(std::vector<int64_t>(static_cast<size_t>(n), 5), {n});
    return std::vector<Tensor>{lf::relu(x * s + t) - x / (s + 1), i * (it + 2) - (it + 1), lf::full({n}, s) + x};
  });
}

TEST(FlushPlanNumbers, AlternatingScalarsReplay) {
  expect_replays(8, 6, [](int it, int64_t n) {
    Tensor x = lf::from_vector(data(n, it), {n});
    return std::vector<Tensor>{x * (it % 2 ? 0.25f : 0.75f)};
  });
}

TEST(FlushPlanNumbers, ChangingArangeBoundsReplay) {
  // A position p: arange(p, p + n) in float32 and int64, a step that changes too.
  expect_replays(8, 6, [](int it, int64_t n) {
    Tensor x = lf::from_vector(data(n, it), {n});
    const double p = 3.0 * it;
    Tensor pos = lf::arange(p, p + static_cast<double>(n), 1, lf::DType::Int64);
    const double step = 0.5 + 0.25 * it;  // 16 values whatever the step
    Tensor f = lf::arange(p, p + step * 15.5, step);
    return std::vector<Tensor>{x + lf::cast(pos, lf::DType::Float32) * 0.5f, pos * 2, f * 3};
  });
}

// A held cat of a number and a function of it (a complex number's pairs: complex(x, cos(x))): the
// cat's remaps are pushed into the cosine, copying the `full` into a node of the rewrite's, whose
// number no replay patches (the fuzzer's seed 160 replayed the recorded x). The copy pins the
// number: right values every step, no replays where it changes.
TEST(FlushPlanNumbers, ANumberPushedThroughARemapIsRightEveryStep) {
  expect_replays(8, 0, [](int it, int64_t n) {
    Tensor x = lf::full({n}, 1.0 + it / 64.0, lf::DType::Float64);
    Tensor y = lf::cat({x, lf::cos(x)}, 0);
    return std::vector<Tensor>{y, lf::abs(y).sum()};
  });
}

// The same for a position: cat, flip and pad remap an arange whose start changes every step (the
// rewrite folds the start into the index math it makes; the plan replayed the recorded start).
// Right values every step; such a flush does not replay yet (its number is pinned).
TEST(FlushPlanNumbers, AnArangePushedThroughARemapIsRightEveryStep) {
  expect_replays(8, 0, [](int it, int64_t n) {
    Tensor pos = lf::arange(3.0 * it, 3.0 * it + static_cast<double>(n), 1, lf::DType::Int64);
    Tensor y = lf::cat({pos, lf::flip(pos * 2, {0})}, 0);
    return std::vector<Tensor>{y, lf::pad(lf::cast(pos, lf::DType::Float32), {1, 2}) * 0.5f};
  });
}

TEST(FlushPlanNumbers, IntegerArangesPast2To53Replay) {
  // Issue 50 item 3: int64 positions past 2^53 are exact in the replayed kernels too, and a start
  // that alternates between integral and not (the kernel tests its parameters, ir::arange_is_integral)
  // replays the same plan.
  expect_replays(8, 6, [](int it, int64_t n) {
    // Steps of 2 below 2^54, where doubles are the even integers: the bounds are exact.
    const double p = it % 2 ? 0x1p53 + 4.0 * it : 0.5 + it, step = it % 2 ? 2 : 1;
    Tensor pos = lf::arange(p, p + step * static_cast<double>(n), step, lf::DType::Int64);
    return std::vector<Tensor>{pos * 2 + 1, pos};
  });
}

TEST(FlushPlanNumbers, RandomOpsReplayWithNewDraws) {
  // Each rand draws anew (its counter advances): the replay patches the counter in, so the values
  // differ from iteration to iteration and match the reference's draws.
  std::vector<Tensor> draws;
  expect_replays(6, 4, [&](int it, int64_t n) {
    Tensor x = lf::from_vector(data(n, it), {n});
    Tensor r = lf::rand({n});
    Tensor y = lf::where(r < 0.5f, x * 2, lf::zeros({n})) + lf::randn({n}) * 0.01f;  // dropout, noise
    draws.push_back(r);
    return std::vector<Tensor>{y, r};
  });
  for (size_t i = 1; i < draws.size(); ++i)
    EXPECT_NE(draws[i].to_vector<float>(), draws[i - 1].to_vector<float>()) << "draw " << i << " repeats the one before";
}

TEST(FlushPlanNumbers, PinnedNumbersRecordAnew) {
  // The attention's scale is read when the fuser recognizes it (fuse/attention.cpp): a new scale
  // records the flush anew instead of replaying the plan of another, and every result stays right.
  TieredCompileOff tiered_off;
  uint64_t replayed = check_loop(6, [](int it) {
    Tensor q = lf::from_vector(data(2 * 17 * 8, it), {2, 17, 8});
    Tensor k = lf::from_vector(data(2 * 17 * 8, it + 3), {2, 17, 8});
    Tensor v = lf::from_vector(data(2 * 17 * 8, it + 5), {2, 17, 8});
    const float scale = 0.125f * static_cast<float>(1 + it % 3);
    // `w * scale` shares the scale's node (a recent scalar operand of the same shape): a kernel's
    // parameter reads it too, which must not make it patchable.
    Tensor w = lf::from_vector(data(2 * 17 * 17, it + 7), {2, 17, 17});
    return std::vector<Tensor>{lf::matmul(lf::softmax(lf::matmul(q, lf::transpose(k, 1, 2)) * scale, -1), v),
                               w * scale};
  });
  // Scales 1, 2, 3, 1, 2, 3 (x 0.125): recorded at iterations 1, 2 and 3 (each a plan of its own,
  // PlanCache keeping several per structure), iterations 4 and 5 replay theirs.
  EXPECT_EQ(replayed, 2u);
}

TEST(FlushPlanNumbers, NumbersStayOutOfTheWords) {
  Tensor x = lf::from_vector(data(64, 0), {64});
  lf::sync();
  lf::plan::Signature a = signature_of(x * 2 + lf::arange(0, 64)), b = signature_of(x * 3 + lf::arange(5, 69));
  EXPECT_EQ(a.words, b.words);
  EXPECT_EQ(a.hash, b.hash);
  EXPECT_NE(a.numbers, b.numbers);
  EXPECT_EQ(a.numbers.size(), 2u * lf::plan::kNumberFields);  // the scalar's and the arange's
}

TEST(FlushPlan, AliasedInputsStayAliased) {
  check_loop(8, [](int it) {
    Tensor p = lf::from_vector(data(256, it), {256});
    Tensor q = lf::from_vector(data(256, it + 5), {256});
    Tensor other = it % 2 ? q : p;  // the same buffer twice, or two buffers
    return std::vector<Tensor>{p * 2 - other};
  });
}

TEST(FlushPlan, AHeldIntermediateIsStored) {
  check_loop(8, [](int it) {
    Tensor x = lf::from_vector(data(512, it), {512});
    Tensor mid = lf::exp(x * 0.5f);
    Tensor y = mid + 1;
    if (it % 2) return std::vector<Tensor>{y, mid};  // mid held: written too
    return std::vector<Tensor>{y};
  });
}

// An intermediate whose buffer a later output of its flush took over (freed after its last reader,
// its address handed on by the allocator) must not come out of a replay realized in that shared
// buffer. A replayed flush does not rewrite its graph, so such a node can still be read by a later
// flush: here the first flush's rewrite moves the slice v under the cast x (v = cast(slice(a))),
// so in a recorded run nothing reads x after the second flush, which frees it after its last
// reader (x's float32 cast) and hands its buffer to q (x / 3 rounded to bfloat16, the same size);
// in a replayed run v still reads x, and the third flush read q's values where x's should be. The fuzzer's seed 3900873 on the H200, scaled up: every
// buffer x's size is 1 MiB or more (the host keeps such blocks for exact-size reuse, as a GPU's
// caching allocator keeps every size), and fusion off, so every op is a kernel of its own.
TEST(FlushPlan, AnOverwrittenIntermediateStaysPendingAfterAReplay) {
  TieredCompileOff tiered_off;
  lf::test::FusionScope unfused(false);
  const int64_t n = int64_t{1} << 18;
  uint64_t before = lf::cache_stats().plans_replayed;
  for (int it = 0; it < 4; ++it) {
    std::vector<double> host(static_cast<size_t>(2 * n));
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<double>((i * 7 + 3 * it) % 13) * 0.25 - 1.5;
    Tensor x = lf::cast(lf::from_vector(host, {n, 2, 1}), lf::DType::BFloat16);
    Tensor flag = lf::from_vector(std::vector<bool>{it % 2 == 0}, {});
    Tensor q = x / 3;
    Tensor v = lf::slice(x, 1, 0, 1);
    Tensor norm = lf::norm(v, std::numeric_limits<double>::infinity(), {0, 1, 2}, true);
    Tensor r = lf::atan(lf::unsqueeze(lf::reshape(lf::remainder(v, flag), {n}), 1));
    Tensor lg = lf::log2(q);
    lf::test::Values want = lf::test::reference_values(norm);  // before any flush
    x = v = Tensor();
    r.to_vector<float>();  // the first flush: the slice moves under the cast
    q.to_vector<float>();  // the second: x freed after its last reader in a recorded run
    EXPECT_EQ(lf::test::compare(want, lf::test::fused_values(norm), lf::test::default_tolerance(lf::DType::BFloat16)), "")
        << "iteration " << it;
    lg.to_vector<float>();
  }
  EXPECT_GE(lf::cache_stats().plans_replayed - before, 2u);
}

// Flushes with a gather replay too, and still check their indices at the sync: an index out of
// range in a replayed flush is the same lf::Error as outside plans, and the plan goes on replaying
// (its error buffer zeroed again) once the indices are good. The indices are computed (a product),
// so the host does not know them.
TEST(FlushPlan, GathersReplayAndStillCheckTheirIndices) {
  TieredCompileOff tiered_off;
  static int runs = 0;
  const float scale = 2.0f + static_cast<float>(runs++);
  Tensor table = lf::from_vector(data(50 * 16, 0), {50, 16}).to(lf::default_device());
  lf::sync();
  auto ids_for = [](int it, bool bad) {
    std::vector<int64_t> v(6);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>((i * 7 + static_cast<size_t>(it)) % 50) - 25;
    if (bad) v[3] = 50;  // one past the table
    return lf::from_vector(v, {2, 3}).to(lf::default_device()) * 1;
  };
  auto body = [&](int it, bool bad) {
    return lf::layer_norm(lf::embedding(table, ids_for(it, bad)), 1) * scale;
  };
  const uint64_t checks = lf::cache_stats().index_checks;
  uint64_t replayed = check_loop(4, [&](int it) { return std::vector<Tensor>{body(it, false)}; });
  EXPECT_EQ(replayed, 2u) << "first sighting, recorded, then replayed";
  EXPECT_EQ(lf::cache_stats().index_checks - checks, 4u) << "a check a flush";
  uint64_t before = lf::cache_stats().plans_replayed;
  Tensor y = body(9, true);
  std::string what;
  try {
    lf::sync();
  } catch (const lf::Error& e) {
    what = e.what();
  }
  EXPECT_EQ(lf::cache_stats().plans_replayed - before, 1u) << "the bad flush was a replay";
  EXPECT_NE(what.find("embedding"), std::string::npos) << what;
  EXPECT_NE(what.find("index 50"), std::string::npos) << what;
  y = Tensor();
  EXPECT_EQ(check_loop(2, [&](int it) { return std::vector<Tensor>{body(it + 20, false)}; }), 2u);
}

// Indices the host wrote itself (from_vector, and a copy to the device) carry their bound
// (rt::Storage::value_range): a gather whose indices are known in range checks nothing, so its
// flush reads no error word (on a GPU: does not wait for the device). The fact is part of the plan's
// signature: indices out of range, or indices the host does not know (computed, or handed out by
// data_ptr, after which a consumer could have written them), get the checked kernel, and their
// error at the sync, never a replay of the unchecked one.
TEST(FlushPlan, GathersOfIndicesKnownInRangeCheckNothing) {
  TieredCompileOff tiered_off;
  static int runs = 0;
  const float scale = 3.0f + static_cast<float>(runs++);
  Tensor table = lf::from_vector(data(40 * 16, 1), {40, 16}).to(lf::default_device());
  lf::sync();
  auto ids_for = [](int it, int64_t bad) {
    std::vector<int64_t> v(8);
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>((i * 5 + static_cast<size_t>(it)) % 80) - 40;
    if (bad != 0) v[5] = bad;
    return lf::from_vector(v, {2, 4}).to(lf::default_device());
  };
  auto body = [&](const Tensor& ids) { return lf::layer_norm(lf::embedding(table, ids), 1) * scale; };
  uint64_t checks = lf::cache_stats().index_checks;
  EXPECT_EQ(check_loop(4, [&](int it) { return std::vector<Tensor>{body(ids_for(it, 0))}; }), 2u);
  EXPECT_EQ(lf::cache_stats().index_checks - checks, 0u) << "indices from the host, in [-40, 40): no check";
  for (int64_t bad : {int64_t{40}, int64_t{-41}}) {
    Tensor y = body(ids_for(7, bad));
    std::string what;
    try {
      lf::sync();
    } catch (const lf::Error& e) {
      what = e.what();
    }
    EXPECT_NE(what.find("embedding"), std::string::npos) << bad << ": " << what;
    EXPECT_NE(what.find("index " + std::to_string(bad)), std::string::npos) << what;
  }
  // Known in range again: the unchecked plan replays.
  EXPECT_EQ(check_loop(2, [&](int it) { return std::vector<Tensor>{body(ids_for(it + 10, 0))}; }), 2u);
  checks = lf::cache_stats().index_checks;
  EXPECT_EQ(check_loop(2, [&](int it) {
              Tensor ids = ids_for(it + 20, 0);
              ids.data_ptr();  // handed out: no longer known
              return std::vector<Tensor>{body(ids)};
            }), 1u);
  EXPECT_EQ(lf::cache_stats().index_checks - checks, 2u) << "handed-out indices are checked";
  // A view of known indices (a slice, a reshape) is known too; a cast or any other op is not.
  checks = lf::cache_stats().index_checks;
  Tensor ids = ids_for(3, 0);
  check_loop(1, [&](int) { return std::vector<Tensor>{body(lf::slice(ids.reshape({8}), 0, 2, 7))}; });
  EXPECT_EQ(lf::cache_stats().index_checks - checks, 0u);
  check_loop(1, [&](int) { return std::vector<Tensor>{body(lf::cast(ids, lf::DType::Int32))}; });
  EXPECT_EQ(lf::cache_stats().index_checks - checks, 1u);
}

TEST(FlushPlan, AHeldViewOfADroppedBufferReplays) {
  // The slice is its buffer's only holder: storing the held view frees the buffer's node before
  // the kernel's pointers are bound, and the replay must still find the buffer's memory. Tiered
  // compiling off: an optimized build landing mid-loop re-records the plan (a sharded run on the
  // H200, 2026-11-28, replayed 2 of 5).
  TieredCompileOff tiered_off;
  Tensor y, z;
  uint64_t replayed = check_loop(5, [&](int it) {
    y = lf::slice(lf::from_vector(data(65, it), {65}), 0, 1, 65);
    z = y * 2 + y;
    return std::vector<Tensor>{y, z};
  });
  EXPECT_GE(replayed, 3u);
}

TEST(FlushPlan, AClearedKernelCacheDropsPlans) {
  auto body = [](int it) {
    Tensor x = lf::from_vector(data(300, it), {300});
    return std::vector<Tensor>{lf::sqrt(lf::abs(x)) + 7};
  };
  EXPECT_GE(check_loop(4, body), 1u);
  lf::cache::global_cache().clear();
  lf::reset_stats();
  EXPECT_EQ(check_loop(1, body), 0u);
  EXPECT_EQ(lf::cache_stats().hits, 0u) << "a plan ran a kernel from before the cache was cleared";
}

// A GPU's tiered compiling swaps each quick build for its optimized one while a loop runs (a new
// kernel-cache generation): the loop's plan takes the optimized kernels and goes on replaying,
// right, instead of being recorded again. The CPU has no quick builds.
TEST(FlushPlan, APlanTakesTheOptimizedBuildsSwappedInDuringItsLoop) {
  if (!lf::default_device().is_cuda() || !lf::rt::config().tiered_compile) GTEST_SKIP() << "no quick builds here";
  static int runs = 0;
  const int64_t n = 5000 + 8 * runs++;  // a size and ops new to this process: its kernels start quick
  auto body = [&](int it) {
    Tensor x = lf::from_vector(data(n, it), {n});
    return std::vector<Tensor>{lf::atan(lf::expm1(x * 0.5) + lf::sinh(x)) * 3 - lf::cosh(x)};
  };
  const uint64_t quick_before = lf::cache_stats().quick_builds;
  EXPECT_EQ(check_loop(3, body), 1u) << "sightings 1 and 2 fuse and record, the 3rd replays";
  if (lf::cache_stats().quick_builds == quick_before) GTEST_SKIP() << "the kernel came optimized (from the disk cache)";
  const uint64_t generation = lf::cache::global_cache().generation();
  lf::finish_compiles();  // the optimized build swapped in
  ASSERT_GT(lf::cache::global_cache().generation(), generation);
  EXPECT_EQ(check_loop(4, body), 4u) << "the plan replays on through the swap";
}

TEST(FlushPlan, OffWhenDisabled) {
  auto& config = lf::rt::mutable_config();
  bool saved = config.flush_plans;
  config.flush_plans = false;
  uint64_t replayed = check_loop(4, [](int it) {
    Tensor x = lf::from_vector(data(128, it), {128});
    return std::vector<Tensor>{x * x};
  });
  config.flush_plans = saved;
  EXPECT_EQ(replayed, 0u);
}

TEST(FlushPlan, SignaturesDifferWhereLoweringWould) {
  Tensor x = lf::from_vector(data(64, 0), {64});
  Tensor x2 = lf::from_vector(data(64, 1), {64});
  Tensor x3 = lf::from_vector(data(65, 1), {65});
  lf::sync();
  EXPECT_EQ(words_of(x + 1), words_of(x2 + 1));  // new data, same structure
  EXPECT_EQ(words_of(x + 1), words_of(x + 1.5f));  // another number: not in the words
  EXPECT_NE(words_of(x + 1), words_of(x3 + 1));  // another size
  EXPECT_NE(words_of(x + 1), words_of(x - 1));   // another op
  EXPECT_NE(words_of(x + x), words_of(x + x2));  // one buffer twice, or two
  Tensor s = lf::slice(x3, 0, 1, 65);
  lf::sync();
  EXPECT_NE(words_of(s + 1), words_of(x + 1));  // an offset view
}

// ---- CUDA graphs: on a GPU, a replayed plan launches its kernels as one graph (cuda_backend.h).

uint64_t graph_launches() { return lf::cache_stats().graph_launches; }

// Flushes replayed, and launched as a CUDA graph, by check_loop after a first checked run whose
// optimized builds are in place: tiered compiling swaps kernels in when they are ready, which
// drops the plans recorded before, so replay counts would depend on the compiles' timing. (The
// check's reads compile kernels too: a cast to float64.)
struct Replays {
  uint64_t replayed = 0, graphs = 0;
};
Replays check_loop_warm(int iterations, const std::function<std::vector<Tensor>(int)>& body) {
  check_loop(1, [&](int) { return body(iterations); });
  lf::finish_compiles();
  uint64_t graphs = graph_launches();
  uint64_t replayed = check_loop(iterations, body);
  return {replayed, graph_launches() - graphs};
}

TEST(FlushPlanGraph, SamePointersChangedPointersAndSeveralKernels) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  // The same buffers each iteration: the output is dropped, so the allocator hands its block back.
  // (Not FlushPlan.ALoopReplaysOnNewData's size: that test counts replays from its first flush.)
  Tensor fixed = lf::from_vector(data(4100, 0), {4100});
  Replays r = check_loop_warm(6, [&](int) {
    return std::vector<Tensor>{lf::relu(fixed * 2 + 1) * lf::sigmoid(fixed) - lf::tanh(fixed) / 3};
  });
  EXPECT_GE(r.replayed, 5u);
  EXPECT_EQ(r.graphs, r.replayed);
  // Pointers that change each iteration: x = f(x) moves between buffers.
  Tensor x = lf::from_vector(data(3000, 1), {3000});
  r = check_loop_warm(7, [&](int) {
    x = x * 0.5f + 1;
    return std::vector<Tensor>{x};
  });
  EXPECT_GE(r.replayed, 6u);
  EXPECT_EQ(r.graphs, r.replayed);
  // A new pointer set every iteration (each result held): a graph per set up to four, then the
  // least recently used one takes the new pointers (Plan::graphs).
  std::vector<Tensor> held;
  Tensor y = lf::from_vector(data(2000, 2), {2000});
  r = check_loop_warm(9, [&](int) {
    y = y * 0.5f + 1;
    held.push_back(y);
    return std::vector<Tensor>{y};
  });
  EXPECT_GE(r.replayed, 8u);
  EXPECT_EQ(r.graphs, r.replayed);
  // Two kernels in one graph: rows scaled by their sums, then the columns' sums of that (a second
  // kernel, which reads the first one's output). Values with NaN and inf, new each iteration.
  auto two_kernels = [](int it) {
    std::vector<float> v = data(48 * 40, it);
    v[7] = std::numeric_limits<float>::quiet_NaN();
    v[100] = std::numeric_limits<float>::infinity();
    Tensor a = lf::from_vector(v, {48, 40});
    Tensor c = a / lf::sum(a, {1}, true);
    return std::vector<Tensor>{c, lf::sum(c, {0})};
  };
  r = check_loop_warm(5, two_kernels);
  EXPECT_GE(r.replayed, 4u);
  EXPECT_EQ(r.graphs, r.replayed);
  lf::CacheStats s0 = lf::cache_stats();
  { std::vector<Tensor> out = two_kernels(0); lf::sync(); }
  lf::CacheStats s1 = lf::cache_stats();
  EXPECT_EQ(s1.plans_replayed - s0.plans_replayed, 1u);
  EXPECT_EQ(s1.graph_launches - s0.graph_launches, 1u);
  EXPECT_EQ(s1.kernels_launched - s0.kernels_launched, 2u);
  // A kernel with nothing to compute beside one that has work: the graph leaves the first out.
  // (Last: its new kernels' optimized builds drop the plans recorded before.)
  r = check_loop_warm(4, [](int it) {
    Tensor e = lf::from_vector(std::vector<float>{}, {0, 5});
    Tensor x = lf::from_vector(data(300, it), {300});
    return std::vector<Tensor>{lf::exp(e) * 3, x * x - 1};
  });
  EXPECT_GE(r.replayed, 3u);
  EXPECT_EQ(r.graphs, r.replayed);
}

TEST(FlushPlanGraph, ChangingNumbersUpdateTheGraphInPlace) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  // A scalar and an int64 position that change every iteration on fixed buffers: each replay is
  // the one graph with its parameters updated (an int64 arange specializes the kernel's integer
  // math: the replay checks the variant first, which holds for these small positions).
  Tensor fixed = lf::from_vector(data(4104, 0), {4104});
  Replays r = check_loop_warm(8, [&](int it) {
    const float s = 0.5625f + 0.25f * static_cast<float>(it);  // never 1: `- 1` would share its node
    Tensor pos = lf::arange(7.0 * it, 7.0 * it + 4104, 1, lf::DType::Int64);
    return std::vector<Tensor>{lf::relu(fixed * s - 1) + lf::cast(lf::remainder(pos, 5), lf::DType::Float32), pos * 3};
  });
  EXPECT_GE(r.replayed, 7u);
  EXPECT_EQ(r.graphs, r.replayed);
}

TEST(FlushPlanGraph, SplitRowsAndGraphsOffLaunchKernelByKernel) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  // Two rows of 2^20: each row is split over blocks, whose counters are cleared before every
  // launch, so the plan launches step by step.
  Replays r = check_loop_warm(4, [](int it) {
    Tensor a = lf::from_vector(data(2 << 20, it), {2, 1 << 20});
    return std::vector<Tensor>{lf::sum(a * a, {1})};
  });
  EXPECT_GE(r.replayed, 3u);
  EXPECT_EQ(r.graphs, 0u);
  // LAZYFUSE_CUDA_GRAPHS=0 (a size no other test uses, so that its plan is new).
  lf::rt::Config& config = lf::rt::mutable_config();
  bool saved = config.cuda_graphs;
  config.cuda_graphs = false;
  r = check_loop_warm(4, [](int it) {
    Tensor x = lf::from_vector(data(777, it), {777});
    return std::vector<Tensor>{lf::exp(x) + x};
  });
  config.cuda_graphs = saved;
  EXPECT_GE(r.replayed, 3u);
  EXPECT_EQ(r.graphs, 0u);
}

// ---- The launch thread (runtime/launch_queue.h): back-to-back replays hand their graph launch to
// it; every other use of the stream waits for what it queued.

// Runs `iterations` flushes of x = x + 1 back to back, keeping every result (each in its own
// buffer, each launch reading the one before), with a read every 64th; checks every value and
// returns the launches queued on the launch thread.
uint64_t chained_increments(int iterations) {
  std::vector<float> start(5000);
  for (size_t i = 0; i < start.size(); ++i) start[i] = static_cast<float>(i);
  Tensor x = lf::from_vector(start, {5000});
  for (int i = 0; i < 3; ++i) {  // compile, record the plan, and swap in the optimized build first
    x = x + 1;
    lf::sync();
  }
  lf::finish_compiles();
  uint64_t queued = lf::cache_stats().queued_launches;
  std::vector<Tensor> kept;
  for (int i = 0; i < iterations; ++i) {
    x = x + 1;
    lf::sync();
    kept.push_back(x);
    if (i % 64 == 63) {
      EXPECT_EQ(x.to(lf::Device::cpu()).to_vector<float>()[4999], 4999.0f + 3 + i + 1);
    }
  }
  queued = lf::cache_stats().queued_launches - queued;
  int wrong = 0;
  for (size_t k = 0; k < kept.size() && wrong < 5; ++k) {
    std::vector<float> v = kept[k].to_vector<float>();
    for (size_t i = 0; i < v.size(); i += 997) {
      float expected = static_cast<float>(i) + 3 + static_cast<float>(k) + 1;
      if (v[i] != expected) ++wrong;
      EXPECT_EQ(v[i], expected) << "result " << k << ", element " << i;
    }
  }
  return queued;
}

TEST(FlushPlanGraph, BackToBackReplaysLaunchFromTheLaunchThreadInOrder) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  EXPECT_GT(chained_increments(300), 0u);
  // The benchmark's loop: the output dropped each time, so every launch writes the same block;
  // every 50th is kept (then the next one writes another block) and checked.
  Tensor a = lf::from_vector(data(4096, 3), {4096});
  auto chain = [&] { return lf::relu(a * 2 + 1) * lf::sigmoid(a) - lf::tanh(a) / 3; };
  const lf::test::Values ref = lf::test::reference_values(chain());
  std::vector<Tensor> kept;
  for (int i = 0; i < 300; ++i) {
    Tensor y = chain();
    lf::sync();
    if (i % 50 == 0) kept.push_back(y);
  }
  for (size_t k = 0; k < kept.size(); ++k) {
    std::string diff = lf::test::compare(ref, lf::test::fused_values(kept[k]), lf::test::default_tolerance(lf::DType::Float32, 64));
    EXPECT_TRUE(diff.empty()) << "kept result " << k << ":\n" << diff;
  }
}

TEST(FlushPlanGraph, LaunchThreadOffLaunchesOnTheFlushingThread) {
  if (!lf::default_device().is_cuda()) GTEST_SKIP() << "needs a GPU (the default device is the CPU)";
  struct Restore {
    bool saved = lf::rt::config().launch_thread;
    ~Restore() { lf::rt::mutable_config().launch_thread = saved; }
  } restore;
  lf::rt::mutable_config().launch_thread = false;
  EXPECT_EQ(chained_increments(100), 0u);
}

}  // namespace
