// Which matmul epilogues cuBLASLt computes itself (codegen/cuda/gemm.cpp): the matching runs on
// any machine; the GPU numerics are covered by matmul_test.cpp on the device, where the default
// device is CUDA.
#include <gtest/gtest.h>

#include "codegen/cuda/gemm.h"
#include "codegen/fuse/fuser.h"
#include "lazyfuse/lazyfuse.h"

namespace {

using lf::Tensor;
using lf::cuda::LtEpilogue;

// Takes the tensor by value: built in the call's argument, the temporaries of that expression
// (the product among them) are still held by the user while the call runs, so they would be
// outputs; a builder lambda lets them die first.
template <class F>
lf::cuda::LtMatch match(F build) {
  Tensor root = build();
  auto order = lf::ir::topo_order({root.node().get()});
  auto p = lf::fuse::partition(order, [](const lf::ir::Node& n) { return n.user_refs.load() > 0; }, true);
  for (const auto& g : p.groups)
    if (g.kind == lf::fuse::Group::Kind::Matmul) return lf::cuda::match_lt_epilogue(g);
  ADD_FAILURE() << "no matmul group";
  return {};
}

Tensor buffer(lf::Shape s, lf::DType d = lf::DType::Float32) {
  Tensor t = lf::zeros(std::move(s), d);
  lf::sync();
  return t;
}

TEST(CudaGemm, BiasIsACuBlasLtEpilogueReluIsNot) {
  Tensor x = buffer({8, 16}), w = buffer({16, 4}), b = buffer({4});
  auto m = match([&] { return lf::matmul(x, w) + b; });
  EXPECT_TRUE(m.whole);
  EXPECT_EQ(m.epilogue, LtEpilogue::kBias);
  EXPECT_NE(m.bias, nullptr);
  EXPECT_EQ(match([&] { return b + lf::matmul(x, w); }).epilogue, LtEpilogue::kBias);
  // cuBLASLt's RELU epilogue turns NaN into 0: relu runs in the epilogue kernel.
  EXPECT_FALSE(match([&] { return lf::relu(lf::matmul(x, w) + b); }).whole);
  EXPECT_FALSE(match([&] { return lf::relu(lf::matmul(x, w)); }).whole);
  auto plain = match([&] { return lf::matmul(x, w); });
  EXPECT_TRUE(plain.whole);
  EXPECT_EQ(plain.epilogue, LtEpilogue::kNone);
}

TEST(CudaGemm, AResidualIsCuBlasLtsC) {
  Tensor x = buffer({8, 16}), w = buffer({16, 4}), b = buffer({4}), r = buffer({8, 4});
  auto both = match([&] { return r + (lf::matmul(x, w) + b); });  // a transformer's x + linear(h)
  EXPECT_TRUE(both.whole);
  EXPECT_EQ(both.epilogue, LtEpilogue::kBias);
  EXPECT_NE(both.residual, nullptr);
  auto alone = match([&] { return lf::matmul(x, w) + r; });
  EXPECT_TRUE(alone.whole);
  EXPECT_EQ(alone.epilogue, LtEpilogue::kNone);
  EXPECT_NE(alone.residual, nullptr);
  Tensor r64 = buffer({8, 4}, lf::DType::Float64);
  EXPECT_FALSE(match([&] { return lf::matmul(x, w) + r64; }).whole);  // promotes: not the same dtype
}

TEST(CudaGemm, OtherEpiloguesAreLeftToTheEpilogueKernel) {
  Tensor x = buffer({8, 16}), w = buffer({16, 4}), b = buffer({4}), col = buffer({8, 1}), r = buffer({8, 4});
  EXPECT_FALSE(match([&] { return lf::gelu(lf::matmul(x, w) + b); }).whole);
  EXPECT_FALSE(match([&] { return lf::relu(lf::matmul(x, w) + b) + r; }).whole);
  EXPECT_FALSE(match([&] { return lf::matmul(x, w) + col; }).whole);  // broadcast along columns, not rows
  EXPECT_FALSE(match([&] { return lf::matmul(x, w) + lf::transpose(lf::transpose(r, 0, 1).contiguous(), 0, 1); }).whole);  // a strided residual
  Tensor b64 = buffer({4}, lf::DType::Float64);
  EXPECT_FALSE(match([&] { return lf::matmul(x, w) + b64; }).whole);  // promotes: not the same dtype
  // The product is kept as well: cuBLASLt would write only the epilogue's result.
  Tensor mm = lf::matmul(x, w);
  Tensor y = lf::relu(mm + b);
  EXPECT_FALSE(match([&] { return y; }).whole);
}

}  // namespace
