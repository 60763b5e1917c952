// The LLVM emitter's class (internal to the plugin): its members are defined in emit.cpp (types,
// metadata, values, generators), emit_row.cpp (loops and a row's passes) and emit_reduce.cpp
// (reductions and split rows). emit.h is the interface.
//
// Kernel IR -> LLVM IR. The shape of the generated function:
//
//   for row in [row_begin, row_end):            // outer dims, decomposed from a linear row index
//     base[o] = offset[o] + sum(outer index * stride[o])
//     for each reduction: acc = init; for inner elements: acc = combine(acc, element value)
//     for inner elements: store element outputs
//     store row outputs
//
// Inner loops are simple counted loops over strided pointers, so LLVM's loop vectorizer sees them;
// float32 exp, log, tanh, sigmoid, erf and their kin are inline code (math.cpp), the other
// transcendentals libm calls marked pure, which the vectorizer maps to libmvec's vector forms.
#pragma once

#include "codegen/cpu/llvm/emit.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "codegen/cpu/llvm/math.h"
#include "codegen/cpu/llvm/ops.h"
#include "lazyfuse/types.h"

namespace lf::cpu {

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
    classify_affine();
  }

  std::unique_ptr<llvm::Module> run() {
    auto* ptr = b_.getPtrTy();
    begin_function(name_, {ptr, ptr, i64_, i64_, i64_, i64_});
    Value* row_begin = fn_->getArg(2);
    Value* row_end = fn_->getArg(3);
    col_begin_ = fn_->getArg(4);
    col_end_ = fn_->getArg(5);
    if (kir::column_blocks(k_)) {
      emit_column_rows(row_begin, row_end);
    } else {
      emit_loop(row_begin, row_end, {}, "row", [&](Value* row, std::vector<Value*> carried) {
        emit_row(row);
        return carried;
      });
    }
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
      if (kir::column_blocks(k_)) emit_column_part();
    }
    return std::move(m_);
  }

 private:
  // ---- types and conversions

  llvm::Type* ctype(DType d);
  llvm::Type* stype(DType d);

  // float32 -> bfloat16 bits, round to nearest even, NaN kept quiet.
  Value* to_bf16_bits(Value* f);
  Value* from_bf16_bits(Value* h);
  // Rounds a float32 compute value to a 16-bit dtype and back, as storing would.
  Value* round16(Value* v, DType d);

  Value* load(int slot, Value* offset, DType d);
  void store(int slot, Value* offset, DType d, Value* v);

  // Converts a compute value of dtype `from` to dtype `to` with the reference executor's rules
  // (float to integer saturates, NaN gives 0; anything to bool is "!= 0").
  Value* convert(Value* v, DType from, DType to);

  // ---- metadata: sizes, offsets, strides and parameters, loaded once at entry

  Value* meta(int64_t i);

  // Creates an external function whose first two parameters (if any) are meta and ptrs, and
  // loads the metadata in its entry block.
  void begin_function(const std::string& name, std::vector<llvm::Type*> params, bool metadata = true);

  void load_metadata();

  // ---- loops

  using Body = std::function<std::vector<Value*>(Value* index, std::vector<Value*> carried)>;

  // A counted loop [lo, hi) in rotated form (guard, body, latch), carrying values through.
  std::vector<Value*> emit_loop(Value* lo, Value* hi, std::vector<Value*> init, const char* name, const Body& body,
                                bool vectorize = true);

  // A short loop (a row's chunk accumulators, a streaming pass's head and tail): not worth
  // vectorizer work.
  void no_vectorize(llvm::BranchInst* back);

  using ElementBody = std::function<std::vector<Value*>(std::vector<Value*> carried)>;

  // Loops over the inner dims (the first of them over [col_begin, col_end): a pointwise kernel's
  // only inner dim, a row kernel's outermost reduced dim), keeping per-operand element offsets in
  // elem_off_ and the linear inner index in lin_.
  std::vector<Value*> emit_inner(int d, std::vector<Value*> off, Value* lin, std::vector<Value*> carried,
                                 const ElementBody& body);

  // ---- one row

  void emit_row(Value* row);

  // One pass writing every per-element output.
  void emit_output_pass(const std::vector<const kir::Output*>& elem_outs);

  // The output pass of a streaming-stores kernel (EmitOptions::stream_stores): one inner dim, element outputs of one storage size
  // whose addresses agree modulo 64 (cpu::launch checks). Columns [col_begin, col_end) run as a
  // scalar head up to output 0's next 64-byte boundary, a middle of whole 64-byte blocks, and a
  // scalar tail. x86 has no unaligned streaming vector store (LLVM splits one into 8-byte movnti),
  // and the loop vectorizer will not widen a non-temporal scalar store it cannot prove aligned to
  // the vector's size. So the middle loop's stores are plain, addressed from a pointer to each
  // output's first aligned element whose low bits are masked (llvm.ptrmask: known zero); after
  // vectorization LLVM's alignment inference marks the vector stores aligned, and
  // mark_streaming_stores makes them non-temporal.
  void emit_streaming_columns(const std::vector<const kir::Output*>& elem_outs, const ElementBody& body);

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
  void emit_output_pass_dividing(const std::vector<const kir::Output*>& elem_outs);

  struct DivConsts {
    unsigned bits, mant;
    uint64_t bias, emask;
    int tiny_exp;         // dividends below 2^-tiny_exp are scaled up first
    int tiny_scale;       // by 2^tiny_scale
    int max_divisor_exp;  // the fast path's divisors: [2^-max, 2^max]
  };
  static const DivConsts& div_consts(Value* like);

  // a / d for row division i in the fast pass (see emit_output_pass_dividing).
  Value* fast_row_div(int i);

  void store_row_outputs();

  // Per-operand offsets of the row's first element; forgets the previous row's values.
  void set_row_base(Value* row);

  // Row values needed by the element cone of `root`, computed before the inner loop.
  void emit_row_deps(int root);

  // ---- rows that are columns of memory (emit_columns.cpp: `sum(x, {0})`)

  // With `out`, each row's accumulators are stored at out + (row - row_begin) * stride instead
  // of its outputs (emit_column_part).
  void emit_column_rows(Value* row_begin, Value* row_end, Value* out = nullptr, Value* stride = nullptr);
  void emit_column_part();

  // ---- a row's columns as border and affine interior (emit_affine.cpp: stencils' remaps)

  void classify_affine();
  void emit_affine_plan();
  Value* interior_elem(int i);
  std::vector<Value*> emit_affine_columns(std::vector<Value*> off, Value* lin, std::vector<Value*> carried,
                                          const ElementBody& body);

  // ---- values

  Value* rowv(int i);

  Value* elem(int i);

  Value* arg(int i, bool row) { return row ? rowv(i) : elem(i); }

  Value* compute(const Instr& in, const std::vector<Value*>& off, bool row);

  Value* param_value(const Instr& in);

  Value* gather(const Instr& in, const std::vector<Value*>& off, bool row);

  // A gather's index, wrapped (negative from the end) and checked: an index out of range is
  // reported in the error operand and 0 used instead.
  Value* gather_index(const Instr& in, bool row);

  // Whether instruction `i` has one value across a row's columns and is known at the row's start:
  // loads of an operand that does not move along the inner dims (stride 0: embedding's token id),
  // params, and ops of them; not a reduction's value (an argmin's row, read by a gather after it).
  bool column_invariant(int i);

  // ---- generators (the same integer steps as codegen/ir/random.h)

  Value* splitmix(Value* seed, Value* index);

  Value* generate(const Instr& in, Value* index);

  // ---- math (elementwise ops: ops.cpp)

  Value* unary_intrinsic(llvm::Intrinsic::ID id, Value* x) { return b_.CreateUnaryIntrinsic(id, x); }
  Value* sqrt(Value* x) { return unary_intrinsic(llvm::Intrinsic::sqrt, x); }
  Value* fc(Value* like, double v) { return llvm::ConstantFP::get(like->getType(), v); }
  Value* ic(Value* like, int64_t v) { return llvm::ConstantInt::get(like->getType(), static_cast<uint64_t>(v), true); }
  Value* elementwise(Op op, const std::vector<Value*>& a, DType dt) { return ops_.elementwise(op, a, dt); }
  Value* logaddexp(Value* a, Value* b, DType dt);

  // ---- reductions

  // The accumulator of reduction `i` starts as init and is combined with element values (or, when
  // a row is split, with other chunks' accumulators) by step; finish turns it into the row value.
  std::vector<Value*> reduce_init(int i);

  // cur combined with x (at linear index `index` for argmax/argmin, which x wins only when it is
  // strictly better, so the earlier of equal values stays). `reassoc` lets the loop vectorizer
  // keep one partial sum per lane; combining chunks does not use it.
  std::vector<Value*> reduce_step(int i, const std::vector<Value*>& cur, Value* x, Value* index, bool reassoc);

  Value* reduce_finish(int i, const std::vector<Value*>& acc);

  // argmax/argmin `i`: whether x beats the best so far c (strictly, or the first NaN).
  Value* arg_better(int i, Value* x, Value* c);
  // argmax/argmin `i`: the extreme of a and b (NaN-propagating for floats).
  Value* arg_extreme(int i, Value* a, Value* b);

  // argmax and argmin `is` over one inner dim, in chunks: a vectorized pass for each chunk's
  // extreme, then, only where it beats the best so far, a vectorized search of the chunk for the
  // first column that holds it.
  std::vector<std::vector<Value*>> arg_reduce_loop(const std::vector<int>& is);

  // Accumulates the reductions `is` (of one level: none reads another's row value) over the inner
  // elements [col_begin, col_end) of the current row, in one pass; their accumulators, in order.
  std::vector<std::vector<Value*>> reduce_loop(const std::vector<int>& is);

  // The reductions at `level` (of `levels`, per instruction) in the passes over the row they
  // share: the others in one (var's sums of x - mean and of its squares), then argmax and argmin
  // in one of their own, whose index select keeps a loop scalar, which would hold back the rest.
  std::vector<std::vector<int>> level_passes(const std::vector<int>& levels, int level) const;

  // The row values of every reduction, level by level (level_passes).
  void emit_reductions();

  // ---- split rows (see SplitInfo): accumulators live in 16-byte slots, value then int64 index

  Value* slot_ptr(Value* base, int slot, int part);
  void store_acc(Value* base, int i, const std::vector<Value*>& acc);
  std::vector<Value*> load_acc(Value* base, int i);

  // A switch over the reduction levels at the current point; `body(level)` fills each case, which
  // returns.
  void switch_levels(Value* level, const std::function<void(int)>& body);

  // name_part(meta, ptrs, row, begin, end, level, state, out): the accumulators of the level's
  // reductions over the row's elements with outermost inner index in [begin, end), into out;
  // lower levels' results are read from state.
  void emit_part();

  // name_comb(level, parts, nparts, state): the level's accumulators of parts[0..nparts), in that
  // order (chunks in the order of their elements), into state.
  void emit_combine();

  // name_fin(meta, ptrs, row, state): the row's outputs from the combined accumulators.
  void emit_finish();

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
  // Per gather whose index is column_invariant: the checked index, computed once at the row's
  // start (set_row_base), so the column loops hold no index check and vectorize.
  std::unordered_map<int, Value*> row_gather_;
  std::vector<signed char> column_invariant_;  // memo: -1 unknown, else 0 or 1
  RowPlan plan_;
  std::unordered_map<int, int> cache_slot_;  // element value -> output operand that keeps it (plan_.keep)
  std::unordered_set<int> cache_ready_;      // those already stored by an earlier pass
  bool fast_div_ = false;  // emitting the fast pass of emit_output_pass_dividing
  bool scalar_columns_ = false;  // the innermost loops now emitted are not to be vectorized
  // In it: divisor row value -> (the divisor scaled into [1, 2), its reciprocal, 1/S, and 1/S for
  // scaled-up tiny dividends).
  std::unordered_map<int, std::tuple<Value*, Value*, Value*, Value*>> recips_;
  SplitInfo split_;
  // Affine columns (emit_affine.cpp): per instruction, index math affine in the column on the
  // row's interior; remaps read there at base + c * step.
  std::vector<char> affine_, fast_remap_;
  bool affine_kernel_ = false;   // some remap reads at affine offsets: rows split their columns
  bool affine_columns_ = false;  // emit_inner's first inner dim splits into border and interior
  bool in_interior_ = false;     // emitting the interior loop
  Value* col_ = nullptr;         // the innermost loop's column
  Value* probe_ = nullptr;
  Value* interior_lo_ = nullptr;
  Value* interior_hi_ = nullptr;
  std::unordered_map<int, Value*> aff_val_, aff_slope_, remap_base_, remap_step_;
  // Per fast remap, whether the interior reads it (an i1 per row): a where whose condition is
  // constant on the interior reads one branch only (a cat's other parts, clamped: step 0 there).
  std::unordered_map<int, Value*> remap_live_;
  bool in_unit_ = false;  // emitting the interior version whose live remaps all have step 1
  bool stream_middle_ = false;    // emitting the aligned middle of emit_streaming_columns
  std::vector<int> stream_slots_;  // its element outputs
  // Scans (kir::InstrKind::Scan): the running totals carried through the output pass's column
  // loop, at the current element before (scan_acc_) and after (scan_next_) it; for cummax and
  // cummin (kir::scan_extreme) the totals are positions, and the extreme's value is carried
  // beside them (scan_best_, scan_best_next_).
  std::unordered_map<int, Value*> scan_acc_, scan_next_, scan_best_, scan_best_next_;
  Value* extreme_start(const kir::Instr& in);  // the extreme's value before a row's first element
};

}  // namespace lf::cpu
