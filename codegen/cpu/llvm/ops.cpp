// The CPU backend's op table: the LLVM IR of every elementwise op, one case each. The switch over
// the op enum has no default (codegen/ir/not_elementwise_cases.inc lists the other ops), so an
// op missing here is a compile error.
#include "codegen/cpu/llvm/ops.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <cmath>
#include <string>

#include "codegen/cpu/llvm/math.h"

namespace lf::cpu {

using llvm::Value;
using Op = ir::Op;

// A libm function, declared pure so the vectorizer may replace it with a libmvec variant.
Value* OpBuilder::call(const std::string& name, std::vector<Value*> args) {
  std::vector<llvm::Type*> types;
  for (Value* a : args) types.push_back(a->getType());
  auto* fty = llvm::FunctionType::get(args[0]->getType(), types, false);
  llvm::FunctionCallee f = b_.GetInsertBlock()->getModule()->getOrInsertFunction(name, fty);
  if (auto* fn = llvm::dyn_cast<llvm::Function>(f.getCallee())) {
    fn->setDoesNotThrow();
    fn->setDoesNotAccessMemory();
    fn->setWillReturn();
  }
  return b_.CreateCall(f, args);
}
Value* OpBuilder::libm(const char* name, Value* x) {
  bool f32 = x->getType()->isFloatTy();
  return call(f32 ? std::string(name) + "f" : std::string(name), {x});
}
// op(x) inline where llvm_math.cpp has it for x's type (float32), else the libm function `name`.
Value* OpBuilder::math(Op op, const char* name, Value* x) {
  if (x->getType()->isFloatTy() && has_inline_math(op)) return emit_inline_math(b_, op, x);
  return libm(name, x);
}
Value* OpBuilder::libm2(const char* name, Value* x, Value* y) {
  bool f32 = x->getType()->isFloatTy();
  return call(f32 ? std::string(name) + "f" : std::string(name), {x, y});
}

// Integer power by squaring over every bit of the exponent; negative exponents give 0 unless
// the base is 1 or -1 (reference/math.h).
Value* OpBuilder::ipow(Value* a, Value* e) {
  unsigned bits = a->getType()->getIntegerBitWidth();
  Value* result = ic(a, 1);
  Value* base = a;
  Value* rest = e;
  for (unsigned i = 0; i < bits; ++i) {
    Value* odd = b_.CreateICmpNE(b_.CreateAnd(rest, ic(a, 1)), ic(a, 0));
    result = b_.CreateSelect(odd, b_.CreateMul(result, base), result);
    base = b_.CreateMul(base, base);
    rest = b_.CreateLShr(rest, 1);
  }
  Value* neg = b_.CreateICmpSLT(e, ic(a, 0));
  Value* minus_one = b_.CreateSelect(b_.CreateICmpNE(b_.CreateAnd(e, ic(a, 1)), ic(a, 0)), ic(a, -1), ic(a, 1));
  Value* neg_result = b_.CreateSelect(b_.CreateICmpEQ(a, ic(a, 1)), ic(a, 1),
                                      b_.CreateSelect(b_.CreateICmpEQ(a, ic(a, -1)), minus_one, ic(a, 0)));
  return b_.CreateSelect(neg, neg_result, result);
}

// remainder, fmod and floor_divide with reference/math.h's semantics. Integers divide by a safe
// divisor (1 where b is 0 or -1: sdiv by 0 and INT_MIN / -1 are undefined in LLVM IR) and then
// select the defined results: 0 for b == 0, -a (wrapping) for floor_divide by -1.
Value* OpBuilder::divide(Op op, Value* a, Value* b, bool fl) {
  if (fl) {
    Value* mod = b_.CreateFRem(a, b);  // C's fmod
    if (op == Op::Fmod) return mod;
    Value* fix = b_.CreateAnd(b_.CreateFCmpUNE(mod, fc(a, 0.0)),
                              b_.CreateXor(b_.CreateFCmpOLT(b, fc(a, 0.0)), b_.CreateFCmpOLT(mod, fc(a, 0.0))));
    if (op == Op::Remainder) return b_.CreateSelect(fix, b_.CreateFAdd(mod, b), mod);
    // PyTorch's div_floor_floating.
    Value* quot = b_.CreateFDiv(a, b);
    Value* div = b_.CreateFDiv(b_.CreateFSub(a, mod), b);
    div = b_.CreateSelect(fix, b_.CreateFSub(div, fc(a, 1.0)), div);
    Value* fl_div = unary_intrinsic(llvm::Intrinsic::floor, div);
    fl_div = b_.CreateSelect(b_.CreateFCmpOGT(b_.CreateFSub(div, fl_div), fc(a, 0.5)), b_.CreateFAdd(fl_div, fc(a, 1.0)),
                             fl_div);
    Value* zero = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, fc(a, 0.0), quot);
    Value* r = b_.CreateSelect(b_.CreateFCmpOEQ(div, fc(a, 0.0)), zero, fl_div);
    return b_.CreateSelect(b_.CreateFCmpOEQ(b, fc(a, 0.0)), quot, r);
  }
  Value* by_zero = b_.CreateICmpEQ(b, ic(a, 0));
  Value* by_minus_one = b_.CreateICmpEQ(b, ic(a, -1));
  Value* safe = b_.CreateSelect(b_.CreateOr(by_zero, by_minus_one), ic(a, 1), b);
  Value* r = b_.CreateSRem(a, safe);  // 0 where the divisor was replaced by 1
  if (op == Op::Fmod) return r;
  Value* fix = b_.CreateAnd(b_.CreateICmpNE(r, ic(a, 0)), b_.CreateICmpSLT(b_.CreateXor(r, b), ic(a, 0)));
  if (op == Op::Remainder) return b_.CreateSelect(fix, b_.CreateAdd(r, b), r);
  Value* q = b_.CreateSDiv(a, safe);
  q = b_.CreateSelect(by_minus_one, b_.CreateSub(ic(a, 0), a), b_.CreateSelect(by_zero, ic(a, 0), q));
  return b_.CreateSelect(fix, b_.CreateSub(q, ic(a, 1)), q);
}

// Shifts by a negative amount or by the width or more: 0 (left) or the sign fill (right). The
// amount is masked first so that no shift is out of range (poison in LLVM IR).
Value* OpBuilder::shift(Op op, Value* a, Value* b) {
  int64_t bits = static_cast<int64_t>(a->getType()->getScalarSizeInBits());
  Value* in_range = b_.CreateICmpULT(b, ic(a, bits));
  Value* amount = b_.CreateAnd(b, ic(a, bits - 1));
  if (op == Op::BitwiseLeftShift) return b_.CreateSelect(in_range, b_.CreateShl(a, amount), ic(a, 0));
  return b_.CreateSelect(in_range, b_.CreateAShr(a, amount), b_.CreateAShr(a, ic(a, bits - 1)));
}

Value* OpBuilder::elementwise(Op op, const std::vector<Value*>& a, DType dt) {
  Value* x = a[0];
  Value* y = a.size() > 1 ? a[1] : nullptr;
  bool fl = is_floating(dt);
  bool boolean = dt == DType::Bool;
  switch (op) {
    case Op::Neg: return fl ? b_.CreateFNeg(x) : b_.CreateSub(ic(x, 0), x);
    case Op::Abs:
      return fl ? unary_intrinsic(llvm::Intrinsic::fabs, x)
                : b_.CreateSelect(b_.CreateICmpSLT(x, ic(x, 0)), b_.CreateSub(ic(x, 0), x), x);
    case Op::Exp: return math(op, "exp", x);
    case Op::Exp2: return math(op, "exp2", x);
    case Op::Log: return math(op, "log", x);
    case Op::Log2: return math(op, "log2", x);
    case Op::Log1p: return libm("log1p", x);
    case Op::Expm1: return libm("expm1", x);
    case Op::Sqrt: return sqrt(x);
    case Op::Rsqrt: return b_.CreateFDiv(fc(x, 1.0), sqrt(x));
    case Op::Sin: return libm("sin", x);
    case Op::Cos: return libm("cos", x);
    case Op::Tan: return libm("tan", x);
    case Op::Asin: return libm("asin", x);
    case Op::Acos: return libm("acos", x);
    case Op::Atan: return libm("atan", x);
    case Op::Sinh: return libm("sinh", x);
    case Op::Cosh: return libm("cosh", x);
    case Op::Tanh: return math(op, "tanh", x);
    case Op::Erf: return math(op, "erf", x);
    case Op::Sigmoid:
    case Op::Silu: {
      if (x->getType()->isFloatTy()) return emit_inline_math(b_, op, x);
      Value* d = b_.CreateFAdd(fc(x, 1.0), libm("exp", b_.CreateFNeg(x)));
      return b_.CreateFDiv(op == Op::Sigmoid ? fc(x, 1.0) : x, d);
    }
    case Op::Gelu: {
      Value* e = math(Op::Erf, "erf", b_.CreateFMul(x, fc(x, 0.70710678118654752440)));
      return b_.CreateFMul(b_.CreateFMul(fc(x, 0.5), x), b_.CreateFAdd(fc(x, 1.0), e));
    }
    case Op::GeluTanh: {
      Value* x3 = b_.CreateFMul(b_.CreateFMul(b_.CreateFMul(fc(x, 0.044715), x), x), x);
      Value* t = math(Op::Tanh, "tanh", b_.CreateFMul(fc(x, 0.79788456080286535588), b_.CreateFAdd(x, x3)));
      return b_.CreateFMul(b_.CreateFMul(fc(x, 0.5), x), b_.CreateFAdd(fc(x, 1.0), t));
    }
    case Op::HardSwish: return b_.CreateFDiv(b_.CreateFMul(x, clamp(b_.CreateFAdd(x, fc(x, 3.0)), 0.0, 6.0)), fc(x, 6.0));
    case Op::Logit: return math(Op::Log, "log", b_.CreateFDiv(x, b_.CreateFSub(fc(x, 1.0), x)));
    case Op::Relu:
      return fl ? b_.CreateSelect(b_.CreateFCmpOLT(x, fc(x, 0.0)), fc(x, 0.0), x)
                : b_.CreateSelect(b_.CreateICmpSLT(x, ic(x, 0)), ic(x, 0), x);
    case Op::Floor: return unary_intrinsic(llvm::Intrinsic::floor, x);
    case Op::Ceil: return unary_intrinsic(llvm::Intrinsic::ceil, x);
    case Op::Round: return unary_intrinsic(llvm::Intrinsic::roundeven, x);
    case Op::Sign: {
      if (!fl) return b_.CreateSub(b_.CreateZExt(b_.CreateICmpSGT(x, ic(x, 0)), x->getType()),
                                   b_.CreateZExt(b_.CreateICmpSLT(x, ic(x, 0)), x->getType()));
      Value* s = b_.CreateFSub(b_.CreateUIToFP(b_.CreateFCmpOGT(x, fc(x, 0.0)), x->getType()),
                               b_.CreateUIToFP(b_.CreateFCmpOLT(x, fc(x, 0.0)), x->getType()));
      return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, s);
    }
    case Op::Reciprocal: return b_.CreateFDiv(fc(x, 1.0), x);
    case Op::Square: return fl ? b_.CreateFMul(x, x) : b_.CreateMul(x, x);
    case Op::IsNan: return b_.CreateFCmpUNO(x, x);
    case Op::IsInf: return b_.CreateFCmpOEQ(unary_intrinsic(llvm::Intrinsic::fabs, x), fc(x, INFINITY));
    case Op::IsFinite: return b_.CreateFCmpOLT(unary_intrinsic(llvm::Intrinsic::fabs, x), fc(x, INFINITY));
    case Op::LogicalNot: return b_.CreateNot(x);
    case Op::Copy: return x;
    case Op::Add: return fl ? b_.CreateFAdd(x, y) : b_.CreateAdd(x, y);
    case Op::Sub: return fl ? b_.CreateFSub(x, y) : b_.CreateSub(x, y);
    case Op::Mul: return fl ? b_.CreateFMul(x, y) : b_.CreateMul(x, y);
    case Op::Div: return b_.CreateFDiv(x, y);
    case Op::Pow: return fl ? libm2("pow", x, y) : ipow(x, y);
    // Floats: NaN if either is NaN, else the reference's a < b ? b : a (b < a ? b : a), written as
    // compares and selects. Not llvm.maximum / llvm.minimum: on float16 values computed in
    // float32, InstCombine narrows fptrunc(maximum(fpext a, fpext b)) to llvm.maximum.f16, which
    // LLVM 19's x86 backend lowers wrongly (maximum(+0, NaN) gave +0: the fuzzer's seed 778462,
    // 2026-11-28). The selects narrow to half compares and stay right.
    case Op::Maximum:
      if (!fl) return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, x, y);
      return b_.CreateSelect(b_.CreateFCmpUNO(x, y), llvm::ConstantFP::getNaN(x->getType()),
                             b_.CreateSelect(b_.CreateFCmpOLT(x, y), y, x));
    case Op::Minimum:
      if (!fl) return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, x, y);
      return b_.CreateSelect(b_.CreateFCmpUNO(x, y), llvm::ConstantFP::getNaN(x->getType()),
                             b_.CreateSelect(b_.CreateFCmpOLT(y, x), y, x));
    case Op::Atan2: return libm2("atan2", x, y);
    case Op::Eq: return fl ? b_.CreateFCmpOEQ(x, y) : b_.CreateICmpEQ(x, y);
    case Op::Ne: return fl ? b_.CreateFCmpUNE(x, y) : b_.CreateICmpNE(x, y);
    case Op::Lt: return fl ? b_.CreateFCmpOLT(x, y) : boolean ? b_.CreateICmpULT(x, y) : b_.CreateICmpSLT(x, y);
    case Op::Le: return fl ? b_.CreateFCmpOLE(x, y) : boolean ? b_.CreateICmpULE(x, y) : b_.CreateICmpSLE(x, y);
    case Op::Gt: return fl ? b_.CreateFCmpOGT(x, y) : boolean ? b_.CreateICmpUGT(x, y) : b_.CreateICmpSGT(x, y);
    case Op::Ge: return fl ? b_.CreateFCmpOGE(x, y) : boolean ? b_.CreateICmpUGE(x, y) : b_.CreateICmpSGE(x, y);
    case Op::LogicalAnd: return b_.CreateAnd(x, y);
    case Op::LogicalOr: return b_.CreateOr(x, y);
    case Op::Remainder:
    case Op::Fmod:
    case Op::FloorDivide: return divide(op, x, y, fl);
    case Op::BitwiseAnd: return b_.CreateAnd(x, y);
    case Op::BitwiseOr: return b_.CreateOr(x, y);
    case Op::BitwiseXor: return b_.CreateXor(x, y);
    case Op::BitwiseNot: return b_.CreateNot(x);  // bool is i1: logical not
    case Op::BitwiseLeftShift:
    case Op::BitwiseRightShift: return shift(op, x, y);
#include "codegen/ir/not_elementwise_cases.inc"
      break;
  }
  throw Error(std::string("llvm emitter: no lowering for op ") + ir::op_name(op));
}

}  // namespace lf::cpu
