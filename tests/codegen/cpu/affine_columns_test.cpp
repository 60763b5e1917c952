// Stencils' remaps with affine columns (codegen/cpu/llvm/emit_affine.cpp): each row split into a
// border (the general index math) and an interior where the remapped loads are base + c * step.
// Every result must be bit-identical to the reference executor (the stencils here only add and
// multiply by powers of two, which the fused kernel rounds as the reference does, even where a GPU
// compiler contracts a multiply and an add: the product is exact): the interior's bounds and its
// affine offsets are checked on every pad mode, shifts, index_put regions, flip and roll, over
// shapes whose interior is empty, one column, or split between threads (one long row), inputs
// with NaN and inf and non-contiguous layouts. On the GPU the same tests run the CUDA Remap load
// (its code is not changed by this split). Then: the Jacobi step's interior loop vectorizes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "codegen/cpu/backend.h"
#include "codegen/fuse/fuser.h"
#include "codegen/fuse/lower.h"
#include "codegen/ir/node.h"
#include "codegen/test_util.h"

namespace {

using lf::DType;
using lf::PadMode;
using lf::Tensor;
using lf::test::FusionScope;

const lf::test::Tolerance kExact{0, 0, true};

// Values of every dtype (integers in [-50, 50]; NaN and inf among the floats), materialized;
// layout 1: a transposed view; layout 2: every other column of a wider tensor.
Tensor grid(DType dt, int64_t h, int64_t w, int layout) {
  int64_t wide = layout == 2 ? 2 * w : w;
  int64_t rows = layout == 1 ? wide : h, cols = layout == 1 ? h : wide;
  std::vector<double> v(static_cast<size_t>(rows * cols));
  lf::test::Rng rng(static_cast<uint64_t>(h * 131 + w * 7 + layout));
  for (auto& e : v) e = std::round(rng.uniform(-50, 50));
  if (lf::is_floating(dt) && v.size() > 5) {
    v[3] = std::numeric_limits<double>::quiet_NaN();
    v[v.size() / 2] = std::numeric_limits<double>::infinity();
    v[v.size() - 2] = -std::numeric_limits<double>::infinity();
  }
  Tensor t = lf::cast(lf::from_vector(v, {rows, cols}), dt);
  if (layout == 1) t = lf::transpose(t, 0, 1);
  if (layout == 2) t = lf::slice(t, 1, 0, wide, 2);
  t.to_vector<double>();  // in memory: the kernels read it through its strides
  return t;
}

Tensor at(const Tensor& p, int64_t r0, int64_t c0, int64_t h, int64_t w) {
  return lf::slice(lf::slice(p, 0, r0, r0 + h), 1, c0, c0 + w);
}

Tensor jacobi(const Tensor& a) {
  int64_t h = a.size(0), w = a.size(1);
  if (h < 3 || w < 3) return a;
  Tensor v = at(a, 1, 1, h - 2, w - 2) + at(a, 1, 0, h - 2, w - 2) + at(a, 1, 2, h - 2, w - 2) +
             at(a, 2, 1, h - 2, w - 2) + at(a, 0, 1, h - 2, w - 2);
  return lf::index_put(a, {lf::slice(1, -1), lf::slice(1, -1)}, v * 2);
}

Tensor heat(const Tensor& a, PadMode mode) {
  int64_t h = a.size(0), w = a.size(1);
  Tensor p = lf::pad(a, {1, 1, 1, 1}, mode, 3);
  return a + (at(p, 1, 0, h, w) + at(p, 1, 2, h, w) + at(p, 2, 1, h, w) + at(p, 0, 1, h, w) - a * 4) * 2;
}

void expect_exact(const Tensor& t, const std::string& what) {
  lf::test::Values ref = lf::test::reference_values(t);
  lf::test::Values got = lf::test::fused_values(t);
  std::string diff = lf::test::compare(ref, got, kExact);
  EXPECT_TRUE(diff.empty()) << what << " " << dtype_name(t.dtype()) << lf::shape_str(t.shape()) << ":\n" << diff;
}

class AffineColumns : public ::testing::TestWithParam<bool> {};  // fusion on, off

TEST_P(AffineColumns, StencilsAreBitIdenticalToTheReference) {
  FusionScope scope(GetParam());
  // Shapes: no interior (narrower than the stencil), one interior column, a few rows of threads'
  // work, one long row (its columns split between threads), size-1 and size-0 dims.
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 1},  {2, 2},   {3, 3},      {3, 4},  {5, 1},
                                                           {1, 9},  {0, 5},   {64, 64},    {7, 33}, {257, 1031},
                                                           {2, 70001}, {1, 300007}};
  // The index math does not depend on the dtype: float32 in every layout, two others contiguous.
  for (DType dt : {DType::Float32, DType::Int64, DType::BFloat16}) {
    for (auto [h, w] : shapes) {
      bool big = h * w > 100000;
      if (big && dt != DType::Float32) continue;
      for (int layout = 0; layout < (dt == DType::Float32 && !big ? 3 : 1); ++layout) {
        Tensor a = grid(dt, h, w, layout);
        std::string what = "layout " + std::to_string(layout);
        expect_exact(jacobi(a), what + " jacobi");
        if (h > 0 && w > 0) {
          for (PadMode mode : {PadMode::Constant, PadMode::Replicate, PadMode::Circular})
            expect_exact(heat(a, mode), what + " heat pad " + std::to_string(static_cast<int>(mode)));
          if (h > 1 && w > 1) expect_exact(heat(a, PadMode::Reflect), what + " heat pad reflect");
        }
        // Shifted reads of wider pads, a region that is not centred, flips (step -1) and rolls.
        if (h > 2 && w > 3) {
          Tensor p = lf::pad(a, {3, 2, 2, 1}, PadMode::Reflect);
          expect_exact(at(p, 0, 0, h, w) + at(p, 3, 5, h, w) + at(p, 1, 2, h, w), what + " reflect shifts");
        }
        Tensor q = lf::pad(a, {5, 7, 0, 2}, PadMode::Constant, -1);
        expect_exact(at(q, 2, 3, h, w) + at(q, 0, 9, h, w), what + " constant shifts");
        if (h > 4 && w > 9)
          expect_exact(lf::index_put(a, {lf::slice(3, -1), lf::slice(7, w - 2)}, at(a, 0, 0, h - 4, w - 9) + 1),
                       what + " offset region");
        expect_exact(lf::flip(a, {1}) + a, what + " flip");
        expect_exact(lf::flip(a, {0, 1}) * 3, what + " flip both");
        expect_exact(lf::roll(a, {3, -2}, {1, 0}) + a, what + " roll");
      }
    }
  }
}

// Outputs of 16 MiB and more are written with streaming stores (cpu::wants_streaming_stores): the
// row's columns are then an unaligned head, an aligned middle and a tail, each split again into
// border and interior.
TEST(AffineColumnsStreaming, LargeStencilsAreBitIdentical) {
  Tensor a = grid(DType::Float32, 1025, 4099, 0);
  expect_exact(jacobi(a), "jacobi");
  expect_exact(heat(a, PadMode::Reflect), "heat pad reflect");
}

INSTANTIATE_TEST_SUITE_P(FusedAndUnfused, AffineColumns, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Fused" : "Unfused"; });

// Steps of both stencils one after the other, against the same steps unfused: the flush plans'
// replays reuse the kernels on new data.
TEST(AffineColumnsSteps, JacobiAndHeatLoopsMatchUnfused) {
  Tensor a0 = lf::rand({130, 517});
  a0.to_vector<float>();
  Tensor a = a0, b = a0, r = a0, s = a0;
  for (int i = 0; i < 6; ++i) {
    a = jacobi(a) * 0.125;
    b = heat(b, PadMode::Replicate) * 0.125;
    lf::sync();
  }
  {
    FusionScope off(false);
    for (int i = 0; i < 6; ++i) {
      r = jacobi(r) * 0.125;
      s = heat(s, PadMode::Replicate) * 0.125;
    }
    lf::sync();
  }
  EXPECT_EQ(a.to_vector<float>(), r.to_vector<float>());
  EXPECT_EQ(b.to_vector<float>(), s.to_vector<float>());
}

// The Jacobi step is one kernel whose interior loop is vector code: contiguous vector loads of the
// source (before the split, every load was a scalar load at a computed offset).
TEST(AffineColumnsCode, JacobiInteriorVectorizes) {
  bool avx512 = lf::cpu::target_id().find("+avx512f") != std::string::npos;
  bool x86 = lf::cpu::target_id().find("x86_64") != std::string::npos;
  if (!x86) GTEST_SKIP() << "checks x86 vector code; target " << lf::cpu::target_id();
  Tensor a = lf::rand({64, 64}).to(lf::Device::cpu());  // a CPU kernel, whatever the default device
  a.to_vector<float>();
  Tensor y = jacobi(a);
  std::vector<lf::ir::Node*> roots{y.node().get()};
  auto order = lf::ir::topo_order(roots);
  lf::fuse::insert_reshape_copies(order);
  order = lf::ir::topo_order(roots);
  auto p = lf::fuse::partition(order, [&](const lf::ir::Node& n) { return &n == roots[0]; }, true);
  ASSERT_EQ(p.groups.size(), 1u);
  auto low = lf::lower::lower_group(p.groups[0], p, 0, lf::Device::cpu());
  auto inspection = lf::cpu::inspect(low.kernel, "k_jacobi");
  ASSERT_TRUE(inspection.ok()) << inspection.status();
  const std::string& ir = inspection->optimized_ir;
  const std::string vec = avx512 ? "load <16 x float>" : "load <8 x float>";
  EXPECT_NE(ir.find(vec), std::string::npos) << "no " << vec << " in\n" << ir;
  // With streaming stores (large outputs), the interior starts on a 64-byte boundary: its vector
  // stores are known aligned, so they become streaming stores.
  auto streaming = lf::cpu::inspect(low.kernel, "k_jacobi_nt", lf::cpu::EmitOptions{.stream_stores = true});
  ASSERT_TRUE(streaming.ok()) << streaming.status();
  EXPECT_NE(streaming->optimized_ir.find(vec), std::string::npos) << streaming->optimized_ir;
  EXPECT_NE(streaming->optimized_ir.find("!nontemporal"), std::string::npos) << streaming->optimized_ir;
}

}  // namespace
