// An attention group on a GPU: float16 and bfloat16 at head dims 32, 64, 128 run the tensor-core
// kernel of attention_tc.cpp, float32 at those head dims the one of attention_f32.cpp (three TF32
// products a product; same parameter block and launch); every other call a SIMT
// flash-attention kernel in CUDA C, compiled by NVRTC once per
// (dtype, head dims, mask kind, causal, architecture) in the process. A block of 128 threads takes
// kBm query rows of one batch (batch dims flattened into the grid); K and V stream through shared
// memory in tiles of kBn keys; each row's online softmax (running max, running sum, rescaled
// accumulator) lives in the registers of the 4 threads that share the row: each computes a quarter
// of the row's scores of a tile and a quarter of its output columns. Causal blocks stop at the
// diagonal. Floats compute in float32 (float64 for float64), loads of the 16-bit floats converted;
// any strides (the permuted heads of a transformer are read as they are). All three kernels also compile
// for every variant without a GPU (tests/codegen/cuda/attention_compile_test.cpp).
#include "codegen/backend/attention.h"

#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "codegen/cuda/attention.h"
#include "codegen/cuda/backend.h"
#include "codegen/cuda/library_cache.h"
#include "codegen/cuda/nvrtc.h"
#include "runtime/config.h"
#include "runtime/cuda_driver.h"

namespace lf::cuda {
namespace {

constexpr int kBm = 32, kBn = 32, kThreads = 128, kMaxBatchRank = 6;

// The kernels' parameter block; kPrelude declares the same struct in CUDA C (every field 8 bytes).
struct Params {
  const void* q;
  const void* k;
  const void* v;
  const void* mask;
  void* out;
  long long tq, tk, qblocks, batch_rank, heads;
  long long qo, ko, vo, mo;
  long long qsr, qsc, ksr, ksc, vsr, vsc, msr, msc;
  long long batch[kMaxBatchRank], qb[kMaxBatchRank], kb[kMaxBatchRank], vb[kMaxBatchRank], mb[kMaxBatchRank];
  double scale, post;
  long long vec;  // the tensor-core kernel's: q, k, v rows are 16-byte aligned with unit column strides
};

// The kernels' common start (attention_prelude()): the parameter block and the batch offsets.
const char* kPrelude = R"CUDA(
struct Params {
  const void* q; const void* k; const void* v; const void* mask; void* out;
  long long tq, tk, qblocks, batch_rank, heads;
  long long qo, ko, vo, mo;
  long long qsr, qsc, ksr, ksc, vsr, vsc, msr, msc;
  long long batch[6], qb[6], kb[6], vb[6], mb[6];
  double scale, post;
  long long vec;
};
// 2^x flushing a subnormal result to 0 (one MUFU.EX2; exp2f adds the scaling that keeps
// subnormals, three instructions more). The tensor-core kernels' x is at most 0, so what flushes
// is below 2^-126 against a row sum of at least 1.
__device__ __forceinline__ float lf_exp2(float x) { float r; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }
// A shared-memory pointer as the 32-bit address that cp.async, ldmatrix and wgmma's descriptors take.
__device__ __forceinline__ unsigned lf_smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
// Batch b (the batch dims flattened, the last fastest) as element offsets into q, k, v and the mask.
// The batch count is a grid dimension's (below 2^31), so the divisions are 32-bit: a 64-bit one is
// a subroutine of dozens of instructions, and every thread of a block runs these.
__device__ __forceinline__ void lf_batch_offsets(const Params& P, long long b, long long& qo, long long& ko,
                                                 long long& vo, long long& mo) {
  qo = P.qo, ko = P.ko, vo = P.vo, mo = P.mo;
  unsigned rem = (unsigned)b;
  for (int d = (int)P.batch_rank - 1; d >= 0; --d) {
    const unsigned n = (unsigned)P.batch[d], idx = rem % n;
    rem /= n;
    qo += idx * P.qb[d]; ko += idx * P.kb[d]; vo += idx * P.vb[d]; mo += idx * P.mb[d];
  }
}
)CUDA";

const char* kKernel = R"CUDA(
#define BM 32
#define BN 32
#define NT 128
#define NC ((DV + 3) / 4)
__device__ __forceinline__ float lf_h2f(unsigned short h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f; }
__device__ __forceinline__ unsigned short lf_f2h(float f) { unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f)); return h; }
__device__ __forceinline__ float lf_b2f(unsigned short b) { return __uint_as_float(((unsigned)b) << 16); }
__device__ __forceinline__ unsigned short lf_f2b(float f) {
  unsigned u = __float_as_uint(f);
  if (f != f) return (unsigned short)((u >> 16) | 0x40u);
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
#if DTYPE == 0
typedef float S; typedef float A;
__device__ __forceinline__ A ld(const S* p, long long i) { return p[i]; }
__device__ __forceinline__ void st(S* p, long long i, A a) { p[i] = a; }
__device__ __forceinline__ A ex(A x) { return expf(x); }
#elif DTYPE == 1
typedef double S; typedef double A;
__device__ __forceinline__ A ld(const S* p, long long i) { return p[i]; }
__device__ __forceinline__ void st(S* p, long long i, A a) { p[i] = a; }
__device__ __forceinline__ A ex(A x) { return exp(x); }
#elif DTYPE == 2
typedef unsigned short S; typedef float A;
__device__ __forceinline__ A ld(const S* p, long long i) { return lf_h2f(p[i]); }
__device__ __forceinline__ void st(S* p, long long i, A a) { p[i] = lf_f2h(a); }
__device__ __forceinline__ A ex(A x) { return expf(x); }
#else
typedef unsigned short S; typedef float A;
__device__ __forceinline__ A ld(const S* p, long long i) { return lf_b2f(p[i]); }
__device__ __forceinline__ void st(S* p, long long i, A a) { p[i] = lf_f2b(a); }
__device__ __forceinline__ A ex(A x) { return expf(x); }
#endif
// NaN wins, as the unfused max.
__device__ __forceinline__ A nmax(A a, A b) { return (a != a) ? a : (b > a || b != b) ? b : a; }

extern "C" __global__ void __launch_bounds__(NT) lf_attention(Params P) {
  extern __shared__ __align__(16) unsigned char smem[];
  A* Qs = (A*)smem;                 // [BM][D + 1]: odd row strides keep the rows on different banks
  A* Ks = Qs + BM * (D + 1);        // [BN][D + 1]
  A* Vs = Ks + BN * (D + 1);        // [BN][DV]
  A* Ps = Vs + BN * DV;             // [BM][BN + 1]: the tile's probabilities
  int* bad = (int*)(Ps + BM * (BN + 1));  // [DV]
  const A inf = (A)__int_as_float(0x7f800000);
  const A nan = (A)__int_as_float(0x7fc00000);
  const int t = threadIdx.x, r = t >> 2, g = t & 3;
  const long long blk = blockIdx.x, b = blk / P.qblocks, i0 = (blk % P.qblocks) * BM;
  long long qo, ko, vo, mo;
  lf_batch_offsets(P, b, qo, ko, vo, mo);
  const S* q = (const S*)P.q;
  const S* k = (const S*)P.k;
  const S* v = (const S*)P.v;
  for (int e = t; e < BM * D; e += NT) {
    int rr = e / D, x = e % D;
    long long i = i0 + rr;
    Qs[rr * (D + 1) + x] = i < P.tq ? ld(q, qo + i * P.qsr + x * P.qsc) : (A)0;
  }
  const long long i = i0 + r;
  const A scale = (A)P.scale, post = (A)P.post;
  A m = -inf, l = 0, acc[NC];
#pragma unroll
  for (int c = 0; c < NC; ++c) acc[c] = 0;
  const long long kv_end = CAUSAL ? min(P.tk, i0 + BM) : P.tk;
  for (long long j0 = 0; j0 < kv_end; j0 += BN) {
    __syncthreads();  // the last tile's readers are done (and Qs is written, the first time)
    for (int e = t; e < BN * D; e += NT) {
      int jj = e / D, x = e % D;
      long long j = j0 + jj;
      Ks[jj * (D + 1) + x] = j < P.tk ? ld(k, ko + j * P.ksr + x * P.ksc) : (A)0;
    }
    for (int e = t; e < BN * DV; e += NT) {
      int jj = e / DV, x = e % DV;
      long long j = j0 + jj;
      Vs[jj * DV + x] = j < P.tk ? ld(v, vo + j * P.vsr + x * P.vsc) : (A)0;
    }
    __syncthreads();
    A s[BN / 4];
#pragma unroll
    for (int c = 0; c < BN / 4; ++c) s[c] = 0;
    for (int x = 0; x < D; ++x) {
      const A a = Qs[r * (D + 1) + x];
#pragma unroll
      for (int c = 0; c < BN / 4; ++c) s[c] += a * Ks[(g + 4 * c) * (D + 1) + x];
    }
    A mx = m;
#pragma unroll
    for (int c = 0; c < BN / 4; ++c) {
      const long long j = j0 + g + 4 * c;
      A xv = s[c] * scale;
#if MASK == 1
      if (i < P.tq && j < P.tk) xv += ld((const S*)P.mask, mo + i * P.msr + j * P.msc);
#elif MASK >= 2
      if (i < P.tq && j < P.tk) {
        bool set = ((const unsigned char*)P.mask)[mo + i * P.msr + j * P.msc] != 0;
        if (set != (MASK == 2)) xv = -inf;
      }
#endif
      if (CAUSAL && j > i) xv = -inf;
      xv *= post;
      if (j >= P.tk) xv = -inf;  // past the last key: weight 0 (its V row is 0)
      s[c] = xv;
      mx = nmax(mx, xv);
    }
    mx = nmax(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = nmax(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    // A row all -inf so far weighs its keys e^-inf = 0; if it stays so, l = 0 and 0 / 0 = NaN, as
    // the unfused softmax gives.
    const A sub = mx == -inf ? (A)0 : mx;
    const A alpha = m == mx ? (A)1 : ex(m - sub);
    A sum = 0;
#pragma unroll
    for (int c = 0; c < BN / 4; ++c) {
      const A p = ex(s[c] - sub);
      sum += p;
      Ps[r * (BN + 1) + g + 4 * c] = p;
    }
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    l = l * alpha + sum;
    m = mx;
#pragma unroll
    for (int c = 0; c < NC; ++c) acc[c] *= alpha;
    __syncwarp();  // the row's probabilities come from the 4 threads of this warp that share it
    for (int jj = 0; jj < BN; ++jj) {
      const A p = Ps[r * (BN + 1) + jj];
#pragma unroll
      for (int c = 0; c < NC; ++c) {
        const int x = g + 4 * c;
        if (x < DV) acc[c] += p * Vs[jj * DV + x];  // weight 0 included: 0 * NaN is NaN unfused too
      }
    }
  }
  // Keys after the diagonal have weight 0 for every row of the block; the unfused P @ V still
  // multiplies them, so a non-finite value there makes that column NaN.
  if (CAUSAL && kv_end < P.tk) {
    for (int x = t; x < DV; x += NT) bad[x] = 0;
    __syncthreads();
    const long long n = (P.tk - kv_end) * DV;
    for (long long e = t; e < n; e += NT) {
      long long j = kv_end + e / DV;
      int x = (int)(e % DV);
      A val = ld(v, vo + j * P.vsr + x * P.vsc);
      if (!(val - val == (A)0)) bad[x] = 1;
    }
    __syncthreads();
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      const int x = g + 4 * c;
      if (x < DV && bad[x]) acc[c] = nan;
    }
  }
  if (i < P.tq) {
    S* out = (S*)P.out;
    const long long row = ((b / P.heads) * P.tq + i) * P.heads + b % P.heads;  // heads interleaved when heads > 1
#pragma unroll
    for (int c = 0; c < NC; ++c) {
      const int x = g + 4 * c;
      if (x < DV) st(out, row * DV + x, acc[c] / l);
    }
  }
}
)CUDA";

int dtype_code(DType d) {
  switch (d) {
    case DType::Float32:
      return 0;
    case DType::Float64:
      return 1;
    case DType::Float16:
      return 2;
    case DType::BFloat16:
      return 3;
    default:
      return -1;
  }
}

// Whether a tensor-core kernel can read an operand's rows as 16-byte chunks of `chunk` elements
// (given a 16-byte aligned base): unit column stride, row and batch strides and the offset
// multiples of `chunk`. Others (any strides) are read element by element.
bool vec_layout(const kir::GemmOperand& o, size_t nb, int64_t chunk) {
  if (o.strides[nb + 1] != 1 || o.offset % chunk != 0) return false;
  for (size_t i = 0; i <= nb; ++i)
    if (o.strides[i] % chunk != 0) return false;
  return true;
}

enum class Kind { kSimt, kTensor16, kTensorF32 };

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

struct Loaded {
  rt::cu::CUfunction fn = nullptr;
  std::string error;  // why it did not compile or load
};

}  // namespace

const char* attention_prelude() { return kPrelude; }

std::string attention_source(DType dtype, int64_t d, int64_t dv, int mask, bool causal) {
  return "#define DTYPE " + std::to_string(dtype_code(dtype)) + "\n#define D " + std::to_string(d) + "\n#define DV " +
         std::to_string(dv) + "\n#define MASK " + std::to_string(mask) + "\n#define CAUSAL " + (causal ? "1" : "0") +
         "\n" + kPrelude + kKernel;
}

size_t attention_shared_bytes(DType dtype, int64_t d, int64_t dv) {
  size_t a = dtype == DType::Float64 ? 8 : 4;
  return a * static_cast<size_t>(kBm * (d + 1) + kBn * (d + 1) + kBn * dv + kBm * (kBn + 1)) +
         4 * static_cast<size_t>(dv);
}

void run_attention(backend::AttentionCall& call) {
  const int device = call.node()->device.index();
  const size_t nb = call.batch.size();
  if (dtype_code(call.dtype) < 0) return backend::run_attention_on_reference(call, "not a floating-point dtype");
  if (nb > static_cast<size_t>(kMaxBatchRank))
    return backend::run_attention_on_reference(call, "more than 6 batch dims");
  const auto& cu = rt::cu::api();
  rt::cu::CUdevice dev = 0;
  int optin = 48 << 10;
  if (cu.cuDeviceGet(&dev, device) == 0) cu.cuDeviceGetAttribute(&optin, rt::cu::kAttrMaxSharedPerBlockOptin, dev);
  // Tensor cores for float16 and bfloat16 (attention_tc.cpp) and for float32 in three TF32
  // products (attention_f32.cpp) at head dims 32, 64, 128; the SIMT kernel otherwise.
  std::string not_tc, not_f32;
  bool tc = attention_tc_supports(call.dtype, call.d, call.dv, &not_tc);
  bool f32 = !tc && attention_f32_supports(call.dtype, call.d, call.dv, &not_f32);
  // Both tensor-core kernels use sm_80's instructions (mma.sync on 16-bit floats and TF32,
  // cp.async, max.NaN, __reduce_or_sync): an older GPU runs the SIMT kernel.
  if ((tc || f32) && rt::cu::context_of(device).info.sm_major < 8) {
    (tc ? not_tc : not_f32) = "the GPU is older than sm_80";
    tc = f32 = false;
  }
  // On Hopper (sm_90) the tensor-core kernels' products are warpgroup MMA (wgmma): the 16-bit
  // kernel's at head dims 64 and 128, the float32 kernel's where that is the faster
  // (attention_f32_many_blocks) or LAZYFUSE_ATTENTION_WGMMA=1 asks; none with LAZYFUSE_ATTENTION_WGMMA=0.
  std::string not_wg = "LAZYFUSE_ATTENTION_WGMMA=0";
  const auto& info = rt::cu::context_of(device).info;
  const rt::Config& config = rt::config();
  const Kind kind = tc ? Kind::kTensor16 : f32 ? Kind::kTensorF32 : Kind::kSimt;
  // The kernel's shape for a choice of wgmma: rows a block, the grid, keys a tile, shared memory,
  // and the cache key of its source.
  struct Choice {
    bool wg = false, few_blocks = false, pairs = false, many_blocks = false;
    int rows = 0, keys = 0;
    long long qblocks = 0, blocks = 0;
    size_t shared = 0;
    std::string arch, key;
  };
  auto choose = [&](bool wg) {
    Choice c;
    c.wg = wg;
    c.rows = tc    ? attention_tc_rows(call.d, call.dv, call.params.mask, config.attention_rows, wg)
             : f32 ? attention_f32_rows()
                   : kBm;
    c.qblocks = (call.tq + c.rows - 1) / c.rows;
    c.blocks = static_cast<long long>(call.batch_count()) * c.qblocks;
    // LAZYFUSE_ATTENTION_KEYS picks the wgmma kernel's tile at head dims up to 64, else the grid.
    c.few_blocks = wg && (config.attention_keys != 0 ? config.attention_keys == 128
                                                     : attention_wgmma_few_blocks(c.blocks, info.multiprocessors));
    // Causal 16-bit grids in pairs of query blocks (attention_tc_pairs): half the blocks.
    c.pairs = tc && attention_tc_pairs(call.params.causal, wg, static_cast<long long>(call.batch_count()), c.qblocks,
                                       info.multiprocessors, config.attention_pairs);
    if (c.pairs) c.blocks = static_cast<long long>(call.batch_count()) * ((c.qblocks + 1) / 2);
    c.many_blocks = f32 && !wg && attention_f32_many_blocks(call.d, call.dv, c.blocks, info.multiprocessors);
    c.keys = tc    ? attention_tc_keys_per_tile(call.d, call.dv, wg, c.few_blocks)
             : f32 ? attention_f32_keys_per_tile(call.d, call.dv, wg)
                   : kBn;
    c.shared = tc    ? attention_tc_shared_bytes(call.d, call.dv, c.rows, wg, c.few_blocks)
               : f32 ? attention_f32_shared_bytes(call.d, call.dv, wg)
                     : attention_shared_bytes(call.dtype, call.d, call.dv);
    c.arch = wg ? "sm_90a" : arch_of(device);  // wgmma is sm_90a's
    const char* tag = tc    ? (wg ? "wg" : "tc")
                      : f32 ? (config.matmul_tf32 ? (wg ? "wgtf32x1" : "tf32x1") : (wg ? "wgtf32x3" : "tf32x3"))
                            : "simt";
    c.key = std::string(tag) + std::to_string(c.rows) + "x" + std::to_string(c.keys) + (c.pairs ? "p" : "") +
            (c.many_blocks ? "m" : "") + "|" +
            std::to_string(dtype_code(call.dtype)) + "|" + std::to_string(call.d) + "|" + std::to_string(call.dv) + "|" +
            std::to_string(call.params.mask) + "|" + (call.params.causal ? "c" : "n") + "|" + c.arch + "|" +
            std::to_string(device);
    return c;
  };
  static std::mutex mu;
  static std::unordered_map<std::string, Loaded> kernels;  // for the process's lifetime, like modules
  // The choice's kernel, compiled and loaded on first sight (a failure is kept too, with its error).
  auto load = [&](const Choice& c, bool* compiled_now) {
    std::lock_guard<std::mutex> lock(mu);
    auto it = kernels.find(c.key);
    if (it == kernels.end()) {
      std::string log;
      const std::string src =
          tc    ? attention_tc_source(call.dtype, call.d, call.dv, call.params.mask, call.params.causal, c.rows, c.wg,
                                      c.few_blocks, c.pairs)
          : f32 ? attention_f32_source(call.d, call.dv, call.params.mask, call.params.causal, c.many_blocks,
                                       config.matmul_tf32, c.wg)
                : attention_source(call.dtype, call.d, call.dv, call.params.mask, call.params.causal);
      auto module = library_module(src, "lf_attention", c.arch, device, &log);
      Loaded l;
      if (!module.ok())
        l.error = std::string(module.status().message());
      else if (rt::cu::CUresult r2 = cu.cuModuleGetFunction(&l.fn, static_cast<rt::cu::CUmodule>(*module), "lf_attention");
               r2 != 0)
        l.error = "cuModuleGetFunction: " + rt::cu::error_text(r2);
      else if (c.shared > (48u << 10))
        LF_CU_CHECK(cu.cuFuncSetAttribute(l.fn, /*CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES=*/8,
                                          static_cast<int>(c.shared)));
      it = kernels.emplace(c.key, l).first;
      *compiled_now = true;
    }
    return it->second;
  };
  auto wgmma_runs = [&] {
    if (config.attention_wgmma == 0) return false;
    if (tc) return attention_wgmma_supports(call.dtype, call.d, call.dv, info.sm_major, info.sm_minor, &not_wg);
    if (!f32 || !attention_f32_wgmma_supports(call.d, call.dv, info.sm_major, info.sm_minor, &not_wg)) return false;
    const long long blocks = static_cast<long long>(call.batch_count()) *
                             ((call.tq + attention_f32_rows() - 1) / attention_f32_rows());
    if (config.attention_wgmma < 0 && !attention_f32_many_blocks(call.d, call.dv, blocks, info.multiprocessors)) {
      not_wg = "mma.sync is the faster at head dim 128 and on grids of fewer than 3 blocks an SM";
      return false;
    }
    return true;
  };
  Choice choice = choose(wgmma_runs());
  if (choice.shared > static_cast<size_t>(optin))
    return backend::run_attention_on_reference(call, "head dims too large for the kernel's shared memory");
  bool compiled_now = false;
  Loaded loaded = load(choice, &compiled_now);
  if (!loaded.fn && choice.wg) {
    // An NVRTC without sm_90a (before CUDA 12), or a driver that cannot load it: mma.sync instead.
    not_wg = "the sm_90a kernel did not compile: " + loaded.error;
    choice = choose(false);
    loaded = load(choice, &compiled_now);
  }
  const bool wg = choice.wg;
  const int rows = choice.rows, keys = choice.keys;
  const long long qblocks = choice.qblocks, blocks = choice.blocks;
  const size_t shared = choice.shared;
  if (!loaded.fn) return backend::run_attention_on_reference(call, "the kernel did not compile: " + loaded.error);
  if (compiled_now) ++call.run.stats.kernels_compiled;
  std::shared_ptr<rt::Storage> out = call.allocate_output();
  bool vec_loads = false;
  if (blocks > 0 && call.dv > 0) {
    if (blocks > INT32_MAX) return backend::run_attention_on_reference(call, "too many blocks for one grid");
    Params p{};
    auto addr = [](const kir::GemmOperand& o) { return o.data; };
    p.q = addr(call.q);
    p.k = addr(call.k);
    p.v = addr(call.v);
    p.mask = call.params.has_mask() ? addr(call.mask) : nullptr;
    p.out = out->data();
    p.tq = call.tq;
    p.tk = call.tk;
    p.qblocks = qblocks;
    p.batch_rank = static_cast<long long>(nb);
    p.heads = call.heads;
    p.qo = call.q.offset, p.ko = call.k.offset, p.vo = call.v.offset;
    p.mo = call.params.has_mask() ? call.mask.offset : 0;
    p.qsr = call.q.strides[nb], p.qsc = call.q.strides[nb + 1];
    p.ksr = call.k.strides[nb], p.ksc = call.k.strides[nb + 1];
    p.vsr = call.v.strides[nb], p.vsc = call.v.strides[nb + 1];
    if (call.params.has_mask()) p.msr = call.mask.strides[nb], p.msc = call.mask.strides[nb + 1];
    for (size_t d = 0; d < nb; ++d) {
      p.batch[d] = call.batch[d];
      p.qb[d] = call.q.strides[d];
      p.kb[d] = call.k.strides[d];
      p.vb[d] = call.v.strides[d];
      p.mb[d] = call.params.has_mask() ? call.mask.strides[d] : 0;
    }
    p.scale = call.params.scale;
    p.post = call.params.post_scale;
    // 16-byte rows: 8 elements of the 16-bit floats, 4 of float32.
    const int64_t chunk = tc ? 8 : 4;
    const bool layout = kind != Kind::kSimt && vec_layout(call.q, nb, chunk) && vec_layout(call.k, nb, chunk) &&
                        vec_layout(call.v, nb, chunk);
    p.vec = layout && aligned16(p.q) && aligned16(p.k) && aligned16(p.v);
    vec_loads = p.vec != 0;
    auto fn = loaded.fn;
    auto launch = [fn, blocks, shared, device](Params& params) {
      rt::cu::DeviceContext& ctx = rt::cu::device_context(device);
      void* args[] = {&params};
      LF_CU_CHECK(rt::cu::api().cuLaunchKernel(fn, static_cast<unsigned>(blocks), 1, 1, kThreads, 1, 1,
                                               static_cast<unsigned>(shared), ctx.stream, args, nullptr));
    };
    launch(p);
    if (call.record) {  // for a flush plan: the kernel again over new addresses {q, k, v, mask, out}
      call.record->outputs.emplace_back(call.node(), out);
      call.record->addresses = {p.q, p.k, p.v, p.mask, p.out};
      call.record->replay = [p, launch, layout](void* const* a) mutable {
        p.q = a[0], p.k = a[1], p.v = a[2], p.mask = a[3], p.out = a[4];
        // New addresses may be aligned differently: cp.async only where they are 16-byte aligned.
        p.vec = layout && aligned16(p.q) && aligned16(p.k) && aligned16(p.v);
        launch(p);
      };
    }
    ++call.run.stats.kernels_launched;
    call.run.stats.bytes_moved += call.bytes;
  } else if (call.record) {
    call.record->outputs.emplace_back(call.node(), out);
    call.record->addresses = {out->data()};
    call.record->replay = [](void* const*) {};  // nothing to compute: the output is empty
  }
  call.finish(std::move(out));
  const std::string mma = wg ? "wgmma" : "mma.sync";
  const std::string what = tc    ? "tensor-core flash attention kernel (" + mma
                           : f32 ? (config.matmul_tf32
                                        ? "tensor-core flash attention kernel (float32 as one TF32 " + mma +
                                              " product, LAZYFUSE_MATMUL_TF32=1"
                                        : "tensor-core flash attention kernel (float32 as three TF32 " + mma + " products")
                                 : "flash attention kernel (float32 SIMT";
  const std::string loads = kind == Kind::kSimt ? ""
                            : vec_loads         ? (tc ? ", cp.async loads" : ", 16-byte loads")
                                                : ", element loads (q, k, v rows not 16-byte aligned)";
  call.log(what + ", CUDA C, NVRTC" + std::string(compiled_now ? ", compiled now" : "") +
           "): " + std::to_string(blocks) + " blocks of " + (choice.pairs ? "2 x " : "") + std::to_string(rows) +
           " query rows" + (choice.pairs ? " (a heavy and a light query block of one head)" : "") + ", key tiles of " +
           std::to_string(keys) + loads +
           (kind == Kind::kSimt ? " (no tensor cores: " +
                                      (call.dtype == DType::Float32   ? not_f32
                                       : call.dtype == DType::Float64 ? "float64"
                                                                      : not_tc) +
                                      ")"
                            : !wg ? " (no wgmma: " + not_wg + ")"
                                        : ""));
}

}  // namespace lf::cuda
