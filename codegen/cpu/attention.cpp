// An attention group on the CPU: blocked flash attention. A task is a block of kBq query rows of
// one batch (batch dims flattened; tasks spread over the thread pool). It converts its queries
// once, then streams the keys and values in tiles of kBk (converted to the compute type, the keys
// transposed so that a row's scores are a vectorizable loop over keys), with an online softmax per
// row: running max m, running sum l, output accumulator rescaled by e^(m_old - m_new) whenever the
// max grows. The scores and probabilities never leave the task's scratch. Causal blocks stop at
// the diagonal. Floats accumulate in float32 (float64 for float64), 16-bit floats included.
#include "codegen/backend/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "codegen/cpu/backend.h"
#include "codegen/ir/half.h"
#include "runtime/thread_pool.h"

namespace lf::cpu {
namespace {

constexpr int64_t kBq = 32;  // query rows a task: its accumulators stay in L1/L2 with a tile
constexpr int64_t kBk = 64;  // keys a tile

// W: the values a vector holds: 16 under AVX-512 (floats), 8 under AVX2 and without (with 16
// there, the loops kept their vectors on the stack and ran scalar; B4 H8 T128 d32 causal float32
// on the 2-core AVX2 machine, 2026-11-28: 4.7 -> 1.8 ms on 2 threads).
constexpr int64_t kChunkAvx512 = 16, kChunk = 8;

#define LF_INLINE __attribute__((always_inline)) inline

template <int64_t W>
LF_INLINE int64_t padded(int64_t dv) { return (dv + W - 1) / W * W; }

template <typename T>
using AccOf = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename A, typename T>
LF_INLINE A get(const T* p, int64_t i) {
  if constexpr (std::is_same_v<T, double>)
    return p[i];
  else
    return static_cast<float>(p[i]);
}
template <typename T, typename A>
LF_INLINE void put(T* p, int64_t i, A a) {
  if constexpr (std::is_same_v<T, double>)
    p[i] = a;
  else
    p[i] = T(static_cast<float>(a));
}

// Asks for the cache lines of n elements from element `at` of p (column stride sc) ahead of use.
template <typename T>
LF_INLINE void prefetch_row(const T* p, int64_t at, int64_t n, int64_t sc) {
  if (sc != 1) return;  // other strides: one line an element, not worth asking for
  const char* b = reinterpret_cast<const char*>(p + at);
  const int64_t bytes = n * static_cast<int64_t>(sizeof(T));
  for (int64_t off = 0; off < bytes; off += 64) __builtin_prefetch(b + off);
  if (bytes > 0) __builtin_prefetch(b + bytes - 1);  // the last line, where the row is not line-aligned
}

struct Ctx {
  const backend::AttentionCall* call;
  void* out;
  int64_t qblocks;
  int64_t groups;     // tasks a batch: its query blocks cut into groups
  int64_t per_group;  // query blocks a task
};

template <typename A>
struct Scratch {
  std::vector<A> q, kt, v, o, s, m, l, alpha;
  std::vector<int64_t> last_bad;
  void fit(int64_t d, int64_t dvp, int64_t tkp) {
    q.resize(static_cast<size_t>(kBq * d));
    kt.resize(static_cast<size_t>(d * tkp));
    v.resize(static_cast<size_t>(tkp * dvp));
    o.resize(static_cast<size_t>(kBq * dvp));
    s.resize(static_cast<size_t>(kBq * kBk));
    m.resize(kBq);
    l.resize(kBq);
    alpha.resize(kBq);
  }
};

// The micro-tiles: kRows query rows by two vectors (2W keys of S, 2W output columns of O), eight
// accumulators in registers, each operand load shared by four rows (a row at a time, every FMA
// waited on the one before it in its chain and every K and V load fed one row).
constexpr int64_t kRows = 4;

template <typename A, int64_t W>
struct Lanes {
  typedef A Vec __attribute__((vector_size(W * sizeof(A))));
  LF_INLINE static Vec load(const A* from) {
    Vec v;
    std::memcpy(&v, from, sizeof v);
    return v;
  }
  LF_INLINE static void store(A* to, Vec v) { std::memcpy(to, &v, sizeof v); }
  LF_INLINE static Vec splat(A a) { return Vec{} + a; }
  // Key indices, lane by lane: integers of the lanes' width (a comparison's mask selects between
  // vectors of that width), exact where float lanes would round past 2^24.
  typedef std::conditional_t<sizeof(A) == 8, int64_t, int32_t> Index;
  typedef Index Keys __attribute__((vector_size(W * sizeof(A))));
  LF_INLINE static Keys iota() {
    Keys v;
    for (int64_t x = 0; x < W; ++x) v[x] = static_cast<Index>(x);
    return v;
  }
  // e^x for x <= 0 or NaN (a score minus its row's running max), lane by lane as vectors (a
  // scalar function's selects and bit casts kept a loop over it scalar): range reduction to r in
  // [-ln2/2, ln2/2] and a degree-6 Taylor polynomial (relative error about 1.2e-7). Results below
  // 2^-126 (x < -87) are 0: weights that small leave no trace in a sum of terms <= 1. double: exp.
  LF_INLINE static Vec exp_nonpos(Vec x) {
    if constexpr (std::is_same_v<A, double>) {
      for (int64_t i = 0; i < W; ++i) x[i] = std::exp(x[i]);
      return x;
    } else {
      typedef uint32_t Bits __attribute__((vector_size(W * sizeof(A))));
      const auto tiny = x < -87.0f;  // -inf included; false for NaN, which the polynomial carries
      const Vec xc = tiny ? splat(-87.0f) : x;
      const Vec shifted = xc * 1.44269504088896341f + 12582912.0f;  // 1.5 * 2^23: rounds to an integer
      const Vec n = shifted - 12582912.0f;
      const Vec r = (xc - n * 0.693145751953125f) - n * 1.42860682030941723212e-6f;
      Vec p = splat(1.0f / 720);
      p = p * r + 1.0f / 120;
      p = p * r + 1.0f / 24;
      p = p * r + 1.0f / 6;
      p = p * r + 0.5f;
      p = p * r + 1.0f;
      p = p * r + 1.0f;
      const Bits e = ((Bits)shifted - 0x4B400000u + 127u) << 23;  // n + 127 in the exponent field
      return tiny ? Vec{} : p * (Vec)e;
    }
  }
};

// The micro-tiles' product: c[r][h] += sum over i < n of a[r * as + i] * b[i * bs + h W] (lanes
// of W), for kRows rows r and two vectors h. Each b load feeds every row; the 2 kRows accumulators
// are independent FMA chains.
template <typename A, int64_t W>
LF_INLINE void micro_tile(typename Lanes<A, W>::Vec (&c)[kRows][2], const A* a, int64_t as, const A* b, int64_t bs,
                          int64_t n) {
  using L = Lanes<A, W>;
  for (int64_t i = 0; i < n; ++i, b += bs) {
    const auto b0 = L::load(b), b1 = L::load(b + W);
    for (int64_t r = 0; r < kRows; ++r) {
      const A x = a[r * as + i];
      c[r][0] += x * b0;
      c[r][1] += x * b1;
    }
  }
}

// c's rows into dst, rows `stride` apart.
template <typename A, int64_t W>
LF_INLINE void store_tile(A* dst, int64_t stride, const typename Lanes<A, W>::Vec (&c)[kRows][2]) {
  for (int64_t r = 0; r < kRows; ++r) {
    Lanes<A, W>::store(dst + r * stride, c[r][0]);
    Lanes<A, W>::store(dst + r * stride + W, c[r][1]);
  }
}

// S[r0 + r][jj + .] = q_r . k_j for kRows rows and 2W keys of the tile (KT: the tile's first key).
template <typename A, int64_t W>
LF_INLINE void scores_tile(const A* Q, int64_t D, const A* KT, int64_t tkp, A* S, int64_t r0, int64_t jj) {
  typename Lanes<A, W>::Vec c[kRows][2] = {};
  micro_tile<A, W>(c, Q + r0 * D, D, KT + jj, tkp, D);
  store_tile<A, W>(S + r0 * kBk + jj, kBk, c);
}

// O[r0 + r][cc + .] = O * alpha_r + sum over the tile's first nk keys of P[r][j] * V[j][cc + .].
// Every key, weight 0 included: 0 * inf and 0 * NaN in v are NaN in the unfused P @ V too.
template <typename A, int64_t W>
LF_INLINE void values_tile(const A* P, const A* V, int64_t Dvp, const A* alpha, A* O, int64_t r0, int64_t cc,
                           int64_t nk) {
  using L = Lanes<A, W>;
  A* o = O + r0 * Dvp + cc;
  typename L::Vec c[kRows][2];
  for (int64_t r = 0; r < kRows; ++r) {
    c[r][0] = L::load(o + r * Dvp) * alpha[r0 + r];
    c[r][1] = L::load(o + r * Dvp + W) * alpha[r0 + r];
  }
  micro_tile<A, W>(c, P + r0 * kBk, kBk, V + cc, Dvp, nk);
  store_tile<A, W>(o, Dvp, c);
}

// One task: query blocks [qb0, qb1) of batch b. Its keys and values are converted once (the keys
// transposed), then each query block streams through them tile by tile: the tile's scores for
// all the block's rows, each row's online softmax, then the tile's values for all rows.
template <typename T, typename A, int64_t W>
LF_INLINE void block(const Ctx& c, int64_t task, Scratch<A>& w) {
  using L = Lanes<A, W>;
  using Vec = typename L::Vec;
  const backend::AttentionCall& call = *c.call;
  const ir::AttentionParams& p = call.params;
  const int64_t b = task / c.groups, qb0 = (task % c.groups) * c.per_group;
  const int64_t qb1 = std::min(c.qblocks, qb0 + c.per_group);
  const int64_t D = call.d, Dv = call.dv, tk = call.tk;
  const int64_t Dvp = padded<2 * W>(Dv);  // V and O rows padded with zeros to whole micro-tiles
  const size_t nb = call.batch.size();
  int64_t qo = call.q.offset, ko = call.k.offset, vo = call.v.offset, mo = call.mask.offset;
  for (int64_t d = static_cast<int64_t>(nb) - 1, rem = b; d >= 0; --d) {
    const size_t u = static_cast<size_t>(d);
    const int64_t idx = rem % call.batch[u];
    rem /= call.batch[u];
    qo += idx * call.q.strides[u];
    ko += idx * call.k.strides[u];
    vo += idx * call.v.strides[u];
    if (p.has_mask()) mo += idx * call.mask.strides[u];
  }
  const T* q = static_cast<const T*>(call.q.data);
  const T* k = static_cast<const T*>(call.k.data);
  const T* v = static_cast<const T*>(call.v.data);
  const int64_t qsr = call.q.strides[nb], qsc = call.q.strides[nb + 1];
  const int64_t ksr = call.k.strides[nb], ksc = call.k.strides[nb + 1];
  const int64_t vsr = call.v.strides[nb], vsc = call.v.strides[nb + 1];
  const int64_t msr = p.has_mask() ? call.mask.strides[nb] : 0, msc = p.has_mask() ? call.mask.strides[nb + 1] : 0;
  // Keys the task's last block reads (causal: up to its last row), padded to whole tiles.
  const int64_t kv_all = p.causal ? std::min(tk, std::min(call.tq, qb1 * kBq)) : tk;
  const int64_t tkp = (kv_all + kBk - 1) / kBk * kBk;
  w.fit(D, Dvp, tkp);
  A* Q = w.q.data();
  A* KT = w.kt.data();
  A* V = w.v.data();
  A* O = w.o.data();
  A* S = w.s.data();
  const A inf = std::numeric_limits<A>::infinity();
  // The heads are usually strided views (a row of each in every row of a [B, T, 3D] projection):
  // each key's rows are fetched a few keys ahead, whose loads otherwise waited on memory one row
  // at a time (perf, 2026-11-28: 40% of the kernel on the 2-core AVX2 machine).
  constexpr int64_t kAhead = 8;
  for (int64_t j = 0; j < tkp; ++j) {
    if (j + kAhead < kv_all) {
      prefetch_row(k, ko + (j + kAhead) * ksr, D, ksc);
      prefetch_row(v, vo + (j + kAhead) * vsr, Dv, vsc);
    }
    A* vr = V + j * Dvp;
    if (j < kv_all) {
      for (int64_t x = 0; x < D; ++x) KT[x * tkp + j] = get<A>(k, ko + j * ksr + x * ksc);
      for (int64_t x = 0; x < Dv; ++x) vr[x] = get<A>(v, vo + j * vsr + x * vsc);
    } else {
      for (int64_t x = 0; x < D; ++x) KT[x * tkp + j] = A(0);
      for (int64_t x = 0; x < Dv; ++x) vr[x] = A(0);
    }
    for (int64_t x = Dv; x < Dvp; ++x) vr[x] = A(0);
  }
  if (p.causal) {  // per value column, the last key whose value is not finite (for skipped keys)
    w.last_bad.assign(static_cast<size_t>(Dv), -1);
    for (int64_t j = 0; j < tk; ++j) {
      if (j < kv_all) {  // converted: a vector test of the row first (x - x is NaN for inf and NaN only)
        Vec diff = {};
        for (int64_t x = 0; x < Dvp; x += W) {
          const Vec a = L::load(V + j * Dvp + x);
          diff += a - a;
        }
        bool any = false;
        for (int64_t x = 0; x < W; ++x) any |= diff[x] != A(0);
        if (!any) continue;
      }
      for (int64_t x = 0; x < Dv; ++x)
        if (!std::isfinite(j < kv_all ? V[j * Dvp + x] : get<A>(v, vo + j * vsr + x * vsc)))
          w.last_bad[static_cast<size_t>(x)] = j;
    }
  }
  const A scale = static_cast<A>(p.scale), post = static_cast<A>(p.post_scale);
  using Index = typename L::Index;
  const typename L::Keys iota = L::iota();
  for (int64_t qb = qb0; qb < qb1; ++qb) {
    const int64_t i0 = qb * kBq, nq = std::min(kBq, call.tq - i0);
    const int64_t nqp = (nq + kRows - 1) / kRows * kRows;  // rows past nq: zero queries, never written out
    for (int64_t r = 0; r < nqp; ++r) {
      if (r + kAhead < nq) prefetch_row(q, qo + (i0 + r + kAhead) * qsr, D, qsc);
      for (int64_t x = 0; x < D; ++x) Q[r * D + x] = r < nq ? get<A>(q, qo + (i0 + r) * qsr + x * qsc) : A(0);
      for (int64_t x = 0; x < Dvp; ++x) O[r * Dvp + x] = 0;
      w.m[static_cast<size_t>(r)] = -inf;
      w.l[static_cast<size_t>(r)] = 0;
      w.alpha[static_cast<size_t>(r)] = 1;
    }
    // Causal: keys past the block's last row are masked for all its rows (their tiles are skipped),
    // and within a tile, the keys past a micro-tile's last row (skipped by whole pairs of vectors).
    const int64_t kv_end = p.causal ? std::min(tk, i0 + nq) : tk;
    for (int64_t j0 = 0; j0 < kv_end; j0 += kBk) {
      const int64_t nk = std::min(kBk, kv_end - j0);
      // The tile's keys the micro-tile of rows [r0, r0 + kRows) computes: whole pairs of vectors
      // up to its last row's diagonal (causal), or up to nk.
      auto keys_of = [&](int64_t r0) {
        const int64_t e = p.causal ? std::clamp<int64_t>(i0 + r0 + kRows - j0, 0, nk) : nk;
        return std::min(kBk, (e + 2 * W - 1) / (2 * W) * (2 * W));
      };
      for (int64_t r0 = 0; r0 < nqp; r0 += kRows)
        for (int64_t jj = 0, n = keys_of(r0); jj < n; jj += 2 * W) scores_tile<A, W>(Q, D, KT + j0, tkp, S, r0, jj);
      for (int64_t r = 0; r < nq; ++r) {
        const int64_t i = i0 + r, nkr = keys_of(r - r % kRows);  // the keys of the row's micro-tile
        A* s = S + r * kBk;
        if (nkr == 0) {  // none of this tile's keys: the row is unchanged
          w.alpha[static_cast<size_t>(r)] = 1;
          continue;
        }
        // The scores as the unfused program forms them: scale, mask, causal -inf, scale. Keys past
        // the tile's last are -inf (weight 0). Whole tiles of vectors; only the masked form reads
        // its mask key by key.
        if (p.mask == ir::AttentionParams::kNone) {
          for (int64_t jc = 0; jc < nkr; jc += W) {
            const auto key = iota + static_cast<Index>(j0 + jc);  // the lanes' key indices
            Vec x = L::load(s + jc) * scale;
            if (p.causal) x = key > static_cast<Index>(i) ? L::splat(-inf) : x;
            x = key < static_cast<Index>(j0 + nk) ? x * post : L::splat(-inf);
            L::store(s + jc, x);
          }
        } else {
          const int64_t nm = std::min(nk, nkr);  // the keys the row's micro-tile computed
          for (int64_t j = 0; j < nm; ++j) {
            const int64_t at = mo + i * msr + (j0 + j) * msc;
            A x = s[j] * scale;
            if (p.mask == ir::AttentionParams::kAdd) {
              x += get<A>(static_cast<const T*>(call.mask.data), at);
            } else {
              const bool set = static_cast<const bool*>(call.mask.data)[at];
              if (set != (p.mask == ir::AttentionParams::kKeep)) x = -inf;
            }
            if (p.causal && j0 + j > i) x = -inf;
            s[j] = x * post;
          }
          for (int64_t j = nm; j < nkr; ++j) s[j] = -inf;
        }
        // The max ignores NaN scores: a NaN's weight e^(NaN - max) is NaN, which makes the row's sum
        // and so its every output NaN, as the unfused max (NaN) does.
        Vec part = L::splat(-inf);
        for (int64_t jc = 0; jc < nkr; jc += W) {
          const Vec x = L::load(s + jc);
          part = x > part ? x : part;
        }
        A& m = w.m[static_cast<size_t>(r)];
        A mx = m;
        for (int64_t x = 0; x < W; ++x) mx = part[x] > mx ? part[x] : mx;
        // A row that is all -inf so far takes weights e^-inf = 0 (not e^(-inf - -inf) = NaN): later
        // keys may still be finite. If none is, l stays 0 and the row ends 0 / 0 = NaN, as unfused.
        const A sub = mx == -inf ? A(0) : mx;
        const A alpha = m == mx ? A(1) : L::exp_nonpos(L::splat(m - sub))[0];
        Vec sum = {};
        for (int64_t jc = 0; jc < nkr; jc += W) {
          const Vec e = L::exp_nonpos(L::load(s + jc) - sub);
          L::store(s + jc, e);
          sum += e;
        }
        A total = 0;
        for (int64_t x = 0; x < W; ++x) total += sum[x];
        w.l[static_cast<size_t>(r)] = w.l[static_cast<size_t>(r)] * alpha + total;
        w.alpha[static_cast<size_t>(r)] = alpha;
        m = mx;
      }
      for (int64_t r0 = 0; r0 < nqp; r0 += kRows)
        if (const int64_t n = keys_of(r0); n > 0)
          for (int64_t cc = 0; cc < Dvp; cc += 2 * W)
            values_tile<A, W>(S, V + j0 * Dvp, Dvp, w.alpha.data(), O, r0, cc, n);
    }
    // The skipped keys (past a row's diagonal) have weight 0; the unfused P @ V still multiplies
    // them, so a non-finite value at a key after row i makes row i's output column NaN.
    if (p.causal) {
      for (int64_t x = 0; x < Dv; ++x)  // rows r with last_bad > i0 + r
        for (int64_t r = 0, n = std::min(nq, w.last_bad[static_cast<size_t>(x)] - i0); r < n; ++r)
          O[r * Dvp + x] = std::numeric_limits<A>::quiet_NaN();
    }
    T* out = static_cast<T*>(c.out);
    const int64_t h = call.heads;  // rows interleaved by head (AttentionCall::heads)
    const int64_t oo = (((b / h) * call.tq + i0) * h + b % h) * Dv;
    for (int64_t r = 0; r < nq; ++r) {
      const A inv_l = w.l[static_cast<size_t>(r)];
      for (int64_t x = 0; x < Dv; ++x) put(out, oo + r * h * Dv + x, O[r * Dvp + x] / inv_l);
    }
  }
}

// The same code compiled for the widest vectors the CPU has (the loops over keys and over the
// value dim are what vectorizes).
template <typename T, typename A>
__attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx2,fma"))) void block_avx512(const Ctx& c, int64_t t,
                                                                                         Scratch<A>& w) {
  block<T, A, kChunkAvx512>(c, t, w);
}
template <typename T, typename A>
__attribute__((target("avx2,fma"))) void block_avx2(const Ctx& c, int64_t t, Scratch<A>& w) {
  block<T, A, kChunk>(c, t, w);
}
template <typename T, typename A>
void block_plain(const Ctx& c, int64_t t, Scratch<A>& w) {
  block<T, A, kChunk>(c, t, w);
}

template <typename T>
const char* run(const Ctx& c, int64_t tasks) {
  using A = AccOf<T>;
  void (*fn)(const Ctx&, int64_t, Scratch<A>&) = block_plain<T, A>;
  const char* isa = "portable";
  if (host_has_avx512f())
    fn = block_avx512<T, A>, isa = "avx512";
  else if (host_has_avx2_fma())
    fn = block_avx2<T, A>, isa = "avx2";
  rt::parallel_for(tasks, [&](int64_t t) {
    thread_local Scratch<A> w;
    fn(c, t, w);
  });
  return isa;
}

// The tasks of `c` in its dtype's loops; the ISA that ran, or null for a dtype with no kernel.
const char* compute(const Ctx& c, int64_t tasks) {
  switch (c.call->dtype) {
    case DType::Float32: return run<float>(c, tasks);
    case DType::Float64: return run<double>(c, tasks);
    case DType::Float16: return run<Half>(c, tasks);
    case DType::BFloat16: return run<BFloat16>(c, tasks);
    default: return nullptr;
  }
}

}  // namespace

void run_attention(backend::AttentionCall& call) {
  if (!is_floating(call.dtype)) return backend::run_attention_on_reference(call, "not a floating-point dtype");
  std::shared_ptr<rt::Storage> out = call.allocate_output();
  const int64_t qblocks = (call.tq + kBq - 1) / kBq;
  // Enough tasks for the threads (two each), each as many query blocks as that leaves: a task
  // converts its keys and values once for all its blocks.
  const int64_t batch = call.batch_count();
  const int64_t want = std::max<int64_t>(1, (2 * rt::num_cpu_threads() + batch - 1) / std::max<int64_t>(batch, 1));
  const int64_t groups = std::min(qblocks, want), per_group = groups ? (qblocks + groups - 1) / groups : 0;
  const int64_t tasks = call.dv > 0 ? batch * groups : 0;
  Ctx c{&call, out->data(), qblocks, groups, per_group};
  const char* isa = tasks > 0 ? compute(c, tasks) : "portable";
  if (call.record) {  // for a flush plan: the same tasks over new addresses {q, k, v, mask, out}
    auto saved = std::make_shared<backend::AttentionCall>(call);
    saved->storage.clear();  // the replay's operands are its addresses, not this flush's buffers
    saved->record = nullptr;
    call.record->outputs.emplace_back(call.node(), out);
    call.record->addresses = {call.q.data, call.k.data, call.v.data, call.params.has_mask() ? call.mask.data : nullptr,
                              out->data()};
    call.record->replay = [saved, c, tasks](void* const* a) mutable {
      saved->q.data = a[0];
      saved->k.data = a[1];
      saved->v.data = a[2];
      saved->mask.data = a[3];
      c.call = saved.get();
      c.out = a[4];
      if (tasks > 0) compute(c, tasks);
    };
  }
  ++call.run.stats.kernels_launched;
  call.run.stats.bytes_moved += call.bytes;
  call.finish(std::move(out));
  call.log(std::string("blocked flash attention, ") + std::to_string(tasks) + " tasks of " + std::to_string(per_group) +
           " blocks of " + std::to_string(kBq) + " query rows, key tiles of " + std::to_string(kBk) + " (" + isa + ")");
}

}  // namespace lf::cpu
