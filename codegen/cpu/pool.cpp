// A pool2d group on the CPU: direct loops over each output element's window (the reference
// executor's definition, codegen/ir/conv.h), in the storage type, planes of [N * C] spread over the
// thread pool. Max compares in the compute type (exact); averages accumulate in double and are
// rounded once, as the reference does.
#include <algorithm>
#include <cmath>
#include <limits>

#include "codegen/backend/kernel.h"
#include "codegen/cpu/backend.h"
#include "codegen/ir/dtype_dispatch.h"
#include "runtime/thread_pool.h"

namespace lf::cpu {
namespace {

// One pooling: its geometry and input, without the node (a flush plan's replay runs it again).
struct Pooling {
  ir::PoolParams p;
  DType dtype;
  Shape in_shape, out_shape;
  kir::GemmOperand x;
};

template <typename S>
void pool_planes(const Pooling& call, S* out, int64_t p0, int64_t p1) {
  const ir::PoolParams& p = call.p;
  const Shape& xs = call.in_shape;
  int64_t C = xs[1], H = xs[2], W = xs[3], OH = call.out_shape[2], OW = call.out_shape[3];
  const int64_t* st = call.x.strides.data();
  const S* x = static_cast<const S*>(call.x.data) + call.x.offset;
  for (int64_t plane = p0; plane < p1; ++plane) {
    const S* src = x + (plane / C) * st[0] + (plane % C) * st[1];
    S* dst = out + plane * OH * OW;
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t h0, h1, w0, w1;
        if (p.kind == ir::PoolParams::kAdaptiveAvg) {
          h0 = oh * H / OH;
          h1 = ((oh + 1) * H + OH - 1) / OH;
          w0 = ow * W / OW;
          w1 = ((ow + 1) * W + OW - 1) / OW;
        } else {
          h0 = oh * p.stride_h - p.pad_h;
          w0 = ow * p.stride_w - p.pad_w;
          h1 = h0 + p.kernel_h;
          w1 = w0 + p.kernel_w;
        }
        int64_t padded = (std::min(h1, H + p.pad_h) - h0) * (std::min(w1, W + p.pad_w) - w0);
        h0 = std::max<int64_t>(h0, 0);
        w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, H);
        w1 = std::min(w1, W);
        if (p.kind == ir::PoolParams::kMax) {
          auto acc = to_compute(S(-std::numeric_limits<float>::infinity()));
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w) {
              auto v = to_compute(src[h * st[2] + w * st[3]]);
              if (!(v <= acc) && !std::isnan(acc)) acc = v;  // a larger value or NaN wins; NaN stays
            }
          *dst++ = from_value<S>(acc);
          continue;
        }
        double sum = 0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) sum += static_cast<double>(to_compute(src[h * st[2] + w * st[3]]));
        int64_t count = p.kind == ir::PoolParams::kAvg && p.count_include_pad ? padded : (h1 - h0) * (w1 - w0);
        *dst++ = from_value<S>(sum / static_cast<double>(count));
      }
  }
}

// Pools into `out` over the thread pool; returns the number of chunks of planes.
int64_t pool(const Pooling& call, void* out) {
  int64_t planes = call.out_shape[0] * call.out_shape[1];
  int64_t chunks = std::min<int64_t>(planes, 8 * rt::num_cpu_threads());
  dispatch(call.dtype, [&](auto tag) {
    using S = typename decltype(tag)::storage_t;
    if constexpr (std::is_floating_point_v<typename decltype(tag)::compute_t>) {
      S* o = static_cast<S*>(out);
      rt::parallel_for(chunks, [&](int64_t c) { pool_planes<S>(call, o, planes * c / chunks, planes * (c + 1) / chunks); });
    }
  });
  return chunks;
}

}  // namespace

void run_pool(backend::PoolCall& call) {
  ir::Node* y = call.node();
  if (!is_floating(y->dtype)) return backend::run_pool_on_reference(call, "not a floating-point dtype");
  auto out = rt::Storage::allocate(y->device, static_cast<size_t>(y->numel()) * dtype_size(y->dtype));
  Pooling pooling{ir::PoolParams::of(*y), y->dtype, call.in_shape, y->shape, call.x};
  int64_t chunks = pool(pooling, out->data());
  if (call.record) {  // for a flush plan: the pooling again over new addresses (x, y)
    call.record->outputs.emplace_back(y, out);
    call.record->addresses = {call.x.data, out->data()};
    call.record->replay = [pooling](void* const* p) mutable {
      pooling.x.data = p[0];
      pool(pooling, p[1]);
    };
  }
  ++call.run.stats.kernels_launched;
  call.run.stats.bytes_moved += static_cast<uint64_t>(y->numel() + shape_numel(call.in_shape)) * dtype_size(y->dtype);
  backend::materialize(*y, out, ir::Layout{ir::contiguous_strides(y->shape), 0});
  call.log("direct loops over the windows, " + std::to_string(chunks) + " chunks of planes on the thread pool");
}

}  // namespace lf::cpu
