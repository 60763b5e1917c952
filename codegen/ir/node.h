// The trace IR: a DAG of nodes, each an op over input nodes with a shape and a dtype.
// A node is pending until realized; then it holds a (possibly strided) view of storage and drops
// its inputs, so the graph behind a computed value is freed.
#pragma once

#include <array>
#include <atomic>
#include <initializer_list>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "codegen/ir/op.h"
#include "lazyfuse/types.h"
#include "runtime/storage.h"

namespace lf::ir {

struct Node;
using NodePtr = std::shared_ptr<Node>;
// A node's inputs: up to three (every op but cat) stored in the node itself, so that recording an
// op allocates no list; more go to the heap.
class Inputs {
 public:
  Inputs() = default;
  Inputs(std::initializer_list<NodePtr> nodes) {
    for (const NodePtr& n : nodes) push_back(n);
  }
  Inputs(const Inputs&) = default;
  Inputs& operator=(const Inputs&) = default;
  Inputs(Inputs&& o) noexcept
      : inline_(std::move(o.inline_)), heap_(std::move(o.heap_)), size_(std::exchange(o.size_, 0)) {}
  Inputs& operator=(Inputs&& o) noexcept {
    inline_ = std::move(o.inline_);
    heap_ = std::move(o.heap_);
    size_ = std::exchange(o.size_, 0);
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  NodePtr* begin() { return size_ <= kInline ? inline_.data() : heap_.data(); }
  NodePtr* end() { return begin() + size_; }
  const NodePtr* begin() const { return size_ <= kInline ? inline_.data() : heap_.data(); }
  const NodePtr* end() const { return begin() + size_; }
  NodePtr& operator[](size_t i) { return begin()[i]; }
  const NodePtr& operator[](size_t i) const { return begin()[i]; }

  void push_back(const NodePtr& n) {  // the recording path: one reference count increment, no temporary
    if (size_ < kInline) {
      inline_[size_++] = n;
      return;
    }
    push_back(NodePtr(n));
  }
  void push_back(NodePtr&& n) {
    if (size_ < kInline) {
      inline_[size_++] = std::move(n);
      return;
    }
    if (size_ == kInline) {
      heap_.reserve(2 * kInline);
      for (NodePtr& m : inline_) heap_.push_back(std::move(m));
    }
    heap_.push_back(std::move(n));
    ++size_;
  }
  void clear() {
    for (NodePtr& n : inline_) n.reset();
    heap_.clear();
    size_ = 0;
  }

 private:
  static constexpr size_t kInline = 3;
  std::array<NodePtr, kInline> inline_;
  std::vector<NodePtr> heap_;  // all of them, when there are more than kInline
  size_t size_ = 0;
};

struct Attrs {
  std::vector<int64_t> dims;  // reduce: sorted dims; permute: the permutation
  double value = 0;           // full: value; arange: start
  double value2 = 0;          // arange: step
  int64_t ivalue = 0;         // full of an integer dtype: the exact value
  int64_t axis = 0;           // slice, cat
  int64_t start = 0;          // slice
  int64_t step = 1;           // slice
  bool keepdim = false;       // reduce
  uint64_t seed = 0;          // rand, randn
  uint64_t counter = 0;       // rand, randn: index of the first number in the stream
};

// Whether an arange's start and step (value, value2) are integers within int64: an arange of an
// integer dtype then runs in integer arithmetic (start + i * step, exact past 2^53) on every
// backend, any other in float64. A test of the numbers in each kernel, not a variant of it, so a
// replay may patch either kind of number in.
inline bool arange_is_integral(const Attrs& a) {
  auto integral = [](double v) { return v >= -0x1p63 && v < 0x1p63 && static_cast<double>(static_cast<int64_t>(v)) == v; };
  return integral(a.value) && integral(a.value2);
}

// Strides and offset in elements; strides of size-1 dims are irrelevant.
struct Layout {
  Shape strides;
  int64_t offset = 0;
};

Shape contiguous_strides(const Shape& shape);
bool is_contiguous(const Shape& shape, const Layout& layout);
// The strides of a dense [N, C, H, W] array stored as [N, H, W, C] (PyTorch's channels_last).
Shape channels_last_strides(const Shape& shape);
// Whether a 4-D value is stored channels-last and not also contiguous (C > 1 and H * W > 1: a
// layout that only channels-last strides describe), the offset aside.
bool is_channels_last(const Shape& shape, const Layout& layout);

struct Node {
  Op op;
  DType dtype;
  Device device;
  Shape shape;
  Inputs inputs;
  Attrs attrs;

  // Set when realized (op becomes Buffer; inputs are released).
  std::shared_ptr<rt::Storage> storage;
  Layout layout;

  // Handles held by users (lf::Tensor); a pending node with none is a dead intermediate, never
  // materialized on its own. Nodes also hold their inputs, which does not count here.
  std::atomic<int32_t> user_refs{0};
  // Scratch of the flush in progress, written by ir::flush_order and plan::describe and read by
  // plan::position. Only exec::run calls them, and its one caller (detail::realize) holds the
  // process's flush lock. flush_mark: a mark from next_flush_mark() (visited, or numbered);
  // flush_pos: the node's number under describe's mark. A field read instead of a hash lookup for
  // every edge of the trace.
  int32_t flush_pos = 0;
  uint64_t flush_mark = 0;
  uint64_t id = 0;  // creation order, for stable printing and topological ties

  // Autograd (frontend/autograd): a node recorded while its thread keeps graphs (lf::KeepGraph,
  // lf::value_and_grad) keeps, once realized, the op, inputs and attributes it was computed from,
  // so that a gradient can still be taken through a value a sync point computed. Without it a
  // realized node is a leaf and the graph behind it is freed.
  struct History {
    Op op;
    Inputs inputs;
    Attrs attrs;
  };
  std::unique_ptr<History> history;
  bool keep_history = false;
  // The public op the user called that recorded it, where that was a composite (pad's arange and
  // remap, softmax's max and exp: frontend's UserOp scope); null for an op the user called itself
  // or a node a rewrite made. The log names groups by it.
  const char* user_op = nullptr;
  // lf::detach's node: the same value, a constant to autograd (no gradient flows through it).
  bool detached = false;

  Node(Op op, DType dtype, Device device, Shape&& shape) : op(op), dtype(dtype), device(device), shape(std::move(shape)) {}
  Node(Op op, DType dtype, Device device, Shape&& shape, Inputs&& inputs, Attrs&& attrs)
      : op(op), dtype(dtype), device(device), shape(std::move(shape)), inputs(std::move(inputs)),
        attrs(std::move(attrs)) {}
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();  // frees a dropped chain iteratively: a 100,000-node chain must not recurse

  bool realized() const { return storage != nullptr; }
  int64_t numel() const { return shape_numel(shape); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};

NodePtr make_node(Op op, DType dtype, Device device, Shape&& shape, Inputs&& inputs, Attrs&& attrs = {});
// A node with no inputs yet (push them onto node->inputs) and default attributes: the recording
// fast path, which builds no temporaries.
NodePtr make_node(Op op, DType dtype, Device device, Shape&& shape);

// "mul#12": a node as logs name it (its op and creation number, unique in the process).
std::string node_name(const Node& n);
// Whether `n` is a pending node (not realized) of op `op`: what the graph rewrites match.
inline bool pending(const Node* n, Op op) { return !n->realized() && n->op == op; }
// A copy of `like` in a shape buffer a dead node of this thread left (no allocation when one is
// free); nodes recycle their shapes when they die.
Shape recycled_shape(const Shape& like);
NodePtr make_buffer(std::shared_ptr<rt::Storage> storage, DType dtype, Shape shape, Layout layout);

// Node -> int for the nodes of one flush: open addressing in one array (no allocation per entry,
// unlike std::unordered_map; flushes on the hot path have a handful of nodes).
class NodeIndex {
 public:
  explicit NodeIndex(size_t expected = 16) { reset(expected); }
  void reset(size_t expected);  // empties it, with room for `expected` entries before it grows
  int find(const Node* n) const;  // -1 when absent
  bool insert(const Node* n, int value);  // false (and no change) when present
  size_t size() const { return size_; }

 private:
  size_t slot_of(const Node* n) const;
  void grow();
  std::vector<std::pair<const Node*, int>> slots_;
  size_t size_ = 0;
};

// Pending nodes reachable from `roots` (realized nodes are leaves), inputs before users. Iterative,
// so a 100,000-node chain does not overflow the stack.
std::vector<Node*> topo_order(const std::vector<Node*>& roots);
// The same into *order (emptied first; it keeps its memory), for the flush in progress, whose
// caller holds the flush lock (one flush at a time in the process): visited nodes are marked
// (Node::flush_mark) instead of kept in a hash set.
void flush_order(const std::vector<Node*>& roots, std::vector<Node*>* order);
// A fresh Node::flush_mark value.
uint64_t next_flush_mark();

// Numbers are parameters of a flush plan (exec/flush_plan.h): a pending full's value, an arange's
// start and step, rand's and randn's seed and counter. A replay patches a number into the launch
// parameters it became, so it may change from one replay to the next, but only where every use of
// it in the recorded flush was such a parameter. Every place that consumes a number notes the use
// here while a plan is being recorded (NumberUses, on the flush's thread): the lowering of a
// launch parameter (which the recorder then claims), and any decision or value taken from it
// elsewhere (a rewrite that reads an arange's start, a library call that bakes a constant in, the
// host's evaluation), which makes the plan require the number to repeat.
void note_number_use(const Node& n);
// The flush's noted uses, while a NumberUses scope is open on this thread: each use as the node's
// flush numbering at the time (Node::flush_mark, flush_pos; the node itself may be freed before
// the flush ends).
class NumberUses {
 public:
  struct Use {
    uint64_t mark;
    int32_t pos;
  };
  NumberUses();
  ~NumberUses();
  NumberUses(const NumberUses&) = delete;
  NumberUses& operator=(const NumberUses&) = delete;
  const std::vector<Use>& uses() const { return uses_; }

 private:
  friend void note_number_use(const Node& n);
  std::vector<Use> uses_;
  NumberUses* outer_;
};

// One line per node, for logs and test failure messages.
std::string describe(const Node& node);

}  // namespace lf::ir
