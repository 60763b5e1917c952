// The CUDA emitter's class (internal to the CUDA backend): its members are defined in emit.cpp
// (metadata and values), emit_pointwise.cpp (pointwise and matmul kernels) and emit_row.cpp (row
// kernels). emit.h is the interface.
#pragma once

#include "codegen/cuda/emit.h"
#include "codegen/cuda/ops.h"

#include <algorithm>
#include <functional>
#include <cmath>
#include <sstream>
#include <vector>

#include "lazyfuse/types.h"

// GCC 12 reports false -Wrestrict warnings inside std::string concatenation (GCC bug 105329).
#pragma GCC diagnostic ignored "-Wrestrict"

namespace lf::cuda {

using kir::Instr;
using kir::InstrKind;
using Op = ir::Op;

class Emitter {
 public:
  Emitter(const kir::Kernel& k, const std::string& name, const EmitOptions& opt) : k_(k), name_(name), opt_(opt) {
    rank_ = k.outer_rank + k.inner_rank;
    idx_ = opt.index32 ? "int" : "i64";
  }

  std::string run() {
    int nmeta = 2 * rank_ + static_cast<int>(k_.operands.size()) * (1 + rank_) + static_cast<int>(k_.params.size());
    os_ << kPrelude;
    os_ << "struct Meta { i64 v[" << std::max(nmeta, 1) << "]; };\n";
    os_ << "struct Ptrs { void* p[" << std::max<size_t>(k_.operands.size(), 1) << "]; };\n";
    os_ << "struct Scratch { void* partial; void* partial_index; unsigned* counters; };\n";
    if (opt_.matmul_product >= 0) {
      os_ << "struct Gemm { const void* a; const void* b; i64 m, n, k, a_off, a_sm, a_sk, b_off, b_sk, b_sn, batch_rank; i64 batch["
          << kGemmMaxBatchRank << "], a_bs[" << kGemmMaxBatchRank << "], b_bs[" << kGemmMaxBatchRank << "]; };\n";
    }
    os_ << "extern \"C\" __global__ void __launch_bounds__(" << kBlockThreads << ") " << name_
        << "(const Meta meta, const Ptrs ptrs, const Scratch scratch"
        << (opt_.matmul_product >= 0 ? ", const Gemm g" : "") << ") {\n";
    emit_metadata();
    if (opt_.matmul_product >= 0) emit_matmul_kernel();
    else if (k_.row && opt_.row_sweep > 0) emit_sweep_kernel();
    else if (k_.row) emit_row_kernel();
    else emit_pointwise_kernel();
    os_ << "}\n";
    return os_.str();
  }

 private:
  // ---- metadata

  std::string size(int d) const { return "n" + std::to_string(d); }
  std::string stride(size_t o, int d) const;

  void emit_metadata();
  bool divides_by(int d) const;
  std::string divmod(const std::string& x, int d, const std::string& q, const std::string& r) const;

  // Declares b<o> = the offset of operand o at the outer index held in `row`.
  void emit_row_bases(const std::string& row, const std::string& indent);

  // Declares e<o> = the offset of operand o at inner linear index `j` (row bases b<o> in scope).
  void emit_element_offsets(const std::string& j, const std::string& indent);

  // ---- values

  std::string v(int i) const { return "v" + std::to_string(i); }

  bool cached(int slot) const { return (opt_.row_cache > 0 || opt_.row_sweep > 0) && slot < static_cast<int>(cache_.size()) && cache_[slot]; }
  bool gather_cached(int instr) const {
    return opt_.row_cache > 0 && instr < static_cast<int>(gather_cache_.size()) && gather_cache_[instr];
  }

  // Emits `body` (which declares nothing outside its scope) for each of this thread's elements of
  // the row in [lo, hi), with j64 and j in scope. Register-cached rows walk k_ over the thread's
  // row_cache slots (unrolled, so the cache stays in registers). Others stride over the range, four
  // elements a step with no bounds check between them, so four loads are in flight, then the rest.
  void emit_pass(const std::string& lo, const std::string& hi, const std::string& indent,
                 const std::function<void(const std::string&)>& body);

  // emit_pass for vec4 row kernels: each thread reads 4 consecutive elements of every contiguous
  // per-element input with one 16-byte load, 4 such loads (16 elements) in flight a step, then
  // whole vectors for the rest ([lo, hi) are multiples of 4). Lane u_ of vector g_ is L<o>[g_][u_].
  void emit_pass_vec4(const std::string& lo, const std::string& hi, const std::string& indent,
                      const std::function<void(const std::string&)>& element);

  bool unit_inner(int slot) const { return k_.operands[slot].strides[rank_ - 1] == kir::StrideClass::Unit; }

  std::string load(int slot, const std::string& off, DType d);
  std::string store(int slot, const std::string& off, DType d, const std::string& val);
  static std::string round16(const std::string& e, DType d);

  // A conversion with the reference executor's rules (float->int saturates, NaN -> 0).
  std::string convert(const std::string& x, DType from, DType to);

  std::string generate(const Instr& in, const std::string& index);

  // The expression of instruction i; offsets come from `prefix` ("e" for elements, "b" for rows).
  std::string compute(int i, const std::string& prefix);

  // Declares v<i> (and v<i>_, its 32-bit value, when narrowed) = instruction i.
  void declare(int i, const std::string& prefix, const std::string& indent);
  void declare_extreme_scan(int i, const std::string& indent);  // a fused cummax / cummin step
  static std::string extreme_type(DType d);
  // A scan's step a (+, *, logaddexp) b, b the later (sums and products as the reductions combine).
  std::string scan_step(const Instr& in, const std::string& a, const std::string& b);
  // Whether the later (value b) wins over the earlier (value a) in a cummax / cummin of xt values.
  static std::string extreme_wins(const Instr& in, DType xt, const std::string& a, const std::string& b);
  // The initial value of a scan's state s<i>, and of a cummax / cummin's value sb<i>.
  std::string scan_identity(const Instr& in);
  std::string extreme_start(const Instr& in);
  // EmitOptions::scan_chunks: each thread's chunk combined, then the chunks before it, into s<i>.
  void emit_chunk_prefix(const std::string& indent);
  bool narrowed(int i) const { return i < static_cast<int>(opt_.narrow.size()) && opt_.narrow[static_cast<size_t>(i)]; }
  std::string compute_narrow(int i, const std::string& prefix);
  static bool is_comparison(Op op) {
    return op == Op::Eq || op == Op::Ne || op == Op::Lt || op == Op::Le || op == Op::Gt || op == Op::Ge;
  }

  // Emits, in order, the instructions of the cone of `roots` that have phase `row`; for element
  // cones, row values they use are emitted first at row scope (emit_row_values).
  std::vector<int> cone(const std::vector<int>& roots, bool row);

  // Row values (not yet emitted) needed by the element cone of `roots`.
  void emit_row_values(const std::vector<int>& roots, const std::string& indent);

  void emit_element_values(const std::vector<int>& roots, const std::string& indent);

  // ---- pointwise

  void emit_pointwise_kernel();
  void emit_pointwise_rows2d();  // EmitOptions::rows2d
  void emit_pointwise_element(const std::string& row, const std::string& indent);

  // ---- matmul (see cuda_emit.h)

  void emit_matmul_kernel();

  static const char* vec_type(DType d) { return d == DType::Int32 ? "int4" : "float4"; }

  // Four consecutive elements per thread: one 16-byte load per contiguous input, the element code
  // four times (with the four loaded values), one 16-byte store per output.
  void emit_pointwise_vec4();

  // ---- row kernels

  struct Combine {
    std::string init;  // accumulator start
    bool arg = false;
  };

  Combine reduction_init(const Instr& in, DType src);

  // acc (and acc_i for arg reductions) combined with value x (at inner index j).
  std::string combine(const Instr& in, DType src, const std::string& acc, const std::string& x);

  // Whether (x, xi) beats (a, ai) for argmax/argmin: a strictly better value, or an equal value
  // (or both NaN) at a smaller index; NaN beats every number.
  std::string arg_better(const Instr& in, DType src, const std::string& x, const std::string& xi, const std::string& a,
                         const std::string& ai);

  // The same for x after everything acc has seen (a pass in increasing order): no index compares.
  std::string arg_better_in_order(const Instr& in, DType src, const std::string& x, const std::string& a);
  // Combines `acc` (and acc_i) across the 32 lanes of each warp by shuffling down; lane 0 ends
  // with the warp's result, in a fixed order.
  void emit_warp_reduce(const Instr& in, DType src, const std::string& acc, const std::string& acc_i,
                        const std::string& indent);

  void emit_block_reduce(const Instr& in, DType src, const std::string& acc, const std::string& acc_i,
                         const std::string& indent);

  // emit_block_reduce for the reductions `is` of one level at once (a block a row): each warp's
  // leaders write every accumulator to its own slots, so the level costs one exchange through
  // shared memory (three barriers) instead of one a reduction (var's and layer_norm's sums of
  // x - mean and of its squares).
  void emit_block_reduce_level(const std::vector<int>& is, const std::string& indent);

  // Loads this thread's elements of every per-element input of the row into registers, once.
  void emit_row_cache(const std::string& indent);

  void emit_row_kernel();
  void emit_thread_reduce(int i, const std::string& lo, const std::string& hi, const std::string& indent);
  void emit_reduce_result(int i, const std::string& indent);
  std::vector<int> emit_element_outputs(const std::string& indent, const std::string& guard);
  // EmitOptions::row_sweep: the sweep's invariant inputs into registers, then a thread a row.
  void emit_sweep_kernel();

  const kir::Kernel& k_;
  std::string name_;
  EmitOptions opt_;
  int rank_;
  std::string idx_;
  std::ostringstream os_;
  std::vector<bool> row_done_;
  std::vector<bool> cache_;  // operands held in registers (row_cache)
  // Gathers whose values are held in registers (row_cache): those at a cached load's index (an
  // embedding's table row), read once instead of once a pass.
  std::vector<bool> gather_cache_;
  // While emitting one lane of a vec4 kernel's 4-element vectors: the lane's index into L<o>
  // (pointwise: [u_]; row passes: [g_][u_]); empty otherwise.
  std::string lane_;
};

}  // namespace lf::cuda
