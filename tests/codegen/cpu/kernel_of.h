// The kernel IR the CPU backend gets for the first group computing a pending tensor (for tests
// of which kernels take a path; logsumexp of a 1-D tensor has a copy after it).
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "codegen/fuse/fuser.h"
#include "codegen/fuse/lower.h"
#include "lazyfuse/lazyfuse.h"

namespace lf::test {

inline kir::Kernel kernel_of(const Tensor& t) {
  std::vector<ir::Node*> roots{t.node().get()};
  auto order = ir::topo_order(roots);
  auto p = fuse::partition(order, [&](const ir::Node& n) { return &n == roots[0]; }, true);
  EXPECT_GE(p.groups.size(), 1u);
  return lower::lower_group(p.groups[0], p, 0, Device::cpu()).kernel;
}

}  // namespace lf::test
