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

}  // namespace lf::kir
