// The geometry of a convolution or pooling node, packed in attrs.dims (so that flush signatures,
// which hash attrs.dims, tell two convolutions apart) and read back here by the frontend, the
// reference executor and the backends.
#pragma once

#include <cstdint>
#include <vector>

#include "codegen/ir/node.h"

namespace lf::ir {

// conv2d: y[n, o, oh, ow] = sum over c in o's group, i, j of
//   x[n, c, oh * stride_h - pad_top + i * dil_h, ow * stride_w - pad_left + j * dil_w] * w[o, c, i, j]
// (zero outside x). Padding is per side: "same" pads an odd total one more at the bottom/right.
struct ConvParams {
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int64_t dil_h = 1, dil_w = 1;
  int64_t groups = 1;

  std::vector<int64_t> pack() const {
    return {stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right, dil_h, dil_w, groups};
  }
  static ConvParams of(const Node& n) {
    const auto& d = n.attrs.dims;
    return {d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7], d[8]};
  }
  // Output size along one dim; < 1 when the input is too small for the kernel.
  // In 128 bits, so that parameters near 2^63 cannot overflow; a size past int64 comes back as
  // INT64_MAX, which the shape check refuses.
  static int64_t out_size(int64_t in, int64_t k, int64_t stride, int64_t pad_lo, int64_t pad_hi, int64_t dil) {
    const __int128 span = __int128{in} + pad_lo + pad_hi - __int128{dil} * (k - 1) - 1;
    return span < 0 ? 0 : clamp64(span / stride + 1);
  }
  static int64_t clamp64(__int128 v) {
    return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : static_cast<int64_t>(v);
  }
};

// pool2d. kMax: NaN propagates, padding never wins; kAvg: divisor = window clipped to the padded
// input (count_include_pad) or to the input; kAdaptiveAvg: window i of n over size s is
// [floor(i * s / n), ceil((i + 1) * s / n)). The output shape (ceil_mode applied) is the node's.
struct PoolParams {
  enum Kind : int64_t { kMax = 0, kAvg = 1, kAdaptiveAvg = 2 };
  int64_t kind = kMax;
  int64_t kernel_h = 1, kernel_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t count_include_pad = 1;

  std::vector<int64_t> pack() const { return {kind, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, count_include_pad}; }
  static PoolParams of(const Node& n) {
    const auto& d = n.attrs.dims;
    return {d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]};
  }
  // PyTorch's rule (pooling_output_shape): floor((in + 2 pad - k) / stride) + 1, the division
  // rounded up with ceil_mode, whose last window must start inside the input or its left padding
  // (so a window longer than the padded input still gives one output with ceil_mode); k is the
  // window's span (dilation (kernel - 1) + 1). Below 1: no output.
  // In 128 bits as ConvParams::out_size.
  static int64_t out_size(int64_t in, int64_t k, int64_t stride, int64_t pad, bool ceil_mode) {
    const __int128 num = __int128{in} + 2 * __int128{pad} - k + (ceil_mode ? __int128{stride} - 1 : 0);
    __int128 out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;  // floor division
    if (ceil_mode && out > 0 && (out - 1) * stride >= __int128{in} + pad) --out;
    return ConvParams::clamp64(out);
  }
};

}  // namespace lf::ir
