// onednn_abi.h (the oneDNN 2.x ABI subset declared by hand, so that building needs no oneDNN)
// against the real dnnl.h where the build machine has it (Debian's libdnnl-dev, which dev.sh
// installs; tests/CMakeLists.txt defines LF_HAVE_DNNL_H for this file alone): every constant and
// the descriptors' sizes. Then, where libdnnl.so.2 loads, a convolution through it agrees with our
// own path on a problem of every shape class.
#include <gtest/gtest.h>

#include <cstddef>

#include "codegen/cpu/onednn.h"
#include "codegen/cpu/onednn_abi.h"
#include "codegen/test_util.h"
#include "lazyfuse/lazyfuse.h"
#include "runtime/config.h"

#ifdef LF_HAVE_DNNL_H
#include <oneapi/dnnl/dnnl.h>

namespace dnnl = lf::cpu::dnnl;
static_assert(DNNL_VERSION_MAJOR == 2, "the ABI subset is oneDNN 2.x's");
static_assert(dnnl::kF16 == dnnl_f16 && dnnl::kBF16 == dnnl_bf16 && dnnl::kF32 == dnnl_f32);
static_assert(dnnl::kAny == dnnl_format_tag_any && dnnl::kX == dnnl_x && dnnl::kNchw == dnnl_nchw &&
              dnnl::kOihw == dnnl_oihw && dnnl::kGoihw == dnnl_goihw);
static_assert(dnnl::kCpu == dnnl_cpu && dnnl::kStreamDefault == dnnl_stream_default_flags &&
              dnnl::kForwardInference == dnnl_forward_inference && dnnl::kConvolutionDirect == dnnl_convolution_direct);
static_assert(dnnl::kArgSrc == DNNL_ARG_SRC && dnnl::kArgDst == DNNL_ARG_DST && dnnl::kArgWeights == DNNL_ARG_WEIGHTS &&
              dnnl::kArgFrom == DNNL_ARG_FROM && dnnl::kArgTo == DNNL_ARG_TO);
static_assert(dnnl::kQueryImplInfo == dnnl_query_impl_info_str && dnnl::kQuerySrcMd == dnnl_query_src_md &&
              dnnl::kQueryWeightsMd == dnnl_query_weights_md && dnnl::kQueryDstMd == dnnl_query_dst_md);
static_assert(dnnl_success == 0 && DNNL_MAX_NDIMS == 12);
static_assert(sizeof(dnnl_memory_desc_t) == dnnl::kMemoryDescBytes && sizeof(dnnl::MemoryDesc) >= sizeof(dnnl_memory_desc_t));
static_assert(sizeof(dnnl_convolution_desc_t) == dnnl::kConvDescBytes && sizeof(dnnl::ConvDesc) >= sizeof(dnnl_convolution_desc_t));
static_assert(sizeof(dnnl::ExecArg) == sizeof(dnnl_exec_arg_t) && offsetof(dnnl::ExecArg, memory) == offsetof(dnnl_exec_arg_t, memory));
static_assert(offsetof(dnnl::Version, hash) == offsetof(dnnl_version_t, hash) && sizeof(dnnl::Version) == sizeof(dnnl_version_t));
#endif

namespace {

TEST(OnednnAbi, MatchesTheHeader) {
#ifdef LF_HAVE_DNNL_H
  SUCCEED() << "checked at compile time against oneDNN " << DNNL_VERSION_MAJOR << "." << DNNL_VERSION_MINOR;
#else
  GTEST_SKIP() << "no oneapi/dnnl/dnnl.h on this machine: the ABI subset is unchecked";
#endif
}

// The same convolutions through oneDNN and through im2col + the packed GEMM, each against the
// reference: the ops' tests (exec/conv_test.cpp) run both paths on many more cases.
TEST(Onednn, AgreesWithOurOwnPath) {
  if (!lf::cpu::onednn::unavailable().empty()) GTEST_SKIP() << lf::cpu::onednn::unavailable();
  struct Restore {
    lf::Device device = lf::default_device();
    std::string conv = lf::rt::mutable_config().conv;
    ~Restore() {
      lf::set_default_device(device);
      lf::rt::mutable_config().conv = conv;
    }
  } restore;
  lf::set_default_device(lf::Device::cpu());
  lf::test::Rng rng(7);
  auto random = [&](lf::Shape s) {
    std::vector<double> v(static_cast<size_t>(lf::shape_numel(s)));
    for (double& x : v) x = rng.uniform(-1, 1);
    lf::Tensor t = lf::from_vector(v, s);
    lf::sync();
    return t;
  };
  lf::Tensor x = random({3, 16, 12, 10}), w = random({24, 16, 3, 3}), wg = random({24, 4, 3, 3}), b = random({24});
  for (const char* mode : {"auto", "generated"}) {
    lf::rt::mutable_config().conv = mode;
    lf::Tensor y = lf::relu(lf::conv2d(x, w, b, 1, 1)) + lf::conv2d(x, wg, {}, 2, {1, 0}, 1, 4) .mean({2, 3}, true);
    std::string diff = lf::test::compare(lf::test::reference_values(y), lf::test::fused_values(y), lf::test::Tolerance{1e-4, 1e-4});
    EXPECT_EQ(diff, "") << mode;
  }
}

}  // namespace
