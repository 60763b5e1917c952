// Attention groups: q, k, v and the mask as storage plus strides (the permuted heads a transformer
// makes are read as they are), then the group's backend runs it (Backend::attention).
#include "codegen/backend/attention.h"

#include "codegen/exec/groups.h"

namespace lf::exec {

void run_attention_group(const backend::GroupRun& run, backend::RecordedCall* record) {
  ir::Node* y = run.group.nodes[0];
  Device device = y->device;
  backend::AttentionCall call{run};
  call.dtype = y->dtype;
  call.params = ir::AttentionParams::of(*y);
  const Shape& qs = y->inputs[0]->shape;
  const size_t r = qs.size();
  call.batch.assign(qs.begin(), qs.end() - 2);
  call.tq = qs[r - 2];
  call.d = qs[r - 1];
  call.tk = y->inputs[1]->shape[r - 2];
  call.dv = y->inputs[2]->shape[r - 1];
  if (call.params.heads_last) call.heads = qs[r - 3];
  kir::GemmOperand* ops[] = {&call.q, &call.k, &call.v, &call.mask};
  uint64_t elements = static_cast<uint64_t>(y->numel());
  bool computed = false;  // an operand made for this call: a replay would read it stale
  for (size_t i = 0; i < y->inputs.size(); ++i) {
    Operand o = operand(y->inputs[i].get(), device);
    computed |= o.computed;
    *ops[i] = o.view;
    call.storage.push_back(o.storage);
    elements += static_cast<uint64_t>(y->inputs[i]->numel());
  }
  if (call.params.has_mask()) call.mask_dtype = y->inputs[3]->dtype;
  call.bytes = elements * dtype_size(call.dtype);
  if (!computed) call.record = record;
  backend::backend_for(device).attention(call);
}

}  // namespace lf::exec
