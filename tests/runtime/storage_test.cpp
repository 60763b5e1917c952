#include "runtime/storage.h"
#include "runtime/cuda_driver.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

using lf::Device;
using lf::rt::Storage;

TEST(Storage, AlignedAndWritable) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{100}, size_t{3} << 20}) {
    auto s = Storage::allocate(Device::cpu(), bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(s->data()) % lf::rt::kCpuAlignment, 0u);
    EXPECT_EQ(s->nbytes(), bytes);
    std::memset(s->data(), 0xab, bytes);
  }
}

TEST(Storage, LargeFreedBlocksAreReused) {
  lf::rt::empty_host_cache();
  void* first;
  {
    auto s = Storage::allocate(Device::cpu(), size_t{5} << 20);
    first = s->data();
  }
  EXPECT_GE(lf::rt::host_cache_bytes(), size_t{5} << 20);
  auto again = Storage::allocate(Device::cpu(), (size_t{5} << 20) - 100);  // same 2 MiB class
  EXPECT_EQ(again->data(), first);
  EXPECT_EQ(lf::rt::host_cache_bytes(), 0u);
}

TEST(Storage, EmptyCacheReleasesEverything) {
  { auto s = Storage::allocate(Device::cpu(), size_t{4} << 20); }
  EXPECT_GT(lf::rt::empty_host_cache(), 0u);
  EXPECT_EQ(lf::rt::host_cache_bytes(), 0u);
}

TEST(Storage, CudaWithoutADriverIsAClearError) {
  if (lf::rt::cuda_status().available) GTEST_SKIP() << "a GPU is present";
  try {
    Storage::allocate(Device::cuda(0), 16);
    FAIL() << "expected lf::Error";
  } catch (const lf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos) << e.what();
  }
}
