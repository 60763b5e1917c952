// scatter_add on a GPU: the output starts as a copy of self (a zeros() self: a clear), then the
// values are added with atomic adds (atomicAdd for float, double, int32 and int64; 16-bit floats by
// compare-and-swap on the 32-bit word holding them, each add rounded to the dtype):
// - a scatter of rank 1 or 2 (bincount, histograms, index_add of rows as k-means' sums) of at least
//   8 values an output element on average: the output privatized in shared memory (in the
//   compute type; up to 4 slices of the bins, each block a chunk of the values and a slice), then
//   one global atomic a non-zero bin and block: the global atomics drop from one a value to one a
//   bin and block, and land in order;
// - otherwise a thread per value, an atomic add in global memory.
// Integer results are exact; float results depend on the order the atomics land in, so they are
// not deterministic (as PyTorch's). LAZYFUSE_DETERMINISTIC=1 runs float scatters in index order
// instead (the reference executor on the host: exact, slower). An index out of range sets a
// device-side error word ({1, index}), read back after the kernel: an lf::Error at this group's
// sync point. A full() src (bincount's weights of one) is a constant in the kernel.
#include <algorithm>
#include <cstring>

#include "codegen/backend/scan_scatter.h"
#include "codegen/cuda/backend.h"
#include "codegen/cuda/program.h"
#include "runtime/config.h"
#include "runtime/cuda_driver.h"

namespace lf::cuda {
namespace {

constexpr int kThreads = 256;

// The kernel's parameter block; the CUDA C struct below has the same fields in the same order.
struct Params {
  const void* index;
  const void* src;
  void* out;
  long long* error;
  long long count, axis_size;
  long long shape[backend::ScatterCall::kMaxRank], out_strides[backend::ScatterCall::kMaxRank],
      index_strides[backend::ScatterCall::kMaxRank], src_strides[backend::ScatterCall::kMaxRank];
  double src_value;
  long long src_ivalue;
  int rank, axis, src_full;
};

const char* const kScatterSource = R"(
#define MAX_RANK 8
struct Params {
  const I* index;
  const S* src;
  S* out;
  i64* error;
  i64 count, axis_size;
  i64 shape[MAX_RANK], out_strides[MAX_RANK], index_strides[MAX_RANK], src_strides[MAX_RANK];
  double src_value;
  i64 src_ivalue;
  int rank, axis, src_full;
};

// src's value at offset soff (a full() src is a constant: SRC_FULL, by dtype).
#define SRC_AT(soff) (p.src_full ? SRC_FULL : LOAD(p.src[soff]))

// A bad index sets the error word once ({1, the index}).
__device__ __forceinline__ void lf_index_error(i64* error, i64 raw) {
  if (atomicCAS((u64*)error, 0ull, 1ull) == 0ull) error[1] = raw;
}

__device__ __forceinline__ void lf_atomic_add16(unsigned short* p, float v, bool bf) {
  unsigned* word = (unsigned*)((u64)p & ~(u64)3);
  unsigned shift = ((u64)p & 2) ? 16u : 0u;
  unsigned old = *word, assumed;
  do {
    assumed = old;
    unsigned short h = (unsigned short)(assumed >> shift);
    float f = (bf ? lf_b2f(h) : lf_h2f(h)) + v;
    unsigned short r = bf ? lf_f2b(f) : lf_f2h(f);
    old = atomicCAS(word, assumed, (assumed & ~(0xffffu << shift)) | ((unsigned)r << shift));
  } while (assumed != old);
}

extern "C" __global__ void __launch_bounds__(256) lf_scatter_add(Params p) {
  for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < p.count; e += (i64)gridDim.x * blockDim.x) {
    i64 ioff, soff, ooff = 0;
    if (p.rank == 1) {  // no 64-bit divisions for a 1-D index (bincount, histograms)
      ioff = e * p.index_strides[0];
      soff = e * p.src_strides[0];
    } else {
      i64 rest = e;
      ioff = soff = 0;
      for (int d = p.rank - 1; d >= 0; --d) {
        i64 c = rest % p.shape[d];
        rest /= p.shape[d];
        ioff += c * p.index_strides[d];
        soff += c * p.src_strides[d];
        if (d != p.axis) ooff += c * p.out_strides[d];
      }
    }
    i64 raw = (i64)p.index[ioff];
    i64 i = raw < 0 ? raw + p.axis_size : raw;
    if (i < 0 || i >= p.axis_size) {
      lf_index_error(p.error, raw);
      continue;
    }
    ATOMIC_ADD(p.out + ooff + i * p.out_strides[p.axis], SRC_AT(soff));
  }
}

// A scatter of rank 1 or 2 privatized in shared memory: block (x, y) adds the values of chunk x
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
    if (v != (A)0) ATOMIC_ADD(p.out + lo + b, v);
  }
}
)";

constexpr int kPrivateThreads = 1024;

// The shared-memory plan of a scatter of rank 1 or 2 (slices == 0: none, atomics in global
// memory). Worth it when many values land in each output element (at least 8 on average): each block then adds into its
// own bins, and the global atomics drop from one a value to one a bin and block. Bins that do not
// fit one block's shared memory are split into up to 4 slices, each re-reading the indices.
struct Private {
  int64_t slices = 0, slice_bins = 0, chunks = 0;
  int shared = 0;
};

Private private_plan(const backend::ScatterCall& call, int device) {
  Private plan;
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

}  // namespace

std::string scatter_source(DType dtype, DType index_dtype) {
  std::string s = dtype_macros(dtype);
  s += index_dtype == DType::Int32 ? "typedef int I;\n" : "typedef i64 I;\n";
  // The shared bins' type and add (floats in their compute type; int64 as the unsigned adds of
  // two's complement), and a full() src's value.
  if (dtype == DType::Int64)
    s += "typedef u64 A;\n#define SHARED_ADD(p, v) atomicAdd((p), (u64)(v))\n#define SRC_FULL ((C)p.src_ivalue)\n";
  else if (dtype == DType::Int32)
    s += "typedef int A;\n#define SHARED_ADD(p, v) atomicAdd((p), (v))\n#define SRC_FULL ((C)p.src_ivalue)\n";
  else
    s += "typedef C A;\n#define SHARED_ADD(p, v) atomicAdd((p), (v))\n#define SRC_FULL ((C)p.src_value)\n";
  switch (dtype) {
    case DType::Float16: s += "#define ATOMIC_ADD(p, v) lf_atomic_add16((p), (v), false)\n"; break;
    case DType::BFloat16: s += "#define ATOMIC_ADD(p, v) lf_atomic_add16((p), (v), true)\n"; break;
    case DType::Int64: s += "#define ATOMIC_ADD(p, v) atomicAdd((u64*)(p), (u64)(v))\n"; break;
    default: s += "#define ATOMIC_ADD(p, v) atomicAdd((p), (v))\n"; break;  // float, double, int
  }
  return s + kScatterSource;
}

void run_scatter(backend::ScatterCall& call) {
  ir::Node* y = call.node();
  if (call.dtype == DType::Bool) return backend::run_scatter_on_reference(call, "no GPU scatter for bool");
  if (is_floating(call.dtype) && rt::config().deterministic)
    return backend::run_scatter_on_reference(call, "LAZYFUSE_DETERMINISTIC=1: float adds in index order");
  int device = y->device.index();
  size_t bytes = static_cast<size_t>(call.out_numel) * dtype_size(call.dtype);
  // Rounded up to whole 32-bit words: a 16-bit add rewrites the word that holds its element.
  auto out = rt::Storage::allocate(y->device, std::max<size_t>((bytes + 3) / 4 * 4, 4));
  rt::cu::DeviceContext& ctx = rt::cu::device_context(device);
  const rt::cu::Api& cu = rt::cu::api();
  if (bytes && call.self_zero) {
    LF_CU_CHECK(cu.cuMemsetD8Async(reinterpret_cast<rt::cu::CUdeviceptr>(out->data()), 0, bytes, ctx.stream));
  } else if (bytes) {
    size_t self_at = static_cast<size_t>(static_cast<const char*>(call.self) -
                                         static_cast<const char*>(call.self_storage->data()));
    rt::copy(*call.self_storage, self_at, *out, 0, bytes);
  }
  std::string how = "atomic adds, a thread per value";
  if (call.count > 0) {
    const Private priv = private_plan(call, device);
    auto fn = library_function(scatter_source(call.dtype, call.index_dtype),
                               priv.slices ? "lf_scatter_add_private" : "lf_scatter_add", device);
    if (!fn.ok())
      return backend::run_scatter_on_reference(call, "the scatter kernel failed to compile: " +
                                                         std::string(fn.status().message()));
    auto error = rt::Storage::allocate(y->device, 16);
    LF_CU_CHECK(cu.cuMemsetD8Async(reinterpret_cast<rt::cu::CUdeviceptr>(error->data()), 0, 16, ctx.stream));
    Params p{};
    p.index = call.index;
    p.src = call.src;
    p.out = out->data();
    p.error = static_cast<long long*>(error->data());
    p.count = call.count;
    p.axis_size = call.axis_size;
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
    auto f = static_cast<rt::cu::CUfunction>(*fn);
    if (priv.slices) {
      int64_t slice_bins = priv.slice_bins, chunk = (call.count + priv.chunks - 1) / priv.chunks;
      if (priv.shared > (48 << 10))
        LF_CU_CHECK(cu.cuFuncSetAttribute(f, /*CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES=*/8, priv.shared));
      int64_t out_numel = call.out_numel;
      void* params[] = {&p, &out_numel, &slice_bins, &chunk};
      LF_CU_CHECK(cu.cuLaunchKernel(f, static_cast<unsigned>(priv.chunks), static_cast<unsigned>(priv.slices), 1,
                                    kPrivateThreads, 1, 1, static_cast<unsigned>(priv.shared), ctx.stream, params,
                                    nullptr));
      how = "bins in shared memory (" + std::to_string(priv.slices) + " slice(s) of " + std::to_string(slice_bins) +
            ", " + std::to_string(priv.chunks) + " chunks), then one atomic add a bin and block";
    } else {
      int64_t blocks = std::min<int64_t>((call.count + kThreads - 1) / kThreads, int64_t{1} << 20);
      void* params[] = {&p};
      LF_CU_CHECK(
          cu.cuLaunchKernel(f, static_cast<unsigned>(blocks), 1, 1, kThreads, 1, 1, 0, ctx.stream, params, nullptr));
    }
    long long err[2];
    auto host = rt::Storage::allocate(Device::cpu(), sizeof err);
    rt::copy(*error, 0, *host, 0, sizeof err);  // waits for the kernel: indices are data
    std::memcpy(err, host->data(), sizeof err);
    if (err[0] != 0) call.index_error(err[1]);
  }
  ++call.run.stats.kernels_launched;
  call.run.stats.bytes_moved += static_cast<uint64_t>(2 * call.out_numel + call.count) * dtype_size(call.dtype) +
                                static_cast<uint64_t>(call.count) * dtype_size(call.index_dtype);
  backend::materialize(*y, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  call.log(how + std::string(call.count == 0 ? " (none)" : ""));
}

}  // namespace lf::cuda
