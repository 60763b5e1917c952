// The reference executor's indexing, scatter, scan and sort ops (ops.inc, issue 23). These also
// run the host groups of scatter_add, cumsum, cumprod and argsort on every device.
#pragma once

#include <vector>

#include "codegen/reference/reference.h"

namespace lf::ir {

Value gather_ref(const Node& node, const std::vector<Value>& in);
Value remap_ref(const Node& node, const std::vector<Value>& in);
Value scatter_add_ref(const Node& node, const std::vector<Value>& in);
Value scan_ref(const Node& node, const Value& in);
Value argsort_ref(const Node& node, const Value& in);

}  // namespace lf::ir
