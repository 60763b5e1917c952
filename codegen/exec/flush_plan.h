// Flush plans: a flush whose trace has the structure of an earlier one replays the kernels that
// flush launched, without fusing, lowering or looking kernels up again. A small flush in a loop
// (the same few ops on new data each iteration) then costs its recording, a walk over the trace and
// the launches.
//
// The structure, a flush's signature, is every fact that fusion and lowering read: for each
// pending node its op, dtype, device, sizes, attributes, its inputs and whether it is kept; for
// each realized input its dtype, device, sizes, strides, offset, which other inputs share its
// storage, and its address modulo 64 (vector alignment). Equal signatures give the same groups,
// kernels and launch arguments but for the pointers, which a replay binds afresh, and the numbers.
// A signature is compared word for word, not only by its hash.
//
// Numbers (a `full` value, an `arange`'s start and step, a random op's seed and counter) are kept
// apart from the words: a plan replays when they change, patching each into the launch parameters
// it became (ir::note_number_use). A number that something else read while the plan was recorded
// (a rewrite folding an arange's start, a library call baking a scale in, a host evaluation) is
// pinned: the plan replays only where it repeats. Where a backend specializes a kernel on a
// parameter's value (CUDA's 32-bit integer math), a replay with a new number first asks the
// backend whether the kernel's variant still holds, and records the flush anew where it does not.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/backend/backend.h"
#include "codegen/cache/kernel_cache.h"
#include "codegen/kir/kernel_ir.h"
#include "codegen/ir/node.h"

namespace lf::plan {

struct Signature {
  std::vector<int64_t> words;
  uint64_t hash = 0;
  // Realized inputs, in first-use order. Read them before the flush stores its held views: that
  // may free a leaf whose only holder was a view (the view keeps the leaf's storage).
  std::vector<ir::Node*> leaves;
  uint64_t mark = 0;              // the Node::flush_mark of its nodes
  size_t nodes = 0;               // pending nodes numbered by describe (positions 0 .. nodes-1)
  // The numbers, two per node that has them (kNumberFields): a full's value (as bits) and its
  // integer value; an arange's start and step (as bits); a random op's seed and counter.
  std::vector<int64_t> numbers;
  // Per position: the index of its node's first number in `numbers`, or -1.
  std::vector<int32_t> number_at;
};

inline constexpr int kNumberFields = 2;

// The signature of a flush over `order` (ir::topo_order of its roots). Numbers the nodes
// (Node::flush_mark, flush_pos): call it under the flush lock, or where no other thread flushes.
void describe(const std::vector<ir::Node*>& order, const std::function<bool(const ir::Node&)>& wanted, bool fusion,
              Signature* out);

// Numbers a flush's order after a rewrite of its graph (exec::rewrite: attention, copies inserted,
// views and remaps moved): the nodes of `described` (the order describe() numbered) and the leaves
// get describe's numbers again (the rewrite's walks reuse the marks), the nodes the rewrite made
// the numbers after them, from sig.nodes on. A rewrite changes a node in place, so a handle's node
// stays the node it holds. Every node of `described` must still be alive: the caller keeps
// the nodes the rewrite unlinked (executor.cpp, rewrite) until this returns.
// The rewrite depends only on what the signature holds, so equal signatures are rewritten alike,
// and a plan recorded over the rewritten graph replays over the unrewritten one: a step's output
// at a position describe gave goes to that node, one past them is an intermediate the rewrite
// made, whose buffer only later steps read.
void number_new(const Signature& sig, const std::vector<ir::Node*>& described, const std::vector<ir::Node*>& order);

// A pending node's position in the order `sig` describes; -1 when it is not there.
inline int position(const Signature& sig, const ir::Node* n) {
  return n->flush_mark == sig.mark && n->flush_pos >= 0 ? n->flush_pos : -1;
}

// Where a replayed launch takes an operand's pointer from.
inline constexpr int64_t kNoPointer = -1;                      // an Index operand (generated, no memory)
inline int64_t from_output(int64_t slot) { return -2 - slot; }  // an output of this flush
inline int64_t output_slot(int64_t from) { return -2 - from; }  // a leaf when from >= 0
inline constexpr int64_t kErrorPointer = INT64_MIN;            // the step's error buffer (Step::error)

// One kernel launch of a recorded flush, or one library call (matmul, conv2d, pool2d: `library`).
// A library call's row in the profile and the trace (rt::obs::LibraryCall): the op and its
// output's shape, the dtype and input shapes, the bytes it reads and writes.
struct LibraryRow {
  std::string name, ops;
  uint64_t bytes = 0;
};

struct Step {
  std::shared_ptr<const cache::Entry> entry;
  kir::Kernel kernel;
  kir::LaunchArgs args;  // as recorded; each replay rebinds the pointers
  std::shared_ptr<const backend::Variant> variant;
  Device device;
  std::vector<int64_t> pointer_from;  // per operand: kNoPointer, a leaf, or from_output(slot)
  std::vector<int> outputs;           // order positions of the nodes it writes; slots in sequence
  std::vector<Shape> out_strides;     // per output: its strides in its buffer (offset 0); empty: contiguous
  // Per output: the earlier slot whose buffer it takes over (in the recorded flush that buffer was
  // freed before this output got its address), or -1 for a buffer of its own. Always the root of
  // a chain: the slot that allocates the buffer (A, B taking it over, C taking it from B: C names
  // A). A replay reuses memory as the recorded flush did, instead of holding every intermediate to
  // its end.
  std::vector<int64_t> reuse;
  // Per output: whether a later output of the plan takes its buffer over (plan::mark_overwritten).
  // In the recorded flush such a node died once its last reader had run, freeing the buffer. A
  // replay leaves it pending instead of realized: a replay skips the graph rewrites the recorded
  // flush ran, so in a replayed flush the node may still be alive, read by a later flush through a
  // pending value, and handed the shared buffer it would hold the later output's data.
  std::vector<char> overwritten;
  // Per output with a buffer of its own: the bytes to allocate (a later output taking the buffer
  // over may need more than this one: the allocator's block was larger).
  std::vector<size_t> alloc_bytes;
  int64_t bytes = 0;
  // A library call (backend::RecordedCall::replay), run with `args.pointers` as its addresses; null
  // for a kernel launch. Counted as the launches and kernel lookups the recorded call made.
  std::function<void(void* const*)> library;
  LibraryRow library_row;  // how a profiled or traced replay shows the call
  // A library call's data-dependent check (backend::RecordedCall::check: a GPU scatter's index
  // error word), run after the replay's launches; empty when there is none.
  std::function<void()> check;
  uint64_t launches = 1, lookups = 1;
  // The launch parameters a replay patches: (index in args.params, index in Signature::numbers),
  // and whether the kernel's variant may depend on them (Backend::specializes_on_param).
  std::vector<std::pair<int, int>> numbers;
  bool check_variant = false;
  // A kernel with gathers: its error operand ({tag, index}: fuse/lower.h), a buffer of the plan's
  // own that stays zero until a launch meets an index out of range; read after the replay's
  // launches (the flush is a sync point, as outside plans). The facts the message needs, by tag.
  struct Gather {
    int64_t op = 0, axis = 0, size = 0;
  };
  std::shared_ptr<rt::Storage> error;
  std::vector<Gather> gathers;
};

struct Plan {
  std::vector<int64_t> words;  // the signature it was recorded for
  // The numbers of the latest recording or replay (the steps' parameters hold them), and per
  // number whether a replay may change it (else the plan replays only where it repeats).
  std::vector<int64_t> numbers;
  std::vector<char> patched;
  uint64_t generation = 0;     // the kernel cache's generation it was brought up to (PlanCache::find)
  std::vector<Step> steps;
  uint64_t nodes = 0;          // nodes the flush computed (CacheStats::nodes_executed)
  // The steps as graphs of their backend (CUDA graphs; after `steps`, so that they go first: they
  // refer to their kernels), each built for the operand pointers of a replay. A loop whose buffers
  // alternate (its previous result still held while the next is computed) keeps one graph per
  // pointer set and launches it as it is; past kMaxGraphsPerPlan sets, the least recently used
  // graph takes the new pointers (LaunchGraph::update, a driver call per changed launch, which
  // cost about as much as the launches of a small step). Changed numbers update the graph of the
  // replay's pointers in place. graph_off: the backend gave none.
  struct Graph {
    std::vector<void*> pointers;  // every step's, in order
    std::vector<int64_t> numbers;  // the plan's numbers it was built or updated with
    std::unique_ptr<backend::LaunchGraph> graph;
    uint64_t used = 0;  // replay count at its last launch
  };
  std::vector<Graph> graphs;
  uint64_t replays = 0;   // graph launches (the graphs' recency)
  uint64_t replayed = 0;  // replays of any kind (the log's count)
  bool graph_off = false;
  // A plan with library calls: its replays captured as graphs (Backend::capture), each for the
  // pointers and numbers it was captured with (a few sets: a loop alternating between buffers
  // keeps one each; numbers that change every replay use the capture budget up);
  // off after a capture failed or too many pointer sets came.
  struct Captured {
    std::vector<void*> pointers;  // every step's, in order
    std::vector<int64_t> numbers;  // the plan's numbers it was captured with
    std::unique_ptr<backend::LaunchGraph> graph;
  };
  std::vector<Captured> captured;
  int captures = 0;
  bool capture_off = false;
};

// Patches `sig`'s numbers into the steps' launch parameters (a plan `find` returned for `sig`).
// False, the plan left as it was, when a kernel's variant does not hold for them
// (Backend::same_variant): run the flush normally.
bool bind_numbers(Plan& plan, const Signature& sig);

// Sets every step's Step::overwritten from the reuse entries, once the plan is recorded.
void mark_overwritten(Plan& plan);

// Plans by signature. A plan is recorded on a signature's second sighting, so that one-off flushes
// pay nothing for it. One structure keeps up to kPlansPerStructure plans, for as many values of its
// pinned numbers (a loop alternating between two attention scales replays both), the most recent
// first. Not thread-safe: the executor holds its lock around every use.
class PlanCache {
 public:
  // The plan for `sig`'s words whose pinned numbers are `sig`'s (Plan::patched), or null. A plan of
  // an older kernel-cache generation takes its kernels' current entries (optimized builds swapped
  // in since), or is passed over where one was cleared.
  Plan* find(const Signature& sig, uint64_t generation);
  // Whether `sig` was seen before (and remembers it now).
  bool seen_before(const Signature& sig);
  // Stores `plan` for `sig`, in place of the plan of the same words whose numbers it cannot tell
  // apart from its own (each pinned by either equal).
  void store(const Signature& sig, Plan plan);

 private:
  static constexpr size_t kMaxPlans = 256, kMaxSeen = 4096;  // past these, start over
  static constexpr size_t kPlansPerStructure = 4;            // past this, the least recent goes
  std::unordered_map<uint64_t, std::list<Plan>> plans_;       // a list: a Plan never moves
  size_t count_ = 0;
  std::unordered_set<uint64_t> seen_;
};

}  // namespace lf::plan
