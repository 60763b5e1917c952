// The GPU sort's CUDA C (codegen/cuda/sort_kernels.cpp) compiles with NVRTC for every key dtype,
// without a GPU. Its results are checked against the reference by tests/codegen/exec/sort_test.cpp
// on a machine with one (there the default device is CUDA).
#include <gtest/gtest.h>

#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda/nvrtc_batch.h"
#include "codegen/cuda/sort.h"

TEST(CudaSort, SourceCompilesWithNvrtcForEveryDtype) {
  if (!lf::cuda::check_compiles("extern \"C\" __global__ void probe() {}", "probe", "sm_90").ok())
    GTEST_SKIP() << "NVRTC is not available here";
  std::vector<lf::test::NvrtcJob> jobs;
  for (lf::DType dt : {lf::DType::Bool, lf::DType::Int32, lf::DType::Int64, lf::DType::Float16, lf::DType::BFloat16,
                       lf::DType::Float32, lf::DType::Float64})
    jobs.push_back({lf::cuda::sort_source(dt), "lf_sort", lf::dtype_name(dt)});
  lf::test::expect_all_compile(jobs);
}
