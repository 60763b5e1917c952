// SortCall's log line and the reference path every backend can fall back to.
#include "codegen/backend/sort_call.h"

#include <cstdio>

#include "codegen/reference/reference.h"
#include "runtime/storage.h"

namespace lf::backend {

void SortCall::log(const std::string& how) const {
  if (run.options.log_level < 1) return;
  std::string what = kept < n ? "topk " + std::to_string(kept) + " of" : "argsort";
  std::fprintf(stderr, "[lazyfuse]   group %d: %s %lld rows of %lld (%s%s): %s\n", run.index, what.c_str(),
               static_cast<long long>(rows()), static_cast<long long>(n), dtype_name(dtype),
               descending ? ", descending" : "", how.c_str());
}

void run_sort_on_reference(SortCall& call, const std::string& why) {
  ir::Node* y = call.node();
  materialize_value(*y, ir::reference_eval(y));
  if (ir::Node* v = call.values_node(); v && call.values) {  // the gather, reading the positions just stored
    ir::Value values = ir::to_contiguous(ir::reference_eval(v), v->dtype);
    const size_t bytes = static_cast<size_t>(v->numel()) * dtype_size(v->dtype);
    if (bytes) rt::copy(*values.storage, 0, *call.values, 0, bytes);
  }
  ++call.run.stats.kernels_launched;
  call.log("the reference executor's stable sort on the host (" + why + ")");
}

}  // namespace lf::backend
