// Which row kernels split a long row over threads, and how (see SplitInfo in split.h): an
// analysis of the kernel IR alone, shared by the emitter and the launcher.
#include <algorithm>
#include <functional>
#include <vector>

#include "codegen/kir/split.h"

namespace lf::kir {


std::vector<int> reduction_levels(const Kernel& k) {
  const size_t n = k.instrs.size();
  std::vector<int> levels(n, -1);
  std::function<int(int)> level = [&](int i) -> int {
    if (levels[static_cast<size_t>(i)] >= 0) return levels[static_cast<size_t>(i)];
    int l = 0;
    std::vector<int> stack{k.instrs[static_cast<size_t>(i)].args[0]};
    std::vector<bool> seen(n, false);
    while (!stack.empty()) {
      int j = stack.back();
      stack.pop_back();
      if (seen[static_cast<size_t>(j)]) continue;
      seen[static_cast<size_t>(j)] = true;
      const Instr& in = k.instrs[static_cast<size_t>(j)];
      if (in.kind == InstrKind::Reduce) {
        l = std::max(l, level(j) + 1);
        continue;
      }
      for (int a : in.args) stack.push_back(a);
    }
    return levels[static_cast<size_t>(i)] = l;
  };
  for (size_t i = 0; i < n; ++i)
    if (k.instrs[i].kind == InstrKind::Reduce) level(static_cast<int>(i));
  return levels;
}

SplitInfo split_info(const Kernel& k) {
  SplitInfo s;
  size_t n = k.instrs.size();
  s.level.assign(n, -1);
  s.slot.assign(n, -1);
  if (!k.row) return s;
  for (const Output& o : k.outputs)
    if (!k.instrs[static_cast<size_t>(o.instr)].row) return s;  // element outputs need the whole row
  s.level = reduction_levels(k);  // var's second sum waits for the mean
  for (size_t i = 0; i < n; ++i) {
    if (s.level[i] < 0) continue;
    s.slot[i] = s.reductions++;
    s.levels = std::max(s.levels, s.level[i] + 1);
  }
  s.splittable = s.reductions > 0;
  return s;
}

// A row kernel takes column blocks when each row's elements are strided in memory and its
// neighbour row's are next to them: some element-phase input is contiguous along the last kept
// (outer) dim and not along the innermost reduced dim, and no input that moves along that kept
// dim is contiguous along the innermost reduced dim (a row sum stays as it is). Its outputs are
// all per-row values, its reductions of one level, their element values read no row value, and
// it has no scan, gather or remap (whose per-row set-up the block would have to repeat).
bool column_blocks(const Kernel& k) {
  if (!k.row || k.outer_rank < 1 || k.inner_rank < 1 || k.has_scan()) return false;
  for (const Output& o : k.outputs)
    if (!k.instrs[static_cast<size_t>(o.instr)].row) return false;
  bool reduces = false;
  for (const Instr& in : k.instrs) {
    if (in.kind == InstrKind::Gather || in.kind == InstrKind::Remap) return false;
    if (in.kind == InstrKind::Reduce) reduces = true;
    if (in.row || in.kind == InstrKind::Reduce) continue;
    for (int a : in.args)  // an element value reading a row value: a second level or a row load
      if (k.instrs[static_cast<size_t>(a)].row) return false;
  }
  if (!reduces) return false;
  for (const Instr& in : k.instrs)
    if (in.kind == InstrKind::Reduce && k.instrs[static_cast<size_t>(in.args[0])].row) return false;
  const size_t kept = static_cast<size_t>(k.outer_rank - 1), reduced = static_cast<size_t>(k.outer_rank + k.inner_rank - 1);
  bool column = false;
  for (const Operand& o : k.operands) {
    if (o.kind != Operand::Kind::Input || o.row) continue;
    if (o.strides[kept] == StrideClass::Unit && o.strides[reduced] != StrideClass::Unit) column = true;
    if (o.strides[reduced] == StrideClass::Unit && o.strides[kept] != StrideClass::Zero) return false;
  }
  return column;
}

}  // namespace lf::kir
