// Kernel IR -> LLVM IR (emit.h): the emitter's types and conversions, metadata, values and
// generators, and the entry points.
#include "codegen/cpu/llvm/emitter.h"

#include <llvm/IR/MDBuilder.h>

namespace lf::cpu {

llvm::Type* Emitter::ctype(DType d) {
  switch (d) {
    case DType::Bool: return b_.getInt1Ty();
    case DType::Int32: return b_.getInt32Ty();
    case DType::Int64: return i64_;
    case DType::Float64: return b_.getDoubleTy();
    default: return b_.getFloatTy();
  }
}

llvm::Type* Emitter::stype(DType d) {
  switch (d) {
    case DType::Bool: return b_.getInt8Ty();
    case DType::Float16: return b_.getHalfTy();
    case DType::BFloat16: return b_.getInt16Ty();
    default: return ctype(d);
  }
}

// float32 -> bfloat16 bits, round to nearest even, NaN kept quiet.
Value* Emitter::to_bf16_bits(Value* f) {
  Value* bits = b_.CreateBitCast(f, b_.getInt32Ty());
  Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, 16), 1);
  Value* rounded = b_.CreateLShr(b_.CreateAdd(bits, b_.CreateAdd(lsb, b_.getInt32(0x7fff))), 16);
  Value* nan = b_.CreateOr(b_.CreateLShr(bits, 16), b_.getInt32(0x40));
  Value* is_nan = b_.CreateFCmpUNO(f, f);
  return b_.CreateTrunc(b_.CreateSelect(is_nan, nan, rounded), b_.getInt16Ty());
}

Value* Emitter::from_bf16_bits(Value* h) {
  return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(h, b_.getInt32Ty()), 16), b_.getFloatTy());
}

// Rounds a float32 compute value to a 16-bit dtype and back, as storing would.
Value* Emitter::round16(Value* v, DType d) {
  if (d == DType::Float16) return b_.CreateFPExt(b_.CreateFPTrunc(v, b_.getHalfTy()), b_.getFloatTy());
  if (d == DType::BFloat16) return from_bf16_bits(to_bf16_bits(v));
  return v;
}

Value* Emitter::load(int slot, Value* offset, DType d) {
  Value* p = b_.CreateGEP(stype(d), ptrs_[slot], offset);
  Value* v = b_.CreateLoad(stype(d), p);
  switch (d) {
    case DType::Bool: return b_.CreateICmpNE(v, b_.getInt8(0));
    case DType::Float16: return b_.CreateFPExt(v, b_.getFloatTy());
    case DType::BFloat16: return from_bf16_bits(v);
    default: return v;
  }
}

void Emitter::store(int slot, Value* offset, DType d, Value* v) {
  Value* p = b_.CreateGEP(stype(d), ptrs_[slot], offset);
  switch (d) {
    case DType::Bool: v = b_.CreateZExt(v, b_.getInt8Ty()); break;
    case DType::Float16: v = b_.CreateFPTrunc(v, b_.getHalfTy()); break;
    case DType::BFloat16: v = to_bf16_bits(v); break;
    default: break;
  }
  b_.CreateStore(v, p);
}

// Converts a compute value of dtype `from` to dtype `to` with the reference executor's rules
// (float to integer saturates, NaN gives 0; anything to bool is "!= 0").
Value* Emitter::convert(Value* v, DType from, DType to) {
  llvm::Type* t = ctype(to);
  if (from == to) return v;
  if (to == DType::Bool) {
    return is_floating(from) ? b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0))
                             : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  Value* r;
  if (from == DType::Bool) {
    r = is_floating(to) ? b_.CreateUIToFP(v, t) : b_.CreateZExt(v, t);
  } else if (!is_floating(from)) {
    r = is_floating(to) ? b_.CreateSIToFP(v, t) : b_.CreateSExtOrTrunc(v, t);
  } else if (!is_floating(to)) {
    r = b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {t, v->getType()}, {v});
  } else {
    r = b_.CreateFPCast(v, t);
  }
  return is_floating(to) ? round16(r, to) : r;
}

Value* Emitter::meta(int64_t i) {
  Value* p = b_.CreateConstInBoundsGEP1_64(i64_, fn_->getArg(0), static_cast<uint64_t>(i));
  return b_.CreateLoad(i64_, p);
}

// Creates an external function whose first two parameters (if any) are meta and ptrs, and
// loads the metadata in its entry block.
void Emitter::begin_function(const std::string& name, std::vector<llvm::Type*> params, bool metadata) {
  auto* fty = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  fn_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, m_.get());
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  set_reciprocal_estimates(*fn_);
  // Inner loops are long and heavy in arithmetic (inline math): let the vectorizer use whole
  // AVX-512 registers where the CPU has them (x86 tuning otherwise prefers 256-bit vectors).
  fn_->addFnAttr("prefer-vector-width", "512");
  if (options_.stream_stores) fn_->addFnAttr(kStreamingAttr);
  for (unsigned i = 0; i < params.size(); ++i)
    if (params[i]->isPointerTy()) fn_->addParamAttr(i, llvm::Attribute::NoAlias);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn_));
  if (metadata) load_metadata();
}

void Emitter::load_metadata() {
  sizes_.clear();
  params_.clear();
  int64_t at = 0;
  for (int d = 0; d < rank_; ++d) sizes_.push_back(meta(at++));
  size_t nops = k_.operands.size();
  offsets_.resize(nops);
  strides_.assign(nops, {});
  ptrs_.resize(nops);
  for (size_t o = 0; o < nops; ++o) {
    offsets_[o] = meta(at++);
    for (int d = 0; d < rank_; ++d) {
      Value* s = meta(at++);
      // Stride classes are part of the kernel key: the constant lets the vectorizer see unit
      // strides and hoist broadcast loads.
      switch (k_.operands[o].strides[d]) {
        case kir::StrideClass::Zero: s = b_.getInt64(0); break;
        case kir::StrideClass::Unit: s = b_.getInt64(1); break;
        case kir::StrideClass::Any: break;
      }
      strides_[o].push_back(s);
    }
    if (k_.operands[o].kind != kir::Operand::Kind::Index) {
      Value* pp = b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), fn_->getArg(1), o);
      ptrs_[o] = b_.CreateLoad(b_.getPtrTy(), pp);
    }
  }
  for (size_t p = 0; p < k_.params.size(); ++p) params_.push_back(meta(at++));
}

Value* Emitter::rowv(int i) {
  if (auto it = row_vals_.find(i); it != row_vals_.end()) return it->second;
  const Instr& in = k_.instrs[i];
  Value* v = compute(in, row_base_, /*row=*/true);
  row_vals_[i] = v;
  return v;
}

Value* Emitter::elem(int i) {
  const Instr& in = k_.instrs[i];
  if (in.row) return row_vals_.at(i);
  if (auto it = elem_vals_.find(i); it != elem_vals_.end()) return it->second;
  Value* v;
  if (cache_ready_.count(i)) {
    int slot = cache_slot_.at(i);
    v = load(slot, elem_off_[slot], k_.operands[slot].dtype);
  } else if (fast_div_ && plan_.is_row_division(i)) {
    v = fast_row_div(i);
  } else if (Value* a = in_interior_ ? interior_elem(i) : nullptr) {
    v = a;
  } else if (in.kind == InstrKind::Scan && kir::scan_extreme(in.op)) {
    // The element's position (lin_: the index along the scanned dim, the row's only inner dim)
    // replaces the running one where it is NaN, or at least (most) as large (small) as the
    // extreme so far, which is not NaN; the extreme's value follows it.
    const DType xt = k_.instrs[in.args[0]].dtype;
    Value* x = elem(in.args[0]);
    Value* best = scan_best_.at(i);
    Value* wins = elementwise(in.op == Op::CumMax ? Op::Ge : Op::Le, {x, best}, xt);
    if (is_floating(xt))
      wins = b_.CreateOr(b_.CreateFCmpUNO(x, x), b_.CreateAnd(b_.CreateFCmpORD(best, best), wins));
    scan_best_next_[i] = b_.CreateSelect(wins, x, best);
    v = scan_next_[i] = b_.CreateSelect(wins, lin_, scan_acc_.at(i));
  } else if (in.kind == InstrKind::Scan) {  // the running total in the compute type, the value rounded
    Value* acc = scan_acc_.at(i);
    Value* next = in.op == Op::LogCumSumExp ? logaddexp(acc, elem(in.args[0]), in.dtype)
                                            : elementwise(in.op == Op::CumSum ? Op::Add : Op::Mul, {acc, elem(in.args[0])}, in.dtype);
    scan_next_[i] = next;
    v = is_floating(in.dtype) ? round16(next, in.dtype) : next;
  } else {
    v = compute(in, elem_off_, /*row=*/false);
  }
  elem_vals_[i] = v;
  return v;
}

// The extreme's value before a row's first element: one every element beats (-inf for a float
// cummax, the lowest integer, false; the opposite for cummin). A first NaN beats it too.
Value* Emitter::extreme_start(const kir::Instr& in) {
  const DType xt = k_.instrs[in.args[0]].dtype;
  llvm::Type* t = ctype(xt);
  const bool max = in.op == Op::CumMax;
  if (t->isFloatingPointTy()) return llvm::ConstantFP::getInfinity(t, /*Negative=*/max);
  const unsigned bits = t->getIntegerBitWidth();
  if (xt == DType::Bool) return llvm::ConstantInt::get(t, max ? 0 : 1);
  return llvm::ConstantInt::get(t, max ? llvm::APInt::getSignedMinValue(bits) : llvm::APInt::getSignedMaxValue(bits));
}

// log(e^a + e^b) without overflow, as codegen/reference/math.h's (a fused logcumsumexp's step):
// NaN if either is; the larger when it is infinite; else hi + log1p(exp(lo - hi)), unrounded.
Value* Emitter::logaddexp(Value* a, Value* b, DType dt) {
  Value* less = b_.CreateFCmpOLT(a, b);
  Value* hi = b_.CreateSelect(less, b, a);
  Value* lo = b_.CreateSelect(less, a, b);
  Value* sum = b_.CreateFAdd(hi, elementwise(Op::Log1p, {elementwise(Op::Exp, {b_.CreateFSub(lo, hi)}, dt)}, dt));
  Value* inf = b_.CreateFCmpOEQ(unary_intrinsic(llvm::Intrinsic::fabs, hi), fc(hi, INFINITY));
  Value* nan = b_.CreateFCmpUNO(a, b);
  return b_.CreateSelect(nan, fc(a, NAN), b_.CreateSelect(inf, hi, sum));
}

Value* Emitter::compute(const Instr& in, const std::vector<Value*>& off, bool row) {
  switch (in.kind) {
    case InstrKind::Load: return load(in.slot, off[in.slot], in.dtype);
    case InstrKind::Param: return param_value(in);
    case InstrKind::Gen: return generate(in, off[in.slot]);
    case InstrKind::Reduce: throw Error("llvm emitter: reduction used before it was computed (internal error)");
    case InstrKind::Scan: throw Error("llvm emitter: a scan outside its row's ordered pass (internal error)");
    case InstrKind::Gather: return gather(in, off, row);
    case InstrKind::Remap: {
      // Indices computed in the kernel and in range by construction (kir::InstrKind::Remap).
      Value* o = off[in.slot];
      for (size_t k = 0; k < in.args.size(); ++k) {
        Value* i = convert(arg(in.args[k], row), k_.instrs[in.args[k]].dtype, DType::Int64);
        o = b_.CreateAdd(o, b_.CreateMul(i, params_[in.params[k]]));
      }
      return load(in.slot, o, in.dtype);
    }
    case InstrKind::Op: break;
  }
  std::vector<Value*> args;
  for (int a : in.args) args.push_back(arg(a, row));
  DType arg_dtype = k_.instrs[in.args.back()].dtype;  // where's branches share a dtype; casts have one input
  if (in.op == Op::Where) return b_.CreateSelect(args[0], args[1], args[2]);
  if (in.op == Op::Cast) return convert(args[0], k_.instrs[in.args[0]].dtype, in.dtype);
  Value* v = elementwise(in.op, args, arg_dtype);
  return is_floating(in.dtype) ? round16(v, in.dtype) : v;
}

// A load at a data-dependent index (kir::InstrKind::Gather). An index out of range is recorded
// in the error operand on a branch taken only then (several threads may store at once: each store
// is one bad index, and any of them makes the error) and element 0 is read instead, so the kernel
// never reads outside the source.
Value* Emitter::gather(const Instr& in, const std::vector<Value*>& off, bool row) {
  const int i = static_cast<int>(&in - k_.instrs.data());
  auto hoisted = row ? row_gather_.end() : row_gather_.find(i);
  Value* idx = hoisted != row_gather_.end() ? hoisted->second : gather_index(in, row);
  return load(in.slot, b_.CreateAdd(off[in.slot], b_.CreateMul(idx, params_[in.params[1]])), in.dtype);
}

Value* Emitter::gather_index(const Instr& in, bool row) {
  Value* raw = convert(arg(in.args[0], row), k_.instrs[in.args[0]].dtype, DType::Int64);
  Value* size = params_[in.params[0]];
  Value* idx = b_.CreateSelect(b_.CreateICmpSLT(raw, b_.getInt64(0)), b_.CreateAdd(raw, size), raw);
  if (in.params.size() < 3) return idx;  // indices known in range: no check (kir::InstrKind::Gather)
  Value* bad = b_.CreateICmpUGE(idx, size);  // unsigned: still negative is out of range too
  auto* report = llvm::BasicBlock::Create(ctx_, "gather.bad", fn_);
  auto* cont = llvm::BasicBlock::Create(ctx_, "gather.ok", fn_);
  llvm::MDBuilder md(ctx_);
  b_.CreateCondBr(bad, report, cont, md.createBranchWeights(1, 1 << 20));
  b_.SetInsertPoint(report);
  Value* err = ptrs_[k_.error_slot];
  b_.CreateStore(params_[in.params[2]], err);
  b_.CreateStore(raw, b_.CreateConstInBoundsGEP1_64(i64_, err, 1));
  b_.CreateBr(cont);
  b_.SetInsertPoint(cont);
  return b_.CreateSelect(bad, b_.getInt64(0), idx);
}

bool Emitter::column_invariant(int i) {
  if (column_invariant_.empty()) column_invariant_.assign(k_.instrs.size(), -1);
  signed char& memo = column_invariant_[static_cast<size_t>(i)];
  if (memo >= 0) return memo;
  const Instr& in = k_.instrs[static_cast<size_t>(i)];
  bool r = false;
  if (in.kind == InstrKind::Param) {
    r = true;
  } else if (in.kind == InstrKind::Load) {
    r = true;
    for (int d = 0; d < k_.inner_rank; ++d) {
      auto* c = llvm::dyn_cast<llvm::ConstantInt>(strides_[static_cast<size_t>(in.slot)][static_cast<size_t>(k_.outer_rank + d)]);
      r &= c && c->isZero();
    }
  } else if (in.kind == InstrKind::Op) {
    r = true;
    for (int a : in.args) r &= column_invariant(a);
  }
  memo = r ? 1 : 0;
  return r;
}

Value* Emitter::param_value(const Instr& in) {
  Value* bits = params_[in.slot];
  if (k_.params[in.slot] == kir::ParamKind::Float) {
    Value* d = b_.CreateBitCast(bits, b_.getDoubleTy());
    return convert(d, DType::Float64, in.dtype);
  }
  return convert(bits, DType::Int64, in.dtype);
}

Value* Emitter::splitmix(Value* seed, Value* index) {
  Value* z = b_.CreateAdd(seed, b_.CreateMul(b_.CreateAdd(index, b_.getInt64(1)), b_.getInt64(0x9E3779B97F4A7C15ull)));
  z = b_.CreateMul(b_.CreateXor(z, b_.CreateLShr(z, 30)), b_.getInt64(0xBF58476D1CE4E5B9ull));
  z = b_.CreateMul(b_.CreateXor(z, b_.CreateLShr(z, 27)), b_.getInt64(0x94D049BB133111EBull));
  return b_.CreateXor(z, b_.CreateLShr(z, 31));
}

Value* Emitter::generate(const Instr& in, Value* index) {
  auto* f64 = b_.getDoubleTy();
  auto* f32 = b_.getFloatTy();
  if (in.op == Op::Arange) {
    Value* start = b_.CreateBitCast(params_[in.params[0]], f64);
    Value* step = b_.CreateBitCast(params_[in.params[1]], f64);
    Value* v = b_.CreateFAdd(start, b_.CreateFMul(b_.CreateSIToFP(index, f64), step));
    if (!is_integral(in.dtype)) return convert(v, DType::Float64, in.dtype);
    // Integral bounds (ir::arange_is_integral) in integer arithmetic, exact past 2^53; the test
    // is of the parameters, so it is hoisted out of the loop.
    auto integral = [&](Value* x) {
      Value* in_range = b_.CreateAnd(b_.CreateFCmpOGE(x, llvm::ConstantFP::get(f64, -0x1p63)),
                                     b_.CreateFCmpOLT(x, llvm::ConstantFP::get(f64, 0x1p63)));
      Value* xi = b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {i64_, f64}, {x});
      return std::pair{b_.CreateAnd(in_range, b_.CreateFCmpOEQ(b_.CreateSIToFP(xi, f64), x)), xi};
    };
    auto [start_ok, start_i] = integral(start);
    auto [step_ok, step_i] = integral(step);
    Value* exact = b_.CreateAdd(start_i, b_.CreateMul(b_.CreateSExtOrTrunc(index, i64_), step_i));
    return b_.CreateSelect(b_.CreateAnd(start_ok, step_ok), convert(exact, DType::Int64, in.dtype),
                           convert(v, DType::Float64, in.dtype));
  }
  Value* h = splitmix(params_[in.params[0]], b_.CreateAdd(params_[in.params[1]], index));
  if (in.op == Op::Rand) {
    int bits = in.dtype == DType::Float64 ? 53 : in.dtype == DType::Float16 ? 11 : in.dtype == DType::BFloat16 ? 8 : 24;
    Value* u = b_.CreateFMul(b_.CreateUIToFP(b_.CreateLShr(h, 64 - bits), f64),
                             llvm::ConstantFP::get(f64, std::ldexp(1.0, -bits)));
    return convert(u, DType::Float64, in.dtype);
  }
  if (in.dtype == DType::Float64) {
    Value* u1 = b_.CreateFMul(b_.CreateUIToFP(b_.CreateAdd(b_.CreateLShr(h, 32), b_.getInt64(1)), f64),
                              llvm::ConstantFP::get(f64, 2.3283064365386962890625e-10));
    Value* u2 = b_.CreateFMul(b_.CreateUIToFP(b_.CreateAnd(h, b_.getInt64(0xffffffffull)), f64),
                              llvm::ConstantFP::get(f64, 2.3283064365386962890625e-10));
    Value* r = sqrt(b_.CreateFMul(llvm::ConstantFP::get(f64, -2.0), ops_.call("log", {u1})));
    return b_.CreateFMul(r, ops_.call("cos", {b_.CreateFMul(llvm::ConstantFP::get(f64, 6.28318530717958647692), u2)}));
  }
  Value* u1 = b_.CreateFMul(b_.CreateUIToFP(b_.CreateAdd(b_.CreateLShr(h, 40), b_.getInt64(1)), f32),
                            llvm::ConstantFP::get(f32, 5.9604644775390625e-8));
  Value* u2 = b_.CreateFMul(b_.CreateUIToFP(b_.CreateAnd(h, b_.getInt64(0xffffffull)), f32),
                            llvm::ConstantFP::get(f32, 5.9604644775390625e-8));
  Value* r = sqrt(b_.CreateFMul(llvm::ConstantFP::get(f32, -2.0), ops_.call("logf", {u1})));
  Value* z = b_.CreateFMul(r, ops_.call("cosf", {b_.CreateFMul(llvm::ConstantFP::get(f32, 6.28318530717958647692), u2)}));
  return round16(z, in.dtype);
}

std::unique_ptr<llvm::Module> emit_module(const kir::Kernel& kernel, const EmitOptions& options, const std::string& name,
                                          llvm::LLVMContext& ctx) {
  return Emitter(kernel, options, name, ctx).run();
}

int mark_streaming_stores(llvm::Module& m) {
  int marked = 0;
  for (llvm::Function& f : m) {
    if (!f.hasFnAttribute(kStreamingAttr)) continue;
    for (llvm::BasicBlock& bb : f) {
      for (llvm::Instruction& i : bb) {
        auto* st = llvm::dyn_cast<llvm::StoreInst>(&i);
        if (!st || !st->getValueOperand()->getType()->isVectorTy()) continue;
        uint64_t bytes = m.getDataLayout().getTypeStoreSize(st->getValueOperand()->getType());
        if (st->getAlign().value() < std::min<uint64_t>(bytes, 64)) continue;
        st->setMetadata(llvm::LLVMContext::MD_nontemporal,
                        llvm::MDNode::get(m.getContext(), llvm::ConstantAsMetadata::get(
                                                              llvm::ConstantInt::get(llvm::Type::getInt32Ty(m.getContext()), 1))));
        ++marked;
      }
    }
  }
  return marked;
}

}  // namespace lf::cpu
