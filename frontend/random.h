// The counter-based random leaves (creation.cpp), for the creation ops built on them.
#pragma once

#include "codegen/ir/op.h"
#include "lazyfuse/tensor.h"

namespace lf::detail {

// A rand or randn node of `shape` on `device`: the next numel numbers of the global stream, the
// same whatever is fused and on any device. `name` names errors (a floating dtype is needed).
Tensor random(ir::Op op, const char* name, Shape shape, DType dtype, Device device);

}  // namespace lf::detail
