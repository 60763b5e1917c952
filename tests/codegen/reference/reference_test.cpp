// The reference executor on hand-built nodes, without the frontend: strided input buffers (as a
// materialized view leaves them), views, reductions, cat, matmul and generators.
#include "codegen/reference/reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "codegen/ir/random.h"

namespace {

using lf::DType;
using lf::Shape;
using lf::ir::Attrs;
using lf::ir::Layout;
using lf::ir::NodePtr;
using lf::ir::Op;

// A buffer node over a copy of `data`, viewed with `shape` and `layout`.
template <typename T>
NodePtr buffer(const std::vector<T>& data, DType dtype, Shape shape, Layout layout) {
  auto storage = lf::rt::Storage::allocate(lf::Device::cpu(), data.size() * sizeof(T));
  std::memcpy(storage->data(), data.data(), data.size() * sizeof(T));
  return lf::ir::make_buffer(std::move(storage), dtype, std::move(shape), std::move(layout));
}
NodePtr dense(const std::vector<float>& data, Shape shape) {
  Layout l{lf::ir::contiguous_strides(shape), 0};
  return buffer(data, DType::Float32, std::move(shape), l);
}
NodePtr node(Op op, DType dtype, Shape shape, lf::ir::Inputs inputs, Attrs attrs = {}) {
  return lf::ir::make_node(op, dtype, lf::Device::cpu(), std::move(shape), std::move(inputs), std::move(attrs));
}

template <typename T>
std::vector<T> values(const NodePtr& n) {
  lf::ir::Value v = lf::ir::to_contiguous(lf::ir::reference_eval(n.get()), n->dtype);
  std::vector<T> out(static_cast<size_t>(n->numel()));
  if (!out.empty()) std::memcpy(out.data(), v.storage->data(), out.size() * sizeof(T));
  return out;
}

using F = std::vector<float>;

// Storage 0..11 seen as the [3, 2] transpose of a [2, 3] block starting at offset 6 of a [4, 3] array:
// element [i, j] is at 6 + 3 j + i.
NodePtr strided() {
  F storage(12);
  for (int i = 0; i < 12; ++i) storage[i] = static_cast<float>(i);
  return buffer(storage, DType::Float32, {3, 2}, Layout{{1, 3}, 6});
}

TEST(Reference, StridedBufferReadsInLogicalOrder) {
  EXPECT_EQ(values<float>(node(Op::Copy, DType::Float32, {3, 2}, {strided()})), (F{6, 9, 7, 10, 8, 11}));
  EXPECT_EQ(values<float>(strided()), (F{6, 9, 7, 10, 8, 11}));
}

TEST(Reference, Views) {
  Attrs perm;
  perm.dims = {1, 0};
  EXPECT_EQ(values<float>(node(Op::Permute, DType::Float32, {2, 3}, {strided()}, perm)), (F{6, 7, 8, 9, 10, 11}));
  Attrs sl;
  sl.axis = 0;
  sl.start = 1;
  sl.step = 2;
  EXPECT_EQ(values<float>(node(Op::Slice, DType::Float32, {1, 2}, {strided()}, sl)), (F{7, 10}));
  // An empty slice starting past the end reads nothing.
  sl.start = 3;
  EXPECT_TRUE(values<float>(node(Op::Slice, DType::Float32, {0, 2}, {strided()}, sl)).empty());
  // Reshape of a non-contiguous input copies in logical order.
  EXPECT_EQ(values<float>(node(Op::Reshape, DType::Float32, {6}, {strided()})), (F{6, 9, 7, 10, 8, 11}));
  NodePtr col = dense({1, 2}, {2, 1});
  EXPECT_EQ(values<float>(node(Op::Expand, DType::Float32, {2, 3}, {col})), (F{1, 1, 1, 2, 2, 2}));
}

// neg flips the sign bit, as PyTorch's: neg(0.0) is -0.0, so rsqrt of it is -inf (the fuzzer
// once found the oracle computing 0 - x there).
TEST(Reference, NegOfZeroIsNegativeZero) {
  NodePtr z = node(Op::Neg, DType::Float32, {2}, {dense({0.0f, -0.0f}, {2})});
  F n = values<float>(z);
  EXPECT_TRUE(n[0] == 0 && std::signbit(n[0]));
  EXPECT_TRUE(n[1] == 0 && !std::signbit(n[1]));
  F r = values<float>(node(Op::Rsqrt, DType::Float32, {2}, {z}));
  EXPECT_EQ(r[0], -INFINITY);
  EXPECT_EQ(r[1], INFINITY);
}

TEST(Reference, Reductions) {
  Attrs a;
  a.dims = {0};
  EXPECT_EQ(values<double>(node(Op::Sum, DType::Float64, {2}, {node(Op::Cast, DType::Float64, {3, 2}, {strided()})}, a)),
            (std::vector<double>{21, 30}));
  a.dims = {1};
  a.keepdim = true;
  EXPECT_EQ(values<float>(node(Op::Max, DType::Float32, {3, 1}, {strided()}, a)), (F{9, 10, 11}));
  EXPECT_EQ(values<float>(node(Op::Prod, DType::Float32, {3, 1}, {strided()}, a)), (F{54, 70, 88}));
  a.dims = {0, 1};
  a.keepdim = false;
  EXPECT_EQ(values<float>(node(Op::Min, DType::Float32, {}, {strided()}, a)), (F{6}));
  EXPECT_EQ(values<int64_t>(node(Op::ArgMax, DType::Int64, {}, {dense({3, 9, 9, NAN, 1}, {5})}, Attrs{{0}})),
            (std::vector<int64_t>{3}));
  // Float32 sums accumulate in double: 2^24 + 1 + 1 would stick at 2^24 in float.
  EXPECT_EQ(values<float>(node(Op::Sum, DType::Float32, {}, {dense({16777216, 1, 1}, {3})}, Attrs{{0}})),
            (F{16777218}));
}

TEST(Reference, CatAndMatmul) {
  Attrs a;
  a.axis = 1;
  NodePtr c = node(Op::Cat, DType::Float32, {3, 3}, {strided(), dense({0, 1, 2}, {3, 1})}, a);
  EXPECT_EQ(values<float>(c), (F{6, 9, 0, 7, 10, 1, 8, 11, 2}));
  // [2, 3] @ [3, 2] with a strided right operand.
  NodePtr m = node(Op::Matmul, DType::Float32, {2, 2}, {dense({1, 0, 1, 0, 1, 0}, {2, 3}), strided()});
  EXPECT_EQ(values<float>(m), (F{6 + 8, 9 + 11, 7, 10}));
}

TEST(Reference, Generators) {
  Attrs ar;
  ar.value = 1;
  ar.value2 = -0.5;
  EXPECT_EQ(values<float>(node(Op::Arange, DType::Float32, {4}, {}, ar)), (F{1, 0.5, 0, -0.5}));
  Attrs full;
  full.value = 2.5;
  full.ivalue = 2;
  EXPECT_EQ(values<float>(node(Op::Full, DType::Float32, {2}, {}, full)), (F{2.5, 2.5}));
  EXPECT_EQ(values<int32_t>(node(Op::Full, DType::Int32, {2}, {}, full)), (std::vector<int32_t>{2, 2}));
  // rand element i is uniform(hash(seed, counter + i)) with 24 bits.
  Attrs r;
  r.seed = 11;
  r.counter = 5;
  std::vector<float> got = values<float>(node(Op::Rand, DType::Float32, {3}, {}, r));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(got[i], static_cast<float>(lf::rng::uniform(lf::rng::hash(11, 5 + i), 24)));
}

}  // namespace
