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

void ScatterCall::bases(const void* out[3]) const {
  out[0] = self_storage ? self_storage->data() : nullptr;
  out[1] = index_storage ? index_storage->data() : nullptr;
  out[2] = src_storage ? src_storage->data() : nullptr;
}

void ScatterCall::record_call(const std::shared_ptr<rt::Storage>& out,
                              std::function<void(const ScatterArgs&, void*)> run, std::function<void()> check) const {
  const void* b[3];
  bases(b);
  record->outputs.emplace_back(node(), out);
  record->addresses = {self_kept ? nullptr : b[0], b[1], src_kept ? nullptr : b[2], out->data()};
  record->replay = [args = static_cast<const ScatterArgs&>(*this), b0 = b[0], b1 = b[1], b2 = b[2],
                    kept_self = self_kept ? self_storage : nullptr, kept_src = src_kept ? src_storage : nullptr,
                    run = std::move(run)](void* const* p) {
    const void* old_base[3] = {b0, b1, b2};
    const void* new_base[3] = {kept_self ? b0 : p[0], p[1], kept_src ? b2 : p[2]};
    run(args.rebased(old_base, new_base), p[3]);
  };
  record->check = std::move(check);
}

ScatterArgs ScatterArgs::rebased(const void* const old_base[3], const void* const new_base[3]) const {
  auto move = [](const void* p, const void* from, const void* to) -> const void* {
    if (p == nullptr || from == nullptr) return p;
    return static_cast<const char*>(to) + (static_cast<const char*>(p) - static_cast<const char*>(from));
  };
  ScatterArgs a = *this;
  a.self = move(self, old_base[0], new_base[0]);
  a.index = move(index, old_base[1], new_base[1]);
  a.src = move(src, old_base[2], new_base[2]);
  return a;
}

void ScatterArgs::index_error(int64_t raw) const {
  throw Error(ir::index_error(op_name, raw, axis, axis_size, true));
}

void run_scatter_on_reference(ScatterCall& call, const std::string& why) {
  ir::Node* y = call.node();
  materialize_value(*y, ir::reference_eval(y));
  call.log("on the host (reference executor: " + why + ")");
}

}  // namespace lf::backend
