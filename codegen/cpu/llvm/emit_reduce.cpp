// The LLVM emitter: reductions (init, step, finish) and the split-row functions (part, combine,
// finish) of SplitInfo.
#include "codegen/cpu/llvm/emitter.h"

#include <limits>

namespace lf::cpu {

// The accumulator of reduction `i` starts as init and is combined with element values (or, when
// a row is split, with other chunks' accumulators) by step; finish turns it into the row value.
std::vector<Value*> Emitter::reduce_init(int i) {
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
std::vector<Value*> Emitter::reduce_step(int i, const std::vector<Value*>& cur, Value* x, Value* index, bool reassoc) {
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
      Value* better = arg_better(i, x, c);
      return {b_.CreateSelect(better, x, c), b_.CreateSelect(better, index, cur[1])};
    }
  }
}

// The first maximum (minimum) wins; the first NaN beats everything, like PyTorch.
Value* Emitter::arg_better(int i, Value* x, Value* c) {
  const Instr& in = k_.instrs[i];
  DType src = k_.instrs[in.args[0]].dtype;
  bool mx = in.op == Op::ArgMax;
  if (is_floating(src)) {
    Value* cmp = mx ? b_.CreateFCmpOGT(x, c) : b_.CreateFCmpOLT(x, c);
    return b_.CreateAnd(b_.CreateFCmpORD(c, c), b_.CreateOr(b_.CreateFCmpUNO(x, x), cmp));
  }
  if (src == DType::Bool) return mx ? b_.CreateICmpUGT(x, c) : b_.CreateICmpULT(x, c);
  return mx ? b_.CreateICmpSGT(x, c) : b_.CreateICmpSLT(x, c);
}

// The extreme of a and b for argmax/argmin `i`: NaN-propagating for floats, as the index search
// wants (a chunk with a NaN has NaN as its extreme).
Value* Emitter::arg_extreme(int i, Value* a, Value* b) {
  const Instr& in = k_.instrs[i];
  DType src = k_.instrs[in.args[0]].dtype;
  bool mx = in.op == Op::ArgMax;
  if (src == DType::Bool) return mx ? b_.CreateOr(a, b) : b_.CreateAnd(a, b);
  llvm::Intrinsic::ID id = is_floating(src) ? (mx ? llvm::Intrinsic::maximum : llvm::Intrinsic::minimum)
                                            : (mx ? llvm::Intrinsic::smax : llvm::Intrinsic::smin);
  return b_.CreateBinaryIntrinsic(id, a, b);
}

Value* Emitter::reduce_finish(int i, const std::vector<Value*>& acc) {
  const Instr& in = k_.instrs[i];
  DType src = k_.instrs[in.args[0]].dtype;
  if (in.op == Op::ArgMax || in.op == Op::ArgMin) return acc[1];
  Value* result = acc[0];
  if (is_floating(in.dtype)) return round16(result, in.dtype);
  if (in.dtype != src) return convert(result, src, in.dtype);
  return result;
}

// Accumulates the reductions `is` over the inner elements [col_begin, col_end) of the current row,
// in one pass: an element value several of them read (a gather, x - mean) is computed once.
std::vector<std::vector<Value*>> Emitter::reduce_loop(const std::vector<int>& is) {
  bool arg = std::all_of(is.begin(), is.end(), [&](int i) { return k_.instrs[i].op == Op::ArgMax || k_.instrs[i].op == Op::ArgMin; });
  if (arg && k_.inner_rank == 1 && !affine_columns_ && !scalar_columns_) return arg_reduce_loop(is);
  std::vector<Value*> init;
  std::vector<size_t> at;  // where each reduction's accumulators start among the carried values, then the end
  std::vector<int> keep;   // element values stored for the output pass (row_plan), once each
  for (int i : is) {
    const int v = k_.instrs[i].args[0];
    emit_row_deps(v);
    at.push_back(init.size());
    for (Value* a : reduce_init(i)) init.push_back(a);
    if (cache_slot_.count(v) && !cache_ready_.count(v) && std::find(keep.begin(), keep.end(), v) == keep.end())
      keep.push_back(v);
  }
  at.push_back(init.size());
  auto part = [&](const std::vector<Value*>& all, size_t r) {
    return std::vector<Value*>(all.begin() + static_cast<std::ptrdiff_t>(at[r]), all.begin() + static_cast<std::ptrdiff_t>(at[r + 1]));
  };
  std::vector<Value*> acc = emit_inner(0, row_base_, b_.getInt64(0), init, [&](std::vector<Value*> c) {
    for (int v : keep) store(cache_slot_.at(v), elem_off_[cache_slot_.at(v)], k_.instrs[v].dtype, elem(v));
    for (size_t r = 0; r < is.size(); ++r) {
      std::vector<Value*> next = reduce_step(is[r], part(c, r), elem(k_.instrs[is[r]].args[0]), lin_, /*reassoc=*/true);
      std::copy(next.begin(), next.end(), c.begin() + static_cast<std::ptrdiff_t>(at[r]));
    }
    return c;
  });
  for (int v : keep) cache_ready_.insert(v);
  std::vector<std::vector<Value*>> out;
  for (size_t r = 0; r < is.size(); ++r) out.push_back(part(acc, r));
  return out;
}

// argmax and argmin over one inner dim, in chunks of kArgChunk columns: a select of the index
// keeps a loop scalar (one element per compare-and-select latency), so each chunk first takes its
// extreme in a vectorized loop (NaN-propagating), and only a chunk whose extreme beats the
// row's best so far (arg_better: strictly, or the first NaN) is read again, vectorized too, for
// the first column holding that extreme (the smallest column whose value equals it, or is NaN
// when it is). The earlier of equal values and the first NaN win, as in reduce_step; -0 and +0
// compare equal there and here.
std::vector<std::vector<Value*>> Emitter::arg_reduce_loop(const std::vector<int>& is) {
  constexpr int64_t kArgChunk = 1024;
  std::vector<Value*> init;
  std::vector<int> keep;
  for (int i : is) {
    const int v = k_.instrs[i].args[0];
    emit_row_deps(v);
    for (Value* a : reduce_init(i)) init.push_back(a);
    if (cache_slot_.count(v) && !cache_ready_.count(v) && std::find(keep.begin(), keep.end(), v) == keep.end())
      keep.push_back(v);
  }
  Value* lo = col_begin_;
  Value* hi = col_end_;
  Value* chunks = b_.CreateSDiv(b_.CreateAdd(b_.CreateSub(hi, lo), b_.getInt64(kArgChunk - 1)), b_.getInt64(kArgChunk));
  std::vector<Value*> acc = emit_loop(b_.getInt64(0), chunks, init, "chunk", [&](Value* j, std::vector<Value*> best) {
    col_begin_ = b_.CreateAdd(lo, b_.CreateMul(j, b_.getInt64(kArgChunk)));
    col_end_ = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateAdd(col_begin_, b_.getInt64(kArgChunk)), hi);
    std::vector<Value*> ext_init;
    for (int i : is) ext_init.push_back(reduce_init(i)[0]);
    std::vector<Value*> ext = emit_inner(0, row_base_, b_.getInt64(0), ext_init, [&](std::vector<Value*> c) {
      for (int v : keep) store(cache_slot_.at(v), elem_off_[cache_slot_.at(v)], k_.instrs[v].dtype, elem(v));
      for (size_t r = 0; r < is.size(); ++r) c[r] = arg_extreme(is[r], c[r], elem(k_.instrs[is[r]].args[0]));
      return c;
    });
    for (size_t r = 0; r < is.size(); ++r) {
      const int i = is[r];
      Value* m = ext[r];
      llvm::BasicBlock* pre = b_.GetInsertBlock();
      auto* search = llvm::BasicBlock::Create(ctx_, "argsearch", fn_);
      auto* next = llvm::BasicBlock::Create(ctx_, "argnext", fn_);
      b_.CreateCondBr(arg_better(i, m, best[2 * r]), search, next);
      b_.SetInsertPoint(search);
      // The column within the chunk, as an int32: twice the lanes of an int64 a vector.
      Value* none = b_.getInt32(std::numeric_limits<int32_t>::max());
      Value* m_nan = m->getType()->isFloatingPointTy() ? b_.CreateFCmpUNO(m, m) : nullptr;
      Value* rel = emit_inner(0, row_base_, b_.getInt64(0), {none}, [&](std::vector<Value*> c) {
        Value* x = elem(k_.instrs[i].args[0]);
        Value* hit = m_nan ? b_.CreateOr(b_.CreateFCmpOEQ(x, m), b_.CreateAnd(m_nan, b_.CreateFCmpUNO(x, x)))
                           : b_.CreateICmpEQ(x, m);
        Value* col = b_.CreateTrunc(b_.CreateSub(lin_, col_begin_), b_.getInt32Ty());
        return std::vector<Value*>{b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, c[0], b_.CreateSelect(hit, col, none))};
      })[0];
      Value* at = b_.CreateAdd(col_begin_, b_.CreateZExt(rel, i64_));
      llvm::BasicBlock* found = b_.GetInsertBlock();
      b_.CreateBr(next);
      b_.SetInsertPoint(next);
      llvm::PHINode* v = b_.CreatePHI(m->getType(), 2);
      v->addIncoming(best[2 * r], pre);
      v->addIncoming(m, found);
      llvm::PHINode* idx = b_.CreatePHI(i64_, 2);
      idx->addIncoming(best[2 * r + 1], pre);
      idx->addIncoming(at, found);
      best[2 * r] = v;
      best[2 * r + 1] = idx;
    }
    return best;
  });
  col_begin_ = lo;
  col_end_ = hi;
  for (int v : keep) cache_ready_.insert(v);
  std::vector<std::vector<Value*>> out;
  for (size_t r = 0; r < is.size(); ++r) out.push_back({acc[2 * r], acc[2 * r + 1]});
  return out;
}

std::vector<std::vector<int>> Emitter::level_passes(const std::vector<int>& levels, int level) const {
  std::vector<int> plain, arg;
  for (size_t i = 0; i < levels.size(); ++i) {
    if (levels[i] != level) continue;
    const Op op = k_.instrs[i].op;
    (op == Op::ArgMax || op == Op::ArgMin ? arg : plain).push_back(static_cast<int>(i));
  }
  std::vector<std::vector<int>> passes;
  for (std::vector<int>* is : {&plain, &arg})
    if (!is->empty()) passes.push_back(std::move(*is));
  return passes;
}

void Emitter::emit_reductions() {
  const std::vector<int> level = kir::reduction_levels(k_);
  const int levels = level.empty() ? 0 : *std::max_element(level.begin(), level.end()) + 1;
  for (int l = 0; l < levels; ++l) {
    for (const std::vector<int>& is : level_passes(level, l)) {
      std::vector<std::vector<Value*>> acc = reduce_loop(is);
      for (size_t r = 0; r < is.size(); ++r) row_vals_[is[r]] = reduce_finish(is[r], acc[r]);
    }
  }
}

Value* Emitter::slot_ptr(Value* base, int slot, int part) {
  return b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), base, static_cast<uint64_t>(16 * slot + 8 * part));
}

void Emitter::store_acc(Value* base, int i, const std::vector<Value*>& acc) {
  int slot = split_.slot[static_cast<size_t>(i)];
  Value* v = acc[0];
  if (v->getType()->isIntegerTy(1)) v = b_.CreateZExt(v, b_.getInt8Ty());
  b_.CreateStore(v, slot_ptr(base, slot, 0));
  if (acc.size() > 1) b_.CreateStore(acc[1], slot_ptr(base, slot, 1));
}

std::vector<Value*> Emitter::load_acc(Value* base, int i) {
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
void Emitter::switch_levels(Value* level, const std::function<void(int)>& body) {
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
void Emitter::emit_part() {
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
    for (const std::vector<int>& is : level_passes(split_.level, level)) {
      std::vector<std::vector<Value*>> acc = reduce_loop(is);
      for (size_t r = 0; r < is.size(); ++r) store_acc(fn_->getArg(7), is[r], acc[r]);
    }
  });
}

// name_comb(level, parts, nparts, state): the level's accumulators of parts[0..nparts), in that
// order (chunks in the order of their elements), into state.
void Emitter::emit_combine() {
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
void Emitter::emit_finish() {
  auto* ptr = b_.getPtrTy();
  begin_function(name_ + "_fin", {ptr, ptr, i64_, ptr});
  set_row_base(fn_->getArg(2));
  for (size_t i = 0; i < k_.instrs.size(); ++i)
    if (split_.level[i] >= 0) row_vals_[static_cast<int>(i)] = reduce_finish(static_cast<int>(i), load_acc(fn_->getArg(3), static_cast<int>(i)));
  store_row_outputs();
  b_.CreateRetVoid();
}

}  // namespace lf::cpu
