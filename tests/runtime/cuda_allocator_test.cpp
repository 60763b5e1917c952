// The CUDA caching allocator and Storage's copies. Tests that need a GPU skip where there is none;
// size classes, host copies and the errors without a driver run everywhere.
#include "runtime/cuda_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <lazyfuse/lazyfuse.h>

#include "runtime/storage.h"

using lf::Device;
using lf::rt::Storage;

namespace {

bool has_cuda() { return lf::rt::cuda_status().available; }

#define REQUIRE_CUDA() \
  if (!has_cuda()) GTEST_SKIP() << "no CUDA here (" << lf::rt::cuda_status().reason << ")"

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const lf::Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(CudaAllocator, SizeClasses) {
  using lf::rt::cuda_round_size;
  EXPECT_EQ(cuda_round_size(0), 512u);
  EXPECT_EQ(cuda_round_size(1), 512u);
  EXPECT_EQ(cuda_round_size(512), 512u);
  EXPECT_EQ(cuda_round_size(513), 1024u);
  EXPECT_EQ(cuda_round_size((size_t{1} << 20) - 1), size_t{1} << 20);
  EXPECT_EQ(cuda_round_size(size_t{1} << 20), size_t{2} << 20);
  EXPECT_EQ(cuda_round_size((size_t{2} << 20) + 1), size_t{4} << 20);
  EXPECT_EQ(cuda_round_size(size_t{5} << 20), size_t{6} << 20);
}

TEST(CudaAllocator, WithoutDriverIsAClearError) {
  if (has_cuda()) GTEST_SKIP() << "CUDA is available here";
  std::string e = error_of([] { lf::rt::cuda_malloc(0, 4096); });
  EXPECT_TRUE(contains(e, "cuda:0")) << e;
  EXPECT_TRUE(contains(e, "4096 bytes")) << e;
  EXPECT_TRUE(contains(e, lf::rt::cuda_status().reason)) << e;
  e = error_of([] { Storage::allocate(Device::cuda(0), 16); });
  EXPECT_TRUE(contains(e, "cuda:0")) << e;
  EXPECT_TRUE(contains(e, "CUDA is unavailable")) << e;
}

TEST(CudaAllocator, EmptyCacheWithoutDriverIsANoOp) {
  if (has_cuda()) GTEST_SKIP() << "CUDA is available here";
  EXPECT_EQ(lf::rt::empty_cuda_cache(), 0u);
  EXPECT_NO_THROW(lf::empty_cache());
  EXPECT_NO_THROW(lf::rt::synchronize(Device::cpu()));
}

TEST(StorageCopy, HostToHostWithOffsets) {
  auto a = Storage::allocate(Device::cpu(), 64);
  auto b = Storage::allocate(Device::cpu(), 64);
  for (int i = 0; i < 64; ++i) static_cast<uint8_t*>(a->data())[i] = static_cast<uint8_t>(i);
  std::memset(b->data(), 0, 64);
  lf::rt::copy(*a, 8, *b, 16, 32);
  const uint8_t* pb = static_cast<const uint8_t*>(b->data());
  EXPECT_EQ(pb[15], 0);
  EXPECT_EQ(pb[16], 8);
  EXPECT_EQ(pb[47], 39);
  EXPECT_EQ(pb[48], 0);
}

TEST(StorageCopy, OutOfBoundsNamesDevicesAndSizes) {
  auto a = Storage::allocate(Device::cpu(), 64);
  auto b = Storage::allocate(Device::cpu(), 32);
  std::string e = error_of([&] { lf::rt::copy(*a, 0, *b, 8, 32); });
  EXPECT_TRUE(contains(e, "out of bounds")) << e;
  EXPECT_TRUE(contains(e, "[8, 40) of 32")) << e;
  EXPECT_TRUE(contains(e, "cpu")) << e;
  e = error_of([&] { lf::rt::copy(*a, 60, *b, 0, 8); });
  EXPECT_TRUE(contains(e, "[60, 68) of 64")) << e;
}

TEST(StorageCopy, DevicePtrOfHostStorageThrows) {
  auto a = Storage::allocate(Device::cpu(), 8);
  EXPECT_TRUE(contains(error_of([&] { a->device_ptr(); }), "cpu"));
}

// ---- on a GPU ----

TEST(CudaAllocator, FreedBlockIsReusedForTheSameClass) {
  REQUIRE_CUDA();
  lf::rt::empty_cuda_cache();
  void* first;
  {
    auto s = Storage::allocate(Device::cuda(0), 1000);
    first = s->data();
    EXPECT_NE(first, nullptr);
    EXPECT_EQ(s->device_ptr(), reinterpret_cast<uintptr_t>(first));
    EXPECT_EQ(s->nbytes(), 1000u);
  }
  EXPECT_EQ(lf::rt::cuda_memory_stats(0).cached, 1024u);
  auto again = Storage::allocate(Device::cuda(0), 600);  // same 1024 B class
  EXPECT_EQ(again->data(), first);
  EXPECT_EQ(lf::rt::cuda_memory_stats(0).cached, 0u);

  void* large;
  {
    auto s = Storage::allocate(Device::cuda(0), size_t{5} << 20);
    large = s->data();
  }
  auto large_again = Storage::allocate(Device::cuda(0), (size_t{6} << 20) - 1);  // same 6 MiB class
  EXPECT_EQ(large_again->data(), large);
  auto other = Storage::allocate(Device::cuda(0), size_t{7} << 20);  // another class: fresh memory
  EXPECT_NE(other->data(), large);
  EXPECT_GT(lf::rt::cuda_memory_stats(0).reuses, 0u);
}

TEST(CudaAllocator, EmptyCacheReleasesDeviceAndHostBlocks) {
  REQUIRE_CUDA();
  { auto s = Storage::allocate(Device::cuda(0), size_t{8} << 20); }
  { auto h = Storage::allocate(Device::cpu(), size_t{4} << 20); }
  EXPECT_GE(lf::rt::cuda_memory_stats(0).cached, size_t{8} << 20);
  EXPECT_GT(lf::rt::host_cache_bytes(), 0u);
  lf::empty_cache();
  EXPECT_EQ(lf::rt::cuda_memory_stats(0).cached, 0u);
  EXPECT_EQ(lf::rt::host_cache_bytes(), 0u);
  { auto s = Storage::allocate(Device::cuda(0), 4096); }
  EXPECT_EQ(lf::rt::empty_cuda_cache(), 4096u);
}

TEST(CudaAllocator, OutOfMemoryNamesTheBytes) {
  REQUIRE_CUDA();
  const size_t total = lf::rt::cuda_status().devices[0].total_memory;
  const size_t want = total * 2;
  std::string e = error_of([&] { Storage::allocate(Device::cuda(0), want); });
  EXPECT_TRUE(contains(e, "out of CUDA memory on cuda:0")) << e;
  EXPECT_TRUE(contains(e, std::to_string(want) + " bytes")) << e;
  EXPECT_TRUE(contains(e, "free of")) << e;
  EXPECT_TRUE(contains(e, "total")) << e;
  // The allocator still works afterwards.
  EXPECT_NO_THROW(Storage::allocate(Device::cuda(0), 1 << 20));
}

TEST(CudaAllocator, NoSuchDevice) {
  REQUIRE_CUDA();
  std::string e = error_of([] { Storage::allocate(Device::cuda(999), 64); });
  EXPECT_TRUE(contains(e, "cuda:999")) << e;
  EXPECT_TRUE(contains(e, "64 bytes")) << e;
}

TEST(CudaAllocator, ThreadSafe) {
  REQUIRE_CUDA();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i) {
        auto s = Storage::allocate(Device::cuda(0), static_cast<size_t>(512 * (1 + (i + t) % 7)));
        auto h = Storage::allocate(Device::cpu(), s->nbytes());
        std::memset(h->data(), t, h->nbytes());
        lf::rt::copy(*h, 0, *s, 0, h->nbytes());
        std::memset(h->data(), 0xff, h->nbytes());
        lf::rt::copy(*s, 0, *h, 0, h->nbytes());
        ASSERT_EQ(static_cast<const uint8_t*>(h->data())[h->nbytes() - 1], t);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(lf::rt::cuda_memory_stats(0).in_use, 0u);
}

TEST(StorageCopy, HostDeviceRoundTripWithOffsets) {
  REQUIRE_CUDA();
  const size_t n = 3 << 20;  // a large class, and an odd number of floats' worth of bytes
  auto host = Storage::allocate(Device::cpu(), n);
  for (size_t i = 0; i < n; ++i) static_cast<uint8_t*>(host->data())[i] = static_cast<uint8_t>(i * 7 + 3);
  auto d1 = Storage::allocate(Device::cuda(0), n);
  auto d2 = Storage::allocate(Device::cuda(0), n + 100);
  lf::rt::copy(*host, 0, *d1, 0, n);
  lf::rt::copy(*d1, 10, *d2, 100, n - 10);  // device to device, ordered on the stream
  auto back = Storage::allocate(Device::cpu(), n - 10);
  lf::rt::copy(*d2, 100, *back, 0, n - 10);
  EXPECT_EQ(std::memcmp(back->data(), static_cast<const uint8_t*>(host->data()) + 10, n - 10), 0);
  std::string e = error_of([&] { lf::rt::copy(*d1, 0, *back, 0, n); });
  EXPECT_TRUE(contains(e, "cuda:0 bytes [0, " + std::to_string(n) + ")")) << e;
  EXPECT_NO_THROW(lf::rt::synchronize(Device::cuda(0)));
}

TEST(StorageCopy, BetweenTwoGpus) {
  REQUIRE_CUDA();
  if (lf::rt::cuda_status().devices.size() < 2) GTEST_SKIP() << "one GPU here";
  std::vector<int32_t> v(1000);
  std::iota(v.begin(), v.end(), -500);
  auto host = Storage::allocate(Device::cpu(), v.size() * 4);
  std::memcpy(host->data(), v.data(), v.size() * 4);
  auto a = Storage::allocate(Device::cuda(0), host->nbytes());
  auto b = Storage::allocate(Device::cuda(1), host->nbytes());
  lf::rt::copy(*host, 0, *a, 0, host->nbytes());
  lf::rt::copy(*a, 0, *b, 0, host->nbytes());
  auto back = Storage::allocate(Device::cpu(), host->nbytes());
  lf::rt::copy(*b, 0, *back, 0, host->nbytes());
  EXPECT_EQ(std::memcmp(back->data(), v.data(), host->nbytes()), 0);
}
