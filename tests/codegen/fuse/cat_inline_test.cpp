// cat as index math in its consumers' kernel (codegen/fuse/rewrite.cpp, inline_cats; issue 23):
// launch counts for the fusion contract, values against the reference executor fused and unfused
// (every dtype, every axis, views, size-0 and size-1 dims, NaN and inf), the cases that keep the
// copy kernels (exec/cat.cpp), and a cat stencil replayed by flush plans with new data each step.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "codegen/fuse/fuser.h"
#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"

namespace {

using lf::DType;
using lf::Tensor;
using lf::test::FusionScope;
using lf::test::StatsDelta;

Tensor data(lf::Shape shape, float start, DType d = DType::Float32) {
  std::vector<float> v = lf::test::iota_floats(lf::shape_numel(shape), start, 0.25f);
  Tensor t = lf::from_vector(v, shape).to(d);
  lf::sync();
  return t;
}

// Runs `y` fused and checks it against the reference and the launch count.
void expect_kernels(const Tensor& y, const StatsDelta& d, uint64_t kernels, const char* what) {
  lf::test::Values ref = lf::test::reference_values(y);
  lf::test::Values got = lf::test::fused_values(y);
  EXPECT_EQ(d.launched(), kernels) << what;
  EXPECT_TRUE(lf::test::compare(ref, got, lf::test::default_tolerance(y.dtype(), 64)).empty()) << what;
}

TEST(CatInline, AConsumedCatIsOneKernelWithItsProducersAndConsumers) {
  // Large enough for several threads (CPU) or blocks (GPU).
  Tensor a = data({300, 40}, -5), b = data({300, 24}, 1);
  {
    StatsDelta d;
    Tensor y = lf::cat({lf::exp(a * 0.01), b * 2, lf::slice(a, 1, 0, 3)}, 1) + 1;  // along the rows
    expect_kernels(y, d, 1, "cat along dim 1, elementwise consumer");
  }
  {
    StatsDelta d;
    Tensor y = lf::sum(lf::cat({lf::tanh(a), lf::transpose(lf::slice(a, 0, 0, 40), 0, 1)}, 0), {0});
    expect_kernels(y, d, 1, "cat along dim 0 of a producer and a view, reduced over the cat's dim");
  }
  {
    StatsDelta d;
    Tensor y = lf::softmax(lf::stack({a, a * 3, lf::sqrt(lf::abs(a))}, 1), -1);
    expect_kernels(y, d, 1, "stack (unsqueeze + cat) under a softmax");
  }
}

TEST(CatInline, AHeldCatOfComputedPartsIsOneKernel) {
  Tensor a = data({128, 33}, -2), b = data({64, 33}, 3);
  StatsDelta d;
  Tensor t = lf::cat({lf::exp(a * 0.1), b + 1, lf::slice(b, 0, 0, 5) * b.slice(0, 5, 10)}, 0);
  expect_kernels(t, d, 1, "held cat of computed parts");
}

TEST(CatInline, CopiesStayForHeldCatsOfMemoryAndForManyParts) {
  Tensor a = data({64, 32}, 0), b = data({16, 32}, 1);
  {
    StatsDelta d;
    Tensor t = lf::cat({a, b, a}, 0);  // held, every part in memory: a copy kernel a part
    expect_kernels(t, d, 3, "held cat of memory");
  }
  std::vector<Tensor> parts;
  for (size_t k = 0; k <= lf::fuse::kMaxInlineCatParts; ++k) parts.push_back(k % 2 ? a : b);
  {
    StatsDelta d;
    Tensor y = lf::cat(parts, 0) * 2;  // one part more than inline: copies, then the consumer
    expect_kernels(y, d, parts.size() + 1, "more parts than kMaxInlineCatParts");
  }
  parts.pop_back();
  {
    StatsDelta d;
    Tensor y = lf::cat(parts, 0) * 2;
    expect_kernels(y, d, 1, "kMaxInlineCatParts parts");
  }
}

class CatInlineRef : public ::testing::TestWithParam<bool> {};

TEST_P(CatInlineRef, EveryDtypeAxisAndEdgeMatchesTheReference) {
  FusionScope scope(GetParam());
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (DType dt : {DType::Bool, DType::Int32, DType::Int64, DType::Float16, DType::BFloat16, DType::Float32,
                   DType::Float64}) {
    for (lf::Shape s : {lf::Shape{5, 7}, lf::Shape{1, 6}, lf::Shape{4, 1}, lf::Shape{3, 2, 5}, lf::Shape{0, 3}}) {
      std::vector<float> v = lf::test::iota_floats(lf::shape_numel(s), -3, 0.75f);
      if (v.size() > 3 && lf::is_floating(dt)) {
        v[1] = nan;
        v[2] = inf;
        v[3] = -inf;
      }
      Tensor x = lf::from_vector(v, s).to(dt);
      lf::sync();
      const int64_t r = x.dim();
      for (int64_t axis = 0; axis < r; ++axis) {
        auto check = [&](const Tensor& y, const std::string& what) {
          SCOPED_TRACE(std::string(lf::dtype_name(dt)) + lf::shape_str(s) + " axis " + std::to_string(axis) + ": " + what);
          lf::test::expect_matches_reference(y, 1, what);
        };
        const int64_t n = x.size(axis);
        Tensor empty = lf::slice(x, axis, 0, 0);
        Tensor strided = lf::slice(x, axis, 0, n, 2);
        Tensor computed = dt == DType::Bool ? !x : x * 2;
        // A view whose own layout is not x's: x flipped along the axis by a transpose round trip
        // when there is another dim, else x itself.
        Tensor viewed = r >= 2 ? lf::transpose(lf::contiguous(lf::transpose(x, 0, r - 1)), 0, r - 1) : x;
        check(lf::cat({x, empty, computed}, axis), "held: x, empty, computed");
        check(lf::cat({strided, viewed, x}, axis), "held: strided, viewed, x");
        if (dt == DType::Bool) {
          check(!lf::cat({x, computed}, axis), "consumed by logical_not");
        } else {
          check(lf::cat({computed, strided, empty, x}, axis) + 1, "consumed by add");
          check(lf::cast(lf::cat({x, viewed}, axis), DType::Float32) * 0.5, "consumed by cast");
          if (x.numel() > 0) check(lf::sum(lf::cast(lf::cat({x, computed}, axis), DType::Float64), {axis}), "reduced");
        }
        check(lf::cat({empty, x, empty}, axis) , "one non-empty part");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FusedAndUnfused, CatInlineRef, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fused" : "Unfused"; });

// A Jacobi step written with cat, as a user without slice assignment would (the boundary rows and
// columns copied, the interior computed): one kernel a step, replayed by a flush plan.
Tensor cat_jacobi_step(const Tensor& u) {
  int64_t h = u.size(0), w = u.size(1);
  auto at = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) { return u.slice(0, r0, r1).slice(1, c0, c1); };
  Tensor inner = 0.25 * (at(0, h - 2, 1, w - 1) + at(2, h, 1, w - 1) + at(1, h - 1, 0, w - 2) + at(1, h - 1, 2, w));
  Tensor mid = lf::cat({at(1, h - 1, 0, 1), inner, at(1, h - 1, w - 1, w)}, 1);
  return lf::cat({at(0, 1, 0, w), mid, at(h - 1, h, 0, w)}, 0);
}

TEST(CatInline, ACatStencilIsOneKernelAStepAndReplaysWithNewData) {
  Tensor u0 = lf::rand({130, 257});
  lf::sync();
  Tensor u = u0, r = u0;
  StatsDelta d;
  uint64_t replays = lf::cache_stats().plans_replayed;
  for (int i = 0; i < 6; ++i) {
    u = cat_jacobi_step(u);
    lf::sync();
  }
  EXPECT_EQ(d.launched(), 6u);
  EXPECT_GE(lf::cache_stats().plans_replayed - replays, 3u);
  {
    FusionScope off(false);
    for (int i = 0; i < 6; ++i) r = cat_jacobi_step(r);
    lf::sync();
  }
  EXPECT_TRUE(lf::test::compare(lf::test::fused_values(r), lf::test::fused_values(u),
                                lf::test::default_tolerance(DType::Float32)).empty());
  // New inputs of the same shapes each call, through a replayed plan: each against the reference.
  for (int i = 0; i < 4; ++i) {
    Tensor a = lf::rand({64, 48}), b = lf::rand({64, 16});
    lf::sync();
    Tensor y = lf::sum(lf::cat({a * (i + 1), lf::exp(b)}, 1), {1});
    lf::test::expect_matches_reference(y, 64, "replayed consumed cat, call " + std::to_string(i));
  }
}

}  // namespace
