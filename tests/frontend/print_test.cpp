// operator<< against what PyTorch 2.x prints for the same values (torch/_tensor_str.py: precision 4,
// threshold 1000, edgeitems 3, linewidth 80), with torch. spelled lf.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

namespace {

// The expected strings are PyTorch's for CPU tensors; on a machine with a GPU the default device
// would add ", device='cuda:0'", which CudaSuffix checks on its own.
class Print : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = lf::default_device();
    lf::set_default_device(lf::Device::cpu());
  }
  void TearDown() override { lf::set_default_device(saved_); }
  lf::Device saved_;
};

std::string str(const lf::Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

lf::Tensor f32(std::vector<float> v) {
  auto n = static_cast<int64_t>(v.size());
  return lf::from_vector(std::move(v), {n});
}

TEST_F(Print, FloatIntegralValues) {
  EXPECT_EQ(str(f32({1, 2, 3})), "tensor([1., 2., 3.])");
  EXPECT_EQ(str(f32({-1, 2})), "tensor([-1.,  2.])");
  EXPECT_EQ(str(f32({0, 0})), "tensor([0., 0.])");
  EXPECT_EQ(str(f32({100000000})), "tensor([100000000.])");  // 1e8 is not yet scientific
}

TEST_F(Print, FloatFractionalValues) {
  EXPECT_EQ(str(f32({1.5, 2.25})), "tensor([1.5000, 2.2500])");
  EXPECT_EQ(str(f32({0, 1.5})), "tensor([0.0000, 1.5000])");
  EXPECT_EQ(str(f32({0.12345f, -3})), "tensor([ 0.1235, -3.0000])");
  EXPECT_EQ(str(lf::from_vector(std::vector<double>{1.0 / 3, 2}, {2})),
            "tensor([0.3333, 2.0000], dtype=lf.float64)");
}

TEST_F(Print, Rank0) {
  EXPECT_EQ(str(lf::scalar(3.5)), "tensor(3.5000)");
  EXPECT_EQ(str(lf::scalar(2)), "tensor(2.)");
  EXPECT_EQ(str(lf::scalar(-0.5, lf::DType::Float64)), "tensor(-0.5000, dtype=lf.float64)");
  EXPECT_EQ(str(lf::scalar(7, lf::DType::Int64)), "tensor(7)");
  EXPECT_EQ(str(lf::scalar(7, lf::DType::Int32)), "tensor(7, dtype=lf.int32)");
  EXPECT_EQ(str(lf::scalar(1, lf::DType::Bool)), "tensor(True)");
  EXPECT_EQ(str(lf::scalar(NAN)), "tensor(nan)");
  EXPECT_EQ(str(lf::scalar(1e-5)), "tensor(1.0000e-05)");
}

TEST_F(Print, TwoDimensional) {
  lf::Tensor x = lf::from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(str(x), "tensor([[1., 2.],\n        [3., 4.]])");
  lf::Tensor y = lf::from_vector(std::vector<float>{1.5, -2.25, 10.125, 3}, {2, 2});
  EXPECT_EQ(str(y), "tensor([[ 1.5000, -2.2500],\n        [10.1250,  3.0000]])");
  // Printed in logical order, whatever the layout.
  EXPECT_EQ(str(lf::transpose(x, 0, 1)), "tensor([[1., 3.],\n        [2., 4.]])");
  EXPECT_EQ(str(lf::from_vector(std::vector<float>{5, 6}, {2, 1})), "tensor([[5.],\n        [6.]])");
}

TEST_F(Print, ThreeDimensional) {
  lf::Tensor x = lf::reshape(lf::arange(0.0, 8), {2, 2, 2});
  EXPECT_EQ(str(x),
            "tensor([[[0., 1.],\n"
            "         [2., 3.]],\n"
            "\n"
            "        [[4., 5.],\n"
            "         [6., 7.]]])");
}

TEST_F(Print, Bool) {
  lf::Tensor b = lf::from_vector(std::vector<bool>{true, false, true}, {3});
  EXPECT_EQ(str(b), "tensor([ True, False,  True])");
  EXPECT_EQ(str(lf::from_vector(std::vector<bool>{true, true}, {2})), "tensor([True, True])");
  EXPECT_EQ(str(f32({1, 2, 3}) > 1.5), "tensor([False,  True,  True])");
}

TEST_F(Print, Integers) {
  EXPECT_EQ(str(lf::from_vector(std::vector<int64_t>{1, -20, 300}, {3})), "tensor([  1, -20, 300])");
  EXPECT_EQ(str(lf::from_vector(std::vector<int32_t>{1, 2, 3}, {3})), "tensor([1, 2, 3], dtype=lf.int32)");
  EXPECT_EQ(str(lf::from_vector(std::vector<int32_t>{1, 22, 3, 4}, {2, 2})),
            "tensor([[ 1, 22],\n        [ 3,  4]], dtype=lf.int32)");
  EXPECT_EQ(str(lf::from_vector(std::vector<int64_t>{int64_t{1} << 62}, {1})), "tensor([4611686018427387904])");
}

TEST_F(Print, OtherDtypeSuffixes) {
  EXPECT_EQ(str(f32({1.5}).to(lf::DType::Float16)), "tensor([1.5000], dtype=lf.float16)");
  EXPECT_EQ(str(f32({2}).to(lf::DType::BFloat16)), "tensor([2.], dtype=lf.bfloat16)");
  EXPECT_EQ(str(f32({2}).to(lf::DType::Float64)), "tensor([2.], dtype=lf.float64)");
}

TEST_F(Print, Empty) {
  EXPECT_EQ(str(lf::zeros({0})), "tensor([])");
  EXPECT_EQ(str(lf::zeros({0, 3})), "tensor([], size=(0, 3))");
  EXPECT_EQ(str(lf::zeros({2, 0, 1})), "tensor([], size=(2, 0, 1))");
  // An empty tensor shows every dtype but the default float32: nothing else says what it is.
  EXPECT_EQ(str(lf::zeros({0}, lf::DType::Int64)), "tensor([], dtype=lf.int64)");
  EXPECT_EQ(str(lf::zeros({0}, lf::DType::Bool)), "tensor([], dtype=lf.bool)");
  EXPECT_EQ(str(lf::zeros({0}, lf::DType::Float64)), "tensor([], dtype=lf.float64)");
  EXPECT_EQ(str(lf::zeros({2, 0}, lf::DType::Int32)), "tensor([], size=(2, 0), dtype=lf.int32)");
}

TEST_F(Print, Scientific) {
  EXPECT_EQ(str(f32({1e-5f, 1})), "tensor([1.0000e-05, 1.0000e+00])");
  EXPECT_EQ(str(f32({1e10f, 1})), "tensor([1.0000e+10, 1.0000e+00])");
  EXPECT_EQ(str(f32({1, 10000})), "tensor([1.0000e+00, 1.0000e+04])");  // ratio above 1000
  EXPECT_EQ(str(f32({0.5, 1000.5})), "tensor([5.0000e-01, 1.0005e+03])");
  EXPECT_EQ(str(f32({-1e-5f, 2})), "tensor([-1.0000e-05,  2.0000e+00])");
  EXPECT_EQ(str(f32({1, 1000})), "tensor([   1., 1000.])");  // ratio exactly 1000: not yet
}

TEST_F(Print, NaNAndInf) {
  // The width comes from the finite non-zero values only, so nan and inf may stick out.
  EXPECT_EQ(str(f32({1, NAN})), "tensor([1., nan])");
  EXPECT_EQ(str(f32({NAN, 1})), "tensor([nan, 1.])");
  EXPECT_EQ(str(f32({1.5, NAN, -INFINITY})), "tensor([1.5000,    nan,   -inf])");
  EXPECT_EQ(str(f32({NAN, NAN})), "tensor([nan, nan])");
  EXPECT_EQ(str(f32({-INFINITY, INFINITY})), "tensor([-inf, inf])");
  EXPECT_EQ(str(f32({0, NAN})), "tensor([0., nan])");
  EXPECT_EQ(str(f32({1e-5f, NAN})), "tensor([1.0000e-05,        nan])");
  EXPECT_EQ(str(f32({-NAN, 2})), "tensor([nan, 2.])");  // no "-nan"
}

TEST_F(Print, LongRowsWrapAt80Columns) {
  EXPECT_EQ(str(lf::arange(0.0, 20)),
            "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
            "        14., 15., 16., 17., 18., 19.])");
  EXPECT_EQ(str(lf::reshape(lf::arange(0.0, 40), {2, 20})),
            "tensor([[ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
            "         14., 15., 16., 17., 18., 19.],\n"
            "        [20., 21., 22., 23., 24., 25., 26., 27., 28., 29., 30., 31., 32., 33.,\n"
            "         34., 35., 36., 37., 38., 39.]])");
}

TEST_F(Print, SummarizesAbove1000Elements) {
  // 1000 elements: printed in full (only more than 1000 is summarized).
  std::string full = str(lf::arange(0, 1000, 1, lf::DType::Int64));
  EXPECT_EQ(full.find("..."), std::string::npos);
  EXPECT_NE(full.find(" 500, 501,"), std::string::npos);

  // The format is chosen from the shown values only: 1999 / 1 > 1000, so scientific.
  EXPECT_EQ(str(lf::arange(0.0, 2000)),
            "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
            "        1.9990e+03])");
  EXPECT_EQ(str(lf::arange(0, 2000, 1, lf::DType::Int64)), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  // A huge value in the hidden middle does not change the format.
  std::vector<float> v(2000, 1.5f);
  v[1000] = 1e10f;
  EXPECT_EQ(str(f32(v)), "tensor([1.5000, 1.5000, 1.5000,  ..., 1.5000, 1.5000, 1.5000])");
}

TEST_F(Print, Summarizes2D) {
  lf::Tensor x = lf::reshape(lf::arange(1000.0, 2200), {40, 30});
  EXPECT_EQ(str(x),
            "tensor([[1000., 1001., 1002.,  ..., 1027., 1028., 1029.],\n"
            "        [1030., 1031., 1032.,  ..., 1057., 1058., 1059.],\n"
            "        [1060., 1061., 1062.,  ..., 1087., 1088., 1089.],\n"
            "        ...,\n"
            "        [2110., 2111., 2112.,  ..., 2137., 2138., 2139.],\n"
            "        [2140., 2141., 2142.,  ..., 2167., 2168., 2169.],\n"
            "        [2170., 2171., 2172.,  ..., 2197., 2198., 2199.]])");
  // Only the long dim is cut.
  lf::Tensor tall = lf::reshape(lf::arange(0, 1002, 1, lf::DType::Int64), {501, 2});
  EXPECT_EQ(str(tall),
            "tensor([[   0,    1],\n"
            "        [   2,    3],\n"
            "        [   4,    5],\n"
            "        ...,\n"
            "        [ 996,  997],\n"
            "        [ 998,  999],\n"
            "        [1000, 1001]])");
}

TEST_F(Print, Summarizes3D) {
  lf::Tensor x = lf::expand(lf::reshape(lf::arange(0.0, 8), {8, 1, 1}), {8, 2, 70});
  std::string row[8];
  for (int i = 0; i < 8; ++i) {
    std::string d = std::to_string(i) + ".";
    row[i] = "[" + d + ", " + d + ", " + d + ",  ..., " + d + ", " + d + ", " + d + "]";
  }
  std::string want = "tensor([";
  for (int i : {0, 1, 2, -1, 5, 6, 7}) {
    if (i != 0) want += ",\n\n        ";
    if (i < 0) {
      want += "...";
      continue;
    }
    want += "[" + row[i] + ",\n         " + row[i] + "]";
  }
  want += "])";
  EXPECT_EQ(str(x), want);
}

TEST_F(Print, PendingValueIsComputed) {
  lf::Tensor x = f32({1, 2}) * 2;
  EXPECT_FALSE(x.is_materialized());
  EXPECT_EQ(str(x), "tensor([2., 4.])");
  EXPECT_TRUE(x.is_materialized());
}

TEST_F(Print, CudaSuffix) {
  if (!lf::cuda_available()) GTEST_SKIP() << "no GPU here";
  lf::Tensor x = lf::from_vector(std::vector<float>{2, 4}, {2}).to(lf::Device::cuda(0));
  std::ostringstream os;
  os << x;
  EXPECT_EQ(os.str(), "tensor([2., 4.], device='cuda:0')");
}

}  // namespace
