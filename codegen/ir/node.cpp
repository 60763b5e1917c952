#include "codegen/ir/node.h"

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

Shape channels_last_strides(const Shape& shape) {
  if (shape.size() != 4) return contiguous_strides(shape);
  return {shape[1] * shape[2] * shape[3], 1, shape[3] * shape[1], shape[1]};
}

std::string node_name(const Node& n) { return std::string(op_name(n.op)) + "#" + std::to_string(n.id); }

bool is_channels_last(const Shape& shape, const Layout& layout) {
  if (shape.size() != 4 || shape[1] <= 1 || shape[2] * shape[3] <= 1) return false;
  Shape want = channels_last_strides(shape);
  for (size_t d = 0; d < 4; ++d)
    if (shape[d] != 1 && layout.strides[d] != want[d]) return false;
  return true;
}

namespace {

// Node memory and shape buffers come from per-thread free lists: a flush frees thousands of nodes
// at once, more than malloc's per-thread cache keeps, and the next trace would take them back
// from malloc's slow path one by one. Memory freed on another thread goes to that thread's lists.
// Sanitizer builds use plain new/delete so that a use after free is still caught.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kPoolCap = 0;
#else
constexpr size_t kPoolCap = size_t{1} << 15;
#endif
constexpr size_t kShapeCapacity = 8;  // recycled shape buffers hold this many dims

struct FreeLists {
  std::vector<void*> blocks;  // node blocks (a node and its reference counts), all of block_size
  size_t block_size = 0;
  std::vector<Shape> shapes;  // empty vectors with kShapeCapacity dims of storage
  ~FreeLists();
};
thread_local bool t_free_lists_gone = false;  // set once the thread's lists are destroyed

FreeLists::~FreeLists() {
  for (void* p : blocks) ::operator delete(p);
  t_free_lists_gone = true;
}

FreeLists* free_lists() {
  if (t_free_lists_gone) return nullptr;
  thread_local FreeLists lists;
  return &lists;
}

void recycle_shape(Shape& shape) {
  if (shape.capacity() != kShapeCapacity) return;
  FreeLists* f = free_lists();
  if (!f || f->shapes.size() >= kPoolCap) return;
  shape.clear();
  f->shapes.push_back(std::move(shape));
}

struct Graveyard {
  std::vector<NodePtr> queue;
  bool draining = false;
};

}  // namespace

Shape recycled_shape(const Shape& like) {
  if (like.size() <= kShapeCapacity) {
    FreeLists* f = free_lists();
    if (f && !f->shapes.empty()) {
      Shape s = std::move(f->shapes.back());
      f->shapes.pop_back();
      s.resize(like.size());  // within the capacity; a loop, not a memmove call, for a few dims
      for (size_t i = 0; i < like.size(); ++i) s[i] = like[i];
      return s;
    }
    if (kPoolCap > 0) {
      Shape s;
      s.reserve(kShapeCapacity);
      s.assign(like.begin(), like.end());
      return s;
    }
  }
  return like;
}

Node::~Node() {
  recycle_shape(shape);
  if (history) inputs = std::move(history->inputs);  // freed by the same loop as a pending node's
  if (inputs.empty()) return;  // leaves (buffers, generators, realized nodes) free nothing more
  // Inputs that die with this node are queued and freed by the outermost destructor in a loop,
  // instead of each destructor recursing into its inputs.
  thread_local Graveyard g;
  for (NodePtr& in : inputs) {
    // An input someone else still holds does not die here: drop it now, no queueing. (If the other
    // holder lets go at this very moment on another thread, this reset frees the input one level
    // down, which queues its own inputs: still no deep recursion.)
    if (in.use_count() > 1)
      in.reset();
    else
      g.queue.push_back(std::move(in));
  }
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

namespace {

// The allocator std::allocate_shared uses for a node and its reference counts (one block).
template <typename T>
struct NodeAllocator {
  using value_type = T;
  NodeAllocator() = default;
  template <typename U>
  NodeAllocator(const NodeAllocator<U>&) {}

  T* allocate(size_t n) {
    FreeLists* f = n == 1 ? free_lists() : nullptr;
    if (f && !f->blocks.empty() && f->block_size == sizeof(T)) {
      void* p = f->blocks.back();
      f->blocks.pop_back();
      return static_cast<T*>(p);
    }
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
    FreeLists* f = n == 1 ? free_lists() : nullptr;
    if (f) {
      if (f->block_size == 0) f->block_size = sizeof(T);
      if (f->block_size == sizeof(T) && f->blocks.size() < kPoolCap) {
        f->blocks.push_back(p);
        return;
      }
    }
    ::operator delete(p);
  }
  template <typename U>
  bool operator==(const NodeAllocator<U>&) const { return true; }
};

// Ids in creation order per thread, taken from the shared counter 4096 at a time.
uint64_t next_node_id() {
  static std::atomic<uint64_t> next_block{0};
  constexpr uint64_t kBlock = 4096;
  thread_local uint64_t next = 0, end = 0;
  if (next == end) {
    next = next_block.fetch_add(kBlock, std::memory_order_relaxed) + 1;
    end = next + kBlock;
  }
  return next++;
}

}  // namespace

NodePtr make_node(Op op, DType dtype, Device device, Shape&& shape) {
  auto n = std::allocate_shared<Node>(NodeAllocator<Node>(), op, dtype, device, std::move(shape));
  n->id = next_node_id();
  return n;
}

NodePtr make_node(Op op, DType dtype, Device device, Shape&& shape, Inputs&& inputs, Attrs&& attrs) {
  auto n = std::allocate_shared<Node>(NodeAllocator<Node>(), op, dtype, device, std::move(shape), std::move(inputs),
                                     std::move(attrs));
  n->id = next_node_id();
  return n;
}

NodePtr make_buffer(std::shared_ptr<rt::Storage> storage, DType dtype, Shape shape, Layout layout) {
  Device device = storage->device();
  NodePtr n = make_node(Op::Buffer, dtype, device, std::move(shape), {});
  n->storage = std::move(storage);
  n->layout = std::move(layout);
  return n;
}

void NodeIndex::reset(size_t expected) {
  size_t cap = 16;
  while (cap < 2 * expected) cap *= 2;
  slots_.assign(cap, {nullptr, 0});
  size_ = 0;
}

size_t NodeIndex::slot_of(const Node* n) const {
  size_t mask = slots_.size() - 1;
  size_t i = static_cast<size_t>((reinterpret_cast<uintptr_t>(n) >> 4) * 0x9e3779b97f4a7c15ull >> 20) & mask;
  while (slots_[i].first != nullptr && slots_[i].first != n) i = (i + 1) & mask;
  return i;
}

int NodeIndex::find(const Node* n) const {
  const auto& s = slots_[slot_of(n)];
  return s.first == n ? s.second : -1;
}

bool NodeIndex::insert(const Node* n, int value) {
  if (2 * (size_ + 1) > slots_.size()) grow();
  auto& s = slots_[slot_of(n)];
  if (s.first == n) return false;
  s = {n, value};
  ++size_;
  return true;
}

void NodeIndex::grow() {
  std::vector<std::pair<const Node*, int>> old = std::move(slots_);
  slots_.assign(old.size() * 2, {nullptr, 0});
  for (const auto& s : old)
    if (s.first) slots_[slot_of(s.first)] = s;
}

namespace {

// Appends the pending nodes reachable from `roots` to `order`, inputs before users: a depth-first
// walk with an explicit stack (a 100,000-node chain must not recurse). `first_visit(n)` says
// whether n is seen for the first time, and remembers it.
template <typename FirstVisit>
void post_order(const std::vector<Node*>& roots, std::vector<Node*>& order, FirstVisit first_visit) {
  thread_local std::vector<std::pair<Node*, size_t>> stack;  // node, next input to visit; keeps its memory
  stack.clear();
  for (Node* root : roots) {
    if (root->realized() || !first_visit(root)) continue;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs.size()) {
        Node* in = node->inputs[next++].get();
        if (!in->realized() && first_visit(in)) stack.emplace_back(in, 0);
      } else {
        order.push_back(node);
        stack.pop_back();
      }
    }
  }
}

}  // namespace

std::vector<Node*> topo_order(const std::vector<Node*>& roots) {
  std::vector<Node*> order;
  order.reserve(32);
  // The visited set keeps its memory from flush to flush (a flush of a few nodes spent a tenth of
  // its host time in malloc and free here).
  thread_local NodeIndex visited;
  visited.reset(32);
  post_order(roots, order, [](Node* n) { return visited.insert(n, 0); });
  return order;
}

uint64_t next_flush_mark() {
  static std::atomic<uint64_t> marks{0};
  return ++marks;
}

void flush_order(const std::vector<Node*>& roots, std::vector<Node*>* order) {
  order->clear();
  post_order(roots, *order, [mark = next_flush_mark()](Node* n) {
    if (n->flush_mark == mark) return false;
    n->flush_mark = mark;
    return true;
  });
}

std::string describe(const Node& n) {
  std::ostringstream os;
  os << '%' << n.id << " = " << op_name(n.op) << '(';
  for (size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", " : "") << '%' << n.inputs[i]->id;
  os << ") : " << dtype_name(n.dtype) << shape_str(n.shape);
  return os.str();
}

namespace {
thread_local NumberUses* t_number_uses = nullptr;
}  // namespace

NumberUses::NumberUses() : outer_(t_number_uses) { t_number_uses = this; }
NumberUses::~NumberUses() { t_number_uses = outer_; }

void note_number_use(const Node& n) {
  if (t_number_uses != nullptr) t_number_uses->uses_.push_back({n.flush_mark, n.flush_pos});
}

}  // namespace lf::ir
