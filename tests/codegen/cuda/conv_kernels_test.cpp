// The GPU convolution's pieces that can be checked without a GPU: the generated convolution and
// pooling kernels compile with NVRTC for sm_90 (LAZYFUSE_GOLDEN_CUDA_DIR=dir also writes them there,
// to compile with `nvcc -ptx -arch=sm_90`), cuDNN loads with every entry point bound where it is
// installed, and the layouts cuDNN is handed or not. The runs on a GPU are in
// tests/codegen/exec/conv_gpu_test.cpp.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "codegen/backend/kernel.h"
#include "codegen/cuda/conv_kernels.h"
#include "codegen/cuda/cudnn.h"
#include "codegen/cuda/nvrtc.h"

namespace {

using lf::DType;

TEST(CudaConvKernels, CompileWithNvrtcForEveryFloatDtype) {
  const char* dir = std::getenv("LAZYFUSE_GOLDEN_CUDA_DIR");
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    for (auto [name, source] : {std::pair{lf::cuda::conv_kernel_name(d), lf::cuda::conv_kernel_source(d)},
                                std::pair{lf::cuda::pool_kernel_name(d), lf::cuda::pool_kernel_source(d)}}) {
      EXPECT_NE(source.find("extern \"C\" __global__ void __launch_bounds__(256) " + name + "("), std::string::npos) << name;
      if (dir) std::ofstream(std::string(dir) + "/" + name + ".cu") << source;
      if (!lf::cuda::nvrtc_status().ok()) continue;
      lf::Status s = lf::cuda::check_compiles(source, name, "sm_90");
      EXPECT_TRUE(s.ok()) << name << ":\n" << s.message() << "\n----- source -----\n" << source;
    }
  }
  if (!lf::cuda::nvrtc_status().ok()) GTEST_SKIP() << "NVRTC is not available here: only the sources were checked";
}

TEST(CudaConvKernels, CudnnLoadsWithEveryEntryPoint) {
  std::string s = lf::cuda::cudnn_status();
  if (s.find("not found") != std::string::npos) GTEST_SKIP() << s;
  // Found: every function bound and the version 9.x (else the status says what is missing).
  EXPECT_EQ(s.rfind("cuDNN 9", 0), 0u) << s;
}

// The ConvCall of a [2, 8, 9, 9] input and [16, 8, 3, 3] weights with padding 1 (no group runs it).
struct Call {
  lf::fuse::Group group;
  lf::fuse::Partition partition;
  lf::backend::RunOptions options;
  lf::CacheStats stats;
  lf::backend::ConvCall call;
  Call() : call(make()) {
    call.params.pad_top = call.params.pad_bottom = call.params.pad_left = call.params.pad_right = 1;
    call.x.strides = {648, 81, 9, 1};
    call.w.strides = {72, 9, 3, 1};
  }
  lf::backend::ConvCall make() {
    return {{group, partition, 0, options, stats}, DType::Float32, 2, 8, 9, 9, 16, 3, 3, 9, 9, {}, {}, {}, nullptr, nullptr, 0, 0};
  }
};

TEST(CudaConvKernels, CudnnDeclinesWhatItCannotRead) {
  Call same;  // "same" with an even kernel pads one more at the bottom
  same.call.params.pad_bottom = 2;
  EXPECT_NE(std::string(lf::cuda::cudnn_supports(same.call).message()).find("asymmetric padding"), std::string::npos);
  Call broadcast;  // an expanded input
  broadcast.call.x.strides = {0, 81, 9, 1};
  EXPECT_NE(std::string(lf::cuda::cudnn_supports(broadcast.call).message()).find("broadcast"), std::string::npos);
  Call grouped;  // 2 groups of 4 channels: NaN would cross groups in cuDNN
  grouped.call.params.groups = 2;
  EXPECT_NE(std::string(lf::cuda::cudnn_supports(grouped.call).message()).find("not depthwise"), std::string::npos);
  Call ints;
  ints.call.dtype = DType::Int32;
  EXPECT_FALSE(lf::cuda::cudnn_supports(ints.call).ok());
  // What it can read (checked last: these need the library loaded).
  Call c;
  lf::Status plain = lf::cuda::cudnn_supports(c.call);
  if (plain.code() == lf::StatusCode::kUnavailable) GTEST_SKIP() << plain.message();
  EXPECT_TRUE(plain.ok()) << plain.message();
  Call nhwc;  // channels last: strides only, cuDNN reads it
  nhwc.call.x.strides = {648, 1, 72, 8};
  EXPECT_TRUE(lf::cuda::cudnn_supports(nhwc.call).ok());
  Call depthwise;  // 8 groups of one channel: cuDNN's
  depthwise.call.params.groups = 8;
  depthwise.call.out_channels = 16;
  EXPECT_TRUE(lf::cuda::cudnn_supports(depthwise.call).ok());
}

}  // namespace
