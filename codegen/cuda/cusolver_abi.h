// The ABI subset of cuSOLVER 11 / 12's cusolverDn.h that cusolver.cpp calls, declared here so that
// building needs no cuSOLVER header (the library is loaded at run time). Every entry point has an S
// (float) and a D (double) twin of one signature, so Routines<T> holds either.
// tests/codegen/cuda/cusolver_abi_test.cpp checks the constants and the signatures against the real
// header where one is installed.
#pragma once

// The opaque types by cusolverDn.h's own global names, so that the ABI test can compare signatures.
struct cusolverDnContext;
struct syevjInfo;
struct gesvdjInfo;
struct CUstream_st;

namespace lf::cuda::solver {

using Status = int;  // cusolverStatus_t; 0 is CUSOLVER_STATUS_SUCCESS
using Handle = ::cusolverDnContext*;
using SyevjInfo = ::syevjInfo*;
using GesvdjInfo = ::gesvdjInfo*;
using Stream = ::CUstream_st*;  // cudaStream_t, the Driver API's CUstream

// cublasFillMode_t, cublasOperation_t, cusolverEigMode_t
constexpr int kLower = 0, kUpper = 1;
constexpr int kOpN = 0, kOpT = 1;
constexpr int kNoVectors = 0, kVectors = 1;

template <typename T>
struct Routines {
  Status (*potrf_size)(Handle, int uplo, int n, T* a, int lda, int* lwork) = nullptr;
  Status (*potrf)(Handle, int uplo, int n, T* a, int lda, T* work, int lwork, int* info) = nullptr;
  Status (*potrf_batched)(Handle, int uplo, int n, T* a[], int lda, int* info, int batch) = nullptr;
  Status (*getrf_size)(Handle, int m, int n, T* a, int lda, int* lwork) = nullptr;
  Status (*getrf)(Handle, int m, int n, T* a, int lda, T* work, int* ipiv, int* info) = nullptr;
  Status (*getrs)(Handle, int trans, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b, int ldb,
                  int* info) = nullptr;
  Status (*syevd_size)(Handle, int jobz, int uplo, int n, const T* a, int lda, const T* w, int* lwork) = nullptr;
  Status (*syevd)(Handle, int jobz, int uplo, int n, T* a, int lda, T* w, T* work, int lwork, int* info) = nullptr;
  Status (*syevj_batched_size)(Handle, int jobz, int uplo, int n, const T* a, int lda, const T* w, int* lwork,
                               SyevjInfo, int batch) = nullptr;
  Status (*syevj_batched)(Handle, int jobz, int uplo, int n, T* a, int lda, T* w, T* work, int lwork, int* info,
                          SyevjInfo, int batch) = nullptr;
  Status (*geqrf_size)(Handle, int m, int n, T* a, int lda, int* lwork) = nullptr;
  Status (*geqrf)(Handle, int m, int n, T* a, int lda, T* tau, T* work, int lwork, int* info) = nullptr;
  Status (*orgqr_size)(Handle, int m, int n, int k, const T* a, int lda, const T* tau, int* lwork) = nullptr;
  Status (*orgqr)(Handle, int m, int n, int k, T* a, int lda, const T* tau, T* work, int lwork, int* info) = nullptr;
  Status (*gesvdj_size)(Handle, int jobz, int econ, int m, int n, const T* a, int lda, const T* s, const T* u, int ldu,
                        const T* v, int ldv, int* lwork, GesvdjInfo) = nullptr;
  Status (*gesvdj)(Handle, int jobz, int econ, int m, int n, T* a, int lda, T* s, T* u, int ldu, T* v, int ldv, T* work,
                   int lwork, int* info, GesvdjInfo) = nullptr;
  Status (*gesvdj_batched_size)(Handle, int jobz, int m, int n, const T* a, int lda, const T* s, const T* u, int ldu,
                                const T* v, int ldv, int* lwork, GesvdjInfo, int batch) = nullptr;
  Status (*gesvdj_batched)(Handle, int jobz, int m, int n, T* a, int lda, T* s, T* u, int ldu, T* v, int ldv, T* work,
                           int lwork, int* info, GesvdjInfo, int batch) = nullptr;
};

struct Api {
  Status (*create)(Handle*) = nullptr;
  Status (*set_stream)(Handle, Stream) = nullptr;
  Status (*create_syevj_info)(SyevjInfo*) = nullptr;
  Status (*create_gesvdj_info)(GesvdjInfo*) = nullptr;
  Routines<float> s;
  Routines<double> d;
};

}  // namespace lf::cuda::solver
