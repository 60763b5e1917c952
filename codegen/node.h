// The trace IR: a DAG of nodes, each an op over input nodes with a shape and a dtype.
// A node is pending until realized; then it holds a (possibly strided) view of storage and drops
// its inputs, so the graph behind a computed value is freed.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/op.h"
#include "lazyfuse/types.h"
#include "runtime/storage.h"

namespace lf::ir {

struct Node;
using NodePtr = std::shared_ptr<Node>;

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

// Strides and offset in elements; strides of size-1 dims are irrelevant.
struct Layout {
  Shape strides;
  int64_t offset = 0;
};

Shape contiguous_strides(const Shape& shape);
bool is_contiguous(const Shape& shape, const Layout& layout);

struct Node {
  Op op;
  DType dtype;
  Device device;
  Shape shape;
  std::vector<NodePtr> inputs;
  Attrs attrs;

  // Set when realized (op becomes Buffer; inputs are released).
  std::shared_ptr<rt::Storage> storage;
  Layout layout;

  // Handles held by users (lf::Tensor); a pending node with none is a dead intermediate, never
  // materialized on its own. Nodes also hold their inputs, which does not count here.
  std::atomic<int32_t> user_refs{0};
  uint64_t id = 0;  // creation order, for stable printing and topological ties

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();  // frees a dropped chain iteratively: a 100,000-node chain must not recurse

  bool realized() const { return storage != nullptr; }
  int64_t numel() const { return shape_numel(shape); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};

NodePtr make_node(Op op, DType dtype, Device device, Shape shape, std::vector<NodePtr> inputs, Attrs attrs = {});
NodePtr make_buffer(std::shared_ptr<rt::Storage> storage, DType dtype, Shape shape, Layout layout);

// Pending nodes reachable from `roots` (realized nodes are leaves), inputs before users. Iterative,
// so a 100,000-node chain does not overflow the stack.
std::vector<Node*> topo_order(const std::vector<Node*>& roots);

// One line per node, for logs and test failure messages.
std::string describe(const Node& node);

}  // namespace lf::ir
