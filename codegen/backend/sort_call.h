// A sort group (argsort, topk) handed to its backend (Backend::sort): the keys resolved to storage
// on the group's device and viewed as [outer, n, inner] through three strides, the positions kept
// per row, and the order. The backend writes the int64 positions, contiguous [outer, kept, inner].
#pragma once

#include <memory>
#include <string>

#include "codegen/backend/kernel.h"

namespace lf::backend {

// The rows a sort reads and how (SortRows), which a flush plan's replay keeps (the call's group
// is gone by then); the call adds the group, the storage and where the values go.
struct SortRows {
  DType dtype = DType::Float32;  // the keys'
  const void* data = nullptr;    // first element of the keys' storage
  int64_t offset = 0;            // elements
  int64_t outer = 1, n = 0, inner = 1;
  int64_t stride_outer = 0, stride_n = 1, stride_inner = 0;  // elements
  int64_t kept = 0;         // positions kept per row: n for argsort, k for topk
  bool descending = false;  // largest first (NaN first)

  int64_t rows() const { return outer * inner; }
  // Element j of row r (r = o * inner + i), in elements from `data`.
  int64_t at(int64_t r, int64_t j) const {
    return offset + (r / inner) * stride_outer + (r % inner) * stride_inner + j * stride_n;
  }
};

struct SortCall : SortRows {
  GroupRun run;
  std::shared_ptr<rt::Storage> storage;  // kept alive for the call
  // When the group has sort's values (its second member, fuse::Builder::join_sort): where the
  // backend writes the keys as they are (x's elements at the positions, bit for bit), in the
  // positions' layout [outer, kept, inner]; null otherwise.
  std::shared_ptr<rt::Storage> values;
  // Set while a flush plan is recorded (the keys are their storage's own memory, not a copy made
  // for the call): the backend fills it with the keys', the positions' and the values' (or null)
  // base addresses in that order.
  RecordedCall* record = nullptr;

  explicit SortCall(const GroupRun& r) : run(r) {}
  ir::Node* node() const { return run.group.nodes[0]; }
  ir::Node* values_node() const { return run.group.nodes.size() > 1 ? run.group.nodes[1] : nullptr; }
  // LAZYFUSE_LOG=1: "group 2: topk 16 of [4096 x 4096] float32: <how>".
  void log(const std::string& how) const;
};

// The reference executor's argsort on the host, copied to the group's device. Logs `why`.
void run_sort_on_reference(SortCall& call, const std::string& why);

}  // namespace lf::backend
