// The per-thread trace of pending nodes and realization (the sync points).
#pragma once

#include <vector>

#include "codegen/ir/node.h"

namespace lf::detail {

void trace_append(const ir::NodePtr& node);

// Computes `roots` and every pending node among their inputs that a user still holds; each of
// those becomes a materialized buffer. Dead intermediates are computed but never stored.
void realize(const std::vector<ir::Node*>& roots);

// Makes `node` a root of this thread's next sync point, whatever that sync reads (while a handle
// still holds it): an optimizer's updated parameters and state, which no later read would compute
// otherwise (a training loop reads the loss, and the update chain would grow step after step).
// They are computed in the same flush as the loss, so the update fuses with the backward pass.
void compute_at_next_sync(const ir::NodePtr& node);

}  // namespace lf::detail
