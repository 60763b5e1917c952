// The reference executor's nearest (ir::Op::Nearest): the ops the rewrite replaced
// (fuse/nearest.h), evaluated one at a time as the reference evaluates them, so a fused result
// is compared with exactly what the unrewritten program gives.
#pragma once

#include <vector>

#include "codegen/reference/reference.h"

namespace lf::ir {

Value reference_nearest(const Node& node, const std::vector<Value>& in);

}  // namespace lf::ir
