#include "codegen/backend/attention.h"

#include <cstdio>

namespace lf::backend {

void AttentionCall::log(const std::string& how) const {
  if (run.options.log_level < 1) return;
  static const char* kMask[] = {"", ", added mask", ", bool mask", ", bool mask (true masks)"};
  std::fprintf(stderr, "[lazyfuse]   group %d: attention %s%lldx%lld d%lld dv%lld %s%s%s: %s\n", run.index,
               batch.empty() ? "" : (shape_str(batch) + " x ").c_str(), static_cast<long long>(tq),
               static_cast<long long>(tk), static_cast<long long>(d), static_cast<long long>(dv), dtype_name(dtype),
               kMask[params.mask], params.causal ? ", causal" : "", how.c_str());
}

std::shared_ptr<rt::Storage> AttentionCall::allocate_output() const {
  return rt::Storage::allocate(node()->device, static_cast<size_t>(node()->numel()) * dtype_size(dtype));
}

void AttentionCall::finish(std::shared_ptr<rt::Storage> out) const {
  ir::Node* y = node();
  materialize(*y, std::move(out), ir::Layout{ir::contiguous_strides(y->shape), 0});
}

void run_attention_on_reference(AttentionCall& call, const std::string& why) {
  ir::Node* y = call.node();
  materialize_value(*y, ir::reference_eval(y));
  call.log("the reference executor's attention (" + why + ")");
}

}  // namespace lf::backend
