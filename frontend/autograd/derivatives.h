// The derivative of each row of the op table (codegen/ir/ops.inc), as ops recorded in the trace.
#pragma once

#include <vector>

#include "codegen/ir/node.h"
#include "lazyfuse/tensor.h"

namespace lf::autograd {

// One node as it was recorded (a pending node's own fields, or a realized node's history), its
// inputs and value as tensors, and the cotangent of its value. `needed[i]`: whether input i wants
// a gradient (the others may be left empty, which saves recording work nobody reads).
struct VjpArgs {
  ir::Op op;
  const ir::Attrs& attrs;
  std::vector<Tensor> in;
  Tensor y;
  Tensor g;
  std::vector<bool> needed;
};

// The cotangent of each input of the node, one per input: an empty Tensor where no gradient flows
// (bool and integer inputs, indices), else a tensor of the input's shape.
std::vector<Tensor> vjp(const VjpArgs& a);

// The linear-algebra row's derivatives (frontend/autograd/linalg.cpp).
std::vector<Tensor> vjp_linalg(const VjpArgs& a);
// The FFT row's derivative (frontend/autograd/fft.cpp).
std::vector<Tensor> vjp_fft(const VjpArgs& a);

}  // namespace lf::autograd
