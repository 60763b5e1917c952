// The nearest-row rewrite (issue 23, k-means' assignment step): the argmin over the centers of the
// squared distances, as the user writes it with the public API,
//   argmin(sum(square(x.unsqueeze(1) - c.unsqueeze(0)), -1), 1)
// becomes one Nearest node (ops.inc), which the executor runs as a library call
// (Backend::nearest) instead of a kernel that writes the [N, K] distances and another that reads
// them back for the argmin.
#pragma once

#include <vector>

#include "codegen/ir/node.h"

namespace lf::fuse {

// Rewrites every such pattern of the flush in place: the argmin node becomes the Nearest node
// (handles that hold it see the same value). Recognized: x [N, D] and c [K, D] made [N, K, D] by
// any views (unsqueeze, reshape, expand, or none where broadcasting does it), on either side of
// the difference; square(v) or v * v; the sum over the last dim, the argmin over the centers, with
// or without keepdim; the same floating dtype throughout. Not rewritten (never a wrong or missing
// value): when the distances or any value between them is held by a handle or read by anything
// else; LAZYFUSE_LOG=1 (log_level >= 1) says what it rewrote and, for an argmin over such sums
// that it leaves, why. `keep` receives the nodes the rewrite unlinked (`order` still points at
// them). Returns the number of rewrites.
int rewrite_nearest(const std::vector<ir::Node*>& order, int log_level, std::vector<ir::NodePtr>* keep);

}  // namespace lf::fuse
