// The parameters of an attention node (ops.inc's Attention row), kept in its attrs so that flush
// signatures, which hash attrs, tell two attentions apart; written by the rewrite
// (codegen/fuse/attention.cpp) and read by the reference executor and the backends.
#pragma once

#include <cstdint>

#include "codegen/ir/node.h"

namespace lf::ir {

// out[..., i, :] = sum_j p[i, j] v[..., j, :], p = softmax_j(x[i, j]) with
//   x = ((q[i] . k[j]) * scale  `mask`) * post_scale,
// where `mask` is nothing, + m[i, j] (kAdd, m of the node's dtype), or keeps x where the bool
// m[i, j] is true (kKeep) or false (kDrop) and puts -inf elsewhere; `causal` also puts -inf where
// j > i (then post_scale > 0, so that masked scores stay -inf). A row whose every x is -inf gives
// NaN, as the unfused softmax does (-inf - -inf). heads_last: the node is the output with its last
// batch dim and Tq swapped, [..., Tq, H, Dv] (the rewrite folds the user's transpose(o, -3, -2) of a
// transformer's heads into it: the heads are then written interleaved, and merging them with a
// reshape is a view instead of a copy).
struct AttentionParams {
  enum Mask : int64_t { kNone = 0, kAdd = 1, kKeep = 2, kDrop = 3 };
  double scale = 1;
  double post_scale = 1;
  Mask mask = kNone;
  bool causal = false;
  bool heads_last = false;

  void store(Attrs* a) const {
    a->value = scale;
    a->value2 = post_scale;
    a->axis = mask;
    a->start = causal ? 1 : 0;
    a->ivalue = heads_last ? 1 : 0;
  }
  static AttentionParams of(const Node& n) {
    return {n.attrs.value, n.attrs.value2, static_cast<Mask>(n.attrs.axis), n.attrs.start != 0, n.attrs.ivalue != 0};
  }
  bool has_mask() const { return mask != kNone; }
};

}  // namespace lf::ir
