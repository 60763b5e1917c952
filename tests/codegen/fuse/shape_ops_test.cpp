// Shape ops, pad and slice assignment (issue 23, second wave): values against hand-computed ones
// (so the oracle itself is checked), fused and unfused against the reference executor for every
// dtype and awkward inputs (views, size-0 and size-1 dims, NaN and inf), the fusion contract (pad,
// slices and elementwise ops in one kernel; a Jacobi step in one kernel, replayed by a flush
// plan), and errors naming the op and shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"

namespace {

using lf::DType;
using lf::PadMode;
using lf::Tensor;
using lf::test::FusionScope;

std::vector<float> vals(const Tensor& t) { return t.to_vector<float>(); }
Tensor iota(lf::Shape s) { return lf::arange(0, static_cast<double>(lf::shape_numel(s))).reshape(s); }

TEST(ShapeOps, HandComputedValues) {
  Tensor x = iota({4});  // 0 1 2 3
  EXPECT_EQ(vals(lf::pad(x, {2, 1}, PadMode::Reflect)), (std::vector<float>{2, 1, 0, 1, 2, 3, 2}));
  EXPECT_EQ(vals(lf::pad(x, {2, 1}, PadMode::Replicate)), (std::vector<float>{0, 0, 0, 1, 2, 3, 3}));
  EXPECT_EQ(vals(lf::pad(x, {2, 1}, PadMode::Circular)), (std::vector<float>{2, 3, 0, 1, 2, 3, 0}));
  EXPECT_EQ(vals(lf::pad(x, {1, 2}, PadMode::Constant, 9)), (std::vector<float>{9, 0, 1, 2, 3, 9, 9}));
  EXPECT_EQ(vals(lf::pad(x, {-1, 1})), (std::vector<float>{1, 2, 3, 0}));  // negative pads crop
  EXPECT_EQ(vals(lf::pad(x, {4, 0}, PadMode::Circular)), (std::vector<float>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(vals(lf::flip(x, {0})), (std::vector<float>{3, 2, 1, 0}));
  EXPECT_EQ(vals(lf::roll(x, {1})), (std::vector<float>{3, 0, 1, 2}));
  EXPECT_EQ(vals(lf::roll(x, {-5}, {0})), (std::vector<float>{1, 2, 3, 0}));
  EXPECT_EQ(vals(lf::repeat(x, {2})), (std::vector<float>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(vals(lf::repeat_interleave(x, 2)), (std::vector<float>{0, 0, 1, 1, 2, 2, 3, 3}));
  Tensor m = iota({3, 3});  // 0..8
  EXPECT_EQ(vals(lf::tril(m)), (std::vector<float>{0, 0, 0, 3, 4, 0, 6, 7, 8}));
  EXPECT_EQ(vals(lf::triu(m, 1)), (std::vector<float>{0, 1, 2, 0, 0, 5, 0, 0, 0}));
  EXPECT_EQ(vals(lf::diagonal(m)), (std::vector<float>{0, 4, 8}));
  EXPECT_EQ(vals(lf::diagonal(m, -1)), (std::vector<float>{3, 7}));
  EXPECT_EQ(vals(lf::diagonal(m, 2)), (std::vector<float>{2}));
  EXPECT_EQ(vals(lf::flip(m, {0, -1})), (std::vector<float>{8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(vals(lf::roll(m, {1, -1}, {0, 1})), (std::vector<float>{7, 8, 6, 1, 2, 0, 4, 5, 3}));
  EXPECT_EQ(vals(lf::tile(iota({2}), {2, 2})), (std::vector<float>{0, 1, 0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(lf::tile(iota({2}), {2, 2}).shape(), (lf::Shape{2, 4}));
  EXPECT_EQ(vals(lf::repeat_interleave(iota({2, 2}), 2, 0)), (std::vector<float>{0, 1, 0, 1, 2, 3, 2, 3}));
  EXPECT_EQ(vals(lf::index_put(m, {lf::slice(1, -1), lf::slice(1, -1)}, lf::full({1}, -1))),
            (std::vector<float>{0, 1, 2, 3, -1, 5, 6, 7, 8}));
  EXPECT_EQ(vals(lf::index_put(iota({6}), {lf::slice(0, 6, 2)}, iota({3}) + 10)),
            (std::vector<float>{10, 1, 11, 3, 12, 5}));
  EXPECT_EQ(vals(lf::index_put(m, {lf::slice(0), lf::slice(2)}, 7)), (std::vector<float>{0, 1, 7, 3, 4, 7, 6, 7, 7}));
  EXPECT_EQ(vals(lf::index_put(x, x > 1.5, lf::full({}, 5))), (std::vector<float>{0, 1, 5, 5}));
  // An int64 scalar above 2^53 keeps every bit (issue 50: it went through a double), both forms.
  const int64_t big = (int64_t{1} << 53) + 1;
  Tensor z = lf::zeros({2}, DType::Int64);
  EXPECT_EQ(lf::index_put(z, {lf::slice(1)}, lf::Scalar(big)).to_vector<int64_t>(), (std::vector<int64_t>{0, big}));
  EXPECT_EQ(lf::index_put(z, lf::index_list(lf::slice(1)), lf::Scalar(big)).to_vector<int64_t>(),
            (std::vector<int64_t>{0, big}));
  EXPECT_EQ(lf::index_put(m, {lf::slice(0), lf::slice(2)}, 7.5).to_vector<float>()[2], 7.5f);  // a double still
  EXPECT_EQ(vals(lf::narrow(x, 0, 1, 2)), (std::vector<float>{1, 2}));
  EXPECT_EQ(vals(lf::select(m, 1, -1)), (std::vector<float>{2, 5, 8}));
  EXPECT_EQ(lf::select(m, 0, 1).shape(), (lf::Shape{3}));
  EXPECT_EQ(vals(lf::select(m, 0, 1)), (std::vector<float>{3, 4, 5}));
  auto parts = lf::split(iota({5}), 2);
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(vals(parts[2]), (std::vector<float>{4}));
  auto sized = lf::split(iota({5}), std::vector<int64_t>{1, 4});
  EXPECT_EQ(vals(sized[1]), (std::vector<float>{1, 2, 3, 4}));
  auto ch = lf::chunk(iota({5}), 2);
  ASSERT_EQ(ch.size(), 2u);
  EXPECT_EQ(vals(ch[0]), (std::vector<float>{0, 1, 2}));
  auto rows = lf::unbind(m, 1);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(vals(rows[1]), (std::vector<float>{1, 4, 7}));
  EXPECT_EQ(lf::movedim(iota({2, 3, 4}), {0}, {-1}).shape(), (lf::Shape{3, 4, 2}));
  EXPECT_EQ(vals(lf::stack({x, x + 1}, 1)), (std::vector<float>{0, 1, 1, 2, 2, 3, 3, 4}));
}

// Inputs of every dtype with NaN and inf among the floats, given as awkward views: permuted, and
// sliced with a step.
Tensor input(DType dt, lf::Shape s, int kind) {
  lf::Shape big = s;
  if (kind == 2 && !big.empty()) big.back() = big.back() * 2;  // sliced with step 2 below
  int64_t n = lf::shape_numel(big);
  std::vector<double> v(static_cast<size_t>(n));
  lf::test::Rng rng(static_cast<uint64_t>(n * 7 + kind));
  for (auto& e : v) e = std::round(rng.uniform(-50, 50));
  if (is_floating(dt) && n > 3) {
    v[1] = std::numeric_limits<double>::quiet_NaN();
    v[2] = std::numeric_limits<double>::infinity();
  }
  Tensor t = lf::cast(lf::from_vector(v, big), dt);
  if (kind == 1 && s.size() >= 2) {  // a transposed layout of the same shape
    lf::Shape ts = s;
    std::swap(ts[0], ts[1]);
    t = lf::transpose(lf::cast(lf::from_vector(std::vector<double>(v.begin(), v.begin() + lf::shape_numel(ts)), ts), dt), 0, 1);
  }
  if (kind == 2 && !s.empty()) t = lf::slice(t, -1, 0, big.back(), 2);
  t.to_vector<float>();  // materialized: the view is over storage
  return t;
}

class ShapeOpsRef : public ::testing::TestWithParam<bool> {};  // fusion on, off

TEST_P(ShapeOpsRef, EveryOpMatchesTheReference) {
  FusionScope scope(GetParam());
  const std::vector<DType> dtypes = {DType::Bool,    DType::Int32,   DType::Int64,  DType::Float16,
                                     DType::BFloat16, DType::Float32, DType::Float64};
  const std::vector<lf::Shape> shapes = {{5, 7}, {1, 6}, {3, 1}, {0, 4}, {2, 3, 5}};
  for (DType dt : dtypes) {
    for (const lf::Shape& s : shapes) {
      // Every layout for two dtypes; the others contiguous (the index math does not depend on dtype).
      for (int kind = 0; kind < (dt == DType::Float32 || dt == DType::Int32 ? 3 : 1); ++kind) {
        Tensor x = input(dt, s, kind);
        std::string what = std::string(dtype_name(dt)) + lf::shape_str(s) + " kind " + std::to_string(kind);
        auto check = [&](const Tensor& t, const char* op) { lf::test::expect_matches_reference(t, 1, what + " " + op); };
        int64_t h = s[s.size() - 2], w = s.back();
        check(lf::flip(x, {-1, 0}), "flip");
        check(lf::roll(x, {2, -1}, {-1, 0}), "roll");
        check(lf::roll(x, {3}), "roll flat");
        check(lf::repeat(x, {2, 1, 3}), "repeat");
        check(lf::tile(x, {2}), "tile");
        check(lf::repeat_interleave(x, 3, -2), "repeat_interleave");
        check(lf::tril(x, -1), "tril");
        check(lf::triu(x, 1), "triu");
        check(lf::diagonal(x, 1, -1, 0), "diagonal");
        check(lf::movedim(x, {0}, {-1}), "movedim");
        check(lf::stack({x, x}, -1), "stack");
        for (const Tensor& p : lf::chunk(x, 2, -1)) check(p, "chunk");
        check(lf::pad(x, {2, 3, 1, -1}, PadMode::Constant, 7), "pad constant");
        check(lf::pad(x, {3, 0}, PadMode::Replicate), "pad replicate");  // an empty dim is padded only when not
        if (w > 2 && h > 1) check(lf::pad(x, {2, 2, 1, 0}, PadMode::Reflect), "pad reflect");
        if (w > 1 && h > 0) check(lf::pad(x, {w, 1, 0, 1}, PadMode::Circular), "pad circular");
        check(lf::index_put(x, {lf::slice(1, -1), lf::slice(0, w, 2)}, lf::cast(lf::full({1}, 3), dt)), "index_put");
        check(lf::index_put(x, {lf::slice(1, 1)}, lf::cast(lf::full({1}, 3), dt)), "index_put empty");
        if ((is_floating(dt) || dt == DType::Int64) && h > 0) {
          // Fused consumers: pad and index_put inside elementwise chains, slices of a pad.
          Tensor p = lf::pad(x, {1, 1, 1, 1}, PadMode::Replicate);
          check(lf::slice(lf::slice(p, -1, 2, w + 2), -2, 0, h) + lf::slice(lf::slice(p, -1, 0, w), -2, 2, h + 2) * 2,
                "pad slices");
          Tensor v = lf::slice(x, -2, 0, std::max<int64_t>(h - 2, 0)) + 1;
          std::vector<lf::Slice> rows(s.size() - 1, lf::slice(0));
          rows.back() = lf::slice(1, -1);
          check(lf::index_put(x, rows, v) * 2, "index_put of a computed value");
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FusedAndUnfused, ShapeOpsRef, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fused" : "Unfused"; });

TEST(ShapeOpsFusion, PadSlicesAndElementwiseAreOneKernel) {
  // Large enough to run over several threads (CPU) or blocks (GPU), rows longer than a block.
  Tensor u = lf::rand({300, 1100});
  u.to_vector<float>();
  for (PadMode mode : {PadMode::Constant, PadMode::Reflect, PadMode::Replicate, PadMode::Circular}) {
    // The padded value is a temporary, as in a step function: no handle holds it at the sync.
    auto step = [&] {
      Tensor p = lf::pad(u, {2, 2, 1, 1}, mode, 0.5);
      Tensor lap = lf::slice(lf::slice(p, 0, 0, 300), 1, 0, 1100) + lf::slice(lf::slice(p, 0, 2, 302), 1, 4, 1104) -
                   2 * lf::slice(lf::slice(p, 0, 1, 301), 1, 2, 1102);
      return lf::tanh(lap) * 3;
    };
    lf::test::StatsDelta d;
    Tensor y = step();
    lf::test::Values ref = lf::test::reference_values(y);
    lf::test::Values got = lf::test::fused_values(y);
    EXPECT_EQ(d.launched(), 1u) << static_cast<int>(mode);
    EXPECT_TRUE(lf::test::compare(ref, got, lf::test::default_tolerance(DType::Float32)).empty());
  }
}

TEST(ShapeOpsFusion, ARemapOfARemapIsOneKernel) {
  // The inner remaps are not stored first: the outer one reads their source at composed indices,
  // and the index math's coordinates become the indices the outer remap reads (rewrite.cpp).
  Tensor u = lf::rand({70, 300});
  u.to_vector<float>();
  // `make` records the ops, so that no handle holds the inner values at the sync (a temporary
  // lives until the end of its full expression: one_kernel(pad(flip(u)), ...) would hold flip's).
  auto one_kernel = [](const std::function<Tensor()>& make, const char* what) {
    lf::test::StatsDelta d;
    Tensor y = make();
    lf::test::Values ref = lf::test::reference_values(y);
    lf::test::Values got = lf::test::fused_values(y);
    EXPECT_EQ(d.launched(), 1u) << what;
    EXPECT_TRUE(lf::test::compare(ref, got, lf::test::default_tolerance(DType::Float32)).empty()) << what;
  };
  one_kernel([&] { return lf::pad(lf::flip(u, {1}), {3, 2, 1, 1}, PadMode::Reflect) * 2; }, "pad of a flip");
  one_kernel([&] { return lf::roll(lf::pad(u, {2, 2}, PadMode::Circular), {5, -1}, {1, 0}) + 1; }, "roll of a pad");
  one_kernel([&] { return lf::exp(lf::tile(lf::flip(lf::pad(u, {1, 1, 0, 0}, PadMode::Constant, 3.0), {0}), {2, 1})); },
             "tile of a flip of a constant pad");
  one_kernel(
      [&] {
        return lf::index_put(u, {lf::slice(2, -2), lf::slice(0, 300, 3)},
                             lf::flip(u, {0}).slice(0, 2, 68).slice(1, 0, 300, 3));
      },
      "slice assignment of a flipped region");
}

Tensor jacobi_step(const Tensor& u) {
  int64_t h = u.size(0), w = u.size(1);
  Tensor up = lf::slice(lf::slice(u, 0, 0, h - 2), 1, 1, w - 1);
  Tensor down = lf::slice(lf::slice(u, 0, 2, h), 1, 1, w - 1);
  Tensor left = lf::slice(lf::slice(u, 0, 1, h - 1), 1, 0, w - 2);
  Tensor right = lf::slice(lf::slice(u, 0, 1, h - 1), 1, 2, w);
  return lf::index_put(u, {lf::slice(1, -1), lf::slice(1, -1)}, 0.25 * (up + down + left + right));
}

TEST(ShapeOpsFusion, JacobiStepIsOneKernelAndReplays) {
  Tensor u0 = lf::rand({257, 1031});
  u0.to_vector<float>();
  {
    lf::test::StatsDelta d;
    Tensor u = jacobi_step(u0);
    lf::test::Values ref = lf::test::reference_values(u);
    lf::test::Values got = lf::test::fused_values(u);
    EXPECT_EQ(d.launched(), 1u);
    EXPECT_TRUE(lf::test::compare(ref, got, lf::test::default_tolerance(DType::Float32)).empty());
  }
  // A loop of steps, one flush each: one kernel a step, replayed by a flush plan from the third.
  Tensor u = u0, r = u0;
  lf::test::StatsDelta d;
  uint64_t replays = lf::cache_stats().plans_replayed;
  for (int i = 0; i < 5; ++i) {
    u = jacobi_step(u);
    lf::sync();
  }
  EXPECT_EQ(d.launched(), 5u);
  EXPECT_GE(lf::cache_stats().plans_replayed - replays, 2u);
  {
    FusionScope off(false);
    for (int i = 0; i < 5; ++i) r = jacobi_step(r);
    lf::sync();
  }
  EXPECT_TRUE(lf::test::compare(lf::test::fused_values(r), lf::test::fused_values(u),
                                lf::test::default_tolerance(DType::Float32)).empty());
}

// The index math of pad and slice assignment is recorded once and shared while it is pending
// (ops_shape.cpp, IndexMathCache): steps of a loop in one flush share the region's mask, so a
// trace of 50 stencil steps holds one set of it. Shared or not, the values are the reference's,
// fused and unfused (where each op is its own kernel and shared math is materialized, then not
// shared again).
TEST(ShapeOpsFusion, IndexMathIsSharedWhilePending) {
  Tensor a = lf::rand({33, 47}), b = lf::rand({33, 47});
  lf::sync();
  auto region = [](const Tensor& t, float s) { return lf::index_put(t, {lf::slice(1, -1), lf::slice(2, -1, 3)}, s * t.slice(0, 1, 32).slice(1, 2, 46, 3)); };
  Tensor ra = region(a, 2), rb = region(b, 3);
  ASSERT_EQ(ra.node()->op, lf::ir::Op::Where);
  EXPECT_EQ(ra.node()->inputs[0].get(), rb.node()->inputs[0].get());  // one mask for both
  Tensor other = lf::index_put(a, {lf::slice(0, -1)}, 0.0);  // another region: its own mask
  EXPECT_NE(other.node()->inputs[0].get(), ra.node()->inputs[0].get());
  Tensor pa = lf::pad(a, {1, 2, 3, 0}, lf::PadMode::Reflect), pb = lf::pad(b, {1, 2, 3, 0}, lf::PadMode::Reflect);
  ASSERT_EQ(pa.node()->op, lf::ir::Op::Remap);
  EXPECT_EQ(pa.node()->inputs[1].get(), pb.node()->inputs[1].get());
  Tensor ca = lf::pad(a, {2, 2}, lf::PadMode::Constant, 7.0), cb = lf::pad(b, {2, 2}, lf::PadMode::Constant, -1.0);
  for (const Tensor& t : {ra, rb, other, pa, pb, ca, cb})
    EXPECT_TRUE(lf::test::compare(lf::test::reference_values(t), lf::test::fused_values(t),
                                  lf::test::default_tolerance(DType::Float32)).empty());
  // Fifty steps in one flush: one kernel each, the values those of fifty unfused steps.
  Tensor u = a, r = a;
  for (int i = 0; i < 50; ++i) u = jacobi_step(u);
  {
    lf::test::StatsDelta d;
    lf::sync();
    EXPECT_EQ(d.launched(), 50u);
  }
  {
    FusionScope off(false);
    for (int i = 0; i < 50; ++i) r = jacobi_step(r);
    lf::sync();
  }
  EXPECT_TRUE(lf::test::compare(lf::test::fused_values(r), lf::test::fused_values(u),
                                lf::test::default_tolerance(DType::Float32)).empty());
}

TEST(ShapeOpsErrors, NameTheOpAndShapes) {
  Tensor x = lf::zeros({2, 3});
  auto expect_error = [](const std::function<void()>& f, const std::string& what,
                         const std::string& shape = "float32[2, 3]") {
    try {
      f();
      ADD_FAILURE() << "no error for " << what;
    } catch (const lf::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(shape), std::string::npos) << e.what();
    }
  };
  expect_error([&] { lf::pad(x, {3, 0}, PadMode::Reflect); }, "lf::pad: reflect pads must be smaller");
  expect_error([&] { lf::pad(x, {4, 0}, PadMode::Circular); }, "lf::pad: circular pads");
  expect_error([&] { lf::pad(x, {1}); }, "lf::pad: needs an even number");
  expect_error([&] { lf::pad(x, {-2, -2}); }, "negative or too large size");
  expect_error([&] { lf::pad(x, {1, 1, 1, 1, 1, 1}); }, "lf::pad: pads more dims");
  expect_error([&] { lf::flip(x, {2}); }, "lf::flip");
  expect_error([&] { lf::flip(x, {0, -2}); }, "appears more than once");
  expect_error([&] { lf::roll(x, {1, 2}, {0}); }, "lf::roll");
  expect_error([&] { lf::tril(lf::zeros({2, 3}).reshape({6})); }, "lf::tril: needs at least 2 dims", "float32[6]");
  expect_error([&] { lf::diagonal(x, 0, 1, -1); }, "lf::diagonal: dim1 and dim2 must differ");
  expect_error([&] { lf::repeat(x, {2}); }, "lf::repeat");
  expect_error([&] { lf::narrow(x, 1, 2, 2); }, "lf::narrow");
  expect_error([&] { lf::select(x, 0, 4); }, "lf::select: index 4 is out of range for dim 0 of size 2");
  expect_error([&] { lf::select(lf::scalar(1.0f), 0, 0); }, "lf::select: cannot select from a rank-0 tensor", "float32[]");
  expect_error([&] { lf::split(x, std::vector<int64_t>{1, 1}, 1); }, "lf::split: sizes [1, 1] add up to 2");
  expect_error([&] { lf::chunk(x, 0); }, "lf::chunk");
  expect_error([&] { lf::stack({x, lf::zeros({3, 2})}); }, "lf::stack: shapes must be equal");
  expect_error([&] { lf::index_put(x, {lf::slice(0, 2), lf::slice(1)}, lf::zeros({3})); },
               "lf::index_put: value of shape [3] does not broadcast to the region [2, 2]");
  expect_error([&] { lf::index_put(x, {lf::slice(0, 2, 0)}, lf::zeros({1})); }, "lf::index_put: slice step");
  expect_error([&] { lf::index_put(x, {lf::slice(0), lf::slice(0), lf::slice(0)}, lf::zeros({1})); }, "lf::index_put");
}

}  // namespace
