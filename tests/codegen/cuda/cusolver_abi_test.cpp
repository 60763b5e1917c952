// cusolver_abi.h (the cuSOLVER ABI subset declared by hand, so that building needs no cuSOLVER) against
// the real cusolverDn.h where the build machine has it (tests/CMakeLists.txt adds its folder for this
// file alone): every constant, and every entry point's signature with its enums read as int.
#include "codegen/cuda/cusolver_abi.h"

#include <gtest/gtest.h>

#include <type_traits>

#ifdef LF_HAVE_CUSOLVER_H
#include <cusolverDn.h>

namespace solver = lf::cuda::solver;
static_assert(CUSOLVER_VER_MAJOR == 11 || CUSOLVER_VER_MAJOR == 12, "the ABI subset is cuSOLVER 11's and 12's");
static_assert(CUSOLVER_STATUS_SUCCESS == 0);
static_assert(solver::kLower == CUBLAS_FILL_MODE_LOWER && solver::kUpper == CUBLAS_FILL_MODE_UPPER);
static_assert(solver::kOpN == CUBLAS_OP_N && solver::kOpT == CUBLAS_OP_T);
static_assert(solver::kNoVectors == CUSOLVER_EIG_MODE_NOVECTOR && solver::kVectors == CUSOLVER_EIG_MODE_VECTOR);
static_assert(sizeof(cusolverStatus_t) == sizeof(int) && sizeof(cublasFillMode_t) == sizeof(int) &&
              sizeof(cublasOperation_t) == sizeof(int) && sizeof(cusolverEigMode_t) == sizeof(int));
static_assert(std::is_same_v<cusolverDnHandle_t, solver::Handle> && std::is_same_v<syevjInfo_t, solver::SyevjInfo> &&
              std::is_same_v<gesvdjInfo_t, solver::GesvdjInfo> && std::is_same_v<cudaStream_t, solver::Stream>);

namespace {
// A real entry point's type with each enum (passed as an int in the C ABI) read as int.
template <typename A>
using AsInt = std::conditional_t<std::is_enum_v<A>, int, A>;
template <typename R, typename... A>
auto erased(R (*)(A...)) -> AsInt<R> (*)(AsInt<A>...);
}  // namespace
#define LF_SAME(real, ours) static_assert(std::is_same_v<decltype(erased(&real)), decltype(ours)>, #real)
#define LF_SAME_SD(rest, field)                               \
  LF_SAME(cusolverDnS##rest, solver::Routines<float>::field); \
  LF_SAME(cusolverDnD##rest, solver::Routines<double>::field)
LF_SAME(cusolverDnCreate, solver::Api::create);
LF_SAME(cusolverDnSetStream, solver::Api::set_stream);
LF_SAME(cusolverDnCreateSyevjInfo, solver::Api::create_syevj_info);
LF_SAME(cusolverDnCreateGesvdjInfo, solver::Api::create_gesvdj_info);
LF_SAME_SD(potrf_bufferSize, potrf_size);
LF_SAME_SD(potrf, potrf);
LF_SAME_SD(potrfBatched, potrf_batched);
LF_SAME_SD(getrf_bufferSize, getrf_size);
LF_SAME_SD(getrf, getrf);
LF_SAME_SD(getrs, getrs);
LF_SAME_SD(syevd_bufferSize, syevd_size);
LF_SAME_SD(syevd, syevd);
LF_SAME_SD(syevjBatched_bufferSize, syevj_batched_size);
LF_SAME_SD(syevjBatched, syevj_batched);
LF_SAME_SD(geqrf_bufferSize, geqrf_size);
LF_SAME_SD(geqrf, geqrf);
LF_SAME_SD(orgqr_bufferSize, orgqr_size);
LF_SAME_SD(orgqr, orgqr);
LF_SAME_SD(gesvdj_bufferSize, gesvdj_size);
LF_SAME_SD(gesvdj, gesvdj);
LF_SAME_SD(gesvdjBatched_bufferSize, gesvdj_batched_size);
LF_SAME_SD(gesvdjBatched, gesvdj_batched);

TEST(CusolverAbi, MatchesHeader) { SUCCEED() << "checked at compile time against cuSOLVER " << CUSOLVER_VER_MAJOR; }
#else
TEST(CusolverAbi, MatchesHeader) { GTEST_SKIP() << "cusolverDn.h not installed"; }
#endif
