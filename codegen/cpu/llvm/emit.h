// Emits the LLVM IR of a kernel (internal to the CPU backend).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/kir/kernel_ir.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace lf::cpu {

// How a row kernel splits one long row over threads. A kernel whose outputs are all per-row values
// (sum, mean, max, argmax, var, ... of the whole row) gets three more functions besides `name`:
//   name_part(meta, ptrs, row, begin, end, level, state, out)  (PartFn)
//   name_comb(level, parts, nparts, state)                     (CombineFn)
//   name_fin(meta, ptrs, row, state)                           (FinishFn)
// Reductions are grouped in levels (a reduction whose elements use another's result is one level
// up); for each level, part accumulates the level's reductions over a chunk of the row (the
// outermost reduced dim restricted to [begin, end)) into `out`, comb combines the chunks' slots in
// chunk order into `state`; fin computes the row's outputs from `state`. Accumulators live in
// 16-byte slots, one per reduction (`slot`): the value, then an int64 index (argmax, argmin).
struct SplitInfo {
  bool splittable = false;
  int levels = 0;
  int reductions = 0;
  std::vector<int> level;  // per instruction: its reduction level, or -1
  std::vector<int> slot;   // per instruction: its accumulator slot, or -1
};
SplitInfo split_info(const kir::Kernel& kernel);

// How a row's passes share work (llvm_row_plan.cpp): `keep` maps an element value that a
// reduction pass computes, and the output pass needs again at some cost (a transcendental, a
// division), to an element output of its dtype that holds it meanwhile (softmax's e^(x - max));
// `row_divisions` are the float divisions of an element value by a row value that the output pass
// computes (softmax's e / sum), which it may do with one reciprocal per row.
struct RowPlan {
  std::unordered_map<int, int> keep;  // element value -> output operand
  std::vector<int> row_divisions;     // instructions
  bool is_row_division(int i) const;
};
RowPlan row_plan(const kir::Kernel& kernel);

// Builds module with function `name` of type KernelFn (see cpu_backend.h), and the split functions
// when split_info(kernel).splittable.
std::unique_ptr<llvm::Module> emit_module(const kir::Kernel& kernel, const std::string& name, llvm::LLVMContext& ctx);

// The function attribute of a kernel emitted with kir::Kernel::stream_stores.
inline constexpr const char* kStreamingAttr = "lazyfuse-streaming-stores";

// After optimization: in functions with kStreamingAttr, the vector stores LLVM knows to be aligned
// to their size (up to 64 bytes) become non-temporal; returns how many. Only the middle loops of
// their output passes have such stores (see the emitter's emit_streaming_columns).
int mark_streaming_stores(llvm::Module& m);

}  // namespace lf::cpu
