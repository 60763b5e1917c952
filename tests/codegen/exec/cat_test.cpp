// cat (codegen/exec/executor.cpp, run_cat): each input copied by a generated kernel into its slab of
// the output, read through its views; against the reference executor, with launch counts.
#include <gtest/gtest.h>

#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"

namespace {

using lf::DType;
using lf::Tensor;
using lf::test::StatsDelta;

Tensor data(lf::Shape shape, float start, DType d = DType::Float32) {
  std::vector<float> v = lf::test::iota_floats(lf::shape_numel(shape), start, 0.25f);
  Tensor t = lf::from_vector(v, shape).to(d);
  lf::sync();
  return t;
}

TEST(Cat, ViewsAndAxesMatchTheReference) {
  Tensor a = data({6, 5}, -3), b = data({5, 6}, 2), c = data({6, 9}, 1);
  Tensor t = lf::cat({a, lf::transpose(b, 0, 1), lf::slice(c, 1, 1, 9, 2)}, 1);  // [6, 5 + 5 + 4]
  lf::test::expect_matches_reference(t, 1, "cat of a transposed and a strided slice");
  Tensor r = data({3, 4, 5}, 0);
  lf::test::expect_matches_reference(lf::cat({r, r * 2, lf::expand(data({1, 4, 5}, 9), {2, 4, 5})}, 0), 1, "axis 0");
  lf::test::expect_matches_reference(lf::cat({r, lf::slice(r, 1, 0, 1)}, 1), 1, "middle axis");
}

TEST(Cat, EachInputIsOneCopyKernelAndNothingRunsOnTheHost) {
  Tensor a = data({64, 32}, 0), b = data({16, 32}, 1), empty = data({0, 32}, 0);
  Tensor t = lf::cat({a, empty, b}, 0);
  StatsDelta d;
  std::vector<float> v = t.to_vector<float>();
  EXPECT_EQ(d.launched(), 2u);  // one copy per non-empty input
  ASSERT_EQ(v.size(), 80u * 32u);
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[64 * 32], 1.0f);
}

TEST(Cat, EveryDtypeAndComputedInputs) {
  for (DType d : {DType::Bool, DType::Int32, DType::Int64, DType::Float16, DType::BFloat16, DType::Float64}) {
    Tensor a = data({4, 3}, -1, d), b = data({2, 3}, 5, d);
    lf::test::expect_matches_reference(lf::cat({a, b, a}, 0), 1, "every dtype");
  }
  Tensor x = data({8, 8}, 0);
  lf::test::expect_matches_reference(lf::cat({lf::exp(x), lf::sum(x, {1}, true).expand({8, 3})}, 1) * 2, 1,
                                     "computed inputs, then fused consumers");
}

TEST(Cat, GeneratorInputsStillWork) {
  lf::test::expect_matches_reference(lf::cat({lf::ones({2, 3}), lf::arange(0.0, 6).reshape({2, 3})}, 0), 1,
                                     "generators (the reference executor computes this cat)");
}

}  // namespace
