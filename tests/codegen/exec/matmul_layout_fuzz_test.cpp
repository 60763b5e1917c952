// A fuzz of batched matmul operand layouts (issue 21): each operand is a random view of a buffer
// whose dims are stored in a random order, sliced with steps and offsets, with batch dims broadcast
// by expand or by numpy's rules (fewer batch dims, size-1 dims), in every float dtype and int32 and
// int64, fused and unfused, with an epilogue or none. Every product is checked against the reference executor; on
// the GPU machine (default device CUDA) the same cases go through cuBLASLt and the generated kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"

namespace {

using lf::DType;
using lf::Shape;
using lf::Tensor;

// One operand: a view with logical shape `shape` over a buffer with its dims permuted, some dims
// sliced with a step, and some batch dims stored as size 1 and expanded. `batch` is how many leading
// dims are batch dims (only those may be broadcast).
Tensor random_layout(lf::test::Rng& rng, const Shape& shape, size_t batch, DType dtype, std::ostream& what) {
  const size_t r = shape.size();
  std::vector<int64_t> step(r, 1), start(r, 0);
  std::vector<bool> broadcast(r, false);
  Shape stored = shape;
  for (size_t d = 0; d < r; ++d) {
    if (d < batch && shape[d] > 1 && rng.chance(0.25)) {
      broadcast[d] = true;  // one stored row, read shape[d] times
      stored[d] = 1;
    } else if (rng.chance(0.3)) {
      step[d] = rng.range(2, 3);
      start[d] = rng.range(0, 2);
      stored[d] = start[d] + (shape[d] == 0 ? 0 : (shape[d] - 1) * step[d] + 1) + rng.range(0, 1);
    }
  }
  // The buffer holds the dims in the order `perm` (buffer dim i is logical dim perm[i]).
  std::vector<int64_t> perm(r);
  std::iota(perm.begin(), perm.end(), 0);
  if (rng.chance(0.7))
    for (size_t i = r; i > 1; --i) std::swap(perm[i - 1], perm[static_cast<size_t>(rng.range(0, static_cast<int64_t>(i) - 1))]);
  Shape buffer_shape(r);
  for (size_t i = 0; i < r; ++i) buffer_shape[i] = stored[static_cast<size_t>(perm[i])];
  std::vector<double> v(static_cast<size_t>(lf::shape_numel(buffer_shape)));
  const bool integer = !lf::is_floating(dtype);  // small integers, exact sums
  for (double& x : v)
    x = integer ? static_cast<double>(rng.range(-9, 9))
                : rng.chance(0.005) ? (rng.chance(0.5) ? NAN : INFINITY) : rng.uniform(-1, 1);
  Tensor t = lf::from_vector(v, buffer_shape).to(dtype);
  lf::sync();  // a buffer, as a user's weights and activations are
  std::vector<int64_t> inverse(r);
  for (size_t i = 0; i < r; ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  t = lf::permute(t, inverse);
  for (size_t d = 0; d < r; ++d)
    if (!broadcast[d] && (step[d] != 1 || stored[d] != shape[d]))
      t = lf::slice(t, static_cast<int64_t>(d), start[d], start[d] + (shape[d] - 1) * step[d] + 1, step[d]);
  if (std::find(broadcast.begin(), broadcast.end(), true) != broadcast.end()) t = lf::expand(t, shape);
  what << lf::shape_str(shape) << " stored " << lf::shape_str(buffer_shape) << " perm [";
  for (size_t i = 0; i < r; ++i) what << (i ? "," : "") << perm[i];
  what << "] steps [";
  for (size_t i = 0; i < r; ++i) what << (i ? "," : "") << (broadcast[i] ? 0 : step[i]);
  what << "]";
  return t;
}

double tolerance_atol(DType d, int64_t k) {
  double acc_eps = d == DType::Float64 ? 2.3e-16 : 1.2e-7;
  return 16.0 * acc_eps * static_cast<double>(std::max<int64_t>(k, 1));
}

void run_case(uint64_t seed, bool fused) {
  lf::test::Rng rng(seed);
  // Integers too: cuBLASLt has none, so on a GPU the generated kernel takes them, the product kept
  // as it is or with an epilogue.
  static const std::vector<DType> kTypes = {DType::Float32, DType::Float32, DType::Float64, DType::Float16,
                                             DType::BFloat16, DType::Int32, DType::Int64};
  DType dtype = rng.pick(kTypes);
  // Batch dims of the result; each operand keeps a suffix of them (numpy's broadcasting), and a
  // kept dim may be 1 in one operand.
  size_t nb = static_cast<size_t>(rng.range(0, 3));
  Shape batch(nb);
  for (int64_t& b : batch) b = rng.chance(0.1) ? 1 : rng.range(2, 4);
  int64_t m = rng.chance(0.1) ? 1 : rng.range(1, 40), n = rng.chance(0.1) ? 1 : rng.range(1, 40);
  int64_t k = rng.chance(0.05) ? 0 : rng.range(1, 70);
  if (rng.chance(0.05)) m = 0;
  auto operand_batch = [&]() {
    size_t keep = static_cast<size_t>(rng.range(0, static_cast<int64_t>(nb)));
    Shape s(batch.end() - static_cast<std::ptrdiff_t>(keep), batch.end());
    for (int64_t& b : s)
      if (rng.chance(0.15)) b = 1;  // numpy broadcasts a size-1 batch dim
    return s;
  };
  Shape sa = operand_batch(), sb = operand_batch();
  size_t ba = sa.size(), bb = sb.size();
  sa.push_back(m);
  sa.push_back(k);
  sb.push_back(k);
  sb.push_back(n);
  std::ostringstream what;
  what << "seed " << seed << (fused ? " fused " : " unfused ") << lf::dtype_name(dtype) << ": a ";
  lf::test::FusionScope scope(fused);
  Tensor a = random_layout(rng, sa, ba, dtype, what);
  what << ", b ";
  Tensor b = random_layout(rng, sb, bb, dtype, what);
  Tensor y = lf::matmul(a, b);
  int epilogue = static_cast<int>(rng.range(0, 3));
  if (epilogue == 1) y = lf::relu(y + lf::cast(lf::rand({n}), dtype));
  if (epilogue == 2) y = y * 0.5 + 1.0;
  what << ", epilogue " << epilogue;
  lf::test::Values ref = lf::test::reference_values(y);
  lf::test::Values got = lf::test::fused_values(y);
  lf::test::Tolerance tol = lf::test::default_tolerance(dtype);
  tol.atol += tolerance_atol(dtype, k);
  if (dtype == DType::Float16 || dtype == DType::BFloat16) tol.atol += lf::test::dtype_eps(dtype) * 4;
  std::string diff = lf::test::compare(ref, got, tol);
  EXPECT_TRUE(diff.empty()) << what.str() << "\n" << diff;
}

TEST(MatmulLayoutFuzz, RandomBatchedOperandLayoutsMatchTheReference) {
  for (uint64_t seed = 1; seed <= 120; ++seed) run_case(seed, /*fused=*/true);
}

TEST(MatmulLayoutFuzz, RandomBatchedOperandLayoutsUnfused) {
  for (uint64_t seed = 1001; seed <= 1040; ++seed) run_case(seed, /*fused=*/false);
}

}  // namespace
