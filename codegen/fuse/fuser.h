// The fuser: partitions the pending part of a trace into fusion groups (DESIGN.md, "Fusion rules").
//
// - Elementwise, cast and generator ops fuse with each other over one iteration shape.
// - Views are index math inside the consumer, never a node of a group.
// - A reduction joins the group of its elementwise producers (prologue); the group becomes a row
//   group: per row of kept dims, passes over the reduced dims. Elementwise consumers of the
//   reduction's result (epilogue, per row) and consumers that broadcast it back over the same rows
//   (softmax, layer_norm, x - mean) join it too, so those patterns are one kernel.
// - A matmul anchors a matmul group: its operands are read through their views (transposes and
//   broadcast batch dims are strides, never copies), and elementwise consumers over the matmul's
//   output shape that read it (or each other) directly join it as its epilogue (bias, activation,
//   scale, residual, cast), computed per output element as the matmul's rows are finished.
// - A conv2d anchors a conv group the same way: elementwise consumers over its output shape
//   (bias, inference batch norm, relu, residual add, cast) are its epilogue. pool2d is a group of
//   its own (a library call: its window is not yet index math inside a kernel).
// - cumsum, cumprod and logcumsumexp along one dim join their elementwise producers' group, and their
//   elementwise consumers over the same shape join them (one kernel: each row along the scanned
//   dim in order, a thread a row on a GPU), where fused_scan() says the lines suit that kernel;
//   otherwise, or alone, a scan is a library call (Backend::scan). No reduction joins a scan group.
// - argsort and topk start groups of their own; the gather of their keys at their positions (sort's
//   and topk's values) joins that group as its second member, written by the sort itself.
// - Every node still needed outside its group (held by the user, read by another group, or read
//   through a view the group cannot express) is an output, written once; except an elementwise
//   node that only other groups read, computed from values in memory anyway: its readers compute
//   it inline (Partition::inline_nodes).
// - No group may depend on itself through other groups (checked when a node joins).
// Every reason a node starts a new group instead of joining one is a CutReason, counted and logged.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/ir/node.h"

namespace lf::fuse {

enum class CutReason : uint8_t {
  kNoProducerGroup,    // nothing to join: inputs are buffers or generators
  kFusionDisabled,     // LAZYFUSE_FUSION=0
  kShapeMismatch,      // the producers' iteration shape differs from the node's
  kViewOfComputed,     // a view (other than a broadcast back over reduced rows) of a computed value
  kDifferentReduction, // a reduction over other dims, or of a value already reduced
  kWouldCycle,         // joining would make the group depend on itself
  kTooLarge,           // the group reached its instruction or operand cap
  kHostOp,             // matmul, conv2d, pool2d, cat, scatters, unfused scans (fused_scan) and argsort start groups of their own
  kGatherSource,       // a gather would join the group that computes its source (read from memory)
  kShortRows,          // cost rule: element outputs of a row group whose rows are too short
  kRecompute,          // cost rule: another reduction level would recompute too much per element
  kFewRows,            // cost rule: a row group over too few long rows to fill the device (Costs)
  kStridedRows,        // cost rule: a row group over strided rows the backend runs well only as one reduction (Costs)
  kCount
};
const char* cut_reason_name(CutReason r);

struct Group {
  enum class Kind : uint8_t { Pointwise, Row, Matmul, Conv, Host } kind = Kind::Pointwise;
  int id = 0;
  Shape full;                        // iteration shape (row groups: the reduced input's shape)
  std::vector<int64_t> rdims;        // row groups: reduced dims of `full`
  // A scan group (a row group without reductions): cumsum / cumprod along rdims (one dim) with
  // elementwise producers and consumers over `full`, every member an element value, each row
  // visited in order (kir::InstrKind::Scan).
  bool scan = false;
  std::vector<ir::Node*> nodes;      // members, topologically ordered (a matmul group's matmul first)
  std::vector<ir::Node*> outputs;    // members written to memory
  std::vector<int> deps;             // groups that must run first
};

// One cut, recorded when the caller asks (LAZYFUSE_LOG): the node that started a new group, and
// the group it would have joined (an index into Partition::groups; -1 when there was none).
struct Cut {
  CutReason reason;
  const ir::Node* node;
  int would_join = -1;
  int group = -1;  // the group the node went to instead
};

struct Partition {
  std::vector<Group> groups;  // in an order that respects deps
  std::unordered_map<const ir::Node*, int> group_of;   // member -> index into groups
  std::unordered_map<const ir::Node*, bool> row_phase;  // member -> per-row value (row groups)
  // Integer and bool elementwise values computed from generators only (the index arithmetic of pad, roll,
  // index_put, tril, ...), no handle holds and read only directly: in no group; every kernel that
  // reads one computes it inline, as it would a generator, instead of one group storing it.
  // Also elementwise members that other groups read but that are computed only from values in
  // memory anyway (Builder::recompute_cheap_outputs): their group computes them for its own
  // members, every other reader inline; no group writes them.
  std::unordered_set<const ir::Node*> inline_nodes;
  std::array<int64_t, static_cast<size_t>(CutReason::kCount)> cuts{};
  std::vector<Cut> cut_log;  // with record_cuts only, in placement order
};

inline constexpr int kMaxGroupNodes = 512;

inline constexpr int kMaxGroupLeaves = 48;

// The cost rule's thresholds (fuser.cpp's header comment says what they weigh; the measurements
// that set them are in bench/RESULTS.md, "Fusion cost rule").
// A row group whose rows have fewer elements than kShortRowElements, over at least
// kShortRowMinElements elements, writes no per-element output: the reduction starts its own group.
inline constexpr int64_t kShortRowElements = 16;
inline constexpr int64_t kShortRowMinElements = int64_t{1} << 16;
// A row group holds at most kMaxRowLevels reduction levels (a reduction over values computed from
// another reduction of the group is one level up); the next level starts a new group.
inline constexpr int kMaxRowLevels = 4;
// Rows at least this long count for Costs::few_rows (a GPU splits a row over blocks from 32
// blocks' worth of threads on: cuda/backend.cpp will_split).
inline constexpr int64_t kFewRowsMinElements = 8192;
// Costs::strided_rows_one_reduction applies to row groups of at least this many elements (below
// it a second kernel costs more than striding through a few cache lines).
inline constexpr int64_t kStridedRowsMinElements = 1 << 14;
// A scan fuses (a kernel that runs each line in order, a thread a line on a GPU) where its lines
// are many: on a GPU at least kScanMinLinesGpu lines of at most kScanMaxLengthGpu elements (fewer
// threads leave the GPU idle, and the library's look-back scan splits long lines over blocks).
// On the CPU, along the last dim (of size > 1) only, and not over fewer than kScanMinLinesCpu
// lines of at least kScanLongLineCpu elements (the library splits those over threads): a row of
// the kernel walks its line element by element, which along another dim touches a cache line an
// element, where the library scans 64 lines side by side (2-core CPU, 2026-11-27, relu(x) * 0.5,
// cumsum, divided by the count: [32768, 256] along dim 1 fused 6.7 ms, unfused 21.0;
// [64, 256, 512] along dim 1 fused 32.0, unfused 17.2).
inline constexpr int64_t kScanMinLinesGpu = int64_t{1} << 15;
inline constexpr int64_t kScanMaxLengthGpu = 4096;
inline constexpr int64_t kScanMinLinesCpu = 16;
inline constexpr int64_t kScanLongLineCpu = 32768;

// What the cost rule asks of the backend a node's device runs on (Backend::fuse_costs; the
// executor registers the backends' answers: set_backend_costs).
struct Costs {
  // A row kernel with element outputs or more than one reduction runs each row on one processor
  // (a GPU block); over fewer rows than this, of kFewRowsMinElements elements or more, such a
  // group would leave the device idle. There a row group takes one reduction and per-row values
  // only, which the backend splits over processors, and element work goes to pointwise kernels
  // (kFewRows). 0: the backend runs such kernels well at any row count.
  int64_t few_rows = 0;
  // A row kernel whose rows are strided in memory (by its inputs' strides: unit along the last
  // kept dim, as over a leading dim of a contiguous buffer or the last dim of a transposed one)
  // runs well only as one reduction with per-row values (kir::column_blocks' form); a group over
  // such rows takes that form, as few_rows' groups do (kStridedRows).
  bool strided_rows_one_reduction = false;
  // fused_scan's rule: a scan fuses over at least scan_min_lines lines of at most
  // scan_max_length elements, or over fewer lines of fewer than scan_short_line elements; with
  // scan_last_dim_only, along the last dim (of size > 1) only. The defaults are the CPU's.
  int64_t scan_min_lines = kScanMinLinesCpu;
  int64_t scan_max_length = INT64_MAX;
  int64_t scan_short_line = kScanLongLineCpu;
  bool scan_last_dim_only = true;
};
using CostsOf = std::function<Costs(Device)>;
// The backends' answers by device, registered by the executor when the library loads; partition()
// without `costs` and fused_scan() ask them (Costs{} where none are registered).
void set_backend_costs(CostsOf costs);
Costs backend_costs(Device device);
// Whether scan node `n` (cumsum, cumprod, logcumsumexp of floats, the positions of cummax and
// cummin) may run fused, by its backend's rule above (Costs).
bool fused_scan(const ir::Node& n);

// `order`: pending nodes, inputs first (ir::topo_order); `wanted`: nodes that must be materialized.
// `record_cuts`: fill Partition::cut_log (the log's per-cut lines; off on the common path).
// `costs`: the cost rule's answers by device (none: backend_costs).
Partition partition(const std::vector<ir::Node*>& order, const std::function<bool(const ir::Node&)>& wanted,
                    bool fusion, bool record_cuts = false, const CostsOf& costs = {});

// Rewrites the graph before partitioning; returns the number of changes (then the caller orders
// the flush again, and does not record it as a flush plan). In order:
// - a view (slice, permute, reshape) of a pending elementwise value that no handle holds is moved
//   below the elementwise ops, view(op(a, b)) -> op(view(a), view(b)), so that its consumer
//   computes only the elements it reads (index math) instead of the whole value being stored;
// - every reshape becomes expressible as strides over its source: where a reshape's input layout
//   cannot be viewed that way, a copy is inserted below it;
// - a gather whose source is a pending generator (through views) reads a copy of it, written
//   first (a gather reads its source from memory).
// (One entry point, which the executor already calls, for both rewrites.) The nodes the rewrites
// unlink are moved into `unlinked` when given (a caller that still holds raw pointers into the old
// graph keeps them alive with it), else freed on return.
int insert_reshape_copies(const std::vector<ir::Node*>& order, std::vector<ir::NodePtr>* unlinked = nullptr);

// Cat as index math (issue 23: cat fused into its consumers, never a copy kernel of its own
// when a consumer exists). A pending cat of at most kMaxInlineCatParts non-empty parts becomes, in
// place, where(i < start_1, remap(part_0, i), where(i < start_2, remap(part_1, i - start_1), ...))
// over i, the coordinate along the cat's dim (each remap's index clamped into its part, so that
// every lane reads in bounds, and the where picks). The remaps are then pushed into elementwise
// parts like any other (insert_reshape_copies), so `sum(cat({exp(a), b}))` is one kernel. Kept as
// copy kernels into the output's slabs (exec/cat.cpp): a cat that a handle holds whose parts are
// all in memory (the copies run at the copy floor, with 16-byte vectors, where a where over remaps
// reads every part at each element), and a cat of more parts (each element evaluates every part's
// branch). Runs with fusion on only; returns the number of cats rewritten.
inline constexpr size_t kMaxInlineCatParts = 8;
int inline_cats(const std::vector<ir::Node*>& order);

}  // namespace lf::fuse
