// Kernel IR -> LLVM IR. The shape of the generated function:
//
//   for row in [row_begin, row_end):            // outer dims, decomposed from a linear row index
//     base[o] = offset[o] + sum(outer index * stride[o])
//     for each reduction: acc = init; for inner elements: acc = combine(acc, element value)
//     for inner elements: store element outputs
//     store row outputs
//
// Inner loops are simple counted loops over strided pointers, so LLVM's loop vectorizer sees them;
// float32 exp, log, tanh, sigmoid, erf and their kin are inline code (llvm_math.cpp), the other
// transcendentals libm calls marked pure, which the vectorizer maps to libmvec's vector forms.
#include "codegen/cpu/llvm/emit.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <bit>
#include <cmath>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "codegen/cpu/llvm/math.h"
#include "codegen/cpu/llvm/ops.h"
#include "lazyfuse/types.h"

namespace lf::cpu {
namespace {

using kir::Instr;
using kir::InstrKind;
using llvm::Value;
using Op = ir::Op;

class Emitter {
 public:
  Emitter(const kir::Kernel& k, const EmitOptions& options, const std::string& name, llvm::LLVMContext& ctx)
      : k_(k), options_(options), name_(name), ctx_(ctx), m_(std::make_unique<llvm::Module>(name, ctx)), b_(ctx), plan_(row_plan(k)), split_(split_info(k)) {
    rank_ = k.outer_rank + k.inner_rank;
    i64_ = b_.getInt64Ty();
  }

  std::unique_ptr<llvm::Module> run() {
    auto* ptr = b_.getPtrTy();
    begin_function(name_, {ptr, ptr, i64_, i64_, i64_, i64_});
    Value* row_begin = fn_->getArg(2);
    Value* row_end = fn_->getArg(3);
    col_begin_ = fn_->getArg(4);
    col_end_ = fn_->getArg(5);
    emit_loop(row_begin, row_end, {}, "row", [&](Value* row, std::vector<Value*> carried) {
      emit_row(row);
      return carried;
    });
#if defined(__x86_64__)
    // Streaming stores are weakly ordered: fence them before the thread pool reports this part
    // done, so that whoever reads the outputs next sees them.
    if (options_.stream_stores) b_.CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {});
#endif
    b_.CreateRetVoid();
    if (split_.splittable) {
      emit_part();
      emit_combine();
      emit_finish();
    }
    return std::move(m_);
  }

 private:
  // ---- types and conversions

  llvm::Type* ctype(DType d) {
    switch (d) {
      case DType::Bool: return b_.getInt1Ty();
      case DType::Int32: return b_.getInt32Ty();
      case DType::Int64: return i64_;
      case DType::Float64: return b_.getDoubleTy();
      default: return b_.getFloatTy();
    }
  }
  llvm::Type* stype(DType d) {
    switch (d) {
      case DType::Bool: return b_.getInt8Ty();
      case DType::Float16: return b_.getHalfTy();
      case DType::BFloat16: return b_.getInt16Ty();
      default: return ctype(d);
    }
  }

  // float32 -> bfloat16 bits, round to nearest even, NaN kept quiet.
  Value* to_bf16_bits(Value* f) {
    Value* bits = b_.CreateBitCast(f, b_.getInt32Ty());
    Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, 16), 1);
    Value* rounded = b_.CreateLShr(b_.CreateAdd(bits, b_.CreateAdd(lsb, b_.getInt32(0x7fff))), 16);
    Value* nan = b_.CreateOr(b_.CreateLShr(bits, 16), b_.getInt32(0x40));
    Value* is_nan = b_.CreateFCmpUNO(f, f);
    return b_.CreateTrunc(b_.CreateSelect(is_nan, nan, rounded), b_.getInt16Ty());
  }
  Value* from_bf16_bits(Value* h) {
    return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(h, b_.getInt32Ty()), 16), b_.getFloatTy());
  }
  // Rounds a float32 compute value to a 16-bit dtype and back, as storing would.
  Value* round16(Value* v, DType d) {
    if (d == DType::Float16) return b_.CreateFPExt(b_.CreateFPTrunc(v, b_.getHalfTy()), b_.getFloatTy());
    if (d == DType::BFloat16) return from_bf16_bits(to_bf16_bits(v));
    return v;
  }

  Value* load(int slot, Value* offset, DType d) {
    Value* p = b_.CreateGEP(stype(d), ptrs_[slot], offset);
    Value* v = b_.CreateLoad(stype(d), p);
    switch (d) {
      case DType::Bool: return b_.CreateICmpNE(v, b_.getInt8(0));
      case DType::Float16: return b_.CreateFPExt(v, b_.getFloatTy());
      case DType::BFloat16: return from_bf16_bits(v);
      default: return v;
    }
  }
  void store(int slot, Value* offset, DType d, Value* v) {
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
  Value* convert(Value* v, DType from, DType to) {
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

  // ---- metadata: sizes, offsets, strides and parameters, loaded once at entry

  Value* meta(int64_t i) {
    Value* p = b_.CreateConstInBoundsGEP1_64(i64_, fn_->getArg(0), static_cast<uint64_t>(i));
    return b_.CreateLoad(i64_, p);
  }

  // Creates an external function whose first two parameters (if any) are meta and ptrs, and
  // loads the metadata in its entry block.
  void begin_function(const std::string& name, std::vector<llvm::Type*> params, bool metadata = true) {
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

  void load_metadata() {
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

  // ---- loops

  using Body = std::function<std::vector<Value*>(Value* index, std::vector<Value*> carried)>;

  // A counted loop [lo, hi) in rotated form (guard, body, latch), carrying values through.
  std::vector<Value*> emit_loop(Value* lo, Value* hi, std::vector<Value*> init, const char* name, const Body& body,
                                bool vectorize = true) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(ctx_, name, fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, std::string(name) + ".exit", fn_);
    b_.CreateCondBr(b_.CreateICmpSLT(lo, hi), loop, exit);
    b_.SetInsertPoint(loop);
    llvm::PHINode* i = b_.CreatePHI(i64_, 2, std::string(name) + ".i");
    i->addIncoming(lo, pre);
    std::vector<llvm::PHINode*> phis;
    std::vector<Value*> carried;
    for (Value* v : init) {
      llvm::PHINode* phi = b_.CreatePHI(v->getType(), 2);
      phi->addIncoming(v, pre);
      phis.push_back(phi);
      carried.push_back(phi);
    }
    std::vector<Value*> next = body(i, carried);
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    Value* inext = b_.CreateAdd(i, b_.getInt64(1));
    i->addIncoming(inext, latch);
    for (size_t c = 0; c < phis.size(); ++c) phis[c]->addIncoming(next[c], latch);
    llvm::BranchInst* back = b_.CreateCondBr(b_.CreateICmpSLT(inext, hi), loop, exit);
    if (!vectorize) no_vectorize(back);
    b_.SetInsertPoint(exit);
    std::vector<Value*> out;
    for (size_t c = 0; c < init.size(); ++c) {
      llvm::PHINode* phi = b_.CreatePHI(init[c]->getType(), 2);
      phi->addIncoming(init[c], pre);
      phi->addIncoming(next[c], latch);
      out.push_back(phi);
    }
    return out;
  }

  // A short loop (a row's chunk accumulators, a streaming pass's head and tail): not worth
  // vectorizer work.
  void no_vectorize(llvm::BranchInst* back) {
    llvm::Metadata* hint[] = {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
                              llvm::ConstantAsMetadata::get(b_.getFalse())};
    llvm::MDNode* loop = llvm::MDNode::getDistinct(ctx_, {nullptr, llvm::MDNode::get(ctx_, hint)});
    loop->replaceOperandWith(0, loop);
    back->setMetadata(llvm::LLVMContext::MD_loop, loop);
  }

  using ElementBody = std::function<std::vector<Value*>(std::vector<Value*> carried)>;

  // Loops over the inner dims (the first of them over [col_begin, col_end): a pointwise kernel's
  // only inner dim, a row kernel's outermost reduced dim), keeping per-operand element offsets in
  // elem_off_ and the linear inner index in lin_.
  std::vector<Value*> emit_inner(int d, std::vector<Value*> off, Value* lin, std::vector<Value*> carried,
                                 const ElementBody& body) {
    int dim = k_.outer_rank + d;
    bool innermost = d == k_.inner_rank - 1;
    Value* lo = d == 0 ? col_begin_ : b_.getInt64(0);
    Value* hi = d == 0 ? col_end_ : sizes_[dim];
    return emit_loop(lo, hi, carried, innermost ? "col" : "inner", [&](Value* i, std::vector<Value*> c) {
      std::vector<Value*> next_off(off.size());
      for (size_t o = 0; o < off.size(); ++o) next_off[o] = b_.CreateAdd(off[o], b_.CreateMul(i, strides_[o][dim]));
      Value* next_lin = b_.CreateAdd(b_.CreateMul(lin, sizes_[dim]), i);
      if (!innermost) return emit_inner(d + 1, next_off, next_lin, c, body);
      elem_off_ = next_off;
      lin_ = next_lin;
      elem_vals_.clear();
      return body(c);
    }, !(innermost && scalar_columns_));
  }

  // ---- one row

  void emit_row(Value* row) {
    set_row_base(row);
    cache_slot_ = plan_.keep;
    cache_ready_.clear();
    for (size_t i = 0; i < k_.instrs.size(); ++i)
      if (k_.instrs[i].kind == InstrKind::Reduce) emit_reduction(static_cast<int>(i));
    // Element outputs: one pass writing every per-element output.
    std::vector<const kir::Output*> elem_outs;
    for (const kir::Output& o : k_.outputs)
      if (!k_.instrs[o.instr].row) elem_outs.push_back(&o);
    if (!elem_outs.empty()) {
      for (const kir::Output* o : elem_outs) emit_row_deps(o->instr);
      if (plan_.row_divisions.empty()) {
        emit_output_pass(elem_outs);
      } else {
        emit_output_pass_dividing(elem_outs);
      }
    }
    store_row_outputs();
  }

  // One pass writing every per-element output.
  void emit_output_pass(const std::vector<const kir::Output*>& elem_outs) {
    ElementBody body = [&](std::vector<Value*> c) {
      // Every value first, then the stores: an output may hold a kept value (row_plan).
      std::vector<Value*> vals;
      for (const kir::Output* o : elem_outs) vals.push_back(elem(o->instr));
      for (size_t j = 0; j < elem_outs.size(); ++j)
        store(elem_outs[j]->slot, elem_off_[elem_outs[j]->slot], k_.operands[elem_outs[j]->slot].dtype, vals[j]);
      return c;
    };
    if (options_.stream_stores) return emit_streaming_columns(elem_outs, body);
    emit_inner(0, row_base_, b_.getInt64(0), {}, body);
  }

  // The output pass of a streaming-stores kernel (EmitOptions::stream_stores): one inner dim, element outputs of one storage size
  // whose addresses agree modulo 64 (cpu::launch checks). Columns [col_begin, col_end) run as a
  // scalar head up to output 0's next 64-byte boundary, a middle of whole 64-byte blocks, and a
  // scalar tail. x86 has no unaligned streaming vector store (LLVM splits one into 8-byte movnti),
  // and the loop vectorizer will not widen a non-temporal scalar store it cannot prove aligned to
  // the vector's size. So the middle loop's stores are plain, addressed from a pointer to each
  // output's first aligned element whose low bits are masked (llvm.ptrmask: known zero); after
  // vectorization LLVM's alignment inference marks the vector stores aligned, and
  // mark_streaming_stores makes them non-temporal.
  void emit_streaming_columns(const std::vector<const kir::Output*>& elem_outs, const ElementBody& body) {
    Value* lo = col_begin_;
    Value* hi = col_end_;
    int first = elem_outs[0]->slot;
    DType dt = k_.operands[first].dtype;
    const uint64_t size = dtype_size(dt), per_block = 64 / size;
    Value* addr = b_.CreatePtrToInt(b_.CreateGEP(stype(dt), ptrs_[first], b_.CreateAdd(row_base_[first], lo)), i64_);
    Value* to_boundary = b_.CreateLShr(b_.CreateAnd(b_.CreateNeg(addr), b_.getInt64(63)), std::countr_zero(size));
    Value* a = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, hi, b_.CreateAdd(lo, to_boundary));
    Value* b = b_.CreateAdd(a, b_.CreateAnd(b_.CreateSub(hi, a), b_.getInt64(-static_cast<int64_t>(per_block))));
    auto columns = [&](Value* from, Value* to, bool middle) {
      col_begin_ = from;
      col_end_ = to;
      scalar_columns_ = !middle;
      std::vector<Value*> base = row_base_;
      std::vector<Value*> ptrs = ptrs_;
      if (middle) {
        for (const kir::Output* o : elem_outs) {
          // Masking the low bits of an address already aligned changes nothing but tells LLVM.
          Value* p = b_.CreateGEP(stype(k_.operands[o->slot].dtype), ptrs_[o->slot], b_.CreateAdd(row_base_[o->slot], a));
          ptrs_[o->slot] = b_.CreateIntrinsic(llvm::Intrinsic::ptrmask, {p->getType(), i64_}, {p, b_.getInt64(~int64_t{63})});
          base[o->slot] = b_.CreateNeg(a);
        }
      }
      emit_inner(0, base, b_.getInt64(0), {}, body);
      ptrs_ = ptrs;
    };
    columns(lo, a, false);
    columns(a, b, true);
    columns(b, hi, false);
    col_begin_ = lo;
    col_end_ = hi;
    scalar_columns_ = false;
  }

  // The output pass where elements are divided by row values (softmax's e / sum). Per row, the
  // divisor d is scaled by a power of two into [1, 2), d' = d / S, and r = 1/d' rounded; per
  // element q = a r is corrected by one remainder step, q' = q + (a - q d') r, and a / d = q' / S.
  // q' is the correctly rounded a / d' (Markstein's theorem: r rounded to nearest, q within an
  // ulp) when the remainder a - q d' is exact, which holds for |a| >= 2^-100 (float; 2^-960
  // double): smaller dividends are first scaled up by 2^64 (2^200), and the result back down.
  // |q| <= |a| never overflows, and the last multiply by a power of two is exact, or inf exactly
  // where a / d overflows. So the result is the division's wherever a / d is normal; a subnormal
  // result may be one unit off (rounded twice). a = 0, inf or NaN take q / S (the right signed
  // zero, inf or NaN). Rows whose divisor is outside [2^-64, 2^64] in magnitude (float; [2^-600,
  // 2^600] double), or zero, inf or NaN, take the plain pass with divisions.
  void emit_output_pass_dividing(const std::vector<const kir::Output*>& elem_outs) {
    recips_.clear();
    Value* ok = b_.getTrue();
    for (int i : plan_.row_divisions) {
      int d = k_.instrs[i].args[1];
      if (recips_.count(d)) continue;
      Value* dv = rowv(d);
      const DivConsts& k = div_consts(dv);
      auto* it = b_.getIntNTy(k.bits);
      Value* e = b_.CreateAnd(b_.CreateLShr(b_.CreateBitCast(dv, it), k.mant), k.emask);  // biased exponent
      Value* inv_s = b_.CreateBitCast(b_.CreateShl(b_.CreateSub(llvm::ConstantInt::get(it, 2 * k.bias), e), k.mant),
                                      dv->getType());  // 1/S = 2^-exponent
      Value* ds = b_.CreateFMul(dv, inv_s);
      recips_[d] = {ds, b_.CreateFDiv(fc(dv, 1.0), ds), inv_s, b_.CreateFMul(inv_s, fc(dv, std::ldexp(1.0, -k.tiny_scale)))};
      Value* ad = unary_intrinsic(llvm::Intrinsic::fabs, dv);
      ok = b_.CreateAnd(ok, b_.CreateAnd(b_.CreateFCmpOGE(ad, fc(dv, std::ldexp(1.0, -k.max_divisor_exp))),
                                         b_.CreateFCmpOLE(ad, fc(dv, std::ldexp(1.0, k.max_divisor_exp)))));
    }
    auto* fast = llvm::BasicBlock::Create(ctx_, "fastdiv", fn_);
    auto* slow = llvm::BasicBlock::Create(ctx_, "slowdiv", fn_);
    auto* done = llvm::BasicBlock::Create(ctx_, "divdone", fn_);
    b_.CreateCondBr(ok, fast, slow);
    b_.SetInsertPoint(fast);
    fast_div_ = true;
    emit_output_pass(elem_outs);
    fast_div_ = false;
    b_.CreateBr(done);
    b_.SetInsertPoint(slow);
    emit_output_pass(elem_outs);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
  }

  struct DivConsts {
    unsigned bits, mant;
    uint64_t bias, emask;
    int tiny_exp;         // dividends below 2^-tiny_exp are scaled up first
    int tiny_scale;       // by 2^tiny_scale
    int max_divisor_exp;  // the fast path's divisors: [2^-max, 2^max]
  };
  static const DivConsts& div_consts(Value* like) {
    static const DivConsts f32{32, 23, 127, 0xff, 100, 64, 64}, f64{64, 52, 1023, 0x7ff, 960, 200, 600};
    return like->getType()->isFloatTy() ? f32 : f64;
  }

  // a / d for row division i in the fast pass (see emit_output_pass_dividing).
  Value* fast_row_div(int i) {
    const Instr& in = k_.instrs[i];
    Value* a = elem(in.args[0]);
    auto [d, r, inv_s, inv_s_tiny] = recips_.at(in.args[1]);
    const DivConsts& k = div_consts(a);
    auto* it = b_.getIntNTy(k.bits);
    auto fma = [&](Value* x, Value* y, Value* z) { return b_.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {x, y, z}); };
    auto bits_of = [&](int exp) {
      double v = std::ldexp(1.0, exp);
      return llvm::ConstantInt::get(it, k.bits == 32 ? uint64_t{std::bit_cast<uint32_t>(static_cast<float>(v))} : std::bit_cast<uint64_t>(v));
    };
    // Classes from the magnitude's bits, by unsigned compares: finite and not zero; below 2^-tiny.
    Value* mag = b_.CreateAnd(b_.CreateBitCast(a, it), llvm::APInt::getSignedMaxValue(k.bits));
    Value* inf_bits = k.bits == 32 ? llvm::ConstantInt::get(it, std::bit_cast<uint32_t>(INFINITY)) : llvm::ConstantInt::get(it, std::bit_cast<uint64_t>(double(INFINITY)));
    Value* ordinary = b_.CreateICmpULT(b_.CreateSub(mag, llvm::ConstantInt::get(it, 1)), b_.CreateSub(inf_bits, llvm::ConstantInt::get(it, 1)));
    Value* tiny = b_.CreateICmpULT(mag, bits_of(-k.tiny_exp));
    Value* as = b_.CreateSelect(tiny, b_.CreateFMul(a, fc(a, std::ldexp(1.0, k.tiny_scale))), a);
    Value* q = b_.CreateFMul(as, r);
    Value* q1 = fma(fma(b_.CreateFNeg(q), d, as), r, q);
    Value* back = b_.CreateSelect(tiny, inv_s_tiny, inv_s);
    return round16(b_.CreateFMul(b_.CreateSelect(ordinary, q1, q), back), in.dtype);
  }

  void store_row_outputs() {
    for (const kir::Output& o : k_.outputs)
      if (k_.instrs[o.instr].row) store(o.slot, row_base_[o.slot], k_.operands[o.slot].dtype, rowv(o.instr));
  }

  // Per-operand offsets of the row's first element; forgets the previous row's values.
  void set_row_base(Value* row) {
    // Decompose the linear row index into outer indices (innermost outer dim varies fastest).
    std::vector<Value*> idx(k_.outer_rank);
    Value* rest = row;
    for (int d = k_.outer_rank - 1; d >= 0; --d) {
      if (d == 0) {
        idx[d] = rest;
      } else {
        idx[d] = b_.CreateSRem(rest, sizes_[d]);
        rest = b_.CreateSDiv(rest, sizes_[d]);
      }
    }
    row_base_.assign(k_.operands.size(), nullptr);
    for (size_t o = 0; o < k_.operands.size(); ++o) {
      Value* off = offsets_[o];
      for (int d = 0; d < k_.outer_rank; ++d) off = b_.CreateAdd(off, b_.CreateMul(idx[d], strides_[o][d]));
      row_base_[o] = off;
    }
    row_vals_.clear();
  }

  // Row values needed by the element cone of `root`, computed before the inner loop.
  void emit_row_deps(int root) {
    std::vector<int> stack{root};
    std::vector<bool> seen(k_.instrs.size(), false);
    std::vector<int> rows;
    while (!stack.empty()) {
      int i = stack.back();
      stack.pop_back();
      if (seen[i]) continue;
      seen[i] = true;
      if (k_.instrs[i].row) {
        rows.push_back(i);
        continue;
      }
      for (int a : k_.instrs[i].args) stack.push_back(a);
    }
    std::sort(rows.begin(), rows.end());
    for (int i : rows) rowv(i);
  }

  // ---- values

  Value* rowv(int i) {
    if (auto it = row_vals_.find(i); it != row_vals_.end()) return it->second;
    const Instr& in = k_.instrs[i];
    Value* v = compute(in, row_base_, /*row=*/true);
    row_vals_[i] = v;
    return v;
  }

  Value* elem(int i) {
    const Instr& in = k_.instrs[i];
    if (in.row) return row_vals_.at(i);
    if (auto it = elem_vals_.find(i); it != elem_vals_.end()) return it->second;
    Value* v;
    if (cache_ready_.count(i)) {
      int slot = cache_slot_.at(i);
      v = load(slot, elem_off_[slot], k_.operands[slot].dtype);
    } else if (fast_div_ && plan_.is_row_division(i)) {
      v = fast_row_div(i);
    } else {
      v = compute(in, elem_off_, /*row=*/false);
    }
    elem_vals_[i] = v;
    return v;
  }

  Value* arg(int i, bool row) { return row ? rowv(i) : elem(i); }

  Value* compute(const Instr& in, const std::vector<Value*>& off, bool row) {
    switch (in.kind) {
      case InstrKind::Load: return load(in.slot, off[in.slot], in.dtype);
      case InstrKind::Param: return param_value(in);
      case InstrKind::Gen: return generate(in, off[in.slot]);
      case InstrKind::Reduce: throw Error("llvm emitter: reduction used before it was computed (internal error)");
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

  Value* param_value(const Instr& in) {
    Value* bits = params_[in.slot];
    if (k_.params[in.slot] == kir::ParamKind::Float) {
      Value* d = b_.CreateBitCast(bits, b_.getDoubleTy());
      return convert(d, DType::Float64, in.dtype);
    }
    return convert(bits, DType::Int64, in.dtype);
  }

  // ---- generators (the same integer steps as codegen/ir/random.h)

  Value* splitmix(Value* seed, Value* index) {
    Value* z = b_.CreateAdd(seed, b_.CreateMul(b_.CreateAdd(index, b_.getInt64(1)), b_.getInt64(0x9E3779B97F4A7C15ull)));
    z = b_.CreateMul(b_.CreateXor(z, b_.CreateLShr(z, 30)), b_.getInt64(0xBF58476D1CE4E5B9ull));
    z = b_.CreateMul(b_.CreateXor(z, b_.CreateLShr(z, 27)), b_.getInt64(0x94D049BB133111EBull));
    return b_.CreateXor(z, b_.CreateLShr(z, 31));
  }

  Value* generate(const Instr& in, Value* index) {
    auto* f64 = b_.getDoubleTy();
    auto* f32 = b_.getFloatTy();
    if (in.op == Op::Arange) {
      Value* start = b_.CreateBitCast(params_[in.params[0]], f64);
      Value* step = b_.CreateBitCast(params_[in.params[1]], f64);
      Value* v = b_.CreateFAdd(start, b_.CreateFMul(b_.CreateSIToFP(index, f64), step));
      return convert(v, DType::Float64, in.dtype);
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

  // ---- math (elementwise ops: ops.cpp)

  Value* unary_intrinsic(llvm::Intrinsic::ID id, Value* x) { return b_.CreateUnaryIntrinsic(id, x); }
  Value* sqrt(Value* x) { return unary_intrinsic(llvm::Intrinsic::sqrt, x); }
  Value* fc(Value* like, double v) { return llvm::ConstantFP::get(like->getType(), v); }
  Value* ic(Value* like, int64_t v) { return llvm::ConstantInt::get(like->getType(), static_cast<uint64_t>(v), true); }
  Value* elementwise(Op op, const std::vector<Value*>& a, DType dt) { return ops_.elementwise(op, a, dt); }

  // ---- reductions

  // The accumulator of reduction `i` starts as init and is combined with element values (or, when
  // a row is split, with other chunks' accumulators) by step; finish turns it into the row value.
  std::vector<Value*> reduce_init(int i) {
    const Instr& in = k_.instrs[i];
    DType src = k_.instrs[in.args[0]].dtype;
    llvm::Type* t = ctype(src);
    bool fl = is_floating(src);
    Value* init;
    switch (in.op) {
      case Op::Sum: init = llvm::Constant::getNullValue(t); break;
      case Op::Prod: init = fl ? llvm::ConstantFP::get(t, 1.0) : llvm::ConstantInt::get(t, 1); break;
      case Op::Max:
      case Op::ArgMax:
        init = fl ? llvm::ConstantFP::getInfinity(t, true)
                  : src == DType::Bool ? llvm::ConstantInt::getFalse(ctx_)
                                       : llvm::ConstantInt::get(t, llvm::APInt::getSignedMinValue(t->getIntegerBitWidth()));
        break;
      default:
        init = fl ? llvm::ConstantFP::getInfinity(t, false)
                  : src == DType::Bool ? llvm::ConstantInt::getTrue(ctx_)
                                       : llvm::ConstantInt::get(t, llvm::APInt::getSignedMaxValue(t->getIntegerBitWidth()));
        break;
    }
    if (in.op == Op::ArgMax || in.op == Op::ArgMin) return {init, b_.getInt64(0)};
    return {init};
  }

  // cur combined with x (at linear index `index` for argmax/argmin, which x wins only when it is
  // strictly better, so the earlier of equal values stays). `reassoc` lets the loop vectorizer
  // keep one partial sum per lane; combining chunks does not use it.
  std::vector<Value*> reduce_step(int i, const std::vector<Value*>& cur, Value* x, Value* index, bool reassoc) {
    const Instr& in = k_.instrs[i];
    DType src = k_.instrs[in.args[0]].dtype;
    bool fl = is_floating(src);
    Value* c = cur[0];
    auto ra = [&](Value* v) {
      if (auto* inst = llvm::dyn_cast<llvm::Instruction>(v); inst && reassoc) inst->setHasAllowReassoc(true);
      return v;
    };
    switch (in.op) {
      case Op::Sum: return {fl ? ra(b_.CreateFAdd(c, x)) : b_.CreateAdd(c, x)};
      case Op::Prod:
        if (!fl) return {src == DType::Bool ? b_.CreateAnd(c, x) : b_.CreateMul(c, x)};
        return {ra(b_.CreateFMul(c, x))};
      case Op::Max:
        if (src == DType::Bool) return {b_.CreateOr(c, x)};
        return {b_.CreateBinaryIntrinsic(fl ? llvm::Intrinsic::maximum : llvm::Intrinsic::smax, c, x)};
      case Op::Min:
        if (src == DType::Bool) return {b_.CreateAnd(c, x)};
        return {b_.CreateBinaryIntrinsic(fl ? llvm::Intrinsic::minimum : llvm::Intrinsic::smin, c, x)};
      default: {
        // The first maximum (minimum) wins; the first NaN beats everything, like PyTorch.
        bool mx = in.op == Op::ArgMax;
        Value* better;
        if (fl) {
          Value* cmp = mx ? b_.CreateFCmpOGT(x, c) : b_.CreateFCmpOLT(x, c);
          better = b_.CreateAnd(b_.CreateFCmpORD(c, c), b_.CreateOr(b_.CreateFCmpUNO(x, x), cmp));
        } else if (src == DType::Bool) {
          better = mx ? b_.CreateICmpUGT(x, c) : b_.CreateICmpULT(x, c);
        } else {
          better = mx ? b_.CreateICmpSGT(x, c) : b_.CreateICmpSLT(x, c);
        }
        return {b_.CreateSelect(better, x, c), b_.CreateSelect(better, index, cur[1])};
      }
    }
  }

  Value* reduce_finish(int i, const std::vector<Value*>& acc) {
    const Instr& in = k_.instrs[i];
    DType src = k_.instrs[in.args[0]].dtype;
    if (in.op == Op::ArgMax || in.op == Op::ArgMin) return acc[1];
    Value* result = acc[0];
    if (is_floating(in.dtype)) return round16(result, in.dtype);
    if (in.dtype != src) return convert(result, src, in.dtype);
    return result;
  }

  // Accumulates reduction `i` over the inner elements [col_begin, col_end) of the current row.
  std::vector<Value*> reduce_loop(int i) {
    const Instr& in = k_.instrs[i];
    emit_row_deps(in.args[0]);
    int v = in.args[0];
    bool keep = cache_slot_.count(v) && !cache_ready_.count(v);
    std::vector<Value*> acc = emit_inner(0, row_base_, b_.getInt64(0), reduce_init(i), [&](std::vector<Value*> c) {
      Value* x = elem(v);
      if (keep) store(cache_slot_.at(v), elem_off_[cache_slot_.at(v)], k_.instrs[v].dtype, x);
      return reduce_step(i, c, x, lin_, /*reassoc=*/true);
    });
    if (keep) cache_ready_.insert(v);
    return acc;
  }

  void emit_reduction(int i) { row_vals_[i] = reduce_finish(i, reduce_loop(i)); }

  // ---- split rows (see SplitInfo): accumulators live in 16-byte slots, value then int64 index

  Value* slot_ptr(Value* base, int slot, int part) {
    return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base, static_cast<uint64_t>(16 * slot + 8 * part));
  }
  void store_acc(Value* base, int i, const std::vector<Value*>& acc) {
    int slot = split_.slot[static_cast<size_t>(i)];
    Value* v = acc[0];
    if (v->getType()->isIntegerTy(1)) v = b_.CreateZExt(v, b_.getInt8Ty());
    b_.CreateStore(v, slot_ptr(base, slot, 0));
    if (acc.size() > 1) b_.CreateStore(acc[1], slot_ptr(base, slot, 1));
  }
  std::vector<Value*> load_acc(Value* base, int i) {
    int slot = split_.slot[static_cast<size_t>(i)];
    std::vector<Value*> init = reduce_init(i);
    llvm::Type* t = init[0]->getType();
    bool boolean = t->isIntegerTy(1);
    Value* v = b_.CreateLoad(boolean ? b_.getInt8Ty() : t, slot_ptr(base, slot, 0));
    if (boolean) v = b_.CreateICmpNE(v, b_.getInt8(0));
    if (init.size() == 1) return {v};
    return {v, b_.CreateLoad(i64_, slot_ptr(base, slot, 1))};
  }

  // A switch over the reduction levels at the current point; `body(level)` fills each case, which
  // returns.
  void switch_levels(Value* level, const std::function<void(int)>& body) {
    auto* done = llvm::BasicBlock::Create(ctx_, "done", fn_);
    llvm::SwitchInst* sw = b_.CreateSwitch(level, done, static_cast<unsigned>(split_.levels));
    for (int l = 0; l < split_.levels; ++l) {
      auto* block = llvm::BasicBlock::Create(ctx_, "level" + std::to_string(l), fn_);
      sw->addCase(b_.getInt64(static_cast<uint64_t>(l)), block);
      b_.SetInsertPoint(block);
      body(l);
      b_.CreateRetVoid();
    }
    b_.SetInsertPoint(done);
    b_.CreateRetVoid();
  }

  // name_part(meta, ptrs, row, begin, end, level, state, out): the accumulators of the level's
  // reductions over the row's elements with outermost inner index in [begin, end), into out;
  // lower levels' results are read from state.
  void emit_part() {
    auto* ptr = b_.getPtrTy();
    begin_function(name_ + "_part", {ptr, ptr, i64_, i64_, i64_, i64_, ptr, ptr});
    col_begin_ = fn_->getArg(3);
    col_end_ = fn_->getArg(4);
    set_row_base(fn_->getArg(2));
    cache_slot_.clear();  // split rows have no element outputs to keep values in
    cache_ready_.clear();
    std::vector<Value*> base = row_base_;
    switch_levels(fn_->getArg(5), [&](int level) {
      row_base_ = base;
      row_vals_.clear();
      for (size_t i = 0; i < k_.instrs.size(); ++i) {
        int l = split_.level[i];
        int ii = static_cast<int>(i);
        if (l >= 0 && l < level) row_vals_[ii] = reduce_finish(ii, load_acc(fn_->getArg(6), ii));
      }
      for (size_t i = 0; i < k_.instrs.size(); ++i)
        if (split_.level[i] == level) store_acc(fn_->getArg(7), static_cast<int>(i), reduce_loop(static_cast<int>(i)));
    });
  }

  // name_comb(level, parts, nparts, state): the level's accumulators of parts[0..nparts), in that
  // order (chunks in the order of their elements), into state.
  void emit_combine() {
    auto* ptr = b_.getPtrTy();
    begin_function(name_ + "_comb", {i64_, ptr, i64_, ptr}, /*metadata=*/false);
    Value* parts = fn_->getArg(1);
    Value* nparts = fn_->getArg(2);
    Value* stride = b_.getInt64(static_cast<uint64_t>(16 * split_.reductions));
    switch_levels(fn_->getArg(0), [&](int level) {
      for (size_t i = 0; i < k_.instrs.size(); ++i) {
        if (split_.level[i] != level) continue;
        int ii = static_cast<int>(i);
        std::vector<Value*> acc = emit_loop(b_.getInt64(1), nparts, load_acc(parts, ii), "part",
                                            [&](Value* j, std::vector<Value*> cur) {
                                              Value* p = b_.CreateGEP(b_.getInt8Ty(), parts, b_.CreateMul(j, stride));
                                              std::vector<Value*> x = load_acc(p, ii);
                                              return reduce_step(ii, cur, x[0], x.size() > 1 ? x[1] : nullptr, false);
                                            },
                                            /*vectorize=*/false);
        store_acc(fn_->getArg(3), ii, acc);
      }
    });
  }

  // name_fin(meta, ptrs, row, state): the row's outputs from the combined accumulators.
  void emit_finish() {
    auto* ptr = b_.getPtrTy();
    begin_function(name_ + "_fin", {ptr, ptr, i64_, ptr});
    set_row_base(fn_->getArg(2));
    for (size_t i = 0; i < k_.instrs.size(); ++i)
      if (split_.level[i] >= 0) row_vals_[static_cast<int>(i)] = reduce_finish(static_cast<int>(i), load_acc(fn_->getArg(3), static_cast<int>(i)));
    store_row_outputs();
    b_.CreateRetVoid();
  }

  const kir::Kernel& k_;
  const EmitOptions& options_;
  std::string name_;
  llvm::LLVMContext& ctx_;
  std::unique_ptr<llvm::Module> m_;
  llvm::IRBuilder<> b_;
  OpBuilder ops_{b_};
  llvm::Function* fn_;
  llvm::Type* i64_;
  int rank_;
  Value* col_begin_ = nullptr;
  Value* col_end_ = nullptr;
  std::vector<Value*> sizes_, offsets_, ptrs_, params_;
  std::vector<std::vector<Value*>> strides_;
  std::vector<Value*> row_base_, elem_off_;
  Value* lin_ = nullptr;
  std::unordered_map<int, Value*> row_vals_, elem_vals_;
  RowPlan plan_;
  std::unordered_map<int, int> cache_slot_;  // element value -> output operand that keeps it (plan_.keep)
  std::unordered_set<int> cache_ready_;      // those already stored by an earlier pass
  bool fast_div_ = false;  // emitting the fast pass of emit_output_pass_dividing
  bool scalar_columns_ = false;  // the innermost loops now emitted are not to be vectorized
  // In it: divisor row value -> (the divisor scaled into [1, 2), its reciprocal, 1/S, and 1/S for
  // scaled-up tiny dividends).
  std::unordered_map<int, std::tuple<Value*, Value*, Value*, Value*>> recips_;
  SplitInfo split_;
};

}  // namespace

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
