// CUDA C building blocks of generated kernels (ops.cpp: the CUDA backend's op table).
#pragma once

#include <string>
#include <vector>

#include "codegen/ir/op.h"
#include "lazyfuse/types.h"

namespace lf::cuda {

// Shared by every kernel: 16-bit float conversions (the same rounding as the CPU backend),
// NaN-propagating max/min, and the counter-based generator of codegen/ir/random.h.
extern const char* const kPrelude;

const char* ctype(DType d);  // the compute type ("float" for the 16-bit floats)
const char* stype(DType d);  // the storage type
std::string lit(double v, DType d);  // a literal of d's compute type

// fname(x) in d's precision (fname "f" in float32).
std::string math1(const char* fname, const std::string& x, DType d);
std::string math2(const char* fname, const std::string& x, const std::string& y, DType d);

// op over args (computed in dt, the operands' dtype; 16-bit floats as float32). Where and Cast
// are the emitter's own.
std::string elementwise(ir::Op op, const std::vector<std::string>& a, DType dt);

}  // namespace lf::cuda
