#include "codegen/node.h"

#include <atomic>
#include <sstream>
#include <unordered_set>

namespace lf::ir {

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

bool is_contiguous(const Shape& shape, const Layout& layout) {
  int64_t expected = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && layout.strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

namespace {
struct Graveyard {
  std::vector<NodePtr> queue;
  bool draining = false;
};
}  // namespace

Node::~Node() {
  if (inputs.empty()) return;  // leaves (buffers, generators, realized nodes) free nothing more
  // Inputs that die with this node are queued and freed by the outermost destructor in a loop,
  // instead of each destructor recursing into its inputs.
  thread_local Graveyard g;
  for (NodePtr& in : inputs) g.queue.push_back(std::move(in));
  inputs.clear();
  if (g.draining) return;
  g.draining = true;
  while (!g.queue.empty()) {
    NodePtr n = std::move(g.queue.back());
    g.queue.pop_back();
    n.reset();  // may queue n's own inputs
  }
  g.draining = false;
}

NodePtr make_node(Op op, DType dtype, Device device, Shape shape, std::vector<NodePtr> inputs, Attrs attrs) {
  static std::atomic<uint64_t> next_id{1};
  auto n = std::make_shared<Node>();
  n->op = op;
  n->dtype = dtype;
  n->device = device;
  n->shape = std::move(shape);
  n->inputs = std::move(inputs);
  n->attrs = std::move(attrs);
  n->id = next_id.fetch_add(1, std::memory_order_relaxed);
  return n;
}

NodePtr make_buffer(std::shared_ptr<rt::Storage> storage, DType dtype, Shape shape, Layout layout) {
  Device device = storage->device();
  NodePtr n = make_node(Op::Buffer, dtype, device, std::move(shape), {});
  n->storage = std::move(storage);
  n->layout = std::move(layout);
  return n;
}

std::vector<Node*> topo_order(const std::vector<Node*>& roots) {
  std::vector<Node*> order;
  std::unordered_set<Node*> visited;
  std::vector<std::pair<Node*, size_t>> stack;  // node, next input to visit
  for (Node* root : roots) {
    if (root->realized() || !visited.insert(root).second) continue;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs.size()) {
        Node* in = node->inputs[next++].get();
        if (!in->realized() && visited.insert(in).second) stack.emplace_back(in, 0);
      } else {
        order.push_back(node);
        stack.pop_back();
      }
    }
  }
  return order;
}

std::string describe(const Node& n) {
  std::ostringstream os;
  os << '%' << n.id << " = " << op_name(n.op) << '(';
  for (size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", " : "") << '%' << n.inputs[i]->id;
  os << ") : " << dtype_name(n.dtype) << shape_str(n.shape);
  return os.str();
}

}  // namespace lf::ir
