// The CPU GEMM (see cpu_gemm.h). Structure, after Goto & van de Geijn and BLIS:
//   B is packed once per batch into slabs of kKc rows, each slab cut into NR-column slivers;
//   the rows of C are cut into blocks of whole MR-row slivers, spread evenly over the tasks for
//   the thread pool; a task packs its rows of A, slab by slab, into MR-row slivers and runs the
//   micro-kernel for every (sliver of A, sliver of B) pair, accumulating an MR x NR tile in
//   registers and storing it into C (the first slab) or adding it (the later ones), in C itself
//   when C has the compute type, else in a buffer rounded to the output dtype at the end; then it
//   hands its rows to the epilogue while they are still in cache.
// The micro-kernel is AVX-512 (12 x 32 floats or 12 x 16 doubles of accumulators in 24 zmm
// registers, fed by two vector loads and one broadcast per step) where the CPU has it, else AVX2
// with FMA (6 x 16 floats or 6 x 8 doubles in 12 ymm registers, the same shape of step: BLIS's
// Haswell kernel), and a portable loop nest that the compiler vectorizes for the baseline ISA
// elsewhere (aarch64) and for integers.
#include "codegen/cpu/gemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "codegen/cpu/backend.h"
#include "codegen/ir/dtype_dispatch.h"
#include "runtime/thread_pool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define LF_GEMM_X86 1
#endif

namespace lf::cpu {
namespace {

constexpr int64_t kKc = 256;        // rows of a B slab: an A sliver plus a B sliver fit in L1
constexpr int64_t kMaxRowBlock = 192;  // rows of C per task: its packed A slab stays in L2
constexpr int64_t kMaxTile = 12 * 32;  // the largest micro-kernel tile (MR x NR)

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

bool cpu_has_avx512() {
#if LF_GEMM_X86
  // Not __builtin_cpu_supports: it links libgcc's cpuid scan in as a static constructor that every
  // program pays for at start-up (each cpuid traps to the hypervisor in a VM).
  static const bool has = cpu::host_has_avx512f();
  return has;
#else
  return false;
#endif
}

bool cpu_has_avx2_fma() {
#if LF_GEMM_X86
  static const bool has = cpu::host_has_avx2_fma();
  return has;
#else
  return false;
#endif
}

// Per-thread scratch that grows and is reused, so a task allocates (and page-faults) nothing in
// steady state.
template <class T>
T* scratch(std::vector<T>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return v.data();
}

// ---- micro-kernels: c[MR x NR] (row stride ldc) += a-sliver (kc x MR) * b-sliver (kc x NR)

#if LF_GEMM_X86
struct Avx512F32 {
  using T = float;
  using V = __m512;
  static constexpr int kMr = 12, kLanes = 16;
  __attribute__((target("avx512f"), always_inline)) static V zero() { return _mm512_setzero_ps(); }
  __attribute__((target("avx512f"), always_inline)) static V load(const T* p) { return _mm512_loadu_ps(p); }
  __attribute__((target("avx512f"), always_inline)) static V bcast(T x) { return _mm512_set1_ps(x); }
  __attribute__((target("avx512f"), always_inline)) static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  __attribute__((target("avx512f"), always_inline)) static void add_store(T* p, V v) {
    _mm512_storeu_ps(p, _mm512_add_ps(_mm512_loadu_ps(p), v));
  }
  __attribute__((target("avx512f"), always_inline)) static void store(T* p, V v) { _mm512_storeu_ps(p, v); }
};

struct Avx512F64 {
  using T = double;
  using V = __m512d;
  static constexpr int kMr = 12, kLanes = 8;
  __attribute__((target("avx512f"), always_inline)) static V zero() { return _mm512_setzero_pd(); }
  __attribute__((target("avx512f"), always_inline)) static V load(const T* p) { return _mm512_loadu_pd(p); }
  __attribute__((target("avx512f"), always_inline)) static V bcast(T x) { return _mm512_set1_pd(x); }
  __attribute__((target("avx512f"), always_inline)) static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  __attribute__((target("avx512f"), always_inline)) static void add_store(T* p, V v) {
    _mm512_storeu_pd(p, _mm512_add_pd(_mm512_loadu_pd(p), v));
  }
  __attribute__((target("avx512f"), always_inline)) static void store(T* p, V v) { _mm512_storeu_pd(p, v); }
};

#define LF_AVX2 __attribute__((target("avx2,fma"), always_inline))
struct Avx2F32 {
  using T = float;
  using V = __m256;
  static constexpr int kMr = 6, kLanes = 8;
  LF_AVX2 static V zero() { return _mm256_setzero_ps(); }
  LF_AVX2 static V load(const T* p) { return _mm256_loadu_ps(p); }
  LF_AVX2 static V bcast(T x) { return _mm256_set1_ps(x); }
  LF_AVX2 static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  LF_AVX2 static void add_store(T* p, V v) { _mm256_storeu_ps(p, _mm256_add_ps(_mm256_loadu_ps(p), v)); }
  LF_AVX2 static void store(T* p, V v) { _mm256_storeu_ps(p, v); }
};

struct Avx2F64 {
  using T = double;
  using V = __m256d;
  static constexpr int kMr = 6, kLanes = 4;
  LF_AVX2 static V zero() { return _mm256_setzero_pd(); }
  LF_AVX2 static V load(const T* p) { return _mm256_loadu_pd(p); }
  LF_AVX2 static V bcast(T x) { return _mm256_set1_pd(x); }
  LF_AVX2 static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  LF_AVX2 static void add_store(T* p, V v) { _mm256_storeu_pd(p, _mm256_add_pd(_mm256_loadu_pd(p), v)); }
  LF_AVX2 static void store(T* p, V v) { _mm256_storeu_pd(p, v); }
};
#undef LF_AVX2

// Two vectors of NR per row: 2 * kMr accumulators, 2 loads of B and kMr broadcasts of A per step.
// The first slab of k stores the tile, later ones add to it (so C needs no zeroing). One body,
// stamped out once per instruction set (GCC inlines target-specific intrinsics only into a
// function of that target).
#define LF_MICRO_KERNEL(NAME, TARGET)                                                                   \
  template <class X>                                                                                    \
  __attribute__((target(TARGET))) void NAME(int64_t kc, const typename X::T* a, const typename X::T* b, \
                                            typename X::T* c, int64_t ldc, bool accumulate) {           \
    constexpr int kMr = X::kMr, kL = X::kLanes;                                                         \
    typename X::V acc[kMr][2];                                                                          \
    _Pragma("GCC unroll 12") for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = X::zero();          \
    for (int64_t p = 0; p < kc; ++p) {                                                                  \
      typename X::V b0 = X::load(b), b1 = X::load(b + kL);                                              \
      _Pragma("GCC unroll 12") for (int i = 0; i < kMr; ++i) {                                          \
        typename X::V ai = X::bcast(a[i]);                                                              \
        acc[i][0] = X::fma(ai, b0, acc[i][0]);                                                          \
        acc[i][1] = X::fma(ai, b1, acc[i][1]);                                                          \
      }                                                                                                 \
      a += kMr;                                                                                         \
      b += 2 * kL;                                                                                      \
    }                                                                                                   \
    _Pragma("GCC unroll 12") for (int i = 0; i < kMr; ++i) {                                           \
      if (accumulate) {                                                                                 \
        X::add_store(c + i * ldc, acc[i][0]);                                                           \
        X::add_store(c + i * ldc + kL, acc[i][1]);                                                      \
      } else {                                                                                          \
        X::store(c + i * ldc, acc[i][0]);                                                               \
        X::store(c + i * ldc + kL, acc[i][1]);                                                          \
      }                                                                                                 \
    }                                                                                                   \
  }
LF_MICRO_KERNEL(micro_avx512, "avx512f")
LF_MICRO_KERNEL(micro_avx2, "avx2,fma")
#undef LF_MICRO_KERNEL
#endif  // LF_GEMM_X86

// A float32 row of A dotted with B's column (both contiguous) in 32 lanes added pairwise in a
// fixed order at the end, for matrix-vector products (Gemm::run_gemv); one body a target, as above.
#define LF_DOT(NAME, ATTRIBUTES)                                                \
  ATTRIBUTES float NAME(const float* a, const float* x, int64_t k) {          \
    constexpr int kLanes = 32;                                                 \
    float acc[kLanes] = {};                                                    \
    int64_t p = 0;                                                             \
    for (; p + kLanes <= k; p += kLanes)                                       \
      for (int l = 0; l < kLanes; ++l) acc[l] += a[p + l] * x[p + l];          \
    for (int l = 0; l < 16; ++l) acc[l] += acc[l + 16];                        \
    for (int l = 0; l < 8; ++l) acc[l] += acc[l + 8];                          \
    for (int l = 0; l < 4; ++l) acc[l] += acc[l + 4];                          \
    for (int l = 0; l < 2; ++l) acc[l] += acc[l + 2];                          \
    acc[0] += acc[1];                                                          \
    float s = acc[0];                                                          \
    for (; p < k; ++p) s += a[p] * x[p];                                       \
    return s;                                                                  \
  }
#if LF_GEMM_X86
LF_DOT(dot_f32_avx512, __attribute__((target("avx512f"))))
LF_DOT(dot_f32_avx2, __attribute__((target("avx2,fma"))))
LF_DOT(dot_f32_portable, __attribute__((target("default"))))
#else
LF_DOT(dot_f32_portable, )  // the baseline ISA (aarch64: NEON), vectorized by the compiler
#endif
#undef LF_DOT

// s[j] += x * row[j] for float32 (Gemm::run_row_vector's rows of B); one body a target, as above.
#define LF_AXPY(NAME, ATTRIBUTES)                                              \
  ATTRIBUTES void NAME(float* s, const float* row, float x, int64_t n) {       \
    for (int64_t j = 0; j < n; ++j) s[j] += x * row[j];                        \
  }
#if LF_GEMM_X86
LF_AXPY(axpy_f32_avx512, __attribute__((target("avx512f"))))
LF_AXPY(axpy_f32_avx2, __attribute__((target("avx2,fma"))))
LF_AXPY(axpy_f32_portable, __attribute__((target("default"))))
#else
LF_AXPY(axpy_f32_portable, )
#endif
#undef LF_AXPY

// Portable: the j loop is the vectorizable one. Integers multiply and add as uint64 (wrap-around,
// no undefined overflow).
template <class T, int kMr, int kNr>
void micro_generic(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, bool accumulate) {
  using A = std::conditional_t<std::is_integral_v<T>, uint64_t, T>;
  A acc[kMr][kNr] = {};
  for (int64_t p = 0; p < kc; ++p) {
    for (int i = 0; i < kMr; ++i) {
      A ai = static_cast<A>(a[i]);
      for (int j = 0; j < kNr; ++j) acc[i][j] += ai * static_cast<A>(b[j]);
    }
    a += kMr;
    b += kNr;
  }
  for (int i = 0; i < kMr; ++i)
    for (int j = 0; j < kNr; ++j)
      c[i * ldc + j] = static_cast<T>(accumulate ? static_cast<A>(c[i * ldc + j]) + acc[i][j] : acc[i][j]);
}

template <class T>
using MicroFn = void (*)(int64_t, const T*, const T*, T*, int64_t, bool);

template <class T>
struct Micro {
  MicroFn<T> fn;
  int64_t mr, nr;
  const char* name;
};

template <class T>
Micro<T> pick_micro(GemmIsa isa = GemmIsa::kBest) {
#if LF_GEMM_X86
  const bool avx512 = cpu_has_avx512() && (isa == GemmIsa::kBest || isa == GemmIsa::kAvx512);
  const bool avx2 = cpu_has_avx2_fma() && (isa == GemmIsa::kBest || isa == GemmIsa::kAvx2);
  if constexpr (std::is_same_v<T, float>) {
    if (avx512) return {micro_avx512<Avx512F32>, 12, 32, "avx512 12x32 float"};
    if (avx2) return {micro_avx2<Avx2F32>, 6, 16, "avx2 6x16 float"};
  } else if constexpr (std::is_same_v<T, double>) {
    if (avx512) return {micro_avx512<Avx512F64>, 12, 16, "avx512 12x16 double"};
    if (avx2) return {micro_avx2<Avx2F64>, 6, 8, "avx2 6x8 double"};
  }
#endif
  if constexpr (std::is_integral_v<T>) return {micro_generic<T, 4, 8>, 4, 8, "portable 4x8 int64"};
  else return {micro_generic<T, 4, 16>, 4, 16, "portable 4x16"};
}

// ---- the driver, for storage type S and compute type T

template <class S, class T>
class Gemm {
 public:
  Gemm(const GemmProblem& p, const RowsDone& done, GemmIsa isa) : p_(p), done_(done), micro_(pick_micro<T>(isa)) {
    npad_ = round_up(p.n, micro_.nr);
    for (size_t d = 0; d < p.batch.size(); ++d) b_batch_broadcast_ &= p.b.strides[d] == 0;
  }

  void run() {
    int64_t batches = 1;
    for (int64_t s : p_.batch) batches *= s;
    if (batches == 0 || p_.m == 0 || p_.n == 0) return;
    if (p_.n == 1) return run_gemv(batches);
    if (p_.m == 1) return run_row_vector(batches);
    // Tasks per batch: enough to keep every thread busy, few enough to amortize packing, and a
    // multiple of the thread count; their rows are whole MR-row slivers, spread evenly (tasks
    // differ by one sliver at most, so no thread gets a whole extra block).
    int64_t threads = rt::num_cpu_threads();
    slivers_ = (p_.m + micro_.mr - 1) / micro_.mr;
    int64_t per_batch = std::max<int64_t>(1, (p_.m + kMaxRowBlock - 1) / kMaxRowBlock);
    if (batches * per_batch < threads) per_batch = (threads + batches - 1) / batches;
    if (per_batch > 1 && per_batch % threads) per_batch = round_up(per_batch, threads);
    per_batch_ = std::min(per_batch, slivers_);

    int64_t packs = b_batch_broadcast_ ? 1 : batches;
    packed_b_.resize(static_cast<size_t>(packs * p_.k * npad_));
    int64_t b_slivers = npad_ / micro_.nr;
    rt::parallel_for(packs * b_slivers, [&](int64_t t) { pack_b(t / b_slivers, t % b_slivers); });
    rt::parallel_for(batches * per_batch_, [&](int64_t t) { run_block(t / per_batch_, t % per_batch_); });
  }

 private:
  // n == 1 (a matrix times a vector): each row of C is a dot product of a row of A with B's one
  // column, bound by reading A once; packing and tiles would cost more than the product (8 MB of A
  // took 3.7 ms through the tiles, 12x a multiply and row sum). Tasks are ranges of rows (each
  // row's sum in a fixed order, so the bits do not depend on them); B's column is widened into a
  // contiguous buffer per task.
  void run_gemv(int64_t batches) {
    const size_t r = p_.batch.size();
    const int64_t threads = rt::num_cpu_threads();
    const int64_t per_batch = std::clamp<int64_t>(p_.m * std::max<int64_t>(p_.k, 1) / (int64_t{1} << 15), 1, 4 * threads);
    rt::parallel_for(batches * per_batch, [&](int64_t t) {
      const int64_t b = t / per_batch, q = t % per_batch;
      const int64_t i0 = p_.m * q / per_batch, i1 = p_.m * (q + 1) / per_batch;
      thread_local std::vector<T> col;
      T* x = scratch(col, std::max<int64_t>(p_.k, 1));
      const S* bb = src(p_.b) + batch_offset(p_.b, b);
      for (int64_t p = 0; p < p_.k; ++p) x[p] = widen(bb[p * p_.b.strides[r]]);
      const S* a = src(p_.a) + batch_offset(p_.a, b);
      const int64_t sm = p_.a.strides[r], sk = p_.a.strides[r + 1];
      S* c = static_cast<S*>(p_.c) + b * p_.m;
      for (int64_t i = i0; i < i1; ++i) c[i] = static_cast<S>(dot(a + i * sm, sk, x));
      if (done_) done_(b * p_.m + i0, b * p_.m + i1);
    });
  }

  // m == 1 (a row vector times a matrix: a decoder's token against its weights): bound by reading
  // B once, where the tiles packed all of B for one sliver of rows, one task on one thread
  // (a 1x1024 @ 1024x32000 float32 product took 45 ms, 9x reading B). Tasks are ranges of C's
  // columns; each column sums over k in order, so the bits do not depend on the tasks. B's
  // columns contiguous (x @ w.T, linear's layout): a dot product a column; else rows of B added
  // into the task's columns, x[p] times row p.
  void run_row_vector(int64_t batches) {
    const size_t r = p_.batch.size();
    const int64_t sk = p_.b.strides[r], sn = p_.b.strides[r + 1], ak = p_.a.strides[r + 1];
    const int64_t threads = rt::num_cpu_threads();
    constexpr int64_t kBlock = 64;  // columns: whole cache lines of a row of B
    const int64_t blocks = (p_.n + kBlock - 1) / kBlock;
    const int64_t per_batch = std::clamp<int64_t>(p_.n * std::max<int64_t>(p_.k, 1) / (int64_t{1} << 15), 1,
                                                  std::min<int64_t>(4 * threads, blocks));
    rt::parallel_for(batches * per_batch, [&](int64_t t) {
      const int64_t b = t / per_batch, q = t % per_batch;
      const int64_t j0 = std::min(p_.n, blocks * q / per_batch * kBlock);
      const int64_t j1 = std::min(p_.n, blocks * (q + 1) / per_batch * kBlock);
      using W = std::conditional_t<std::is_integral_v<T>, uint64_t, T>;  // integers wrap around
      thread_local std::vector<T> row;
      thread_local std::vector<W> sums;
      T* x = scratch(row, std::max<int64_t>(p_.k, 1));
      const S* a = src(p_.a) + batch_offset(p_.a, b);
      for (int64_t p = 0; p < p_.k; ++p) x[p] = widen(a[p * ak]);
      const S* bb = src(p_.b) + batch_offset(p_.b, b);
      S* c = static_cast<S*>(p_.c) + b * p_.n;
      if (sk == 1) {
        for (int64_t j = j0; j < j1; ++j) c[j] = static_cast<S>(dot(bb + j * sn, 1, x));
        return;
      }
      W* acc = scratch(sums, j1 - j0);
      std::fill(acc, acc + (j1 - j0), W(0));
      for (int64_t p = 0; p < p_.k; ++p) {
        const S* brow = bb + p * sk + j0 * sn;
        if constexpr (std::is_same_v<S, float> && std::is_same_v<T, float>) {
          if (sn == 1) {
#if LF_GEMM_X86
            static const bool avx512 = cpu_has_avx512(), avx2 = cpu_has_avx2_fma();
            if (avx512) axpy_f32_avx512(acc, brow, x[p], j1 - j0);
            else if (avx2) axpy_f32_avx2(acc, brow, x[p], j1 - j0);
            else axpy_f32_portable(acc, brow, x[p], j1 - j0);
#else
            axpy_f32_portable(acc, brow, x[p], j1 - j0);
#endif
            continue;
          }
        }
        const W xp = static_cast<W>(x[p]);
        for (int64_t j = 0; j < j1 - j0; ++j) acc[j] += xp * static_cast<W>(widen(brow[j * sn]));
      }
      for (int64_t j = j0; j < j1; ++j) c[j] = static_cast<S>(static_cast<T>(acc[j - j0]));
    });
    if (done_) done_(0, batches);
  }

  T dot(const S* a, int64_t sk, const T* x) const {
    if constexpr (std::is_same_v<S, float> && std::is_same_v<T, float>) {
      if (sk == 1) {
#if LF_GEMM_X86
        static const bool avx512 = cpu_has_avx512(), avx2 = cpu_has_avx2_fma();
        if (avx512) return dot_f32_avx512(a, x, p_.k);
        if (avx2) return dot_f32_avx2(a, x, p_.k);
#endif
        return dot_f32_portable(a, x, p_.k);
      }
    }
    using W = std::conditional_t<std::is_integral_v<T>, uint64_t, T>;  // integers wrap around
    W s = 0;
    for (int64_t p = 0; p < p_.k; ++p) s += static_cast<W>(widen(a[p * sk])) * static_cast<W>(x[p]);
    return static_cast<T>(s);
  }

  // Element offset of batch `b` in operand `o` (batch index unravelled over the batch sizes).
  int64_t batch_offset(const GemmOperand& o, int64_t b) const {
    int64_t off = o.offset;
    for (int64_t d = static_cast<int64_t>(p_.batch.size()) - 1; d >= 0; --d) {
      int64_t size = p_.batch[static_cast<size_t>(d)];
      off += (b % size) * o.strides[static_cast<size_t>(d)];
      b /= size;
    }
    return off;
  }

  const S* src(const GemmOperand& o) const { return static_cast<const S*>(o.data); }
  static T widen(S x) {
    if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) return static_cast<float>(x);
    else return static_cast<T>(x);
  }

  // B of batch `b`, sliver `s`: for each slab of kKc rows, kc x NR values, zero past column n.
  void pack_b(int64_t b, int64_t s) {
    size_t r = p_.batch.size();
    const S* base = src(p_.b) + batch_offset(p_.b, b);
    int64_t sk = p_.b.strides[r], sn = p_.b.strides[r + 1];
    int64_t nr = micro_.nr, j0 = s * nr, jn = std::min(nr, p_.n - j0);
    T* out = packed_b_.data() + b * p_.k * npad_;
    for (int64_t p0 = 0; p0 < p_.k; p0 += kKc) {
      int64_t kc = std::min(kKc, p_.k - p0);
      T* dst = out + p0 * npad_ + s * kc * nr;
      for (int64_t p = 0; p < kc; ++p) {
        const S* row = base + (p0 + p) * sk + j0 * sn;
        int64_t j = 0;
        if (sn == 1) {  // the usual layout: a plain (vectorized) copy
          for (; j < jn; ++j) dst[p * nr + j] = widen(row[j]);
        } else {
          for (; j < jn; ++j) dst[p * nr + j] = widen(row[j * sn]);
        }
        for (; j < nr; ++j) dst[p * nr + j] = T(0);
      }
    }
  }

  // Rows [i0, i0 + mc) of batch b, k range [p0, p0 + kc): MR-row slivers, kc x MR each.
  void pack_a(T* dst, int64_t b, int64_t i0, int64_t mc, int64_t p0, int64_t kc) const {
    size_t r = p_.batch.size();
    const S* base = src(p_.a) + batch_offset(p_.a, b);
    int64_t sm = p_.a.strides[r], sk = p_.a.strides[r + 1], mr = micro_.mr;
    if (sk == 1 && mr == 12) return pack_a_rows<12>(dst, base + i0 * sm + p0, sm, mc, kc);
    if (sk == 1 && mr == 6) return pack_a_rows<6>(dst, base + i0 * sm + p0, sm, mc, kc);
    if (sk == 1 && mr == 4) return pack_a_rows<4>(dst, base + i0 * sm + p0, sm, mc, kc);
    for (int64_t ir = 0; ir < mc; ir += mr) {
      T* sliver = dst + ir * kc;
      for (int64_t i = 0; i < mr; ++i) {
        if (ir + i >= mc) {
          for (int64_t p = 0; p < kc; ++p) sliver[p * mr + i] = T(0);
          continue;
        }
        const S* row = base + (i0 + ir + i) * sm + p0 * sk;
        for (int64_t p = 0; p < kc; ++p) sliver[p * mr + i] = widen(row[p * sk]);
      }
    }
  }

  // pack_a for contiguous rows of A: each sliver written in order, one element of each of its
  // MR rows in turn (the rows past mc read zeros), about twice as fast as a row at a time with
  // stores MR apart.
  template <int kMr>
  static void pack_a_rows(T* dst, const S* first, int64_t sm, int64_t mc, int64_t kc) {
    static const S zeros[kKc] = {};
    for (int64_t ir = 0; ir < mc; ir += kMr) {
      T* sliver = dst + ir * kc;
      const S* rows[kMr];
      for (int i = 0; i < kMr; ++i) rows[i] = ir + i < mc ? first + (ir + i) * sm : zeros;
      for (int64_t p = 0; p < kc; ++p)
#pragma GCC unroll 12
        for (int i = 0; i < kMr; ++i) sliver[p * kMr + i] = widen(rows[i][p]);
    }
  }

  // Task t of batch b: its rows of C, slab by slab of k. C is written in place when it has the
  // compute type (the first slab stores, later ones add), else through a compute-type buffer.
  void run_block(int64_t b, int64_t t) {
    thread_local std::vector<T> a_buf, c_buf;
    int64_t mr = micro_.mr, nr = micro_.nr;
    int64_t i0 = slivers_ * t / per_batch_ * mr, i1 = std::min(p_.m, slivers_ * (t + 1) / per_batch_ * mr);
    int64_t mc = i1 - i0, mpad = round_up(mc, mr);
    S* c = static_cast<S*>(p_.c) + (b * p_.m + i0) * p_.n;
    constexpr bool kDirect = std::is_same_v<S, T>;
    T* ct;
    int64_t ldc, rows, cols;  // the tile target and how much of it is real (the rest is padding)
    if constexpr (kDirect) {
      ct = c, ldc = p_.n, rows = mc, cols = p_.n;
    } else {
      ct = scratch(c_buf, mpad * npad_), ldc = npad_, rows = mpad, cols = npad_;
    }
    if (p_.k == 0) {
      for (int64_t i = 0; i < rows; ++i) std::fill(ct + i * ldc, ct + i * ldc + cols, T(0));
    }
    T* ap = scratch(a_buf, mpad * kKc);
    const T* bp = packed_b_.data() + (b_batch_broadcast_ ? 0 : b * p_.k * npad_);
    for (int64_t p0 = 0; p0 < p_.k; p0 += kKc) {
      int64_t kc = std::min(kKc, p_.k - p0);
      bool accumulate = p0 > 0;
      pack_a(ap, b, i0, mc, p0, kc);
      const T* slab = bp + p0 * npad_;
      for (int64_t jr = 0; jr < npad_; jr += nr) {
        for (int64_t ir = 0; ir < mpad; ir += mr) {
          const T* as = ap + ir * kc;
          const T* bs = slab + jr * kc;
          if (ir + mr <= rows && jr + nr <= cols) {
            micro_.fn(kc, as, bs, ct + ir * ldc + jr, ldc, accumulate);
          } else {
            edge_tile(kc, as, bs, ct + ir * ldc + jr, ldc, std::min(mr, rows - ir), std::min(nr, cols - jr), accumulate);
          }
        }
      }
    }
    if constexpr (!kDirect) {
      for (int64_t i = 0; i < mc; ++i)
        for (int64_t j = 0; j < p_.n; ++j) c[i * p_.n + j] = static_cast<S>(ct[i * npad_ + j]);
    }
    if (done_) done_(b * p_.m + i0, b * p_.m + i1);
  }

  // A tile that sticks out of C: computed aside, then its real part stored or added.
  void edge_tile(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, int64_t rows, int64_t cols,
                 bool accumulate) const {
    alignas(64) T tile[kMaxTile];
    int64_t nr = micro_.nr;
    micro_.fn(kc, a, b, tile, nr, false);
    using W = std::conditional_t<std::is_integral_v<T>, uint64_t, T>;  // integers wrap around
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        W v = static_cast<W>(tile[i * nr + j]);
        c[i * ldc + j] = static_cast<T>(accumulate ? static_cast<W>(c[i * ldc + j]) + v : v);
      }
  }

  const GemmProblem& p_;
  const RowsDone& done_;
  Micro<T> micro_;
  int64_t npad_ = 0, slivers_ = 0, per_batch_ = 1;
  bool b_batch_broadcast_ = true;
  std::vector<T> packed_b_;
};

}  // namespace

bool gemm_isa_available(GemmIsa isa) {
  switch (isa) {
    case GemmIsa::kAvx2: return cpu_has_avx2_fma();
    case GemmIsa::kAvx512: return cpu_has_avx512();
    default: return true;
  }
}

void gemm(const GemmProblem& problem, const RowsDone& rows_done, GemmIsa isa) {
  dispatch(problem.dtype, [&](auto tag) {
    using S = typename decltype(tag)::storage_t;
    using C = typename decltype(tag)::compute_t;
    if constexpr (std::is_same_v<S, bool>) {
      throw Error("matmul: bool operands are not supported (internal error: the frontend rejects them)");
    } else {
      using T = std::conditional_t<std::is_integral_v<C>, int64_t, C>;
      Gemm<S, T>(problem, rows_done, isa).run();
    }
  });
}

const char* gemm_kernel_name(DType dtype) {
  switch (dtype) {
    case DType::Float64: return pick_micro<double>().name;
    case DType::Int32:
    case DType::Int64:
    case DType::Bool: return pick_micro<int64_t>().name;
    default: return pick_micro<float>().name;
  }
}

}  // namespace lf::cpu
