// scatter_add on a GPU: the output starts as a copy of self, then a thread per index element adds
// its src value with an atomic add (atomicAdd for float, double, int32 and int64; 16-bit floats by
// compare-and-swap on the 32-bit word holding them, each add rounded to the dtype). Integer results
// are exact; float results depend on the order the atomics land in, so they are not deterministic
// (as PyTorch's). LAZYFUSE_DETERMINISTIC=1 runs float scatters in index order instead (the
// reference executor on the host: exact, slower). An index out of range sets a device-side error
// word ({1, index}), read back after the kernel: an lf::Error at this group's sync point.
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
  int rank, axis;
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
  int rank, axis;
};

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
    i64 rest = e, ioff = 0, soff = 0, ooff = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      i64 c = rest % p.shape[d];
      rest /= p.shape[d];
      ioff += c * p.index_strides[d];
      soff += c * p.src_strides[d];
      if (d != p.axis) ooff += c * p.out_strides[d];
    }
    i64 raw = (i64)p.index[ioff];
    i64 i = raw < 0 ? raw + p.axis_size : raw;
    if (i < 0 || i >= p.axis_size) {
      if (atomicCAS((u64*)p.error, 0ull, 1ull) == 0ull) p.error[1] = raw;
      continue;
    }
    ATOMIC_ADD(p.out + ooff + i * p.out_strides[p.axis], LOAD(p.src[soff]));
  }
}
)";

}  // namespace

std::string scatter_source(DType dtype, DType index_dtype) {
  std::string s = dtype_macros(dtype);
  s += index_dtype == DType::Int32 ? "typedef int I;\n" : "typedef i64 I;\n";
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
  if (bytes) {
    size_t self_at = static_cast<size_t>(static_cast<const char*>(call.self) -
                                         static_cast<const char*>(call.self_storage->data()));
    rt::copy(*call.self_storage, self_at, *out, 0, bytes);
  }
  if (call.count > 0) {
    auto fn = library_function(scatter_source(call.dtype, call.index_dtype), "lf_scatter_add", device);
    if (!fn.ok())
      return backend::run_scatter_on_reference(call, "the scatter kernel failed to compile: " +
                                                         std::string(fn.status().message()));
    rt::cu::DeviceContext& ctx = rt::cu::device_context(device);
    const rt::cu::Api& cu = rt::cu::api();
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
    p.rank = call.rank;
    p.axis = static_cast<int>(call.axis);
    int64_t blocks = std::min<int64_t>((call.count + kThreads - 1) / kThreads, int64_t{1} << 20);
    void* params[] = {&p};
    LF_CU_CHECK(cu.cuLaunchKernel(static_cast<rt::cu::CUfunction>(*fn), static_cast<unsigned>(blocks), 1, 1, kThreads,
                                  1, 1, 0, ctx.stream, params, nullptr));
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
  call.log("atomic adds, a thread per value" + std::string(call.count == 0 ? " (none)" : ""));
}

}  // namespace lf::cuda
