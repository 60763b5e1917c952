// The CUDA flash-attention kernel (codegen/cuda/attention.cpp) compiles with NVRTC for sm_90 in
// every variant the backend can ask for. Runs without a GPU (NVRTC only); the kernel's results are
// checked on a GPU by tests/codegen/fuse/attention_test.cpp, whose default device is CUDA there.
#include <gtest/gtest.h>

#include "codegen/cuda/attention.h"
#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda/nvrtc_batch.h"

namespace lf {
namespace {

using test::every_variant;
using test::expect_all_compile;
using test::NvrtcJob;

// A tensor-core variant takes NVRTC 3 to 4 s on the build machine (its loops unroll fully): the
// whole product of dtypes, head dims, mask kinds and the causal flag took 5 minutes of every test
// run. By default these tests compile a covering set, in which every pair of two parameters'
// values meets; LAZYFUSE_TEST_EVERY_VARIANT=1 compiles the whole product.

TEST(CudaAttention, EveryVariantCompilesWithNvrtc) {
  if (!cuda::check_compiles("extern \"C\" __global__ void probe() {}", "probe", "sm_90").ok())
    GTEST_SKIP() << "NVRTC is not available here";
  struct V {
    DType dtype;
    int64_t d, dv;
    int mask;
    bool causal;
  };
  std::vector<V> variants;
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16})
    for (int mask = 0; mask < 4; ++mask) variants.push_back({dt, 64, 64, mask, mask == 0});
  for (int64_t d : {16, 32, 128, 256}) variants.push_back({DType::Float32, d, d, 0, true});
  variants.push_back({DType::Float32, 20, 12, 1, false});  // head dims not a multiple of 4 or of each other
  std::vector<NvrtcJob> jobs;
  for (const V& v : variants)
    jobs.push_back({cuda::attention_source(v.dtype, v.d, v.dv, v.mask, v.causal), "lf_attention",
                    std::string(dtype_name(v.dtype)) + " d " + std::to_string(v.d) + " dv " + std::to_string(v.dv) +
                        " mask " + std::to_string(v.mask)});
  expect_all_compile(jobs);
}

// The tensor-core kernel (codegen/cuda/attention_tc.cpp): every 16-bit dtype, head dims 32, 64,
// 128 (and d != dv), mask kind, causal flag and row count (every pair of them, or, with
// LAZYFUSE_TEST_EVERY_VARIANT=1, every combination); no spills beyond a few bytes is checked by
// hand with ptxas -v (README, "Attention").
TEST(CudaAttention, EveryTensorCoreVariantCompilesWithNvrtc) {
  if (!cuda::check_compiles("extern \"C\" __global__ void probe() {}", "probe", "sm_90").ok())
    GTEST_SKIP() << "NVRTC is not available here";
  std::string why;
  EXPECT_FALSE(cuda::attention_tc_supports(DType::Float32, 64, 64, &why));
  EXPECT_FALSE(cuda::attention_tc_supports(DType::BFloat16, 48, 48, &why));
  EXPECT_FALSE(cuda::attention_tc_supports(DType::Float16, 64, 256, &why));
  std::vector<NvrtcJob> jobs;
  auto add = [&](DType dt, int64_t d, int64_t dv, int mask, bool causal, int rows) {
    ASSERT_TRUE(cuda::attention_tc_supports(dt, d, dv, &why));
    jobs.push_back({cuda::attention_tc_source(dt, d, dv, mask, causal, rows), "lf_attention",
                    std::string(dtype_name(dt)) + " d " + std::to_string(d) + " dv " + std::to_string(dv) + " mask " +
                        std::to_string(mask) + " causal " + std::to_string(causal) + " rows " + std::to_string(rows)});
  };
  const DType dtypes[] = {DType::Float16, DType::BFloat16};
  const int64_t dims[] = {32, 64, 128};
  if (every_variant()) {
    for (DType dt : dtypes)
      for (int64_t d : dims)
        for (int mask = 0; mask < 4; ++mask)
          for (bool causal : {false, true})
            for (int requested : {0, 128}) {
              const int rows = cuda::attention_tc_rows(d, d, mask, requested);
              if (requested == 0 || rows != cuda::attention_tc_rows(d, d, mask, 0)) add(dt, d, d, mask, causal, rows);
            }
  } else {
    // Each (head dim, mask) once; the causal flag, the dtype and 128 rows (where they apply) vary
    // with them so that every pair of values meets.
    for (int di = 0; di < 3; ++di)
      for (int mask = 0; mask < 4; ++mask) {
        const bool causal = (mask + di) % 2 == 1;
        const DType dt = dtypes[(mask / 2 + di) % 2];
        add(dt, dims[di], dims[di], mask, causal, cuda::attention_tc_rows(dims[di], dims[di], mask, 0));
        // 128 rows (head dims up to 64): every mask, both dtypes and both causal flags once.
        if (dims[di] <= 64 && mask / 2 == di) add(dtypes[mask % 2], dims[di], dims[di], mask, causal, 128);
      }
  }
  add(DType::BFloat16, 32, 128, 1, true, 64);
  // Causal grids in pairs of query blocks (mma.sync): head dims 32 and 128, 64 and 128 rows.
  for (auto [d, rows] : {std::pair<int64_t, int>{32, 128}, {128, 64}})
    jobs.push_back({cuda::attention_tc_source(DType::Float16, d, d, 0, true, rows, false, false, /*pairs=*/true),
                    "lf_attention", "pairs d " + std::to_string(d) + " rows " + std::to_string(rows)});
  expect_all_compile(jobs);
  // Shared memory: Q, two K and two V tiles of 16-bit rows padded by 16 bytes.
  EXPECT_EQ(cuda::attention_tc_shared_bytes(64, 64, 128), 2u * (128 * 72 + 2 * 64 * 72 + 2 * 64 * 72));
  EXPECT_LE(cuda::attention_tc_shared_bytes(128, 128, 64), 227u << 10);
  // 64 rows a block, 128 where LAZYFUSE_ATTENTION_ROWS asks at head dims up to 64.
  EXPECT_EQ(cuda::attention_tc_rows(64, 64, 0, 0), 64);
  EXPECT_EQ(cuda::attention_tc_rows(64, 64, 0, 128), 128);
  EXPECT_EQ(cuda::attention_tc_rows(64, 64, 1, 0), 64);
  EXPECT_EQ(cuda::attention_tc_rows(128, 128, 0, 0), 64);
  EXPECT_EQ(cuda::attention_tc_rows(128, 128, 0, 128), 64);
  EXPECT_EQ(cuda::attention_tc_rows(64, 64, 0, 64), 64);
  EXPECT_EQ(cuda::attention_tc_rows(32, 32, 1, 128), 128);
}

// The same kernel with Hopper's warpgroup products (WG: wgmma, compiled for sm_90a): both 16-bit
// dtypes, head dims 64 and 128 (and d != dv), every mask kind, causal or not.
TEST(CudaAttention, EveryWgmmaVariantCompilesWithNvrtc) {
  if (!cuda::check_compiles("extern \"C\" __global__ void probe() {}", "probe", "sm_90a").ok())
    GTEST_SKIP() << "NVRTC for sm_90a is not available here";
  std::string why;
  EXPECT_FALSE(cuda::attention_wgmma_supports(DType::BFloat16, 64, 64, 8, 0, &why));
  EXPECT_EQ(why, "not an sm_90 GPU (wgmma is Hopper's)");
  EXPECT_FALSE(cuda::attention_wgmma_supports(DType::BFloat16, 64, 64, 10, 0, &why));
  EXPECT_FALSE(cuda::attention_wgmma_supports(DType::Float16, 32, 64, 9, 0, &why));
  EXPECT_FALSE(cuda::attention_wgmma_supports(DType::Float32, 64, 64, 9, 0, &why));
  std::vector<NvrtcJob> jobs;
  auto add = [&](DType dt, int64_t d, int64_t dv, int mask, bool causal, bool few_blocks, bool pairs = false) {
    ASSERT_TRUE(cuda::attention_wgmma_supports(dt, d, dv, 9, 0, &why)) << why;
    const int rows = cuda::attention_tc_rows(d, dv, mask, 128, /*wgmma=*/true);
    ASSERT_EQ(rows, 64);
    jobs.push_back({cuda::attention_tc_source(dt, d, dv, mask, causal, rows, /*wgmma=*/true, few_blocks, pairs),
                    "lf_attention",
                    "wgmma " + std::string(dtype_name(dt)) + " d " + std::to_string(d) + " dv " + std::to_string(dv) +
                        " mask " + std::to_string(mask) + " causal " + std::to_string(causal) + " few blocks " +
                        std::to_string(few_blocks) + " pairs " + std::to_string(pairs),
                    "sm_90a"});
  };
  for (int mask = 0; mask < 4; ++mask) {
    add(mask % 2 ? DType::Float16 : DType::BFloat16, 64, 64, mask, mask < 2, mask % 2 == 0);
    add(mask % 2 ? DType::BFloat16 : DType::Float16, 64, 64, mask, mask >= 2, mask % 2 == 1);
    add(mask % 2 ? DType::BFloat16 : DType::Float16, 128, 128, mask, mask >= 2, false);
    // Causal grids in pairs of query blocks, with each tile size and head dim.
    add(mask % 2 ? DType::Float16 : DType::BFloat16, mask < 2 ? 64 : 128, mask < 2 ? 64 : 128, mask, true,
        mask == 1, /*pairs=*/true);
  }
  add(DType::BFloat16, 64, 128, 0, true, true);
  add(DType::Float16, 128, 64, 1, false, true);
  expect_all_compile(jobs);
  // Unpadded Q, K and V tiles after up to 1024 bytes of alignment; 64 keys a tile, 128 in a grid
  // of fewer than 4 blocks an SM at head dims up to 64.
  EXPECT_EQ(cuda::attention_tc_keys_per_tile(64, 64, true), 64);
  EXPECT_EQ(cuda::attention_tc_keys_per_tile(64, 64, true, true), 128);
  EXPECT_EQ(cuda::attention_tc_keys_per_tile(64, 128, true, true), 64);
  EXPECT_TRUE(cuda::attention_wgmma_few_blocks(527, 132));
  EXPECT_FALSE(cuda::attention_wgmma_few_blocks(528, 132));
  // Pairs of query blocks: causal grids only, of 2 query blocks or more; by default where the
  // paired grid of the wgmma kernel has at least 3 blocks an SM (B8 H16 T512: 128 heads x 4 pairs
  // on 132 SMs); mma.sync only when asked.
  EXPECT_TRUE(cuda::attention_tc_pairs(true, true, 128, 8, 132, -1));
  EXPECT_FALSE(cuda::attention_tc_pairs(true, true, 8, 32, 132, -1));  // B1 H8 T2048: 128 blocks in pairs
  EXPECT_TRUE(cuda::attention_tc_pairs(true, true, 132, 5, 132, -1));  // 3 pairs a head (the middle block alone)
  EXPECT_FALSE(cuda::attention_tc_pairs(true, true, 131, 5, 132, -1));
  EXPECT_FALSE(cuda::attention_tc_pairs(false, true, 128, 8, 132, -1));
  EXPECT_FALSE(cuda::attention_tc_pairs(true, true, 4096, 1, 132, 1));
  EXPECT_TRUE(cuda::attention_tc_pairs(true, true, 1, 2, 132, 1));
  EXPECT_FALSE(cuda::attention_tc_pairs(true, true, 128, 8, 132, 0));
  EXPECT_FALSE(cuda::attention_tc_pairs(true, false, 128, 8, 132, -1));
  EXPECT_TRUE(cuda::attention_tc_pairs(true, false, 128, 8, 132, 1));
  EXPECT_EQ(cuda::attention_tc_shared_bytes(64, 64, 64, true), 2u * (64 * 64 + 2 * 64 * 64 + 2 * 64 * 64) + 1024);
  EXPECT_EQ(cuda::attention_tc_shared_bytes(64, 64, 64, true, true), 2u * (64 * 64 + 2 * 128 * 64 + 2 * 128 * 64) + 1024);
  EXPECT_EQ(cuda::attention_tc_shared_bytes(128, 128, 64, true), 2u * (64 * 128 + 2 * 64 * 128 + 2 * 64 * 128) + 1024);
}

// The float32 tensor-core kernel (codegen/cuda/attention_f32.cpp): head dims 32, 64, 128 (Q's
// fragments in registers up to 64, in shared memory at 128), d != dv, every mask kind, causal or not.
TEST(CudaAttention, EveryFloat32TensorCoreVariantCompilesWithNvrtc) {
  if (!cuda::check_compiles("extern \"C\" __global__ void probe() {}", "probe", "sm_90").ok())
    GTEST_SKIP() << "NVRTC is not available here";
  std::string why;
  EXPECT_FALSE(cuda::attention_f32_supports(DType::Float16, 64, 64, &why));
  EXPECT_FALSE(cuda::attention_f32_supports(DType::Float64, 64, 64, &why));
  EXPECT_FALSE(cuda::attention_f32_supports(DType::Float32, 48, 48, &why));
  EXPECT_EQ(why, "head dims other than 32, 64, 128");
  struct V {
    int64_t d, dv;
  };
  std::vector<NvrtcJob> jobs;
  const V all_dims[] = {V{32, 32}, V{64, 64}, V{128, 128}, V{32, 128}, V{128, 64}};
  for (int di = 0; di < 5; ++di)
    for (int mask = 0; mask < 4; ++mask)
      for (bool causal : {false, true}) {
        // The covering set: each (head dims, mask) once, the causal flag alternating with them.
        if (!every_variant() && causal != ((mask + di) % 2 == 1)) continue;
        const V dims = all_dims[di];
        ASSERT_TRUE(cuda::attention_f32_supports(DType::Float32, dims.d, dims.dv, &why));
        // Grids of many blocks at head dims up to 64 (Q from shared memory, 3 blocks an SM) too.
        for (bool many : {false, true}) {
          if (many && (dims.d > 64 || dims.dv > 64)) continue;
          // One TF32 product a product (LAZYFUSE_MATMUL_TF32=1) on alternate variants.
          const bool tf32 = every_variant() || (mask / 2 + many) % 2 == 0;
          for (bool x1 : {false, true}) {
            if (x1 && !tf32) continue;
            jobs.push_back({cuda::attention_f32_source(dims.d, dims.dv, mask, causal, many, x1), "lf_attention",
                            "d " + std::to_string(dims.d) + " dv " + std::to_string(dims.dv) + " mask " +
                                std::to_string(mask) + " causal " + std::to_string(causal) + " many " +
                                std::to_string(many) + " tf32x1 " + std::to_string(x1)});
          }
        }
      }
  expect_all_compile(jobs);
  EXPECT_TRUE(cuda::attention_f32_many_blocks(64, 64, 396, 132));
  EXPECT_FALSE(cuda::attention_f32_many_blocks(64, 64, 395, 132));
  EXPECT_FALSE(cuda::attention_f32_many_blocks(128, 128, 4096, 132));
  EXPECT_FALSE(cuda::attention_f32_many_blocks(32, 128, 4096, 132));
  // Q, one K and one V tile of (big, small) float pairs, rows padded by 4 and 2 pairs.
  EXPECT_EQ(cuda::attention_f32_shared_bytes(64, 64), 8u * (64 * 68 + 32 * 68 + 32 * 66));
  EXPECT_LE(cuda::attention_f32_shared_bytes(128, 128), 227u << 10);
}

// The float32 kernel with Hopper's warpgroup products (WG, sm_90a; V stored transposed): every head
// dim pair, mask kind and causal flag, three TF32 products a product or one.
TEST(CudaAttention, EveryFloat32WgmmaVariantCompilesWithNvrtc) {
  if (!cuda::check_compiles("extern \"C\" __global__ void probe() {}", "probe", "sm_90a").ok())
    GTEST_SKIP() << "NVRTC for sm_90a is not available here";
  std::string why;
  EXPECT_FALSE(cuda::attention_f32_wgmma_supports(64, 64, 8, 0, &why));
  EXPECT_EQ(why, "not an sm_90 GPU (wgmma is Hopper's)");
  EXPECT_FALSE(cuda::attention_f32_wgmma_supports(64, 64, 10, 0, &why));
  EXPECT_FALSE(cuda::attention_f32_wgmma_supports(48, 48, 9, 0, &why));
  EXPECT_EQ(why, "head dims other than 32, 64, 128");
  std::vector<NvrtcJob> jobs;
  const int64_t dims[][2] = {{32, 32}, {64, 64}, {128, 128}, {32, 128}, {128, 64}};
  for (int di = 0; di < 5; ++di)
    for (int mask = 0; mask < 4; ++mask)
      for (bool causal : {false, true}) {
        if (!every_variant() && causal != ((mask + di) % 2 == 1)) continue;
        const int64_t d = dims[di][0], dv = dims[di][1];
        ASSERT_TRUE(cuda::attention_f32_wgmma_supports(d, dv, 9, 0, &why)) << why;
        for (bool x1 : {false, true}) {
          if (x1 && !every_variant() && mask % 2 == 0) continue;
          jobs.push_back({cuda::attention_f32_source(d, dv, mask, causal, false, x1, /*wgmma=*/true), "lf_attention",
                          "wgmma float32 d " + std::to_string(d) + " dv " + std::to_string(dv) + " mask " +
                              std::to_string(mask) + " causal " + std::to_string(causal) + " tf32x1 " +
                              std::to_string(x1),
                          "sm_90a"});
        }
      }
  expect_all_compile(jobs);
  // 32 keys a tile; Q, K and V^T as big and small tiles after up to 1024 bytes of alignment.
  EXPECT_EQ(cuda::attention_f32_keys_per_tile(128, 128, true), 32);
  EXPECT_EQ(cuda::attention_f32_shared_bytes(64, 64, true), 8u * (64 * 64 + 32 * 64 + 32 * 64) + 1024);
  EXPECT_LE(cuda::attention_f32_shared_bytes(128, 128, true), 227u << 10);
}

TEST(CudaAttention, SharedMemoryFitsTheH100) {
  // 227 KiB a block with the opt-in attribute on sm_90: head dims up to 256 in float32, and in float64.
  EXPECT_LE(cuda::attention_shared_bytes(DType::Float32, 256, 256), 227u << 10);
  EXPECT_LE(cuda::attention_shared_bytes(DType::Float64, 256, 256), 227u << 10);
  EXPECT_LE(cuda::attention_shared_bytes(DType::Float32, 64, 64), 48u << 10);  // no opt-in needed
}

}  // namespace
}  // namespace lf
