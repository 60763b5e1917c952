// Inline float32 transcendentals (see llvm_math.h). Every function is branch-free straight-line code
// over one scalar (selects, FMAs, integer bit operations), so that after inlining the loop vectorizer
// widens it like any other arithmetic. Special values are handled by the same code path: clamps are
// written as selects that let NaN through, and the final selects / copysign fix infinities, zeros
// and the sign of zero. Reductions: exp writes x = n ln2 + r with |r| <= ln2/2 and scales by 2^n in
// two steps (so results near overflow and in the subnormal range are rounded once); log splits
// x = 2^e m with m in [sqrt(1/2), sqrt(2)).
#include "codegen/cpu/llvm/math.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "lazyfuse/types.h"

namespace lf::cpu {
namespace {

using llvm::Value;
using Op = ir::Op;

// ---- Coefficients, highest degree first. tools/fit_math.py computes them (minimax, Remez exchange
// in 40-digit arithmetic); the error quoted is the fit's own, before float32 rounding.

// e^r = 1 + r P(r) on [-ln2/2, ln2/2]; relative error 2.0e-9.
constexpr std::initializer_list<float> kExpP = {0.0013843635066663716f, 0.008374171428471255f,
                                                0.041668003106199863f,  0.16666431077846347f,
                                                0.4999999420211352f,    1.0000000322024516f};
// e^r - 1 = r + r^2 Q(r) on the same interval; relative error of e^r 3.1e-9.
constexpr std::initializer_list<float> kExpm1Q = {0.0013814583982402584f, 0.008368723938312214f,
                                                  0.041668388731343466f, 0.16666520573544372f,
                                                  0.49999993443868745f};
// 2^r = 1 + r Q(r) on [-1/2, 1/2]; relative error 2.0e-9.
constexpr std::initializer_list<float> kExp2Q = {0.00015353362227507275f, 0.0013398874406550458f,
                                                 0.009618437356465498f,   0.055503324711486945f,
                                                 0.24022647913639214f,    0.6931472028550582f};
// log(1 + f) = f + f^2 Q(f) on [sqrt(1/2) - 1, sqrt(2) - 1]; relative error 3.0e-8.
constexpr std::initializer_list<float> kLogQ = {0.08736047568536244f,  -0.1430931641905324f, 0.14918345952917705f,
                                                -0.16570304488258608f, 0.19962021638537716f, -0.2500176151034186f,
                                                0.3333395145595315f,   -0.4999999156249353f};
// log2(1 + f) = f P(f) on the same interval; relative error 4.1e-9.
constexpr std::initializer_list<float> kLog2P = {-0.11011292360800361f, 0.1862767430271134f,  -0.1910465336983159f,
                                                 0.20458372977655861f,  -0.2396173960810331f, 0.28856828859777034f,
                                                 -0.3606966747970777f,  0.4808982264858344f,  -0.7213473511954065f,
                                                 1.4426950408657304f};
// erf(x) = x + x P(x^2) for |x| < 0.921875; relative error 4.1e-10.
constexpr std::initializer_list<float> kErfP = {8.370100404395253e-05f, -0.0008142704256105723f, 0.005201032281478558f,
                                                -0.02685939825187339f,  0.1128369549356316f,     -0.3761263373504109f,
                                                0.12837916663740945f};
// erfc(t) = e^(-t^2) R(t - 2.4609375) for t in [0.921875, 4]; absolute error of erfc 4.3e-9.
constexpr std::initializer_list<float> kErfcR = {0.0001280081255140051f, 0.0002978082388655576f,
                                                 0.0006767971886405484f, -0.0006601562188169331f,
                                                 0.0024087970625297868f, -0.008580107491844142f,
                                                 0.025861603671072906f,  -0.07632655499431788f,
                                                 0.2137508764156875f};

constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693145751953125f;  // ln 2 = kLn2Hi + kLn2Lo; kLn2Hi has 16 significant bits
constexpr float kLn2Lo = 1.428606765330187045e-06f;
// Adding 1.5 * 2^23 rounds a float of magnitude < 2^22 to an integer, which the low bits then hold.
constexpr float kRoundMagic = 12582912.0f;
constexpr float kMinNormal = 1.17549435e-38f;

// Builds one function's body: float32 helpers over an IRBuilder.
class Body {
 public:
  explicit Body(llvm::Function* f) : b_(llvm::BasicBlock::Create(f->getContext(), "entry", f)) {
    f32_ = b_.getFloatTy();
    i32_ = b_.getInt32Ty();
  }

  llvm::IRBuilder<>& b() { return b_; }
  Value* c(float v) { return llvm::ConstantFP::get(f32_, v); }
  Value* ci(int32_t v) { return llvm::ConstantInt::get(i32_, static_cast<uint64_t>(v), true); }
  Value* fma(Value* a, Value* x, Value* y) { return b_.CreateIntrinsic(llvm::Intrinsic::fma, {f32_}, {a, x, y}); }
  Value* mul(Value* a, Value* x) { return b_.CreateFMul(a, x); }
  Value* add(Value* a, Value* x) { return b_.CreateFAdd(a, x); }
  Value* sub(Value* a, Value* x) { return b_.CreateFSub(a, x); }
  Value* fabs(Value* x) { return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x); }
  Value* copysign(Value* mag, Value* sign) { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, mag, sign); }
  Value* bits(Value* f) { return b_.CreateBitCast(f, i32_); }
  Value* from_bits(Value* i) { return b_.CreateBitCast(i, f32_); }
  // Clamps that keep NaN (the comparison is false for NaN, so the select passes x through).
  Value* at_least(Value* x, float lo) { return b_.CreateSelect(b_.CreateFCmpOLT(x, c(lo)), c(lo), x); }
  Value* at_most(Value* x, float hi) { return b_.CreateSelect(b_.CreateFCmpOGT(x, c(hi)), c(hi), x); }

  // sum coeffs[i] x^(n-1-i) by Horner's rule with FMAs.
  Value* horner(Value* x, std::initializer_list<float> coeffs) {
    auto it = coeffs.begin();
    Value* acc = c(*it++);
    for (; it != coeffs.end(); ++it) acc = fma(acc, x, c(*it));
    return acc;
  }

  // 1 / d for d >= 1 (finite) or NaN: the hardware estimate refined by a Newton step instead of a
  // division. The step is cubic, (1 - d r0)^3 < 2^-33, because the estimate may have 12 bits: LLVM
  // (19) uses AVX-512's 14-bit vrcp14ps for 512-bit vectors only, and rcpss / rcpps (12 bits) for
  // scalars and narrower vectors even where AVX-512VL has their 14-bit forms; a quadratic step
  // would leave 2^-24 there.
  Value* recip(Value* d) {
    auto* est = llvm::cast<llvm::Instruction>(b_.CreateFDiv(c(1.0f), d));
    est->setHasAllowReciprocal(true);
    est->setHasNoInfs(true);  // true: d and 1/d are finite (or NaN)
    Value* e = fma(b_.CreateFNeg(d), est, c(1.0f));
    return fma(est, fma(e, e, e), est);
  }

  // z = n ln2 + r as exp_reduce, for n in [-127, 127], returning r and 2^n (0 for n = -127): the
  // rounding constant carries the exponent bias, so 2^n is the low bits shifted into place.
  std::pair<Value*, Value*> exp_reduce_pow2(Value* z) {
    constexpr float kMagicBiased = kRoundMagic + 127.0f;  // exact: below 2^24
    Value* t = fma(z, c(kLog2e), c(kMagicBiased));
    Value* nf = sub(t, c(kMagicBiased));
    Value* r = fma(nf, c(-kLn2Lo), fma(nf, c(-kLn2Hi), z));
    return {r, from_bits(b_.CreateShl(bits(t), 23))};  // the rounding constant's own bits shift out
  }

  // z = n ln2 + r with n = round(z / ln2), r in [-ln2/2, ln2/2]; for |z| < 2^21. Returns r and n
  // (int32). n comes from the rounding trick, not a float-to-int conversion, so a NaN z gives a
  // NaN r and some n (no poison).
  std::pair<Value*, Value*> exp_reduce(Value* z) {
    Value* t = fma(z, c(kLog2e), c(kRoundMagic));
    Value* nf = sub(t, c(kRoundMagic));
    Value* r = fma(nf, c(-kLn2Lo), fma(nf, c(-kLn2Hi), z));
    Value* n = b_.CreateSub(bits(t), ci(static_cast<int32_t>(std::bit_cast<uint32_t>(kRoundMagic))));
    return {r, n};
  }
  Value* exp_poly(Value* r) { return fma(horner(r, kExpP), r, c(1.0f)); }         // e^r
  Value* expm1_poly(Value* r) { return fma(horner(r, kExpm1Q), mul(r, r), r); }  // e^r - 1, accurate near 0
  // 2^n for n in [-126, 127] (and 0 for n = -127).
  Value* pow2(Value* n) { return from_bits(b_.CreateShl(b_.CreateAdd(n, ci(127)), 23)); }
  // p 2^n for n in [-252, 254] with one rounding: subnormal and overflowing results come out right.
  Value* scale(Value* p, Value* n) {
    Value* n1 = b_.CreateAShr(n, 1);
    Value* n2 = b_.CreateSub(n, n1);
    return mul(mul(p, pow2(n1)), pow2(n2));
  }

  // log(x) = e ln2 + log(1 + f) pieces for x > 0: returns f = m - 1 (exact) and e as a float.
  std::pair<Value*, Value*> log_reduce(Value* x) {
    Value* subnormal = b_.CreateFCmpOLT(x, c(kMinNormal));
    Value* xs = b_.CreateSelect(subnormal, mul(x, c(8388608.0f)), x);  // 2^23
    constexpr int32_t kSqrtHalf = 0x3f3504f3;                         // sqrt(1/2)
    Value* t = b_.CreateSub(bits(xs), ci(kSqrtHalf));
    Value* e = b_.CreateSub(b_.CreateAShr(t, 23), b_.CreateSelect(subnormal, ci(23), ci(0)));
    Value* m = from_bits(b_.CreateAdd(b_.CreateAnd(t, ci(0x7fffff)), ci(kSqrtHalf)));
    return {sub(m, c(1.0f)), b_.CreateSIToFP(e, f32_)};
  }
  // log of 0 is -inf, of +inf is +inf, of negatives and NaN is NaN.
  Value* log_specials(Value* x, Value* res) {
    res = b_.CreateSelect(b_.CreateFCmpOEQ(x, c(INFINITY)), x, res);
    res = b_.CreateSelect(b_.CreateFCmpOEQ(x, c(0.0f)), c(-INFINITY), res);
    return b_.CreateSelect(b_.CreateFCmpULT(x, c(0.0f)), c(NAN), res);
  }

 private:
  llvm::IRBuilder<> b_;
  llvm::Type* f32_;
  llvm::Type* i32_;
};

Value* exp_f32(Body& m, Value* x) {
  Value* xc = m.at_most(m.at_least(x, -104.0f), 89.0f);  // beyond: 0 and inf, after rounding
  auto [r, n] = m.exp_reduce(xc);
  return m.scale(m.exp_poly(r), n);
}

Value* exp2_f32(Body& m, Value* x) {
  Value* xc = m.at_most(m.at_least(x, -151.0f), 129.0f);
  Value* t = m.add(xc, m.c(kRoundMagic));
  Value* r = m.sub(xc, m.sub(t, m.c(kRoundMagic)));  // exact
  Value* p = m.fma(m.horner(r, kExp2Q), r, m.c(1.0f));
  Value* n = m.b().CreateSub(m.bits(t), m.ci(static_cast<int32_t>(std::bit_cast<uint32_t>(kRoundMagic))));
  return m.scale(p, n);
}

Value* log_f32(Body& m, Value* x) {
  auto [f, e] = m.log_reduce(x);
  Value* l = m.fma(m.horner(f, kLogQ), m.mul(f, f), f);
  Value* res = m.fma(e, m.c(kLn2Hi), m.fma(e, m.c(kLn2Lo), l));
  return m.log_specials(x, res);
}

Value* log2_f32(Body& m, Value* x) {
  auto [f, e] = m.log_reduce(x);
  return m.log_specials(x, m.fma(f, m.horner(f, kLog2P), e));
}

// tanh(|x|) = u / (u + 2) = 1 - 2 / (u + 2) with u = e^(2|x|) - 1 = 2^n (e^r - 1) + (2^n - 1): the
// first form below tanh = 1/2 (accurate near 0), the second above (where it rounds once near 1).
// |x| is clamped to 10 (where tanh rounds to 1) and the sign is copied last, so tanh(-0) = -0.
Value* tanh_f32(Body& m, Value* x) {
  Value* a = m.at_most(m.fabs(x), 10.0f);
  auto [r, s] = m.exp_reduce_pow2(m.add(a, a));
  Value* u = m.fma(s, m.expm1_poly(r), m.sub(s, m.c(1.0f)));
  Value* q = m.recip(m.add(u, m.c(2.0f)));
  Value* near0 = m.b().CreateFCmpOLT(a, m.c(0.5493061443f));  // atanh(1/2)
  Value* t = m.b().CreateSelect(near0, m.mul(u, q), m.fma(m.c(-2.0f), q, m.c(1.0f)));
  return m.copysign(t, x);
}

// sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) below, with e = e^-|x| (which never
// overflows). e is scaled by 2^n in one step, for n >= -127 (-|x| clamped to -88): results below
// 2^-126 (x < -87.7) are 0 instead of subnormal, which saves the two-step scaling exp needs (the
// reference's own 1 / (1 + e^-x) is 0 from -88.7 on).
std::pair<Value*, Value*> sigmoid_parts(Body& m, Value* x) {
  Value* z = m.at_least(m.b().CreateFNeg(m.fabs(x)), -88.0f);
  auto [r, s] = m.exp_reduce_pow2(z);
  Value* e = m.mul(m.exp_poly(r), s);  // 2^-127 comes out as 0
  return {e, m.recip(m.add(e, m.c(1.0f)))};
}

Value* sigmoid_f32(Body& m, Value* x) {
  auto [e, r] = sigmoid_parts(m, x);
  return m.b().CreateSelect(m.b().CreateFCmpOLT(x, m.c(0.0f)), m.mul(e, r), r);
}

// silu(x) = x sigmoid(x), whose tail x e^x stays normal well past sigmoid's flush: e = (p 2^n1) 2^n2
// with the last scaling applied after the multiplies by x and 1 / (1 + e), so a subnormal result
// is rounded once. Below -113 it is x * 0: -0, or NaN for -inf like the reference's x / (1 + e^-x).
Value* silu_f32(Body& m, Value* x) {
  Value* z = m.at_least(m.b().CreateFNeg(m.fabs(x)), -113.0f);
  auto [r, n] = m.exp_reduce(z);
  Value* n1 = m.b().CreateAShr(n, 1);
  Value* e_hi = m.mul(m.exp_poly(r), m.pow2(n1));
  Value* s2 = m.pow2(m.b().CreateSub(n, n1));
  Value* q = m.recip(m.add(m.mul(e_hi, s2), m.c(1.0f)));
  Value* below = m.mul(m.mul(m.mul(x, e_hi), q), s2);
  below = m.b().CreateSelect(m.b().CreateFCmpOLT(x, m.c(-113.0f)), m.mul(x, m.c(0.0f)), below);
  return m.b().CreateSelect(m.b().CreateFCmpOLT(x, m.c(0.0f)), below, m.mul(x, q));
}

// erf: an odd polynomial near 0, else 1 - e^(-t^2) R(t) with t = |x| clamped to 4 (erf rounds to
// 1 from 3.9192 on); the sign is copied last.
Value* erf_f32(Body& m, Value* x) {
  Value* a = m.fabs(x);
  Value* small = m.fma(a, m.horner(m.mul(a, a), kErfP), a);
  Value* t = m.at_most(a, 4.0f);  // erf rounds to 1 from 3.9192 on
  Value* r = m.horner(m.sub(t, m.c(2.4609375f)), kErfcR);
  auto [rr, n] = m.exp_reduce(m.b().CreateFNeg(m.mul(t, t)));
  Value* big = m.fma(m.b().CreateFNeg(m.mul(m.exp_poly(rr), m.pow2(n))), r, m.c(1.0f));
  return m.copysign(m.b().CreateSelect(m.b().CreateFCmpOLT(a, m.c(0.921875f)), small, big), x);
}

using Impl = Value* (*)(Body&, Value*);

Impl impl_of(Op op) {
  switch (op) {
    case Op::Exp: return exp_f32;
    case Op::Exp2: return exp2_f32;
    case Op::Log: return log_f32;
    case Op::Log2: return log2_f32;
    case Op::Tanh: return tanh_f32;
    case Op::Sigmoid: return sigmoid_f32;
    case Op::Silu: return silu_f32;
    case Op::Erf: return erf_f32;
    default: return nullptr;
  }
}

}  // namespace

bool has_inline_math(ir::Op op) { return impl_of(op) != nullptr; }

llvm::Value* emit_inline_math(llvm::IRBuilderBase& b, ir::Op op, llvm::Value* x) {
  Impl impl = impl_of(op);
  if (!impl || !x->getType()->isFloatTy()) throw Error(std::string("inline math: no float32 ") + ir::op_name(op));
  llvm::Module* module = b.GetInsertBlock()->getModule();
  std::string name = std::string("lf.") + ir::op_name(op) + ".f32";
  llvm::Function* f = module->getFunction(name);
  if (!f) {
    auto* fty = llvm::FunctionType::get(b.getFloatTy(), {b.getFloatTy()}, false);
    f = llvm::Function::Create(fty, llvm::Function::InternalLinkage, name, module);
    f->addFnAttr(llvm::Attribute::AlwaysInline);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr(llvm::Attribute::WillReturn);
    f->addFnAttr(llvm::Attribute::Speculatable);
    f->setDoesNotAccessMemory();
    Body body(f);
    body.b().CreateRet(impl(body, f->getArg(0)));
  }
  return b.CreateCall(f, {x});
}

void set_reciprocal_estimates(llvm::Function& f) { f.addFnAttr("reciprocal-estimates", "divf:0,vec-divf:0"); }

}  // namespace lf::cpu
