// k-means' assignment on a GPU (ir::Op::Nearest): one fixed CUDA C kernel (program.h), a thread a
// point. A block stages the centers in shared memory (in chunks of up to 48 KiB, converted to the
// compute type once) and every thread walks them with its point's row in registers (rows of up to
// 32 values; a kernel is compiled per such width), so the K x D centers are read from L2 once a
// block and the N x K distances are never written. Each distance is rounded as the ops it replaces
// round it: the difference and its square to the dtype, the sum (in float, double for float64, as
// the row kernels sum) to the dtype. The first minimum wins, a NaN distance first of all (argmin's
// rule).
#include <algorithm>
#include <functional>
#include <string>

#include "codegen/backend/kernel.h"
#include "codegen/cuda/backend.h"
#include "codegen/cuda/program.h"
#include "runtime/cuda_driver.h"

namespace lf::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kSharedBytes = 48 * 1024;  // the default limit of a block's dynamic shared memory
constexpr int64_t kRegisterRow = 32;         // widest point row held in registers

constexpr const char* kNearestSource = R"(
#define ROUND(v) LOAD(STORE(v))
// The square rounded on its own, never contracted into the sum's multiply-add (as the ops it
// replaces round it).
#if ACC_DOUBLE
#define SQUARE(v) __dmul_rn((v), (v))
#else
#define SQUARE(v) __fmul_rn((v), (v))
#endif
extern "C" __global__ void __launch_bounds__(256)
lf_nearest(const S* x, const S* c, long long* out, i64 n, i64 k, i64 d, i64 xs0, i64 xs1, i64 cs0, i64 cs1,
           int chunk_rows) {
  extern __shared__ __align__(16) unsigned char lf_smem[];
  C* sc = (C*)lf_smem;  // chunk_rows x d centers
  const i64 i = (i64)blockIdx.x * blockDim.x + threadIdx.x;
  const bool live = i < n;
#if DIM > 0
  C xr[DIM];
#pragma unroll
  for (int e = 0; e < DIM; ++e) xr[e] = live ? LOAD(x[i * xs0 + e * xs1]) : (C)0;
#endif
  long long best = 0;
  C best_v = 0;
  bool done = false;
  for (i64 j0 = 0; j0 < k; j0 += chunk_rows) {
    const int rows = (int)(k - j0 < chunk_rows ? k - j0 : chunk_rows);
    __syncthreads();
    for (i64 t = threadIdx.x; t < (i64)rows * d; t += blockDim.x) {
      const i64 r = t / d, e = t - r * d;
      sc[t] = LOAD(c[(j0 + r) * cs0 + e * cs1]);
    }
    __syncthreads();
    if (!live || done) continue;
    for (int r = 0; r < rows; ++r) {
      ACC acc = 0;
#if DIM > 0
#pragma unroll
      for (int e = 0; e < DIM; ++e) {
        const C diff = ROUND(xr[e] - sc[r * DIM + e]);
        acc += (ACC)ROUND(SQUARE(diff));
      }
#else
      for (i64 e = 0; e < d; ++e) {
        const C diff = ROUND(LOAD(x[i * xs0 + e * xs1]) - sc[r * d + e]);
        acc += (ACC)ROUND(SQUARE(diff));
      }
#endif
      const C v = ROUND((C)acc);
      const i64 j = j0 + r;
      if (j == 0 || v != v || v < best_v) {
        best = j;
        best_v = v;
      }
      if (best_v != best_v) {  // the first NaN wins
        done = true;
        break;
      }
    }
  }
  if (live) out[i] = best;
}
)";

}  // namespace

std::string nearest_source(DType dtype, int64_t dim) {
  const bool f64 = dtype == DType::Float64;
  return dtype_macros(dtype) + "#define ACC " + (f64 ? "double\n#define ACC_DOUBLE 1" : "float\n#define ACC_DOUBLE 0") +
         "\n#define DIM " + std::to_string(dim) + "\n" + kNearestSource;
}

void run_nearest(backend::NearestCall& call) {
  ir::Node* y = call.node();
  const int device = y->device.index();
  if (!is_floating(call.dtype)) return backend::run_nearest_on_reference(call, "not a floating dtype");
  const bool f64 = call.dtype == DType::Float64;
  const int64_t csize = f64 ? 8 : 4;  // the compute type's size
  if (call.d * csize > kSharedBytes) return backend::run_nearest_on_reference(call, "a center's row exceeds 48 KiB");
  const int64_t dim = call.d <= kRegisterRow ? call.d : 0;
  auto fn = library_function(nearest_source(call.dtype, dim), "lf_nearest", device);
  if (!fn.ok()) return backend::run_nearest_on_reference(call, "the kernel failed to compile: " + std::string(fn.status().message()));
  const auto f = static_cast<rt::cu::CUfunction>(*fn);
  auto out = rt::Storage::allocate(y->device, static_cast<size_t>(y->numel()) * sizeof(int64_t));
  // The launch over x's and c's storage bases into o (a flush plan's replay runs it again).
  // Centers a shared-memory chunk holds (all of them for rows of 0 values: nothing is staged).
  int chunk_rows = static_cast<int>(std::clamp<int64_t>(call.d > 0 ? kSharedBytes / (call.d * csize) : call.k, 1,
                                                        std::clamp<int64_t>(call.k, 1, int64_t{1} << 30)));
  const unsigned shared = static_cast<unsigned>(std::max<int64_t>(chunk_rows * call.d * csize, 16));
  const int64_t blocks = (call.n + kThreads - 1) / kThreads;
  if (blocks > INT32_MAX) return backend::run_nearest_on_reference(call, "too many points for one grid");
  const int64_t xo = call.x.offset * static_cast<int64_t>(dtype_size(call.dtype));
  const int64_t co = call.c.offset * static_cast<int64_t>(dtype_size(call.dtype));
  int64_t n = call.n, k = call.k, d = call.d;
  int64_t xs0 = call.x.strides[0], xs1 = call.x.strides[1], cs0 = call.c.strides[0], cs1 = call.c.strides[1];
  std::function<void(const void*, const void*, void*)> run = [=](const void* xb, const void* cb, void* o) mutable {
    if (blocks == 0) return;
    const void* x = static_cast<const char*>(xb) + xo;
    const void* c = static_cast<const char*>(cb) + co;
    void* params[] = {&x, &c, &o, &n, &k, &d, &xs0, &xs1, &cs0, &cs1, &chunk_rows};
    LF_CU_CHECK(rt::cu::api().cuLaunchKernel(f, static_cast<unsigned>(blocks), 1, 1, kThreads, 1, 1, shared,
                                             rt::cu::device_context(device).stream, params, nullptr));
  };
  run(call.x.data, call.c.data, out->data());
  call.finish(out, [run](void* const* p) mutable { run(p[0], p[1], p[2]); },
              "a thread a point, the centers staged in shared memory " +
                  std::string(dim ? "and the point's row in registers " : "") + "(" + std::to_string(blocks) + " blocks)");
}

}  // namespace lf::cuda
