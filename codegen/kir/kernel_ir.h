// The kernel IR: one fused group as a loop over "rows" (outer dims) and, per row, passes over
// "columns" (inner dims), with a list of scalar SSA instructions. Both backends read it; it knows
// nothing of CUDA or LLVM. Sizes, strides, offsets and constant values are launch arguments, never
// part of the IR, so a new shape or a new constant reuses the compiled kernel.
//
// Pointwise kernels: outer = all dims but the last, inner = the last; every instruction is
// per-element. Row kernels (reductions): outer = kept dims, inner = reduced dims; a row first runs
// one pass per reduction, then a pass that writes per-element outputs, then writes per-row outputs.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "codegen/ir/op.h"
#include "lazyfuse/types.h"

namespace lf::kir {

enum class InstrKind : uint8_t {
  Load,    // operand `slot` at the current element (or row)
  Param,   // launch parameter `slot` (a full() value), as the instruction's dtype
  Gen,     // arange/rand/randn at the linear index given by operand `slot`'s strides
  Op,      // elementwise op over args (where, cast and copy included)
  Reduce,  // reduction of args[0] (an element value) over the row; the result is a row value
  // A load of operand `slot` at a data-dependent index (ir::Op::Gather): the operand's offset at
  // the current element (its stride along the gathered dim is 0) plus i * stride, where i is
  // args[0] (an integer) taken modulo size when negative; params: {size, stride, tag}. An i out of
  // [-size, size) stores tag and i into the kernel's error operand (Kernel::error_slot) and reads
  // element 0 instead, so the executor can report it after the launch. Without the tag (params
  // {size, stride}) the indices are known in range (ir::gather_indices_known_in_range): no check.
  Gather,
  // A load of operand `slot` at indices computed in the kernel (ir::Op::Remap): the operand's
  // offset at the current element (its strides along the remapped dims are 0) plus the sum of
  // args[k] * params[k] (a stride); the last param is the farthest element offset the source
  // view reaches (its offset plus each dim's last index times its stride). The indices are in
  // range by construction: no check.
  Remap,
  // An inclusive scan (ir::Op::CumSum, CumProd or LogCumSumExp) of args[0] along the row (a row kernel's one
  // inner dim), in element order: an element value, the running total up to and including the
  // current element. The total is kept in the compute type (float32 for the 16-bit floats) and the
  // value is rounded to the dtype, as the reference's scan (on the CPU in the reference's order;
  // a GPU lane group adds a step's elements by a shuffle tree: a float total within a sum's
  // rounding, integers exact). A kernel with a scan has no
  // reductions; its element pass runs each row in order (fuse::Group::scan).
  Scan,
};

// A Scan's running total before the row's first element: 0, 1, or -inf (logcumsumexp); for cummax
// and cummin (scan_extreme) the position's, 0.
inline double scan_identity(ir::Op op) {
  return op == ir::Op::LogCumSumExp ? -std::numeric_limits<double>::infinity() : op == ir::Op::CumProd ? 1.0 : 0.0;
}
// cummax and cummin: the Scan's value is the position (int64) of the running extreme of its
// argument, which the emitters carry beside it: the later element wins among equals, NaN wins and
// stays (the latest NaN), as the reference's.
inline bool scan_extreme(ir::Op op) { return op == ir::Op::CumMax || op == ir::Op::CumMin; }

struct Instr {
  InstrKind kind = InstrKind::Op;
  ir::Op op = ir::Op::Copy;
  DType dtype = DType::Float32;  // the value's dtype (16-bit floats are computed in float32, rounded per op)
  bool row = false;              // a per-row value (reductions and what is computed from them)
  std::vector<int> args;
  int slot = -1;
  std::vector<int> params;  // Gen: its parameter slots
};

// How one operand's stride along one dim behaves; the code differs for each.
enum class StrideClass : uint8_t { Zero = 0, Unit = 1, Any = 2 };

struct Operand {
  enum class Kind : uint8_t { Input, Output, Index } kind;  // Index: a generator's virtual index
  DType dtype;
  bool row = false;                  // addressed per row (row-phase loads and outputs)
  std::vector<StrideClass> strides;  // per dim (outer then inner)
};

struct Output {
  int instr;
  int slot;  // operand
};

enum class ParamKind : uint8_t { Float, Int };

struct Kernel {
  bool row = false;
  int outer_rank = 0;
  int inner_rank = 1;
  std::vector<Operand> operands;
  std::vector<ParamKind> params;
  std::vector<Instr> instrs;  // topologically ordered
  std::vector<Output> outputs;
  // An Output operand of two Int64s {tag, index}, zero before the launch, that Gather instructions
  // write when an index is out of range; -1 when the kernel has no gather.
  int error_slot = -1;

  // Whether an instruction is a Scan (the row's elements are then visited in order).
  bool has_scan() const;

  // The canonical structural string: equal keys mean identical generated code.
  std::string key() const;
  // Human-readable summary, e.g. "mul,add,relu -> sum[inner]".
  std::string summary() const;
};

// The launch arguments matching a Kernel: sizes, per-operand offset and strides, parameter bits.
struct LaunchArgs {
  int outer_rank = 0;
  std::vector<int64_t> sizes;              // outer then inner
  std::vector<void*> pointers;             // per operand (nullptr for Index operands)
  std::vector<int64_t> offsets;            // per operand, elements
  std::vector<int64_t> strides;            // per operand, rank entries, elements
  std::vector<int64_t> params;             // bits: int64, or a double's bits
  int64_t rows() const;         // product of the outer sizes
  int64_t inner_numel() const;  // product of the inner sizes
};

// Flat int64 metadata as the generated code reads it: [sizes][offset, strides... per operand][params].
std::vector<int64_t> pack_meta(const Kernel& k, const LaunchArgs& a);
void pack_meta(const Kernel& k, const LaunchArgs& a, std::vector<int64_t>* out);  // into *out, replaced

}  // namespace lf::kir
