// Devices: the default device, Tensor::to(Device) between the CPU and a GPU, reads of CUDA tensors
// and from_vector on a CUDA default device. Tests that need a GPU skip where there is none.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "frontend/test_util.h"

#include "runtime/cuda_driver.h"

namespace {

using lf::test::expect_error;
using lf::test::expect_close;
using lf::test::kNaN;
using lf::test::kInf;

using lf::Device;
using lf::DType;

bool has_cuda() { return lf::rt::cuda_status().available; }

#define REQUIRE_CUDA() \
  if (!has_cuda()) GTEST_SKIP() << "no CUDA here (" << lf::rt::cuda_status().reason << ")"


// Sets the default device for one test and puts the old one back.
class DefaultDevice {
 public:
  explicit DefaultDevice(Device d) : old_(lf::default_device()) { lf::set_default_device(d); }
  ~DefaultDevice() { lf::set_default_device(old_); }

 private:
  Device old_;
};

const DType kAllDTypes[] = {DType::Bool,     DType::Int32,   DType::Int64,  DType::Float16,
                            DType::BFloat16, DType::Float32, DType::Float64};

// Values every dtype holds exactly (bool: nonzero -> true).
lf::Tensor sample_on_cpu(DType dtype) {
  DefaultDevice on_cpu(Device::cpu());
  lf::Tensor x = lf::from_vector(std::vector<double>{0, 1, -2, 0.5, 3, -7, 64, 0.25, -1, 2, 5, 1024}, {3, 4});
  return x.to(dtype);
}

std::string printed(const lf::Tensor& t) {
  std::ostringstream os;
  os << t;
  return os.str();
}

// ---- everywhere ----

TEST(Device, CudaAvailableIsTheDriversAnswer) {
  EXPECT_EQ(lf::cuda_available(), lf::rt::cuda_status().available);
}

TEST(Device, DefaultDevice) {
  const char* env = std::getenv("LAZYFUSE_DEVICE");
  if (env != nullptr) GTEST_SKIP() << "LAZYFUSE_DEVICE=" << env << " decides the default";
  // Nothing in the test binaries sets the default for good (DefaultDevice puts it back).
  EXPECT_EQ(lf::default_device(), has_cuda() ? Device::cuda(0) : Device::cpu());
  {
    DefaultDevice cpu(Device::cpu());
    EXPECT_EQ(lf::default_device(), Device::cpu());
    EXPECT_EQ(lf::zeros({2}).device(), Device::cpu());
    EXPECT_EQ(lf::from_vector(std::vector<float>{1, 2}, {2}).device(), Device::cpu());
  }
  EXPECT_EQ(lf::default_device(), has_cuda() ? Device::cuda(0) : Device::cpu());
}

TEST(Device, ToTheSameDeviceIsTheSameTensor) {
  DefaultDevice cpu(Device::cpu());
  lf::Tensor x = lf::from_vector(std::vector<float>{1, 2, 3}, {3});
  lf::Tensor y = x.to(Device::cpu());
  EXPECT_EQ(y.node().get(), x.node().get());
  lf::Tensor pending = x * 2;
  EXPECT_EQ(pending.to(Device::cpu()).node().get(), pending.node().get());
  EXPECT_FALSE(pending.is_materialized());  // no sync point
}

TEST(Device, WithoutDriverToCudaIsAClearError) {
  if (has_cuda()) GTEST_SKIP() << "CUDA is available here";
  DefaultDevice cpu(Device::cpu());
  lf::Tensor x = lf::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  const std::string reason = lf::rt::cuda_status().reason;
  expect_error([&] { x.to(Device::cuda(0)); }, {"lf::to", "cpu to cuda:0", "float32[2, 3]", "24 bytes",
                                                "CUDA is unavailable", reason});
  expect_error([&] { lf::set_default_device(Device::cuda(0)); }, {"set_default_device(cuda:0)", reason});
  EXPECT_NO_THROW(lf::empty_cache());
}

// ---- on a GPU ----

TEST(Device, RoundTripOfEveryDtype) {
  REQUIRE_CUDA();
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(lf::dtype_name(dtype));
    lf::Tensor host = sample_on_cpu(dtype);
    const std::vector<double> want = host.to_vector<double>();
    lf::Tensor dev = host.to(Device::cuda(0));
    EXPECT_EQ(dev.device(), Device::cuda(0));
    EXPECT_EQ(dev.dtype(), dtype);
    EXPECT_EQ(dev.shape(), (lf::Shape{3, 4}));
    EXPECT_TRUE(dev.is_materialized());
    EXPECT_EQ(dev.to_vector<double>(), want);  // read straight from the device
    lf::Tensor back = dev.to(Device::cpu());
    EXPECT_EQ(back.device(), Device::cpu());
    EXPECT_EQ(back.dtype(), dtype);
    EXPECT_EQ(back.to_vector<double>(), want);
  }
}

TEST(Device, EmptyTensorMoves) {
  REQUIRE_CUDA();
  DefaultDevice cpu(Device::cpu());
  lf::Tensor x = lf::zeros({0, 3});
  lf::Tensor d = x.to(Device::cuda(0));
  EXPECT_EQ(d.shape(), (lf::Shape{0, 3}));
  EXPECT_TRUE(d.to_vector<float>().empty());
  EXPECT_EQ(d.to(Device::cpu()).numel(), 0);
}

TEST(Device, TransposedCpuViewToCuda) {
  REQUIRE_CUDA();
  DefaultDevice cpu(Device::cpu());
  lf::Tensor x = lf::arange(0, 6).reshape({2, 3}).transpose(0, 1);  // [[0,3],[1,4],[2,5]]
  lf::Tensor d = x.to(Device::cuda(0));
  EXPECT_EQ(d.shape(), (lf::Shape{3, 2}));
  EXPECT_EQ(d.to_vector<int64_t>(), (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  lf::Tensor sliced = lf::arange(0, 10, 1, DType::Float32).slice(0, 2, 9, 3);  // 2, 5, 8
  EXPECT_EQ(sliced.to(Device::cuda(0)).to_vector<float>(), (std::vector<float>{2, 5, 8}));
}

// These run a kernel on the GPU (contiguous() of a strided CUDA view): they need the CUDA backend.
TEST(Device, TransposedCudaViewToCpuAndRead) {
  REQUIRE_CUDA();
  DefaultDevice cpu(Device::cpu());
  lf::Tensor d = lf::arange(0, 6, 1, DType::Float32).reshape({2, 3}).to(Device::cuda(0));
  lf::Tensor t = d.transpose(0, 1);
  EXPECT_EQ(t.device(), Device::cuda(0));
  const std::vector<float> want{0, 3, 1, 4, 2, 5};
  EXPECT_EQ(t.to(Device::cpu()).to_vector<float>(), want);
  EXPECT_EQ(t.to_vector<float>(), want);
  EXPECT_EQ(d.slice(1, 1, 3).to_vector<float>(), (std::vector<float>{1, 2, 4, 5}));
  EXPECT_EQ(d.slice(1, 1, 3).to(Device::cpu()).to_vector<float>(), (std::vector<float>{1, 2, 4, 5}));
}

TEST(Device, ItemAndToVectorOfCudaTensors) {
  REQUIRE_CUDA();
  DefaultDevice cpu(Device::cpu());
  lf::Tensor f = lf::from_vector(std::vector<float>{1.5f, -2.25f, NAN, INFINITY}, {2, 2}).to(Device::cuda(0));
  std::vector<float> v = f.to_vector<float>();
  EXPECT_EQ(v[0], 1.5f);
  EXPECT_EQ(v[1], -2.25f);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(v[3], INFINITY);
  EXPECT_EQ(f.to_vector<double>()[1], -2.25);  // converted on the host
  lf::Tensor one = lf::from_vector(std::vector<int64_t>{(int64_t{1} << 60) + 1}, {}).to(Device::cuda(0));
  EXPECT_EQ(one.item<int64_t>(), (int64_t{1} << 60) + 1);
  EXPECT_EQ(lf::from_vector(std::vector<bool>{true}, {1}).to(Device::cuda(0)).item<bool>(), true);
  expect_error([&] { f.item<float>(); }, {"item", "4"});
  lf::Tensor on_cpu = lf::from_vector(std::vector<float>{1.5f, -2.25f, 3, 4}, {2, 2});
  EXPECT_EQ(printed(on_cpu.to(Device::cuda(0))).substr(0, 20), printed(on_cpu).substr(0, 20));
}

TEST(Device, FromVectorOnACudaDefaultDevice) {
  REQUIRE_CUDA();
  DefaultDevice gpu(Device::cuda(0));
  lf::Tensor i = lf::from_vector(std::vector<int32_t>{-7, 0, 2147483647, -2147483647 - 1}, {2, 2});
  EXPECT_EQ(i.device(), Device::cuda(0));
  EXPECT_TRUE(i.is_materialized());
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{-7, 0, 2147483647, -2147483647 - 1}));
  lf::Tensor b = lf::from_vector(std::vector<bool>{true, false, true}, {3});
  EXPECT_EQ(b.device(), Device::cuda(0));
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true}));
  lf::Tensor big = lf::from_vector(std::vector<double>(size_t{1} << 20, 0.5), {1 << 20});
  std::vector<double> v = big.to(Device::cpu()).to_vector<double>();
  EXPECT_EQ(v.front(), 0.5);
  EXPECT_EQ(v.back(), 0.5);
}

TEST(Device, NoSuchGpu) {
  REQUIRE_CUDA();
  DefaultDevice cpu(Device::cpu());
  lf::Tensor x = lf::from_vector(std::vector<float>{1, 2}, {2});
  expect_error([&] { x.to(Device::cuda(999)); }, {"lf::to", "cuda:999 does not exist", "8 bytes"});
  expect_error([&] { lf::set_default_device(Device::cuda(999)); }, {"cuda:999"});
}

}  // namespace
