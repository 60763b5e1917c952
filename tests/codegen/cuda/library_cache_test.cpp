// The library kernels' cubins in the persistent cache (codegen/cuda/library_cache.h): compiled by
// NVRTC once, then loaded from the cache directory for exactly the same source; another source,
// a damaged entry or the cache turned off compile again. NVRTC runs without a GPU, so this runs
// on the build machine too (skipped where NVRTC is missing).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "codegen/cache/disk_entry.h"
#include "codegen/cuda/library_cache.h"
#include "codegen/cuda/nvrtc.h"
#include "tests/codegen/cache/cache_dir_fixture.h"

namespace lf {
namespace {

const char* const kSource = R"(
extern "C" __global__ void lf_lib_test(float* y, const float* x, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.f * x[i] + SHIFT;
}
)";

std::string source(int shift) { return "#define SHIFT " + std::to_string(shift) + "\n" + kSource; }

class LibraryCache : public test::CacheDirTest {
 protected:
  // The test kernel of source(shift) through the library cache.
  lf::StatusOr<std::vector<char>> compile(int shift, bool* from_disk, const char* arch = "sm_90", bool refresh = false) {
    std::string log;
    return cuda::library_cubin(source(shift), "lf_lib_test", arch, &log, from_disk, refresh);
  }
};

TEST_F(LibraryCache, CompiledOnceThenLoadedForTheSameSourceOnly) {
  if (!cuda::nvrtc_status().ok()) GTEST_SKIP() << cuda::nvrtc_status().message();
  bool from_disk = true;
  auto first = compile(1, &from_disk);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_FALSE(from_disk);
  ASSERT_EQ(files(".lfk").size(), 1u);
  auto again = compile(1, &from_disk);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(from_disk);
  EXPECT_EQ(*again, *first);
  // Another source, another architecture: compiled, each an entry of its own.
  (void)compile(2, &from_disk);
  EXPECT_FALSE(from_disk);
  (void)compile(1, &from_disk, "sm_80");
  EXPECT_FALSE(from_disk);
  EXPECT_EQ(files(".lfk").size(), 3u);
}

TEST_F(LibraryCache, ADamagedEntryIsCompiledAgainAndReplaced) {
  if (!cuda::nvrtc_status().ok()) GTEST_SKIP() << cuda::nvrtc_status().message();
  bool from_disk = true;
  auto first = compile(3, &from_disk);
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(files(".lfk").size(), 1u);
  {  // a byte of the cubin flipped: the checksum no longer matches
    std::fstream f(files(".lfk")[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-20, std::ios::end);
    f.put('\x5a');
  }
  testing::internal::CaptureStderr();  // the damaged entry is reported once
  auto again = compile(3, &from_disk);
  (void)testing::internal::GetCapturedStderr();
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(from_disk);
  EXPECT_EQ(*again, *first);
  (void)compile(3, &from_disk);
  EXPECT_TRUE(from_disk) << "the replaced entry is loaded";
}

// A refresh (library_module: the driver called the stored image bad) compiles and replaces the
// entry: an entry whose cubin is garbage (a valid entry around it) is loaded as it is until a
// refresh stores the compiled cubin over it.
TEST_F(LibraryCache, ARefreshCompilesAndReplaces) {
  if (!cuda::nvrtc_status().ok()) GTEST_SKIP() << cuda::nvrtc_status().message();
  bool from_disk = true;
  auto good = compile(5, &from_disk);
  ASSERT_TRUE(good.ok());
  ASSERT_EQ(files(".lfk").size(), 1u);
  const std::string path = files(".lfk")[0].string();
  std::string why;
  auto bytes = cache::disk::read_file(path, &why);
  ASSERT_TRUE(bytes) << why;
  auto record = cache::disk::decode(*bytes, &why);
  ASSERT_TRUE(record) << why;
  record->binary = "not a cubin";
  { std::ofstream(path, std::ios::binary | std::ios::trunc) << cache::disk::encode(*record); }
  auto bad = compile(5, &from_disk);
  ASSERT_TRUE(bad.ok());
  EXPECT_TRUE(from_disk);
  EXPECT_EQ(std::string(bad->begin(), bad->end()), "not a cubin");
  auto fresh = compile(5, &from_disk, "sm_90", /*refresh=*/true);
  ASSERT_TRUE(fresh.ok());
  EXPECT_FALSE(from_disk);
  EXPECT_EQ(*fresh, *good);
  auto again = compile(5, &from_disk);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(from_disk);
  EXPECT_EQ(*again, *good) << "the refresh replaced the entry";
}

TEST_F(LibraryCache, OffMeansCompiledEveryTime) {
  if (!cuda::nvrtc_status().ok()) GTEST_SKIP() << cuda::nvrtc_status().message();
  rt::mutable_config().cache_dir.clear();  // LAZYFUSE_CACHE_DIR=off
  bool from_disk = true;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(compile(4, &from_disk).ok());
    EXPECT_FALSE(from_disk);
  }
  EXPECT_TRUE(files(".lfk").empty());
}

}  // namespace
}  // namespace lf
