// The reference executor's convolution and pooling (internal to codegen/reference): direct loops
// over every output element and its window, accumulated in double, rounded to the dtype once.
#pragma once

#include "codegen/reference/reference.h"

namespace lf::ir {

Value reference_conv2d(const Node& node, const Value& x, const Value& w);
Value reference_pool2d(const Node& node, const Value& x);

}  // namespace lf::ir
