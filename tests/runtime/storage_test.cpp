#include "runtime/storage.h"
#include "runtime/cuda_driver.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>

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

TEST(Storage, BorrowedMemoryIsNeverFreedOrCached) {
  alignas(64) static char buf[1 << 21];  // large enough for the host block cache, were it freed
  const size_t cached = lf::rt::host_cache_bytes();
  int released = 0;
  {
    auto s = Storage::borrow(Device::cpu(), buf, sizeof buf, std::shared_ptr<void>(nullptr, [&](void*) { ++released; }));
    EXPECT_TRUE(s->borrowed());
    EXPECT_EQ(s->data(), buf);
    EXPECT_EQ(s->nbytes(), sizeof buf);
  }
  EXPECT_EQ(released, 1);
  EXPECT_EQ(lf::rt::host_cache_bytes(), cached);
}

TEST(Storage, BorrowingOneAddressTwiceSharesTheStorage) {
  alignas(64) static char buf[256];
  int released = 0;
  auto keep = [&] { return std::shared_ptr<void>(nullptr, [&](void*) { ++released; }); };
  auto a = Storage::borrow(Device::cpu(), buf, 64, keep());
  auto b = Storage::borrow(Device::cpu(), buf, 128, keep());
  auto c = Storage::borrow(Device::cpu(), buf + 64, 64, keep());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a->nbytes(), 128u);  // grown to the longer borrow
  a.reset();
  EXPECT_EQ(released, 0);
  b.reset();
  EXPECT_EQ(released, 2);  // both keep-alives, once each, with the last handle
  auto d = Storage::borrow(Device::cpu(), buf, 32, nullptr);  // a fresh storage after the old died
  EXPECT_EQ(d->nbytes(), 32u);
  c.reset();
  EXPECT_EQ(released, 3);
}
