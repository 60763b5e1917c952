// The LLVM IR of elementwise ops (ops.cpp: the CPU backend's op table), for the emitter.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <string>
#include <vector>

#include "codegen/ir/op.h"
#include "lazyfuse/types.h"

namespace lf::cpu {

class OpBuilder {
 public:
  explicit OpBuilder(llvm::IRBuilder<>& b) : b_(b) {}

  // op over args (computed in dt, the operands' dtype; 16-bit floats as float32). Where and Cast
  // are the emitter's own.
  llvm::Value* elementwise(ir::Op op, const std::vector<llvm::Value*>& args, DType dt);
  // A libm function, declared pure so the vectorizer may replace it with a libmvec variant.
  llvm::Value* call(const std::string& name, std::vector<llvm::Value*> args);

 private:
  llvm::Value* libm(const char* name, llvm::Value* x);
  llvm::Value* math(ir::Op op, const char* name, llvm::Value* x);
  llvm::Value* libm2(const char* name, llvm::Value* x, llvm::Value* y);
  llvm::Value* ipow(llvm::Value* a, llvm::Value* e);
  llvm::Value* divide(ir::Op op, llvm::Value* a, llvm::Value* b, bool fl);  // remainder, fmod, floor_divide
  llvm::Value* shift(ir::Op op, llvm::Value* a, llvm::Value* b);
  // v limited to [lo, hi] (floats; NaN stays NaN).
  llvm::Value* clamp(llvm::Value* v, double lo, double hi) {
    llvm::Value* low = b_.CreateSelect(b_.CreateFCmpOLT(v, fc(v, lo)), fc(v, lo), v);
    return b_.CreateSelect(b_.CreateFCmpOGT(low, fc(v, hi)), fc(v, hi), low);
  }
  llvm::Value* unary_intrinsic(llvm::Intrinsic::ID id, llvm::Value* x) { return b_.CreateUnaryIntrinsic(id, x); }
  llvm::Value* sqrt(llvm::Value* x) { return unary_intrinsic(llvm::Intrinsic::sqrt, x); }
  llvm::Value* fc(llvm::Value* like, double v) { return llvm::ConstantFP::get(like->getType(), v); }
  llvm::Value* ic(llvm::Value* like, int64_t v) {
    return llvm::ConstantInt::get(like->getType(), static_cast<uint64_t>(v), true);
  }

  llvm::IRBuilder<>& b_;
};

}  // namespace lf::cpu
