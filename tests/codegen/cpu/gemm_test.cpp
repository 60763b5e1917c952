// Every CPU GEMM micro-kernel this host runs (portable, AVX2, AVX-512), not only the one it picks,
// against a plain triple loop in double: full and edge tiles, several slabs of k, strided
// (transposed) operands, broadcast batch dims, NaN and inf.
#include "codegen/cpu/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using lf::cpu::GemmIsa;

const char* isa_name(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kPortable: return "portable";
    case GemmIsa::kAvx2: return "avx2";
    case GemmIsa::kAvx512: return "avx512";
    default: return "best";
  }
}

// A[b, m, k] (row-major, or stored transposed when a_transposed) @ B[k, n] broadcast over b (B
// stored as [n, k] when b_transposed: linear's x @ w.T).
template <class T>
void check(GemmIsa isa, int64_t batch, int64_t m, int64_t n, int64_t k, bool a_transposed, bool specials,
           bool b_transposed = false) {
  std::mt19937 rng(static_cast<unsigned>(m * 131 + n * 7 + k));
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> a(static_cast<size_t>(batch * m * k)), b(static_cast<size_t>(k * n)), c(static_cast<size_t>(batch * m * n));
  for (T& x : a) x = static_cast<T>(u(rng));
  for (T& x : b) x = static_cast<T>(u(rng));
  if (specials && m == 1 && k > 2 && n > 2) {  // a row vector: NaN in A, inf in B
    a[1] = std::numeric_limits<T>::quiet_NaN();
    b[static_cast<size_t>(b_transposed ? 2 * k + 2 : 2 * n + 2)] = std::numeric_limits<T>::infinity();  // b[2][2]
  }
  if (specials && m > 2 && k > 2) {
    a[1] = std::numeric_limits<T>::quiet_NaN();  // a[0][0][1] (or a[0][1][0] transposed)
    b[static_cast<size_t>(2 * n + 1)] = std::numeric_limits<T>::infinity();  // b[2][1]
  }
  lf::cpu::GemmProblem p;
  p.dtype = std::is_same_v<T, float> ? lf::DType::Float32 : lf::DType::Float64;
  p.batch = {batch};
  p.m = m, p.n = n, p.k = k;
  p.a.data = a.data();
  p.a.strides = a_transposed ? lf::Shape{m * k, 1, m} : lf::Shape{m * k, k, 1};
  p.b.data = b.data();
  p.b.strides = b_transposed ? lf::Shape{0, 1, k} : lf::Shape{0, n, 1};  // one B for every batch
  p.c = c.data();
  int64_t rows_done = 0;
  lf::cpu::gemm(p, [&](int64_t r0, int64_t r1) { __atomic_fetch_add(&rows_done, r1 - r0, __ATOMIC_RELAXED); }, isa);
  EXPECT_EQ(rows_done, batch * m);

  const double eps = std::numeric_limits<T>::epsilon();
  for (int64_t bi = 0; bi < batch; ++bi) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (int64_t q = 0; q < k; ++q) {
          size_t ai = static_cast<size_t>(bi * m * k + (a_transposed ? q * m + i : i * k + q));
          want += static_cast<double>(a[ai]) * static_cast<double>(b[static_cast<size_t>(b_transposed ? j * k + q : q * n + j)]);
        }
        double got = c[static_cast<size_t>((bi * m + i) * n + j)];
        std::string where = std::string(isa_name(isa)) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                            std::to_string(k) + " at [" + std::to_string(bi) + ", " + std::to_string(i) + ", " +
                            std::to_string(j) + "]";
        if (std::isnan(want)) {
          ASSERT_TRUE(std::isnan(got)) << where;
        } else if (std::isinf(want)) {
          ASSERT_EQ(got, want) << where;
        } else {
          ASSERT_NEAR(got, want, 16 * static_cast<double>(k) * eps) << where;  // operands in [-1, 1]
        }
      }
    }
  }
}

std::vector<GemmIsa> available() {
  std::vector<GemmIsa> out;
  for (GemmIsa isa : {GemmIsa::kPortable, GemmIsa::kAvx2, GemmIsa::kAvx512})
    if (lf::cpu::gemm_isa_available(isa)) out.push_back(isa);
  return out;
}

TEST(CpuGemm, EveryMicroKernelMatchesALoop) {
  for (GemmIsa isa : available()) {
    SCOPED_TRACE(isa_name(isa));
    // Whole tiles of every kernel (12 x 32 covers 6 x 16 and 4 x 16), edge tiles, two slabs of k.
    check<float>(isa, 1, 48, 64, 64, false, false);
    check<float>(isa, 2, 13, 37, 300, false, true);
    check<float>(isa, 1, 25, 19, 7, true, false);
    check<double>(isa, 1, 24, 32, 40, false, false);
    check<double>(isa, 2, 11, 9, 600, true, true);
    check<float>(isa, 1, 1, 1, 1, false, false);
    // n == 1: the matrix-vector path (K around its 32 lanes, no K at all).
    for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{31}, int64_t{32}, int64_t{33}, int64_t{300}}) {
      check<float>(isa, 3, 37, 1, k, false, true);
      check<float>(isa, 1, 500, 1, k, true, false);
      check<double>(isa, 2, 19, 1, k, false, true);
    }
    // m == 1: the row-vector path (column blocks of 64 around a task's edges, B either way).
    for (int64_t n : {int64_t{2}, int64_t{63}, int64_t{65}, int64_t{1000}, int64_t{4099}})
      for (int64_t k : {int64_t{0}, int64_t{1}, int64_t{33}, int64_t{300}}) {
        check<float>(isa, 2, 1, n, k, false, true);
        check<float>(isa, 1, 1, n, k, false, true, /*b_transposed=*/true);
        check<double>(isa, 3, 1, n, k, true, true);
        check<double>(isa, 1, 1, n, k, false, false, /*b_transposed=*/true);
      }
  }
}

TEST(CpuGemm, TheBestKernelIsOneOfTheAvailable) {
  EXPECT_TRUE(lf::cpu::gemm_isa_available(GemmIsa::kPortable));
  std::string best = lf::cpu::gemm_kernel_name(lf::DType::Float32);
  if (lf::cpu::gemm_isa_available(GemmIsa::kAvx512)) {
    EXPECT_EQ(best.rfind("avx512", 0), 0u) << best;
  } else if (lf::cpu::gemm_isa_available(GemmIsa::kAvx2)) {
    EXPECT_EQ(best.rfind("avx2", 0), 0u) << best;
  } else {
    EXPECT_EQ(best.rfind("portable", 0), 0u) << best;
  }
}

}  // namespace
