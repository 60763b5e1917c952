// An attention group handed to its backend (Backend::attention): q, k, v and the mask resolved to
// storage and strides on the group's device, the sizes, and the parameters (codegen/ir/attention.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/backend/kernel.h"
#include "codegen/ir/attention.h"

namespace lf::backend {

struct AttentionCall {
  GroupRun run;
  DType dtype = DType::Float32;
  Shape batch;  // the batch dims (may be empty)
  int64_t tq = 0, tk = 0, d = 0, dv = 0;
  ir::AttentionParams params;
  // Output row (b, i) of flat batch b and query i is written at row ((b / heads) * tq + i) * heads
  // + b % heads: 1, or the last batch dim's size when params.heads_last (codegen/ir/attention.h).
  int64_t heads = 1;
  // Strides over [batch..., Tq, D], [batch..., Tk, D], [batch..., Tk, Dv] and, with a mask,
  // [batch..., Tq, Tk] (0 along broadcast dims); any strides.
  kir::GemmOperand q, k, v, mask;
  DType mask_dtype = DType::Float32;                  // the call's dtype (added) or Bool
  std::vector<std::shared_ptr<rt::Storage>> storage;  // the operands', kept alive for the call
  uint64_t bytes = 0;  // bytes it moves at least: q, k, v (and the mask) read, the output written
  // Set while a flush plan is recorded: the backend fills it with the call over new addresses
  // {q, k, v, mask (null without one), out}.
  RecordedCall* record = nullptr;

  ir::Node* node() const { return run.group.nodes[0]; }
  int64_t batch_count() const { return shape_numel(batch); }
  // LAZYFUSE_LOG=1: "group 3: attention [4, 8] x 128x128 d32 float32, causal: <how>".
  void log(const std::string& how) const;
  // The output: the node's shape ([batch..., Tq, Dv], or heads last), contiguous, fresh on the group's device.
  std::shared_ptr<rt::Storage> allocate_output() const;
  // Hands the written output to the node.
  void finish(std::shared_ptr<rt::Storage> out) const;
};

// The attention computed by the reference executor (on the host, copied to the group's device):
// the path of a backend whose kernel cannot run the call. Logs `why`.
void run_attention_on_reference(AttentionCall& call, const std::string& why);

}  // namespace lf::backend
