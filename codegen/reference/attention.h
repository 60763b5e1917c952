// The reference executor's attention (internal to codegen/reference): the definition in
// codegen/ir/attention.h computed directly in double, every score of a row kept, rounded to the
// dtype once. The rewrite that makes attention nodes is tested against the unfused program, not
// against this; it runs when an attention node's own kernel cannot (a fallback).
#pragma once

#include <vector>

#include "codegen/reference/reference.h"

namespace lf::ir {

Value reference_attention(const Node& node, const std::vector<Value>& in);

}  // namespace lf::ir
