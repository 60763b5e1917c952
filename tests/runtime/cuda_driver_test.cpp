#include "runtime/cuda_driver.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include <lazyfuse/lazyfuse.h>

TEST(CudaDriver, ReportsAvailabilityWithoutFailingToLoad) {
  const lf::rt::CudaStatus& st = lf::rt::cuda_status();
  if (!st.available) {
    EXPECT_FALSE(st.reason.empty()) << "an unavailable driver must say why";
    GTEST_SKIP() << "no GPU here: " << st.reason;
  }
  ASSERT_FALSE(st.devices.empty());
  EXPECT_GT(st.driver_version, 0);
  for (const auto& d : st.devices) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_GE(d.sm_major, 5);
    EXPECT_GT(d.multiprocessors, 0);
    EXPECT_GT(d.total_memory, size_t{1} << 30);
    std::printf("cuda:%d %s sm_%d%d, %d SMs, %.1f GiB, driver %d\n", d.index, d.name.c_str(), d.sm_major, d.sm_minor,
                d.multiprocessors, d.total_memory / 1073741824.0, st.driver_version);
  }
}

TEST(CudaDriver, DefaultDeviceIsCudaExactlyWhenAGpuIsThere) {
  if (std::getenv("LAZYFUSE_DEVICE")) GTEST_SKIP() << "LAZYFUSE_DEVICE overrides the default";
  EXPECT_EQ(lf::cuda_available(), lf::rt::cuda_status().available);
  EXPECT_EQ(lf::default_device().is_cuda(), lf::cuda_available());
}
