// Recording a flush's launches as a flush plan (flush_plan.h), and replaying a plan on a later
// flush with the same signature (internal to exec/).
#pragma once

#include <functional>
#include <unordered_map>
#include <vector>

#include "codegen/backend/kernel.h"
#include "codegen/exec/flush_plan.h"

namespace lf::exec {

// Records the launches of a flush as a plan while the flush runs normally.
struct Recorder {
  const plan::Signature& sig;
  plan::Plan plan;
  bool ok = true;  // false once a group is something a plan cannot replay

  explicit Recorder(const plan::Signature& s);
  void add(const backend::Prepared& k);
  // A cat: its copy kernels write slabs of one buffer, the cat node's; the first step allocates it.
  void add_cat(const ir::Node& cat, const std::vector<backend::Prepared>& copies);
  // A library call the backend recorded (ok = false when it could not); `launches`, `lookups` and
  // `bytes` are what the call added to the flush's counters.
  void add_library(const backend::RecordedCall& call, uint64_t launches, uint64_t lookups, uint64_t bytes,
                   plan::LibraryRow row);
  // Once every group ran: which numbers a replay may patch (plan::Plan::patched), from the uses
  // the flush noted (ir::NumberUses) and the launch parameters the steps claimed.
  void finish(const std::vector<ir::NumberUses::Use>& uses);

 private:
  // The numbers among `k`'s launch parameters that a replay can patch (Step::numbers, claims).
  void claim_numbers(const backend::Prepared& k, plan::Step& s);
  // Binds each operand's pointer to a leaf or an earlier output; false (ok = false) when one is
  // neither.
  bool bind_pointers(const backend::Prepared& k, plan::Step& s);
  void push(const backend::Prepared& k, plan::Step s);
  // The slot allocating the buffer of the earlier output that was at `data` (freed since), or -1.
  int64_t reused_slot(const void* data) const;
  // Registers output slot `slots` (about to be created) for `data`, `bytes` large, declared as output
  // `output` of step plan.steps.size() (the step being built); returns its reuse entry.
  int64_t new_slot(const void* data, size_t bytes, size_t output);

  std::unordered_map<const void*, int64_t> pointer_from;  // address -> a leaf, or from_output(slot)
  std::vector<int32_t> claims;  // per node with numbers (Signature::number_at / kNumberFields): parameters claimed
  int64_t slots = 0;
  std::vector<size_t> slot_bytes;  // per output slot: its bytes (the allocation while its step is built)
  std::vector<int64_t> slot_root;  // per output slot: the slot that allocates its buffer
  std::vector<std::pair<size_t, size_t>> root_where;  // per slot: (step index, output index) declaring it
};

// Runs a recorded plan on this flush's nodes and buffers (whose signature matched the plan's):
// allocates every output and binds every step's pointers, launches (one graph, or step by step),
// then hands the outputs to their nodes.
void replay(plan::Plan& plan, const std::vector<ir::Node*>& order, const plan::Signature& sig,
            const std::function<bool(const ir::Node&)>& wanted, CacheStats& stats);

// A held view of materialized data is just new strides over the same storage.
void materialize_held_views(const std::vector<ir::Node*>& order, const std::function<bool(const ir::Node&)>& wanted);

}  // namespace lf::exec
