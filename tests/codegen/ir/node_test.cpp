#include "codegen/ir/node.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

using namespace lf;

TEST(Node, ContiguousStrides) {
  EXPECT_EQ(ir::contiguous_strides({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(ir::contiguous_strides({}), Shape{});
}

TEST(Node, InputsInlineAndOnTheHeap) {
  std::vector<ir::NodePtr> leaves;
  for (int i = 0; i < 6; ++i) leaves.push_back(ir::make_node(ir::Op::Full, DType::Float32, Device::cpu(), {2}, {}));
  ir::Inputs in;
  for (size_t i = 0; i < leaves.size(); ++i) {
    in.push_back(leaves[i]);
    ASSERT_EQ(in.size(), i + 1);
    for (size_t j = 0; j <= i; ++j) EXPECT_EQ(in[j], leaves[j]) << "after " << i + 1 << " inputs, input " << j;
  }
  EXPECT_EQ(leaves[0].use_count(), 2);
  ir::Inputs copy = in;
  EXPECT_EQ(leaves[0].use_count(), 3);
  ir::Inputs moved = std::move(copy);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(moved.size(), 6u);
  EXPECT_EQ(leaves[5].use_count(), 3);
  moved.clear();
  in.clear();
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(leaves[5].use_count(), 1);
  size_t n = 0;
  ir::Inputs two{leaves[0], leaves[1]};
  for (const ir::NodePtr& p : two) EXPECT_EQ(p, leaves[n++]);
  EXPECT_EQ(n, 2u);
}

TEST(Node, RecycledShapesCopyTheirModel) {
  for (int round = 0; round < 3; ++round) {
    // Shapes of dead nodes come back with other contents: each copy must equal its model exactly.
    std::vector<ir::NodePtr> nodes;
    for (int r = 0; r <= 9; ++r) {
      Shape like(static_cast<size_t>(r));
      for (int d = 0; d < r; ++d) like[static_cast<size_t>(d)] = 7 * round + d + 1;
      Shape s = ir::recycled_shape(like);
      EXPECT_EQ(s, like) << "rank " << r;
      nodes.push_back(ir::make_node(ir::Op::Full, DType::Float32, Device::cpu(), std::move(s), {}));
    }
  }
}

TEST(Node, ALongChainFreesWithoutRecursion) {
  ir::NodePtr n = ir::make_node(ir::Op::Full, DType::Float32, Device::cpu(), {1}, {});
  std::weak_ptr<ir::Node> first = n;
  for (int i = 0; i < 200000; ++i)
    n = ir::make_node(ir::Op::Neg, DType::Float32, Device::cpu(), {1}, {n});
  n.reset();
  EXPECT_TRUE(first.expired());
}

// flush_order marks nodes instead of keeping a visited set: it must give topo_order's order,
// flush after flush, whatever marks earlier flushes left (diamonds, shared inputs, realized
// leaves, several roots).
TEST(Node, FlushOrderIsTopoOrderFlushAfterFlush) {
  auto leaf = ir::make_buffer(rt::Storage::allocate(Device::cpu(), 16), DType::Float32, {4}, {{1}, 0});
  auto node = [](ir::Op op, std::initializer_list<ir::NodePtr> in) {
    return ir::make_node(op, DType::Float32, Device::cpu(), {4}, ir::Inputs(in));
  };
  ir::NodePtr a = node(ir::Op::Exp, {leaf});
  ir::NodePtr b = node(ir::Op::Neg, {a});
  ir::NodePtr c = node(ir::Op::Add, {a, b});     // a diamond
  ir::NodePtr d = node(ir::Op::Mul, {c, leaf});  // the leaf again
  ir::NodePtr e = node(ir::Op::Add, {b, b});     // one input twice
  std::vector<std::vector<ir::Node*>> root_sets = {
      {d.get()}, {e.get(), d.get()}, {b.get()}, {d.get(), e.get(), a.get()}, {leaf.get(), c.get()}};
  std::vector<ir::Node*> order;
  for (int round = 0; round < 2; ++round) {
    for (const auto& roots : root_sets) {
      ir::flush_order(roots, &order);
      EXPECT_EQ(order, ir::topo_order(roots)) << "round " << round << ", " << roots.size() << " roots";
    }
  }
  ir::flush_order({d.get()}, &order);
  EXPECT_EQ(order.size(), 4u);  // a, b, c, d: each once, the leaf never
}
