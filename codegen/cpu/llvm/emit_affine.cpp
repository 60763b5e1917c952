// The LLVM emitter: a row's columns split into a border and an interior where remap indices are
// affine in the column (stencils: index_put regions, shifted slices, pad's edges, flip, roll).
//
// A remap's indices are index math over arange: clamps (maximum/minimum), abs, comparisons and
// wheres that pick a region. Computed per element, that math (a float64 arange, two clamps, a
// compare per dim) and the multiply-add of the remapped offset keep LLVM from seeing consecutive
// addresses: the loop stays scalar, ~3.5x behind Eigen on a Jacobi step. But along a row each such
// value is piecewise affine in the column c, and every piece is decided by the side of an affine
// quantity: maximum(a, b) by a - b >= 0, abs(a) by a >= 0, a < b by a - b < 0, a == b by the sign
// of a - b. So, per row:
//
//   1. every index value v and its slope s are evaluated at a probe column p (the middle of the
//      row's columns), the slope by the rules of each op in the mode the sides at p select;
//   2. each deciding quantity q(c) = q(p) + s_q (c - p) stays on its side on an interval of c
//      (solved in integers); the interior is the intersection of those intervals with the row's
//      columns. On it every index value is exactly v(p) + s (c - p) (by induction over the
//      instructions: each keeps its mode there), bools are constant, and a remap's offset is
//      base + c * step with base and step computed once per row;
//   3. the columns before and after the interior run the general code (scalar loops: they are the
//      border), the interior a loop whose loads are affine in c, emitted twice: for every step 1
//      (contiguous loads, which LLVM vectorizes) and for any steps (flip's -1, a transposed source).
//
// Exactness: integer index math is exact in int64 (wrapping, as the general code), and an int64
// arange is computed by the general code in float64 (start + index * step): it is taken as affine
// only where that is exact (start and step integral, |start| <= 2^50, |step| <= 2^18, |index| <=
// 2^32 at the row's ends), otherwise the row has no interior. A product of two column-dependent
// values is not affine: no interior either. So the interior computes the same values as the
// general code, bit for bit.
#include "codegen/cpu/llvm/emitter.h"

namespace lf::cpu {

namespace {

bool integer_index(DType d) { return d == DType::Int64; }
bool index_dtype(DType d) { return d == DType::Int64 || d == DType::Bool; }

}  // namespace

// Which instructions are column-affine index math (affine_) and which remaps read at affine
// offsets (fast_remap_); the split is emitted only for pointwise kernels with one inner dim that
// have such a remap (other kernels' code is unchanged).
void Emitter::classify_affine() {
  size_t n = k_.instrs.size();
  affine_.assign(n, 0);
  fast_remap_.assign(n, 0);
  if (k_.row || k_.inner_rank != 1) return;
  const int dim = k_.outer_rank;
  auto aff = [&](int a) { return affine_[static_cast<size_t>(a)] != 0; };
  auto dt = [&](int a) { return k_.instrs[static_cast<size_t>(a)].dtype; };
  for (size_t i = 0; i < n; ++i) {
    const Instr& in = k_.instrs[i];
    if (in.row || !index_dtype(in.dtype)) continue;
    bool ok = false;
    bool args = std::all_of(in.args.begin(), in.args.end(), aff);
    switch (in.kind) {
      case InstrKind::Gen: ok = in.op == Op::Arange && in.dtype == DType::Int64; break;
      case InstrKind::Param: ok = true; break;
      case InstrKind::Load: ok = k_.operands[static_cast<size_t>(in.slot)].strides[static_cast<size_t>(dim)] == kir::StrideClass::Zero; break;
      case InstrKind::Op:
        if (!args) break;
        switch (in.op) {
          case Op::Copy: case Op::Add: case Op::Sub: case Op::Mul: case Op::Neg: case Op::Abs:
          case Op::Maximum: case Op::Minimum:
            ok = integer_index(in.dtype);
            break;
          case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge:
            ok = dt(in.args[0]) == dt(in.args[1]);
            break;
          case Op::LogicalAnd: case Op::LogicalOr: case Op::LogicalNot: ok = true; break;
          case Op::Where: ok = true; break;
          case Op::Cast: ok = dt(in.args[0]) != in.dtype; break;  // bool <-> int64
          default: break;
        }
        break;
      default: break;
    }
    affine_[i] = ok;
  }
  for (size_t i = 0; i < n; ++i) {
    const Instr& in = k_.instrs[i];
    if (in.kind != InstrKind::Remap || in.row) continue;
    bool ok = !in.args.empty();
    for (int a : in.args) ok = ok && aff(a) && integer_index(dt(a));
    fast_remap_[i] = ok;
    affine_kernel_ = affine_kernel_ || ok;
  }
}

// The row's interior [interior_lo_, interior_hi_) and the affine forms of its index values (see
// the top of this file). Emitted after set_row_base, before the row's passes.
void Emitter::emit_affine_plan() {
  const int dim = k_.outer_rank;
  Value* cb = col_begin_;
  Value* ce = col_end_;
  Value* p = b_.CreateAdd(cb, b_.CreateSDiv(b_.CreateSub(ce, cb), b_.getInt64(2)));
  probe_ = p;
  elem_off_.assign(k_.operands.size(), nullptr);
  for (size_t o = 0; o < k_.operands.size(); ++o)
    elem_off_[o] = b_.CreateAdd(row_base_[o], b_.CreateMul(p, strides_[o][static_cast<size_t>(dim)]));
  lin_ = p;
  elem_vals_.clear();
  aff_val_.clear();
  aff_slope_.clear();
  Value* zero = b_.getInt64(0);
  const int64_t big = int64_t{1} << 62;
  Value* ok = b_.getTrue();
  Value* lo_t = b_.getInt64(-big);  // the interior as c - p in [lo_t, hi_t]
  Value* hi_t = b_.getInt64(big);
  auto smax = [&](Value* a, Value* c) { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, a, c); };
  auto smin = [&](Value* a, Value* c) { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, c); };
  auto iabs = [&](Value* a) { return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, a, b_.getFalse()); };
  // Narrows [lo_t, hi_t] to the t where q(p) + s t has the sign of q(p). With s != 0: if q(p) = 0,
  // only t = 0; else, with A = sign(q(p)) s and B = |q(p)| >= 1, A t >= 1 - B holds for
  // t >= -D (A > 0) or t <= D (A < 0), D = (B - 1) / |A| (both sides non-negative).
  auto keep_sign = [&](Value* q, Value* s) {
    Value* s0 = b_.CreateICmpEQ(s, zero);
    Value* q0 = b_.CreateICmpEQ(q, zero);
    Value* as = b_.CreateSelect(s0, b_.getInt64(1), iabs(s));
    Value* d = b_.CreateSDiv(smax(b_.CreateSub(iabs(q), b_.getInt64(1)), zero), as);
    Value* a_pos = b_.CreateICmpEQ(b_.CreateICmpSGT(q, zero), b_.CreateICmpSGT(s, zero));
    Value* lo_q = b_.CreateSelect(q0, zero, b_.CreateSelect(a_pos, b_.CreateNeg(d), lo_t));
    Value* hi_q = b_.CreateSelect(q0, zero, b_.CreateSelect(a_pos, hi_t, d));
    lo_t = b_.CreateSelect(s0, lo_t, smax(lo_t, lo_q));
    hi_t = b_.CreateSelect(s0, hi_t, smin(hi_t, hi_q));
  };
  // Narrows [lo_t, hi_t] to the t where q(p) + s t stays on q(p)'s side of {q >= 0} / {q < 0}
  // (maximum's and abs's two modes; a strict comparison's two values). On the negative side that
  // is r = -q - 1 >= 0, slope -s. r(p) + s_r t >= 0 with r(p) >= 0 holds for t >= -(r(p) / s_r)
  // (s_r > 0) or t <= r(p) / |s_r| (s_r < 0).
  auto keep_side = [&](Value* q, Value* s) {
    Value* neg = b_.CreateICmpSLT(q, zero);
    Value* r = b_.CreateSelect(neg, b_.CreateSub(b_.CreateNeg(q), b_.getInt64(1)), q);
    Value* sr = b_.CreateSelect(neg, b_.CreateNeg(s), s);
    Value* s0 = b_.CreateICmpEQ(sr, zero);
    Value* d = b_.CreateSDiv(r, b_.CreateSelect(s0, b_.getInt64(1), iabs(sr)));
    Value* up = b_.CreateICmpSGT(sr, zero);
    lo_t = b_.CreateSelect(b_.CreateAnd(b_.CreateNot(s0), up), smax(lo_t, b_.CreateNeg(d)), lo_t);
    hi_t = b_.CreateSelect(b_.CreateAnd(b_.CreateNot(s0), b_.CreateNot(up)), smin(hi_t, d), hi_t);
  };
  for (size_t i = 0; i < k_.instrs.size(); ++i) {
    if (!affine_[i]) continue;
    const Instr& in = k_.instrs[i];
    Value* v = elem(static_cast<int>(i));  // the general code at the probe column
    auto val = [&](int k) { return aff_val_.at(in.args[static_cast<size_t>(k)]); };
    auto sl = [&](int k) { return aff_slope_.at(in.args[static_cast<size_t>(k)]); };
    Value* s = zero;
    switch (in.kind) {
      case InstrKind::Gen: {
        auto* f64 = b_.getDoubleTy();
        Value* start = b_.CreateBitCast(params_[static_cast<size_t>(in.params[0])], f64);
        Value* step = b_.CreateBitCast(params_[static_cast<size_t>(in.params[1])], f64);
        auto integral_within = [&](Value* x, double bound) {
          Value* t = unary_intrinsic(llvm::Intrinsic::trunc, x);
          return b_.CreateAnd(b_.CreateFCmpOEQ(t, x),
                              b_.CreateFCmpOLE(unary_intrinsic(llvm::Intrinsic::fabs, x), llvm::ConstantFP::get(f64, bound)));
        };
        Value* st = strides_[static_cast<size_t>(in.slot)][static_cast<size_t>(dim)];
        Value* base = row_base_[static_cast<size_t>(in.slot)];
        Value* first = b_.CreateAdd(base, b_.CreateMul(cb, st));
        Value* last = b_.CreateAdd(base, b_.CreateMul(b_.CreateSub(ce, b_.getInt64(1)), st));
        Value* small = b_.CreateAnd(b_.CreateICmpSLE(iabs(first), b_.getInt64(int64_t{1} << 32)),
                                    b_.CreateICmpSLE(iabs(last), b_.getInt64(int64_t{1} << 32)));
        Value* exact = b_.CreateAnd(b_.CreateAnd(integral_within(start, 0x1p50), integral_within(step, 0x1p18)), small);
        ok = b_.CreateAnd(ok, exact);
        Value* step_i = b_.CreateFPToSI(b_.CreateSelect(exact, step, llvm::ConstantFP::get(f64, 0.0)), i64_);
        s = b_.CreateMul(st, step_i);
        break;
      }
      case InstrKind::Op:
        switch (in.op) {
          case Op::Copy: s = sl(0); break;
          case Op::Add: s = b_.CreateAdd(sl(0), sl(1)); break;
          case Op::Sub: s = b_.CreateSub(sl(0), sl(1)); break;
          case Op::Neg: s = b_.CreateNeg(sl(0)); break;
          case Op::Mul:
            ok = b_.CreateAnd(ok, b_.CreateOr(b_.CreateICmpEQ(sl(0), zero), b_.CreateICmpEQ(sl(1), zero)));
            s = b_.CreateAdd(b_.CreateMul(val(0), sl(1)), b_.CreateMul(val(1), sl(0)));
            break;
          case Op::Abs:
            keep_side(val(0), sl(0));
            s = b_.CreateSelect(b_.CreateICmpSGE(val(0), zero), sl(0), b_.CreateNeg(sl(0)));
            break;
          case Op::Maximum: case Op::Minimum: {
            // maximum: the first wins where a - b >= 0; minimum: where b - a >= 0.
            bool max = in.op == Op::Maximum;
            Value* q = max ? b_.CreateSub(val(0), val(1)) : b_.CreateSub(val(1), val(0));
            keep_side(q, max ? b_.CreateSub(sl(0), sl(1)) : b_.CreateSub(sl(1), sl(0)));
            Value* first_wins = b_.CreateICmpSGE(q, zero);
            s = b_.CreateSelect(first_wins, sl(0), sl(1));
            break;
          }
          case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge: {
            if (!integer_index(k_.instrs[static_cast<size_t>(in.args[0])].dtype)) break;
            Value* q = b_.CreateSub(val(0), val(1));
            Value* sq = b_.CreateSub(sl(0), sl(1));
            if (in.op == Op::Eq || in.op == Op::Ne) keep_sign(q, sq);  // {q = 0} and {q != 0}
            else if (in.op == Op::Lt || in.op == Op::Ge) keep_side(q, sq);  // a < b: q < 0
            else keep_side(b_.CreateNeg(q), b_.CreateNeg(sq));  // a <= b: -q >= 0
            break;
          }
          case Op::Where:
            if (integer_index(in.dtype)) s = b_.CreateSelect(val(0), sl(1), sl(2));
            break;
          case Op::Cast:
            if (integer_index(k_.instrs[static_cast<size_t>(in.args[0])].dtype)) keep_sign(val(0), sl(0));  // int64 -> bool
            break;
          default: break;  // logical ops: constant
        }
        break;
      default: break;  // Param, row-constant Load: slope 0
    }
    aff_val_[static_cast<int>(i)] = v;
    aff_slope_[static_cast<int>(i)] = s;
  }
  // Which values the interior reads, backwards from the outputs: a where whose condition is
  // constant there (affine) reads only the branch it picks (null: not read).
  std::vector<Value*> live(k_.instrs.size(), nullptr);
  for (const kir::Output& o : k_.outputs) live[static_cast<size_t>(o.instr)] = b_.getTrue();
  for (size_t i = k_.instrs.size(); i-- > 0;) {
    if (!live[i]) continue;
    const Instr& in = k_.instrs[i];
    const bool picks = in.kind == InstrKind::Op && in.op == Op::Where && affine_[static_cast<size_t>(in.args[0])];
    for (size_t a = 0; a < in.args.size(); ++a) {
      Value* edge = live[i];
      if (picks && a > 0) {
        Value* c = aff_val_.at(in.args[0]);
        edge = b_.CreateAnd(edge, a == 1 ? c : b_.CreateNot(c));
      }
      Value*& l = live[static_cast<size_t>(in.args[a])];
      l = l ? b_.CreateOr(l, edge) : edge;
    }
  }
  remap_live_.clear();
  for (size_t i = 0; i < k_.instrs.size(); ++i)
    if (fast_remap_[i]) remap_live_[static_cast<int>(i)] = live[i] ? live[i] : b_.getFalse();
  Value* lo = b_.CreateSelect(ok, b_.CreateAdd(p, lo_t), cb);
  Value* hi = b_.CreateSelect(ok, b_.CreateAdd(p, b_.CreateAdd(hi_t, b_.getInt64(1))), cb);
  interior_lo_ = smin(smax(lo, cb), ce);
  interior_hi_ = smax(smin(hi, ce), interior_lo_);
  // A remap's offset at column c: its base at the row plus c times its own inner stride, plus
  // each index v(p) + s (c - p) times its stride: base + c * step.
  remap_base_.clear();
  remap_step_.clear();
  for (size_t i = 0; i < k_.instrs.size(); ++i) {
    if (!fast_remap_[i]) continue;
    const Instr& in = k_.instrs[i];
    Value* base = row_base_[static_cast<size_t>(in.slot)];
    Value* step = strides_[static_cast<size_t>(in.slot)][static_cast<size_t>(dim)];
    for (size_t k = 0; k < in.args.size(); ++k) {
      Value* stride = params_[static_cast<size_t>(in.params[k])];
      Value* v = aff_val_.at(in.args[k]);
      Value* s = aff_slope_.at(in.args[k]);
      base = b_.CreateAdd(base, b_.CreateMul(b_.CreateSub(v, b_.CreateMul(p, s)), stride));
      step = b_.CreateAdd(step, b_.CreateMul(s, stride));
    }
    remap_base_[static_cast<int>(i)] = base;
    remap_step_[static_cast<int>(i)] = step;
  }
  elem_vals_.clear();
}

// An instruction's value in the interior loop (col_ the column), or nullptr where the general
// code computes it.
Value* Emitter::interior_elem(int i) {
  const Instr& in = k_.instrs[static_cast<size_t>(i)];
  if (affine_[static_cast<size_t>(i)]) {
    Value* v = aff_val_.at(i);
    if (!integer_index(in.dtype)) return v;  // a bool: constant on the interior
    return b_.CreateAdd(v, b_.CreateMul(aff_slope_.at(i), b_.CreateSub(col_, probe_)));
  }
  if (!fast_remap_[static_cast<size_t>(i)]) return nullptr;
  Value* offset = b_.CreateAdd(remap_base_.at(i), b_.CreateMul(col_, remap_step_.at(i)));
  Value* live = remap_live_.at(i);
  if (!in_unit_ || live == b_.getTrue()) return load(in.slot, offset, in.dtype);
  // In the unit version a remap the interior does not read may have another step (0: a cat's
  // clamped part), so base + c could leave its operand: it is loaded only where live (a branch
  // on a row constant, which the vectorizer turns into a masked load or LLVM unswitches).
  llvm::BasicBlock* from = b_.GetInsertBlock();
  auto* read = llvm::BasicBlock::Create(ctx_, "remap.live", fn_);
  auto* join = llvm::BasicBlock::Create(ctx_, "remap.join", fn_);
  b_.CreateCondBr(live, read, join);
  b_.SetInsertPoint(read);
  Value* v = load(in.slot, offset, in.dtype);
  llvm::BasicBlock* read_end = b_.GetInsertBlock();
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  llvm::PHINode* phi = b_.CreatePHI(v->getType(), 2);
  phi->addIncoming(v, read_end);
  phi->addIncoming(llvm::Constant::getNullValue(v->getType()), from);
  return phi;
}

// The columns [col_begin, col_end) of the row as border, interior, border (emit_inner's first
// inner dim when the kernel has affine remaps). The borders are short: not vectorized.
std::vector<Value*> Emitter::emit_affine_columns(std::vector<Value*> off, Value* lin, std::vector<Value*> carried,
                                                 const ElementBody& body) {
  Value* lo = col_begin_;
  Value* hi = col_end_;
  Value* a = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, interior_lo_, lo), hi);
  Value* b = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, interior_hi_, hi), a);
  const bool scalar = scalar_columns_;
  std::vector<Value*> interior_off = off;
  std::vector<Value*> saved_ptrs = ptrs_;
  std::vector<Value*> interior_ptrs = ptrs_;
  if (stream_middle_) {
    // In a streaming kernel's aligned middle (lo is on a 64-byte boundary of every output), the
    // interior keeps to whole 64-byte blocks from an aligned start, its outputs addressed from
    // that start through masked pointers as emit_streaming_columns does: its vector stores are
    // then known aligned and become streaming stores. The few columns cut off join the borders.
    const int64_t per_block = 64 / static_cast<int64_t>(dtype_size(k_.operands[static_cast<size_t>(stream_slots_[0])].dtype));
    Value* mask = b_.getInt64(-per_block);
    a = b_.CreateAdd(lo, b_.CreateAnd(b_.CreateAdd(b_.CreateSub(a, lo), b_.getInt64(per_block - 1)), mask));
    a = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, a, hi);
    b = b_.CreateAdd(a, b_.CreateAnd(b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateSub(b, a), b_.getInt64(0)), mask));
    for (int slot : stream_slots_) {
      DType dt = k_.operands[static_cast<size_t>(slot)].dtype;
      Value* p = b_.CreateGEP(stype(dt), ptrs_[static_cast<size_t>(slot)], b_.CreateAdd(off[static_cast<size_t>(slot)], a));
      interior_ptrs[static_cast<size_t>(slot)] =
          b_.CreateIntrinsic(llvm::Intrinsic::ptrmask, {p->getType(), i64_}, {p, b_.getInt64(~int64_t{63})});
      interior_off[static_cast<size_t>(slot)] = b_.CreateNeg(a);
    }
  }
  affine_columns_ = false;
  auto part = [&](Value* from, Value* to, bool interior) {
    col_begin_ = from;
    col_end_ = to;
    scalar_columns_ = interior ? scalar : true;
    in_interior_ = interior;
    if (interior) ptrs_ = interior_ptrs;
    carried = emit_inner(0, interior ? interior_off : off, lin, carried, body);
    ptrs_ = saved_ptrs;
    in_interior_ = false;
  };
  part(lo, a, false);
  // The interior in versions: with every remap's step 1 (the usual stencil: contiguous loads,
  // which LLVM's vectorizer then sees as such; it will not version a loop on several symbolic
  // steps by itself); where some remaps may be unread (remap_live_), with every read one's step 1
  // and the others loaded only where read (a cat along the columns: its other parts' clamped reads
  // have step 0); and with the steps as they are (flip's -1, a transposed source).
  Value* unit = b_.getTrue();
  Value* unit_live = b_.getTrue();
  bool some_unread = false;
  for (size_t i = 0; i < k_.instrs.size(); ++i) {  // in instruction order: the same code every time
    if (!fast_remap_[i]) continue;
    Value* one = b_.CreateICmpEQ(remap_step_.at(static_cast<int>(i)), b_.getInt64(1));
    Value* live = remap_live_.at(static_cast<int>(i));
    some_unread = some_unread || live != b_.getTrue();
    unit = b_.CreateAnd(unit, one);
    unit_live = b_.CreateAnd(unit_live, b_.CreateOr(b_.CreateNot(live), one));
  }
  auto* done = llvm::BasicBlock::Create(ctx_, "interior.done", fn_);
  const std::vector<Value*> init = carried;
  std::vector<std::pair<Value*, llvm::BasicBlock*>> ends;  // per version: its carried values' block
  std::vector<std::vector<Value*>> results;
  const std::unordered_map<int, Value*> steps = remap_step_;
  // One version where `take` holds, else falls through to the next (`unit_steps`: emitted with
  // every step 1; `guarded`: unread remaps loaded only where read).
  auto version = [&](Value* take, const char* name, bool unit_steps, bool guarded) {
    auto* body = llvm::BasicBlock::Create(ctx_, name, fn_);
    auto* next = take ? llvm::BasicBlock::Create(ctx_, std::string(name) + ".else", fn_) : nullptr;
    if (take) b_.CreateCondBr(take, body, next);
    else b_.CreateBr(body);
    b_.SetInsertPoint(body);
    if (unit_steps)
      for (auto& [i, step] : remap_step_) step = b_.getInt64(1);
    carried = init;
    in_unit_ = guarded;
    part(a, b, true);
    in_unit_ = false;
    remap_step_ = steps;
    results.push_back(carried);
    ends.emplace_back(nullptr, b_.GetInsertBlock());
    b_.CreateBr(done);
    if (next) b_.SetInsertPoint(next);
  };
  version(unit, "interior.unit", true, false);
  if (some_unread) version(unit_live, "interior.unit_read", true, true);
  version(nullptr, "interior.any", false, false);
  b_.SetInsertPoint(done);
  for (size_t c = 0; c < init.size(); ++c) {
    llvm::PHINode* phi = b_.CreatePHI(init[c]->getType(), static_cast<unsigned>(results.size()));
    for (size_t v = 0; v < results.size(); ++v) phi->addIncoming(results[v][c], ends[v].second);
    carried[c] = phi;
  }
  part(b, hi, false);
  col_begin_ = lo;
  col_end_ = hi;
  scalar_columns_ = scalar;
  affine_columns_ = true;
  return carried;
}

}  // namespace lf::cpu
