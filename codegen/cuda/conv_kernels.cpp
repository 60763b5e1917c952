// The generated convolution and pooling kernels (see conv_kernels.h). Untested on a GPU: the CUDA C
// compiles with NVRTC and with `nvcc -ptx -arch=sm_90` on the build machine (tests/codegen/cuda/
// conv_kernels_test.cpp), nothing more.
#include "codegen/cuda/conv_kernels.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "codegen/cuda/backend.h"
#include "codegen/cuda/library_cache.h"
#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda/ops.h"
#include "runtime/cuda_driver.h"

namespace lf::cuda {
namespace {

constexpr int kTile = 64, kThreads = 256;

// The launch arguments, laid out alike on both sides (every field 8 bytes).
struct ConvArgs {
  const void* x;
  const void* w;
  void* y;
  int64_t x_offset, w_offset;
  int64_t sx[4];
  int64_t N, C, H, W, O, KH, KW, OH, OW, G;
  int64_t stride_h, stride_w, pad_top, pad_left, dil_h, dil_w;
};
struct PoolArgs {
  const void* x;
  void* y;
  int64_t x_offset;
  int64_t sx[4];
  int64_t C, H, W, OH, OW, total;
  int64_t kind, kh, kw, sh, sw, ph, pw, include_pad;
};

constexpr const char* kConvArgs = R"(
struct ConvArgs {
  const void* x; const void* w; void* y;
  i64 x_offset, w_offset;
  i64 sx[4];
  i64 N, C, H, W, O, KH, KW, OH, OW, G;
  i64 stride_h, stride_w, pad_top, pad_left, dil_h, dil_w;
};
)";
constexpr const char* kPoolArgs = R"(
struct PoolArgs {
  const void* x; void* y;
  i64 x_offset;
  i64 sx[4];
  i64 C, H, W, OH, OW, total;
  i64 kind, kh, kw, sh, sw, ph, pw, include_pad;
};
)";

// Storage type, compute type and conversions of a float dtype, as macros the kernels use.
std::string type_macros(DType d) {
  switch (d) {
    case DType::Float16:
      return "#define T unsigned short\n#define ACC float\n#define LD(v) lf_h2f(v)\n#define ST(a) lf_f2h((float)(a))\n";
    case DType::BFloat16:
      return "#define T unsigned short\n#define ACC float\n#define LD(v) lf_b2f(v)\n#define ST(a) lf_f2b((float)(a))\n";
    case DType::Float64: return "#define T double\n#define ACC double\n#define LD(v) (v)\n#define ST(a) ((double)(a))\n";
    default: return "#define T float\n#define ACC float\n#define LD(v) (v)\n#define ST(a) ((float)(a))\n";
  }
}

// Block (bx, by, z): output pixels [bx * 64, +64) by output channels [by * 64, +64) of group
// z % G of image z / G (z strides by gridDim.z past 65535). Thread (ty, tx) = (tid / 16, tid % 16)
// owns channels ty + 16 i and pixels tx + 16 j, i, j < 4: the shared-memory reads of a warp are
// two broadcast rows and 16 consecutive columns.
constexpr const char* kConvBody = R"(
extern "C" __global__ void __launch_bounds__(256) NAME(ConvArgs a) {
  __shared__ ACC ws[16][64];
  __shared__ ACC xs[16][64];
  const T* __restrict__ x = (const T*)a.x + a.x_offset;
  const T* __restrict__ w = (const T*)a.w + a.w_offset;
  T* __restrict__ y = (T*)a.y;
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const i64 Cg = a.C / a.G, Og = a.O / a.G, taps = a.KH * a.KW, K = Cg * taps, P = a.OH * a.OW;
  const i64 p0 = (i64)blockIdx.x * 64, m0 = (i64)blockIdx.y * 64;
  for (i64 z = blockIdx.z; z < a.N * a.G; z += gridDim.z) {
    const i64 n = z / a.G, g = z % a.G;
    const T* wg = w + g * Og * K;
    const T* xn = x + n * a.sx[0] + g * Cg * a.sx[1];
    ACC acc[4][4];
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) acc[i][j] = 0;
    for (i64 k0 = 0; k0 < K; k0 += 16) {
      for (int e = tid; e < 1024; e += 256) {
        // Weights: consecutive threads along k, which is contiguous in a row of W.
        int kk = e % 16, mm = e / 16;
        i64 o = m0 + mm, k = k0 + kk;
        ws[kk][mm] = (o < Og && k < K) ? (ACC)LD(wg[o * K + k]) : (ACC)0;
        // Input columns: consecutive threads along output pixels.
        int pp = e % 64, kx = e / 64;
        i64 p = p0 + pp;
        k = k0 + kx;
        ACC v = 0;
        if (p < P && k < K) {
          i64 c = k / taps, r = k % taps;
          i64 h = (p / a.OW) * a.stride_h - a.pad_top + (r / a.KW) * a.dil_h;
          i64 q = (p % a.OW) * a.stride_w - a.pad_left + (r % a.KW) * a.dil_w;
          if (h >= 0 && h < a.H && q >= 0 && q < a.W) v = (ACC)LD(xn[c * a.sx[1] + h * a.sx[2] + q * a.sx[3]]);
        }
        xs[kx][pp] = v;
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < 16; ++kk) {
        ACC wv[4], xv[4];
        for (int i = 0; i < 4; ++i) wv[i] = ws[kk][ty + 16 * i];
        for (int j = 0; j < 4; ++j) xv[j] = xs[kk][tx + 16 * j];
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) acc[i][j] += wv[i] * xv[j];
      }
      __syncthreads();
    }
    for (int i = 0; i < 4; ++i) {
      i64 o = m0 + ty + 16 * i;
      if (o >= Og) continue;
      T* row = y + (n * a.O + g * Og + o) * P;
      for (int j = 0; j < 4; ++j) {
        i64 p = p0 + tx + 16 * j;
        if (p < P) row[p] = ST(acc[i][j]);
      }
    }
  }
}
)";

// The reference's window rules (codegen/ir/conv.h, codegen/reference/conv.cpp), element by element.
constexpr const char* kPoolBody = R"(
extern "C" __global__ void __launch_bounds__(256) NAME(PoolArgs a) {
  const T* __restrict__ x = (const T*)a.x + a.x_offset;
  T* __restrict__ y = (T*)a.y;
  for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < a.total; e += (i64)gridDim.x * blockDim.x) {
    i64 ow = e % a.OW, oh = (e / a.OW) % a.OH, plane = e / (a.OW * a.OH);
    const T* src = x + (plane / a.C) * a.sx[0] + (plane % a.C) * a.sx[1];
    i64 h0, h1, w0, w1;
    if (a.kind == 2) {  // adaptive average: [floor(i * s / n), ceil((i + 1) * s / n))
      h0 = oh * a.H / a.OH;
      h1 = ((oh + 1) * a.H + a.OH - 1) / a.OH;
      w0 = ow * a.W / a.OW;
      w1 = ((ow + 1) * a.W + a.OW - 1) / a.OW;
    } else {
      h0 = oh * a.sh - a.ph;
      w0 = ow * a.sw - a.pw;
      h1 = h0 + a.kh;
      w1 = w0 + a.kw;
    }
    // count_include_pad counts the window clipped to the padded input.
    i64 padded = ((h1 < a.H + a.ph ? h1 : a.H + a.ph) - h0) * ((w1 < a.W + a.pw ? w1 : a.W + a.pw) - w0);
    h0 = h0 < 0 ? 0 : h0;
    w0 = w0 < 0 ? 0 : w0;
    h1 = h1 < a.H ? h1 : a.H;
    w1 = w1 < a.W ? w1 : a.W;
    if (a.kind == 0) {
      ACC m = -INFINITY;
      for (i64 h = h0; h < h1; ++h)
        for (i64 q = w0; q < w1; ++q) {
          ACC v = LD(src[h * a.sx[2] + q * a.sx[3]]);
          if (!(v <= m) && m == m) m = v;  // a larger value or NaN wins; NaN stays
        }
      y[e] = ST(m);
    } else {
      double sum = 0;
      for (i64 h = h0; h < h1; ++h)
        for (i64 q = w0; q < w1; ++q) sum += (double)LD(src[h * a.sx[2] + q * a.sx[3]]);
      i64 count = a.kind == 1 && a.include_pad ? padded : (h1 - h0) * (w1 - w0);
      y[e] = ST(sum / (double)count);
    }
  }
}
)";

std::string assemble(DType d, const std::string& name, const char* args, const char* body) {
  std::string b = body;
  b.replace(b.find("NAME"), 4, name);
  return std::string("// ") + name + ": generated by LazyFuse (codegen/cuda/conv_kernels.cpp)\n" + kPrelude + type_macros(d) + args + b;
}

// One compiled and loaded kernel per (device, source name), compiled on first use.
lf::StatusOr<void*> function(const std::string& name, const std::string& source, int device, double* compile_ms) {
  static std::mutex mu;
  static std::map<std::pair<int, std::string>, std::shared_ptr<CompiledKernel>> loaded;
  std::lock_guard<std::mutex> lock(mu);
  auto key = std::make_pair(device, name);
  if (auto it = loaded.find(key); it != loaded.end()) return it->second->function;
  auto start = std::chrono::steady_clock::now();
  std::string log;
  auto cubin = library_cubin(source, name, arch_of(device), &log);
  if (!cubin.ok()) return cubin.status();
  auto k = load(name, std::string(cubin->data(), cubin->size()), device);
  if (!k.ok()) return k.status();
  *compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  loaded.emplace(key, *k);
  return (*k)->function;
}

std::string compiled_note(const std::string& name, double ms) {
  if (ms <= 0) return name;
  char buf[64];
  std::snprintf(buf, sizeof buf, " (compiled now in %.0f ms)", ms);
  return name + buf;
}

}  // namespace

std::string conv_kernel_name(DType d) { return std::string("lf_conv2d_") + dtype_name(d); }
std::string pool_kernel_name(DType d) { return std::string("lf_pool2d_") + dtype_name(d); }
std::string conv_kernel_source(DType d) { return assemble(d, conv_kernel_name(d), kConvArgs, kConvBody); }
std::string pool_kernel_source(DType d) { return assemble(d, pool_kernel_name(d), kPoolArgs, kPoolBody); }

lf::Status generated_conv2d(const backend::ConvCall& c, void* y, int device, std::string* how) {
  if (!is_floating(c.dtype)) return lf::UnimplementedError(std::string("no generated convolution for ") + dtype_name(c.dtype));
  const auto& p = c.params;
  int64_t P = c.out_h * c.out_w, Og = c.gemm_m(), planes = c.batch * p.groups;
  int64_t gx = (P + kTile - 1) / kTile, gy = (Og + kTile - 1) / kTile;
  if (gx > INT32_MAX || gy > 65535) return lf::UnimplementedError("the generated convolution's grid would be too large");
  double ms = 0;
  std::string name = conv_kernel_name(c.dtype);
  auto fn = function(name, conv_kernel_source(c.dtype), device, &ms);
  if (!fn.ok()) return fn.status();
  *how = "generated implicit-GEMM kernel " + compiled_note(name, ms);
  if (planes == 0 || P == 0 || Og == 0) return lf::OkStatus();
  ConvArgs a{c.x.data, c.w.data, y, c.x.offset, c.w.offset, {c.x.strides[0], c.x.strides[1], c.x.strides[2], c.x.strides[3]},
             c.batch, c.channels, c.height, c.width, c.out_channels, c.kernel_h, c.kernel_w, c.out_h, c.out_w, p.groups,
             p.stride_h, p.stride_w, p.pad_top, p.pad_left, p.dil_h, p.dil_w};
  void* params[] = {&a};
  rt::cu::DeviceContext& ctx = rt::cu::device_context(device);
  LF_CU_CHECK(rt::cu::api().cuLaunchKernel(static_cast<rt::cu::CUfunction>(*fn), static_cast<unsigned>(gx),
                                           static_cast<unsigned>(gy), static_cast<unsigned>(std::min<int64_t>(planes, 65535)),
                                           kThreads, 1, 1, 0, ctx.stream, params, nullptr));
  return lf::OkStatus();
}

lf::Status generated_pool2d(const backend::PoolCall& c, void* y, int device, std::string* how,
                            std::function<void(const void* x, void* y)>* replay) {
  ir::Node* node = c.node();
  if (!is_floating(node->dtype)) return lf::UnimplementedError(std::string("no generated pooling for ") + dtype_name(node->dtype));
  ir::PoolParams p = ir::PoolParams::of(*node);
  double ms = 0;
  std::string name = pool_kernel_name(node->dtype);
  auto fn = function(name, pool_kernel_source(node->dtype), device, &ms);
  if (!fn.ok()) return fn.status();
  *how = "generated kernel " + compiled_note(name, ms) + ", a thread per output";
  int64_t total = node->numel();
  if (total == 0) {
    if (replay) *replay = [](const void*, void*) {};
    return lf::OkStatus();
  }
  const Shape& s = c.in_shape;
  PoolArgs a{c.x.data, y, c.x.offset, {c.x.strides[0], c.x.strides[1], c.x.strides[2], c.x.strides[3]},
             s[1], s[2], s[3], node->shape[2], node->shape[3], total,
             p.kind, p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, p.pad_h, p.pad_w, p.count_include_pad};
  void* params[] = {&a};
  int64_t blocks = std::clamp<int64_t>((total + kThreads - 1) / kThreads, 1, int64_t{1} << 20);  // past that a grid-stride loop
  rt::cu::DeviceContext& ctx = rt::cu::device_context(device);
  LF_CU_CHECK(rt::cu::api().cuLaunchKernel(static_cast<rt::cu::CUfunction>(*fn), static_cast<unsigned>(blocks), 1, 1,
                                           kThreads, 1, 1, 0, ctx.stream, params, nullptr));
  if (replay) {
    // The same launch over new buffers: the geometry is in the arguments, the node is not read.
    *replay = [f = *fn, a, blocks, device](const void* x, void* out) mutable {
      a.x = x;
      a.y = out;
      void* args[] = {&a};
      LF_CU_CHECK(rt::cu::api().cuLaunchKernel(static_cast<rt::cu::CUfunction>(f), static_cast<unsigned>(blocks), 1, 1,
                                               kThreads, 1, 1, 0, rt::cu::device_context(device).stream, args, nullptr));
    };
  }
  return lf::OkStatus();
}

}  // namespace lf::cuda
