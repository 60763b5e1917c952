// The LLVM emitter: row kernels whose rows are columns of memory (a reduction over an outer dim,
// `sum(x, {0})`), run a block of neighbouring rows at once so that the innermost loop walks the
// contiguous kept dim.
#include "codegen/cpu/llvm/emitter.h"

#include "codegen/kir/split.h"

namespace lf::cpu {

// Rows [row_begin, row_end) in blocks of up to kBlock rows that are neighbours along the last
// kept dim: per block, the accumulators of every reduction live in a stack array, one entry a
// row; the loops over the reduced dims run outside, and the innermost loop runs over the block's
// rows, combining each row's accumulator with its element (a vectorized loop over contiguous
// memory). Each row's elements are combined in their order, so a result depends on the sizes
// only. Then each row's outputs are computed from its accumulators.
void Emitter::emit_column_rows(Value* row_begin, Value* row_end, Value* out, Value* stride) {
  const int kept = k_.outer_rank - 1;
  std::vector<int> reds;
  int64_t row_bytes = 0;  // of accumulators
  for (size_t i = 0; i < k_.instrs.size(); ++i) {
    if (k_.instrs[i].kind != InstrKind::Reduce) continue;
    reds.push_back(static_cast<int>(i));
    for (Value* v : reduce_init(static_cast<int>(i))) row_bytes += std::max<int64_t>(1, v->getType()->getPrimitiveSizeInBits() / 8);
  }
  // Rows a block: as many as fit 16 KiB of accumulators (in L1 beside the streamed input), at
  // most 2048 (a block as wide as the kept dim reads each reduced index's stretch of memory once).
  const int64_t kBlock = std::clamp<int64_t>(16384 / std::max<int64_t>(row_bytes, 1), 256, 2048);
  // The accumulator arrays, in the entry block.
  std::vector<std::vector<llvm::AllocaInst*>> arrays;
  {
    llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    for (int i : reds) {
      std::vector<llvm::AllocaInst*> a;
      for (Value* v : reduce_init(i)) a.push_back(entry.CreateAlloca(v->getType(), entry.getInt64(kBlock)));
      arrays.push_back(a);
    }
  }
  // while (row < row_end): n = min(kBlock, row_end - row, size[kept] - row % size[kept]).
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* head = llvm::BasicBlock::Create(ctx_, "block", fn_);
  auto* body = llvm::BasicBlock::Create(ctx_, "block.body", fn_);
  auto* exit = llvm::BasicBlock::Create(ctx_, "block.exit", fn_);
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  llvm::PHINode* row = b_.CreatePHI(i64_, 2, "block.row");
  row->addIncoming(row_begin, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(row, row_end), body, exit);
  b_.SetInsertPoint(body);
  Value* to_edge = b_.CreateSub(sizes_[kept], b_.CreateSRem(row, sizes_[kept]));
  Value* n = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.getInt64(kBlock),
                                      b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateSub(row_end, row), to_edge));
  set_row_base(row);
  const std::vector<Value*> base = row_base_;
  auto each_row = [&](const char* name, const std::function<void(Value*)>& f) {
    emit_loop(b_.getInt64(0), n, {}, name, [&](Value* r, std::vector<Value*> c) {
      f(r);
      return c;
    });
  };
  each_row("acc.init", [&](Value* r) {
    for (size_t k = 0; k < reds.size(); ++k) {
      std::vector<Value*> init = reduce_init(reds[k]);
      for (size_t p = 0; p < init.size(); ++p) b_.CreateStore(init[p], b_.CreateGEP(init[p]->getType(), arrays[k][p], r));
    }
  });
  emit_inner(0, base, b_.getInt64(0), {}, [&](std::vector<Value*> c) {
    const std::vector<Value*> off = elem_off_;
    Value* lin = lin_;
    each_row("acc", [&](Value* r) {
      for (size_t o = 0; o < off.size(); ++o) elem_off_[o] = b_.CreateAdd(off[o], b_.CreateMul(r, strides_[o][kept]));
      lin_ = lin;
      elem_vals_.clear();
      for (size_t k = 0; k < reds.size(); ++k) {
        std::vector<Value*> cur;
        for (llvm::AllocaInst* a : arrays[k]) cur.push_back(b_.CreateLoad(a->getAllocatedType(), b_.CreateGEP(a->getAllocatedType(), a, r)));
        std::vector<Value*> next = reduce_step(reds[k], cur, elem(k_.instrs[reds[k]].args[0]), lin_, /*reassoc=*/false);
        for (size_t p = 0; p < next.size(); ++p)
          b_.CreateStore(next[p], b_.CreateGEP(arrays[k][p]->getAllocatedType(), arrays[k][p], r));
      }
    });
    return c;
  });
  each_row("acc.out", [&](Value* r) {
    Value* part = out ? b_.CreateGEP(b_.getInt8Ty(), out, b_.CreateMul(b_.CreateSub(b_.CreateAdd(row, r), row_begin), stride)) : nullptr;
    if (!part) set_row_base(b_.CreateAdd(row, r));
    for (size_t k = 0; k < reds.size(); ++k) {
      std::vector<Value*> acc;
      for (llvm::AllocaInst* a : arrays[k]) acc.push_back(b_.CreateLoad(a->getAllocatedType(), b_.CreateGEP(a->getAllocatedType(), a, r)));
      if (part) {
        store_acc(part, reds[k], acc);
      } else {
        row_vals_[reds[k]] = reduce_finish(reds[k], acc);
      }
    }
    if (!part) store_row_outputs();
  });
  row->addIncoming(b_.CreateAdd(row, n), b_.GetInsertBlock());
  b_.CreateBr(head);
  b_.SetInsertPoint(exit);
}

// name_cpart(meta, ptrs, row_begin, row_end, begin, end, out, stride): the accumulators of rows
// [row_begin, row_end) over the elements whose outermost reduced index is in [begin, end), in
// column blocks, row r's at out + (r - row_begin) * stride (SplitInfo's slots), for name_comb and
// name_fin to finish as a split row's.
void Emitter::emit_column_part() {
  auto* ptr = b_.getPtrTy();
  begin_function(name_ + "_cpart", {ptr, ptr, i64_, i64_, i64_, i64_, ptr, i64_});
  col_begin_ = fn_->getArg(4);
  col_end_ = fn_->getArg(5);
  cache_slot_.clear();
  cache_ready_.clear();
  emit_column_rows(fn_->getArg(2), fn_->getArg(3), fn_->getArg(6), fn_->getArg(7));
  b_.CreateRetVoid();
}

}  // namespace lf::cpu
