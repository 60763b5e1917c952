// scatter_add and the scatter row (scatter, scatter_reduce, index_put, index_copy, index_fill) on a
// GPU: the output starts as a copy of self, then a thread per index element combines its src value
// with its destination by an atomic (up to three launches of one kernel, `phase`):
//   0 (prepare, when needed): assign records each destination's last writer (an atomicMax of the
//     element's row-major position: the last in index order wins, deterministically); without
//     include_self a destination is set to the mode's identity; mean counts its values.
//   1 (apply): assign: the last writer stores; sum and mean atomicAdd (float, double, int32, int64;
//     16-bit floats by compare-and-swap on the 32-bit word that holds them); prod, amax, amin a
//     compare-and-swap loop (int32/int64 amax, amin: atomicMax / atomicMin).
//   2 (mean): each destination with values divides by its count (integers floor).
// Integer results, amax, amin and assign do not depend on the atomics' order: exact. Float sums,
// means and products do (not deterministic, as PyTorch's); LAZYFUSE_DETERMINISTIC=1 runs them in
// index order instead (the reference executor on the host: exact, slower). An index out of range
// sets a device-side error word ({1, index}), read back after the kernels: an lf::Error at this
// group's sync point. scatter_add of rank 1 or 2 with many values a destination (bincount,
// histograms, index_add of rows as k-means' sums) adds into the output privatized in shared memory
// instead (in the compute type; up to 4 slices of the bins), then one global atomic a non-zero bin
// and block. A zeros() self is a clear, a full() src a constant in the kernel.
#include <algorithm>
#include <cstring>

#include "codegen/backend/scan_scatter.h"
#include "codegen/cuda/backend.h"
#include "codegen/cuda/program.h"
#include "runtime/config.h"
#include "runtime/cuda_driver.h"

namespace lf::cuda {
namespace {

using ir::ScatterReduce;

constexpr int kThreads = 256;

// The kernel's parameter block; the CUDA C struct below has the same fields in the same order.
struct Params {
  const void* index;
  const void* src;
  void* out;
  long long* error;
  long long* winner;             // assign: the last writer's position per destination
  unsigned long long* hits;      // mean: values per destination
  long long count, axis_size, out_numel;
  long long shape[backend::ScatterArgs::kMaxRank], out_strides[backend::ScatterArgs::kMaxRank],
      index_strides[backend::ScatterArgs::kMaxRank], src_strides[backend::ScatterArgs::kMaxRank];
  double src_value;
  long long src_ivalue;
  int rank, axis, phase, include_self, src_full;
};

const char* const kScatterSource = R"(
#define MAX_RANK 8
struct Params {
  const I* index;
  const S* src;
  S* out;
  i64* error;
  i64* winner;
  u64* hits;
  i64 count, axis_size, out_numel;
  i64 shape[MAX_RANK], out_strides[MAX_RANK], index_strides[MAX_RANK], src_strides[MAX_RANK];
  double src_value;
  i64 src_ivalue;
  int rank, axis, phase, include_self, src_full;
};

// src's value at offset soff (a full() src is a constant: SRC_FULL, by dtype).
#define SRC_AT(soff) (p.src_full ? SRC_FULL : LOAD(p.src[soff]))

// A bad index sets the error word once ({1, the index}).
__device__ __forceinline__ void lf_index_error(i64* error, i64 raw) {
  if (atomicCAS((u64*)error, 0ull, 1ull) == 0ull) error[1] = raw;
}

__device__ __forceinline__ C lf_combine(C a, C b) { return COMBINE(a, b); }

// 16-bit floats: compare-and-swap on the 32-bit word holding the element, each step rounded.
__device__ __forceinline__ void lf_atomic16(unsigned short* p, float v, bool bf, bool add) {
  unsigned* word = (unsigned*)((u64)p & ~(u64)3);
  unsigned shift = ((u64)p & 2) ? 16u : 0u;
  unsigned old = *word, assumed;
  do {
    assumed = old;
    unsigned short h = (unsigned short)(assumed >> shift);
    float cur = bf ? lf_b2f(h) : lf_h2f(h);
    float f = add ? cur + v : (float)lf_combine((C)cur, (C)v);
    unsigned short r = bf ? lf_f2b(f) : lf_f2h(f);
    if (r == h) return;  // unchanged (a max that lost): no write needed
    old = atomicCAS(word, assumed, (assumed & ~(0xffffu << shift)) | ((unsigned)r << shift));
  } while (assumed != old);
}

// 32- and 64-bit values: compare-and-swap on the value's bits.
template <typename W>
__device__ __forceinline__ void lf_atomic_cas(S* p, C v) {
  W* word = (W*)p;
  W old = *word, assumed;
  do {
    assumed = old;
    S cur;
    memcpy(&cur, &assumed, sizeof(S));
    S next = STORE(lf_combine(LOAD(cur), v));
    W bits;
    memcpy(&bits, &next, sizeof(S));
    if (bits == assumed) return;
    old = atomicCAS(word, assumed, bits);
  } while (assumed != old);
}

// The destination's offset in out, or -1 for a bad index (recorded in the error word). A 1-D
// index takes no 64-bit divisions (bincount, histograms).
__device__ __forceinline__ i64 lf_target(const Params& p, i64 e, i64* soff) {
  i64 ioff = 0, ooff = 0;
  if (p.rank == 1) {
    ioff = e * p.index_strides[0];
    *soff = e * p.src_strides[0];
  } else {
    i64 rest = e;
    *soff = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      i64 c = rest % p.shape[d];
      rest /= p.shape[d];
      ioff += c * p.index_strides[d];
      *soff += c * p.src_strides[d];
      if (d != p.axis) ooff += c * p.out_strides[d];
    }
  }
  i64 raw = (i64)p.index[ioff];
  i64 i = raw < 0 ? raw + p.axis_size : raw;
  if (i < 0 || i >= p.axis_size) {
    lf_index_error(p.error, raw);
    return -1;
  }
  return ooff + i * p.out_strides[p.axis];
}

extern "C" __global__ void __launch_bounds__(256) lf_scatter(Params p) {
  i64 stride = (i64)gridDim.x * blockDim.x;
  if (p.phase == 2) {
#if MODE == MODE_MEAN
    for (i64 t = (i64)blockIdx.x * blockDim.x + threadIdx.x; t < p.out_numel; t += stride) {
      i64 n = (i64)p.hits[t];
      if (n > 0) p.out[t] = STORE(MEAN(LOAD(p.out[t]), (C)(n + p.include_self)));
    }
#endif
    return;
  }
  for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < p.count; e += stride) {
    i64 soff, t = lf_target(p, e, &soff);
    if (t < 0) continue;
    if (p.phase == 0) {
#if MODE == MODE_ASSIGN
      atomicMax((long long*)p.winner + t, (long long)e);
#else
      if (!p.include_self) p.out[t] = STORE(IDENTITY);
#endif
#if MODE == MODE_MEAN
      atomicAdd(p.hits + t, 1ull);
#endif
      continue;
    }
#if MODE == MODE_ASSIGN
    if (p.winner[t] == e) p.out[t] = p.src_full ? STORE(SRC_FULL) : p.src[soff];
#else
    ATOMIC(p.out + t, SRC_AT(soff));
#endif
  }
}

#if MODE == MODE_SUM
// scatter_add of rank 1 or 2 privatized in shared memory: block (x, y) adds the values of chunk x
// whose output offsets fall in slice y (slice_bins offsets from y * slice_bins) into shared bins of
// the compute type, then adds its non-zero bins to the output with one global atomic each, in
// order (coalesced). Every slice reads every index of its chunk; slice 0 reports bad ones. A
// rank-2 element's coordinates take a 32-bit division where the count fits.
#define UNROLL 4
__device__ __forceinline__ void lf_coords(const Params& p, i64 e, i64* r, i64* c) {
  if (p.rank == 1) {
    *r = e;
    *c = 0;
  } else if (p.count <= 0xffffffffll) {
    unsigned q = (unsigned)e / (unsigned)p.shape[1];
    *r = q;
    *c = e - (i64)q * p.shape[1];
  } else {
    *r = e / p.shape[1];
    *c = e % p.shape[1];
  }
}

extern "C" __global__ void __launch_bounds__(1024)
lf_scatter_add_private(Params p, i64 out_numel, i64 slice_bins, i64 chunk) {
  extern __shared__ __align__(16) unsigned char lf_smem[];
  A* bins = (A*)lf_smem;
  const i64 lo = (i64)blockIdx.y * slice_bins;
  const i64 nb = min(slice_bins, out_numel - lo);
  for (i64 b = threadIdx.x; b < nb; b += blockDim.x) bins[b] = (A)0;
  __syncthreads();
  const i64 begin = (i64)blockIdx.x * chunk, end = min(begin + chunk, p.count);
  const i64 is1 = p.rank == 1 ? 0 : p.index_strides[1], ss1 = p.rank == 1 ? 0 : p.src_strides[1];
  // The output offset of an element: its index along axis, its own coordinate along the other dim.
  const i64 o_axis = p.out_strides[p.axis], o_other = p.rank == 1 ? 0 : p.out_strides[1 - p.axis];
  for (i64 e0 = begin + threadIdx.x; e0 < end; e0 += (i64)UNROLL * blockDim.x) {
    i64 raw[UNROLL], other[UNROLL], soff[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      i64 e = e0 + (i64)u * blockDim.x, r = 0, c = 0;
      if (e < end) lf_coords(p, e, &r, &c);
      raw[u] = e < end ? (i64)p.index[r * p.index_strides[0] + c * is1] : 0;
      soff[u] = r * p.src_strides[0] + c * ss1;
      other[u] = p.axis == 0 ? c : r;
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      i64 e = e0 + (i64)u * blockDim.x;
      if (e >= end) break;
      i64 i = raw[u] < 0 ? raw[u] + p.axis_size : raw[u];
      if (i < 0 || i >= p.axis_size) {
        if (blockIdx.y == 0) lf_index_error(p.error, raw[u]);
        continue;
      }
      i64 b = i * o_axis + other[u] * o_other - lo;
      if ((u64)b < (u64)nb) SHARED_ADD(&bins[b], SRC_AT(soff[u]));
    }
  }
  __syncthreads();
  for (i64 b = threadIdx.x; b < nb; b += blockDim.x) {
    A v = bins[b];
    if (v != (A)0) ATOMIC(p.out + lo + b, v);
  }
}
#endif
)";

constexpr int kPrivateThreads = 1024;

// The shared-memory plan of a scatter_add of rank 1 or 2 (slices == 0: none, atomics in global
// memory). Worth it when many values land in each output element (at least 8 on average): each
// block then adds into its own bins, and the global atomics drop from one a value to one a bin and
// block. Bins that do not fit one block's shared memory are split into up to 4 slices, each
// re-reading the indices.
struct Private {
  int64_t slices = 0, slice_bins = 0, chunks = 0;
  int shared = 0;
};

Private private_plan(const backend::ScatterArgs& call, int device) {
  Private plan;
  if (call.reduce != ScatterReduce::Sum || !call.include_self || call.dtype == DType::Bool) return plan;
  if (call.rank > 2 || call.count < 65536 || call.count < 8 * call.out_numel) return plan;
  const int64_t bin_bytes = call.dtype == DType::Int64 || call.dtype == DType::Float64 ? 8 : 4;
  const rt::cu::Api& cu = rt::cu::api();
  rt::cu::CUdevice dev = 0;
  int optin = 48 << 10;
  if (cu.cuDeviceGet(&dev, device) == 0) cu.cuDeviceGetAttribute(&optin, rt::cu::kAttrMaxSharedPerBlockOptin, dev);
  const int64_t cap = std::max<int64_t>(optin, 48 << 10) / bin_bytes;
  const int64_t slices = (call.out_numel + cap - 1) / cap;
  if (slices > 4) return plan;
  plan.slices = slices;
  plan.slice_bins = (call.out_numel + slices - 1) / slices;
  plan.shared = static_cast<int>(plan.slice_bins * bin_bytes);
  // One wave of blocks, one of 1024 threads an SM (the kernel takes about 60 registers a thread):
  // the fewest flushes of the bins, and the slices of a chunk read its indices at about the same
  // time (the later reads from L2).
  const int64_t sms = std::max(1, rt::cu::context_of(device).info.multiprocessors);
  plan.chunks = std::clamp<int64_t>(sms / slices, 1, (call.count + kPrivateThreads - 1) / kPrivateThreads);
  return plan;
}

bool floating16(DType d) { return d == DType::Float16 || d == DType::BFloat16; }

}  // namespace

std::string scatter_source(DType dtype, DType index_dtype, ScatterReduce reduce) {
  std::string s = dtype_macros(dtype);
  s += index_dtype == DType::Int32 ? "typedef int I;\n" : "typedef i64 I;\n";
  s += "#define MODE_ASSIGN 0\n#define MODE_SUM 1\n#define MODE_MEAN 3\n#define MODE " +
       std::to_string(static_cast<int>(reduce)) + "\n";
  // A full() src's value; scatter_add's shared bins: their type and add (floats in their compute
  // type, int64 as the unsigned adds of two's complement).
  s += is_floating(dtype) ? "#define SRC_FULL ((C)p.src_value)\n" : "#define SRC_FULL ((C)p.src_ivalue)\n";
  if (dtype == DType::Int64)
    s += "typedef u64 A;\n#define SHARED_ADD(p, v) atomicAdd((p), (u64)(v))\n";
  else if (dtype == DType::Int32)
    s += "typedef int A;\n#define SHARED_ADD(p, v) atomicAdd((p), (v))\n";
  else if (dtype != DType::Bool)
    s += "typedef C A;\n#define SHARED_ADD(p, v) atomicAdd((p), (v))\n";
  const bool fl = is_floating(dtype);
  // The step (codegen/reference/scatter.h): integers wrap, NaN propagates through amax / amin.
  std::string combine;
  switch (reduce) {
    case ScatterReduce::Assign: combine = "(b)"; break;
    case ScatterReduce::Sum:
    case ScatterReduce::Mean: combine = fl ? "((a) + (b))" : "(C)((u64)(a) + (u64)(b))"; break;
    case ScatterReduce::Prod: combine = fl ? "((a) * (b))" : "(C)((u64)(a) * (u64)(b))"; break;
    case ScatterReduce::AMax:
      combine = fl ? "(((a) != (a) || (b) != (b)) ? (C)NAN : ((a) < (b) ? (b) : (a)))" : "((a) < (b) ? (b) : (a))";
      break;
    case ScatterReduce::AMin:
      combine = fl ? "(((a) != (a) || (b) != (b)) ? (C)NAN : ((b) < (a) ? (b) : (a)))" : "((b) < (a) ? (b) : (a))";
      break;
  }
  s += "#define COMBINE(a, b) " + combine + "\n";
  std::string lo = dtype == DType::Int32   ? "(C)(-2147483647 - 1)"
                   : dtype == DType::Int64 ? "(C)(-9223372036854775807ll - 1)"
                                           : "(C)(-INFINITY)";
  std::string hi = dtype == DType::Int32   ? "(C)2147483647"
                   : dtype == DType::Int64 ? "(C)9223372036854775807ll"
                                           : "(C)INFINITY";
  s += "#define IDENTITY " +
       std::string(reduce == ScatterReduce::Prod   ? "(C)1"
                   : reduce == ScatterReduce::AMax ? lo
                   : reduce == ScatterReduce::AMin ? hi
                                                   : "(C)0") +
       "\n";
  s += fl ? "#define MEAN(sum, n) ((sum) / (n))\n"
          : "#define MEAN(sum, n) ((sum) / (n) - (((sum) % (n) != 0 && (sum) < 0) ? 1 : 0))\n";  // floor
  const bool add = reduce == ScatterReduce::Sum || reduce == ScatterReduce::Mean;
  std::string atomic;
  if (floating16(dtype)) {
    atomic = std::string("lf_atomic16((unsigned short*)(p), (v), ") + (dtype == DType::BFloat16 ? "true" : "false") +
             (add ? ", true)" : ", false)");
  } else if (add) {
    atomic = dtype == DType::Int64 ? "atomicAdd((u64*)(p), (u64)(v))" : "atomicAdd((p), (v))";  // float, double, int
  } else if (!fl && reduce != ScatterReduce::Prod) {
    const char* f = reduce == ScatterReduce::AMax ? "atomicMax" : "atomicMin";
    atomic =
        dtype == DType::Int64 ? std::string(f) + "((long long*)(p), (long long)(v))" : std::string(f) + "((p), (v))";
  } else {
    atomic = dtype_size(dtype) == 8 ? "lf_atomic_cas<u64>((p), (v))" : "lf_atomic_cas<unsigned>((p), (v))";
  }
  s += "#define ATOMIC(p, v) " + atomic + "\n";
  return s + kScatterSource;
}

namespace {

// A scatter's launches, built once and run by the call and by each replay of a flush plan (which
// keeps the error word and scratch: its launches are ordered on the one stream). run() queues
// everything on the stream (a graph capture takes it as it is); check() reads the error word,
// waiting for the kernels.
struct Launches {
  backend::ScatterArgs args;
  Params p{};
  rt::cu::CUfunction fn = nullptr;
  Private priv;
  int device = 0;
  size_t bytes = 0;  // the output's
  std::shared_ptr<rt::Storage> error, winner, hits;
  size_t scratch = 0;
  int launches = 0;

  // Into `out` from the operands `a` names (args, or args rebased for a replay).
  void run(const backend::ScatterArgs& a, void* out) {
    rt::cu::DeviceContext& ctx = rt::cu::device_context(device);
    const rt::cu::Api& cu = rt::cu::api();
    if (bytes && a.self_zero) {
      LF_CU_CHECK(cu.cuMemsetD8Async(reinterpret_cast<rt::cu::CUdeviceptr>(out), 0, bytes, ctx.stream));
    } else if (bytes) {
      LF_CU_CHECK(cu.cuMemcpyDtoDAsync(reinterpret_cast<rt::cu::CUdeviceptr>(out),
                                       reinterpret_cast<rt::cu::CUdeviceptr>(a.self), bytes, ctx.stream));
    }
    launches = 0;
    if (a.count == 0) return;
    LF_CU_CHECK(cu.cuMemsetD8Async(reinterpret_cast<rt::cu::CUdeviceptr>(error->data()), 0, 16, ctx.stream));
    if (winner)
      LF_CU_CHECK(cu.cuMemsetD8Async(reinterpret_cast<rt::cu::CUdeviceptr>(winner->data()), 0xff, scratch, ctx.stream));
    if (hits) LF_CU_CHECK(cu.cuMemsetD8Async(reinterpret_cast<rt::cu::CUdeviceptr>(hits->data()), 0, scratch, ctx.stream));
    p.index = a.index;
    p.src = a.src;
    p.out = out;
    auto launch = [&](int phase, int64_t n) {
      p.phase = phase;
      int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, int64_t{1} << 20);
      void* params[] = {&p};
      LF_CU_CHECK(cu.cuLaunchKernel(fn, static_cast<unsigned>(blocks), 1, 1, kThreads, 1, 1, 0, ctx.stream, params,
                                    nullptr));
      ++launches;
    };
    if (priv.slices) {
      int64_t out_numel = a.out_numel, slice_bins = priv.slice_bins, chunk = (a.count + priv.chunks - 1) / priv.chunks;
      void* params[] = {&p, &out_numel, &slice_bins, &chunk};
      LF_CU_CHECK(cu.cuLaunchKernel(fn, static_cast<unsigned>(priv.chunks), static_cast<unsigned>(priv.slices), 1,
                                    kPrivateThreads, 1, 1, static_cast<unsigned>(priv.shared), ctx.stream, params,
                                    nullptr));
      ++launches;
      return;
    }
    const ScatterReduce mode = a.reduce;
    if (mode == ScatterReduce::Assign || mode == ScatterReduce::Mean || !a.include_self) launch(0, a.count);
    launch(1, a.count);
    if (mode == ScatterReduce::Mean && a.out_numel > 0) launch(2, a.out_numel);
  }

  // Throws the first index out of range the last run met (indices are data: this waits for it).
  void check() const {
    if (args.count == 0) return;
    long long err[2];
    rt::read_flags(*error, 0, err, sizeof err);
    if (err[0] != 0) args.index_error(err[1]);
  }
};

}  // namespace

void run_scatter(backend::ScatterCall& call) {
  ir::Node* y = call.node();
  const ScatterReduce mode = call.reduce;
  if (call.dtype == DType::Bool && mode != ScatterReduce::Assign)
    return backend::run_scatter_on_reference(call, "no GPU scatter reduce for bool");
  const bool ordered = mode == ScatterReduce::Sum || mode == ScatterReduce::Mean || mode == ScatterReduce::Prod;
  if (is_floating(call.dtype) && ordered && rt::config().deterministic)
    return backend::run_scatter_on_reference(call, "LAZYFUSE_DETERMINISTIC=1: float steps in index order");
  auto l = std::make_shared<Launches>();
  l->args = call;
  l->device = y->device.index();
  l->bytes = static_cast<size_t>(call.out_numel) * dtype_size(call.dtype);
  // Rounded up to whole 32-bit words: a 16-bit step rewrites the word that holds its element.
  auto out = rt::Storage::allocate(y->device, std::max<size_t>((l->bytes + 3) / 4 * 4, 4));
  std::string how = mode == ScatterReduce::Assign ? "the last writer per destination (atomicMax), then its store"
                                                  : "atomics, a thread per value";
  if (call.count > 0) {
    l->priv = private_plan(call, l->device);
    auto fn = library_function(scatter_source(call.dtype, call.index_dtype, mode),
                               l->priv.slices ? "lf_scatter_add_private" : "lf_scatter", l->device);
    if (!fn.ok())
      return backend::run_scatter_on_reference(call, "the scatter kernel failed to compile: " +
                                                         std::string(fn.status().message()));
    l->fn = static_cast<rt::cu::CUfunction>(*fn);
    if (l->priv.shared > (48 << 10))
      LF_CU_CHECK(rt::cu::api().cuFuncSetAttribute(l->fn, /*CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES=*/8,
                                                   l->priv.shared));
    l->error = rt::Storage::allocate(y->device, 16);
    // Per-destination scratch: assign's last writers (-1: none, all bytes 0xff), mean's counts.
    l->scratch = static_cast<size_t>(std::max<int64_t>(call.out_numel, 1)) * 8;
    if (mode == ScatterReduce::Assign) l->winner = rt::Storage::allocate(y->device, l->scratch);
    if (mode == ScatterReduce::Mean) l->hits = rt::Storage::allocate(y->device, l->scratch);
    Params& p = l->p;
    p.error = static_cast<long long*>(l->error->data());
    p.winner = l->winner ? static_cast<long long*>(l->winner->data()) : nullptr;
    p.hits = l->hits ? static_cast<unsigned long long*>(l->hits->data()) : nullptr;
    p.count = call.count;
    p.axis_size = call.axis_size;
    p.out_numel = call.out_numel;
    for (int d = 0; d < call.rank; ++d) {
      p.shape[d] = call.shape[d];
      p.out_strides[d] = call.out_strides[d];
      p.index_strides[d] = call.index_strides[d];
      p.src_strides[d] = call.src_strides[d];
    }
    p.src_value = call.src_value;
    p.src_ivalue = call.src_ivalue;
    p.src_full = call.src_full ? 1 : 0;
    p.rank = call.rank;
    p.axis = static_cast<int>(call.axis);
    p.include_self = call.include_self ? 1 : 0;
    if (l->priv.slices)
      how = "bins in shared memory (" + std::to_string(l->priv.slices) + " slice(s) of " +
            std::to_string(l->priv.slice_bins) + ", " + std::to_string(l->priv.chunks) +
            " chunks), then one atomic add a bin and block";
  }
  l->run(call, out->data());
  // Indices known in range (the host wrote them): no error word to read, so no wait for the device.
  const bool check = call.count > 0 && !call.index_known;
  if (check) {
    ++call.run.stats.index_checks;
    l->check();
  }
  call.run.stats.kernels_launched += static_cast<uint64_t>(std::max(l->launches, 1));
  call.run.stats.bytes_moved += static_cast<uint64_t>(2 * call.out_numel + call.count) * dtype_size(call.dtype) +
                                static_cast<uint64_t>(call.count) * dtype_size(call.index_dtype);
  if (call.record)  // no values, or indices known in range: no error word read, here or in a replay
    call.record_call(out, [l](const backend::ScatterArgs& a, void* o) { l->run(a, o); },
                     check ? std::function<void()>([l] { l->check(); }) : std::function<void()>());
  backend::materialize(*y, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  call.log(how + (call.count == 0 ? " (none)" : call.index_known ? ", indices known in range: no check read back" : ""));
}

}  // namespace lf::cuda
