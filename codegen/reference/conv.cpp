#include "codegen/reference/conv.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "codegen/ir/conv.h"

namespace lf::ir {
namespace {

// A value as a dense float64 array (exact for every float dtype).
const double* dense(const Value& v, Value* keep) {
  *keep = to_contiguous(v, DType::Float64);
  return static_cast<const double*>(keep->storage->data()) + keep->layout.offset;
}

// A float64 result rounded once to the node's dtype.
Value finish(const Node& node, std::shared_ptr<rt::Storage> out) {
  Value v{std::move(out), DType::Float64, node.shape, Layout{contiguous_strides(node.shape), 0}};
  return to_contiguous(v, node.dtype);
}

std::shared_ptr<rt::Storage> alloc_f64(const Shape& shape) {
  return rt::Storage::allocate(Device::cpu(), static_cast<size_t>(shape_numel(shape)) * sizeof(double));
}

}  // namespace

Value reference_conv2d(const Node& node, const Value& xv, const Value& wv) {
  ConvParams p = ConvParams::of(node);
  Value xk, wk;
  const double* x = dense(xv, &xk);
  const double* w = dense(wv, &wk);
  int64_t N = xv.shape[0], C = xv.shape[1], H = xv.shape[2], W = xv.shape[3];
  int64_t O = wv.shape[0], Cg = wv.shape[1], KH = wv.shape[2], KW = wv.shape[3];
  int64_t OH = node.shape[2], OW = node.shape[3];
  int64_t Og = O / p.groups;
  auto out = alloc_f64(node.shape);
  double* y = static_cast<double*>(out->data());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o) {
      int64_t g = o / Og;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = 0;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t i = 0; i < KH; ++i) {
              int64_t h = oh * p.stride_h - p.pad_top + i * p.dil_h;
              if (h < 0 || h >= H) continue;
              for (int64_t j = 0; j < KW; ++j) {
                int64_t ww = ow * p.stride_w - p.pad_left + j * p.dil_w;
                if (ww < 0 || ww >= W) continue;
                acc += x[((n * C + g * Cg + c) * H + h) * W + ww] * w[((o * Cg + c) * KH + i) * KW + j];
              }
            }
          y[((n * O + o) * OH + oh) * OW + ow] = acc;
        }
    }
  return finish(node, std::move(out));
}

Value reference_pool2d(const Node& node, const Value& xv) {
  PoolParams p = PoolParams::of(node);
  Value xk;
  const double* x = dense(xv, &xk);
  int64_t NC = xv.shape[0] * xv.shape[1], H = xv.shape[2], W = xv.shape[3];
  int64_t OH = node.shape[2], OW = node.shape[3];
  auto out = alloc_f64(node.shape);
  double* y = static_cast<double*>(out->data());
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        // The window [h0, h1) x [w0, w1) in input coordinates, before clipping to the input.
        int64_t h0, h1, w0, w1;
        if (p.kind == PoolParams::kAdaptiveAvg) {
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
        // count_include_pad counts the window clipped to the padded input, as PyTorch does.
        int64_t padded = (std::min(h1, H + p.pad_h) - h0) * (std::min(w1, W + p.pad_w) - w0);
        h0 = std::max<int64_t>(h0, 0);
        w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, H);
        w1 = std::min(w1, W);
        double acc = p.kind == PoolParams::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) {
            double v = x[(nc * H + h) * W + w];
            if (p.kind != PoolParams::kMax) acc += v;
            else if (v > acc || std::isnan(v)) acc = std::isnan(acc) ? acc : v;
          }
        if (p.kind == PoolParams::kAvg)
          acc /= static_cast<double>(p.count_include_pad ? padded : (h1 - h0) * (w1 - w0));
        else if (p.kind == PoolParams::kAdaptiveAvg)
          acc /= static_cast<double>((h1 - h0) * (w1 - w0));
        y[(nc * OH + oh) * OW + ow] = acc;
      }
  return finish(node, std::move(out));
}

}  // namespace lf::ir
