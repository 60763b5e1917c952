// The CPU GEMM (see cpu_gemm.h). Structure, after Goto & van de Geijn and BLIS:
//   B is packed once per batch into slabs of kKc rows, each slab cut into NR-column slivers;
//   the rows of C are cut into blocks (tasks for the thread pool); a task packs its rows of A,
//   slab by slab, into MR-row slivers and runs the micro-kernel for every (sliver of A, sliver of
//   B) pair, accumulating an MR x NR tile of C in registers; then it rounds its rows of C to the
//   output dtype and hands them to the epilogue while they are still in cache.
// The micro-kernel is AVX-512 (12 x 32 floats or 12 x 16 doubles of accumulators in 24 zmm
// registers, fed by two vector loads and one broadcast per step) where the CPU has it, and a
// portable loop nest that the compiler vectorizes for the baseline ISA elsewhere and for integers.
#include "codegen/cpu_gemm.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "codegen/cpu_backend.h"
#include "codegen/dtype_dispatch.h"
#include "runtime/thread_pool.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define LF_GEMM_X86 1
#endif

namespace lf::cpu {
namespace {

constexpr int64_t kKc = 256;        // rows of a B slab: an A sliver plus a B sliver fit in L1
constexpr int64_t kMaxRowBlock = 192;  // rows of C per task: its packed A slab stays in L2

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
};

// Two vectors of NR per row: 2 * kMr accumulators, 2 loads of B and kMr broadcasts of A per step.
template <class X>
__attribute__((target("avx512f"))) void micro_avx512(int64_t kc, const typename X::T* a, const typename X::T* b,
                                                     typename X::T* c, int64_t ldc) {
  constexpr int kMr = X::kMr, kL = X::kLanes;
  typename X::V acc[kMr][2];
#pragma GCC unroll 12
  for (int i = 0; i < kMr; ++i) acc[i][0] = acc[i][1] = X::zero();
  for (int64_t p = 0; p < kc; ++p) {
    typename X::V b0 = X::load(b), b1 = X::load(b + kL);
#pragma GCC unroll 12
    for (int i = 0; i < kMr; ++i) {
      typename X::V ai = X::bcast(a[i]);
      acc[i][0] = X::fma(ai, b0, acc[i][0]);
      acc[i][1] = X::fma(ai, b1, acc[i][1]);
    }
    a += kMr;
    b += 2 * kL;
  }
#pragma GCC unroll 12
  for (int i = 0; i < kMr; ++i) {
    X::add_store(c + i * ldc, acc[i][0]);
    X::add_store(c + i * ldc + kL, acc[i][1]);
  }
}
#endif

// Portable: the j loop is the vectorizable one. Integers multiply and add as uint64 (wrap-around,
// no undefined overflow).
template <class T, int kMr, int kNr>
void micro_generic(int64_t kc, const T* a, const T* b, T* c, int64_t ldc) {
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
    for (int j = 0; j < kNr; ++j) c[i * ldc + j] = static_cast<T>(static_cast<A>(c[i * ldc + j]) + acc[i][j]);
}

template <class T>
using MicroFn = void (*)(int64_t, const T*, const T*, T*, int64_t);

template <class T>
struct Micro {
  MicroFn<T> fn;
  int64_t mr, nr;
  const char* name;
};

template <class T>
Micro<T> pick_micro() {
#if LF_GEMM_X86
  if constexpr (std::is_same_v<T, float>) {
    if (cpu_has_avx512()) return {micro_avx512<Avx512F32>, 12, 32, "avx512 12x32 float"};
  } else if constexpr (std::is_same_v<T, double>) {
    if (cpu_has_avx512()) return {micro_avx512<Avx512F64>, 12, 16, "avx512 12x16 double"};
  }
#endif
  if constexpr (std::is_integral_v<T>) return {micro_generic<T, 4, 8>, 4, 8, "portable 4x8 int64"};
  else return {micro_generic<T, 4, 16>, 4, 16, "portable 4x16"};
}

// ---- the driver, for storage type S and compute type T

template <class S, class T>
class Gemm {
 public:
  Gemm(const GemmProblem& p, const RowsDone& done) : p_(p), done_(done), micro_(pick_micro<T>()) {
    npad_ = round_up(p.n, micro_.nr);
    for (size_t d = 0; d < p.batch.size(); ++d) b_batch_broadcast_ &= p.b.strides[d] == 0;
  }

  void run() {
    int64_t batches = 1;
    for (int64_t s : p_.batch) batches *= s;
    if (batches == 0 || p_.m == 0 || p_.n == 0) return;
    // Rows of C per task: enough tasks to keep every thread busy, few enough to amortize packing.
    int64_t threads = rt::num_cpu_threads();
    int64_t per_batch = std::max<int64_t>(1, (p_.m + kMaxRowBlock - 1) / kMaxRowBlock);
    if (batches * per_batch < threads) per_batch = std::min<int64_t>(p_.m, (threads + batches - 1) / batches);
    if (per_batch > 1 && per_batch % threads) per_batch = round_up(per_batch, threads);
    block_ = round_up((p_.m + per_batch - 1) / per_batch, micro_.mr);
    per_batch = (p_.m + block_ - 1) / block_;

    int64_t packs = b_batch_broadcast_ ? 1 : batches;
    packed_b_.resize(static_cast<size_t>(packs * p_.k * npad_));
    int64_t slivers = npad_ / micro_.nr;
    rt::parallel_for(packs * slivers, [&](int64_t t) { pack_b(t / slivers, t % slivers); });
    rt::parallel_for(batches * per_batch, [&](int64_t t) { run_block(t / per_batch, (t % per_batch) * block_); });
  }

 private:
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
        for (; j < jn; ++j) dst[p * nr + j] = widen(row[j * sn]);
        for (; j < nr; ++j) dst[p * nr + j] = T(0);
      }
    }
  }

  // Rows [i0, i0 + mc) of batch b, k range [p0, p0 + kc): MR-row slivers, kc x MR each.
  void pack_a(T* dst, int64_t b, int64_t i0, int64_t mc, int64_t p0, int64_t kc) const {
    size_t r = p_.batch.size();
    const S* base = src(p_.a) + batch_offset(p_.a, b);
    int64_t sm = p_.a.strides[r], sk = p_.a.strides[r + 1], mr = micro_.mr;
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

  void run_block(int64_t b, int64_t i0) {
    thread_local std::vector<T> a_buf, c_buf;
    int64_t mc = std::min(block_, p_.m - i0), mpad = round_up(mc, micro_.mr);
    T* ct = scratch(c_buf, mpad * npad_);
    std::fill(ct, ct + mpad * npad_, T(0));
    T* ap = scratch(a_buf, mpad * kKc);
    const T* bp = packed_b_.data() + (b_batch_broadcast_ ? 0 : b * p_.k * npad_);
    for (int64_t p0 = 0; p0 < p_.k; p0 += kKc) {
      int64_t kc = std::min(kKc, p_.k - p0);
      pack_a(ap, b, i0, mc, p0, kc);
      const T* slab = bp + p0 * npad_;
      for (int64_t jr = 0; jr < npad_; jr += micro_.nr)
        for (int64_t ir = 0; ir < mpad; ir += micro_.mr)
          micro_.fn(kc, ap + ir * kc, slab + jr * kc, ct + ir * npad_ + jr, npad_);
    }
    S* c = static_cast<S*>(p_.c) + (b * p_.m + i0) * p_.n;
    for (int64_t i = 0; i < mc; ++i) {
      const T* from = ct + i * npad_;
      S* to = c + i * p_.n;
      if constexpr (std::is_same_v<S, T>) {
        std::memcpy(to, from, static_cast<size_t>(p_.n) * sizeof(T));
      } else {
        for (int64_t j = 0; j < p_.n; ++j) to[j] = static_cast<S>(from[j]);
      }
    }
    if (done_) done_(b * p_.m + i0, b * p_.m + i0 + mc);
  }

  const GemmProblem& p_;
  const RowsDone& done_;
  Micro<T> micro_;
  int64_t npad_ = 0, block_ = 0;
  bool b_batch_broadcast_ = true;
  std::vector<T> packed_b_;
};

}  // namespace

void gemm(const GemmProblem& problem, const RowsDone& rows_done) {
  dispatch(problem.dtype, [&](auto tag) {
    using S = typename decltype(tag)::storage_t;
    using C = typename decltype(tag)::compute_t;
    if constexpr (std::is_same_v<S, bool>) {
      throw Error("matmul: bool operands are not supported (internal error: the frontend rejects them)");
    } else {
      using T = std::conditional_t<std::is_integral_v<C>, int64_t, C>;
      Gemm<S, T>(problem, rows_done).run();
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
