// Runs a flush: fuser -> for each group, lower -> kernel cache (compile on first sight) -> launch,
// and materializes the nodes that must be kept. Knows nothing of lf::Tensor.
#pragma once

#include <functional>
#include <vector>

#include "codegen/backend/kernel.h"
#include "codegen/ir/node.h"
#include "lazyfuse/runtime.h"

namespace lf::exec {

using Options = backend::RunOptions;

// Computes `roots` and every pending node reachable from them that `wanted` selects; each of those
// becomes a materialized buffer. Nodes that are neither are computed inside kernels and never stored.
void run(const std::vector<ir::Node*>& roots, const std::function<bool(const ir::Node&)>& wanted,
         const Options& options, CacheStats& stats);

}  // namespace lf::exec
