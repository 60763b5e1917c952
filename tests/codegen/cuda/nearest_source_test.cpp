// The GPU nearest kernel's CUDA C (codegen/cuda/nearest.cpp) compiles with NVRTC for every float
// dtype and row width, without a GPU. Its results are checked against the reference by
// tests/codegen/fuse/nearest_test.cpp on a machine with one (there the default device is CUDA).
#include <gtest/gtest.h>

#include "codegen/cuda/backend.h"
#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda/ops.h"

TEST(CudaNearest, SourceCompilesWithNvrtcForEveryDtype) {
  if (!lf::cuda::check_compiles("extern \"C\" __global__ void probe() {}", "probe", "sm_90").ok())
    GTEST_SKIP() << "NVRTC is not available here";
  for (lf::DType dt : {lf::DType::Float16, lf::DType::BFloat16, lf::DType::Float32, lf::DType::Float64}) {
    for (int64_t dim : {0, 1, 16, 32}) {
      std::string source = std::string(lf::cuda::kPrelude) + lf::cuda::nearest_source(dt, dim);
      lf::Status s = lf::cuda::check_compiles(source, "lf_nearest", "sm_90");
      EXPECT_TRUE(s.ok()) << lf::dtype_name(dt) << " dim " << dim << ":\n" << s.message();
    }
  }
}
