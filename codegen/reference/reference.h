// The reference executor: runs trace nodes one op at a time in plain C++ on the CPU, in each op's
// dtype (float16/bfloat16 computed in float32 and rounded per op). It is the oracle every backend
// is tested against, so it favours obviousness over speed. It is also LAZYFUSE_FUSION=0's path
// until a backend compiles single ops.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "codegen/ir/node.h"

namespace lf::ir {

// A computed value: a strided view of host storage.
struct Value {
  std::shared_ptr<rt::Storage> storage;
  DType dtype;
  Shape shape;
  Layout layout;
};

Value value_of(const Node& realized);

// Computes one node from the values of its inputs. Views share the input's storage; every other op
// returns a fresh contiguous value.
Value reference_op(const Node& node, const std::vector<Value>& inputs);

// Computes the nodes of `order` (inputs before users, as topo_order gives) and calls `emit` for
// every node that `wanted` selects, with its value. A value is freed after its last use.
void run_reference(const std::vector<Node*>& order, const std::function<bool(const Node&)>& wanted,
                   const std::function<void(Node&, Value)>& emit);

// The value of `root` computed by the reference executor, without changing any node.
Value reference_eval(Node* root);

// A contiguous copy of `v` converted to `dtype` (same device, host only).
Value to_contiguous(const Value& v, DType dtype);

}  // namespace lf::ir
