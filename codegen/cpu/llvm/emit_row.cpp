// The LLVM emitter: counted loops, and a row's passes (reductions, then outputs: streaming,
// dividing by a row value through one reciprocal).
#include "codegen/cpu/llvm/emitter.h"

namespace lf::cpu {

// A counted loop [lo, hi) in rotated form (guard, body, latch), carrying values through.
std::vector<Value*> Emitter::emit_loop(Value* lo, Value* hi, std::vector<Value*> init, const char* name, const Body& body,
                              bool vectorize) {
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
void Emitter::no_vectorize(llvm::BranchInst* back) {
  llvm::Metadata* hint[] = {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
                            llvm::ConstantAsMetadata::get(b_.getFalse())};
  llvm::MDNode* loop = llvm::MDNode::getDistinct(ctx_, {nullptr, llvm::MDNode::get(ctx_, hint)});
  loop->replaceOperandWith(0, loop);
  back->setMetadata(llvm::LLVMContext::MD_loop, loop);
}

// Loops over the inner dims (the first of them over [col_begin, col_end): a pointwise kernel's
// only inner dim, a row kernel's outermost reduced dim), keeping per-operand element offsets in
// elem_off_ and the linear inner index in lin_.
std::vector<Value*> Emitter::emit_inner(int d, std::vector<Value*> off, Value* lin, std::vector<Value*> carried,
                               const ElementBody& body) {
  int dim = k_.outer_rank + d;
  bool innermost = d == k_.inner_rank - 1;
  if (d == 0 && innermost && affine_columns_) return emit_affine_columns(off, lin, carried, body);
  Value* lo = d == 0 ? col_begin_ : b_.getInt64(0);
  Value* hi = d == 0 ? col_end_ : sizes_[dim];
  return emit_loop(lo, hi, carried, innermost ? "col" : "inner", [&](Value* i, std::vector<Value*> c) {
    std::vector<Value*> next_off(off.size());
    for (size_t o = 0; o < off.size(); ++o) next_off[o] = b_.CreateAdd(off[o], b_.CreateMul(i, strides_[o][dim]));
    Value* next_lin = b_.CreateAdd(b_.CreateMul(lin, sizes_[dim]), i);
    if (!innermost) return emit_inner(d + 1, next_off, next_lin, c, body);
    elem_off_ = next_off;
    lin_ = next_lin;
    col_ = i;
    elem_vals_.clear();
    return body(c);
  }, !(innermost && scalar_columns_));
}

void Emitter::emit_row(Value* row) {
  set_row_base(row);
  if (affine_kernel_ && !k_.has_scan()) {  // a scan's pass runs its columns in one loop, in order
    emit_affine_plan();
    affine_columns_ = true;
  }
  cache_slot_ = plan_.keep;
  cache_ready_.clear();
  emit_reductions();
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
  affine_columns_ = false;
}

// One pass writing every per-element output. A kernel with scans carries their running totals
// through the column loop, which then runs in order, one element at a time.
void Emitter::emit_output_pass(const std::vector<const kir::Output*>& elem_outs) {
  std::vector<int> scans;
  std::vector<Value*> init;
  for (size_t i = 0; i < k_.instrs.size(); ++i) {
    const Instr& in = k_.instrs[i];
    if (in.kind != InstrKind::Scan) continue;
    scans.push_back(static_cast<int>(i));
    llvm::Type* t = ctype(in.dtype);
    const double identity = kir::scan_identity(in.op);
    init.push_back(t->isFloatingPointTy() ? llvm::ConstantFP::get(t, identity)
                                          : llvm::ConstantInt::get(t, static_cast<uint64_t>(identity)));
    if (kir::scan_extreme(in.op)) init.push_back(extreme_start(in));  // carried right after its position
  }
  // The carried values of scan k start at carried[k]: one, or two for cummax and cummin.
  std::vector<size_t> carried;
  for (size_t k = 0, at = 0; k < scans.size(); ++k) {
    carried.push_back(at);
    at += kir::scan_extreme(k_.instrs[scans[k]].op) ? 2 : 1;
  }
  ElementBody body = [&](std::vector<Value*> c) {
    for (size_t k = 0; k < scans.size(); ++k) {
      scan_acc_[scans[k]] = c[carried[k]];
      if (kir::scan_extreme(k_.instrs[scans[k]].op)) scan_best_[scans[k]] = c[carried[k] + 1];
    }
    scan_next_.clear();
    scan_best_next_.clear();
    // Every value first, then the stores: an output may hold a kept value (row_plan).
    std::vector<Value*> vals;
    for (const kir::Output* o : elem_outs) vals.push_back(elem(o->instr));
    for (size_t j = 0; j < elem_outs.size(); ++j)
      store(elem_outs[j]->slot, elem_off_[elem_outs[j]->slot], k_.operands[elem_outs[j]->slot].dtype, vals[j]);
    for (size_t k = 0; k < scans.size(); ++k) {
      elem(scans[k]);  // a scan no output reads still advances
      c[carried[k]] = scan_next_.at(scans[k]);
      if (kir::scan_extreme(k_.instrs[scans[k]].op)) c[carried[k] + 1] = scan_best_next_.at(scans[k]);
    }
    return c;
  };
  if (!scans.empty()) {
    scalar_columns_ = true;
    emit_inner(0, row_base_, b_.getInt64(0), init, body);
    scalar_columns_ = false;
    return;
  }
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
void Emitter::emit_streaming_columns(const std::vector<const kir::Output*>& elem_outs, const ElementBody& body) {
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
    stream_middle_ = middle;
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
    stream_middle_ = false;
  };
  stream_slots_.clear();
  for (const kir::Output* o : elem_outs) stream_slots_.push_back(o->slot);
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
void Emitter::emit_output_pass_dividing(const std::vector<const kir::Output*>& elem_outs) {
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

const Emitter::DivConsts& Emitter::div_consts(Value* like) {
  static const DivConsts f32{32, 23, 127, 0xff, 100, 64, 64}, f64{64, 52, 1023, 0x7ff, 960, 200, 600};
  return like->getType()->isFloatTy() ? f32 : f64;
}

// a / d for row division i in the fast pass (see emit_output_pass_dividing).
Value* Emitter::fast_row_div(int i) {
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

void Emitter::store_row_outputs() {
  for (const kir::Output& o : k_.outputs)
    if (k_.instrs[o.instr].row) store(o.slot, row_base_[o.slot], k_.operands[o.slot].dtype, rowv(o.instr));
}

// Per-operand offsets of the row's first element; forgets the previous row's values.
void Emitter::set_row_base(Value* row) {
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
  // (A row of no columns checks its index too, as PyTorch's embedding checks every index.)
  row_gather_.clear();
  for (size_t i = 0; i < k_.instrs.size(); ++i) {
    const Instr& in = k_.instrs[i];
    if (in.kind == InstrKind::Gather && column_invariant(in.args[0]))
      row_gather_[static_cast<int>(i)] = gather_index(in, /*row=*/true);
  }
}

// Row values needed by the element cone of `root`, computed before the inner loop.
void Emitter::emit_row_deps(int root) {
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

}  // namespace lf::cpu
