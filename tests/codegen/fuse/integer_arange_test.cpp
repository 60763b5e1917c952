// Integer aranges in integer arithmetic (issue 50 item 3): arange(2^53, 2^53 + 4, 1, Int64) is
// 2^53 .. 2^53 + 3 as PyTorch gives it, in the reference executor and the CPU kernels, fused and
// unfused; its count is exact; a value outside the dtype is an lf::Error; non-integral bounds of
// an integer arange keep their float64 meaning. (The CUDA emitter's form is in the golden
// snippets: tests/codegen/golden/int_arange_exact.cu.)
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "codegen/test_util.h"
#include "frontend/test_util.h"
#include "lazyfuse/lazyfuse.h"

namespace {

using lf::DType;
using lf::Tensor;

constexpr int64_t k53 = int64_t{1} << 53;

// The values of `make()` from the reference executor, and fused and unfused, all equal to `want`.
void expect_values(const std::function<Tensor()>& make, const std::vector<int64_t>& want) {
  {
    Tensor t = make();
    EXPECT_EQ(lf::test::reference_values(t).i, want) << "reference";
  }
  for (bool fusion : {true, false}) {
    lf::test::FusionScope scope(fusion);
    EXPECT_EQ(make().to_vector<int64_t>(), want) << "fusion " << fusion;
  }
}

class IntegerArange : public lf::test::OnCpu {};

TEST_F(IntegerArange, ExactPast2To53) {
  const double s = 0x1p53;
  expect_values([&] { return lf::arange(s, s + 4, 1, DType::Int64); }, {k53, k53 + 1, k53 + 2, k53 + 3});
  // Fused with index math and a consumer: the arange is generated inside the kernel.
  expect_values([&] { return lf::arange(s, s + 4, 1, DType::Int64) * 1 + 1; }, {k53 + 1, k53 + 2, k53 + 3, k53 + 4});
  expect_values([&] { return lf::arange(-s, -s - 6, -3, DType::Int64); }, {-k53, -k53 - 3});
  // A step past 2^53, and values next to INT64_MAX.
  expect_values([&] { return lf::arange(1, 0x1p62, 0x1p60, DType::Int64); },
                {1, (int64_t{1} << 60) + 1, (int64_t{2} << 60) + 1, (int64_t{3} << 60) + 1});
  const double top = 0x1p63 - 1024;  // the largest double below 2^63
  expect_values([&] { return lf::arange(top, 0x1p63, 512, DType::Int64); }, {INT64_MAX - 1023, INT64_MAX - 511});
  // A strided view of one: index math over the generated values.
  expect_values([&] { return lf::slice(lf::arange(s, s + 10, 1, DType::Int64), 0, 1, 10, 4); },
                {k53 + 1, k53 + 5, k53 + 9});
}

TEST_F(IntegerArange, Int32AndCounts) {
  expect_values([] { return lf::cast(lf::arange(2147483640, 2147483647, 3, DType::Int32), DType::Int64); },
                {2147483640, 2147483643, 2147483646});
  // The count of integral bounds is exact: (2^58 - 1) / 3, which float64 division rounds to
  // 96076792050570576; and the last value is start + (n - 1) * step.
  Tensor t = lf::arange(1, 0x1p58, 3, DType::Int64);
  EXPECT_EQ(t.numel(), int64_t{96076792050570581});
  // (Its last two, read through a slice of the pending range: only they are computed.)
  EXPECT_EQ(lf::slice(lf::arange(1, 0x1p58, 3, DType::Int64), 0, 96076792050570579, 96076792050570581).to_vector<int64_t>(),
            (std::vector<int64_t>{(int64_t{1} << 58) - 6, (int64_t{1} << 58) - 3}));
  EXPECT_EQ(lf::arange(0, 10, 3, DType::Int64).numel(), 4);
  EXPECT_EQ(lf::arange(10, 0, -3, DType::Int64).numel(), 4);
  EXPECT_EQ(lf::arange(0, 10.5, 3, DType::Int64).numel(), 4);
}

TEST_F(IntegerArange, ValuesOutsideTheDtypeAreErrors) {
  lf::test::expect_error([] { (void)lf::arange(2147483640, 2147483650, 1, DType::Int32); },
                         {"lf::arange", "int32", "2147483649"});
  lf::test::expect_error([] { (void)lf::arange(0x1p63 - 1024, 0x1p63 + 2048, 2048, DType::Int64); }, {"lf::arange", "int64"});
  lf::test::expect_error([] { (void)lf::arange(-2147483649.0, 0, 1, DType::Int32); }, {"lf::arange", "int32"});
  EXPECT_EQ(lf::arange(2147483640, 2147483650, 1, DType::Int64).numel(), 10);  // fits int64
}

TEST_F(IntegerArange, NonIntegralBoundsKeepTheirFloatMeaning) {
  // trunc(start + i * step), as before: only integral bounds take the integer path.
  expect_values([] { return lf::arange(0.5, 4, 1, DType::Int64); }, {0, 1, 2, 3});
  expect_values([] { return lf::arange(0, 3, 0.75, DType::Int64); }, {0, 0, 1, 2});
  expect_values([] { return lf::cast(lf::arange(-1.5, 1, 1, DType::Int32), DType::Int64); }, {-1, 0, 0});
}

}  // namespace
