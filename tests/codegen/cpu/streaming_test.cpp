// Streaming (non-temporal) stores on the CPU (cpu::EmitOptions::stream_stores, codegen/cpu/llvm/emit.cpp's
// emit_streaming_columns): which launches take them, and that the split of each row's columns into
// a scalar head, an aligned middle of streaming stores and a scalar tail computes every element
// exactly once, whatever the column range, row alignment, output count and element size.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "codegen/cpu/backend.h"
#include "codegen/fuse/fuser.h"
#include "codegen/fuse/lower.h"
#include "codegen/test_util.h"

namespace {

using lf::DType;
using lf::Tensor;
namespace test = lf::test;

class Streaming : public ::testing::Test {
 protected:
  void SetUp() override { lf::set_default_device(lf::Device::cpu()); }
  void TearDown() override { lf::set_default_device(saved_); }

 private:
  lf::Device saved_ = lf::default_device();
};

// The one fusion group computing `outs` (their inputs realized), lowered as the executor would.
lf::lower::Lowered lowered(const std::vector<Tensor>& outs) {
  std::vector<lf::ir::Node*> roots;
  for (const Tensor& t : outs) roots.push_back(t.node().get());
  auto order = lf::ir::topo_order(roots);
  auto wanted = [&](const lf::ir::Node& n) {
    for (lf::ir::Node* r : roots)
      if (&n == r) return true;
    return false;
  };
  auto p = lf::fuse::partition(order, wanted, true);
  EXPECT_EQ(p.groups.size(), 1u);
  return lf::lower::lower_group(p.groups[0], p, 0, lf::Device::cpu());
}

constexpr lf::cpu::EmitOptions kStreaming{.stream_stores = true};

std::shared_ptr<lf::cpu::CompiledKernel> compiled(const lf::kir::Kernel& kernel, const std::string& name) {
  auto k = lf::cpu::compile(kernel, name, kStreaming);
  EXPECT_TRUE(k.ok()) << k.status();
  return k.ok() ? *k : nullptr;
}

// Output k of a lowered group as test values (the storage is contiguous).
test::Values output_values(const lf::lower::Lowered& low, size_t k) {
  const lf::ir::Node* n = low.outputs[k];
  lf::ir::Value v{low.out_storage[k], n->dtype, n->shape, lf::ir::Layout{lf::ir::contiguous_strides(n->shape), 0}};
  lf::ir::Value c = lf::ir::to_contiguous(v, test::compares_as_int(n->dtype) ? DType::Int64 : DType::Float64);
  test::Values out;
  out.dtype = n->dtype;
  out.shape = n->shape;
  size_t count = static_cast<size_t>(n->numel());
  if (test::compares_as_int(n->dtype)) {
    out.i.assign(static_cast<const int64_t*>(c.storage->data()), static_cast<const int64_t*>(c.storage->data()) + count);
  } else {
    out.f.assign(static_cast<const double*>(c.storage->data()), static_cast<const double*>(c.storage->data()) + count);
  }
  return out;
}

// Runs the streaming variant of the group computing `outs` one row at a time, each row's columns
// in the pieces that `cuts` gives (column indices, clamped to the row), and compares every output
// with the reference executor.
void check_pieces(const std::vector<Tensor>& outs, const std::vector<int64_t>& cuts, const std::string& what) {
  std::vector<test::Values> want;
  for (const Tensor& t : outs) want.push_back(test::reference_values(t));
  lf::lower::Lowered low = lowered(outs);
  ASSERT_EQ(low.kernel.inner_rank, 1) << what;
  auto k = compiled(low.kernel, "stream_" + what);
  ASSERT_TRUE(k) << what;
  std::vector<int64_t> meta = lf::kir::pack_meta(low.kernel, low.args);
  int64_t rows = low.args.rows(), cols = low.args.sizes.back();
  for (int64_t r = 0; r < rows; ++r) {
    int64_t from = 0;
    for (int64_t cut : cuts) {
      int64_t to = std::min(cut, cols);
      if (to > from) k->fn(meta.data(), low.args.pointers.data(), r, r + 1, from, to);
      from = std::max(from, to);
    }
    if (from < cols) k->fn(meta.data(), low.args.pointers.data(), r, r + 1, from, cols);
  }
  for (size_t o = 0; o < outs.size(); ++o) {
    std::string diff = test::compare(want[o], output_values(low, o), test::default_tolerance(outs[o].dtype()));
    EXPECT_TRUE(diff.empty()) << what << " output " << o << " (" << rows << " rows of " << cols << "):\n" << diff;
  }
}

// Random floats with a few NaNs and infinities.
Tensor random_floats(lf::Shape shape, uint64_t seed) {
  test::Rng rng(seed);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) {
    f = static_cast<float>(rng.uniform(-4, 4));
    if (rng.chance(0.01)) f = rng.pick(std::vector<float>{NAN, INFINITY, -INFINITY, 0.0f, -0.0f});
  }
  Tensor t = lf::from_vector(v, shape);
  lf::sync();
  return t;
}

// Rows of 1003 floats: every row but the first starts off a 64-byte boundary, each by another
// amount; pieces cover ranges shorter than a block, ending inside one, and whole rows.
TEST_F(Streaming, EveryColumnRangeOfMisalignedRows) {
  Tensor x = random_floats({5, 1003}, 1), b = random_floats({1003}, 2);
  Tensor y = lf::relu(x * 2 + b) * lf::sigmoid(x) - lf::tanh(x) / 3;
  ASSERT_EQ(lowered({y}).args.rows(), 5) << "the broadcast keeps two dims";
  check_pieces({y}, {}, "whole_rows");
  check_pieces({y}, {1, 2, 3, 17, 31, 33, 500, 1000, 1002}, "short_pieces");
  check_pieces({y}, {15, 16, 48, 64, 999}, "block_edges");
  check_pieces({y}, {0, 0, 5}, "empty_pieces");
}

TEST_F(Streaming, SeveralOutputsAndElementSizes) {
  Tensor x = random_floats({3, 777}, 3), b = random_floats({777}, 4);
  check_pieces({x + b, x * b}, {5, 100, 700}, "two_outputs");
  Tensor xd = x.to(DType::Float64), bd = b.to(DType::Float64);
  lf::sync();
  check_pieces({xd * 3 + bd}, {3, 64, 65, 400}, "float64");
  check_pieces({(x * 2 + b).to(DType::Float16)}, {9, 300}, "float16");
  check_pieces({(x + b).to(DType::BFloat16)}, {33, 700}, "bfloat16");
  check_pieces({x > b}, {1, 63, 64, 65, 129}, "bool");
  check_pieces({(x * 100 + b).to(DType::Int32)}, {7, 200}, "int32");
  check_pieces({(x * 100 + b).to(DType::Int64)}, {7, 200}, "int64");
}

// A row kernel's output pass streams too (layer_norm: reductions first, then the output pass).
TEST_F(Streaming, RowKernelOutputPass) {
  Tensor x = random_floats({4, 1001}, 5), r = random_floats({4, 1001}, 6);
  Tensor y = lf::layer_norm(x + r, 1);
  test::Values want = test::reference_values(y);
  lf::lower::Lowered low = lowered({y});
  ASSERT_TRUE(low.kernel.row);
  auto k = compiled(low.kernel, "stream_layer_norm");
  ASSERT_TRUE(k);
  lf::cpu::launch(*k, low.kernel, low.args, kStreaming);
  std::string diff = test::compare(want, output_values(low, 0), test::default_tolerance(DType::Float32, 1001));
  EXPECT_TRUE(diff.empty()) << diff;
}

// The middle loop is vector code with streaming stores (x86: movnt*), the head and tail scalar.
TEST_F(Streaming, MiddleLoopUsesStreamingVectorStores) {
  if (lf::cpu::target_id().find("+avx") == std::string::npos) GTEST_SKIP() << "checks x86 AVX code: " << lf::cpu::target_id();
  Tensor x = random_floats({4096}, 7);
  lf::lower::Lowered low = lowered({lf::sigmoid(x) * 2});
  auto inspection = lf::cpu::inspect(low.kernel, "k_stream", kStreaming);
  ASSERT_TRUE(inspection.ok()) << inspection.status();
  EXPECT_NE(inspection->optimized_ir.find("!nontemporal"), std::string::npos) << inspection->optimized_ir;
  EXPECT_NE(inspection->assembly.find("vmovntps"), std::string::npos) << inspection->assembly;
  EXPECT_NE(inspection->assembly.find("sfence"), std::string::npos) << "streaming stores are fenced before returning";
  auto plain = lf::cpu::inspect(low.kernel, "k_plain");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->assembly.find("movnt"), std::string::npos) << "no streaming stores unless asked";
}

TEST_F(Streaming, ChosenForLargeOutputsOnly) {
  Tensor x = random_floats({4096}, 8);
  lf::lower::Lowered low = lowered({x * 2});
  ASSERT_EQ(low.kernel.inner_rank, 1);
  const int64_t floats = lf::cpu::kStreamMinBytes / 4;
#if defined(__x86_64__)
  low.args.sizes.back() = floats;
  EXPECT_TRUE(lf::cpu::wants_streaming_stores(low.kernel, low.args));
  low.args.sizes.back() = floats - 1;
  EXPECT_FALSE(lf::cpu::wants_streaming_stores(low.kernel, low.args)) << "below kStreamMinBytes";
  // A transcendental per element makes the kernel arithmetic-bound: no streaming.
  lf::lower::Lowered sig = lowered({lf::sigmoid(x) * 2});
  sig.args.sizes.back() = floats;
  EXPECT_FALSE(lf::cpu::wants_streaming_stores(sig.kernel, sig.args));
  // Row values may be anything: standardization divides by a row's std (a sqrt per row).
  Tensor rows = random_floats({64, 4096}, 13);
  lf::lower::Lowered stand = lowered({(rows - lf::mean(rows, {1}, true)) / (lf::std(rows, {1}, true) + 1e-5f)});
  stand.args.sizes.front() = floats / 4096;
  EXPECT_TRUE(lf::cpu::wants_streaming_stores(stand.kernel, stand.args));
#endif
  // Two outputs whose addresses disagree modulo 64 cannot share one alignment split.
  lf::lower::Lowered two = lowered({x + 1, x * 3});
  two.args.sizes.back() = floats;
  size_t out1 = static_cast<size_t>(two.kernel.outputs[1].slot);
  two.args.offsets[out1] = 1;
  EXPECT_FALSE(lf::cpu::wants_streaming_stores(two.kernel, two.args));
  // Softmax keeps e^(x - max) in its output between passes: the reduction pass reads it back.
  Tensor m = random_floats({64, 4096}, 9);
  lf::lower::Lowered soft = lowered({lf::softmax(m, 1)});
  soft.args.sizes.front() = floats / 4096;
  EXPECT_FALSE(lf::cpu::wants_streaming_stores(soft.kernel, soft.args));
}

TEST_F(Streaming, LaunchRefusesOutputsOfDifferentAlignment) {
  Tensor x = random_floats({1000}, 10);
  lf::lower::Lowered low = lowered({x + 1, x * 3});
  auto k = compiled(low.kernel, "stream_two");
  ASSERT_TRUE(k);
  size_t out1 = static_cast<size_t>(low.kernel.outputs[1].slot);
  low.args.offsets[out1] = 1;  // within the buffer: it is one element longer than needed below
  low.args.sizes.back() = 999;
  EXPECT_THROW(lf::cpu::launch(*k, low.kernel, low.args, kStreaming), lf::Error);
}

// Through the public API: outputs past kStreamMinBytes, values against the reference executor.
TEST_F(Streaming, LargeResultsMatchTheReference) {
  const int64_t n = lf::cpu::kStreamMinBytes / 4 + 1000;
  Tensor x = random_floats({n}, 11);
  test::expect_matches_reference(lf::relu(x * 2 + 1) - x / 3, 1, "pointwise");
  Tensor m = random_floats({1024, n / 1024}, 12);
  test::expect_matches_reference(m - lf::mean(m, {1}, true), n / 1024, "row kernel");
}

}  // namespace
