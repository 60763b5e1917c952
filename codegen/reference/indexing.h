// The reference executor's indexing, scatter, scan and sort ops (ops.inc, issue 23). These also
// run the host groups of scatter_add, scans and argsort when a backend has no kernel for them.
#pragma once

#include <vector>

#include "codegen/reference/reference.h"

namespace lf::ir {

Value gather_ref(const Node& node, const std::vector<Value>& in);
Value remap_ref(const Node& node, const std::vector<Value>& in);
Value scatter_add_ref(const Node& node, const std::vector<Value>& in);
// scatter (scatter_reduce, index_put, index_copy, index_fill): reference/scatter.cpp.
Value scatter_ref(const Node& node, const std::vector<Value>& in);
Value scan_ref(const Node& node, const Value& in);  // cumsum, cumprod, logcumsumexp
// cummax / cummin: the Int64 position of the running extreme (the latest one among equals; NaN
// wins and stays, the latest NaN's position), as PyTorch.
Value cum_extreme_ref(const Node& node, const Value& in);
// argsort, and topk (the first k positions of argsort's).
Value argsort_ref(const Node& node, const Value& in);

}  // namespace lf::ir
