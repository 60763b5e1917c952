// How a row kernel's long rows split over threads: an analysis of the kernel IR that the CPU
// backend reads (cpu/backend.cpp launches, cpu/llvm/emit.cpp emits the split functions).
#pragma once

#include <vector>

#include "codegen/kir/kernel_ir.h"

namespace lf::kir {

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
SplitInfo split_info(const Kernel& kernel);

// Per instruction of a row kernel: its reduction level (one more than the highest level among
// the reductions its element values depend on, through row values; 0 for one that depends on
// none), or -1 for an instruction that is not a reduction. The reductions of one level read no
// row value of each other, so one pass over the row computes them all.
std::vector<int> reduction_levels(const Kernel& kernel);

// Whether a row kernel's rows are columns of memory (`sum(x, {0})`, split.cpp says when) and run
// in blocks of neighbours along the last kept dim, the block's rows in the innermost loop
// (cpu/llvm/emit_columns.cpp); the CPU launcher then cuts rows into aligned ranges.
bool column_blocks(const Kernel& kernel);

}  // namespace lf::kir
