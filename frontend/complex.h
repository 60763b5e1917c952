// The frontend's complex numbers (lazyfuse/complex.h): a complex tensor is a handle node
// (ir::Op::ComplexView) over the real tensor of its (re, im) pairs, and every op on complex
// values is recorded as ops on those pairs. The op functions hand complex operands here.
#pragma once

#include <vector>

#include "codegen/ir/node.h"
#include "lazyfuse/tensor.h"

namespace lf::detail {

// The real tensor [..., 2] of a complex tensor's values; of a real tensor, its values paired with
// zeros in `part` (the real dtype of the complex result).
Tensor pairs(const Tensor& x, DType part);
Tensor pairs(const Tensor& z);  // z complex
// The complex tensor of dtype `d` whose values are the pairs `r` ([..., 2] of d's real dtype).
Tensor wrap_complex(const Tensor& r, DType d);

// Whether recording `node` involves a complex value (its dtype or an input's).
inline bool involves_complex(const ir::Node& node) {
  if (is_complex(node.dtype)) return true;
  for (const ir::NodePtr& in : node.inputs)
    if (is_complex(in->dtype)) return true;
  return false;
}
// record_node's path for such a node: the structural ops (views, copies, cat, where, gather,
// remap: what every view, flip, roll, pad, index_select and stack is made of) and `full` are
// recorded on the pairs; any other op is an lf::Error naming it.
Tensor record_complex(ir::NodePtr node);

// The elementwise ops, reductions, matmul and casts the op functions route here when an operand
// or the result is complex. `dims` are normalized.
Tensor complex_unary(ir::Op op, const Tensor& x);
Tensor complex_binary(ir::Op op, const Tensor& a, const Tensor& b);
Tensor complex_binary(ir::Op op, const Tensor& a, Scalar s, bool scalar_first);
Tensor complex_cast(const Tensor& x, DType dtype);
Tensor complex_reduce(ir::Op op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim);
Tensor complex_matmul(const Tensor& a, const Tensor& b);

}  // namespace lf::detail
