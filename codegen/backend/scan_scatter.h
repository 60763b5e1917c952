// Scan and scatter groups handed to their backend (Backend::scan, Backend::scatter; issue 23): the
// operands resolved to storage and strides on the group's device, so that each backend runs the op
// over the thread pool or as GPU kernels instead of the reference executor on the host.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "codegen/backend/kernel.h"
#include "codegen/ir/indexing.h"

namespace lf::backend {

// A cumulative op (ir::is_scan: cumsum, cumprod, logcumsumexp, cummax and cummin positions) along
// one dim: the input seen as [outer, n, inner] through three strides (exec/scan.cpp copies an input
// whose dims do not merge so). The output is fresh and contiguous, materialized into the node: of
// the input's dtype (the frontend cast it), Int64 positions for cummax / cummin. ScanLines is what
// the computation reads, which a flush plan's replay keeps (the call's group is gone by then).
struct ScanLines {
  ir::Op op = ir::Op::CumSum;
  DType dtype = DType::Float32;     // the output's
  DType in_dtype = DType::Float32;  // the input's
  int64_t outer = 1, n = 1, inner = 1;
  const void* data = nullptr;  // the input's storage; elements at offset + o * so + j * sn + k * si
  int64_t offset = 0, so = 0, sn = 0, si = 0;

  int64_t numel() const { return outer * n * inner; }
  int64_t lines() const { return outer * inner; }
};

struct ScanCall : ScanLines {
  GroupRun run;
  std::shared_ptr<rt::Storage> storage = nullptr;  // kept alive for the call
  // Set while a flush plan is recorded (the input is the storage's own memory, not a copy made for
  // the call): the backend fills it, the input's and the output's base addresses in that order.
  RecordedCall* record = nullptr;

  explicit ScanCall(const GroupRun& r) : run(r) {}
  ir::Node* node() const { return run.group.nodes[0]; }
  // LAZYFUSE_LOG=1: "group 1: cumsum [1, 4096, 4096] (outer, n, inner) float32: <how>".
  void log(const std::string& how) const;
};

// The scan computed by the reference executor (on the host, copied to the group's device).
void run_scan_on_reference(ScanCall& call, const std::string& why);

// scatter_add(self, axis, index, src) (index_add and bincount record it): out = a copy of self, then
// out[..., index[e], ...] += src[e] for every element e of index (rank <= kMaxRank). The scatter
// row (scatter, scatter_reduce, index_put, index_copy, index_fill) is the same call with another
// `reduce` (ir::ScatterReduce; codegen/reference/scatter.h defines each mode). self is contiguous
// (exec/scan.cpp copies it otherwise); index and src are read through their strides over index's
// shape.
struct ScatterArgs {
  static constexpr int kMaxRank = 8;
  DType dtype = DType::Float32;      // self's, src's and the output's
  DType index_dtype = DType::Int64;  // Int32 or Int64
  ir::ScatterReduce reduce = ir::ScatterReduce::Sum;  // scatter_add: Sum with self
  bool include_self = true;
  const char* op_name = "scatter_add";  // the user-facing op, named by index errors and the log
  int rank = 1;
  int64_t axis = 0;
  int64_t shape[kMaxRank] = {};        // index's shape (src is read over it too)
  int64_t out_strides[kMaxRank] = {};  // the contiguous output's
  int64_t index_strides[kMaxRank] = {};
  int64_t src_strides[kMaxRank] = {};
  int64_t axis_size = 0;  // self's size along axis: the valid index range
  bool index_known = false;  // the indices are known in range (ir::scatter_indices_known_in_range)
  int64_t count = 0;      // index's element count
  int64_t out_numel = 0;
  const void* self = nullptr;  // contiguous, with its offset applied
  const void* index = nullptr;  // with its offset applied
  const void* src = nullptr;
  // On a GPU, generator operands are not evaluated on the host and copied over (exec/scan.cpp):
  // self_zero: self is zeros (self is null; the backend clears the output); src_full: src is
  // full(src_value) (src is null; src_ivalue is the exact value of an integer dtype).
  bool self_zero = false, src_full = false;
  double src_value = 0;
  int64_t src_ivalue = 0;

  // Throws the op's index error for `raw` (scatter_add's message, as the reference's).
  [[noreturn]] void index_error(int64_t raw) const;
  // The operands' addresses with `self`, `index` and `src` moved from their storages' old base
  // addresses to new ones (a flush plan's replay; a null base keeps a null operand).
  ScatterArgs rebased(const void* const old_base[3], const void* const new_base[3]) const;
};

// What the computation reads is ScatterArgs, which a flush plan's replay keeps (the call's group is
// gone by then).
struct ScatterCall : ScatterArgs {
  GroupRun run;
  std::shared_ptr<rt::Storage> self_storage = nullptr, index_storage = nullptr, src_storage = nullptr;  // kept alive
  // Set while a flush plan is recorded (no operand is a copy made for the call): the backend fills
  // it, the base addresses of self, index and src (null where the operand has no memory: a pending
  // zeros() self, a full() src) and of the output, in that order. An index out of range in a replay
  // is found by RecordedCall::check, after the replay's launches.
  RecordedCall* record = nullptr;

  // self or src is a pending full() computed for this call (exec/scan.cpp): the same values in
  // every replay (its value is part of the flush's signature), so a record keeps its buffer
  // instead of rebinding it.
  bool self_kept = false, src_kept = false;

  explicit ScatterCall(const GroupRun& r) : run(r) {}
  ir::Node* node() const { return run.group.nodes[0]; }
  // LAZYFUSE_LOG=1: "group 2: scatter_add [65536] <- 16777216 values float32: <how>".
  void log(const std::string& how) const;
  // The operands' storages' base addresses (null where there is none), for rebased().
  void bases(const void* out[3]) const;
  // Fills `record` (set) for a replay: the addresses of self, index, src and `out`, and replay /
  // check from `run(args, out)` and `check()` (check may be empty). A kept operand's buffer is
  // held by the replay and not rebound.
  void record_call(const std::shared_ptr<rt::Storage>& out, std::function<void(const ScatterArgs&, void*)> run,
                   std::function<void()> check) const;
};

void run_scatter_on_reference(ScatterCall& call, const std::string& why);

}  // namespace lf::backend
