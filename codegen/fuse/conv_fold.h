// Inference batch norm folded into the convolution before it (issue 22): a per-out-channel
// affine y = conv2d(x, w) [+ b] * s + t, as batch_norm records it (frontend/ops_conv.cpp), becomes
// conv2d(x, w * s) + (b * s + t): the scale moves into the weights (a small kernel over [O, C, kh, kw]
// instead of a multiply over every output), and the convolution's epilogue is one bias add, which a
// backend can hand to a fused library call (cuDNN's convolution + bias + activation).
#pragma once

#include <functional>
#include <vector>

#include "codegen/ir/node.h"

namespace lf::fuse {

// Rewrites in place, over the pending nodes of a flush in topological order:
// - mul(conv2d(x, w), s) -> conv2d(x, w * s), and mul(conv2d(x, w) + b, s) -> conv2d(x, w * s) + b * s;
// - add(conv2d(x, w) + b, t) -> conv2d(x, w) + (b + t) (the bias adds merged);
// where s, b, t are per-channel values of the output's dtype: views (reshape, expand) of a value of
// O elements, realized or pending, that does not depend on the convolution. The multiply or add
// node keeps its identity (a handle holding it sees the same value). Not folded (never a wrong or
// missing value): when the convolution's output, or the biased output, is held by a handle, read
// by another op, or a root of the flush; LAZYFUSE_LOG=1 (log_level >= 1) says what was folded and
// why not. `keep` receives the nodes the rewrite unlinked (`order` still points at them: keep them
// until it is ordered again). Returns the number of rewrites.
// What the fold asks of the backend that runs a convolution (exec passes the backend's answers;
// unset: no).
struct ConvAsks {
  // True: a scale after that convolution (without a bias of its own) is left where it is, for the
  // backend's call to apply after the sum (Backend::conv_scale_in_epilogue: a 16-bit filter times
  // the scale, rounded, puts a rounding on every weight, which a sum's cancellations magnify).
  std::function<bool(const ir::Node& conv)> keep_scale;
  // True: the call reads its filter as KRSC, so the folded filter is written so
  // (Backend::conv_reads_krsc_filter).
  std::function<bool(const ir::Node& conv)> reads_krsc;
};
// A 16-bit batch norm computes in float32 and is never folded.
int fold_conv_affine(const std::vector<ir::Node*>& order, const std::vector<ir::Node*>& roots, int log_level,
                     std::vector<ir::NodePtr>* keep, const ConvAsks& asks = {});

}  // namespace lf::fuse
