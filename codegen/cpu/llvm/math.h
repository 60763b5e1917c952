// Inline float32 transcendentals for the LLVM emitter: range reduction and minimax polynomials in
// plain IR (no calls left after inlining), which the loop vectorizer turns into vector code.
// Accuracy is listed in the README ("Tolerances") and checked by tests/codegen/cpu/math_test.cpp; the
// coefficients come from tools/fit_math.py.
#pragma once

#include "codegen/ir/op.h"

namespace llvm {
class Function;
class IRBuilderBase;
class Value;
}  // namespace llvm

namespace lf::cpu {

// True when `op` has an inline implementation for float32 operands (other float types call libm,
// which the vectorizer maps to libmvec).
bool has_inline_math(ir::Op op);

// Emits, at b's insertion point, a call of the internal always-inline function that computes op(x)
// for a float32 x; the function is defined in the module at first use. Requires has_inline_math(op).
llvm::Value* emit_inline_math(llvm::IRBuilderBase& b, ir::Op op, llvm::Value* x);

// Marks `f` so that the inline math's approximate reciprocals (fdiv with the arcp and ninf flags)
// compile to the hardware estimate with no refinement: the IR refines it itself, with one cubic
// Newton step. Exact divisions (no such flags) are not affected.
void set_reciprocal_estimates(llvm::Function& f);

}  // namespace lf::cpu
