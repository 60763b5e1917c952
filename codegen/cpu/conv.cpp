// A conv2d group on the CPU: oneDNN's convolution where it is loaded and takes the problem
// (onednn.h; LAZYFUSE_CONV=generated skips it), then the epilogue kernel over the output.
// Otherwise (and so the whole path below where oneDNN is absent):
// convolution as GEMM on the packed GEMM (gemm.h), per image and group
// C[o, p] = W[o, k] @ col[k, p] (m = O / groups, n = OH * OW, k = C / groups * kh * kw), and the
// epilogue kernel run on each block of output planes on the thread that finished it.
// - 1x1, stride 1, no padding: the input itself is the B operand (strides), one GEMM over
//   [N, groups] batches: no copy at all.
// - otherwise: im2col of a chunk of images into a bounded scratch buffer (kScratchBytes), then one
//   GEMM over [images in the chunk, groups]. The panel is materialized per chunk, not packed on the
//   fly from the input (a first step: packing B straight from the image is the next one).
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>

#include "codegen/backend/kernel.h"
#include "codegen/cpu/backend.h"
#include "codegen/cpu/gemm.h"
#include "codegen/cpu/onednn.h"
#include "runtime/config.h"
#include "runtime/thread_pool.h"

namespace lf::cpu {
namespace {

constexpr int64_t kScratchBytes = int64_t{32} << 20;

// How the epilogue kernel's rows line up with output planes (one plane = one (image, channel)):
// lowered with its last two dims kept, its rows are [N * O * OH] and its columns OW, so planes
// [p0, p1) are rows [p0 * OH, p1 * OH); or it is one row of every element (columns p * OH * OW).
// Null (run it after the convolution) otherwise.
RowsDone epilogue_by_planes(const backend::KernelReplay& k, const std::vector<int64_t>& meta,
                            const backend::ConvCall& c, int64_t first_plane) {
  const auto& compiled = static_cast<const CompiledKernel&>(*k.entry->kernel);
  int64_t rows = k.args.rows(), cols = k.args.sizes.back();
  KernelFn fn = compiled.fn;
  const int64_t* m = meta.data();
  void* const* ptrs = k.args.pointers.data();
  int64_t oh = c.out_h, plane = c.out_h * c.out_w;
  if (cols == c.out_w && rows == c.batch * c.out_channels * oh)
    return [=](int64_t r0, int64_t r1) { fn(m, ptrs, (first_plane + r0) * oh, (first_plane + r1) * oh, 0, cols); };
  if (rows == 1)
    return [=](int64_t r0, int64_t r1) { fn(m, ptrs, 0, 1, (first_plane + r0) * plane, (first_plane + r1) * plane); };
  return nullptr;
}

// Copies elements of `esize` bytes as one unsigned integer each.
template <typename U>
void im2col_plane(const backend::ConvCall& c, const char* x, int64_t img, int64_t ch, char* col) {
  const auto& p = c.params;
  const int64_t* s = c.x.strides.data();
  const U* src = reinterpret_cast<const U*>(x) + c.x.offset + img * s[0] + ch * s[1];
  U* dst = reinterpret_cast<U*>(col);
  int64_t P = c.out_h * c.out_w;
  for (int64_t i = 0; i < c.kernel_h; ++i)
    for (int64_t j = 0; j < c.kernel_w; ++j, dst += P) {
      U* d = dst;
      for (int64_t oh = 0; oh < c.out_h; ++oh) {
        int64_t h = oh * p.stride_h - p.pad_top + i * p.dil_h;
        if (h < 0 || h >= c.height) {
          std::memset(d, 0, sizeof(U) * c.out_w);
          d += c.out_w;
          continue;
        }
        const U* row = src + h * s[2];
        for (int64_t ow = 0; ow < c.out_w; ++ow) {
          int64_t w = ow * p.stride_w - p.pad_left + j * p.dil_w;
          *d++ = w < 0 || w >= c.width ? U(0) : row[w * s[3]];
        }
      }
    }
}

void im2col(const backend::ConvCall& c, int64_t img, int64_t ch, char* col) {
  const char* x = static_cast<const char*>(c.x.data);
  switch (dtype_size(c.dtype)) {
    case 2: return im2col_plane<uint16_t>(c, x, img, ch, col);
    case 4: return im2col_plane<uint32_t>(c, x, img, ch, col);
    default: return im2col_plane<uint64_t>(c, x, img, ch, col);
  }
}

// The convolution into `out`, the epilogue (when given) run on each block of output planes; returns
// what ran, for the log. Reads only the call's geometry and operands (a flush plan's replay runs it
// on a copy of the call whose group is gone).
std::string convolve(const backend::ConvCall& call, void* out, const backend::KernelReplay* epilogue,
                     const std::vector<int64_t>& meta) {
  bool fused = epilogue != nullptr;
  std::string declined;
  if (rt::config().conv == "generated") {
    declined = "LAZYFUSE_CONV=generated";
  } else {
    std::string how;
    lf::Status s = onednn::convolve(call, out, &how);
    if (s.ok()) return how;  // (run_conv gives oneDNN no per-plane epilogue: onednn::takes)
    declined = s.message();
  }
  const auto& p = call.params;
  int64_t G = p.groups, Og = call.gemm_m(), P = call.gemm_n(), K = call.gemm_k();
  int64_t Cg = call.channels / G;
  size_t esize = dtype_size(call.dtype);
  GemmProblem problem;
  problem.dtype = call.dtype;
  problem.m = Og;
  problem.n = P;
  problem.k = K;
  problem.a = {call.w.data, call.w.offset, {0, Og * K, K, 1}};  // one weight matrix per group, every image
  const int64_t* xs = call.x.strides.data();
  bool pointwise = call.kernel_h == 1 && call.kernel_w == 1 && p.stride_h == 1 && p.stride_w == 1 &&
                   p.pad_top == 0 && p.pad_bottom == 0 && p.pad_left == 0 && p.pad_right == 0 &&
                   (call.height == 1 || call.width == 1 || xs[2] == call.width * xs[3]);
  std::string how;
  if (pointwise) {
    // col[k = c, p = (h, w)] is the image itself: (h, w) is one dim of stride sW (checked above).
    int64_t sp = call.width == 1 ? xs[2] : xs[3];
    problem.batch = {call.batch, G};
    problem.b = {call.x.data, call.x.offset, {xs[0], Cg * xs[1], xs[1], sp}};
    problem.c = out;
    gemm(problem, fused ? epilogue_by_planes(*epilogue, meta, call, 0) : RowsDone{});
    how = "1x1 convolution as one GEMM over [N, groups] (" + std::string(gemm_kernel_name(call.dtype)) + ")";
  } else {
    int64_t per_image = G * K * P * static_cast<int64_t>(esize);
    int64_t chunk = std::clamp<int64_t>(per_image ? kScratchBytes / per_image : call.batch, 1, std::max<int64_t>(call.batch, 1));
    std::unique_ptr<char[]> col(new char[static_cast<size_t>(chunk * per_image)]);
    for (int64_t n0 = 0; n0 < call.batch; n0 += chunk) {
      int64_t nb = std::min(chunk, call.batch - n0);
      // Rows k = (c, i, j) of one (image, channel) are contiguous in col: one task per pair.
      rt::parallel_for(nb * call.channels, [&](int64_t t) {
        int64_t img = t / call.channels, ch = t % call.channels;
        int64_t g = ch / Cg, c = ch % Cg;
        char* dst = col.get() + ((img * G + g) * K + c * call.kernel_h * call.kernel_w) * P * static_cast<int64_t>(esize);
        im2col(call, n0 + img, ch, dst);
      });
      problem.batch = {nb, G};
      problem.b = {col.get(), 0, {G * K * P, K * P, P, 1}};
      problem.c = static_cast<char*>(out) + n0 * call.out_channels * P * static_cast<int64_t>(esize);
      gemm(problem, fused ? epilogue_by_planes(*epilogue, meta, call, n0 * call.out_channels) : RowsDone{});
    }
    how = "im2col per chunk of " + std::to_string(chunk) + " images + GEMM (" + gemm_kernel_name(call.dtype) + ")";
  }
  return how + " (oneDNN: " + declined + ")";
}

// The call for a flush plan: the convolution and its epilogue over new addresses: x, w, y, then
// the epilogue's operands.
void record(const backend::ConvCall& call, const std::shared_ptr<rt::Storage>& out,
            const std::optional<backend::Prepared>& epilogue, bool fused) {
  backend::RecordedCall& r = *call.record;
  if (epilogue && (!epilogue->entry->kernel || epilogue->low.error_storage)) return;  // not replayable
  r.outputs.emplace_back(call.product(), out);
  r.addresses = {call.x.data, call.w.data, out->data()};
  std::shared_ptr<backend::KernelReplay> kr;
  std::vector<int64_t> meta;
  if (epilogue) {
    r.add_outputs(*epilogue);
    r.add_operands(*epilogue);
    kr = std::make_shared<backend::KernelReplay>(*epilogue);
    meta = kir::pack_meta(kr->kernel, kr->args);
  }
  // A copy of the geometry; the copy's group and stats are never read (convolve() does not), and
  // it holds no buffers (each replay binds its own).
  auto geometry = std::make_shared<backend::ConvCall>(call);
  geometry->x_storage = geometry->w_storage = nullptr;
  geometry->record = nullptr;
  r.replay = [geometry, kr, meta, fused](void* const* p) {
    backend::ConvCall& c = *geometry;
    c.x.data = p[0];
    c.w.data = p[1];
    if (kr) kr->bind(p + 3);
    convolve(c, p[2], fused ? kr.get() : nullptr, meta);
    if (kr && !fused) kr->launch();
  };
}

}  // namespace

void run_conv(backend::ConvCall& call) {
  ir::Node* y = call.product();
  CacheStats& stats = call.run.stats;
  auto out = rt::Storage::allocate(y->device, call.y_bytes);
  backend::materialize(*y, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  // On oneDNN the epilogue runs after the whole convolution, so it is lowered as any elementwise
  // kernel (its dims merged into long rows); per block of planes (rows of OW), next to the GEMM
  // that finished them, on the path below. (Per plane after oneDNN, the bfloat16 ResNet block ran
  // 1.1-1.15x slower fused than unfused: rows of 56 elements.)
  const bool library = rt::config().conv != "generated" && onednn::takes(call);
  std::optional<backend::Prepared> epilogue;
  if (call.has_epilogue()) {
    fuse::Group e = call.epilogue_group();
    if (!e.outputs.empty()) epilogue = backend::prepare(call.run, e, {.keep_last_dim = !library});
  }
  std::optional<backend::KernelReplay> planes_kernel;  // the epilogue, when it runs per block of planes
  std::vector<int64_t> meta;
  if (epilogue && epilogue->entry->kernel && !library) {
    planes_kernel.emplace(*epilogue);
    meta = kir::pack_meta(epilogue->low.kernel, epilogue->low.args);
    if (!epilogue_by_planes(*planes_kernel, meta, call, 0)) planes_kernel.reset();
  }
  bool fused = planes_kernel.has_value();
  std::string how = convolve(call, out->data(), fused ? &*planes_kernel : nullptr, meta);
  ++stats.kernels_launched;
  stats.bytes_moved += call.bytes;
  if (epilogue && !epilogue->entry->kernel) {
    backend::run_fallback(*epilogue);
  } else if (fused) {
    ++stats.kernels_launched;
    stats.bytes_moved += static_cast<uint64_t>(epilogue->low.bytes);
    backend::materialize_outputs(*epilogue);
    how += ", epilogue fused per block of output planes";
  } else if (epilogue) {
    backend::launch(*epilogue, stats);
    backend::materialize_outputs(*epilogue);
    how += ", then the epilogue kernel";
  }
  if (call.record) record(call, out, epilogue, fused);
  call.log(how);
}

}  // namespace lf::cpu
