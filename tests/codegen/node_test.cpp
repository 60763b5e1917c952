#include "codegen/node.h"

#include <gtest/gtest.h>

using namespace lf;

TEST(Node, ContiguousStrides) {
  EXPECT_EQ(ir::contiguous_strides({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(ir::contiguous_strides({}), Shape{});
}
