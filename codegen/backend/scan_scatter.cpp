// What scan and scatter calls share across backends (scan_scatter.h): their log lines, index
// errors, and the reference executor's path for a backend or case without a kernel of its own.
#include "codegen/backend/scan_scatter.h"

#include <cstdio>

#include "codegen/ir/indexing.h"

namespace lf::backend {

void ScanCall::log(const std::string& how) const {
  if (run.options.log_level < 1) return;
  std::fprintf(stderr, "[lazyfuse]   group %d: %s [%lld, %lld, %lld] (outer, n, inner) %s: %s\n", run.index,
               ir::op_name(op), static_cast<long long>(outer), static_cast<long long>(n),
               static_cast<long long>(inner), dtype_name(in_dtype), how.c_str());
}

void run_scan_on_reference(ScanCall& call, const std::string& why) {
  ir::Node* y = call.node();
  materialize_value(*y, ir::reference_eval(y));
  call.log("on the host (reference executor: " + why + ")");
}

void ScatterCall::log(const std::string& how) const {
  if (run.options.log_level < 1) return;
  std::fprintf(stderr, "[lazyfuse]   group %d: %s (%s%s) of %lld values into %lld %s: %s\n", run.index, op_name,
               ir::scatter_reduce_name(reduce), include_self ? "" : ", without self", static_cast<long long>(count),
               static_cast<long long>(out_numel), dtype_name(dtype), how.c_str());
}

void ScatterCall::index_error(int64_t raw) const {
  throw Error(ir::index_error(op_name, raw, axis, axis_size, true));
}

void run_scatter_on_reference(ScatterCall& call, const std::string& why) {
  ir::Node* y = call.node();
  materialize_value(*y, ir::reference_eval(y));
  call.log("on the host (reference executor: " + why + ")");
}

}  // namespace lf::backend
