// The attention rewrite (issue 21): softmax(q @ k^T * s + mask, -1) @ v, as the user writes it
// with the public API, becomes one Attention node (ops.inc; codegen/ir/attention.h), which the
// executor runs as a library call (Backend::attention) instead of two matmuls and a softmax that
// store the [.., Tq, Tk] scores and probabilities.
#pragma once

#include <vector>

#include "codegen/ir/node.h"

namespace lf::fuse {

// Rewrites every attention pattern of the flush in place: the final matmul node becomes the
// attention node (handles and users that hold it see the same value). Recognized: the scale
// (a multiplication or division by a number) before and/or after the mask, or none; the key
// transposed by any view; a mask added (any broadcast: [T, T], [B, 1, T, T]), or put in by
// where(mask, scores, -inf) / where(mask, -inf, scores); a causal triangle made by comparing
// aranges (causal: the kernels skip masked tiles); no mask. A scale on q before the product is
// part of q. Not rewritten (never a wrong or missing value): when the scores, the probabilities or
// any value between them is held by a handle or read by anything else; LAZYFUSE_LOG=1 (log_level
// >= 1) says so for every softmax-then-matmul it leaves, and what it rewrote. `keep` receives the
// nodes the rewrite unlinked (`order` still points at them: keep them until it is ordered again).
// Returns the number of rewrites.
int rewrite_attention(const std::vector<ir::Node*>& order, int log_level, std::vector<ir::NodePtr>* keep);

}  // namespace lf::fuse
