// The CUDA flash-attention kernel (codegen/cuda/attention.cpp) compiles with NVRTC for sm_90 in
// every variant the backend can ask for. Runs without a GPU (NVRTC only); the kernel's results are
// checked on a GPU by tests/codegen/fuse/attention_test.cpp, whose default device is CUDA there.
#include <gtest/gtest.h>

#include "codegen/cuda/attention.h"
#include "codegen/cuda/nvrtc.h"

namespace lf {
namespace {

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
  for (const V& v : variants) {
    std::string src = cuda::attention_source(v.dtype, v.d, v.dv, v.mask, v.causal);
    Status s = cuda::check_compiles(src, "lf_attention", "sm_90");
    EXPECT_TRUE(s.ok()) << dtype_name(v.dtype) << " d " << v.d << " dv " << v.dv << " mask " << v.mask << ":\n"
                        << s.message();
  }
}

// The tensor-core kernel (codegen/cuda/attention_tc.cpp): every 16-bit dtype, head dims 32, 64,
// 128 (and d != dv), mask kind and causal flag, with no spills beyond a few bytes is checked by
// hand with ptxas -v (README, "Attention").
TEST(CudaAttention, EveryTensorCoreVariantCompilesWithNvrtc) {
  if (!cuda::check_compiles("extern \"C\" __global__ void probe() {}", "probe", "sm_90").ok())
    GTEST_SKIP() << "NVRTC is not available here";
  std::string why;
  EXPECT_FALSE(cuda::attention_tc_supports(DType::Float32, 64, 64, &why));
  EXPECT_FALSE(cuda::attention_tc_supports(DType::BFloat16, 48, 48, &why));
  EXPECT_FALSE(cuda::attention_tc_supports(DType::Float16, 64, 256, &why));
  for (DType dt : {DType::Float16, DType::BFloat16})
    for (int64_t d : {32, 64, 128})
      for (int mask = 0; mask < 4; ++mask)
        for (bool causal : {false, true})
          for (int requested : {0, 64, 128}) {
            ASSERT_TRUE(cuda::attention_tc_supports(dt, d, d, &why));
            const int rows = cuda::attention_tc_rows(d, d, mask, requested);
            if (requested != 0 && rows == cuda::attention_tc_rows(d, d, mask, 0)) continue;  // compiled already
            Status s =
                cuda::check_compiles(cuda::attention_tc_source(dt, d, d, mask, causal, rows), "lf_attention", "sm_90");
            EXPECT_TRUE(s.ok()) << dtype_name(dt) << " d " << d << " mask " << mask << " causal " << causal << " rows "
                                << rows << ":\n"
                                << s.message();
          }
  Status s =
      cuda::check_compiles(cuda::attention_tc_source(DType::BFloat16, 32, 128, 1, true, 64), "lf_attention", "sm_90");
  EXPECT_TRUE(s.ok()) << "d 32 dv 128:\n" << s.message();
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
  for (V dims : {V{32, 32}, V{64, 64}, V{128, 128}, V{32, 128}, V{128, 64}})
    for (int mask = 0; mask < 4; ++mask)
      for (bool causal : {false, true}) {
        ASSERT_TRUE(cuda::attention_f32_supports(DType::Float32, dims.d, dims.dv, &why));
        Status s =
            cuda::check_compiles(cuda::attention_f32_source(dims.d, dims.dv, mask, causal), "lf_attention", "sm_90");
        EXPECT_TRUE(s.ok()) << "d " << dims.d << " dv " << dims.dv << " mask " << mask << " causal " << causal << ":\n"
                            << s.message();
      }
  // Q, one K and one V tile of (big, small) float pairs, rows padded by 4 and 2 pairs.
  EXPECT_EQ(cuda::attention_f32_shared_bytes(64, 64), 8u * (64 * 68 + 32 * 68 + 32 * 66));
  EXPECT_LE(cuda::attention_f32_shared_bytes(128, 128), 227u << 10);
}

TEST(CudaAttention, SharedMemoryFitsTheH100) {
  // 227 KiB a block with the opt-in attribute on sm_90: head dims up to 256 in float32, and in float64.
  EXPECT_LE(cuda::attention_shared_bytes(DType::Float32, 256, 256), 227u << 10);
  EXPECT_LE(cuda::attention_shared_bytes(DType::Float64, 256, 256), 227u << 10);
  EXPECT_LE(cuda::attention_shared_bytes(DType::Float32, 64, 64), 48u << 10);  // no opt-in needed
}

}  // namespace
}  // namespace lf
