// The per-thread trace of pending nodes and realization (the sync points).
#pragma once

#include <vector>

#include "codegen/ir/node.h"

namespace lf::detail {

void trace_append(const ir::NodePtr& node);

// Computes `roots` and every pending node among their inputs that a user still holds; each of
// those becomes a materialized buffer. Dead intermediates are computed but never stored.
void realize(const std::vector<ir::Node*>& roots);

}  // namespace lf::detail
